"""io/cdr.py: the bulk CDR decoder is bit-equal to rosbags' deserializer (``Typestore.deserialize_cdr``).

On every message of the bulk types in the bags the simulator writes (seeded runs: a Go1 trot with foot wrenches
and a contact schedule, in mcap and sqlite3), and on hypothesis-generated messages serialized by rosbags
(``serialize_cdr``, little and big endian) with strings of length 0..9 and empty sequences, which move every
field after them through all alignments. Bit-equal: float64 compared as their uint64 bit patterns, stamps and
strings exactly. Data that does not decode raises ``CdrError`` naming the message and the cause.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rosbags.highlevel import AnyReader

from robot_state_estimator.common.time import stamp_to_ns
from robot_state_estimator.io import cdr
from robot_state_estimator.io.bags import default_typestore

TS = default_typestore()
T = TS.types


def _bits(values: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64)).view(np.uint64)


def _assert_bits(got: np.ndarray, expected: list[Any], what: str) -> None:
    want = np.array([_bits(e) for e in expected], dtype=np.uint64).reshape(got.shape)
    assert np.array_equal(got.view(np.uint64), want), what


def _assert_headers(h: cdr.Headers, msgs: list[Any]) -> None:
    assert h.sec.tolist() == [m.header.stamp.sec for m in msgs]
    assert h.nanosec.tolist() == [m.header.stamp.nanosec for m in msgs]
    assert h.stamp_ns.tolist() == [stamp_to_ns(m.header.stamp) for m in msgs]
    assert h.frame_id == [m.header.frame_id for m in msgs]


def _v3(v: Any) -> list[float]:
    return [v.x, v.y, v.z]


def _q(q: Any) -> list[float]:
    return [q.x, q.y, q.z, q.w]


def assert_decoded_equal(msgtype: str, raws: list[bytes], msgs: list[Any]) -> None:
    """``cdr.decode(msgtype, raws)`` holds exactly what rosbags deserialized into ``msgs``."""
    got = cdr.decode(msgtype, raws)
    assert len(got) == len(msgs)
    if isinstance(got, cdr.ImuArrays):
        _assert_headers(got.header, msgs)
        _assert_bits(got.orientation_xyzw, [_q(m.orientation) for m in msgs], "orientation")
        _assert_bits(got.orientation_covariance, [m.orientation_covariance for m in msgs], "orientation cov")
        _assert_bits(got.angular_velocity, [_v3(m.angular_velocity) for m in msgs], "angular velocity")
        _assert_bits(got.angular_velocity_covariance, [m.angular_velocity_covariance for m in msgs], "gyro cov")
        _assert_bits(got.linear_acceleration, [_v3(m.linear_acceleration) for m in msgs], "acceleration")
        _assert_bits(got.linear_acceleration_covariance, [m.linear_acceleration_covariance for m in msgs], "acc cov")
    elif isinstance(got, cdr.JointStateArrays):
        _assert_headers(got.header, msgs)
        assert got.name == [tuple(m.name) for m in msgs]
        for field in ("position", "velocity", "effort"):
            ragged = getattr(got, field)
            for i, m in enumerate(msgs):
                assert np.array_equal(ragged.row(i).view(np.uint64), _bits(getattr(m, field))), (field, i)
    elif isinstance(got, cdr.WrenchArrays):
        _assert_headers(got.header, msgs)
        _assert_bits(got.force, [_v3(m.wrench.force) for m in msgs], "force")
        _assert_bits(got.torque, [_v3(m.wrench.torque) for m in msgs], "torque")
    elif isinstance(got, cdr.OdometryArrays):
        _assert_headers(got.header, msgs)
        assert got.child_frame_id == [m.child_frame_id for m in msgs]
        _assert_bits(got.position, [_v3(m.pose.pose.position) for m in msgs], "position")
        _assert_bits(got.orientation_xyzw, [_q(m.pose.pose.orientation) for m in msgs], "orientation")
        _assert_bits(got.pose_covariance, [m.pose.covariance for m in msgs], "pose covariance")
        _assert_bits(got.linear, [_v3(m.twist.twist.linear) for m in msgs], "linear")
        _assert_bits(got.angular, [_v3(m.twist.twist.angular) for m in msgs], "angular")
        _assert_bits(got.twist_covariance, [m.twist.covariance for m in msgs], "twist covariance")
    else:
        assert isinstance(got, cdr.ClockArrays)
        assert got.sec.tolist() == [m.clock.sec for m in msgs]
        assert got.nanosec.tolist() == [m.clock.nanosec for m in msgs]
        assert got.stamp_ns.tolist() == [stamp_to_ns(m.clock) for m in msgs]


# ------------------------------------------------------------------------------------ the suite's bags


@pytest.fixture(scope="module")
def simulated_bags(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The simulator's bags (seeded): a Go1 trot with foot wrenches and a contact schedule (mcap), and a noisy
    one in sqlite3; each holds Imu, JointState, Odometry and WrenchStamped topics."""
    from robot_state_estimator.simulation import SimulationSettings, simulate
    from robot_state_estimator.simulation.bag import write_run_bag

    out = tmp_path_factory.mktemp("cdr")
    run = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=0.6, settle_s=0.2, ramp_s=0.2, seed=3))
    noisy = simulate(
        SimulationSettings(robot="go1", gait="trot", duration_s=0.4, settle_s=0.2, ramp_s=0.1, seed=5, noise=True)
    )
    return [
        write_run_bag(run, out / "wrenches", foot_wrenches=True, contact_schedule=True, foot_wrench_noise_n=0.5),
        write_run_bag(noisy, out / "sqlite", storage="sqlite3"),
    ]


