"""The node's ROS parameters: declarations with descriptors, and their mapping onto the core's settings.

Two groups:

- node parameters (the table ``io.node_params.NODE_PARAMS``, ROS-free: type, default, unit, range, read-only and
  description of each): where the description comes from, frames, topics/QoS, TF and diagnostics. Frames,
  sources and QoS are ``read_only``.
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
from collections.abc import Mapping, Sequence
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

from robot_state_estimator.common.names import close_names, did_you_mean
from robot_state_estimator.estimation.errors import SettingsError
from robot_state_estimator.estimation.settings import (
    ContactSettings,
    DeclaredImuSettings,
    EkfSettings,
    EstimatorSettings,
    JointVelocitySettings,
)
from robot_state_estimator.estimation.settings_loading import flatten_settings, load_settings, settings_from_flat
from robot_state_estimator.io.node_params import NODE_PARAMS, NodeParam, default_value
from robot_state_estimator.ros.rclpy_compat import parameter_overrides

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
    "ekf.initial_position": Parameter.Type.DOUBLE_ARRAY,
    "declared_imu.pose": Parameter.Type.DOUBLE_ARRAY,
}

#: ``io.node_params.ParamType`` -> ROS parameter type.
_NODE_PTYPE = {
    "bool": ParameterType.PARAMETER_BOOL,
    "integer": ParameterType.PARAMETER_INTEGER,
    "double": ParameterType.PARAMETER_DOUBLE,
    "string": ParameterType.PARAMETER_STRING,
    "string_array": ParameterType.PARAMETER_STRING_ARRAY,
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


def node_descriptor(name: str, param: NodeParam) -> ParameterDescriptor:
    """The ROS descriptor of node parameter ``name`` from its row of ``io.node_params.NODE_PARAMS``: type,
    description (unit first), ``read_only`` and, for a number with a range, its ``integer_range`` or
    ``floating_point_range`` (inclusive; rclpy refuses a value outside it)."""
    d = ParameterDescriptor(name=name, description=param.description, read_only=param.read_only)
    d.type = _NODE_PTYPE[param.type]
    if param.range is not None:
        lo, hi = param.range
        if param.type == "integer":
            d.integer_range = [IntegerRange(from_value=int(lo), to_value=int(hi), step=1)]
        elif param.type == "double":
            d.floating_point_range = [FloatingPointRange(from_value=float(lo), to_value=float(hi), step=0.0)]
    return d


def declare_node_parameters(node: Node) -> dict[str, Any]:
    """Declare the node parameters (``io.node_params.NODE_PARAMS``) on ``node``; return their values (overrides
    applied; string arrays as lists)."""
    values: dict[str, Any] = {}
    for name, param in NODE_PARAMS.items():
        values[name] = node.declare_parameter(name, default_value(name), node_descriptor(name, param)).value
        if param.type == "string_array":
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
        return load_settings(path, ignore=NODE_PARAMS)
    except SettingsError as exc:
        if str(path) in str(exc):
            raise
        raise SettingsError(f"{path}: {exc}") from exc


def settings_source_text(settings_file: Path | None, base: EstimatorSettings, values: Mapping[str, Any]) -> str:
    """Where the estimator settings came from, for the start-up line: the settings file (or the built-in defaults)
    and the settings that node parameters (``-p``, ``--params-file``, the launch file) changed from it.

    Args:
        settings_file: the file that gave the defaults (:func:`settings_file_for`), or None.
        base: the settings from it (:func:`base_settings`).
        values: the declared settings parameters' values (:func:`declare_settings_parameters`).

    Returns:
        e.g. ``config/go1.yaml`` or ``built-in defaults + 2 set by parameters (ekf.foot_gate_nis, imu_name)``.
    """
    source = str(settings_file) if settings_file is not None else "built-in defaults"
    defaults = flatten_settings(base)
    changed = sorted(name for name, value in values.items() if name in defaults and value != defaults[name])
    if not changed:
        return source
    shown = ", ".join(changed[:6]) + (", ..." if len(changed) > 6 else "")
    return f"{source} + {len(changed)} set by parameters ({shown})"


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


def updated_settings(values: Mapping[str, Any], params: list[Any]) -> tuple[dict[str, Any], EstimatorSettings] | None:
    """The settings after a parameter change: ``(name -> value, EstimatorSettings)``, or None when ``params``
    (``rclpy.Parameter``s being set) change no setting.

    Args:
        values: the current settings parameters, name -> value.
        params: the parameters being set (node parameters among them are left out).

    Raises:
        SettingsError: the new values do not make valid settings (the message is the refusal's reason).
    """
    updates = {param.name: param.value for param in params if param.name in values}
    if not updates:
        return None
    flat = dict(values)
    flat.update(parameter_values(updates))
    return flat, settings_from_flat(flat)


def unknown_overrides(node: Node) -> dict[str, list[str]]:
    """Parameter overrides given to ``node`` (``-p``, ``--params-file`` sections that apply to it,
    ``parameter_overrides``) that match no declared parameter, each with the closest declared names
    (``common.names.close_names``, at most 3); empty when rclpy keeps its overrides elsewhere
    (``rclpy_compat.parameter_overrides``)."""
    overrides = parameter_overrides(node)
    if overrides is None:
        return {}
    known = list(node.list_parameters([], 0).names)
    known_set = set(known)
    return {name: close_names(name, known) for name in sorted(str(n) for n in overrides) if name not in known_set}


def unknown_overrides_warning(unknown: Mapping[str, list[str]]) -> str:
    """The start-up warning naming the overrides that match no parameter (:func:`unknown_overrides`), "" for none:
    a misspelt name is otherwise ignored without a word. A warning, not an error: a ``/**:`` params file
    legitimately carries the parameters of other nodes."""
    if not unknown:
        return ""
    parts = [f"{name!r}{did_you_mean(close)}" for name, close in unknown.items()]
    return (
        f"[unknown_parameter] ignored: {', '.join(parts)}: no parameter of this node has "
        f"{'this name' if len(parts) == 1 else 'these names'} (from -p or a --params-file section that "
        "applies to this node; fine for a parameter meant for another node). The parameters are listed in "
        'README.md, "Parameters", and by ros2 param list'
    )


def undeclared_set_warning(names: Sequence[str], known: Sequence[str]) -> str:
    """The warning for a live set (``ros2 param set``, a ``SetParameters`` request) of names that are no parameter
    of this node, each with the closest declared names; "" when every name is known. rclpy refuses such a set
    itself, with a reason that lists no name (``Invalid access to undeclared parameter(s): []``: its check consumes
    the names before listing them), so the node's log says which name and what was meant."""
    known_set = set(known)
    unknown = [n for n in names if n not in known_set]
    if not unknown:
        return ""
    parts = [f"{n!r}{did_you_mean(close_names(n, list(known)))}" for n in unknown]
    return (
        f"[unknown_parameter] cannot set {', '.join(parts)}: no parameter of this node has "
        f"{'this name' if len(parts) == 1 else 'these names'}; ros2 param list shows them"
    )


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
    "base_settings",
    "declare_node_parameters",
    "declare_settings_parameters",
    "node_descriptor",
    "parameter_values",
    "settings_descriptions",
    "settings_field_names",
    "settings_file_for",
    "undeclared_set_warning",
    "unknown_overrides",
    "unknown_overrides_warning",
    "updated_settings",
]
