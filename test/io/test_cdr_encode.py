"""io/cdr_encode.py: the output encoders are bit-equal to rosbags' serializer (``Typestore.serialize_cdr``).

On hypothesis messages (frame names of 0..9 characters with a two-byte UTF-8 letter, which move the floats through
every alignment; stamps over the whole int32 range of seconds; floats with NaN, infinities and -0.0; contact states
with any number of statuses and values), one message at a time (``encode``, the node's path) and in batches
(``encode_many``, replay's), and on every message of replay's output bag of the simulated Go1 trot and of the real
Go1 recording (re-serialized by rosbags from what it reads back).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rosbags.highlevel import AnyReader

from robot_state_estimator.io import cdr_encode as E
from robot_state_estimator.io.bags import default_typestore

TS = default_typestore()
T = TS.types

_names = st.text(alphabet="abcxyz_/é0", min_size=0, max_size=9)
_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
#: ns whose seconds fit int32 (negative ones too: floor division, 0 <= nanosec < 1e9)
_stamps = st.integers(-(2**31) * 10**9, (2**31 - 1) * 10**9 + 999_999_999)


def _time(stamp_ns: int) -> Any:
    sec, nanosec = divmod(stamp_ns, 10**9)
    return T["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)


def _header(stamp_ns: int, frame_id: str) -> Any:
    return T["std_msgs/msg/Header"](stamp=_time(stamp_ns), frame_id=frame_id)


def _vec(v: list[float]) -> Any:
    return T["geometry_msgs/msg/Vector3"](x=v[0], y=v[1], z=v[2])


def _quat(q: list[float]) -> Any:
    return T["geometry_msgs/msg/Quaternion"](x=q[0], y=q[1], z=q[2], w=q[3])


def odometry(stamp_ns: int, frame_id: str, child: str, f: list[float]) -> Any:
    """The message of ``odometry_layout(frame_id, child)`` with floats ``f`` (85, in field order)."""
    pose = T["geometry_msgs/msg/Pose"](
        position=T["geometry_msgs/msg/Point"](x=f[0], y=f[1], z=f[2]), orientation=_quat(f[3:7])
    )
    twist = T["geometry_msgs/msg/Twist"](linear=_vec(f[43:46]), angular=_vec(f[46:49]))
    return T[E.ODOMETRY](
        header=_header(stamp_ns, frame_id),
        child_frame_id=child,
        pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=np.array(f[7:43])),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=np.array(f[49:85])),
    )


def tf_message(stamp_ns: int, frame_id: str, child: str, f: list[float]) -> Any:
    transform = T["geometry_msgs/msg/Transform"](translation=_vec(f[:3]), rotation=_quat(f[3:7]))
    stamped = T["geometry_msgs/msg/TransformStamped"](
        header=_header(stamp_ns, frame_id), child_frame_id=child, transform=transform
    )
    return T[E.TF_MESSAGE](transforms=[stamped])


def wrench(stamp_ns: int, frame_id: str, f: list[float]) -> Any:
    w = T["geometry_msgs/msg/Wrench"](force=_vec(f[:3]), torque=_vec(f[3:6]))
    return T[E.WRENCH_STAMPED](header=_header(stamp_ns, frame_id), wrench=w)


def _serialized(msg: Any) -> bytes:
    return bytes(TS.serialize_cdr(msg, msg.__msgtype__, little_endian=True))


CASES = {
    "odometry": (lambda a, b: E.odometry_layout(a, b), lambda s, a, b, f: odometry(s, a, b, f), 85),
    "tf": (lambda a, b: E.tf_message_layout(a, b), lambda s, a, b, f: tf_message(s, a, b, f), 7),
    "wrench": (lambda a, _b: E.wrench_stamped_layout(a), lambda s, a, _b, f: wrench(s, a, f), 6),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fixed_layouts_are_bit_equal_to_rosbags(case: str) -> None:
    make_layout, make_msg, n = CASES[case]

    @given(
        _names,
        _names,
        st.lists(st.tuples(_stamps, st.lists(_floats, min_size=n, max_size=n)), min_size=0, max_size=5),
    )
    def check(frame_id: str, child: str, rows: list[tuple[int, list[float]]]) -> None:
        layout = make_layout(frame_id, child)
        expected = [_serialized(make_msg(s, frame_id, child, f)) for s, f in rows]
        assert [layout.encode(s, f) for s, f in rows] == expected  # the node's path, one message
        many = layout.encode_many([s for s, _ in rows], np.array([f for _, f in rows]).reshape(len(rows), n))
        assert many.shape == (len(rows), layout.size)
        assert [bytes(r) for r in many] == expected  # replay's path, a batch

    check()


_text = st.text(alphabet="abc _./é09", min_size=0, max_size=12)
_status = st.tuples(st.integers(0, 3), _text, _text, _text, st.lists(st.tuples(_text, _text), min_size=0, max_size=4))


#: one encoder for every example: what it keeps from earlier messages (statuses at other offsets mod 4) is reused
SHARED = E.DiagnosticArrayEncoder()


@given(_stamps, _text, st.lists(_status, min_size=0, max_size=5))
def test_diagnostic_arrays_are_bit_equal_to_rosbags(stamp_ns: int, frame_id: str, statuses: list[Any]) -> None:
    msg = T[E.DIAGNOSTIC_ARRAY](
        header=_header(stamp_ns, frame_id),
        status=[
            T["diagnostic_msgs/msg/DiagnosticStatus"](
                level=level,
                name=name,
                message=message,
                hardware_id=hw,
                values=[T["diagnostic_msgs/msg/KeyValue"](key=k, value=v) for k, v in values],
            )
            for level, name, message, hw, values in statuses
        ],
    )
    expected = _serialized(msg)
    assert E.encode_diagnostic_array(stamp_ns, frame_id, statuses) == expected  # nothing kept
    assert SHARED.encode(stamp_ns, frame_id, statuses) == expected  # pieces kept from the earlier examples
    assert SHARED.encode(stamp_ns, frame_id, statuses) == expected  # and from this one


def test_bad_stamps_shapes_and_levels_are_refused() -> None:
    layout = E.odometry_layout("odom", "base")
    with pytest.raises(ValueError, match="fit the int32 seconds"):
        layout.encode(2**31 * 10**9, np.zeros(85))
    with pytest.raises(ValueError, match="fit the int32 seconds"):
        layout.encode_many([0, -(2**31) * 10**9 - 1], np.zeros((2, 85)))
    with pytest.raises(ValueError, match="84 values, expected 85"):
        layout.encode(0, np.zeros(84))
    with pytest.raises(ValueError, match=r"values of shape \(2, 7\), expected \(2, 85\)"):
        layout.encode_many([0, 1], np.zeros((2, 7)))
    with pytest.raises(ValueError, match="level 256 is not a byte"):
        E.encode_diagnostic_array(0, "", [(256, "a", "b", "c", ())])
    with pytest.raises(ValueError, match="fit the int32 seconds"):
        E.encode_diagnostic_array(-(2**31) * 10**9 - 1, "", [])
    assert layout.encode_many([], np.zeros((0, 85))).shape == (0, layout.size)


# ------------------------------------------------------------------------- replay's output bags, every message


def _reserialized(bag: Path) -> tuple[int, dict[str, int]]:
    """Check every message of ``bag``: its bytes are rosbags' serialization of what rosbags reads back. Returns how
    many, and how many per type."""
    n, types = 0, {}
    with AnyReader([bag], default_typestore=TS) as reader:
        for connection, _t, raw in reader.messages():
            msg = TS.deserialize_cdr(raw, connection.msgtype)
            assert bytes(raw) == _serialized(msg), (connection.topic, n)
            n += 1
            types[connection.msgtype] = types.get(connection.msgtype, 0) + 1
    return n, types


def _replay_with_output(inp: Path, description: str, out: Path, config: Path | None) -> Any:
    from robot_state_estimator.tools import replay

    settings, params = replay.split_config(config)
    opts = replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, **params}, progress=False)
    return replay.replay(inp, description=description, settings=settings, options=opts, output_bag=out)


def test_every_message_of_replays_output_bag_is_rosbags_serialization(sim_run, tmp_path: Path) -> None:
    from robot_state_estimator.common.paths import config_dir

    run_dir, _ = sim_run
    r = _replay_with_output(
        run_dir / "bag", str(run_dir / "robot_description.urdf"), tmp_path / "out", config_dir() / "go1.yaml"
    )
    n, types = _reserialized(tmp_path / "out")
    assert set(types) == {E.ODOMETRY, E.TF_MESSAGE, E.WRENCH_STAMPED, E.DIAGNOSTIC_ARRAY}
    assert types[E.ODOMETRY] == types[E.TF_MESSAGE] == len(r.log) > 0
    assert (
        types[E.DIAGNOSTIC_ARRAY] == len(r.log.contact_stamp_ns)
        and types[E.WRENCH_STAMPED] == 4 * types[E.DIAGNOSTIC_ARRAY]
    )
    assert n == sum(types.values())


@pytest.mark.data
@pytest.mark.slow
def test_every_message_of_the_real_go1_replays_output_bag_is_rosbags_serialization(
    go1_trot_dir: Path, tmp_path: Path
) -> None:
    from robot_state_estimator.common.paths import config_dir, robot_description_path
    from robot_state_estimator.tools import csv_import

    mapping = csv_import.load_mapping(config_dir() / "import" / "go1_trot.yaml")
    csv_import.import_csv(go1_trot_dir / "go1.csv", mapping, tmp_path / "bag")
    r = _replay_with_output(
        tmp_path / "bag", str(robot_description_path("go1")), tmp_path / "out", config_dir() / "go1.yaml"
    )
    n, types = _reserialized(tmp_path / "out")
    assert types[E.ODOMETRY] == len(r.log) > 9000 and n == sum(types.values())
    # foot pressure sensors, no joint torques: no force is estimated, so no wrench is published (as the node)
    assert set(types) == {E.ODOMETRY, E.TF_MESSAGE, E.DIAGNOSTIC_ARRAY}
