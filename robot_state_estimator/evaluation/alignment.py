"""Pairing of estimate and ground-truth samples and their spatial alignment (4-DoF yaw + translation, SE(3),
Sim(3), origin).

Sources:
    - S. Umeyama, "Least-squares estimation of transformation parameters between two point patterns",
      IEEE TPAMI 13(4), 1991 (closed-form SE(3)/Sim(3) alignment).
    - Z. Zhang, D. Scaramuzza, "A tutorial on quantitative trajectory evaluation for visual(-inertial)
      odometry", IROS 2018 (4-DoF yaw + translation alignment for VIO-like odometry).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.trajectory import Trajectory, _take, rot_z, wrap_angle, yaw_of

FloatArray = NDArray[np.float64]


def associate(est: Trajectory, gt: Trajectory, *, max_rate_hz: float | None = 200.0) -> tuple[Trajectory, Trajectory]:
    """Pair the samples of estimate and ground truth: the estimate interpolated at the ground-truth stamps.

    Only ground-truth stamps inside the estimate's time span are kept, decimated to at most
    ``max_rate_hz`` (None keeps all).

    Returns:
        ``(est_at_gt, gt_kept)`` with identical ``t_s``.

    Raises:
        MetricsError: fewer than two ground-truth samples overlap the estimate.
    """
    m = (gt.t_s >= est.t_s[0]) & (gt.t_s <= est.t_s[-1])
    idx = np.flatnonzero(m)
    if len(idx) < 2:
        raise MetricsError(
            f"ground truth [{gt.t_s[0]:.3f}, {gt.t_s[-1]:.3f}] s and estimate [{est.t_s[0]:.3f}, "
            f"{est.t_s[-1]:.3f}] s overlap in fewer than two samples; is a time alignment missing?"
        )
    if max_rate_hz is not None and len(idx) > 2:
        dt = float(np.median(np.diff(gt.t_s[idx])))
        stride = max(1, math.floor(1.0 / (max_rate_hz * dt) + 1e-9)) if dt > 0 else 1
        idx = idx[::stride]
    g = _take(gt, idx)
    return est.resampled(g.t_s), g


@dataclass(frozen=True)
class SpatialAlignment:
    """``x_gt ~ scale * R @ x_est + t``.

    Attributes:
        R: (3, 3) rotation.
        t: (3,) m.
        scale: 1 unless a similarity was estimated.
        dof: "4dof" (yaw + translation), "6dof" (SE(3)), "7dof" (Sim(3)), "origin" or "none".
    """

    R: FloatArray
    t: FloatArray
    scale: float = 1.0
    dof: str = "6dof"

    def apply(self, traj: Trajectory) -> Trajectory:
        """The trajectory expressed in the other's world frame."""
        return traj.transformed(self.R, self.t, self.scale)

    @property
    def yaw_deg(self) -> float:
        """Rotation about z of ``R`` in degrees."""
        return float(np.degrees(math.atan2(self.R[1, 0], self.R[0, 0])))


def umeyama_alignment(src: FloatArray, dst: FloatArray, *, with_scale: bool = False) -> SpatialAlignment:
    """Closed-form least-squares similarity/rigid transform ``dst ~ s R src + t`` (Umeyama 1991).

    Args:
        src: (N, 3) points (the estimate), N >= 3 not collinear for a unique rotation.
        dst: (N, 3) corresponding points (the ground truth).
        with_scale: also estimate the scale ``s`` (Sim(3)); else ``s = 1`` (SE(3)).

    Returns:
        The alignment (``dof`` "7dof" or "6dof").

    Raises:
        MetricsError: shapes differ or fewer than 3 points.
    """
    src = np.asarray(src, dtype=float)
    dst = np.asarray(dst, dtype=float)
    if src.shape != dst.shape or src.ndim != 2 or src.shape[1] != 3 or len(src) < 3:
        raise MetricsError(f"umeyama needs two (N>=3, 3) arrays, got {src.shape} and {dst.shape}")
    mu_s, mu_d = src.mean(axis=0), dst.mean(axis=0)
    xs, xd = src - mu_s, dst - mu_d
    sigma = xd.T @ xs / len(src)
    U, D, Vt = np.linalg.svd(sigma)
    S = np.eye(3)
    if np.linalg.det(U) * np.linalg.det(Vt) < 0:
        S[2, 2] = -1.0
    R = U @ S @ Vt
    s = 1.0
    if with_scale:
        var_s = float(np.mean(np.sum(xs * xs, axis=1)))
        s = float(np.trace(np.diag(D) @ S) / var_s) if var_s > 0 else 1.0
    t = mu_d - s * R @ mu_s
    return SpatialAlignment(R=R, t=t, scale=s, dof="7dof" if with_scale else "6dof")


