"""The simulator's real-robot errors (issue 16.2): each switchable, each of its stated size, the ground truth of the
base unchanged."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from robot_state_estimator import simulation
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
    extra_w = real.imu_omega - plain.imu_omega
    assert np.std(extra_f) == pytest.approx(REAL_ROBOT_ERRORS["imu_vibration_accel_m_s2"], rel=0.03)
    assert np.std(extra_w) == pytest.approx(REAL_ROBOT_ERRORS["imu_vibration_gyro_rad_s"], rel=0.03)
    np.testing.assert_array_equal(plain.imu_f_ideal, real.imu_f_ideal)


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
