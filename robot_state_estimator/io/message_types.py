"""The ROS message types the project reads and writes: their interface names and the classes to build them with.

Builders (``io.message_builders``) take a ``types`` namespace holding the message classes to instantiate
(:class:`MessageTypes`), filled either from rclpy (``robot_state_estimator.ros.message_types.rclpy_types()``) or
from a rosbags typestore (:func:`rosbags_types`); both have the same field names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

    Time: Any
    Header: Any
    Point: Any
    Quaternion: Any
    Vector3: Any
    Pose: Any
    Twist: Any
    PoseWithCovariance: Any
    TwistWithCovariance: Any
    Transform: Any
    TransformStamped: Any
    Wrench: Any
    WrenchStamped: Any
    Imu: Any
    JointState: Any
    Odometry: Any
    Clock: Any
    TFMessage: Any
    KeyValue: Any
    DiagnosticStatus: Any
    DiagnosticArray: Any


def rosbags_types(typestore: Any) -> MessageTypes:
    """The :class:`MessageTypes` of a rosbags typestore (e.g. ``get_typestore(Stores.ROS2_KILTED)``)."""
    return MessageTypes(**{short: typestore.types[full] for short, full in TYPE_NAMES.items()})


__all__ = ["TYPE_NAMES", "MessageTypes", "rosbags_types"]
