"""What the filter assumes (issue 16.1, 15.6): the IMU noise floor of a legged robot, the warning on a description
noise far below it, and the leg measurement's joint-velocity noise from the encoders through the differentiator."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import EkfSettings, EstimatorSettings, RobotStateEstimator
from robot_state_estimator.estimation.joint_velocity import JointVelocityEstimator
from robot_state_estimator.estimation.noise_model import differentiated_velocity_std, leg_measurement_covariance

T0 = 1_700_000_000 * 1_000_000_000


@pytest.mark.parametrize(("rate_hz", "cutoff_hz"), [(400.0, 100.0), (1000.0, 100.0), (400.0, 0.0), (500.0, 30.0)])
def test_differentiated_velocity_std_matches_the_differentiator_on_white_encoder_noise(
    rate_hz: float, cutoff_hz: float
) -> None:
    """The closed form against the empirical stddev of JointVelocityEstimator's output for a still joint whose
    encoder reads white noise (20000 samples, 12 joints: relative error of the std about 0.5 %)."""
    rng = np.random.default_rng(3)
    sigma_q = 1e-3
    jv = JointVelocityEstimator(12, cutoff_hz=cutoff_hz, max_dt_s=1.0)
    dt_ns = round(1e9 / rate_hz)
    out = []
    for k in range(20000):
        jv.advance(T0 + k * dt_ns, rng.normal(0.0, sigma_q, 12))
        if k > 200:
            out.append(jv.qdot.copy())
    empirical = float(np.std(np.array(out)))
    expected = differentiated_velocity_std(sigma_q, dt_ns * 1e-9, cutoff_hz)
    assert abs(empirical / expected - 1.0) < 0.03, (empirical, expected)
    if cutoff_hz == 0.0:
        assert math.isclose(expected, math.sqrt(2.0) * sigma_q * rate_hz, rel_tol=1e-9)


def test_leg_covariance_is_the_sum_of_its_parts_and_six_rows_reuse_it() -> None:
    rng = np.random.default_rng(0)
    J6 = rng.normal(size=(6, 12))
    c = rng.normal(size=3)
    c_skew = pin.skew(c)
    Sg = np.diag([1e-4, 2e-4, 3e-4])
    R3 = leg_measurement_covariance(J6[:3], c_skew, Sg, foot_velocity_noise=0.1, joint_velocity_noise=0.3)
    np.testing.assert_allclose(R3, 0.01 * np.eye(3) + 0.09 * J6[:3] @ J6[:3].T + c_skew @ Sg @ c_skew.T, atol=1e-15)
    R6 = leg_measurement_covariance(J6, c_skew, Sg, foot_velocity_noise=0.1, joint_velocity_noise=0.3)
    np.testing.assert_allclose(R6[:3, :3], R3, atol=1e-15)
    np.testing.assert_allclose(R6[3:, 3:], 0.01 * np.eye(3) + 0.09 * J6[3:] @ J6[3:].T, atol=1e-15)


def go1(settings: EstimatorSettings) -> RobotStateEstimator:
    return RobotStateEstimator.from_description(load_description(robot_description_path("go1")), settings)


def test_imu_noise_floor_and_the_warning_on_the_datasheet_noise() -> None:
    """The bundled Go1 states the BMI088 datasheet noise (1.7e-3 m/s^2/sqrt(Hz), 1.2e-4 rad/s/sqrt(Hz) as its
    per-sample stddevs at 1 kHz say): the filter uses the floors and says so; floors 0 give the description's."""
    desc = load_description(robot_description_path("go1"))
    imu = desc.imu
    rate = imu.update_rate
    stated_acc = np.array([n.stddev for n in imu.linear_acceleration_noise]) / math.sqrt(rate)
    stated_gyr = np.array([n.stddev for n in imu.angular_velocity_noise]) / math.sqrt(rate)
    assert stated_acc.max() < 0.02 / 3 and stated_gyr.max() < 0.002 / 3
    est = go1(EstimatorSettings())
    np.testing.assert_allclose(est.ekf.noise.accel_density, 0.02)
    np.testing.assert_allclose(est.ekf.noise.gyro_density, 0.002)
    np.testing.assert_allclose(est.ekf.noise.gyro_sample_stddev, 0.002 * math.sqrt(rate))
    events = [e for e in est.pop_events() if e.key == "imu_noise_below_floor"]
    assert len(events) == 2 and all(e.level == "warn" for e in events)
    assert "accelerometer" in events[0].message and "ekf.accel_noise_floor" in events[0].message
    assert "gyroscope" in events[1].message and "ekf.gyro_noise_floor" in events[1].message
    no_floor = EstimatorSettings(ekf=EkfSettings(accel_noise_floor=0.0, gyro_noise_floor=0.0))
    est = go1(no_floor)
    np.testing.assert_allclose(est.ekf.noise.accel_density, stated_acc, rtol=1e-12)
    np.testing.assert_allclose(est.ekf.noise.gyro_density, stated_gyr, rtol=1e-12)
    assert not [e for e in est.pop_events() if e.key == "imu_noise_below_floor"]


@pytest.mark.parametrize("with_velocities", [False, True])
def test_joint_velocity_noise_is_chosen_at_initialisation(with_velocities: bool) -> None:
    """A standing Go1 streamed at 400 Hz: without velocities in the joint message the leg update uses the
    encoders' 1 mrad through the differentiator (0.293 rad/s), with them ekf.encoder_velocity_noise."""
    est = go1(EstimatorSettings())
    q = np.tile([0.0, 0.8, -1.5], 4)
    names = est.joint_names
    for k in range(200):
        stamp = T0 + k * 2_500_000
        kw = {"velocity": np.zeros(12)} if with_velocities else {}
        est.add_joints(JointSample(stamp, names, q, **kw))
        est.add_imu(ImuSample(stamp, np.zeros(3), np.array([0.0, 0.0, 9.81])))
    assert est.initialized
    init = [e for e in est.pop_events() if e.key == "initialized"]
    assert len(init) == 1 and "leg measurement noise" in init[0].message
    expected = 0.05 if with_velocities else differentiated_velocity_std(1e-3, 2.5e-3, 100.0)
    assert est.ekf.settings.encoder_velocity_noise == pytest.approx(expected, rel=1e-12)
    if not with_velocities:
        assert est.ekf.settings.encoder_velocity_noise == pytest.approx(0.293, abs=0.001)
    # the settings the user gave are untouched; a reset chooses again
    assert est.settings.ekf.encoder_velocity_noise == 0.05
    est.reset("test")
    assert est.ekf.settings is est.settings.ekf
    assert dataclasses.asdict(est.settings.ekf)["encoder_noise_rad"] == 1e-3