def _raw_by_topic(bag: Path) -> dict[tuple[str, str], list[bytes]]:
    raws: dict[tuple[str, str], list[bytes]] = defaultdict(list)
    with AnyReader([bag], default_typestore=TS) as reader:
        for connection, _t, raw in reader.messages():
            raws[(connection.topic, connection.msgtype)].append(bytes(raw))
    return raws


def test_every_message_of_the_simulated_bags_decodes_bit_equal_to_rosbags(simulated_bags: list[Path]) -> None:
    seen: set[str] = set()
    for bag in simulated_bags:
        for (_topic, msgtype), raws in _raw_by_topic(bag).items():
            if msgtype not in cdr.BULK_TYPES:
                with pytest.raises(cdr.CdrError, match="not decoded in bulk"):
                    cdr.decode(msgtype, raws)
                continue
            seen.add(msgtype)
            assert_decoded_equal(msgtype, raws, [TS.deserialize_cdr(r, msgtype) for r in raws])
    assert seen >= {cdr.IMU, cdr.JOINT_STATE, cdr.ODOMETRY, cdr.WRENCH_STAMPED}


# ------------------------------------------------------------------------ generated messages (hypothesis)

_names = st.text(alphabet="abcxyz_/é0", min_size=0, max_size=9)
_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
_stamps = st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1))


def _header(stamp: tuple[int, int], frame_id: str) -> Any:
    return T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp[0], nanosec=stamp[1]), frame_id=frame_id
    )


def _vec(v: list[float]) -> Any:
    return T["geometry_msgs/msg/Vector3"](x=v[0], y=v[1], z=v[2])


@st.composite
def imu_msgs(draw: st.DrawFn) -> Any:
    f = draw(st.lists(_floats, min_size=37, max_size=37))
    return T[cdr.IMU](
        header=_header(draw(_stamps), draw(_names)),
        orientation=T["geometry_msgs/msg/Quaternion"](x=f[0], y=f[1], z=f[2], w=f[3]),
        orientation_covariance=np.array(f[4:13]),
        angular_velocity=_vec(f[13:16]),
        angular_velocity_covariance=np.array(f[16:25]),
        linear_acceleration=_vec(f[25:28]),
        linear_acceleration_covariance=np.array(f[28:37]),
    )


