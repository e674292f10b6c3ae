"""``ros.tf_publisher``: with tf2_ros the node's TF goes through ``tf2_ros.TransformBroadcaster``; the fallback
``TfPublisher`` (used where tf2_ros is missing) sends the same messages on ``/tf`` with the same QoS, as a
subscriber over DDS receives them (and as a ``tf2_ros.Buffer`` fed by a ``TransformListener`` resolves them)."""

from __future__ import annotations

from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
pytest.importorskip("tf2_msgs.msg", reason="tf2_msgs is not installed (make setup generates it)")
from geometry_msgs.msg import TransformStamped  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_state_estimator.ros import qos  # noqa: E402
from robot_state_estimator.ros.tf_publisher import TfPublisher, make_transform_broadcaster  # noqa: E402

from .conftest import spin_until  # noqa: E402

pytestmark = pytest.mark.ros


def _transforms(stamp_ns: int) -> list[Any]:
    out = []
    for child, (x, y, z) in (("base", (0.1, -0.2, 0.3)), ("base_rse", (1.5, 2.5, -0.25))):
        t = TransformStamped()
        t.header.stamp.sec, t.header.stamp.nanosec = divmod(stamp_ns, 10**9)
        t.header.frame_id = "odom"
        t.child_frame_id = child
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = x, y, z
        t.transform.rotation.x, t.transform.rotation.y = 0.0, 0.0
        t.transform.rotation.z, t.transform.rotation.w = 0.6, 0.8
        out.append(t)
    return out


def _qos_of(node: Any, gid_node: str) -> Any:
    infos = [i for i in node.get_publishers_info_by_topic("/tf") if i.node_name == gid_node]
    assert len(infos) == 1, infos
    return infos[0].qos_profile


def test_the_fallback_sends_what_tf2_ros_sends(ros_context) -> None:
    tf2_ros = pytest.importorskip("tf2_ros", reason="tf2_ros is not installed (../shared/ros2 or a ROS 2 install)")
    with_tf2 = rclpy.create_node("with_tf2_ros", context=ros_context)
    fallback = rclpy.create_node("with_fallback", context=ros_context)
    listener_node = rclpy.create_node("tf_listener", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    for n in (with_tf2, fallback, listener_node):
        executor.add_node(n)
    try:
        broadcaster = make_transform_broadcaster(with_tf2)
        assert isinstance(broadcaster, tf2_ros.TransformBroadcaster)  # tf2_ros imports: it is used
        plain = make_transform_broadcaster(fallback, prefer_tf2_ros=False)
        assert type(plain) is TfPublisher
        received: list[TFMessage] = []
        listener_node.create_subscription(TFMessage, "/tf", received.append, qos.tf_qos())
        buffer = tf2_ros.Buffer()
        tf2_ros.TransformListener(buffer, listener_node, spin_thread=False)
        assert spin_until(
            executor,
            lambda: broadcaster.pub_tf.get_subscription_count() >= 2 and plain.publisher.get_subscription_count() >= 2,
        )
        assert _qos_of(listener_node, "with_tf2_ros") == _qos_of(listener_node, "with_fallback")

        broadcaster.sendTransform(_transforms(5 * 10**9))
        assert spin_until(executor, lambda: len(received) == 1)
        plain.sendTransform(_transforms(6 * 10**9))
        assert spin_until(executor, lambda: len(received) == 2)
        one = _transforms(7 * 10**9)[0]
        plain.sendTransform(one)  # a single transform, as tf2_ros accepts
        broadcaster.sendTransform(one)
        assert spin_until(executor, lambda: len(received) == 4)
        plain.publish(TFMessage(transforms=_transforms(8 * 10**9)))  # the node's hot path
        assert spin_until(executor, lambda: len(received) == 5)

        def shifted(msg: TFMessage, to_ns: int) -> TFMessage:
            for t in msg.transforms:
                t.header.stamp.sec, t.header.stamp.nanosec = divmod(to_ns, 10**9)
            return msg

        assert shifted(received[1], 5 * 10**9) == received[0]  # same message, whichever publisher
        assert received[2] == received[3] == TFMessage(transforms=[one])
        assert shifted(received[4], 5 * 10**9) == received[0]
        # both reach tf2_ros's buffer the same way
        from rclpy.time import Time

        for stamp_ns in (5 * 10**9, 6 * 10**9):
            tf = buffer.lookup_transform("odom", "base_rse", Time(nanoseconds=stamp_ns))
            assert (tf.transform.translation.x, tf.transform.rotation.w) == (1.5, 0.8)
    finally:
        executor.shutdown()
        for n in (with_tf2, fallback, listener_node):
            n.destroy_node()
