"""Launch the robot_state_estimator node (optionally robot_state_publisher and RViz).

    ros2 launch robot_state_estimator estimator.launch.py robot:=go1
    ros2 launch robot_state_estimator estimator.launch.py robot:=go1 use_sim_time:=true rviz:=true
    ros2 launch robot_state_estimator estimator.launch.py description_file:=/path/robot.urdf \
        config_file:=/path/settings.yaml robot_state_publisher:=true
    ros2 launch robot_state_estimator estimator.launch.py robot:=go1 params_file:=/path/params.yaml

Arguments (``ros2 launch robot_state_estimator estimator.launch.py --show-args``):
    robot: bundled robot (go1, solo12, anymal_c): its description (config/robots/<robot>.urdf.xacro, unless
        description_file is set) and its settings (config/<robot>.yaml). Empty (the default): the settings of the
        bundled robot whose model the description_file is (by model name), else the built-in defaults (a launch
        log line says which); without description_file either, the node waits for the description on the
        robot_description topic. A robot with another model than description_file's keeps the node's
        [robot_mismatch] warning (its settings are tuned for another robot).
    description_file: URDF/xacro or SDFormat description; overrides the bundled one.
    config_file: estimator settings YAML (ROS parameter-file layout); default config/<robot>.yaml.
    params_file: a ROS 2 parameter file applied last, over everything above (nav2's and robot_localization's
        name): e.g. odom_frame, the topics' QoS depth, settings; its /**: or robot_state_estimator: sections.
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

Errors, before anything is started: an argument this file does not declare (a misspelt name would otherwise be
ignored; checked on the command line of ``ros2 launch robot_state_estimator estimator.launch.py``: launch gives an
included file no way to tell its own arguments from the includer's), an unknown robot, a malformed rate,
``rviz:=true`` without rviz2 or ``robot_state_publisher:=true`` without robot_state_publisher installed.

The launch and launch_ros imports are inside the functions that use them, so that the plain functions here
(estimator_logger_name, output_rate_parameters, unknown_arguments, robot_of_model) can be imported and tested
without a ROS 2 launch install.
"""

from __future__ import annotations

import difflib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launch import LaunchDescription

PACKAGE = "robot_state_estimator"
NODE_NAME = "robot_state_estimator"
BUNDLED = {"go1": "go1.urdf.xacro", "solo12": "solo12.urdf.xacro", "anymal_c": "anymal_c.urdf.xacro"}

ARGUMENTS = (
    ("robot", "", "bundled robot: go1, solo12 or anymal_c; empty = from description_file's model, else defaults"),
    ("description_file", "", "robot description (URDF, xacro or SDFormat); empty = the bundled robot"),
    ("config_file", "", "estimator settings YAML; empty = config/<robot>.yaml"),
    ("params_file", "", "ROS 2 parameter file applied last (any node parameter); empty = none"),
    ("use_sim_time", "false", "use /clock (bag replay)"),
    ("rviz", "false", "start RViz with config/estimator.rviz"),
    ("robot_state_publisher", "false", "start robot_state_publisher on the description (URDF/xacro)"),
    ("namespace", "", "namespace of the estimator node"),
    ("log_level", "info", "log level of the estimator node"),
    ("odometry_rate_hz", "", "Hz, maximum odometry and TF rate (e.g. 100 with RViz); empty = the node's default"),
    ("contacts_rate_hz", "", "Hz, maximum wrench and contact-state rate (e.g. 50 with RViz); empty = the default"),
)


