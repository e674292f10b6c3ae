"""Bag round trip: write a short run and read it back with rosbags."""

from __future__ import annotations

import numpy as np
import yaml

from robot_state_estimator.common.time import stamp_to_ns
from robot_state_estimator.description import load_description
from robot_state_estimator.io.bags import read_messages
from robot_state_estimator.simulation import SimulationSettings, simulate
from robot_state_estimator.simulation.bag import write_run_bag
from robot_state_estimator.simulation.cli import add_arguments, settings_from_args
from robot_state_estimator.simulation.cli import run as cli_run


def test_round_trip(tmp_path):
    run = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=0.6, settle_s=0.2, ramp_s=0.2, noise=True))
    bag = write_run_bag(run, tmp_path / "out")
    assert (tmp_path / "out" / "robot_description.urdf").read_text() == run.description_xml
    info = yaml.safe_load((tmp_path / "out" / "run.yaml").read_text())
    assert SimulationSettings.from_dict(info["settings"]) == run.settings
    summary = info["summary"]
    assert summary["unilateral_samples"] == 0  # a trot never pulls (friction_violations: the cone)
    assert summary["unbalanced_samples"] == run.unbalanced_samples > 0  # its two-foot phases
    assert summary["min_normal_force_n"] == run.contact_forces_world[..., 2][run.contact].min() > 0
    norms = np.linalg.norm(run.base_residual_wrench[:, :3], axis=1)
    assert summary["max_base_residual_force_norm_n"] == norms.max() >= summary["max_base_residual_force_n"]
    # rolling feet: the stored description keeps the Go1's 0.02 m foot spheres, so replay rolls them too
    assert info["settings"]["foot_model"] == "sphere"
    assert info["feet"] == {"model": "sphere", "radii_m": [0.02] * 4}
    stored = load_description(str(tmp_path / "out" / "robot_description.urdf"))
    assert [stored.foot_radius(f) for f in run.feet] == [0.02] * 4
    msgs = {}
    for m in read_messages(bag):
        msgs.setdefault(m.topic, []).append(m)
    assert len(msgs["/imu/data"]) == run.imu_index.size
    assert len(msgs["/joint_states"]) == run.joint_index.size
    assert len(msgs["/ground_truth/odom"]) == run.stamps_ns.size
    imu = msgs["/imu/data"][5].msg
    assert imu.header.frame_id == run.imu.frame_id
    assert stamp_to_ns(imu.header.stamp) == run.imu_stamps_ns[5]
    np.testing.assert_allclose(
        [imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z], run.imu_f[5]
    )
    np.testing.assert_allclose(imu.angular_velocity_covariance.reshape(3, 3), np.diag(run.imu.gyro_stddev() ** 2))
    js = msgs["/joint_states"][7].msg
    assert list(js.name) == list(run.joint_names)
    np.testing.assert_allclose(js.effort, run.joint_effort[7])
    odom = msgs["/ground_truth/odom"][-1].msg
    assert odom.header.frame_id == "odom" and odom.child_frame_id == run.base_link
    assert odom.pose.pose.position.x == run.q[-1, 0]
    feet = {f: msgs[f"/ground_truth/contact_wrench/{f}"] for f in run.feet}
    w = feet[run.feet[0]][0].msg
    assert w.header.frame_id == run.feet[0] and w.wrench.force.z > 0
    contacts = msgs["/ground_truth/contacts"][-1].msg
    states = {s.name: s.message for s in contacts.status}
    k = run.joint_index[-1]
    assert states == {f: ("contact" if run.contact[k, i] else "no_contact") for i, f in enumerate(run.feet)}


def test_cli(tmp_path, capsys):
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        [
            "--robot",
            "go1",
            "--gait",
            "stand",
            "--duration",
            "0.1",
            "--output",
            str(tmp_path / "o"),
            "--slip",
            "FL_foot@0.05",
        ]
    )
    assert settings_from_args(args).slip.foot == "FL_foot"
    assert settings_from_args(args).foot_model is None  # from the description
    args = parser.parse_args(["--output", "o", "--foot-model", "point"])
    assert settings_from_args(args).foot_model == "point"
    args = parser.parse_args(["--gait", "stand", "--duration", "0.1", "--output", str(tmp_path / "o")])
    assert cli_run(args) == 0
    assert (tmp_path / "o" / "bag" / "metadata.yaml").exists()
    out = capsys.readouterr().out
    assert "unbalanced samples 0 of 101, friction cone violations 0" in out
    assert "real-robot errors" not in out
    assert cli_run(args) == 1  # exists, no --overwrite
    assert "exists" in capsys.readouterr().err
    args = parser.parse_args(["--gait", "stand", "--duration", "0.1", "--output", str(tmp_path / "r"), "--real-errors"])
    assert cli_run(args) == 0
    out = capsys.readouterr().out
    assert (
        "real-robot errors: encoder_resolution_rad 9.59e-05, stance_slip_m 0.002, imu_vibration_accel_m_s2 0.63, "
        "imu_vibration_gyro_rad_s 0.063, imu_accel_bias_walk 0.03, imu_gyro_turn_on_bias_rad_s 0.0175, "
        "jitter_s 0.0001" in out
    ), out
