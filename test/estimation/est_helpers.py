"""Test helpers: an analytic base motion with exact IMU readings, and feeding simulated runs to the estimator.

Exact IMU readings (gz-sensors semantics, CONVENTIONS.md): ``omega_imu_in_imu = R_imu_base omega_base_in_base``
and ``f_imu_in_imu = R_imu_base (f_base_in_base + alpha_base_in_base x r + omega_base_in_base x (omega_base_in_base x
r))`` with ``f_base_in_base = R_world_base^T (a_base_in_world - g_world)`` the specific force at the base origin and
``r = p_base_imu`` the IMU lever arm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.estimation import BaseEkf, RobotStateEstimator

G_WORLD = np.array([0.0, 0.0, -9.81])
GO1_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
GO1_STANDING = np.array([0.0, 0.8, -1.6] * 4)
#: IMU mounts X_base_imu: at the base origin, and rotated with a lever arm
IMU_MOUNTS = [
    pin.SE3.Identity(),
    pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.4, 1.2), np.array([-0.08, 0.06, 0.02])),
]


def initialize_at_random(ekf: BaseEkf, rng: np.random.Generator) -> None:
    """Initialise ``ekf`` at stamp 0 with a random state (attitude, position, velocity, biases) and a random
    positive definite (15, 15) covariance, drawn from ``rng`` (covariance first, then the state)."""
    A = rng.normal(size=(15, 15)) * 0.1
    ekf.initialize(
        0,
        R_world_base=pin.exp3(rng.normal(size=3)),
        p_world_base=rng.normal(size=3),
        v_base_in_base=rng.normal(size=3),
        accel_bias=rng.normal(size=3) * 0.1,
        gyro_bias=rng.normal(size=3) * 0.05,
        P=A @ A.T + 1e-3 * np.eye(15),
    )


def common_gyro_noise(ekf: BaseEkf, points: np.ndarray, lead_s: float, dt_gyro_s: float) -> np.ndarray:
    """(3k, 3k) the gyro sample's noise in k stacked leg measurements at contact points (k, 3) m in B, worked out
    from the IMU's stated noise: the leg measurement holds ``[c_i]x n`` of the rate interpolated to the filter's time
    and the velocity state ``[r]x n`` of the same rate (the lever-arm term integrates the gyro's differences), ``n
    = (1 - f) n_prev + f n_held`` with ``f = 1 - lead / dt_gyro``: blocks ``((1 - f)^2 + f^2) [c_i - r]x Sigma_g
    [c_j - r]x^T``, ``Sigma_g = R_base_imu diag(sigma_sample^2) R_imu_base`` (two independent samples)."""
    f = min(max(1.0 - lead_s / dt_gyro_s, 0.0), 1.0)
    R_BS = np.asarray(ekf.R_base_imu)
    Sg = R_BS @ np.diag(ekf.noise.gyro_sample_stddev**2) @ R_BS.T
    A = np.vstack([pin.skew(np.asarray(c) - ekf.p_base_imu) for c in points])
    return ((1.0 - f) ** 2 + f * f) * (A @ Sg @ A.T)


def with_cross_blocks(R_blocks: list[np.ndarray], full: np.ndarray) -> np.ndarray:
    """The block-diagonal of ``R_blocks`` (per-foot 3 x 3) with the off-diagonal blocks of ``full`` (3k, 3k)."""
    k = len(R_blocks)
    R = full.copy()
    for i in range(k):
        R[3 * i : 3 * i + 3, 3 * i : 3 * i + 3] = R_blocks[i]
    return R


@dataclass
class AnalyticMotion:
    """Base pose ``p(t) = p0 + amp_p sin(w_p t)``, ``rpy(t) = rpy0 + amp_rpy sin(w_rpy t)`` (fixed-axis RPY)."""

    p0: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.3]))
    amp_p: np.ndarray = field(default_factory=lambda: np.zeros(3))
    w_p: np.ndarray = field(default_factory=lambda: np.ones(3))
    rpy0: np.ndarray = field(default_factory=lambda: np.zeros(3))
    amp_rpy: np.ndarray = field(default_factory=lambda: np.zeros(3))
    w_rpy: np.ndarray = field(default_factory=lambda: np.ones(3))

    def p(self, t: float) -> np.ndarray:
        return self.p0 + self.amp_p * np.sin(self.w_p * t)

    def v_world(self, t: float) -> np.ndarray:
        return self.amp_p * self.w_p * np.cos(self.w_p * t)

    def a_world(self, t: float) -> np.ndarray:
        return -self.amp_p * self.w_p**2 * np.sin(self.w_p * t)

    def rpy(self, t: float) -> np.ndarray:
        return self.rpy0 + self.amp_rpy * np.sin(self.w_rpy * t)

    def R(self, t: float) -> np.ndarray:
        return np.asarray(pin.rpy.rpyToMatrix(self.rpy(t)))

    def omega_base(self, t: float) -> np.ndarray:
        rpy_dot = self.amp_rpy * self.w_rpy * np.cos(self.w_rpy * t)
        return np.asarray(pin.rpy.computeRpyJacobian(self.rpy(t), pin.LOCAL)) @ rpy_dot

    def alpha_base(self, t: float, h: float = 1e-6) -> np.ndarray:
        return (self.omega_base(t + h) - self.omega_base(t - h)) / (2 * h)

    def v_base(self, t: float) -> np.ndarray:
        return self.R(t).T @ self.v_world(t)

    def imu(self, t: float, X_base_imu: pin.SE3) -> tuple[np.ndarray, np.ndarray]:
        """Exact (gyro (3,) rad/s, accel (3,) m/s^2) in S at time t."""
        R = self.R(t)
        w = self.omega_base(t)
        r = np.asarray(X_base_imu.translation)
        f_base = R.T @ (self.a_world(t) - G_WORLD)
        f_at_imu = f_base + np.cross(self.alpha_base(t), r) + np.cross(w, np.cross(w, r))
        R_imu_base = np.asarray(X_base_imu.rotation).T
        return R_imu_base @ w, R_imu_base @ f_at_imu


def boxplus(ekf: BaseEkf, dx: np.ndarray) -> None:
    """``ekf``'s state (+) ``dx`` (15,) in the error-state coordinates (right attitude perturbation:
    ``R <- R Exp(dtheta)``), in place."""
    ekf.p_world_base = ekf.p_world_base + dx[0:3]
    ekf.v_base_in_base = ekf.v_base_in_base + dx[3:6]
    ekf.R_world_base = ekf.R_world_base @ pin.exp3(dx[6:9])
    ekf.accel_bias = ekf.accel_bias + dx[9:12]
    ekf.gyro_bias = ekf.gyro_bias + dx[12:15]


def boxminus(a: BaseEkf, b: BaseEkf) -> np.ndarray:
    """(15,) ``a`` (-) ``b`` in the error-state coordinates (right attitude perturbation: ``R_a = R_b Exp(dtheta)``)."""
    return np.concatenate(
        [
            a.p_world_base - b.p_world_base,
            a.v_base_in_base - b.v_base_in_base,
            pin.log3(b.R_world_base.T @ a.R_world_base),
            a.accel_bias - b.accel_bias,
            a.gyro_bias - b.gyro_bias,
        ]
    )


def feed_run(
    est: RobotStateEstimator,
    run,
    *,
    imu_transform=None,
    use_effort: bool = True,
    start_ns: int | None = None,
    imu_first: bool = False,
    use_velocity: bool = True,
) -> dict:
    """Feed a simulated run (``robot_state_estimator.simulation.SimulatedRun``) in stamp order.

    Args:
        est: the estimator.
        run: the simulated run.
        imu_transform: optional ``f(k) -> (gyro, accel)`` replacing the run's IMU sample k.
        use_effort: pass the joint efforts (torque-based contacts) or not.
        use_velocity: pass the joint velocities or not (the estimator then differentiates the positions).
        start_ns: feed only the samples stamped at or after this (a run joined mid-way); None = all.
        imu_first: on equal stamps the IMU sample first (a joint sample is then applied at once); else the joint
            sample first (held until the IMU sample reaches its stamp).

    Returns:
        dict of arrays: ``imu_gt`` (ground-truth row of each IMU estimate), ``v``, ``p``, ``quat``, ``P_twist``,
        ``P_pose``; ``joint_gt``, ``contacts``, ``forces``, ``accepted``, ``nis`` for the joint estimates.
    """
    events = []
    for k, i in enumerate(run.imu_index):
        events.append((int(run.stamps_ns[i]), 0 if imu_first else 1, 1, k))
    for k, i in enumerate(run.joint_index):
        events.append((int(run.stamps_ns[i]), 1 if imu_first else 0, 0, k))
    events.sort()
    if start_ns is not None:
        events = [ev for ev in events if ev[0] >= start_ns]
    out: dict[str, list] = {
        k: [] for k in ("imu_gt", "v", "p", "quat", "P_twist", "P_pose", "joint_gt", "contacts", "forces")
    }
    out.update(accepted=[], nis=[], stamps=[])
    for stamp, _, kind, k in events:
        if kind == 1:
            if imu_transform is None:
                gyro, acc = run.imu_omega[k], run.imu_f[k]
            else:
                gyro, acc = imu_transform(k)
            e = est.add_imu(ImuSample(stamp, gyro, acc))
            if e is None:
                continue
            out["imu_gt"].append(run.imu_index[k])
            out["v"].append(e.v_base_in_base)
            out["p"].append(e.p_world_base)
            out["quat"].append(e.quat_world_base_xyzw)
            out["P_twist"].append(e.twist_covariance)
            out["P_pose"].append(e.pose_covariance)
            out["stamps"].append(stamp)
            feet = e.feet
            gt_row = run.imu_index[k]
        else:
            e = est.add_joints(
                JointSample(
                    stamp,
                    run.joint_names,
                    run.joint_position[k],
                    run.joint_velocity[k] if use_velocity else None,
                    run.joint_effort[k] if use_effort else None,
                )
            )
            if e is None:
                continue
            feet = e.feet
            gt_row = run.joint_index[k]
        if feet:
            out["joint_gt"].append(gt_row)
            out["contacts"].append([f.in_contact for f in feet])
            out["forces"].append([f.force_in_world for f in feet])
            out["accepted"].append([f.update_accepted for f in feet])
            out["nis"].append([f.nis for f in feet])
    return {k: np.asarray(v) for k, v in out.items()}
