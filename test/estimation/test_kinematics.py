"""LegKinematics: foot Jacobians against finite differences, the leg-odometry velocity against pinocchio."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from est_helpers import GO1_FEET, GO1_STANDING

from robot_state_estimator.estimation import LegKinematics, skew
from robot_state_estimator.estimation.kinematics import cross3


def test_skew_and_cross() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(skew(a) @ b, np.cross(a, b))
    np.testing.assert_allclose(cross3(a, b), np.cross(a, b))


def test_leg_indices_and_jacobians_match_finite_differences(go1_model: pin.Model) -> None:
    kin = LegKinematics(go1_model, GO1_FEET, base_link="base")
    assert [idx.tolist() for idx in kin.leg_joint_indices] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    rng = np.random.default_rng(1)
    q = GO1_STANDING + rng.normal(size=12) * 0.2
    kin.update(q)
    p0, J0 = kin.p_base_foot.copy(), kin.J_base_foot.copy()
    eps = 1e-7
    for j in range(12):
        dq = np.zeros(12)
        dq[j] = eps
        kin.update(q + dq)
        p_plus = kin.p_base_foot.copy()
        kin.update(q - dq)
        np.testing.assert_allclose((p_plus - kin.p_base_foot) / (2 * eps), J0[:, :, j], atol=1e-6)
    # a foot depends on its own leg only
    for i, idx in enumerate(kin.leg_joint_indices):
        others = np.setdiff1d(np.arange(12), idx)
        assert np.all(J0[i][:, others] == 0.0)
    kin.update(q)
    np.testing.assert_array_equal(kin.p_base_foot, p0)


def test_leg_odometry_velocity_matches_pinocchio(go1_model: pin.Model) -> None:
    """For any floating-base motion, R^T v_foot_W = v_B + omega_B x r + J qdot; so a still foot gives v_B."""
    kin = LegKinematics(go1_model, GO1_FEET, base_link="base")
    data = go1_model.createData()
    rng = np.random.default_rng(2)
    for _ in range(5):
        R = pin.exp3(rng.normal(size=3))
        q = np.r_[rng.normal(size=3), pin.Quaternion(R).coeffs(), GO1_STANDING + rng.normal(size=12) * 0.2]
        v = rng.normal(size=go1_model.nv)
        pin.forwardKinematics(go1_model, data, q, v)
        pin.updateFramePlacements(go1_model, data)
        kin.update(q[7:])
        for i, fid in enumerate(kin.foot_frame_ids):
            v_foot_world = pin.getFrameVelocity(go1_model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear
            v_rel = R.T @ v_foot_world  # foot velocity in B
            # if this foot were still, the base velocity would be v_B - v_rel:
            expected = v[:3] - v_rel
            got = kin.base_velocity_from_foot(i, v[6:], v[3:6]) + 0.0
            np.testing.assert_allclose(got, expected, atol=1e-12)
            np.testing.assert_allclose(
                kin.foot_velocity_in_base(i, v[6:]) + np.cross(v[3:6], kin.p_base_foot[i]) + v[:3], v_rel, atol=1e-12
            )
