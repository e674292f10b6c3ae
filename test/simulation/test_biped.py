"""The simulated biped walk (``simulation/biped.py``, Talos on flat soles), checked with pinocchio quantities
computed here from the run's ``(q, v, a)``: soles still (position and orientation) in stance, the configuration
following the velocity, the dynamics balanced by the recorded sole wrenches, deterministic per seed."""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.description import load_description
from robot_state_estimator.simulation import SimulationError, SimulationSettings, simulate

LWA = pin.LOCAL_WORLD_ALIGNED


@pytest.fixture(scope="module")
def walk():
    return simulate(SimulationSettings(robot="talos", gait="walk", duration_s=2.4, settle_s=0.3, ramp_s=0.3))


@pytest.fixture(scope="module")
def model(walk):
    return load_description(walk.description_xml).model


def test_the_run_is_a_biped_walk_with_flat_feet(walk) -> None:
    assert walk.feet == ("left_sole_link", "right_sole_link") and walk.foot_model == "flat"
    single = walk.contact.sum(axis=1) == 1
    assert single.any() and walk.contact.all(axis=1).any() and walk.contact.any(axis=1).all()
    assert walk.q[-1, 0] > 0.3  # walked forward (0.3 m/s after the ramp)
    # the description the run records has its IMU on the base link (the estimator's requirement)
    desc = load_description(walk.description_xml)
    assert desc.imu.link == "base_link" and desc.foot_frames() == walk.feet


def test_soles_hold_position_and_orientation_in_stance(walk, model) -> None:
    data = model.createData()
    fids = [model.getFrameId(f) for f in walk.feet]
    R0: list[np.ndarray] = []
    for k in range(0, walk.q.shape[0], 7):
        pin.forwardKinematics(model, data, walk.q[k], walk.v[k], walk.a[k])
        for i, fid in enumerate(fids):
            X = pin.updateFramePlacement(model, data, fid)
            if k == 0:
                R0.append(X.rotation.copy())
                assert X.rotation[2, 2] > np.cos(2e-3)  # the standing posture's soles: flat within 2 mrad
            # the standing orientation throughout (a straight walk does not turn the feet), at the recorded position
            np.testing.assert_allclose(X.rotation, R0[i], atol=1e-9)
            np.testing.assert_allclose(X.translation, walk.foot_positions_world[k, i], atol=1e-9)
            if walk.contact[k, i]:
                twist = pin.getFrameVelocity(model, data, fid, LWA).vector
                acc = pin.getFrameClassicalAcceleration(model, data, fid, LWA).vector
                assert np.abs(twist).max() < 1e-9 and np.abs(acc).max() < 1e-7
                assert abs(X.translation[2]) < 1e-9  # on the ground


def test_configuration_follows_the_velocity(walk, model) -> None:
    t = (walk.stamps_ns - walk.stamps_ns[0]) * 1e-9
    for k in range(1, walk.q.shape[0], 11):
        h = t[k] - t[k - 1]
        dq = pin.difference(model, walk.q[k - 1], walk.q[k]) / h
        np.testing.assert_allclose(dq, 0.5 * (walk.v[k - 1] + walk.v[k]), atol=2e-3 * (1 + np.abs(walk.v[k]).max()))


def test_dynamics_balanced_by_the_sole_wrenches(walk, model) -> None:
    """``RNEA(q, v, a) - sum J_i^T w_i = [0 (base), tau]`` with the wrenches from the recorded foot-frame values."""
    data = model.createData()
    fids = [model.getFrameId(f) for f in walk.feet]
    assert walk.unbalanced_samples == 0
    for k in range(0, walk.q.shape[0], 13):
        q, v, a = walk.q[k], walk.v[k], walk.a[k]
        tau = pin.rnea(model, data, q, v, a).copy()
        pin.computeJointJacobians(model, data, q)
        pin.framesForwardKinematics(model, data, q)
        for i, fid in enumerate(fids):
            if not walk.contact[k, i]:
                assert not walk.contact_wrenches_in_foot[k, i].any()
                continue
            R = data.oMf[fid].rotation
            w_world = np.concatenate(
                [R @ walk.contact_wrenches_in_foot[k, i, :3], R @ walk.contact_wrenches_in_foot[k, i, 3:]]
            )
            tau -= pin.getFrameJacobian(model, data, fid, LWA).T @ w_world
        scale = 1.0 + np.abs(tau).max()
        assert np.abs(tau[:6]).max() < 1e-8 * scale
        np.testing.assert_allclose(tau[6:], walk.tau[k], atol=1e-8 * scale)
    fz = walk.contact_forces_world[..., 2][walk.contact]
    assert fz.min() > 0.0  # the ground pushes


def test_seeded_and_refusals() -> None:
    s = SimulationSettings(robot="talos", gait="walk", duration_s=0.3, settle_s=0.1, ramp_s=0.1, noise=True, seed=4)
    a, b = simulate(s), simulate(s)
    np.testing.assert_array_equal(a.imu_omega, b.imu_omega)
    np.testing.assert_array_equal(a.joint_position, b.joint_position)
    with pytest.raises(SimulationError, match="gaits"):
        simulate(SimulationSettings(robot="talos", gait="trot", duration_s=0.2))
    with pytest.raises(SimulationError, match="flat"):
        simulate(SimulationSettings(robot="go1", gait="trot", duration_s=0.2, foot_model="flat"))


def test_simulate_cli_and_replay_of_the_walk(tmp_path, capsys) -> None:
    """``simulate --robot talos`` writes a bag whose description replay reads: feet found as the soles (flat, so the
    6-D update runs), torque contacts, estimates for the whole run."""
    import argparse

    from robot_state_estimator.estimation import EstimatorSettings
    from robot_state_estimator.simulation.cli import add_arguments
    from robot_state_estimator.simulation.cli import run as cli_run
    from robot_state_estimator.tools.cli import main as cli_main
    from robot_state_estimator.tools.replay import replay

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = tmp_path / "walk"
    args = parser.parse_args(
        ["--robot", "talos", "--gait", "walk", "--duration", "1.4", "--noise", "--output", str(out)]
    )
    assert cli_run(args) == 0
    assert "flat feet" in capsys.readouterr().out
    xml = (out / "robot_description.urdf").read_text()
    assert load_description(xml).imu.link == "base_link"
    result = replay(out / "bag", description=xml, settings=EstimatorSettings())
    assert len(result.log.stamp_ns) > 1000 and result.log.feet == ("left_sole_link", "right_sole_link")
    assert not result.resets and "filter_diverged" not in result.events
    # the user's path: replay's command line with the ground truth of the bag
    assert cli_main(["replay", str(out / "bag"), "--json", str(tmp_path / "m.json"), "--no-progress"]) == 0
    metrics = json.loads((tmp_path / "m.json").read_text())["metrics"]
    assert metrics["ate_4dof"]["trans"]["rmse"] < 0.01 and metrics["contacts"]["all"]["recall"] > 0.99
