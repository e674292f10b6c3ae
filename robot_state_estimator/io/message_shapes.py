"""The shape of each ROS message the project reads and builds, as a :class:`typing.Protocol`: the fields
``io.message_readers``, ``io.message_builders``, ``io.stream`` and the node use, with their Python types.

Two implementations meet them: rclpy's generated message classes (the node) and rosbags' message dataclasses
(bags read and written offline). Neither is written for the other, so the readers and builders take these
protocols instead of either class:

- a message of either kind passes where a protocol is expected (rosbags' dataclasses are typed; rclpy's
  generated classes are read by mypy from their source, ``follow_untyped_imports`` in ``pyproject.toml``: their
  properties are untyped, so mypy checks that each field exists); ``test/ros/test_message_shapes.py`` is checked
  by mypy with both (``rosbags_types`` of the Kilted store, ``ros.message_types.rclpy_types``) and checks built
  messages of both against the field types at run time;
- every field is a read-only property here, so that a dataclass field of a narrower type (``list[str]``, a
  float64 array) fits the protocol's wider one (``Sequence[str]``, :data:`FloatValues`);
- each protocol declares ``__init__(*args, **kwargs)`` (not a member: it only lets ``type[ImuMsg]`` be called with
  the fields by keyword, which both implementations accept), so :class:`io.message_types.MessageTypes` holds the
  classes as ``type[...]`` of these protocols and a builder's result is typed.

Float arrays are ``array.array('d')`` (rclpy) or float64 ndarrays (rosbags); ``DiagnosticStatus.level`` is a
byte (rclpy) or an int (rosbags), and the class's ``OK`` constant is spelled in the same type
(:class:`DiagnosticStatusClass`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

#: A float array field of a message: ``array.array('d')`` or a sequence (rclpy), a float64 ndarray (rosbags).
FloatValues = Sequence[float] | NDArray[np.float64]


class TimeMsg(Protocol):
    """``builtin_interfaces/Time``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def sec(self) -> int: ...
    @property
    def nanosec(self) -> int: ...


class HeaderMsg(Protocol):
    """``std_msgs/Header``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def stamp(self) -> TimeMsg: ...
    @property
    def frame_id(self) -> str: ...


class StampedMsg(Protocol):
    """Any message with a ``std_msgs/Header`` named ``header`` (the stamp rules of ``io.stream``)."""

    @property
    def header(self) -> HeaderMsg: ...


class Vector3Msg(Protocol):
    """``geometry_msgs/Vector3``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def z(self) -> float: ...


