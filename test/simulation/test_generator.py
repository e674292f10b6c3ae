"""Generated runs: q/v/a consistent, IMU integrates to the ground truth, dynamics hold (the feet's contact
models: test_rolling.py)."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.description import load_description
from robot_state_estimator.sensors import ImuModel
from robot_state_estimator.simulation import SimulationError, SimulationSettings, SlipEvent, load_sim_robot, simulate
from robot_state_estimator.simulation.robots import imu_at_rate


@pytest.fixture(scope="module")
def go1():
    return load_sim_robot("go1")


@pytest.fixture(scope="module")
def trot(go1):
    return simulate(SimulationSettings(robot="go1", gait="trot", duration_s=3.0, settle_s=0.5, ramp_s=0.5), robot=go1)


def test_q_v_a_are_consistent(trot, go1):
    dt = np.diff(trot.t_s)
    dq = (
        np.array([pin.difference(go1.model, trot.q[k], trot.q[k + 1]) for k in range(trot.q.shape[0] - 1)])
        / dt[:, None]
    )
    # (q1 - q0)/h = (v0 + v1)/2 - h (a1 - a0)/12 + O(h^4) (Euler-Maclaurin); the base part is exact in Lie terms
    # only to first order in the angular velocity, hence the tolerance
    v_mid = 0.5 * (trot.v[1:] + trot.v[:-1]) - dt[:, None] * (trot.a[1:] - trot.a[:-1]) / 12
    assert np.abs(dq - v_mid).max() < 1e-5
    dv = np.diff(trot.v, axis=0) / dt[:, None]
    a_mid = 0.5 * (trot.a[1:] + trot.a[:-1])
    assert np.abs(dv - a_mid).max() < 5e-3 * np.abs(trot.a).max()


def test_integrated_imu_reproduces_ground_truth(trot, go1):
    imu = ImuModel(go1.imu, go1.model)
    model, data = imu.model, imu.data
    idx = trot.imu_index
    t = trot.t_s[idx]
    g = np.array([0.0, 0.0, -9.81])

    def truth(k):
        pin.forwardKinematics(model, data, trot.q[k], trot.v[k])
        X = pin.updateFramePlacement(model, data, imu.frame_id)
        v = pin.getFrameVelocity(model, data, imu.frame_id, pin.LOCAL_WORLD_ALIGNED).linear
        return np.array(X.rotation), np.array(X.translation), np.array(v)

    R, p, v = truth(idx[0])
    for j in range(idx.size - 1):
        dt = t[j + 1] - t[j]
        a0 = R @ trot.imu_f[j] + g
        R_next = R @ pin.exp3(0.5 * (trot.imu_omega[j] + trot.imu_omega[j + 1]) * dt)
        a1 = R_next @ trot.imu_f[j + 1] + g
        p = p + v * dt + (2 * a0 + a1) * dt * dt / 6
        v = v + 0.5 * (a0 + a1) * dt
        R = R_next
    R_T, p_T, v_T = truth(idx[-1])
    assert np.linalg.norm(pin.log3(R_T.T @ R)) < 1e-5
    assert np.abs(v - v_T).max() < 1e-4
    assert np.abs(p - p_T).max() < 1e-4
    assert np.linalg.norm(p_T - trot.q[0, :3]) > 0.3  # it did move


def test_contact_forces_carry_the_weight(trot, go1):
    """At rest the stance forces carry the weight; swing feet carry nothing (the RNEA identity with the forces
    at the contact points is in test_rolling.py)."""
    weight = pin.computeTotalMass(go1.model) * 9.81
    np.testing.assert_allclose(trot.contact_forces_world[0, :, 2].sum(), weight, rtol=1e-9)
    assert np.all(trot.contact_wrenches_in_foot[~trot.contact] == 0)
    assert np.all(trot.contact_forces_world[~trot.contact] == 0)


def test_static_start_reads_gravity_and_is_deterministic(trot, go1):
    np.testing.assert_allclose(trot.imu_f[0], go1.imu.pose_in_base.rotation.T @ [0, 0, 9.81], atol=1e-9)
    np.testing.assert_allclose(trot.v[0], 0.0, atol=1e-12)
    again = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=0.3), robot=go1)
    again2 = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=0.3), robot=go1)
    np.testing.assert_array_equal(again.q, again2.q)


def test_noise_is_seeded_and_sized(go1):
    s = SimulationSettings(robot="go1", gait="stand", duration_s=0.5, noise=True, seed=3)
    r1, r2 = simulate(s, robot=go1), simulate(s, robot=go1)
    np.testing.assert_array_equal(r1.imu_omega, r2.imu_omega)
    err = r1.imu_omega - r1.imu_omega_ideal - r1.imu_gyro_bias
    np.testing.assert_allclose(err.std(axis=0), go1.imu.gyro_stddev(), rtol=0.15)
    enc = r1.joint_position - r1.q[r1.joint_index, 7:]
    assert abs(enc.std() - s.encoder_noise_rad) < 0.1 * s.encoder_noise_rad
    r3 = simulate(SimulationSettings(robot="go1", gait="stand", duration_s=0.5, noise=True, seed=4), robot=go1)
    assert not np.array_equal(r1.imu_omega, r3.imu_omega)


def test_stand_and_stand_up(go1):
    stand = simulate(SimulationSettings(robot="go1", gait="stand", duration_s=0.5), robot=go1)
    assert np.abs(stand.v).max() < 1e-12 and np.abs(stand.base_residual_wrench).max() < 1e-6
    up = simulate(SimulationSettings(robot="go1", gait="stand_up", duration_s=2.5, settle_s=0.2, ramp_s=1.0), robot=go1)
    assert up.q[-1, 2] - up.q[0, 2] == pytest.approx(0.08, abs=1e-9)
    assert up.contact.all()


@pytest.mark.parametrize("robot", ["solo12", "anymal_c"])
def test_walk_with_turns_on_other_robots(robot):
    run = simulate(
        SimulationSettings(
            robot=robot,
            gait="walk",
            duration_s=2.0,
            settle_s=0.2,
            ramp_s=0.5,
            turn_period_s=3.0,
            turn_amplitude_rad=0.3,
        )
    )
    assert (run.contact.sum(axis=1) >= 3).all()
    # exact (to the regularisation 1e-10 trace(A A^T), on a 500 N robot) except where the ground would have to
    # pull a foot (zero-moment point outside the support triangle): test_unilateral.py
    assert (run.contact_forces_world[..., 2][run.contact] >= 0).all()
    size = np.linalg.norm(run.base_residual_wrench, axis=1)
    assert np.count_nonzero(size > 1e-5) == run.unbalanced_samples == run.unilateral_samples
    assert np.abs(run.v[:, 5]).max() > 0.1  # it turns


def test_slip_moves_the_foot_in_contact(go1):
    s = SimulationSettings(
        robot="go1",
        gait="trot",
        duration_s=2.0,
        settle_s=0.5,
        slip=SlipEvent("FL_foot", 0.55, 0.04, (0.02, -0.01)),
        foot_model="point",
    )
    run = simulate(s, robot=go1)
    moved = run.foot_positions_world[run.slipping[:, 0], 0]
    assert run.slipping[:, 0].any() and not run.slipping[:, 1:].any()
    assert run.contact[run.slipping[:, 0], 0].all()
    k_after = np.flatnonzero(run.slipping[:, 0])[-1] + 2
    np.testing.assert_allclose(run.foot_positions_world[k_after, 0, :2] - moved[0, :2], [0.02, -0.01], atol=1e-3)
    with pytest.raises(SimulationError, match="swing"):
        simulate(
            SimulationSettings(robot="go1", duration_s=2.0, settle_s=0.5, slip=SlipEvent("FR_foot", 0.6)), robot=go1
        )


def test_rates_and_jitter(go1):
    s = SimulationSettings(
        robot="go1", gait="stand", duration_s=0.2, imu_rate_hz=400, joint_rate_hz=1000, jitter_s=2e-4
    )
    run = simulate(s, robot=go1)
    assert run.imu_index.size in (80, 81) and run.joint_index.size in (200, 201)  # the last may jitter out
    assert np.all(np.diff(run.stamps_ns) > 0)
    nominal = s.start_stamp_ns + np.round(np.arange(run.imu_index.size) * 2.5e6).astype(np.int64)
    assert np.abs(run.imu_stamps_ns - nominal).max() <= 2e5
    assert np.abs(run.imu_stamps_ns - nominal).max() > 0
    with pytest.raises(SimulationError, match="jitter"):
        SimulationSettings(jitter_s=1e-3)


def test_another_imu_rate_keeps_the_sensors_noise_density(go1):
    """Sampled at 250 Hz instead of the description's 1 kHz, the IMU keeps its white-noise density (the bundled
    description's rule: per sample = density sqrt(rate / 2)), so the per-sample stddev halves; the run's IMU spec and
    the description stored with it say 250 Hz and the halved stddevs (what the estimator reads), the biases kept."""
    s = SimulationSettings(
        robot="go1", gait="stand", duration_s=20.0, imu_rate_hz=250, joint_rate_hz=250, seed=3, noise=True
    )
    run = simulate(s, robot=go1)
    gyro0, accel0 = go1.imu.angular_velocity_noise[0], go1.imu.linear_acceleration_noise[0]
    assert go1.imu.update_rate == 1000.0
    for imu in (run.imu, load_description(run.description_xml).imu):
        assert imu.update_rate == 250.0
        assert imu.angular_velocity_noise[0].stddev == pytest.approx(gyro0.stddev / 2.0, rel=1e-5)
        assert imu.linear_acceleration_noise[2].stddev == pytest.approx(accel0.stddev / 2.0, rel=1e-5)
        assert imu.linear_acceleration_noise[2].bias_stddev == accel0.bias_stddev
    # measured on the 5,000 samples (the turn-on bias removed with the mean): sample stddev within 3 %
    err = run.imu_omega - run.imu_omega_ideal
    np.testing.assert_allclose((err - err.mean(axis=0)).std(axis=0), gyro0.stddev / 2.0, rtol=0.03)


def test_another_imu_rate_rewrites_the_chosen_imu_only(go1):
    """With two IMUs in the description the one the run uses (by name) is taken to the run's rate, the other is left
    as it is; an IMU declared by the estimator's settings (no ``<sensor>`` in the description) has only its spec
    changed (the replay declares the rate)."""
    xml = go1.description_xml
    block = re.search(r'<gazebo reference="imu_link">.*?</gazebo>', xml, re.S).group(0)
    second = block.replace('name="imu_sensor"', 'name="imu2"').replace("<update_rate>1000<", "<update_rate>500<")
    second = re.sub(r"<stddev>[^<]*</stddev>", "<stddev>0.01</stddev>", second)
    xml2 = xml.replace(block, block + second)
    robot = dataclasses.replace(go1, imu=load_description(xml2).with_imu("imu2").imu, description_xml=xml2)
    run_robot, stored_xml = imu_at_rate(robot, xml2, 250.0)
    assert run_robot.imu.update_rate == 250.0
    assert run_robot.imu.angular_velocity_noise[0].stddev == pytest.approx(0.01 * math.sqrt(0.5), rel=1e-12)
    stored = load_description(stored_xml)
    chosen, other = stored.with_imu("imu2").imu, stored.with_imu("imu_sensor").imu
    assert (chosen.update_rate, chosen.angular_velocity_noise[0].stddev) == (
        250.0,
        run_robot.imu.angular_velocity_noise[0].stddev,
    )
    assert (other.update_rate, other.angular_velocity_noise[0].stddev) == (
        1000.0,
        go1.imu.angular_velocity_noise[0].stddev,
    )
    declared = dataclasses.replace(go1, imu=dataclasses.replace(go1.imu, name="declared", source="settings"))
    no_sensor = xml.replace(block, "")
    run_robot, stored_xml = imu_at_rate(declared, no_sensor, 400.0)
    assert run_robot.imu.update_rate == 400.0 and stored_xml == no_sensor
    with pytest.raises(SimulationError, match="no <sensor name='imu_sensor'>"):
        imu_at_rate(go1, no_sensor, 400.0)


def test_standing_gaits_refuse_base_motion_settings():
    # a stand with a yaw rate used to be simulated without turning while run.yaml recorded the rate
    for gait in ("stand", "stand_up"):
        with pytest.raises(SimulationError, match=r"does not move the base: \['yaw_rate_rad_s'\]"):
            SimulationSettings(gait=gait, yaw_rate_rad_s=0.3)
        with pytest.raises(SimulationError, match="speed_m_s"):
            SimulationSettings(gait=gait, speed_m_s=0.2)
    assert SimulationSettings(gait="trot", yaw_rate_rad_s=0.3).yaw_rate_rad_s == 0.3
