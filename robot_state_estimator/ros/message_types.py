"""The rclpy message classes, as the ``types`` namespace the builders of ``io.messages`` take.

``robot_state_estimator.io.messages`` builds messages from core types without importing any message
package; it is given a namespace whose attributes are the message classes (rclpy ones here, rosbags ones
in the offline tools). Field names are identical in both worlds.

``TFMessage`` is None when ``tf2_msgs`` is not installed (see ``tf_publisher``).

The node's command interfaces (not built by ``io.messages``, so not in :class:`MessageTypes`) are here too:
``PoseWithCovarianceStamped`` (the ``set_pose`` topic) and ``Trigger`` (the ``~/reset`` service; None when
``std_srvs`` is not installed: the node then starts without the service and says so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import (
    Point,
    Pose,
    PoseWithCovariance,
    PoseWithCovarianceStamped,
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

from robot_state_estimator.io.message_shapes import TFMessageMsg
from robot_state_estimator.io.messages import MessageTypes

if TYPE_CHECKING:
    from std_srvs.srv import Trigger as _Trigger


def _tf_message() -> type[TFMessageMsg] | None:
    try:  # generated into the venv by scripts/; always present on a ROS 2 install
        from tf2_msgs.msg import TFMessage
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return TFMessage


def _trigger() -> type[_Trigger] | None:
    try:  # ros-std-srvs (requirements.txt); a package.xml dependency on a ROS 2 install
        from std_srvs.srv import Trigger
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return Trigger


#: ``tf2_msgs/TFMessage``, None when tf2_msgs is not installed.
TFMessage = _tf_message()
#: ``std_srvs/Trigger``, None when std_srvs is not installed.
Trigger = _trigger()


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

__all__ = ["TYPES", "PoseWithCovarianceStamped", "TFMessage", "Trigger", "rclpy_types"]
