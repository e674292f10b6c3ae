"""ContactDetector (hysteresis, debounce) and ContactForceEstimator (known-answer forces, gravity rotated)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, GO1_STANDING

from robot_state_estimator.estimation import ContactDetector, ContactForceEstimator, LegKinematics, kinematic_clearance

MS = 1_000_000


def run(det: ContactDetector, values: list[float], dt_ns: int = MS) -> list[bool]:
    return [bool(det.update(k * dt_ns, [v])[0]) for k, v in enumerate(values)]


def test_schmitt_trigger_hysteresis() -> None:
    det = ContactDetector(1, on_threshold=60.0, off_threshold=30.0)
    values = [0, 50, 61, 50, 31, 29, 45, 59, 61, 100]
    assert run(det, values) == [False, False, True, True, True, False, False, False, True, True]


def test_first_sample_uses_the_mid_threshold_and_nan_holds() -> None:
    det = ContactDetector(2, on_threshold=60.0, off_threshold=30.0)
    assert det.update(0, [50.0, 40.0]).tolist() == [True, False]
    assert det.update(MS, [np.nan, np.inf]).tolist() == [True, False]
    assert det.update(2 * MS, [np.nan, 70.0]).tolist() == [True, True]


def test_debounce_ignores_blips_and_reports_after_the_hold_time() -> None:
    det = ContactDetector(1, on_threshold=60.0, off_threshold=30.0, min_on_duration_s=0.003, min_off_duration_s=0.002)
    #        0   1    2    3    4    5    6    7    8   9  10  11  12   13
    values = [0, 100, 100, 0, 100, 100, 100, 100, 100, 0, 100, 0, 0, 0]
    got = run(det, values)
    # on: the blip at 1-2 (2 ms) is ignored; from 4 held 3 ms -> on at 7
    assert got[:7] == [False] * 7
    assert got[7:9] == [True, True]
    # off: the 1 ms dip at 9 is ignored; from 11 held 2 ms -> off at 13
    assert got[9:13] == [True] * 4
    assert got[13] is False
    det.reset()
    assert det.update(0, [100.0]).tolist() == [True]
    det.set_thresholds(200.0, 150.0)
    assert det.update(MS, [100.0]).tolist() == [True]  # now below off, but held for less than 2 ms
    assert det.update(3 * MS, [100.0]).tolist() == [False]
    with pytest.raises(ValueError):
        det.set_thresholds(1.0, 2.0)
    with pytest.raises(ValueError):
        ContactDetector(1, on_threshold=1.0, off_threshold=2.0)


def test_kinematic_clearance() -> None:
    p = np.array([[0.2, 0.1, -0.3], [0.2, -0.1, -0.25], [-0.2, 0.1, -0.3], [-0.2, -0.1, -0.2]])
    np.testing.assert_allclose(kinematic_clearance(p, np.eye(3)), [0.0, 0.05, 0.0, 0.1])
    R = pin.rpy.rpyToMatrix(0.0, 0.3, 0.0)  # pitched: heights along the world vertical
    np.testing.assert_allclose(kinematic_clearance(p, R), (p @ R[2]) - (p @ R[2]).min())


@pytest.mark.parametrize("rpy", [(0.0, 0.0, 0.0), (0.2, -0.3, 1.0)])
@pytest.mark.parametrize("flat", [False, True])
def test_forces_from_torques_known_answer(go1_model: pin.Model, rpy: tuple[float, float, float], flat: bool) -> None:
    """tau = g(q) - sum J_i^T f_i for chosen forces (full configuration, world frame) -> recovered forces."""
    kin = LegKinematics(go1_model, GO1_FEET, base_link="base")
    est = ContactForceEstimator(kin, flat_feet=flat)
    rng = np.random.default_rng(0)
    R = pin.rpy.rpyToMatrix(*rpy)
    q_joints = GO1_STANDING + rng.normal(size=12) * 0.1
    q = np.r_[0.3, -0.2, 0.4, pin.Quaternion(R).coeffs(), q_joints]
    data = go1_model.createData()
    g = pin.computeGeneralizedGravity(go1_model, data, q)
    pin.computeJointJacobians(go1_model, data, q)
    pin.updateFramePlacements(go1_model, data)
    f_world = rng.normal(size=(4, 3)) * 10 + [0, 0, 30]
    tau = g.copy()
    for i, fid in enumerate(kin.foot_frame_ids):
        J = pin.getFrameJacobian(go1_model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
        tau -= J.T @ f_world[i]
    kin.update(q_joints)
    forces, wrenches = est.estimate(q_joints, tau[6:], R)
    if not flat:
        np.testing.assert_allclose(forces, f_world, atol=1e-8)
    else:  # 3 joints per leg: the least-norm 6-D wrench reproduces the joint torques
        for i, idx in enumerate(kin.leg_joint_indices):
            w_base = np.r_[R.T @ forces[i], kin.R_base_foot[i] @ wrenches[i, 3:]]
            np.testing.assert_allclose(kin.J6_base_foot[i][:, idx].T @ w_base, (g[6:] - tau[6:])[idx], atol=1e-8)
    for i in range(4):
        R_world_foot = R @ kin.R_base_foot[i]
        np.testing.assert_allclose(R_world_foot @ wrenches[i, :3], forces[i], atol=1e-9)  # foot <-> world round trip
    assert est.weight_n == pytest.approx(pin.computeTotalMass(go1_model) * 9.81)
