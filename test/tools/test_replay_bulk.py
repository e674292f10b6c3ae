"""Replay reads its inputs through the bulk CDR decoder (``ReplayOptions.bulk_decode``, the default) and outputs
exactly what it outputs with rosbags' deserializer for every message: the same log (bit-equal), counts and output
bag (byte-equal messages)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader

from robot_state_estimator.io import bags, cdr
from robot_state_estimator.simulation import SimulationSettings, simulate
from robot_state_estimator.simulation.bag import write_run_bag
from robot_state_estimator.tools import bench_decode, replay


def _raw_messages(bag: Path) -> dict[str, list[tuple[int, bytes]]]:
    out: dict[str, list[tuple[int, bytes]]] = {}
    with AnyReader([bag], default_typestore=bags.default_typestore()) as reader:
        for connection, t, raw in reader.messages():
            out.setdefault(connection.topic, []).append((int(t), bytes(raw)))
    return out


def test_replay_outputs_the_same_with_and_without_the_bulk_decoder(tmp_path: Path) -> None:
    run = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=1.0, settle_s=0.3, ramp_s=0.2, seed=4))
    run_dir = tmp_path / "run"
    write_run_bag(run, run_dir, foot_wrenches=True, foot_wrench_noise_n=0.5)
    results = {}
    for bulk in (True, False):
        results[bulk] = replay.replay(
            run_dir / "bag",
            description=str(run_dir / "robot_description.urdf"),
            settings=replay.split_config(None)[0],
            options=replay.ReplayOptions(bulk_decode=bulk, use_foot_wrenches="yes"),
            output_bag=tmp_path / f"out_{bulk}",
        )
    fast, slow = results[True], results[False]
    assert fast.bulk_refused == {} == slow.bulk_refused
    assert fast.stream_counts["foot_wrenches"][0] > 0  # the WrenchStamped inputs went through the bulk path
    assert len(fast.log) == len(slow.log) > 0
    assert fast.log.stamp_ns == slow.log.stamp_ns
    assert np.array_equal(np.asarray(fast.log.outputs).view(np.uint64), np.asarray(slow.log.outputs).view(np.uint64))
    assert fast.log.contact == slow.log.contact
    (t_fast, z_fast), (t_slow, z_slow) = fast.gyro_yaw_rate, slow.gyro_yaw_rate  # type: ignore[misc]
    assert np.array_equal(t_fast, t_slow) and np.array_equal(z_fast.view(np.uint64), z_slow.view(np.uint64))
    for name in ("n_inputs", "skipped", "events", "resets", "lost", "stream_counts", "first_notes", "steps_back"):
        assert getattr(fast, name) == getattr(slow, name), name
    assert _raw_messages(tmp_path / "out_True") == _raw_messages(tmp_path / "out_False")
    # the bench's decode section on the same bag: one entry per bulk-type topic, counts as in the bag
    section = bench_decode.bench_decode(run_dir / "bag", repeats=1)
    inputs = _raw_messages(run_dir / "bag")
    assert section["/imu/data"]["n"] == len(inputs["/imu/data"]) and section["/imu/data"]["msgtype"] == cdr.IMU
    assert {d["msgtype"] for d in section.values()} == {cdr.IMU, cdr.JOINT_STATE, cdr.ODOMETRY, cdr.WRENCH_STAMPED}
    assert all(d["rosbags_us"] > 0 and d["bulk_messages_us"] > 0 for d in section.values())
    assert len(bench_decode.summary_lines(section)) == len(section)