def yaw_translation_alignment(src: FloatArray, dst: FloatArray) -> SpatialAlignment:
    """Least-squares 4-DoF alignment (rotation about z + translation) ``dst ~ Rz(yaw) src + t``.

    The closed form of the planar Umeyama/Procrustes problem on the centred x, y coordinates; z only
    shifts (Zhang & Scaramuzza 2018, sec. IV: the 4 unobservable DoF of visual-inertial odometry, which are
    also those of IMU + leg kinematics).

    Args:
        src: (N, 3) estimate positions, m.
        dst: (N, 3) ground-truth positions, m.

    Raises:
        MetricsError: shapes differ or fewer than 2 points.
    """
    src = np.asarray(src, dtype=float)
    dst = np.asarray(dst, dtype=float)
    if src.shape != dst.shape or src.ndim != 2 or src.shape[1] != 3 or len(src) < 2:
        raise MetricsError(f"4-DoF alignment needs two (N>=2, 3) arrays, got {src.shape} and {dst.shape}")
    mu_s, mu_d = src.mean(axis=0), dst.mean(axis=0)
    xs, xd = src - mu_s, dst - mu_d
    num = float(np.sum(xs[:, 0] * xd[:, 1] - xs[:, 1] * xd[:, 0]))
    den = float(np.sum(xs[:, 0] * xd[:, 0] + xs[:, 1] * xd[:, 1]))
    yaw = math.atan2(num, den) if (abs(num) + abs(den)) > 1e-12 else 0.0
    R = rot_z(yaw)
    return SpatialAlignment(R=R, t=mu_d - R @ mu_s, dof="4dof")


def origin_alignment(est: Trajectory, gt: Trajectory, *, n_poses: int = 1) -> SpatialAlignment:
    """4-DoF alignment from the first pose(s): yaw from orientations, translation from positions.

    Used for drift (the estimate starts where the ground truth starts, evo's ``--align_origin`` restricted
    to yaw). Works while the robot stands still, where a position-based alignment is degenerate.

    Args:
        est, gt: associated trajectories (same stamps).
        n_poses: number of first poses to average (yaw by circular mean).
    """
    n = max(1, min(n_poses, len(est)))
    dyaw = wrap_angle(yaw_of(gt.quat_world_base_xyzw[:n]) - yaw_of(est.quat_world_base_xyzw[:n]))
    yaw = math.atan2(float(np.mean(np.sin(dyaw))), float(np.mean(np.cos(dyaw))))
    R = rot_z(yaw)
    t = np.mean(gt.p_world_base[:n] - est.p_world_base[:n] @ R.T, axis=0)
    return SpatialAlignment(R=R, t=t, dof="origin")


def align_trajectory(est: Trajectory, gt: Trajectory, *, dof: str = "4dof") -> SpatialAlignment:
    """Spatial alignment of associated trajectories by name: "4dof", "6dof", "7dof", "origin" or "none"."""
    if dof == "4dof":
        return yaw_translation_alignment(est.p_world_base, gt.p_world_base)
    if dof == "6dof":
        return umeyama_alignment(est.p_world_base, gt.p_world_base)
    if dof == "7dof":
        return umeyama_alignment(est.p_world_base, gt.p_world_base, with_scale=True)
    if dof == "origin":
        return origin_alignment(est, gt)
    if dof == "none":
        return SpatialAlignment(R=np.eye(3), t=np.zeros(3), dof="none")
    raise MetricsError(f"unknown alignment {dof!r}; use 4dof, 6dof, 7dof, origin or none")
