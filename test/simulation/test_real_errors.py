"""The simulator's real-robot errors (issue 16.2): each switchable, each of its stated size, the ground truth of the
base unchanged."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.stats import chi2

from robot_state_estimator import simulation
from robot_state_estimator.simulation.sensor_sampling import gyro_turn_on_offset
from robot_state_estimator.simulation.settings import REAL_ROBOT_ERRORS

BASE = dict(robot="go1", gait="trot", duration_s=2.5, settle_s=0.5, ramp_s=0.5, seed=5, noise=True)


@pytest.fixture(scope="module")
def runs():
    robot = simulation.load_sim_robot("go1")
    errors = {k: v for k, v in REAL_ROBOT_ERRORS.items() if k != "jitter_s"}  # same stamps: comparable rows
    plain = simulation.simulate(simulation.SimulationSettings(**BASE), robot=robot)
    real = simulation.simulate(simulation.SimulationSettings(**BASE, **errors), robot=robot)
    return plain, real


def test_base_ground_truth_is_unchanged(runs) -> None:
    plain, real = runs
    np.testing.assert_array_equal(plain.stamps_ns, real.stamps_ns)
    np.testing.assert_array_equal(plain.q[:, :7], real.q[:, :7])
    np.testing.assert_array_equal(plain.v[:, :6], real.v[:, :6])
    np.testing.assert_array_equal(plain.contact, real.contact)


def test_encoder_quantisation(runs) -> None:
    _, real = runs
    step = REAL_ROBOT_ERRORS["encoder_resolution_rad"]
    np.testing.assert_allclose(real.joint_position / step, np.round(real.joint_position / step), atol=1e-6)


def test_imu_vibration_has_its_stddev(runs) -> None:
    plain, real = runs
    extra_f = real.imu_f - plain.imu_f  # the same ideal readings and the same SDF noise draws
    extra_w = real.imu_omega - plain.imu_omega - (real.imu_gyro_bias - plain.imu_gyro_bias)  # less the turn-on offset
    # the bias walk is slow: sample-to-sample differences of the extra are the vibration's (variance 2 sigma^2;
    # the walk adds q^2 dt = 9e-7 (m/s^2)^2 to 0.79)
    assert np.std(np.diff(extra_f, axis=0)) / np.sqrt(2.0) == pytest.approx(
        REAL_ROBOT_ERRORS["imu_vibration_accel_m_s2"], rel=0.03
    )
    assert np.std(extra_w) == pytest.approx(REAL_ROBOT_ERRORS["imu_vibration_gyro_rad_s"], rel=0.03)
    np.testing.assert_array_equal(plain.imu_f_ideal, real.imu_f_ideal)


def test_accelerometer_bias_walk_has_its_density() -> None:
    """Vibration off, the walk alone: the extra specific force starts at 0 and its increments between the 1 kHz
    stamps have the variance q^2 dt per axis (0.03^2 * 1e-3 = 9e-7 (m/s^2)^2; 7500 increments: 3 % allowed);
    over 2.5 s each axis wanders by about q sqrt(T) = 0.047 m/s^2, the gyroscope is untouched. The run records the
    walk it added (``imu_accel_bias_walk``, zeros without it): the Monte Carlo's accelerometer bias truth."""
    robot = simulation.load_sim_robot("go1")
    q = REAL_ROBOT_ERRORS["imu_accel_bias_walk"]
    assert q == 0.03
    plain = simulation.simulate(simulation.SimulationSettings(**BASE), robot=robot)
    walk = simulation.simulate(simulation.SimulationSettings(**BASE, imu_accel_bias_walk=q), robot=robot)
    extra = walk.imu_f - plain.imu_f
    np.testing.assert_allclose(extra[0], 0.0, atol=1e-12)
    dt = np.diff(walk.stamps_ns[walk.imu_index]) * 1e-9
    assert np.allclose(dt, 1e-3)
    assert np.var(np.diff(extra, axis=0)) == pytest.approx(q * q * 1e-3, rel=0.03)
    assert 0.01 < np.abs(extra[-1]).max() < 0.2
    np.testing.assert_array_equal(walk.imu_omega, plain.imu_omega)
    np.testing.assert_array_equal(walk.imu_accel_bias, plain.imu_accel_bias)
    np.testing.assert_allclose(walk.imu_accel_bias_walk, extra, rtol=0.0, atol=1e-12)
    np.testing.assert_array_equal(plain.imu_accel_bias_walk, np.zeros_like(extra))