@st.composite
def joint_state_msgs(draw: st.DrawFn) -> Any:
    names = draw(st.lists(_names, min_size=0, max_size=5))
    n = len(names)

    def values(optional: bool) -> np.ndarray:
        size = draw(st.sampled_from([0, n] if optional else [n, 0, n + 1]))
        return np.array(draw(st.lists(_floats, min_size=size, max_size=size)), dtype=np.float64)

    return T[cdr.JOINT_STATE](
        header=_header(draw(_stamps), draw(_names)),
        name=names,
        position=values(False),
        velocity=values(True),
        effort=values(True),
    )


@st.composite
def wrench_msgs(draw: st.DrawFn) -> Any:
    f = draw(st.lists(_floats, min_size=6, max_size=6))
    wrench = T["geometry_msgs/msg/Wrench"](force=_vec(f[:3]), torque=_vec(f[3:]))
    return T[cdr.WRENCH_STAMPED](header=_header(draw(_stamps), draw(_names)), wrench=wrench)


@st.composite
def odometry_msgs(draw: st.DrawFn) -> Any:
    f = draw(st.lists(_floats, min_size=85, max_size=85))
    pose = T["geometry_msgs/msg/Pose"](
        position=T["geometry_msgs/msg/Point"](x=f[0], y=f[1], z=f[2]),
        orientation=T["geometry_msgs/msg/Quaternion"](x=f[3], y=f[4], z=f[5], w=f[6]),
    )
    twist = T["geometry_msgs/msg/Twist"](linear=_vec(f[43:46]), angular=_vec(f[46:49]))
    return T[cdr.ODOMETRY](
        header=_header(draw(_stamps), draw(_names)),
        child_frame_id=draw(_names),
        pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=np.array(f[7:43])),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=np.array(f[49:85])),
    )


