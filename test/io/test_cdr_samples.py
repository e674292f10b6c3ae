"""io/cdr_samples.py: one raw message to a sample, equal to rosbags' deserializer + io/messages' conversion.

On every Imu and JointState message of the simulator's bags and on hypothesis-generated messages (NaN, odd string
lengths, every alignment, empty sequences, both byte orders): the decoder gives the sample
``messages.*_sample_from_msg(deserialize_cdr(raw))`` gives (stamps, frames, names equal; float64 bit-equal), or None
exactly where that conversion raises or the data is not the plain little-endian case (then the node uses rosbags).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_state_estimator.io import cdr, messages
from robot_state_estimator.io.cdr_samples import ImuDecoder, JointStateDecoder

from .test_cdr import STRATEGIES, TS, T, _header, _raw_by_topic, simulated_bags  # noqa: F401


def _same_array(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    return (
        a.dtype == b.dtype == np.float64
        and a.shape == b.shape
        and a.view(np.uint64).tolist() == b.view(np.uint64).tolist()
    )


def _reference(msgtype: str, raw: bytes) -> Any:
    """The sample the message path makes, or None where it raises."""
    try:
        msg = TS.deserialize_cdr(raw, msgtype)
        if msgtype == cdr.IMU:
            return messages.imu_sample_from_msg(msg)
        return messages.joint_sample_from_msg(msg)
    except Exception:
        return None


def assert_same_sample(msgtype: str, raw: bytes, decoder: Any) -> None:
    expected = _reference(msgtype, raw)
    got = decoder.sample(raw)
    if got is None:
        # not decoded: allowed only where the message path refuses it too, or for big-endian data
        assert expected is None or raw[:2] != b"\x00\x01", (raw, expected)
        return
    assert expected is not None, raw
    assert got.stamp_ns == expected.stamp_ns
    if msgtype == cdr.IMU:
        assert got.frame_id == expected.frame_id
        for field in ("angular_velocity", "linear_acceleration", "orientation_xyzw"):
            assert _same_array(getattr(got, field), getattr(expected, field)), field
    else:
        assert got.names == expected.names
        for field in ("position", "velocity", "effort"):
            assert _same_array(getattr(got, field), getattr(expected, field)), field


def test_every_message_of_the_simulated_bags_gives_the_message_paths_sample(simulated_bags) -> None:  # noqa: F811
    counts = {cdr.IMU: 0, cdr.JOINT_STATE: 0}
    for bag in simulated_bags:
        for (_topic, msgtype), raws in _raw_by_topic(bag).items():
            if msgtype not in counts:
                continue
            decoder = ImuDecoder() if msgtype == cdr.IMU else JointStateDecoder()
            for raw in raws:
                assert decoder.sample(raw) is not None  # the simulator's messages are all the plain case
                assert_same_sample(msgtype, raw, decoder)
                counts[msgtype] += 1
    assert min(counts.values()) > 100


@pytest.mark.parametrize("msgtype", [cdr.IMU, cdr.JOINT_STATE])
@pytest.mark.parametrize("little_endian", [True, False], ids=["le", "be"])
def test_generated_messages_give_the_message_paths_sample_or_none(msgtype: str, little_endian: bool) -> None:
    @settings(max_examples=150, deadline=None)
    @given(st.lists(STRATEGIES[msgtype], min_size=1, max_size=6))
    def check(msgs: list[Any]) -> None:
        decoder = ImuDecoder() if msgtype == cdr.IMU else JointStateDecoder()  # one decoder: layouts change
        for m in msgs:
            raw = bytes(TS.serialize_cdr(m, msgtype, little_endian=little_endian))
            assert_same_sample(msgtype, raw, decoder)

    check()


def _imu_raw(frame: str = "imu_link", **fields: Any) -> bytes:
    values = {"orientation_covariance": np.array([-1.0] + [0.0] * 8), "w": (0.1, -0.2, 0.3), "f": (0.0, 0.5, 9.8)}
    values.update(fields)
    vec = T["geometry_msgs/msg/Vector3"]
    msg = T[cdr.IMU](
        header=_header((12, 345), frame),
        orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=values["orientation_covariance"],
        angular_velocity=vec(*values["w"]),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=vec(*values["f"]),
        linear_acceleration_covariance=np.zeros(9),
    )
    return bytes(TS.serialize_cdr(msg, cdr.IMU))


def test_what_is_not_the_plain_case_is_left_to_rosbags() -> None:
    d = ImuDecoder()
    raw = _imu_raw()
    sample = d.sample(raw)
    assert sample is not None and sample.stamp_ns == 12 * 10**9 + 345 and sample.frame_id == "imu_link"
    assert sample.orientation_xyzw is None  # covariance[0] = -1: not reported (REP-145)
    assert d.sample(raw + b"\x00" * 3) is not None  # padding rosbags accepts
    assert d.sample(raw + b"\x00" * 4) is None  # trailing bytes: rosbags refuses them
    assert d.sample(raw[:-1]) is None and d.sample(b"\x00\x01\x00\x00abc") is None
    assert d.sample(_imu_raw(w=(float("nan"), 0.0, 0.0))) is None  # imu_not_finite, named by the message path
    reported = _imu_raw(orientation_covariance=np.zeros(9))
    got = d.sample(reported)
    assert got is not None and got.orientation_xyzw is not None and got.orientation_xyzw.tolist() == [0, 0, 0, 1]
    assert d.sample(raw.replace(b"imu_link", b"imu_lin\xff")) is None  # not UTF-8: rosbags refuses it


def test_joint_names_that_change_or_repeat() -> None:
    def raw(names: list[str], effort: bool = True) -> bytes:
        n = len(names)
        msg = T[cdr.JOINT_STATE](
            header=_header((1, 2), ""),
            name=names,
            position=np.arange(n, dtype=float),
            velocity=np.zeros(0),
            effort=np.ones(n) if effort else np.zeros(0),
        )
        return bytes(TS.serialize_cdr(msg, cdr.JOINT_STATE))

    d = JointStateDecoder()
    a = d.sample(raw(["a", "bb"]))
    assert a is not None and a.names == ("a", "bb") and a.velocity is None and a.effort is not None
    b = d.sample(raw(["a", "bbb"], effort=False))  # other names: decoded anew
    assert b is not None and b.names == ("a", "bbb") and b.effort is None
    assert d.sample(raw(["a", "a"])) is None  # duplicates: the message path names them
    assert d.sample(raw([])) is None  # no names
    c = d.sample(raw(["a", "bbb"]))
    assert c is not None and c.position.tolist() == [0.0, 1.0] and c.position.flags.writeable


def test_the_usual_joint_state_is_read_from_its_layout() -> None:
    """A JointState with positions, velocities and efforts of every joint (the 1 kHz case, read through the layout
    kept for its names): its values, the stamp; padding rosbags accepts (up to 3 bytes) and nothing more; other
    lengths, a non-finite value and a cut message are left to the message path (None)."""

    def raw(
        position: list[float], velocity: list[float], effort: list[float], stamp: tuple[int, int] = (3, 4)
    ) -> bytes:
        msg = T[cdr.JOINT_STATE](
            header=_header(stamp, "base"),
            name=["j1", "j22", "j333"],
            position=np.array(position),
            velocity=np.array(velocity),
            effort=np.array(effort),
        )
        return bytes(TS.serialize_cdr(msg, cdr.JOINT_STATE))

    d = JointStateDecoder()
    full = raw([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [-1.0, -2.0, -3.0])
    for pad in range(4):
        s = d.sample(full + b"\x00" * pad)
        assert s is not None and s.stamp_ns == 3 * 10**9 + 4 and s.names == ("j1", "j22", "j333")
        assert (s.position.tolist(), s.velocity.tolist(), s.effort.tolist()) == (
            [0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [-1.0, -2.0, -3.0],
        )  # fmt: skip
    assert d.sample(full + b"\x00" * 4) is None and d.sample(full[:-8]) is None
    assert d.sample(raw([0.1, 0.2, 0.3], [1.0, 2.0], [0.0, 0.0, 0.0])) is None  # joint_bad_lengths
    assert d.sample(raw([0.1, 0.2, 0.3], [1.0, 2.0, 3.0], [0.0, float("inf"), 0.0])) is None  # joint_not_finite
    later = d.sample(raw([0.0] * 3, [0.0] * 3, [5.0] * 3, stamp=(-1, 7)))  # the stamp's sign: not this rule's
    assert later is not None and later.stamp_ns == -(10**9) + 7 and later.effort.tolist() == [5.0] * 3
