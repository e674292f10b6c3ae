"""launch_pytest tests of launch/estimator.launch.py: they need a ROS 2 install with launch, launch_ros and
this package built by colcon (``colcon test --packages-select robot_state_estimator``); elsewhere they skip."""

from __future__ import annotations

from pathlib import Path

import pytest

launch_pytest = pytest.importorskip(
    "launch_pytest",
    reason="launch_pytest is not installed (ROS 2 launch testing needs a ROS 2 install; "
    "pip-installed rclpy has no launch, launch_ros or launch_pytest)",
)
pytest.importorskip("launch_ros", reason="launch_ros is not installed (needs a ROS 2 install)")

import launch  # noqa: E402
import rclpy  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from .conftest import spin_until  # noqa: E402

LAUNCH_FILE = Path(__file__).resolve().parents[2] / "launch" / "estimator.launch.py"
pytestmark = pytest.mark.ros


@pytest.fixture(scope="module", autouse=True)
def _isolated_domain(ros_domain_env):
    """Launched processes inherit this module's ROS_DOMAIN_ID and localhost-only discovery."""
    return ros_domain_env


@launch_pytest.fixture
def estimator_launch():
    return launch.LaunchDescription(
        [
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
                launch_arguments={"robot": "go1", "use_sim_time": "true", "namespace": "launch_test"}.items(),
            ),
            launch_pytest.actions.ReadyToTest(),
        ]
    )


@pytest.mark.launch(fixture=estimator_launch)
def test_launch_starts_the_node_with_the_robot_config():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("launch_test_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        node.create_subscription(Odometry, "/launch_test/odometry", lambda _m: None, 10)
        assert spin_until(executor, lambda: node.count_publishers("/launch_test/odometry") >= 1, timeout_s=30)
        client = node.create_client(GetParameters, "/launch_test/robot_state_estimator/get_parameters")
        assert client.wait_for_service(timeout_sec=10)
        future = client.call_async(GetParameters.Request(names=["robot", "use_sim_time", "odom_frame"]))
        assert spin_until(executor, future.done, timeout_s=10)
        robot, use_sim_time, odom_frame = future.result().values
        assert robot.string_value == "go1"
        assert use_sim_time.bool_value is True
        assert odom_frame.string_value == "odom"
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