@st.composite
def clock_msgs(draw: st.DrawFn) -> Any:
    sec, nanosec = draw(_stamps)
    return T[cdr.CLOCK](clock=T["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec))


STRATEGIES = {
    cdr.IMU: imu_msgs(),
    cdr.JOINT_STATE: joint_state_msgs(),
    cdr.WRENCH_STAMPED: wrench_msgs(),
    cdr.ODOMETRY: odometry_msgs(),
    cdr.CLOCK: clock_msgs(),
}


@pytest.mark.parametrize("msgtype", sorted(STRATEGIES))
@pytest.mark.parametrize("little_endian", [True, False], ids=["le", "be"])
def test_generated_messages_decode_bit_equal_to_rosbags(msgtype: str, little_endian: bool) -> None:
    @settings(max_examples=40, deadline=None)
    @given(st.lists(STRATEGIES[msgtype], min_size=0, max_size=6))
    def check(msgs: list[Any]) -> None:
        raws = [bytes(TS.serialize_cdr(m, msgtype, little_endian=little_endian)) for m in msgs]
        assert_decoded_equal(msgtype, raws, [TS.deserialize_cdr(r, msgtype) for r in raws])

    check()


def test_joint_states_with_varied_names_and_empty_arrays() -> None:
    """Names of lengths 0..9 (every alignment of what follows), then empty velocity and effort, mixed in one
    batch with full messages: each message's sequences in its own row."""
    msgs = []
    for k in range(10):
        names = ["j" * k, "x" * (9 - k), ""][: 1 + k % 3]
        n = len(names)
        empty = np.zeros(0)
        msgs.append(
            T[cdr.JOINT_STATE](
                header=_header((k, 7 * k), "f" * k),
                name=names,
                position=np.arange(n, dtype=float) + k,
                velocity=empty if k % 2 else -np.arange(n, dtype=float),
                effort=empty if k % 4 == 1 else np.full(n, 0.5 * k),
            )
        )
    raws = [bytes(TS.serialize_cdr(m, cdr.JOINT_STATE, little_endian=True)) for m in msgs]
    assert_decoded_equal(cdr.JOINT_STATE, raws, msgs)
    got = cdr.decode(cdr.JOINT_STATE, raws)
    assert isinstance(got, cdr.JointStateArrays)
    assert got.velocity.row(1).size == 0 and got.velocity.matrix() is None
    same = [raws[0]] * 3
    decoded = cdr.decode(cdr.JOINT_STATE, same)
    assert isinstance(decoded, cdr.JointStateArrays)
    assert decoded.position.matrix() is not None and decoded.position.matrix().shape == (3, 1)  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------- refused data


def _imu_raw(frame_id: str = "imu_link") -> bytes:
    msg = T[cdr.IMU](
        header=_header((1, 2), frame_id),
        orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=np.zeros(9),
        angular_velocity=_vec([0.1, 0.2, 0.3]),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=_vec([0.0, 0.0, 9.81]),
        linear_acceleration_covariance=np.zeros(9),
    )
    return bytes(TS.serialize_cdr(msg, cdr.IMU, little_endian=True))


def test_padding_up_to_three_bytes_is_accepted_as_by_rosbags() -> None:
    raw = _imu_raw() + b"\x00\x00\x00"
    TS.deserialize_cdr(raw, cdr.IMU)
    assert len(cdr.decode(cdr.IMU, [raw])) == 1


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"\x01\x01\x00\x00" + _imu_raw()[4:], "encapsulation header 01 01"),
        (b"\x00", "shorter than the encapsulation header"),
        (_imu_raw()[:-8], "Imu body .* runs past the end"),
        (_imu_raw() + b"\x00" * 4, "4 trailing bytes"),
        (_imu_raw()[:12] + b"\xff\xff\x00\x00" + _imu_raw()[16:], "string length 65535"),
        (_imu_raw("ab").replace(b"ab\x00", b"abc"), "lacks its NUL terminator"),
        (_imu_raw("ab").replace(b"ab\x00", b"\xff\xfe\x00"), "is not UTF-8"),
    ],
    ids=["header", "short", "truncated", "trailing", "string_length", "no_nul", "utf8"],
)
def test_data_that_does_not_decode_is_refused_by_name(raw: bytes, match: str) -> None:
    with pytest.raises(cdr.CdrError, match=match) as info:
        cdr.decode(cdr.IMU, [_imu_raw(), raw])
    assert "sensor_msgs/msg/Imu message 1" in str(info.value)


def test_mixed_byte_orders_and_other_types_are_refused() -> None:
    be = bytes(TS.serialize_cdr(TS.deserialize_cdr(_imu_raw(), cdr.IMU), cdr.IMU, little_endian=False))
    with pytest.raises(cdr.CdrError, match="mixed CDR_LE and CDR_BE"):
        cdr.decode(cdr.IMU, [_imu_raw(), be])
    with pytest.raises(cdr.CdrError, match="tf2_msgs/msg/TFMessage is not decoded in bulk"):
        cdr.decode("tf2_msgs/msg/TFMessage", [])
    assert len(cdr.decode(cdr.IMU, [])) == 0


def test_joint_states_of_one_length_but_another_layout_are_parsed_each() -> None:
    """Same length, header and names, one value moved from velocity to effort: not message 0's layout."""
    one, two = np.array([0.25]), np.array([1.5, -2.5])
    msgs = [
        T[cdr.JOINT_STATE](header=_header((1, 2), "b"), name=["a", "b"], position=two, velocity=v, effort=e)
        for v, e in ((one, two), (two, one), (one, two))
    ]
    raws = [bytes(TS.serialize_cdr(m, cdr.JOINT_STATE, little_endian=True)) for m in msgs]
    assert len({len(r) for r in raws}) == 1
    assert_decoded_equal(cdr.JOINT_STATE, raws, msgs)
