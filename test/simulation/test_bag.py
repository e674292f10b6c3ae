"""Bag round trip: write a short run and read it back with rosbags."""

from __future__ import annotations

import dataclasses

import numpy as np
import yaml
from rosbags.rosbag2 import Reader

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
    assert cli_run(args) == 1  # exists, no --overwrite
    assert "exists" in capsys.readouterr().err


def _reference_bag(run, bag_dir, storage="mcap"):
    """The bag as the message builders and rosbags' serializer make it, one message after the other (the
    writer before its vectorised CDR): the reference the fast writer must reproduce byte for byte."""
    from robot_state_estimator.io import messages as m
    from robot_state_estimator.io.bags import BagWriter, default_types
    from robot_state_estimator.simulation.bag import (
        _foot_states,
        ground_truth_estimates,
        imu_samples,
        joint_samples,
    )

    types = default_types()
    cov = run.imu_covariances
    with BagWriter(bag_dir, storage=storage) as bag:
        gt, imu, joints = ground_truth_estimates(run), imu_samples(run), joint_samples(run)
        events = [(e.stamp_ns, 0, i) for i, e in enumerate(gt)]
        events += [(s.stamp_ns, 1, i) for i, s in enumerate(imu)]
        events += [(s.stamp_ns, 2, i) for i, s in enumerate(joints)]
        for stamp, kind, i in sorted(events):
            if kind == 0:
                bag.write(
                    "/ground_truth/odom",
                    m.odometry_msg(types, gt[i], odom_frame="odom", base_frame=run.base_link),
                    stamp,
                )
            elif kind == 1:
                msg = m.imu_msg(
                    types,
                    imu[i],
                    angular_velocity_covariance=cov["angular_velocity"],
                    linear_acceleration_covariance=cov["linear_acceleration"],
                    orientation_covariance=cov["orientation"],
                )
                bag.write("/imu/data", msg, stamp)
            else:
                bag.write("/joint_states", m.joint_state_msg(types, joints[i]), stamp)
                feet = _foot_states(run, int(run.joint_index[i]))
                for foot in feet:
                    bag.write("/ground_truth/contact_wrench/" + foot.name, m.foot_wrench_msg(types, stamp, foot), stamp)
                bag.write("/ground_truth/contacts", m.contact_states_msg(types, stamp, feet), stamp)


def test_bag_equals_the_message_by_message_reference(tmp_path):
    """The vectorised writer changes nothing: the same files, byte for byte (IMU at 400 Hz with jitter and
    joints at 1 kHz interleave; noise makes every value differ)."""
    run = simulate(
        SimulationSettings(
            robot="go1",
            gait="trot",
            duration_s=0.7,
            settle_s=0.2,
            ramp_s=0.2,
            noise=True,
            imu_rate_hz=400.0,
            jitter_s=2e-4,
        )
    )
    bag = write_run_bag(run, tmp_path / "fast")
    reference = tmp_path / "reference" / "bag"  # the same folder name: the mcap file is named after it
    _reference_bag(run, reference)
    files = sorted(p.name for p in bag.iterdir())
    assert files == sorted(p.name for p in reference.iterdir()) == ["bag.mcap", "metadata.yaml"]
    for name in files:
        assert (bag / name).read_bytes() == (reference / name).read_bytes(), name
    # an IMU that reports no orientation on some samples (another message layout), and sqlite3 storage
    quat = run.imu_quat_xyzw.copy()
    quat[::3] = np.nan
    run = dataclasses.replace(run, imu_quat_xyzw=quat)
    bag = write_run_bag(run, tmp_path / "fast2", storage="sqlite3")
    reference = tmp_path / "reference2" / "bag"
    _reference_bag(run, reference, storage="sqlite3")
    raw = []
    for path in (bag, reference):
        with Reader(path) as reader:
            raw.append([(c.topic, c.msgtype, t, bytes(data)) for c, t, data in reader.messages()])
    assert len(raw[0]) == len(raw[1]) > 0 and raw[0] == raw[1]
