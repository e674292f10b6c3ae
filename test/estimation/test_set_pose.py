"""``RobotStateEstimator.set_pose``: the pose is re-seated at the filter's stamp, velocity and biases kept, the pose
covariance converted exactly from ROS's world-axis rotation to the filter's right perturbation; bad poses refused;
the same numbers on the compiled-kernel and the numpy reference paths."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, GO1_STANDING, initialize_at_random

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation import EkfSettings, EstimatorSettings, RobotStateEstimator
from robot_state_estimator.estimation.ekf import BA_SL, BG_SL, TH_SL, V_SL
from robot_state_estimator.estimation.jit import DISABLE_ENV, use_kernels

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
LEVEL = np.array([0.0, 0.0, 9.81])
POSE = [0, 1, 2, 6, 7, 8]  # rows/columns of [dp_W, dtheta_B] in the filter's P
OTHER = [3, 4, 5, 9, 10, 11, 12, 13, 14]  # velocity and biases


@pytest.fixture(params=["kernels", "reference"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The estimators built in the test use this path (the environment is read at construction)."""
    if request.param == "kernels":
        monkeypatch.delenv(DISABLE_ENV, raising=False)
        if not use_kernels():
            pytest.skip("numba is not importable")
    else:
        monkeypatch.setenv(DISABLE_ENV, "1")
    return str(request.param)


def make_est(model: pin.Model) -> RobotStateEstimator:
    settings = EstimatorSettings(ekf=EkfSettings(init_imu_samples=20))
    imu = ImuSpec(name="imu", link="base", frame_id="imu_link")
    return RobotStateEstimator(model, imu, GO1_FEET, settings, base_link="base")


def step(est: RobotStateEstimator, k: int):
    stamp = T0 + k * MS
    est.add_imu(ImuSample(stamp, np.zeros(3), LEVEL))
    return est.add_joints(JointSample(stamp, est.joint_names, GO1_STANDING.copy()))


def started(model: pin.Model, n: int = 50) -> RobotStateEstimator:
    est = make_est(model)
    for k in range(n):
        step(est, k)
    assert est.initialized
    est.pop_events()
    return est


def random_spd(rng: np.random.Generator, n: int, scale: float = 0.1) -> np.ndarray:
    A = rng.normal(size=(n, n)) * scale
    return A @ A.T + 1e-4 * np.eye(n)


