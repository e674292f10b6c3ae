"""Faults of issue 19 through replay (the node's rules, ``io/stream.py``): a recording with one joint state stamped
100 s ahead, one whose joint states lose their efforts half-way, and an output bag whose ``base_frame`` the
description lacks. The reference is the replay of the unmodified simulated trot."""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from robot_state_estimator.io import bags
from robot_state_estimator.tools import replay

S = 1_000_000_000


def _run(argv: list[str]):
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    return replay.run_cli(parser.parse_args(argv))


def _rewrite(run_dir, out_dir, change) -> None:
    """Copy the simulated bag's inputs into ``out_dir``, each joint-state message through ``change(i, msg)``."""
    msgs = bags.read_messages_in_stamp_order(run_dir / "bag", ["/imu/data", "/joint_states"])
    i = 0
    with bags.BagWriter(out_dir) as out:
        for m in msgs:
            msg = m.msg
            if m.topic == "/joint_states":
                msg = change(i, msg)
                i += 1
            out.write(m.topic, msg, m.log_time_ns)


def _args(run_dir, bag) -> list[str]:
    return [str(bag), "--description", str(run_dir / "robot_description.urdf"), "--no-ground-truth"]


def test_a_joint_state_stamped_100_s_ahead_is_skipped_and_resets_nothing(sim_run, tmp_path, capsys) -> None:
    run_dir, _ = sim_run
    clean, _ = _run(_args(run_dir, run_dir / "bag"))

    def ahead(i, msg):
        if i != 1000:
            return msg
        stamp = msg.header.stamp
        header = dataclasses.replace(msg.header, stamp=dataclasses.replace(stamp, sec=stamp.sec + 100))
        return dataclasses.replace(msg, header=header)

    _rewrite(run_dir, tmp_path / "bag", ahead)
    result, _ = _run(_args(run_dir, tmp_path / "bag"))
    # replay runs in stamp order: the sample comes last, and its place in the joint stream is a one-sample hole
    assert result.skipped == {"stamp_future": 1} and result.resets == 0 and result.lost == {"joint_states_lost": 1}
    assert "stamp_backwards" not in result.events and "reset" not in result.events
    out = capsys.readouterr().out
    assert "skipped stamp_future: 1, first: joint sample skipped: stamped 1700000101.000000000 s, 97.000 s after" in out
    # one joint sample fewer than the clean run, the rest the same: the estimate ends where the clean one does
    end_clean, end = np.array(clean.log.p)[-1], np.array(result.log.p)[-1]
    assert result.log.stamp_ns[-1] == clean.log.stamp_ns[-1]
    assert np.linalg.norm(end - end_clean) < 1e-3


def test_efforts_that_disappear_are_named_and_no_zero_wrench_is_written(sim_run, tmp_path, capsys) -> None:
    run_dir, _ = sim_run
    n_joints = [0]

    def no_effort_after_half(i, msg):
        n_joints[0] += 1
        return dataclasses.replace(msg, effort=np.zeros(0)) if i >= 1000 else msg

    _rewrite(run_dir, tmp_path / "bag", no_effort_after_half)
    result, _ = _run([*_args(run_dir, tmp_path / "bag"), "--output", str(tmp_path / "out")])
    assert result.skipped == {} and result.events["contact_source"] == 1
    out = capsys.readouterr().out
    assert "event contact_source (warn): 1, first: the joint states carry no efforts any more" in out, out
    stamps = [m.log_time_ns for m in bags.read_messages(tmp_path / "out", ["contact_wrench/FL_foot"])]
    joint_stamps = sorted(m.log_time_ns for m in bags.read_messages_in_stamp_order(tmp_path / "bag", ["/joint_states"]))
    half = joint_stamps[1000]
    assert stamps and max(stamps) < half  # wrenches only while the forces were estimated
    n_contacts = sum(1 for m in bags.read_messages(tmp_path / "out", ["contact_states"]) if m.log_time_ns >= half)
    assert n_contacts > 0.9 * (n_joints[0] - 1000)  # the contact states go on


def test_an_output_base_frame_the_description_lacks_is_warned_about(sim_run, tmp_path, capsys) -> None:
    run_dir, run = sim_run
    assert run.base_link == "base"
    _run([*_args(run_dir, run_dir / "bag"), "--output", str(tmp_path / "out"), "--set", "base_frame=base_link"])
    out = capsys.readouterr().out
    assert "WARNING: base_frame 'base_link' is not a frame of the robot description (its base link is 'base')" in out


def test_a_hole_in_the_recording_counts_losses_not_rejections(sim_run, tmp_path) -> None:
    """100 ms of both inputs missing (what a best-effort queue overflowing under load leaves in a recording): longer
    than ``ekf.max_dt_s`` (the core re-anchors, event ``imu_gap``), shorter than ``max_time_gap_s`` (no reset). The
    missing samples are losses counted from the stamps, nothing is skipped."""
    run_dir, _ = sim_run
    msgs = bags.read_messages_in_stamp_order(run_dir / "bag", ["/imu/data", "/joint_states"])
    t0 = msgs[0].log_time_ns
    hole = (t0 + 2 * S, t0 + 2 * S + S // 10)
    dropped = {"/imu/data": 0, "/joint_states": 0}
    with bags.BagWriter(tmp_path / "bag") as out:
        for m in msgs:
            if hole[0] <= m.log_time_ns < hole[1]:
                dropped[m.topic] += 1
                continue
            out.write(m.topic, m.msg, m.log_time_ns)
    assert dropped["/imu/data"] >= 50  # more than ekf.max_dt_s of IMU samples
    result, _ = _run(_args(run_dir, tmp_path / "bag"))
    assert result.skipped == {} and result.resets == 0
    assert result.lost == {"imu_lost": dropped["/imu/data"], "joint_states_lost": dropped["/joint_states"]}
    assert result.events.get("imu_gap") == 1
