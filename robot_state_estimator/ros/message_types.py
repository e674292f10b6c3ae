"""The rclpy message classes, as the ``types`` namespace the builders of ``io.messages`` take.

``robot_state_estimator.io.messages`` builds messages from core types without importing any message
package; it is given a namespace whose attributes are the message classes (rclpy ones here, rosbags ones
in the offline tools). Field names are identical in both worlds.

``TFMessage`` is None when ``tf2_msgs`` is not installed (see ``tf_publisher``).
"""

from __future__ import annotations

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import (
    Point,
    Pose,
    PoseWithCovariance,
    Quaternion,
    Transform,
    TransformStamped,
    Twist,
    TwistWithCovariance,
    Vector3,
    Wrench,
    WrenchStamped,
)
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Header

from robot_state_estimator.io.messages import MessageTypes

try:  # generated into the venv by scripts/; always present on a ROS 2 install
    from tf2_msgs.msg import TFMessage
except ImportError:  # pragma: no cover - depends on the environment
    TFMessage = None


def rclpy_types() -> MessageTypes:
    """The :class:`~robot_state_estimator.io.messages.MessageTypes` of the rclpy message classes."""
    return MessageTypes(
        Time=Time,
        Header=Header,
        Point=Point,
        Quaternion=Quaternion,
        Vector3=Vector3,
        Pose=Pose,
        PoseWithCovariance=PoseWithCovariance,
        Twist=Twist,
        TwistWithCovariance=TwistWithCovariance,
        Transform=Transform,
        TransformStamped=TransformStamped,
        Wrench=Wrench,
        WrenchStamped=WrenchStamped,
        Odometry=Odometry,
        Imu=Imu,
        JointState=JointState,
        Clock=Clock,
        DiagnosticArray=DiagnosticArray,
        DiagnosticStatus=DiagnosticStatus,
        KeyValue=KeyValue,
        TFMessage=TFMessage,
    )


#: The shared instance (frozen; message classes are module attributes, so sharing it is safe).
TYPES = rclpy_types()