class PointMsg(Protocol):
    """``geometry_msgs/Point``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def z(self) -> float: ...


class QuaternionMsg(Protocol):
    """``geometry_msgs/Quaternion`` (``x y z w``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def z(self) -> float: ...
    @property
    def w(self) -> float: ...


class PoseMsg(Protocol):
    """``geometry_msgs/Pose``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def position(self) -> PointMsg: ...
    @property
    def orientation(self) -> QuaternionMsg: ...


class TwistMsg(Protocol):
    """``geometry_msgs/Twist``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def linear(self) -> Vector3Msg: ...
    @property
    def angular(self) -> Vector3Msg: ...


class PoseWithCovarianceMsg(Protocol):
    """``geometry_msgs/PoseWithCovariance`` (covariance: 36 floats, row-major)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def pose(self) -> PoseMsg: ...
    @property
    def covariance(self) -> FloatValues: ...


class TwistWithCovarianceMsg(Protocol):
    """``geometry_msgs/TwistWithCovariance`` (covariance: 36 floats, row-major)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def twist(self) -> TwistMsg: ...
    @property
    def covariance(self) -> FloatValues: ...


class TransformMsg(Protocol):
    """``geometry_msgs/Transform``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def translation(self) -> Vector3Msg: ...
    @property
    def rotation(self) -> QuaternionMsg: ...


class TransformStampedMsg(Protocol):
    """``geometry_msgs/TransformStamped``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def header(self) -> HeaderMsg: ...
    @property
    def child_frame_id(self) -> str: ...
    @property
    def transform(self) -> TransformMsg: ...


class WrenchMsg(Protocol):
    """``geometry_msgs/Wrench``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def force(self) -> Vector3Msg: ...
    @property
    def torque(self) -> Vector3Msg: ...


class WrenchStampedMsg(Protocol):
    """``geometry_msgs/WrenchStamped``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def header(self) -> HeaderMsg: ...
    @property
    def wrench(self) -> WrenchMsg: ...


class ImuMsg(Protocol):
    """``sensor_msgs/Imu`` (covariances: 9 floats, row-major; REP-145)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def header(self) -> HeaderMsg: ...
    @property
    def orientation(self) -> QuaternionMsg: ...
    @property
    def orientation_covariance(self) -> FloatValues: ...
    @property
    def angular_velocity(self) -> Vector3Msg: ...
    @property
    def angular_velocity_covariance(self) -> FloatValues: ...
    @property
    def linear_acceleration(self) -> Vector3Msg: ...
    @property
    def linear_acceleration_covariance(self) -> FloatValues: ...


class JointStateMsg(Protocol):
    """``sensor_msgs/JointState`` (also the foot sensors' and the contact schedule's message)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def header(self) -> HeaderMsg: ...
    @property
    def name(self) -> Sequence[str]: ...
    @property
    def position(self) -> FloatValues: ...
    @property
    def velocity(self) -> FloatValues: ...
    @property
    def effort(self) -> FloatValues: ...


class OdometryMsg(Protocol):
    """``nav_msgs/Odometry``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def header(self) -> HeaderMsg: ...
    @property
    def child_frame_id(self) -> str: ...
    @property
    def pose(self) -> PoseWithCovarianceMsg: ...
    @property
    def twist(self) -> TwistWithCovarianceMsg: ...


class ClockMsg(Protocol):
    """``rosgraph_msgs/Clock``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def clock(self) -> TimeMsg: ...


class TFMessageMsg(Protocol):
    """``tf2_msgs/TFMessage``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def transforms(self) -> Sequence[TransformStampedMsg]: ...


class KeyValueMsg(Protocol):
    """``diagnostic_msgs/KeyValue``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str: ...


class DiagnosticStatusMsg(Protocol):
    """``diagnostic_msgs/DiagnosticStatus`` (``level``: a byte in rclpy, an int in rosbags)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def level(self) -> int | bytes: ...
    @property
    def name(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def hardware_id(self) -> str: ...
    @property
    def values(self) -> Sequence[KeyValueMsg]: ...


class DiagnosticStatusClass(Protocol):
    """The ``diagnostic_msgs/DiagnosticStatus`` class itself: its level constant ``OK`` as the implementation
    spells the field (rclpy: ``b"\\x00"``, a metaclass property; rosbags: ``0``) and its constructor."""

    @property
    def OK(self) -> int | bytes: ...
    def __call__(self, *args: Any, **kwargs: Any) -> DiagnosticStatusMsg: ...


class DiagnosticArrayMsg(Protocol):
    """``diagnostic_msgs/DiagnosticArray``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    @property
    def header(self) -> HeaderMsg: ...
    @property
    def status(self) -> Sequence[DiagnosticStatusMsg]: ...


__all__ = [
    "ClockMsg",
    "DiagnosticArrayMsg",
    "DiagnosticStatusClass",
    "DiagnosticStatusMsg",
    "FloatValues",
    "HeaderMsg",
    "ImuMsg",
    "JointStateMsg",
    "KeyValueMsg",
    "OdometryMsg",
    "PointMsg",
    "PoseMsg",
    "PoseWithCovarianceMsg",
    "QuaternionMsg",
    "StampedMsg",
    "TFMessageMsg",
    "TimeMsg",
    "TransformMsg",
    "TransformStampedMsg",
    "TwistMsg",
    "TwistWithCovarianceMsg",
    "Vector3Msg",
    "WrenchMsg",
    "WrenchStampedMsg",
]
