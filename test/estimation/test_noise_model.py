"""BaseEkf's process noise against the noise it is meant to describe, and the covariance conventions it publishes.

- The discrete process noise ``Q_d = G Q_c G^T dt`` against the sensitivity of one propagation step to the IMU
  readings (finite differences on the manifold): ``G`` is minus the derivative of the nominal step w.r.t. the
  readings divided by dt, so ``Q_d = J_n Sigma_c J_n^T / dt`` with ``J_n`` that derivative (n, S-frame noise).
- A Monte Carlo of readings with per-sample white noise ``sigma_d = sigma_c / sqrt(dt)`` (what an SDFormat
  ``<noise>`` stddev at rate 1/dt is) and bias random walks ``b += sigma_rw sqrt(dt) N(0, 1)`` per sample (the
  short-term growth of gz-sensors' Gauss-Markov bias): the spread of the filter's error over the runs must match
  its P (the densities scaled by dt exactly once), the bias variances the closed form ``sigma_rw^2 T``.
- The published pose covariance at initialisation: the settings' roll/pitch/yaw stddevs are about the world
  axes (REP-103 / ``geometry_msgs/PoseWithCovariance``: rotation about the fixed axes of the parent frame).
- Weight-relative contact thresholds: fractions of the robot's weight divided by the number of feet.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, AnalyticMotion, boxminus

from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation import (
    BaseEkf,
    ContactSettings,
    EkfSettings,
    EstimatorSettings,
    RobotStateEstimator,
)
from robot_state_estimator.estimation.ekf import N_STATES, ImuNoise

#: a rotated IMU with a lever arm (the rotation mixes the anisotropic densities below into the base axes)
X_BASE_IMU = pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.4, 1.2), np.array([-0.08, 0.06, 0.02]))
#: anisotropic continuous densities per IMU axis (m/s^2/sqrt(Hz), rad/s/sqrt(Hz)) and random walks
ACC_DENSITY = np.array([0.04, 0.02, 0.06])
GYR_DENSITY = np.array([0.004, 0.008, 0.002])
ACC_RW = np.array([0.2, 0.1, 0.3])
GYR_RW = np.array([0.02, 0.05, 0.03])


def make_ekf(*, acc_rw: np.ndarray, gyr_rw: np.ndarray) -> BaseEkf:
    # The lever-arm term alpha x r is off: alpha is the backward difference of the gyro, so gyro white noise
    # reaches the specific force through it as a (telescoping, bounded) difference the white-noise model does not
    # describe; here the process noise of the readings themselves is checked.
    settings = dataclasses.replace(EkfSettings(), use_angular_acceleration=False)
    noise = ImuNoise(
        accel_density=ACC_DENSITY,
        gyro_density=GYR_DENSITY,
        accel_bias_random_walk=acc_rw,
        gyro_bias_random_walk=gyr_rw,
        gyro_sample_stddev=GYR_DENSITY / np.sqrt(1e-3),
        accel_bias_prior_std=np.zeros(3),
        gyro_bias_prior_std=np.zeros(3),
    )
    return BaseEkf(X_BASE_IMU, noise, settings)


@pytest.mark.parametrize("use_kernels", [False, True])
def test_process_noise_matches_the_sensitivity_of_a_step_to_the_readings(use_kernels: bool) -> None:
    rng = np.random.default_rng(21)
    ekf = make_ekf(acc_rw=np.zeros(3), gyr_rw=np.zeros(3))
    if use_kernels and not ekf.use_kernels:
        pytest.skip("numba not available")
    ekf.use_kernels = use_kernels
    ekf.initialize(
        0,
        R_world_base=pin.exp3(rng.normal(size=3) * 0.5),
        p_world_base=rng.normal(size=3),
        v_base_in_base=rng.normal(size=3),
        accel_bias=rng.normal(size=3) * 0.1,
        gyro_bias=rng.normal(size=3) * 0.05,
        P=np.zeros((N_STATES, N_STATES)),
    )
    gyro, accel = rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0.0, 0.0, 9.81]
    dt_ns, eps = 1_000_000, 1e-6
    dt = dt_ns * 1e-9

    def step(reading: np.ndarray) -> BaseEkf:
        e = copy.deepcopy(ekf)
        e.set_imu(0, reading[3:], reading[:3])
        assert e.propagate_to(dt_ns) is None
        return e

    reading = np.r_[accel, gyro]  # [accelerometer, gyroscope] in S
    nominal = step(reading)
    J_n = np.zeros((N_STATES, 6))
    for j in range(6):
        J_n[:, j] = boxminus(step(reading + eps * np.eye(6)[j]), nominal) / eps
    Q_expected = J_n @ np.diag(np.r_[ACC_DENSITY, GYR_DENSITY] ** 2) @ J_n.T / dt
    Q_filter = nominal.P  # from P = 0: Phi 0 Phi^T + Q_d
    # G is the first-order (in dt) sensitivity: the two agree to O(|omega| dt) on the velocity and attitude
    # blocks; the position block of Q_d is zero (its noise enters at O(dt^3) through the velocity).
    # Block by block (velocity, attitude; the cross block is all gyro noise through -([v]x + L) R_BS).
    for rows, cols in ((slice(3, 6), slice(3, 6)), (slice(3, 6), slice(6, 9)), (slice(6, 9), slice(6, 9))):
        block = Q_expected[rows, cols]
        np.testing.assert_allclose(Q_filter[rows, cols], block, atol=1e-2 * np.abs(block).max())
    np.testing.assert_allclose(Q_filter[:3], 0.0, atol=1e-12)
    assert np.abs(Q_expected[:3]).max() < 1e-2 * np.abs(Q_expected).max()


def test_propagated_covariance_matches_a_monte_carlo_of_the_imu_noise() -> None:
    """No measurement updates: after T the errors of n_runs filters fed noisy readings of one true motion have
    the covariance the filter propagated (each diagonal term within 25 % with 400 runs, i.e. about 3.5 sigma of
    the sample variance, and correlations within 0.2); the bias variances are ``sigma_rw^2 T``."""
    motion = AnalyticMotion(
        amp_p=np.array([0.2, 0.1, 0.05]),
        w_p=np.array([3.0, 4.0, 6.0]),
        amp_rpy=np.array([0.2, 0.15, 0.6]),
        w_rpy=np.array([5.0, 4.0, 2.0]),
    )
    dt_ns, n_steps, n_runs = 2_000_000, 100, 400
    dt = dt_ns * 1e-9
    T = n_steps * dt
    times = np.arange(n_steps + 1) * dt
    exact = [motion.imu(t, X_BASE_IMU) for t in times]  # (gyro, accel) in S
    sigma_d_acc, sigma_d_gyr = ACC_DENSITY / np.sqrt(dt), GYR_DENSITY / np.sqrt(dt)
    template = make_ekf(acc_rw=ACC_RW, gyr_rw=GYR_RW)
    P0 = np.eye(N_STATES) * 1e-14
    template.initialize(
        0, R_world_base=motion.R(0.0), p_world_base=motion.p(0.0), v_base_in_base=motion.v_base(0.0), P=P0
    )
    template.set_imu(0, *exact[0])
    rng = np.random.default_rng(5)
    errors = np.zeros((n_runs, N_STATES))
    Ps = np.zeros((n_runs, N_STATES, N_STATES))
    for run in range(n_runs):
        ekf = copy.deepcopy(template)
        b_acc, b_gyr = np.zeros(3), np.zeros(3)
        for k in range(1, n_steps + 1):
            b_acc = b_acc + ACC_RW * np.sqrt(dt) * rng.normal(size=3)
            b_gyr = b_gyr + GYR_RW * np.sqrt(dt) * rng.normal(size=3)
            gyro = exact[k][0] + b_gyr + sigma_d_gyr * rng.normal(size=3)
            accel = exact[k][1] + b_acc + sigma_d_acc * rng.normal(size=3)
            assert ekf.propagate(k * dt_ns, gyro, accel) is None
        errors[run] = np.concatenate(
            [
                motion.p(T) - ekf.p_world_base,
                motion.v_base(T) - ekf.v_base_in_base,
                pin.log3(ekf.R_world_base.T @ motion.R(T)),  # true = estimate Exp(dtheta)
                b_acc - ekf.accel_bias,
                b_gyr - ekf.gyro_bias,
            ]
        )
        Ps[run] = ekf.P
    P = Ps.mean(axis=0)
    C = np.cov(errors.T)  # about the mean: the nominal integration's own (deterministic) error is left out
    np.testing.assert_allclose(np.diag(P)[9:12], ACC_RW**2 * T, rtol=1e-9)  # closed form of the random walk
    np.testing.assert_allclose(np.diag(P)[12:15], GYR_RW**2 * T, rtol=1e-9)
    ratio = np.diag(C) / np.diag(P)
    assert np.all((ratio > 0.75) & (ratio < 1.3)), ratio.round(2)
    d = np.sqrt(np.diag(P))
    assert np.abs(C / np.outer(d, d) - P / np.outer(d, d)).max() < 0.2
    # Normalised over all 15 states: the mean NEES of the runs is chi-square(15 n_runs) / n_runs.
    nees = np.einsum("ni,ni->n", errors - errors.mean(0), np.linalg.solve(P, (errors - errors.mean(0)).T).T)
    assert 13.5 < nees.mean() < 16.5, nees.mean()


def test_initial_pose_covariance_is_the_settings_stddevs_about_the_world_axes() -> None:
    """``initial_roll_pitch_std``/``initial_yaw_std`` are about the fixed world axes, whatever the attitude: the
    published rotation block is ``diag(rp^2, rp^2, yaw^2)``, the position block ``initial_position_std^2 I``."""
    settings = dataclasses.replace(
        EkfSettings(), initial_roll_pitch_std=0.03, initial_yaw_std=0.2, initial_position_std=0.01
    )
    for use_kernels in (False, True):
        ekf = make_ekf(acc_rw=np.zeros(3), gyr_rw=np.zeros(3))
        ekf = BaseEkf(X_BASE_IMU, ekf.noise, settings)
        if use_kernels and not ekf.use_kernels:
            continue
        ekf.use_kernels = use_kernels
        ekf.initialize(0, R_world_base=pin.rpy.rpyToMatrix(0.4, -0.3, 2.0), p_world_base=np.zeros(3))
        C = ekf.pose_covariance()
        np.testing.assert_allclose(C[3:, 3:], np.diag([0.03**2, 0.03**2, 0.2**2]), atol=1e-15)
        np.testing.assert_allclose(C[:3, :3], 0.01**2 * np.eye(3), atol=1e-18)
        np.testing.assert_allclose(C[:3, 3:], 0.0, atol=1e-18)


def test_weight_relative_thresholds_are_fractions_of_the_weight_per_foot(go1_model: pin.Model) -> None:
    mass = sum(inertia.mass for inertia in go1_model.inertias)  # kg, summed over the bodies
    imu = ImuSpec(name="imu", link="base", frame_id="imu_link")
    relative = ContactSettings(threshold_mode="weight_relative", on_threshold=0.3, off_threshold=0.15)
    est = RobotStateEstimator(go1_model, imu, GO1_FEET, EstimatorSettings(contact=relative), base_link="base")
    share = mass * 9.81 / 4  # N per foot
    assert est.torque_detector.on_threshold == pytest.approx(0.3 * share, rel=1e-12)
    assert est.torque_detector.off_threshold == pytest.approx(0.15 * share, rel=1e-12)
    absolute = ContactSettings(threshold_mode="absolute", on_threshold=40.0, off_threshold=20.0)
    est = RobotStateEstimator(go1_model, imu, GO1_FEET, EstimatorSettings(contact=absolute), base_link="base")
    assert (est.torque_detector.on_threshold, est.torque_detector.off_threshold) == (40.0, 20.0)


@pytest.mark.parametrize("use_kernels", [False, True])
def test_published_covariances_are_those_of_the_published_quantities(use_kernels: bool) -> None:
    """Errors drawn from P (true state = estimate (+) dx): the sample covariance of the published quantities'
    errors, in ROS conventions (position in W, rotation vector of ``R_true R_hat^T`` about the W axes; linear and
    angular velocity in the base frame, ``omega = R_BS (gyro - b_g)`` of the held reading), matches
    ``pose_covariance()`` and ``twist_covariance()`` (less its white gyro noise of one sample), cross blocks
    included."""
    rng = np.random.default_rng(9)
    ekf = make_ekf(acc_rw=np.zeros(3), gyr_rw=np.zeros(3))
    if use_kernels and not ekf.use_kernels:
        pytest.skip("numba not available")
    ekf.use_kernels = use_kernels
    A = rng.normal(size=(N_STATES, N_STATES)) * 0.01  # small: the mapping is checked to first order
    ekf.initialize(
        0,
        R_world_base=pin.rpy.rpyToMatrix(0.3, -0.5, 2.2),
        p_world_base=rng.normal(size=3),
        v_base_in_base=rng.normal(size=3),
        gyro_bias=rng.normal(size=3) * 0.05,
        P=A @ A.T,
    )
    gyro = rng.normal(size=3)
    ekf.set_imu(0, gyro, np.array([0.0, 0.0, 9.81]))
    R_BS = X_BASE_IMU.rotation
    R_hat, omega_hat = ekf.R_world_base.copy(), R_BS @ (gyro - ekf.gyro_bias)
    n = 20000
    dx = rng.multivariate_normal(np.zeros(N_STATES), ekf.P, size=n)
    pose_err = np.zeros((n, 6))
    twist_err = np.zeros((n, 6))
    for i, d in enumerate(dx):
        R_true = R_hat @ pin.exp3(d[6:9])
        pose_err[i] = np.r_[d[0:3], pin.log3(R_true @ R_hat.T)]
        twist_err[i] = np.r_[d[3:6], R_BS @ (gyro - (ekf.gyro_bias + d[12:15])) - omega_hat]
    # Sample covariances: correlations within 0.05 (about 5 standard errors at n = 20000).
    C_twist = ekf.twist_covariance()
    C_twist[3:, 3:] -= R_BS @ np.diag((GYR_DENSITY / np.sqrt(1e-3)) ** 2) @ R_BS.T  # one sample's white noise
    for C_pub, err in ((ekf.pose_covariance(), pose_err), (C_twist, twist_err)):
        d = np.sqrt(np.diag(C_pub))
        np.testing.assert_allclose(np.cov(err.T) / np.outer(d, d), C_pub / np.outer(d, d), atol=0.05)
