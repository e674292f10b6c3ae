"""The usage text of ``estimator_node`` and the ``--help`` test, shared by the entry point (``ros/entry.py``, which
prints it before the 2-7 s of imports) and ``python -m robot_state_estimator.ros.node``; imports nothing, so neither
imports the other for it."""

from __future__ import annotations

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
