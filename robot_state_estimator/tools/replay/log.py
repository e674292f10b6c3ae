"""The estimate log: compact columns of what the node would publish for each estimate (odometry numbers and foot
states), from which the trajectory, the metrics and the plots are made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robot_state_estimator.common.output_layout import (
    ACCEL_BIAS,
    GYRO_BIAS,
    OMEGA_BASE_IN_BASE,
    OUTPUT_SIZE,
    P_WORLD_BASE,
    POSE_COVARIANCE,
    QUAT_WORLD_BASE_XYZW,
    TWIST_COVARIANCE,
    V_BASE_IN_BASE,
)
from robot_state_estimator.common.samples import Estimate
from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.evaluation.trajectory import Trajectory
from robot_state_estimator.tools.replay.errors import ReplayError


@dataclass
class EstimateLog:
    """Compact columns of what the node would publish, in order: odometry (pose, twist, covariances, biases) and
    contact states.

    Attributes:
        stamp_ns: (N,) int, the stamps of the published odometry.
        outputs: (N,) the ``Estimate.output_vector`` (91,) of each: position in ``odom`` (3, m), quaternion
            xyzw (4), linear and angular velocity in the base frame (3 + 3, m/s, rad/s), pose and twist
            covariance (36 + 36, row-major), accelerometer and gyroscope bias in the IMU frame (3 + 3);
            :meth:`column` gives them by name, as do the properties ``p``, ``quat_xyzw``, ``v``, ``omega``,
            ``pose_cov``, ``twist_cov``, ``accel_bias``, ``gyro_bias`` (arrays, one row per estimate).
        feet: foot names; ``contact_stamp_ns`` (M,), ``contact`` (M, F) bool, ``force_world`` (M, F, 3) N,
            ``accepted`` (M, F) bool, ``nis`` (M, F): from estimates that carry feet.
    """

    stamp_ns: list[int] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    feet: tuple[str, ...] = ()
    contact_stamp_ns: list[int] = field(default_factory=list)
    contact: list[Any] = field(default_factory=list)
    force_world: list[Any] = field(default_factory=list)
    accepted: list[Any] = field(default_factory=list)
    nis: list[Any] = field(default_factory=list)

    def append(self, e: Estimate, odometry: bool = True, contacts: bool = True) -> None:
        """Record one estimate: its pose and twist when its odometry is published, its feet when they are.

        Raises:
            ValueError: the estimate's output vector is not (91,).
        """
        if odometry:
            vector = e.output_vector()
            if vector.shape != (OUTPUT_SIZE,):
                raise ValueError(f"estimate output vector has shape {vector.shape}, expected ({OUTPUT_SIZE},)")
            self.stamp_ns.append(e.stamp_ns)
            self.outputs.append(vector)
        if contacts:
            feet = e.feet
            if not feet:
                return
            names = tuple(f.name for f in feet)
            if not self.feet:
                self.feet = names
            if names == self.feet:
                self.contact_stamp_ns.append(e.stamp_ns)
                self.contact.append([f.in_contact for f in feet])
                self.force_world.append([f.force_in_world for f in feet])
                self.accepted.append([f.update_accepted for f in feet])
                self.nis.append([f.nis for f in feet])

    def column(self, name: str) -> np.ndarray:
        """One output of every logged odometry as an array: ``p`` (N, 3), ``quat_xyzw`` (N, 4), ``v`` (N, 3),
        ``omega`` (N, 3), ``pose_cov`` (N, 6, 6), ``twist_cov`` (N, 6, 6), ``accel_bias`` (N, 3),
        ``gyro_bias`` (N, 3).

        Raises:
            KeyError: an unknown name.
        """
        sl, shape = _LOG_COLUMNS[name]
        out = self._matrix()[:, sl]
        return out.reshape((len(out), *shape)) if shape else out

    def _matrix(self) -> np.ndarray:
        return np.asarray(self.outputs, dtype=float).reshape(len(self.outputs), OUTPUT_SIZE)

    @property
    def p(self) -> np.ndarray:
        """(N, 3) m, base position in ``odom``."""
        return self.column("p")

    @property
    def quat_xyzw(self) -> np.ndarray:
        """(N, 4) base orientation in ``odom``, x y z w."""
        return self.column("quat_xyzw")

    @property
    def v(self) -> np.ndarray:
        """(N, 3) m/s, base linear velocity in the base frame."""
        return self.column("v")

    @property
    def omega(self) -> np.ndarray:
        """(N, 3) rad/s, base angular velocity in the base frame."""
        return self.column("omega")

    @property
    def pose_cov(self) -> np.ndarray:
        """(N, 6, 6) pose covariance (odometry layout)."""
        return self.column("pose_cov")

    @property
    def twist_cov(self) -> np.ndarray:
        """(N, 6, 6) twist covariance (odometry layout)."""
        return self.column("twist_cov")

    @property
    def accel_bias(self) -> np.ndarray:
        """(N, 3) m/s^2, accelerometer bias in the IMU frame."""
        return self.column("accel_bias")

    @property
    def gyro_bias(self) -> np.ndarray:
        """(N, 3) rad/s, gyroscope bias in the IMU frame."""
        return self.column("gyro_bias")

    def __len__(self) -> int:
        return len(self.stamp_ns)

    def trajectory(self) -> Trajectory:
        """The estimates as a :class:`Trajectory` (repeated stamps: the last estimate of each stamp).

        ``extras`` holds ``accel_bias``, ``gyro_bias`` and ``omega``.

        Raises:
            ReplayError: fewer than two estimates.
        """
        if len(self) < 2:
            raise ReplayError(f"the estimator produced {len(self)} estimates; nothing to evaluate")
        t = np.asarray(self.stamp_ns, dtype=np.int64)
        # the last estimate of each stamp; after a reset to earlier stamps, only stamps beyond the last kept
        keep = np.zeros(len(t), bool)
        last = None
        for k in range(len(t) - 1, -1, -1):
            if last is None or t[k] < last:
                keep[k] = True
                last = t[k]
        t_s = (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S

        m = self._matrix()[keep]

        def a(sl: slice, *shape: int) -> np.ndarray:
            return np.ascontiguousarray(m[:, sl]).reshape(len(m), *shape) if shape else np.ascontiguousarray(m[:, sl])

        return Trajectory(
            t_s=t_s[keep],
            p_world_base=a(P_WORLD_BASE),
            quat_world_base_xyzw=a(QUAT_WORLD_BASE_XYZW),
            v_base_in_base=a(V_BASE_IN_BASE),
            pose_covariance=a(POSE_COVARIANCE, 6, 6),
            twist_covariance=a(TWIST_COVARIANCE, 6, 6),
            extras={"accel_bias": a(ACCEL_BIAS), "gyro_bias": a(GYRO_BIAS), "omega": a(OMEGA_BASE_IN_BASE)},
        )

    def contacts_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(t_s (M,), contact (M, F) bool)`` of the estimates that carried feet."""
        t = np.asarray(self.contact_stamp_ns, dtype=np.int64)
        t_s = (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S
        return t_s, np.asarray(self.contact, dtype=bool).reshape(len(t), len(self.feet))


#: ``EstimateLog.column`` name -> (slice of the output vector, shape per row or None)
_LOG_COLUMNS: dict[str, tuple[slice, tuple[int, ...] | None]] = {
    "p": (P_WORLD_BASE, None),
    "quat_xyzw": (QUAT_WORLD_BASE_XYZW, None),
    "v": (V_BASE_IN_BASE, None),
    "omega": (OMEGA_BASE_IN_BASE, None),
    "pose_cov": (POSE_COVARIANCE, (6, 6)),
    "twist_cov": (TWIST_COVARIANCE, (6, 6)),
    "accel_bias": (ACCEL_BIAS, None),
    "gyro_bias": (GYRO_BIAS, None),
}
