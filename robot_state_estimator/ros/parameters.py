"""The node's ROS parameters: declarations with descriptors, and their mapping onto the core's settings.

Two groups:

- node parameters (``NODE_PARAMETERS``): where the description comes from, frames, topics/QoS, TF and
  diagnostics. Frames, sources and QoS are ``read_only``.
- estimator settings: every field of :class:`~robot_state_estimator.estimation.settings.EstimatorSettings`
  as a dotted name (``ekf.accel_noise_density``, ``contact.on_threshold``), with its default taken from
  the settings file (``config_file``, or ``config/<robot>.yaml`` for a bundled ``robot``) and the
  description of its docstring. The names in ``DYNAMIC_SETTINGS`` (noise values, gates and contact
  thresholds) can be changed while the node runs; the rest is ``read_only``.

A change is validated by building the new settings (``settings_from_flat``); an invalid value is refused
with the ``SettingsError`` message as the reason (e.g. ``contact.off_threshold (9) must be <=
contact.on_threshold (5)``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    ParameterType,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from robot_state_estimator.common.node_ranges import NODE_PARAMETER_RANGES
from robot_state_estimator.estimation.errors import SettingsError
from robot_state_estimator.estimation.settings import (
    ContactSettings,
    DeclaredImuSettings,
    EkfSettings,
    EstimatorSettings,
    JointVelocitySettings,
    flatten_settings,
    load_settings,
)


@dataclass(frozen=True)
class ParamSpec:
    """One node parameter: default, description (with unit), read_only, optional numeric range."""

    default: Any
    description: str
    read_only: bool = True
    range: tuple[float, float] | None = None
    additional_constraints: str = ""


#: Parameters of the node itself (not of the estimator core).
NODE_PARAMETERS: dict[str, ParamSpec] = {
    "robot": ParamSpec(
        "",
        "bundled robot (go1, solo12, anymal_c): its description config/robots/<robot>.urdf.xacro and "
        "settings config/<robot>.yaml; used when robot_description and description_file are empty",
    ),
    "description_file": ParamSpec(
        "", "path of an SDFormat or URDF (xacro) robot description; used when robot_description is empty"
    ),
    "robot_description": ParamSpec(
        "",
        "the robot description XML itself (URDF or SDFormat); when this, description_file and robot are "
        "all empty, the description is taken from the robot_description topic (transient local)",
    ),
    "config_file": ParamSpec(
        "",
        "estimator settings YAML (ROS parameter-file layout) giving the defaults of the ekf.*, contact.* "
        "... parameters; empty = config/<robot>.yaml when robot is set, else the built-in defaults",
    ),
    "odom_frame": ParamSpec("odom", "world-fixed frame of the odometry (header.frame_id, TF parent)"),
    "base_frame": ParamSpec(
        "",
        "child_frame_id of the odometry (twist frame); empty = the base link of the description. The pose and "
        "twist are always the base link's: a frame of the description that does not coincide with it (imu_link, "
        "a foot) is refused at start with its offset; a name the description lacks (base_link) renames the base",
    ),
    "tf_child_frame": ParamSpec(
        "",
        "child frame of the published TF odom_frame -> X; empty = base_frame. Set e.g. base_link_rse to "
        "run side by side with another estimator (the same rule as base_frame: no other frame of the robot)",
    ),
    "publish_tf": ParamSpec(True, "publish the TF odom_frame -> tf_child_frame on /tf", read_only=False),
    "imu_frame_id": ParamSpec(
        "",
        "accepted header.frame_id of imu/data; empty = the names of frames that coincide with the description's "
        "IMU frame (its frame_id, model/link/sensor as gz-sim + ros_gz_bridge publish it, links or SDF frames at "
        "the sensor pose such as a URDF imu_link; not a link in which the IMU is rotated or offset); '*' accepts "
        "any frame_id",
    ),
    "use_foot_forces": ParamSpec(
        False,
        "subscribe to foot_forces (sensor_msgs/JointState: name = foot frames, effort = force in N or raw "
        "sensor counts) as a contact source",
    ),
    "use_foot_wrenches": ParamSpec(
        False,
        "subscribe to one geometry_msgs/WrenchStamped topic per foot (foot_wrench_topics; ros2_control's "
        "force_torque_sensor_broadcaster): the wrench the ground exerts on the foot, in any frame of the description "
        "(header.frame_id), as a contact source and the published contact wrench",
    ),
    "foot_wrench_topics": ParamSpec(
        ["{foot}/wrench"],
        "the foot wrench topics: one pattern where {foot} is replaced by each foot frame name, or one FOOT=TOPIC "
        "entry per foot (e.g. FL_foot=/fl_ft_broadcaster/wrench)",
    ),
    "qos_depth": ParamSpec(
        50, "history depth of the best-effort sensor subscriptions", range=NODE_PARAMETER_RANGES["qos_depth"]
    ),
    "max_time_gap_s": ParamSpec(
        0.5,
        "s, an IMU stamp further ahead of the previous one than this resets the filter (a gap in the data)",
        read_only=False,
        range=NODE_PARAMETER_RANGES["max_time_gap_s"],
    ),
    "diagnostics_period_s": ParamSpec(
        1.0,
        "s, period of /diagnostics (steady clock, also before /clock arrives)",
        range=NODE_PARAMETER_RANGES["diagnostics_period_s"],
    ),
    "odometry_rate_hz": ParamSpec(
        0.0,
        "Hz, maximum rate of odometry and TF: the first estimate of each 1/rate period of the measurement "
        "stamps is published; 0 = every estimate (every IMU sample)",
        read_only=False,
        range=NODE_PARAMETER_RANGES["odometry_rate_hz"],
    ),
    "contacts_rate_hz": ParamSpec(
        0.0,
        "Hz, maximum rate of contact_wrench/<foot> and contact_states: the first joint update of each 1/rate "
        "period of the measurement stamps is published; 0 = every joint update",
        read_only=False,
        range=NODE_PARAMETER_RANGES["contacts_rate_hz"],
    ),
}

#: Estimator settings that may change while the node runs (noise values, gates, contact thresholds).
DYNAMIC_SETTINGS: frozenset[str] = frozenset(
    {
        "ekf.accel_noise_density",
        "ekf.gyro_noise_density",
        "ekf.accel_bias_random_walk",
        "ekf.gyro_bias_random_walk",
        "ekf.foot_velocity_noise",
        "ekf.encoder_velocity_noise",
        "ekf.foot_gate_nis",
        "ekf.zero_rate_noise_rad_s",
        "ekf.static_gyro_threshold_rad_s",
        "ekf.static_joint_velocity_threshold_rad_s",
        "contact.on_threshold",
        "contact.off_threshold",
        "contact.sensor_on_threshold",
        "contact.sensor_off_threshold",
        "contact.kinematic_on_height_m",
        "contact.kinematic_off_height_m",
        "contact.kinematic_on_speed_m_s",
        "contact.kinematic_off_speed_m_s",
        "contact.min_on_duration_s",
        "contact.min_off_duration_s",
    }
)

#: Settings whose default is an empty list: declared with an explicit type (ROS cannot infer it).
_LIST_TYPES: dict[str, Parameter.Type] = {
    "foot_frames": Parameter.Type.STRING_ARRAY,
    "foot_wrench_topics": Parameter.Type.STRING_ARRAY,
    "ekf.initial_position": Parameter.Type.DOUBLE_ARRAY,
    "declared_imu.pose": Parameter.Type.DOUBLE_ARRAY,
}

_PTYPE = {
    bool: ParameterType.PARAMETER_BOOL,
    int: ParameterType.PARAMETER_INTEGER,
    float: ParameterType.PARAMETER_DOUBLE,
    str: ParameterType.PARAMETER_STRING,
}


def _attribute_docs(cls: type) -> dict[str, str]:
    """``name -> text`` from the ``Attributes:`` section of a Google-style class docstring."""
    doc = inspect.getdoc(cls) or ""
    out: dict[str, str] = {}
    section = doc.split("Attributes:", 1)[1] if "Attributes:" in doc else ""
    current = None
    for line in section.splitlines():
        m = re.match(r"^\s{4}(\w+):\s*(.*)$", line)
        if m:
            current = m.group(1)
            out[current] = m.group(2).strip()
        elif current and line.strip():
            out[current] += " " + line.strip()
    return out


def settings_descriptions() -> dict[str, str]:
    """Dotted setting name -> description (from the settings dataclasses' docstrings)."""
    out: dict[str, str] = {}
    for prefix, cls in (
        ("", EstimatorSettings),
        ("ekf.", EkfSettings),
        ("contact.", ContactSettings),
        ("joint_velocity.", JointVelocitySettings),
        ("declared_imu.", DeclaredImuSettings),
    ):
        for name, text in _attribute_docs(cls).items():
            out[prefix + name] = text
    return out


def _descriptor(name: str, value: Any, description: str, *, read_only: bool, rng: Any = None) -> Any:
    d = ParameterDescriptor(name=name, description=description, read_only=read_only)
    if name in _LIST_TYPES:
        d.type = int(_LIST_TYPES[name])
    elif type(value) in _PTYPE:
        d.type = _PTYPE[type(value)]
    if rng is not None:
        lo, hi = rng
        if isinstance(value, bool):
            pass
        elif isinstance(value, int):
            d.integer_range = [IntegerRange(from_value=int(lo), to_value=int(hi), step=1)]
        elif isinstance(value, float):
            d.floating_point_range = [FloatingPointRange(from_value=float(lo), to_value=float(hi), step=0.0)]
    return d


def declare_node_parameters(node: Node) -> dict[str, Any]:
    """Declare ``NODE_PARAMETERS`` on ``node``; return their values (overrides applied)."""
    values = {}
    for name, spec in NODE_PARAMETERS.items():
        desc = _descriptor(name, spec.default, spec.description, read_only=spec.read_only, rng=spec.range)
        values[name] = node.declare_parameter(name, spec.default, desc).value
        if isinstance(spec.default, list):
            values[name] = list(values[name])
    return values


def settings_file_for(robot: str, config_file: str) -> Path | None:
    """The settings YAML to use: ``config_file`` when given, else ``config/<robot>.yaml`` when it exists."""
    if config_file:
        return Path(config_file)
    if robot:
        from robot_state_estimator.common.paths import config_dir

        try:
            path = config_dir() / f"{robot}.yaml"
        except FileNotFoundError:
            return None
        return path if path.is_file() else None
    return None


def base_settings(robot: str, config_file: str) -> EstimatorSettings:
    """Defaults of the settings parameters: the settings file's values over the built-in defaults.

    Raises:
        SettingsError: the file is unreadable or invalid (the message starts with the file's path and names the
            key).
    """
    path = settings_file_for(robot, config_file)
    if path is None:
        return EstimatorSettings()
    try:
        return load_settings(path, ignore=NODE_PARAMETERS)
    except SettingsError as exc:
        if str(path) in str(exc):
            raise
        raise SettingsError(f"{path}: {exc}") from exc


def declare_settings_parameters(node: Node, base: EstimatorSettings) -> dict[str, Any]:
    """Declare one parameter per setting (defaults from ``base``); return name -> value (overrides applied).

    An empty list default (``foot_frames``: empty = from the description) is declared with its type and the
    value ``[]`` (see :func:`_declare_empty_list`): every parameter has a value, so a ``GetParameters``
    request (``ros2 param get``/``dump``) answers for all names.
    """
    docs = settings_descriptions()
    values: dict[str, Any] = {}
    for name, default in flatten_settings(base).items():
        dynamic = name in DYNAMIC_SETTINGS
        rng = (0.0, 1.0e6) if dynamic and isinstance(default, float) else None
        desc = _descriptor(name, default, docs.get(name, name), read_only=not dynamic, rng=rng)
        if isinstance(default, list) and not default:
            values[name] = _declare_empty_list(node, name, desc)
        else:
            if name in _LIST_TYPES and _LIST_TYPES[name] == Parameter.Type.DOUBLE_ARRAY:
                default = [float(v) for v in default]
            values[name] = node.declare_parameter(name, default, desc).value
        if isinstance(values[name], (list, tuple)) or type(values[name]).__name__ == "array":
            values[name] = list(values[name])
    return values


def _declare_empty_list(node: Node, name: str, desc: ParameterDescriptor) -> list[Any]:
    """Declare the list parameter ``name`` (type from ``_LIST_TYPES``, default string array) with the value
    ``[]`` unless overridden; return its value.

    rclpy infers the type of a default value, and ``[]`` reads as a byte array; declared with its type
    only, the parameter is *unset*, and rclpy's ``GetParameters`` service answers a request naming an unset
    parameter with no values at all (for every name asked). So it is declared writable and typed, set to a
    typed ``[]`` when no override gave it a value, then given its real descriptor (``set_descriptor``:
    read-only when ``desc`` is) -- all before the node's parameter callback exists.
    """
    ptype = _LIST_TYPES.get(name, Parameter.Type.STRING_ARRAY)
    desc.type = int(ptype)
    writable = ParameterDescriptor(name=name, type=desc.type, description=desc.description, read_only=False)
    param: Parameter[Any] = node.declare_parameter(name, ptype, writable)
    if param.value is None:
        node.set_parameters([Parameter(name, ptype, [])])
    if desc.read_only:
        node.set_descriptor(name, desc)
    value = node.get_parameter(name).value
    return list(value) if value is not None else []


def parameter_values(params: Mapping[str, Any]) -> dict[str, Any]:
    """``rclpy.Parameter`` list/dict -> plain name -> value (arrays as lists)."""
    out = {}
    for name, p in params.items():
        value = p.value if isinstance(p, Parameter) else p
        if value is not None and not isinstance(value, (bool, int, float, str)):
            value = list(value)
        out[name] = value
    return out


def settings_field_names() -> set[str]:
    """All dotted setting names."""
    return set(flatten_settings(EstimatorSettings()))


__all__ = [
    "DYNAMIC_SETTINGS",
    "NODE_PARAMETERS",
    "ParamSpec",
    "base_settings",
    "declare_node_parameters",
    "declare_settings_parameters",
    "parameter_values",
    "settings_descriptions",
    "settings_field_names",
    "settings_file_for",
]
