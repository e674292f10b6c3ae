"""Entry point of ``estimator_node``: Ctrl-C and SIGTERM are noted from the first instant, then the node is imported.

Importing the node (rclpy, pinocchio, numba, rosbags) takes 1-2 s, and a KeyboardInterrupt raised inside those
imports can be swallowed by a library's catch-all, so a Ctrl-C in the first second used to be lost (the node
came up and ran until a second Ctrl-C). Once ``rclpy.init`` ran, rclpy's own handler shuts the context down on
SIGINT/SIGTERM without raising, and the node's construction then failed on its next rcl call with a misleading
"context is invalid" FATAL line. Here a handler that only sets an event is installed before anything else;
``node.main`` checks it (and ``rclpy.ok()``) after the imports, after the construction and before spinning, and
ends quietly (exit code 0, as an interrupted ``rclpy.spin``) when the node was asked to stop.

``estimator_node --help`` prints a short usage instead of starting the node (``ros.node.main`` does the same, for
``python -m robot_state_estimator.ros.node --help``).
"""

from __future__ import annotations

import signal
import sys
import threading

USAGE = """\
usage: estimator_node [--ros-args -p NAME:=VALUE ... --params-file FILE -r FROM:=TO ...]
       python -m robot_state_estimator.ros.node [the same]

The robot_state_estimator node.
  inputs:   imu/data (sensor_msgs/Imu), joint_states (sensor_msgs/JointState), foot_forces
            (sensor_msgs/JointState, with use_foot_forces), <foot>/wrench (geometry_msgs/WrenchStamped, one per
            foot, with use_foot_wrenches; foot_wrench_topics), contact_schedule (sensor_msgs/JointState, with
            contact.source schedule), robot_description (std_msgs/String, when no description parameter is
            set), set_pose (geometry_msgs/PoseWithCovarianceStamped: re-seat the pose)
  outputs:  odometry (nav_msgs/Odometry), the TF odom -> base on /tf, contact_wrench/<foot>
            (geometry_msgs/WrenchStamped, one per foot), contact_states (diagnostic_msgs/DiagnosticArray, one
            status per foot), /diagnostics (diagnostic_msgs/DiagnosticArray: inputs, filter, contacts)
  service:  ~/reset (std_srvs/Trigger: restart the filter)
Every parameter, topic, frame and QoS is described in the README (section "The ROS 2 node"). Examples:

  estimator_node --ros-args -p robot:=go1
  estimator_node --ros-args -p description_file:=/path/robot.urdf -p config_file:=/path/settings.yaml
  estimator_node --ros-args -r __ns:=/go1 --params-file config/go1.yaml -p use_sim_time:=true

Double parameters take a decimal point (odometry_rate_hz:=100.0); values are YAML (an empty string is
-p NAME:="''" in a shell); without a description source the node waits for one on the robot_description
topic.
"""


def wants_help(argv: list[str]) -> bool:
    """``-h``/``--help`` among the arguments before ``--ros-args`` (after it they are ROS arguments)."""
    own = argv[: argv.index("--ros-args")] if "--ros-args" in argv else argv
    return any(a in ("-h", "--help") for a in own)


def main(args: list[str] | None = None) -> int:
    """``estimator_node``: usage for ``--help``, else :func:`robot_state_estimator.ros.node.main` with a stop event
    set by SIGINT/SIGTERM from the start of the process."""
    argv = sys.argv[1:] if args is None else list(args[1:])
    if wants_help(argv):
        print(USAGE, end="")
        return 0
    stop = threading.Event()

    def note(signum: int, frame: object) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, note)
    from robot_state_estimator.ros.node import main as node_main  # 1-2 s: rclpy, pinocchio, numba, rosbags

    return node_main(args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
