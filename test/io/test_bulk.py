"""io/bulk.py and the bulk path of ``io.bags.BagReader.stamp_ordered``: the messages built from bulk-decoded
arrays equal rosbags' (every field; float64 as bit patterns), on every message of a seeded simulated bag and on
hand-made ones; data the bulk decoder refuses is read by rosbags and the refusal named once per topic."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer

from robot_state_estimator.io import bags, bulk, cdr

TS = bags.default_typestore()
T = TS.types


def assert_same_message(got: Any, want: Any, where: str = "msg") -> None:
    """Field by field: same classes, ints and strings equal, floats and float64 arrays bit-equal."""
    assert type(got).__name__ == type(want).__name__, where
    if dataclasses.is_dataclass(want):
        for f in dataclasses.fields(want):
            assert_same_message(getattr(got, f.name), getattr(want, f.name), f"{where}.{f.name}")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape, where
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), where
    elif isinstance(want, float):
        assert isinstance(got, float) and np.float64(got).view(np.uint64) == np.float64(want).view(np.uint64), where
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same_message(g, w, f"{where}[{k}]")
    else:
        assert got == want, where


@pytest.fixture(scope="module")
def sim_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 0.6 s Go1 trot (seeded) with foot wrenches and a contact schedule."""
    from robot_state_estimator.simulation import SimulationSettings, simulate
    from robot_state_estimator.simulation.bag import write_run_bag

    run = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=0.6, settle_s=0.2, ramp_s=0.2, seed=11))
    return write_run_bag(run, tmp_path_factory.mktemp("bulk") / "run", foot_wrenches=True, contact_schedule=True)


def test_messages_built_from_bulk_arrays_equal_rosbags_on_a_simulated_bag(sim_bag: Path) -> None:
    groups: dict[tuple[str, str], list[bytes]] = {}
    with AnyReader([sim_bag], default_typestore=TS) as reader:
        for connection, _t, raw in reader.messages():
            groups.setdefault((connection.topic, connection.msgtype), []).append(bytes(raw))
    decoded_types = set()
    for (topic, msgtype), raws in groups.items():
        msgs, refused = bulk.decode_or_deserialize(TS, msgtype, raws)
        assert refused == "", topic
        for k, (got, raw) in enumerate(zip(msgs, raws, strict=True)):
            assert_same_message(got, TS.deserialize_cdr(raw, msgtype), f"{topic}[{k}]")
        if msgtype in cdr.BULK_TYPES:
            decoded_types.add(msgtype)
    assert decoded_types == {cdr.IMU, cdr.JOINT_STATE, cdr.ODOMETRY, cdr.WRENCH_STAMPED}


def test_clock_and_odd_joint_states_equal_rosbags() -> None:
    Time = T["builtin_interfaces/msg/Time"]
    clocks = [T[cdr.CLOCK](clock=Time(sec=s, nanosec=n)) for s, n in ((0, 0), (-1, 999_999_999), (2**31 - 1, 5))]
    header = T["std_msgs/msg/Header"]
    joints = [
        T[cdr.JOINT_STATE](
            header=header(stamp=Time(sec=k, nanosec=k), frame_id="b" * k),
            name=["n" * (k + j) for j in range(k % 3)],
            position=np.linspace(0, 1, k % 3),
            velocity=np.zeros(0),
            effort=np.full(k % 3, -0.0),
        )
        for k in range(6)
    ]
    for msgtype, msgs in ((cdr.CLOCK, clocks), (cdr.JOINT_STATE, joints)):
        raws = [bytes(TS.serialize_cdr(m, msgtype)) for m in msgs]
        for got, raw in zip(bulk.decode_messages(TS, msgtype, raws), raws, strict=True):
            assert_same_message(got, TS.deserialize_cdr(raw, msgtype))


def test_stamp_ordered_is_the_same_with_and_without_the_bulk_decoder(sim_bag: Path) -> None:
    topics = ["/imu/data", "/joint_states", "/ground_truth/odom", "/ground_truth/contacts"]
    with bags.BagReader(sim_bag) as bag:
        fast, slow = bag.stamp_ordered(topics), bag.stamp_ordered(topics, bulk=False)
    assert fast.bulk_refused == {} == slow.bulk_refused
    for name in ("topics", "msgtypes", "stamp_ns", "topic_index", "log_time_ns", "steps_back"):
        assert getattr(fast, name) == getattr(slow, name), name
    assert len(fast) == len(slow) > 0
    for k, (got, want) in enumerate(zip(fast.msgs, slow.msgs, strict=True)):
        assert_same_message(got, want, f"msgs[{k}]")


def test_a_topic_the_bulk_decoder_refuses_is_read_by_rosbags_and_named(tmp_path: Path) -> None:
    """One big-endian Imu message among little-endian ones: rosbags reads both byte orders, the bulk decoder
    refuses a mixed batch; the topic falls back as a whole, the other topic stays in bulk."""
    Time, Header, Vec = T["builtin_interfaces/msg/Time"], T["std_msgs/msg/Header"], T["geometry_msgs/msg/Vector3"]
    imus = [
        T[cdr.IMU](
            header=Header(stamp=Time(sec=1, nanosec=k), frame_id="imu"),
            orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            orientation_covariance=np.full(9, -1.0),
            angular_velocity=Vec(x=0.1 * k, y=0.0, z=0.0),
            angular_velocity_covariance=np.zeros(9),
            linear_acceleration=Vec(x=0.0, y=0.0, z=9.81),
            linear_acceleration_covariance=np.zeros(9),
        )
        for k in range(4)
    ]
    clock = T[cdr.CLOCK](clock=Time(sec=1, nanosec=2))
    path = tmp_path / "mixed"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        imu_conn = writer.add_connection("/imu/data", cdr.IMU, typestore=TS)
        clock_conn = writer.add_connection("/clock", cdr.CLOCK, typestore=TS)
        for k, msg in enumerate(imus):
            raw = TS.serialize_cdr(msg, cdr.IMU, little_endian=k != 2)
            writer.write(imu_conn, 1_000_000_000 + k, bytes(raw))
        writer.write(clock_conn, 1_000_000_009, bytes(TS.serialize_cdr(clock, cdr.CLOCK)))
    with bags.BagReader(path) as bag:
        ordered = bag.stamp_ordered(["/imu/data", "/clock"])
    assert ordered.bulk_refused == {
        "/imu/data": "sensor_msgs/msg/Imu message 2: mixed CDR_LE and CDR_BE messages in one batch"
    }
    assert [m.angular_velocity.x for m in ordered.msgs[:4]] == [0.1 * k for k in range(4)]
    assert ordered.msgs[4].clock.nanosec == 2
