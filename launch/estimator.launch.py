"""Launch the robot_state_estimator node (optionally robot_state_publisher and RViz).

    ros2 launch robot_state_estimator estimator.launch.py robot:=go1
    ros2 launch robot_state_estimator estimator.launch.py robot:=go1 use_sim_time:=true rviz:=true
    ros2 launch robot_state_estimator estimator.launch.py description_file:=/path/robot.urdf \
        config_file:=/path/settings.yaml robot_state_publisher:=true

Arguments:
    robot: bundled robot (go1, solo12, anymal_c); picks config/<robot>.yaml and, when description_file is
        empty, config/robots/<robot>.urdf.xacro.
    description_file: URDF/xacro or SDFormat description; overrides the bundled one.
    config_file: estimator settings YAML (ROS parameter-file layout); default config/<robot>.yaml.
    use_sim_time: follow /clock (bag replay with `ros2 bag play BAG --clock`).
    rviz: start RViz with config/estimator.rviz (robot model, odometry, TF, contact wrenches).
    robot_state_publisher: start robot_state_publisher on the same description (needed by RViz's robot
        model when nothing else publishes robot_description and the joint TFs; URDF/xacro only).
    namespace: namespace of the estimator node (its topics are relative: <ns>/imu/data, <ns>/odometry...).
        The parameter files (config/<robot>.yaml) are keyed /**/robot_state_estimator, so they apply in any
        namespace.
    log_level: log level of the estimator node (set on its logger, <ns>.robot_state_estimator under a
        namespace: see estimator_logger_name).
    odometry_rate_hz, contacts_rate_hz: maximum output rates (node parameters of the same names); empty = the
        node's default (every estimate). With RViz on a 1 kHz robot, e.g. 100 and 50 (see README).

The launch and launch_ros imports are inside the functions that use them, so that the plain functions here
(estimator_logger_name, output_rate_parameters) can be imported and tested without a ROS 2 launch install.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launch import LaunchDescription

PACKAGE = "robot_state_estimator"
NODE_NAME = "robot_state_estimator"
BUNDLED = {"go1": "go1.urdf.xacro", "solo12": "solo12.urdf.xacro", "anymal_c": "anymal_c.urdf.xacro"}

ARGUMENTS = (
    ("robot", "go1", "bundled robot: go1, solo12 or anymal_c (picks config/<robot>.yaml)"),
    ("description_file", "", "robot description (URDF, xacro or SDFormat); empty = the bundled robot"),
    ("config_file", "", "estimator settings YAML; empty = config/<robot>.yaml"),
    ("use_sim_time", "false", "use /clock (bag replay)"),
    ("rviz", "false", "start RViz with config/estimator.rviz"),
    ("robot_state_publisher", "false", "start robot_state_publisher on the description (URDF/xacro)"),
    ("namespace", "", "namespace of the estimator node"),
    ("log_level", "info", "log level of the estimator node"),
    ("odometry_rate_hz", "", "Hz, maximum odometry and TF rate (e.g. 100 with RViz); empty = the node's default"),
    ("contacts_rate_hz", "", "Hz, maximum wrench and contact-state rate (e.g. 50 with RViz); empty = the default"),
)


def output_rate_parameters(odometry_rate_hz: str, contacts_rate_hz: str) -> dict[str, float]:
    """The node parameters of the ``odometry_rate_hz`` / ``contacts_rate_hz`` launch arguments (text, empty =
    not set: the node's default, every estimate). Raises ValueError naming the argument for a non-number."""
    out: dict[str, float] = {}
    for name, text in (("odometry_rate_hz", odometry_rate_hz), ("contacts_rate_hz", contacts_rate_hz)):
        if text.strip():
            try:
                out[name] = float(text)
            except ValueError:
                raise ValueError(f"launch argument {name}: expected a number in Hz, got {text!r}") from None
    return out


def _as_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off", ""):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def estimator_logger_name(namespace: str, node_name: str = NODE_NAME) -> str:
    """The logger name of the node ``node_name`` in ``namespace``, as rcl names it and ``--log-level`` takes it.

    rcl names a node's logger after its fully qualified name with the leading slash dropped and the other slashes
    turned into dots: ``/go1/robot_state_estimator`` logs as ``go1.robot_state_estimator``, and
    ``--log-level robot_state_estimator:=debug`` would not reach it. ``namespace`` is the launch argument: empty
    or ``/`` (root), ``go1`` or ``/go1`` (launch_ros makes a relative namespace absolute), ``/a/b/``.
    """
    tokens = [t for t in namespace.split("/") if t]
    return ".".join([*tokens, node_name])


def _urdf_xml(path: str) -> str:
    """The URDF text of a .urdf or .xacro file (xacro expands includes and $(find ...))."""
    if path.endswith(".xacro"):
        import xacro

        return xacro.process_file(path).toxml()
    with open(path, encoding="utf-8") as f:
        return f.read()


def _launch_setup(context, *args, **kwargs):
    from ament_index_python.packages import get_package_share_directory
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    share = get_package_share_directory(PACKAGE)
    robot = LaunchConfiguration("robot").perform(context)
    description_file = LaunchConfiguration("description_file").perform(context)
    config_file = LaunchConfiguration("config_file").perform(context)
    use_sim_time = _as_bool(LaunchConfiguration("use_sim_time").perform(context))
    rviz = _as_bool(LaunchConfiguration("rviz").perform(context))
    with_rsp = _as_bool(LaunchConfiguration("robot_state_publisher").perform(context))
    namespace = LaunchConfiguration("namespace").perform(context)
    log_level = LaunchConfiguration("log_level").perform(context)
    rates = output_rate_parameters(
        LaunchConfiguration("odometry_rate_hz").perform(context),
        LaunchConfiguration("contacts_rate_hz").perform(context),
    )

    if not description_file:
        if robot not in BUNDLED:
            raise RuntimeError(f"unknown robot {robot!r} (known: {sorted(BUNDLED)}); or set description_file")
        description_file = os.path.join(share, "config", "robots", BUNDLED[robot])
    if not config_file:
        candidate = os.path.join(share, "config", f"{robot}.yaml")
        config_file = candidate if os.path.isfile(candidate) else ""

    parameters: list = []
    if config_file:
        parameters.append(config_file)  # parameter file: key /**/robot_state_estimator (any namespace)
    parameters.append(
        {
            "robot": robot,
            "description_file": description_file,
            "config_file": config_file,
            "use_sim_time": use_sim_time,
            **rates,
        }
    )
    actions = [
        Node(
            package=PACKAGE,
            executable="estimator_node",
            name=NODE_NAME,
            namespace=namespace,
            output="screen",
            emulate_tty=True,
            parameters=parameters,
            arguments=["--ros-args", "--log-level", f"{estimator_logger_name(namespace)}:={log_level}"],
        )
    ]
    if with_rsp:
        actions.append(
            Node(
                package="robot_state_publisher",
                executable="robot_state_publisher",
                namespace=namespace,
                output="screen",
                parameters=[
                    {
                        "robot_description": ParameterValue(_urdf_xml(description_file), value_type=str),
                        "use_sim_time": use_sim_time,
                    }
                ],
            )
        )
    if rviz:
        actions.append(
            Node(
                package="rviz2",
                executable="rviz2",
                namespace=namespace,
                output="screen",
                arguments=["-d", os.path.join(share, "config", "estimator.rviz")],
                parameters=[{"use_sim_time": use_sim_time}],
            )
        )
    return actions


def generate_launch_description() -> LaunchDescription:
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text) for name, default, text in ARGUMENTS]
        + [OpaqueFunction(function=_launch_setup)]
    )
