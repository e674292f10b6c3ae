"""A Go1 held in the air (legs hanging, no foot loaded, IMU still), then lowered onto the ground and left standing:
the initialisation waits for loaded feet and takes the height from them (issue 16.5).

The stream is made here from geometry and rigid-body dynamics (pinocchio), not from the estimator: the base moves
only vertically (quintic lowering of 6 cm), the joints go from a hanging to the standing configuration, the IMU reads
the specific force of that motion, the efforts are RNEA torques (in the air: no contact force; standing: the weight
shared by the four feet, least-norm forces balancing the base rows); the true standing height puts the feet's contact
points (sphere centre minus radius) on z = 0.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.samples import FootForceSample, ImuSample, JointSample
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import EstimatorSettings, RobotStateEstimator

RATE_HZ = 500.0
T0_NS = 1_700_000_000 * 1_000_000_000
LIFT_M = 0.06
#: hip, thigh, calf of each leg: standing, and legs hanging (more extended) while held
Q_STAND = np.tile([0.0, 0.8, -1.5], 4)
Q_HANG = np.tile([0.0, 0.75, -1.4], 4)


def quintic(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s(u), ds/du, d2s/du2 of the rest-to-rest quintic on [0, 1]."""
    u = np.clip(u, 0.0, 1.0)
    return 10 * u**3 - 15 * u**4 + 6 * u**5, 30 * u**2 - 60 * u**3 + 30 * u**4, 60 * u - 180 * u**2 + 120 * u**3


Sample = tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def lifted_stream(est: RobotStateEstimator) -> tuple[list[Sample], float]:
    """(stamp, accel_imu, q_joints, tau_joints, loaded) per sample, and the true standing height (m)."""
    model = est.model
    data = model.createData()
    feet = [model.getFrameId(f) for f in est.foot_frames]
    rho = est.foot_radii

    def q_full(z: float, qj: np.ndarray) -> np.ndarray:
        return np.concatenate([[0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0], qj])

    def contact_heights(qj: np.ndarray) -> np.ndarray:
        pin.framesForwardKinematics(model, data, q_full(0.0, qj))
        return np.array([data.oMf[f].translation[2] for f in feet]) - rho

    h_stand = -float(contact_heights(Q_STAND).min())
    assert np.ptp(contact_heights(Q_STAND)) < 1e-9  # the four feet of the standing pose on one plane
    hang = float(contact_heights(Q_STAND).min() - contact_heights(Q_HANG).min())
    assert 0.01 < hang < LIFT_M  # the hanging feet stay above the ground, 6 cm - hang
    R_imu_base = est.imu.pose_in_base.rotation.T
    t_air, t_lower = 1.2, 1.0  # s held, s lowering, then standing
    out = []
    n = int(3.6 * RATE_HZ)
    weight = float(pin.computeTotalMass(model)) * 9.81
    for k in range(n):
        t = k / RATE_HZ
        s, ds, dds = quintic(np.array((t - t_air) / t_lower))
        s, ds, dds = float(s), float(ds) / t_lower, float(dds) / t_lower**2
        z = h_stand + LIFT_M * (1.0 - s)
        qj = Q_HANG + (Q_STAND - Q_HANG) * s
        vj = (Q_STAND - Q_HANG) * ds
        aj = (Q_STAND - Q_HANG) * dds
        a_z = -LIFT_M * dds
        q = q_full(z, qj)
        v = np.concatenate([np.zeros(6), vj])
        a = np.concatenate([[0.0, 0.0, a_z, 0.0, 0.0, 0.0], aj])
        tau = np.array(pin.rnea(model, data, q, v, a))
        standing = s >= 1.0
        if standing:  # the ground carries the weight: forces f with J_c^T f = tau on the base rows
            pin.computeJointJacobians(model, data, q)
            pin.framesForwardKinematics(model, data, q)
            J = np.vstack([pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED)[:3] for f in feet])  # (12, nv)
            f = np.linalg.lstsq(J[:, :6].T, tau[:6], rcond=None)[0]
            assert abs(f[2::3].sum() - weight) < 1e-6 * weight
            tau = tau - J.T @ f
            assert np.abs(tau[:6]).max() < 1e-8
        f_base_in_base = np.array([0.0, 0.0, 9.81 + a_z])
        out.append((T0_NS + round(k * 1e9 / RATE_HZ), R_imu_base @ f_base_in_base, qj, tau[6:], np.full(4, standing)))
    return out, h_stand


def make(wait: bool, source: str) -> RobotStateEstimator:
    desc = load_description(robot_description_path("go1"))
    settings = EstimatorSettings()
    settings = dataclasses.replace(
        settings,
        ekf=dataclasses.replace(settings.ekf, init_wait_for_loaded_feet=wait),
        contact=dataclasses.replace(settings.contact, source=source),
    )
    return RobotStateEstimator.from_description(desc, settings)


def run(wait: bool, source: str) -> tuple[float, float, RobotStateEstimator, list[str]]:
    est = make(wait, source)
    stream, h_true = lifted_stream(est)
    names = est.joint_names
    e = None
    for stamp, accel, qj, tau, loaded in stream:
        if source == "foot_sensor":  # pressure counts: 0 in the air, 200 standing
            est.add_foot_forces(FootForceSample(stamp, est.foot_frames, 200.0 * loaded))
        est.add_joints(JointSample(stamp, names, qj, effort=tau))
        e = est.add_imu(ImuSample(stamp, np.zeros(3), accel)) or e
    assert e is not None
    return float(e.p_world_base[2]), h_true, est, [ev.key for ev in est.pop_events()]


@pytest.mark.parametrize("source", ["torque", "foot_sensor"])
def test_lifted_then_lowered_start_has_the_standing_height(source: str) -> None:
    z, h_true, _, keys = run(True, source)
    assert "init_waiting_for_load" in keys
    assert keys.count("initialized") == 1 and "initialized_moving" not in keys
    assert abs(z - h_true) < 0.01, (z, h_true)


def test_without_waiting_the_lifted_start_is_off_by_the_lift() -> None:
    """The old behaviour (initialise in the air, height from all hanging feet) misses by the lift minus the legs'
    hang: shows the stream exercises what the waiting fixes."""
    z, h_true, _, keys = run(False, "torque")
    assert "init_waiting_for_load" not in keys
    assert abs(z - h_true) > 0.02, (z, h_true)