def unknown_arguments(given: list[str], declared: list[str] | None = None) -> str:
    """The error message for the launch-argument names in ``given`` that this file does not declare (with the
    closest declared names), or "" when all are declared. ``declared`` defaults to :data:`ARGUMENTS`."""
    names = [a[0] for a in ARGUMENTS] if declared is None else declared
    unknown = [g for g in dict.fromkeys(given) if g not in names]
    if not unknown:
        return ""
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name, names, n=2, cutoff=0.6)
        parts.append(f"{name!r}" + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""))
    return (
        f"unknown launch argument{'s' if len(parts) > 1 else ''} of estimator.launch.py: {', '.join(parts)}; "
        f"its arguments are {', '.join(names)} (ros2 launch robot_state_estimator estimator.launch.py --show-args)"
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
    """The URDF text of a .urdf or .xacro file. xacro runs as the node runs it (``description.xml_input``:
    ``$(find pkg)`` resolves the packages the node finds, example-robot-data included)."""
    from pathlib import Path

    if path.endswith(".xacro"):
        from robot_state_estimator.description.xml_input import expand_xacro

        return expand_xacro(Path(path).read_text(encoding="utf-8"), Path(path))
    return Path(path).read_text(encoding="utf-8")


def _model_name(path: str) -> str | None:
    """The model name of a description file: ``<robot name>`` of a URDF/xacro, the first ``<model name>`` of an
    SDFormat file; None when it cannot be read."""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(_urdf_xml(path))
    except Exception:  # unreadable or malformed: the node reports it, with the reason
        return None
    if root.tag == "sdf":
        model = root.find("model")
        return model.get("name") if model is not None else None
    return root.get("name")


def robot_of_model(model_name: str | None, share: str) -> str:
    """The bundled robot whose description's model is ``model_name`` (the root ``name`` of
    ``<share>/config/robots/<robot>.urdf.xacro``), or "" when none is."""
    if not model_name:
        return ""
    for robot, file_name in BUNDLED.items():
        if _model_name(os.path.join(share, "config", "robots", file_name)) == model_name:
            return robot
    return ""


def _given_arguments(context) -> list[str]:
    """Names of the launch arguments given on the command line (``name:=value``) when this file is the one
    ``ros2 launch`` runs (not when another launch file, whose arguments they are, includes it)."""
    launched = [a for a in sys.argv[1:] if not a.startswith("-") and ":=" not in a]
    if not any(os.path.basename(a) == "estimator.launch.py" for a in launched):
        return []
    return [a.split(":=", 1)[0] for a in getattr(context, "argv", None) or [] if ":=" in a]


def _require_package(name: str, argument: str) -> None:
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix(name)
    except (PackageNotFoundError, LookupError, ValueError, OSError):
        raise RuntimeError(
            f"{argument}:=true, but the package {name!r} is not installed (not in AMENT_PREFIX_PATH): nothing was "
            f"started; install ros-<distro>-{name.replace('_', '-')} or set {argument}:=false"
        ) from None


def _launch_setup(context, *args, **kwargs):
    from ament_index_python.packages import get_package_share_directory
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    problem = unknown_arguments(_given_arguments(context))
    if problem:
        raise RuntimeError(problem)
    share = get_package_share_directory(PACKAGE)
    robot = LaunchConfiguration("robot").perform(context).strip()
    description_file = LaunchConfiguration("description_file").perform(context)
    config_file = LaunchConfiguration("config_file").perform(context)
    params_file = LaunchConfiguration("params_file").perform(context)
    use_sim_time = _as_bool(LaunchConfiguration("use_sim_time").perform(context))
    rviz = _as_bool(LaunchConfiguration("rviz").perform(context))
    with_rsp = _as_bool(LaunchConfiguration("robot_state_publisher").perform(context))
    namespace = LaunchConfiguration("namespace").perform(context)
    log_level = LaunchConfiguration("log_level").perform(context)
    rates = output_rate_parameters(
        LaunchConfiguration("odometry_rate_hz").perform(context),
        LaunchConfiguration("contacts_rate_hz").perform(context),
    )
    # every check before the first action: a failure starts nothing (no estimator left behind)
    if rviz:
        _require_package("rviz2", "rviz")
    if with_rsp:
        _require_package("robot_state_publisher", "robot_state_publisher")
    for name, path in (("description_file", description_file), ("config_file", config_file),
                       ("params_file", params_file)):  # fmt: skip
        if path and not os.path.isfile(path):
            raise RuntimeError(f"launch argument {name}: no such file {path!r}")
    if robot and robot not in BUNDLED:
        raise RuntimeError(f"unknown robot {robot!r} (known: {sorted(BUNDLED)}); or set description_file")

    from launch.actions import LogInfo

    notes = []
    if robot and not description_file:
        description_file = os.path.join(share, "config", "robots", BUNDLED[robot])
    elif not robot and description_file:
        model = _model_name(description_file)
        robot = robot_of_model(model, share)
        if robot:
            notes.append(f"description_file's model {model!r} is the bundled robot {robot!r}: its settings are used")
        elif not config_file:
            notes.append(
                f"description_file's model {model!r} is no bundled robot: the estimator's built-in default settings "
                "are used (set config_file to settings tuned for this robot)"
            )
    elif not robot and not description_file:
        notes.append("no robot and no description_file: the estimator waits for the robot_description topic")
    if with_rsp and not description_file:
        raise RuntimeError("robot_state_publisher:=true needs a description: set robot or description_file")

    parameters: list = []
    robot_config = os.path.join(share, "config", f"{robot}.yaml") if robot else ""
    if config_file:
        parameters.append(config_file)  # parameter file: key /**/robot_state_estimator (any namespace)
    elif robot_config and os.path.isfile(robot_config):
        parameters.append(robot_config)  # the node reads it as config/<robot>.yaml itself (config_file stays empty,
        # so its robot-mismatch warning stays on)
    values = {"robot": robot, "description_file": description_file, "use_sim_time": use_sim_time, **rates}
    if config_file:
        values["config_file"] = config_file
    parameters.append(values)
    if params_file:
        parameters.append(params_file)  # last: over everything above
    actions = [LogInfo(msg=f"[estimator.launch.py] {n}") for n in notes]
    actions.append(
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
    )
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