def body_from_world_jacobian(R: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d(dtheta_B)/d(dphi_W) by central differences on the manifold: ``Exp(dphi_W) R = R Exp(dtheta_B)``, so
    ``dtheta_B = Log(R^T Exp(dphi_W) R)`` (pinocchio's exp3/log3; no formula of the code under test)."""
    J = np.zeros((3, 3))
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        plus = pin.log3(R.T @ pin.exp3(e) @ R)
        minus = pin.log3(R.T @ pin.exp3(-e) @ R)
        J[:, i] = (plus - minus) / (2 * h)
    return J


def test_pose_is_set_velocity_biases_kept_covariance_converted(go1_model: pin.Model, path: str) -> None:
    rng = np.random.default_rng(3)
    est = make_est(go1_model)
    ekf = est.ekf
    assert ekf.use_kernels == (path == "kernels")
    initialize_at_random(ekf, rng)  # nonzero velocity, biases and cross-covariances everywhere
    v_before = ekf.v_base_in_base.copy()
    biases_before = (ekf.accel_bias.copy(), ekf.gyro_bias.copy())
    P_before = ekf.P.copy()
    stamp_before = ekf.stamp_ns

    p = np.array([1.5, -2.0, 0.42])
    R = pin.rpy.rpyToMatrix(0.1, -0.2, 2.5)
    C = random_spd(rng, 6)  # ROS order: x y z, rot about fixed X Y Z
    e = est.set_pose(p, R, C)

    assert e is not None and e.stamp_ns == stamp_before == ekf.stamp_ns  # at the filter's stamp, no time travel
    np.testing.assert_allclose(e.p_world_base, p, rtol=0, atol=1e-15)
    np.testing.assert_allclose(pin.Quaternion(*e.quat_world_base_xyzw[[3, 0, 1, 2]]).matrix(), R, atol=1e-12)
    np.testing.assert_array_equal(ekf.v_base_in_base, v_before)
    np.testing.assert_array_equal(e.v_base_in_base, v_before)
    np.testing.assert_array_equal(ekf.accel_bias, biases_before[0])
    np.testing.assert_array_equal(ekf.gyro_bias, biases_before[1])
    # the velocity/bias block is untouched, the pose's cross-covariances with it are zero
    np.testing.assert_array_equal(ekf.P[np.ix_(OTHER, OTHER)], P_before[np.ix_(OTHER, OTHER)])
    assert not ekf.P[np.ix_(POSE, OTHER)].any() and not ekf.P[np.ix_(OTHER, POSE)].any()
    # the pose block, from the world-axis covariance through the manifold Jacobian computed here
    J = body_from_world_jacobian(R)
    np.testing.assert_allclose(J, R.T, atol=1e-8)
    np.testing.assert_allclose(ekf.P[0:3, 0:3], C[0:3, 0:3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(ekf.P[0:3, TH_SL], C[0:3, 3:6] @ J.T, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ekf.P[TH_SL, TH_SL], J @ C[3:6, 3:6] @ J.T, rtol=0, atol=1e-8)
    # the published pose covariance is the one given (the inverse is exact)
    np.testing.assert_allclose(e.pose_covariance, C, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ekf.pose_covariance(), C, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(ekf.P, ekf.P.T)
    assert np.linalg.eigvalsh(ekf.P).min() > 0.0
    assert est.last_estimate is e


def test_without_covariance_the_settings_initial_stds_are_used(go1_model: pin.Model, path: str) -> None:
    est = started(go1_model)
    s = est.settings.ekf
    R = pin.rpy.rpyToMatrix(0.0, 0.0, -1.2)
    expected = np.diag([s.initial_position_std**2] * 3 + [s.initial_roll_pitch_std**2] * 2 + [s.initial_yaw_std**2])
    for cov in (None, np.zeros((6, 6)), np.zeros(36)):
        e = est.set_pose(np.array([0.0, 0.0, 0.3]), R, cov)
        assert e is not None
        np.testing.assert_allclose(e.pose_covariance, expected, rtol=0, atol=1e-18)
        P = est.ekf.P
        np.testing.assert_allclose(R @ P[TH_SL, TH_SL] @ R.T, expected[3:, 3:], rtol=0, atol=1e-18)
        assert not P[np.ix_(POSE, OTHER)].any()


def test_a_standing_robot_stays_at_the_set_pose_and_both_paths_agree(go1_model: pin.Model, monkeypatch) -> None:
    monkeypatch.setenv(DISABLE_ENV, "1")
    reference = started(go1_model)
    monkeypatch.delenv(DISABLE_ENV)
    runs = [reference] + ([started(go1_model)] if use_kernels() else [])
    p = np.array([3.0, -1.0, 0.31])
    R = pin.rpy.rpyToMatrix(0.0, 0.0, 0.7)  # yaw and position are free; roll and pitch stay level (gravity)
    C = np.diag([0.01, 0.02, 0.001, 1e-4, 2e-4, 0.05])
    for est in runs:
        est.set_pose(p, R, C)
    last = [None] * len(runs)
    for k in range(50, 1050):  # 1 s at 1 kHz
        for i, est in enumerate(runs):
            last[i] = step(est, k)
    for e in last:
        assert e is not None and e.stamp_ns == T0 + 1049 * MS
        np.testing.assert_allclose(e.p_world_base, p, rtol=0, atol=1e-6)
        R_est = pin.Quaternion(*e.quat_world_base_xyzw[[3, 0, 1, 2]]).matrix()
        assert np.linalg.norm(pin.log3(R.T @ R_est)) < 1e-6
        assert np.linalg.norm(e.v_base_in_base) < 1e-6
        assert np.linalg.eigvalsh(e.pose_covariance).min() > 0.0
        assert len(e.feet) == 4 and all(f.in_contact and f.update_accepted for f in e.feet)
    if len(last) == 2:  # the kernel path computes what the reference path does
        np.testing.assert_allclose(last[1].pose_covariance, last[0].pose_covariance, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(last[1].p_world_base, last[0].p_world_base, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p_world_base": [0.0, np.nan, 0.0]}, "p_world_base is not finite"),
        ({"p_world_base": [0.0, np.inf, 0.0]}, "p_world_base is not finite"),
        ({"p_world_base": [0.0, 0.0]}, r"p_world_base must have shape \(3,\)"),
        ({"R_world_base": np.full((3, 3), np.nan)}, "R_world_base is not finite"),
        ({"R_world_base": 2.0 * np.eye(3)}, "R_world_base is not a rotation"),
        ({"R_world_base": np.diag([1.0, 1.0, -1.0])}, "R_world_base is not a rotation.*det = -1"),
        ({"R_world_base": np.eye(4)}, r"must be a \(3, 3\) rotation matrix"),
        ({"pose_covariance": np.diag([1.0, 1, 1, 1, 1, np.nan])}, "pose_covariance is not finite"),
        ({"pose_covariance": np.eye(6) + np.triu(np.ones((6, 6)), 1) * 0.1}, "pose_covariance is not symmetric"),
        ({"pose_covariance": np.diag([1.0, 1, 1, 1, 1, -0.1])}, "not positive semi-definite"),
        ({"pose_covariance": np.eye(5)}, r"must be \(6, 6\) or \(36,\)"),
    ],
)
def test_a_bad_pose_is_refused_and_changes_nothing(go1_model: pin.Model, kwargs: dict, match: str) -> None:
    est = started(go1_model)
    x, P, stamp, last = est.ekf._x.copy(), est.ekf.P.copy(), est.ekf.stamp_ns, est.last_estimate
    args = {"p_world_base": np.zeros(3), "R_world_base": np.eye(3), "pose_covariance": None, **kwargs}
    with pytest.raises(ValueError, match=match):
        est.set_pose(**args)
    np.testing.assert_array_equal(est.ekf._x, x)
    np.testing.assert_array_equal(est.ekf.P, P)
    assert est.ekf.stamp_ns == stamp and est.last_estimate is last
    uninitialised = make_est(go1_model)  # refused the same way before the initialisation
    with pytest.raises(ValueError, match=match):
        uninitialised.set_pose(**args)


def test_before_initialisation_and_after_a_reset_nothing_is_set(go1_model: pin.Model, path: str) -> None:
    est = make_est(go1_model)
    assert est.set_pose(np.ones(3), np.eye(3)) is None
    assert not est.initialized and est.pop_events() == []
    with pytest.raises(RuntimeError, match="before initialisation"):  # the filter itself has no state to re-seat
        est.ekf.set_pose(np.ones(3), np.eye(3))
    for k in range(50):
        step(est, k)
    assert est.set_pose(np.ones(3), np.eye(3)) is not None
    est.reset("test")
    assert est.set_pose(np.ones(3), np.eye(3)) is None and not est.initialized
    e = None
    for k in range(50, 100):  # initialises again from the IMU, at the initial position, not the refused pose
        e = step(est, k) or e
    assert e is not None and abs(e.p_world_base[0]) < 1e-6 and abs(e.p_world_base[1]) < 1e-6


def test_round_trip_over_random_rotations_and_covariances() -> None:
    """``pose_error_covariance`` inverts the published mapping ``diag(I, R) P diag(I, R)^T`` for any attitude."""
    from robot_state_estimator.estimation.ekf import pose_error_covariance

    rng = np.random.default_rng(11)
    for _ in range(50):
        R = pin.exp3(rng.normal(size=3) * 2.0)
        C = random_spd(rng, 6, scale=rng.uniform(1e-3, 1.0))
        P = pose_error_covariance(C, R)
        T = np.eye(6)
        T[3:, 3:] = R
        np.testing.assert_allclose(T @ P @ T.T, C, rtol=0, atol=1e-13 * np.abs(C).max())
        J = body_from_world_jacobian(R)
        np.testing.assert_allclose(P[3:, 3:], J @ C[3:, 3:] @ J.T, rtol=0, atol=1e-7 * np.abs(C).max())


def test_slices_of_the_filter_state_are_what_this_test_assumes() -> None:
    assert [V_SL.start, TH_SL.start, BA_SL.start, BG_SL.start] == [3, 6, 9, 12]