def test_gyroscope_turn_on_offset() -> None:
    """The offset alone: a constant per axis on the gyroscope (the readings less the plain run's are that constant
    at every stamp), reported in ``imu_gyro_bias`` on top of the description's draw; the accelerometer untouched.
    Over 500 seeds (1500 axis draws) the sample variance sits inside chi2's two-sided 99.9 % band around
    (1 deg/s)^2, the BMI088 datasheet's typical zero-rate offset (Bosch's typical figures are one sigma)."""
    robot = simulation.load_sim_robot("go1")
    s = REAL_ROBOT_ERRORS["imu_gyro_turn_on_bias_rad_s"]
    assert s == pytest.approx(np.radians(1.0), rel=1e-15)
    plain = simulation.simulate(simulation.SimulationSettings(**BASE), robot=robot)
    settings = simulation.SimulationSettings(**BASE, imu_gyro_turn_on_bias_rad_s=s)
    biased = simulation.simulate(settings, robot=robot)
    extra = biased.imu_omega - plain.imu_omega
    np.testing.assert_allclose(extra, np.broadcast_to(extra[0], extra.shape), rtol=0, atol=1e-15)
    np.testing.assert_allclose(biased.imu_gyro_bias - plain.imu_gyro_bias, extra[0], rtol=0, atol=1e-15)
    assert np.all(np.abs(extra[0]) > 0) and np.abs(extra[0]).max() < 5 * s
    np.testing.assert_array_equal(biased.imu_f, plain.imu_f)

    draws = np.concatenate([gyro_turn_on_offset(dataclasses.replace(settings, seed=seed)) for seed in range(1, 501)])
    n = draws.size
    lo, hi = chi2.ppf([0.0005, 0.9995], n) / n
    assert lo < np.mean(draws**2) / s**2 < hi
    assert abs(np.mean(draws)) < 3.3 * s / np.sqrt(n)


def test_random_stance_slips(runs) -> None:
    """Every stance after the settle slips a little: the contact point moves in stance, by about 2 mm per axis."""
    plain, real = runs
    assert not plain.slipping.any() and real.slipping.any()
    moves = []  # the contact point's displacement over each stance, less the rolling sphere's of the plain run
    for foot in range(len(real.feet)):
        c = real.contact[:, foot]
        starts = np.flatnonzero(np.diff(c.astype(int)) == 1) + 1
        ends = np.flatnonzero(np.diff(c.astype(int)) == -1)
        for s in starts:
            e = ends[ends > s]
            if e.size:
                d_real = real.contact_points_world[e[0], foot, :2] - real.contact_points_world[s, foot, :2]
                d_plain = plain.contact_points_world[e[0], foot, :2] - plain.contact_points_world[s, foot, :2]
                moves.append(d_real - d_plain)
    moves = np.array(moves)
    assert len(moves) >= 8
    assert 0.0008 < np.std(moves) < 0.004, np.std(moves)


def test_errors_switch_off_to_the_same_run() -> None:
    s = simulation.SimulationSettings(**BASE)
    assert dataclasses.replace(s, **{k: 0.0 for k in REAL_ROBOT_ERRORS}) == dataclasses.replace(s, jitter_s=0.0)
    with pytest.raises(simulation.SimulationError, match="stance_slip_m"):
        simulation.SimulationSettings(**BASE, stance_slip_m=-1.0)


def test_vibration_keeps_its_density_at_another_imu_rate() -> None:
    """``simulate --real-errors --imu-rate 400`` and the Monte Carlo at 400 Hz: the vibration's per-sample stddevs
    scaled so that the density stays the estimator's noise floor (0.02 m/s^2/sqrt(Hz), 0.002 rad/s/sqrt(Hz): per sample
    density times sqrt(rate)); the other errors as stated."""
    import argparse

    from robot_state_estimator.simulation.cli import add_arguments, real_errors
    from robot_state_estimator.simulation.settings import real_robot_errors

    for rate in (1000.0, 400.0, 250.0):
        errors = real_robot_errors(rate)
        assert errors["imu_vibration_accel_m_s2"] / np.sqrt(rate) == pytest.approx(0.02, rel=0.01)
        assert errors["imu_vibration_gyro_rad_s"] / np.sqrt(rate) == pytest.approx(0.002, rel=0.01)
        assert {k: v for k, v in errors.items() if "vibration" not in k} == {
            k: v for k, v in REAL_ROBOT_ERRORS.items() if "vibration" not in k
        }
    assert real_robot_errors(1000.0) == REAL_ROBOT_ERRORS
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--real-errors", "--imu-rate", "400", "--output", "unused"])
    assert real_errors(args)["imu_vibration_gyro_rad_s"] == real_robot_errors(400.0)["imu_vibration_gyro_rad_s"]
