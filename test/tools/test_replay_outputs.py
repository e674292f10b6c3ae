"""Replay's output bag (messages refilled in place, the chosen topic groups, zstd chunks) and its estimate log."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from robot_state_estimator.common.samples import Estimate, FootState
from robot_state_estimator.io import bags
from robot_state_estimator.io import messages as M
from robot_state_estimator.tools import replay

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


def _estimate(rng: np.random.Generator, stamp_ns: int, feet: tuple[str, ...], lazy: bool) -> Estimate:
    """A random estimate, made as the core makes them (``from_output_vector``) or with the constructor."""
    q = rng.normal(size=4)
    vector = np.concatenate([rng.normal(size=3), q / np.linalg.norm(q), rng.normal(size=6 + 72 + 6)])
    states = tuple(
        FootState(
            name,
            bool(rng.integers(0, 2)),
            rng.normal(size=3) * 100.0,
            rng.normal(size=6) * 50.0,
            bool(rng.integers(0, 2)),
            float(rng.random()),
        )
        for name in feet
    )
    if lazy:
        return Estimate.from_output_vector(stamp_ns, vector, states)
    return Estimate(
        stamp_ns,
        vector[0:3],
        vector[3:7],
        vector[7:10],
        vector[10:13],
        vector[13:49].reshape(6, 6),
        vector[49:85].reshape(6, 6),
        vector[85:88],
        vector[88:91],
        states,
    )


def _sequence(seed: int) -> list[tuple[Estimate, bool, bool]]:
    """Estimates as the stream hands them out: IMU-only (odometry) and joint ones (contacts), the feet changing
    once (two feet, then four), estimates made both ways, some with nothing published."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(40):
        stamp = 5_000_000_000 + k * 1_000_000 + int(rng.integers(0, 999_999))
        feet = FEET[:2] if k < 15 else FEET
        out.append((_estimate(rng, stamp, (), lazy=k % 2 == 0), True, False))
        out.append((_estimate(rng, stamp, feet, lazy=k % 3 != 0), k % 7 == 0, k % 5 != 4))
    return out


def _expected(seq, groups, *, odom_frame="odom", base="trunk", tf_child="base_tf"):
    """``(topic, log time, CDR bytes)`` the node's builders (``io.messages``) give for the sequence."""
    T = bags.default_types()
    writer = bags.BagWriter.__new__(bags.BagWriter)  # only its serializer: no bag on disk
    writer._typestore, writer._serializers = bags.default_typestore(), {}
    out = []
    for e, odometry, contacts in seq:
        msgs = []
        if odometry:
            if "odometry" in groups:
                msgs.append(("odometry", M.odometry_msg(T, e, odom_frame=odom_frame, base_frame=base)))
            if "tf" in groups:
                tf = M.odom_transform_msg(T, e, odom_frame=odom_frame, base_frame=tf_child)
                msgs.append(("/tf", M.tf_message(T, [tf])))
        if contacts and e.feet:
            if "wrenches" in groups:
                msgs += [(f"contact_wrench/{f.name}", M.foot_wrench_msg(T, e.stamp_ns, f)) for f in e.feet]
            if "contacts" in groups:
                msgs.append(("contact_states", M.contact_states_msg(T, e.stamp_ns, e.feet)))
        out += [(topic, e.stamp_ns, writer._serialize(m, m.__msgtype__)) for topic, m in msgs]
    return out


def _read_raw(path: Path) -> list[tuple[str, int, bytes]]:
    from rosbags.highlevel import AnyReader

    with AnyReader([path], default_typestore=bags.default_typestore()) as reader:
        return [(c.topic, int(t), bytes(raw)) for c, t, raw in reader.messages()]


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_refilled_messages_equal_the_builders_messages(tmp_path: Path, compression: str) -> None:
    seq = _sequence(seed=11)
    out = replay.OutputBag(
        tmp_path / "out", odom_frame="odom", base_frame="trunk", tf_child_frame="base_tf", compression=compression
    )
    for e, odometry, contacts in seq:
        out.write(e, odometry, contacts)
    out.close()
    expected = _expected(seq, replay.OUTPUT_GROUPS)
    assert _read_raw(tmp_path / "out") == expected  # same messages, same bytes, same order
    # and the values are the estimates' own (worked out without the builders)
    odom = [M.odometry_arrays_from_msg(m.msg) for m in bags.read_messages(tmp_path / "out", ["odometry"])]
    published = [e for e, odometry, _ in seq if odometry]
    assert [o["stamp_ns"] for o in odom] == [e.stamp_ns for e in published]
    for o, e in zip(odom, published):
        np.testing.assert_array_equal(o["p_world_base"], e.p_world_base)
        np.testing.assert_array_equal(o["quat_world_base_xyzw"], e.quat_world_base_xyzw)
        np.testing.assert_array_equal(o["omega_base_in_base"], e.omega_base_in_base)
        np.testing.assert_array_equal(o["twist_covariance"], e.twist_covariance)
    states = [M.contact_states_from_msg(m.msg) for m in bags.read_messages(tmp_path / "out", ["contact_states"])]
    with_feet = [e for e, _, contacts in seq if contacts and e.feet]
    assert states == [(e.stamp_ns, {f.name: f.in_contact for f in e.feet}) for e in with_feet]
    wrench = [m.msg.wrench for m in bags.read_messages(tmp_path / "out", ["contact_wrench/RR_foot"])]
    rr = [next(f for f in e.feet if f.name == "RR_foot") for e in with_feet if len(e.feet) == 4]
    assert [(w.force.z, w.torque.x) for w in wrench] == [(f.wrench_in_foot[2], f.wrench_in_foot[3]) for f in rr]


