"""Timed base trajectories (estimate or ground truth) and small rotation helpers for the evaluation.

Frames as in docs/ARCHITECTURE.md: base B in the world ``W`` = ``odom``; base velocities in B; float64
seconds (evaluation works on differences; convert ``stamp_ns`` at the edges).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation, Slerp

from robot_state_estimator.evaluation.errors import MetricsError

FloatArray = NDArray[np.float64]


# ----------------------------------------------------------------------------------------------------------
# Trajectories
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trajectory:
    """A timed base trajectory (estimate or ground truth).

    Attributes:
        t_s: (N,) float64, s, strictly increasing stamps.
        p_world_base: (N, 3) m, base position in the world ``odom``.
        quat_world_base_xyzw: (N, 4) base orientation in the world, ``x y z w``.
        v_base_in_base: (N, 3) m/s, base linear velocity in the base frame, or None.
        pose_covariance: (N, 6, 6) position (world) then rotation (small fixed-axis angles about the world
            axes), as nav_msgs/Odometry; or None.
        twist_covariance: (N, 6, 6) linear then angular velocity in the base frame; or None.
        extras: named (N, ...) arrays carried along (biases, contacts), resampled like positions.
    """

    t_s: FloatArray
    p_world_base: FloatArray
    quat_world_base_xyzw: FloatArray
    v_base_in_base: FloatArray | None = None
    pose_covariance: FloatArray | None = None
    twist_covariance: FloatArray | None = None
    extras: dict[str, FloatArray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.t_s)
        if np.shape(self.p_world_base) != (n, 3) or np.shape(self.quat_world_base_xyzw) != (n, 4):
            raise MetricsError(
                f"trajectory shapes disagree: t_s {np.shape(self.t_s)}, p {np.shape(self.p_world_base)}, "
                f"quat {np.shape(self.quat_world_base_xyzw)}"
            )
        if n > 1 and np.any(np.diff(self.t_s) <= 0):
            raise MetricsError("trajectory stamps must be strictly increasing")

    def __len__(self) -> int:
        return len(self.t_s)

    @property
    def rotations(self) -> Rotation:
        """``R_world_base`` for every sample (scipy Rotation of length N)."""
        return Rotation.from_quat(self.quat_world_base_xyzw)

    @property
    def duration_s(self) -> float:
        """Time span in s (0 for fewer than two samples)."""
        return float(self.t_s[-1] - self.t_s[0]) if len(self.t_s) > 1 else 0.0

    def shifted(self, offset_s: float, scale: float = 1.0) -> Trajectory:
        """A copy with stamps ``t0 + offset_s + scale * (t - t0)`` (``t0`` = first stamp)."""
        t0 = self.t_s[0]
        return replace(self, t_s=t0 + offset_s + scale * (self.t_s - t0))

    def transformed(self, R: FloatArray, t: FloatArray, s: float = 1.0) -> Trajectory:
        """Apply ``x -> s R x + t`` to positions and ``R_wb -> R R_wb`` to orientations.

        Body-frame velocities and the twist covariance are unchanged; the pose covariance is rotated
        (the scale is applied to its position block).

        Args:
            R: (3, 3) rotation of the old world frame in the new one.
            t: (3,) m, translation.
            s: scale (1 for rigid alignments).
        """
        R = np.asarray(R, dtype=float)
        p = s * self.p_world_base @ R.T + np.asarray(t, dtype=float)
        quat = (Rotation.from_matrix(R) * self.rotations).as_quat()
        cov = None
        if self.pose_covariance is not None:
            T = np.zeros((6, 6))
            T[:3, :3] = s * R
            T[3:, 3:] = R
            cov = T @ self.pose_covariance @ T.T
        return replace(self, p_world_base=p, quat_world_base_xyzw=quat, pose_covariance=cov)

    def slice_time(self, t_start_s: float, t_end_s: float) -> Trajectory:
        """The samples with ``t_start_s <= t <= t_end_s``."""
        m = (self.t_s >= t_start_s) & (self.t_s <= t_end_s)
        return _take(self, m)

    def resampled(self, t_new_s: FloatArray) -> Trajectory:
        """Interpolate at ``t_new_s`` (must lie within ``[t_s[0], t_s[-1]]``).

        Positions, velocities and extras are linear; orientations by spherical linear interpolation;
        covariances take the previous sample (zero-order hold).

        Raises:
            MetricsError: a requested time is outside the trajectory, or fewer than two samples.
        """
        t_new_s = np.asarray(t_new_s, dtype=float)
        if len(self.t_s) < 2:
            raise MetricsError("need at least two samples to resample")
        eps = 1e-9
        if t_new_s.size and (t_new_s[0] < self.t_s[0] - eps or t_new_s[-1] > self.t_s[-1] + eps):
            raise MetricsError(
                f"resampling times [{t_new_s[0]:.3f}, {t_new_s[-1]:.3f}] s outside the trajectory "
                f"[{self.t_s[0]:.3f}, {self.t_s[-1]:.3f}] s"
            )
        tc = np.clip(t_new_s, self.t_s[0], self.t_s[-1])

        def lin(a: FloatArray | None) -> FloatArray | None:
            if a is None:
                return None
            a = np.asarray(a, dtype=float)
            flat = a.reshape(len(a), -1)
            out = np.column_stack([np.interp(tc, self.t_s, flat[:, k]) for k in range(flat.shape[1])])
            return out.reshape((len(tc), *a.shape[1:]))

        def hold(a: FloatArray | None) -> FloatArray | None:
            if a is None:
                return None
            idx = np.clip(np.searchsorted(self.t_s, tc, side="right") - 1, 0, len(self.t_s) - 1)
            return np.asarray(a)[idx]

        quat = Slerp(self.t_s, self.rotations)(tc).as_quat()
        return Trajectory(
            t_s=t_new_s.copy(),
            p_world_base=lin(self.p_world_base),  # type: ignore[arg-type]
            quat_world_base_xyzw=quat,
            v_base_in_base=lin(self.v_base_in_base),
            pose_covariance=hold(self.pose_covariance),
            twist_covariance=hold(self.twist_covariance),
            extras={k: lin(v) for k, v in self.extras.items()},  # type: ignore[misc]
        )


def _take(traj: Trajectory, idx: NDArray[Any]) -> Trajectory:
    def g(a: FloatArray | None) -> FloatArray | None:
        return None if a is None else np.asarray(a)[idx]

    return Trajectory(
        t_s=traj.t_s[idx],
        p_world_base=traj.p_world_base[idx],
        quat_world_base_xyzw=traj.quat_world_base_xyzw[idx],
        v_base_in_base=g(traj.v_base_in_base),
        pose_covariance=g(traj.pose_covariance),
        twist_covariance=g(traj.twist_covariance),
        extras={k: np.asarray(v)[idx] for k, v in traj.extras.items()},
    )


def path_length(p: FloatArray) -> float:
    """Length of a polyline, m.

    Args:
        p: (N, 3) positions, m.
    """
    p = np.asarray(p, dtype=float)
    return float(np.sum(np.linalg.norm(np.diff(p, axis=0), axis=1))) if len(p) > 1 else 0.0


def yaw_of(quat_xyzw: FloatArray) -> FloatArray:
    """(N,) yaw in rad (``R = Rz(yaw) Ry(pitch) Rx(roll)``) of (N, 4) ``x y z w`` quaternions."""
    yaw: FloatArray = Rotation.from_quat(quat_xyzw).as_euler("ZYX")[:, 0]
    return yaw


def wrap_angle(a: FloatArray | float) -> FloatArray:
    """Wrap angles to ``[-pi, pi)`` rad."""
    return (np.asarray(a, dtype=float) + np.pi) % (2.0 * np.pi) - np.pi


def rot_z(yaw: float) -> FloatArray:
    """(3, 3) rotation about z by ``yaw`` rad."""
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
