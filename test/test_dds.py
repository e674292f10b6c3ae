"""rclpy over real DDS on this machine: a publisher process and a subscriber exchange sensor_msgs/Imu and
tf2_msgs/TFMessage (the generated or system tf2_msgs)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from geometry_msgs.msg import TransformStamped  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

PUBLISHER = textwrap.dedent(
    """
    import sys, time
    import rclpy
    from geometry_msgs.msg import TransformStamped
    from sensor_msgs.msg import Imu
    from tf2_msgs.msg import TFMessage

    rclpy.init()
    node = rclpy.create_node("dds_test_publisher")
    imu_pub = node.create_publisher(Imu, "imu/data", 10)          # reliable publisher
    tf_pub = node.create_publisher(TFMessage, "/tf", 10)
    deadline = time.monotonic() + 30.0
    i = 0
    while time.monotonic() < deadline:
        imu = Imu()
        imu.header.stamp.sec = 7
        imu.header.stamp.nanosec = i
        imu.header.frame_id = "imu_link"
        imu.linear_acceleration.z = 9.81
        imu_pub.publish(imu)
        t = TransformStamped()
        t.header.frame_id = "odom"
        t.child_frame_id = "base_link"
        t.transform.translation.x = 1.5
        t.transform.rotation.w = 1.0
        tf_pub.publish(TFMessage(transforms=[t]))
        i += 1
        rclpy.spin_once(node, timeout_sec=0.02)
    node.destroy_node()
    rclpy.shutdown()
    """
)


@pytest.mark.ros
def test_imu_and_tf_cross_processes_over_dds(ros_env: dict[str, str]) -> None:
    publisher = subprocess.Popen([sys.executable, "-c", PUBLISHER], env=ros_env)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("dds_test_subscriber", context=context)
        received: dict[str, object] = {}
        # best effort subscription (SensorDataQoS) receives from a reliable publisher
        node.create_subscription(Imu, "imu/data", lambda m: received.setdefault("imu", m), qos_profile_sensor_data)
        node.create_subscription(TFMessage, "/tf", lambda m: received.setdefault("tf", m), 10)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        deadline = time.monotonic() + 25.0
        while len(received) < 2 and time.monotonic() < deadline and publisher.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        assert set(received) == {"imu", "tf"}, f"received only {sorted(received)} over DDS"
        imu = received["imu"]
        assert isinstance(imu, Imu)
        assert imu.header.frame_id == "imu_link" and imu.header.stamp.sec == 7
        assert imu.linear_acceleration.z == pytest.approx(9.81)
        tf = received["tf"]
        assert isinstance(tf, TFMessage) and len(tf.transforms) == 1
        transform: TransformStamped = tf.transforms[0]
        assert (transform.header.frame_id, transform.child_frame_id) == ("odom", "base_link")
        assert transform.transform.translation.x == 1.5
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
        publisher.terminate()
        publisher.wait(timeout=10)