def test_only_the_chosen_output_topics_are_written(tmp_path: Path) -> None:
    seq = _sequence(seed=12)
    out = replay.OutputBag(
        tmp_path / "out", odom_frame="odom", base_frame="trunk", tf_child_frame="base_tf", groups=("wrenches", "tf")
    )
    for e, odometry, contacts in seq:
        out.write(e, odometry, contacts)
    out.close()
    assert _read_raw(tmp_path / "out") == _expected(seq, ("tf", "wrenches"))
    assert set(bags.bag_topics(tmp_path / "out")) == {"/tf", *(f"contact_wrench/{f}" for f in FEET)}
    with pytest.raises(replay.ReplayError, match=r"unknown output topics \['wrench'\]"):
        replay.OutputBag(tmp_path / "x", odom_frame="o", base_frame="b", tf_child_frame="", groups=("wrench",))


def test_the_log_keeps_every_published_estimate() -> None:
    seq = _sequence(seed=13)
    log = replay.EstimateLog()
    for e, odometry, contacts in seq:
        log.append(e, odometry, contacts)
    published = [e for e, odometry, _ in seq if odometry]
    assert log.stamp_ns == [e.stamp_ns for e in published]
    np.testing.assert_array_equal(log.p, [e.p_world_base for e in published])
    np.testing.assert_array_equal(log.quat_xyzw, [e.quat_world_base_xyzw for e in published])
    np.testing.assert_array_equal(log.v, [e.v_base_in_base for e in published])
    np.testing.assert_array_equal(log.omega, [e.omega_base_in_base for e in published])
    np.testing.assert_array_equal(log.pose_cov, [e.pose_covariance for e in published])
    np.testing.assert_array_equal(log.twist_cov, [e.twist_covariance for e in published])
    np.testing.assert_array_equal(log.accel_bias, [e.accel_bias for e in published])
    np.testing.assert_array_equal(log.gyro_bias, [e.gyro_bias for e in published])
    # contacts: only the estimates with the first feet seen (two feet) are kept in the columns
    two = [e for e, _, contacts in seq if contacts and len(e.feet) == 2]
    assert log.feet == FEET[:2] and log.contact_stamp_ns == [e.stamp_ns for e in two]
    assert log.contact == [[f.in_contact for f in e.feet] for e in two]
    # the trajectory keeps the last estimate of each stamp (here: the joint one where both were published)
    last = {e.stamp_ns: e for e in published}
    traj = log.trajectory()
    np.testing.assert_array_equal(traj.t_s, [s / 1e9 for s in sorted(last)])
    np.testing.assert_array_equal(traj.p_world_base, [last[s].p_world_base for s in sorted(last)])
    np.testing.assert_array_equal(traj.pose_covariance, [last[s].pose_covariance for s in sorted(last)])
    np.testing.assert_array_equal(traj.extras["gyro_bias"], [last[s].gyro_bias for s in sorted(last)])
    assert len(last) < len(published) and traj.p_world_base.flags.c_contiguous


def test_output_topics_option_of_the_command_line(sim_run, tmp_path: Path, capsys) -> None:
    run_dir, _ = sim_run
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    output = ["--output", str(tmp_path / "out"), "--output-topics", "odometry", "contacts"]
    args = parser.parse_args(
        [str(run_dir / "bag"), "--robot", "go1", "--no-ground-truth", *output, "--output-compression", "none"]
    )
    result, _ = replay.run_cli(args)
    assert bags.bag_topics(tmp_path / "out") == {
        "odometry": "nav_msgs/msg/Odometry",
        "contact_states": "diagnostic_msgs/msg/DiagnosticArray",
    }
    assert 0 < result.write_s < result.total_s and result.read_s > 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("description ") and "settings " in lines[0]  # what replay uses, first
    line = next(x for x in lines if x.startswith("replayed "))
    assert "of which writing the output bag" in line and "reading the input" in line
    s = result.summary()
    assert s["write_wall_s"] == result.write_s and s["realtime_factor_total"] == pytest.approx(
        s["input_duration_s"] / result.total_s
    )
