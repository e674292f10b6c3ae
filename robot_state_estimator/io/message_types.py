"""The ROS message types the project reads and writes: their interface names and the classes to build them with.

Builders (``io.message_builders``) take a ``types`` namespace holding the message classes to instantiate
(:class:`MessageTypes`), filled either from rclpy (``robot_state_estimator.ros.message_types.rclpy_types()``) or
from a rosbags typestore (:func:`rosbags_types`); both have the same field names, and both meet the shapes of
``io.message_shapes``, by which the fields are typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from robot_state_estimator.io.message_shapes import (
    ClockMsg,
    DiagnosticArrayMsg,
    DiagnosticStatusClass,
    HeaderMsg,
    ImuMsg,
    JointStateMsg,
    KeyValueMsg,
    OdometryMsg,
    PointMsg,
    PoseMsg,
    PoseWithCovarianceMsg,
    QuaternionMsg,
    TFMessageMsg,
    TimeMsg,
    TransformMsg,
    TransformStampedMsg,
    TwistMsg,
    TwistWithCovarianceMsg,
    Vector3Msg,
    WrenchMsg,
    WrenchStampedMsg,
)

if TYPE_CHECKING:
    from rosbags.typesys.store import Typestore

#: Message type names used by the project (ROS 2 interface names).
TYPE_NAMES: dict[str, str] = {
    "Time": "builtin_interfaces/msg/Time",
    "Header": "std_msgs/msg/Header",
    "Point": "geometry_msgs/msg/Point",
    "Quaternion": "geometry_msgs/msg/Quaternion",
    "Vector3": "geometry_msgs/msg/Vector3",
    "Pose": "geometry_msgs/msg/Pose",
    "Twist": "geometry_msgs/msg/Twist",
    "PoseWithCovariance": "geometry_msgs/msg/PoseWithCovariance",
    "TwistWithCovariance": "geometry_msgs/msg/TwistWithCovariance",
    "Transform": "geometry_msgs/msg/Transform",
    "TransformStamped": "geometry_msgs/msg/TransformStamped",
    "Wrench": "geometry_msgs/msg/Wrench",
    "WrenchStamped": "geometry_msgs/msg/WrenchStamped",
    "Imu": "sensor_msgs/msg/Imu",
    "JointState": "sensor_msgs/msg/JointState",
    "Odometry": "nav_msgs/msg/Odometry",
    "Clock": "rosgraph_msgs/msg/Clock",
    "TFMessage": "tf2_msgs/msg/TFMessage",
    "KeyValue": "diagnostic_msgs/msg/KeyValue",
    "DiagnosticStatus": "diagnostic_msgs/msg/DiagnosticStatus",
    "DiagnosticArray": "diagnostic_msgs/msg/DiagnosticArray",
}


@dataclass(frozen=True)
class MessageTypes:
    """Message classes to build, by short name (see ``TYPE_NAMES``). ``TFMessage`` may be None (not installed)."""

    Time: type[TimeMsg]
    Header: type[HeaderMsg]
    Point: type[PointMsg]
    Quaternion: type[QuaternionMsg]
    Vector3: type[Vector3Msg]
    Pose: type[PoseMsg]
    Twist: type[TwistMsg]
    PoseWithCovariance: type[PoseWithCovarianceMsg]
    TwistWithCovariance: type[TwistWithCovarianceMsg]
    Transform: type[TransformMsg]
    TransformStamped: type[TransformStampedMsg]
    Wrench: type[WrenchMsg]
    WrenchStamped: type[WrenchStampedMsg]
    Imu: type[ImuMsg]
    JointState: type[JointStateMsg]
    Odometry: type[OdometryMsg]
    Clock: type[ClockMsg]
    TFMessage: type[TFMessageMsg] | None
    KeyValue: type[KeyValueMsg]
    DiagnosticStatus: DiagnosticStatusClass
    DiagnosticArray: type[DiagnosticArrayMsg]


def rosbags_types(typestore: Typestore) -> MessageTypes:
    """The :class:`MessageTypes` of a rosbags typestore (e.g. ``get_typestore(Stores.ROS2_KILTED)``)."""
    # typestore.types is typed by rosbags' own message protocol: the fit with these shapes is checked statically on
    # the Kilted store's classes (test/ros/test_message_shapes.py)
    classes: dict[str, Any] = {short: typestore.types[full] for short, full in TYPE_NAMES.items()}
    return MessageTypes(**classes)


__all__ = ["TYPE_NAMES", "MessageTypes", "rosbags_types"]
