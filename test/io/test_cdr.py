"""The CDR readers (what the node decodes from the bytes DDS delivers) equal the message readers on the same
message, for every layout the alignment rules produce, and hand every unusual buffer to the message path.

The messages are serialized by rosbags (plain little-endian CDR, what ROS 2 middlewares put on the wire);
``test/ros/test_node.py`` checks the same against rclpy's own serializer.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import pytest

from robot_state_estimator.estimation.types import ImuSample, JointSample
from robot_state_estimator.io import messages as M
from robot_state_estimator.io.bags import default_types, default_typestore

T = default_types()
IMU_TYPE, JOINT_TYPE = "sensor_msgs/msg/Imu", "sensor_msgs/msg/JointState"


def _cdr(msg: Any, typename: str) -> bytes:
    return bytes(default_typestore().serialize_cdr(msg, typename))


def _same(a: Any, b: Any) -> bool:
    """Field by field, arrays by dtype, shape and values, everything else by type and value."""
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
                return False
            if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


def _imu(stamp_ns: int, frame_id: str, *, gyro: Any = (0.1, -0.2, 0.3), quat: Any = None, ocov0: float = 0.0) -> Any:
    msg = M.imu_msg(T, ImuSample(stamp_ns, np.asarray(gyro, float), np.array([0.5, -0.1, 9.81]), None, frame_id))
    if quat is not None:
        msg.orientation = T.Quaternion(x=quat[0], y=quat[1], z=quat[2], w=quat[3])
        cov = np.array(msg.orientation_covariance)
        cov[0] = ocov0
        msg.orientation_covariance = cov
    return msg


def _joints(n: int, *, velocity: bool = True, effort: bool = True, name_len: int = 3, frame_id: str = "") -> Any:
    names = tuple(f"j{i:0{name_len}d}" for i in range(n))
    rng = np.random.default_rng(n)
    sample = JointSample(
        1_700_000_000_000_000_007,
        names,
        rng.normal(size=n),
        rng.normal(size=n) if velocity else None,
        rng.normal(size=n) if effort else None,
    )
    return M.joint_state_msg(T, sample, frame_id=frame_id)


@pytest.mark.parametrize("frame_id", ["", "i", "im", "imu", "imu_", "imu_link", "imu_sensor", "é_frame"])
@pytest.mark.parametrize(
    ("quat", "ocov0"),
    [(None, 0.0), ((0.0, 0.0, 0.0, 0.0), 0.0), ((0.1, 0.2, 0.3, 0.9), 0.0), ((0.1, 0.2, 0.3, 0.9), -1.0)],
)
def test_imu_from_cdr_equals_the_message_reader(frame_id: str, quat: Any, ocov0: float) -> None:
    for stamp_ns in (1, 999_999_999, 1_700_000_000_123_456_789, -5_000_000_001):
        msg = _imu(stamp_ns, frame_id, quat=quat, ocov0=ocov0)
        data = _cdr(msg, IMU_TYPE)
        sample = M.imu_sample_from_cdr(data)
        assert sample is not None
        assert _same(sample, M.imu_sample_from_msg(default_typestore().deserialize_cdr(data, IMU_TYPE)))
        assert _same(sample, M.imu_sample_from_msg(msg))


@pytest.mark.parametrize("n", [1, 2, 3, 12, 13])
@pytest.mark.parametrize("name_len", [1, 2, 3, 4])
@pytest.mark.parametrize(("velocity", "effort"), [(True, True), (False, True), (True, False), (False, False)])
@pytest.mark.parametrize("frame_id", ["", "a", "base"])
def test_joints_from_cdr_equal_the_message_reader(
    n: int, name_len: int, velocity: bool, effort: bool, frame_id: str
) -> None:
    msg = _joints(n, velocity=velocity, effort=effort, name_len=name_len, frame_id=frame_id)
    data = _cdr(msg, JOINT_TYPE)
    for _ in range(2):  # decoded, then from the cached names
        sample = M.joint_sample_from_cdr(data)
        assert sample is not None
        assert _same(sample, M.joint_sample_from_msg(msg))


def test_the_cached_names_follow_the_messages() -> None:
    a, b = _cdr(_joints(12), JOINT_TYPE), _cdr(_joints(12, name_len=4), JOINT_TYPE)
    c = _cdr(_joints(3, name_len=4), JOINT_TYPE)  # a prefix of b's names: the cache must not match it
    for data, msg in [(a, _joints(12)), (b, _joints(12, name_len=4)), (c, _joints(3, name_len=4)), (a, _joints(12))]:
        assert _same(M.joint_sample_from_cdr(data), M.joint_sample_from_msg(msg))


def _bad_joints() -> list[Any]:
    bad = []
    for field, value in [
        ("position", [1.0]),
        ("velocity", [1.0, 2.0, 3.0]),
        ("effort", [np.nan, 1.0]),
        ("position", [np.inf, 1.0]),
        ("name", ["a", "a"]),
        ("name", []),
    ]:
        msg = M.joint_state_msg(T, JointSample(1, ("a", "b"), np.array([1.0, 2.0]), None, np.array([0.0, 1.0])))
        if field == "name":
            msg.name = value
            if not value:
                msg.position, msg.effort = np.zeros(0), np.zeros(0)
        else:
            setattr(msg, field, np.asarray(value, dtype=float))
        bad.append(msg)
    return bad


def test_what_the_message_readers_refuse_goes_to_them() -> None:
    """None for each refused message: the node then deserializes it and the message reader says why."""
    for msg in _bad_joints():
        with pytest.raises(M.MessageError):
            M.joint_sample_from_msg(msg)
        assert M.joint_sample_from_cdr(_cdr(msg, JOINT_TYPE)) is None
    for msg in (
        _imu(5, "imu", gyro=(np.nan, 0.0, 0.0)),
        _imu(5, "imu", gyro=(0.0, np.inf, 0.0)),
        _imu(5, "imu", quat=(np.nan, 0.0, 0.0, 1.0)),
        _imu(5, "imu", quat=(1e-9, 0.0, 0.0, 0.0)),
    ):
        with pytest.raises(M.MessageError):
            M.imu_sample_from_msg(msg)
        assert M.imu_sample_from_cdr(_cdr(msg, IMU_TYPE)) is None


def test_unusual_buffers_go_to_the_message_path() -> None:
    """Another encapsulation (big endian, XCDR2) or a truncated buffer gives None, never an exception."""
    imu = _cdr(_imu(5, "imu_link"), IMU_TYPE)
    joints = _cdr(_joints(12), JOINT_TYPE)
    for data, read in ((imu, M.imu_sample_from_cdr), (joints, M.joint_sample_from_cdr)):
        assert read(data) is not None
        for header in (b"\x00\x00", b"\x00\x07", b"\x00\x11", b"\x00\x03"):
            assert read(header + data[2:]) is None
        for size in range(len(data)):
            assert read(data[:size]) is None or size >= len(data) - 3  # trailing padding may be cut
