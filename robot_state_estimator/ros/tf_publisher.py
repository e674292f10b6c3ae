"""Publishing transforms on ``/tf``: tf2_ros when it is importable, an equivalent publisher otherwise.

``make_transform_broadcaster(node)`` returns an object with tf2_ros's ``sendTransform(transform | list)``.
On a ROS 2 install that is ``tf2_ros.TransformBroadcaster``; where tf2_ros is absent (pip-installed rclpy
without tf2) it is ``TfPublisher``, which publishes ``tf2_msgs/TFMessage`` on ``/tf`` with the same QoS as
tf2_ros (reliable, volatile, keep last 100). ``/tf`` is an absolute name, as in tf2_ros: transforms are
global, namespaces do not apply (remap ``/tf`` to change it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rclpy.node import Node

from robot_state_estimator.ros.qos import tf_qos

if TYPE_CHECKING:
    from tf2_msgs.msg import TFMessage as _TFMessage


class TfUnavailableError(RuntimeError):
    """Neither tf2_ros nor tf2_msgs can be imported: TF cannot be published."""


class TfPublisher:
    """A minimal ``tf2_ros.TransformBroadcaster``: ``sendTransform`` publishes a ``tf2_msgs/TFMessage``.

    Args:
        node: the node that owns the publisher.
        topic: ``/tf`` (absolute, as tf2_ros).

    Raises:
        TfUnavailableError: ``tf2_msgs`` is not installed (the message names the fix).
    """

    def __init__(self, node: Node, *, topic: str = "/tf") -> None:
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError as exc:
            raise TfUnavailableError(
                "cannot publish TF: neither tf2_ros nor tf2_msgs is importable "
                "(install ros-<distro>-tf2-ros, or generate tf2_msgs into this environment; "
                "or set the parameter publish_tf:=false)"
            ) from exc
        self._msg_type: type[_TFMessage] = TFMessage
        self._publisher = node.create_publisher(TFMessage, topic, tf_qos())
        #: the ``rclpy`` publisher (``get_subscription_count``: the node publishes only while someone listens)
        self.publisher = self._publisher
        #: publish a ``tf2_msgs/TFMessage`` as it is (the node's hot path: a preallocated, refilled message)
        self.publish = self._publisher.publish

    def sendTransform(self, transform: Any | Iterable[Any]) -> None:
        """Publish one ``geometry_msgs/TransformStamped`` or a list of them in one ``TFMessage``."""
        transforms = list(transform) if isinstance(transform, list | tuple) else [transform]
        self._publisher.publish(self._msg_type(transforms=transforms))

    def destroy(self, node: Node) -> None:
        """Destroy the publisher (the node's other entities are left alone)."""
        node.destroy_publisher(self._publisher)


def make_transform_broadcaster(node: Node, *, prefer_tf2_ros: bool = True) -> Any:
    """``tf2_ros.TransformBroadcaster(node)`` when tf2_ros imports, else ``TfPublisher(node)``.

    Raises:
        TfUnavailableError: neither tf2_ros nor tf2_msgs is available.
    """
    if prefer_tf2_ros:
        try:
            from tf2_ros import TransformBroadcaster
        except ImportError:
            pass
        else:
            return TransformBroadcaster(node, qos=tf_qos())
    return TfPublisher(node)
