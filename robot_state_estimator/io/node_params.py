"""The node's own parameters, written once and without ROS: name, type, default, unit, range, read-only, meaning.

Everything else is made from this table:

- the node's parameter declarations and descriptors (``ros/parameters.py``: type, description, ``read_only``,
  ``integer_range`` / ``floating_point_range``, enforced by rclpy when a value is set);
- the adapter rules' settings (``io/stream.AdapterSettings``: its fields are the parameters marked ``adapter``,
  with their defaults);
- replay's node options (``tools/replay.py``: what ``--set`` and a settings file may give, checked by
  :func:`value_problem` as the node's descriptors check them; the others are refused with ``replay_note``);
- README's node-parameter table (``scripts/gen_param_docs.py``, checked by ``test/test_docs.py``; the estimator
  settings' table is in docs/PARAMETERS.md).

The estimator's own settings (``ekf.*``, ``contact.*``, ...) are not here: they are the fields of
``estimation.settings.EstimatorSettings``, declared by ``ros/parameters.py`` from those dataclasses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

#: Parameter types, as ROS names them (``rcl_interfaces/ParameterType``): ``bool``, ``integer``, ``double``,
#: ``string``, ``string_array``.
ParamType = Literal["bool", "integer", "double", "string", "string_array"]
#: A parameter value as the table gives it (a string array as a tuple; ROS and YAML give lists).
ParamValue = bool | int | float | str | tuple[str, ...]


@dataclass(frozen=True)
class NodeParam:
    """One parameter of the node.

    Attributes:
        type: its ROS type (``ParamType``); the value is checked against it (an integer for a double is refused
            by rclpy: ``100.0``, not ``100``).
        default: its value when not given (a string array as a tuple).
        text: what it does, without the unit.
        unit: the unit of a number (``s``, ``Hz``), "" for none.
        range: ``(lowest, highest)`` accepted value of a number, both ends inclusive; None = any.
        read_only: False when it may be changed while the node runs (``ros2 param set``).
        non_empty: a string that must not be empty (the odometry's and the TF's parent frame).
        frame: a string naming a frame (replay checks that it is a string).
        adapter: a field of ``io.stream.AdapterSettings`` (the rules the node and replay share).
        replay_note: "" when replay uses it (``--set NAME=VALUE``, a settings file); otherwise why not and what
            to use instead (replay refuses it in ``--set`` with that note and ignores it in a settings file).
    """

    type: ParamType
    default: ParamValue
    text: str
    unit: str = ""
    range: tuple[float, float] | None = None
    read_only: bool = True
    non_empty: bool = False
    frame: bool = False
    adapter: bool = False
    replay_note: str = ""

    @property
    def description(self) -> str:
        """The text with its unit first (``s, an IMU stamp ...``): the ROS descriptor's description."""
        return f"{self.unit}, {self.text}" if self.unit else self.text

    @property
    def live(self) -> bool:
        """May change while the node runs."""
        return not self.read_only


#: The node's parameters, in the order the node declares them and README lists them.
NODE_PARAMS: dict[str, NodeParam] = {
    "robot": NodeParam(
        "string",
        "",
        "bundled robot (go1, solo12, anymal_c): its description config/robots/<robot>.urdf.xacro and "
        "settings config/<robot>.yaml; used when robot_description and description_file are empty",
        replay_note="use --robot",
    ),
    "description_file": NodeParam(
        "string",
        "",
        "path of an SDFormat or URDF (xacro) robot description; used when robot_description is empty",
        replay_note="use --description",
    ),
    "robot_description": NodeParam(
        "string",
        "",
        "the robot description XML itself (URDF or SDFormat); when this, description_file and robot are "
        "all empty, the description is taken from the robot_description topic (transient local)",
        replay_note="use --description",
    ),
    "config_file": NodeParam(
        "string",
        "",
        "estimator settings YAML (ROS parameter-file layout) giving the defaults of the ekf.*, contact.* "
        "... parameters; empty = config/<robot>.yaml when robot is set, else the built-in defaults",
        replay_note="use --config",
    ),
    "odom_frame": NodeParam(
        "string",
        "odom",
        "world-fixed frame of the odometry (header.frame_id, TF parent)",
        non_empty=True,
        frame=True,
    ),
    "base_frame": NodeParam(
        "string",
        "",
        "child_frame_id of the odometry (twist frame); empty = the base link of the description. The pose and "
        "twist are always the base link's: a frame of the description that does not coincide with it (imu_link, "
        "a foot) is refused at start with its offset; a name the description lacks (base_link) renames the base",
        frame=True,
    ),
    "tf_child_frame": NodeParam(
        "string",
        "",
        "child frame of the published TF odom_frame -> X; empty = base_frame. Set e.g. base_link_rse to "
        "run side by side with another estimator (the same rule as base_frame: no other frame of the robot)",
        frame=True,
    ),
    "publish_tf": NodeParam(
        "bool",
        True,
        "publish the TF odom_frame -> tf_child_frame on /tf",
        read_only=False,
        replay_note="--output-topics chooses what the output bag gets",
    ),
    "imu_frame_id": NodeParam(
        "string",
        "",
        "accepted header.frame_id of imu/data; empty = the names of frames that coincide with the description's "
        "IMU frame (its frame_id, model/link/sensor as gz-sim + ros_gz_bridge publish it, links or SDF frames at "
        "the sensor pose such as a URDF imu_link; not a link in which the IMU is rotated or offset); '*' accepts "
        "any frame_id",
        frame=True,
        adapter=True,
    ),
    "use_foot_forces": NodeParam(
        "bool",
        False,
        "subscribe to foot_forces (sensor_msgs/JointState: name = foot frames, effort = force in N or raw "
        "sensor counts) as a contact source",
    ),
    "use_foot_wrenches": NodeParam(
        "bool",
        False,
        "subscribe to one geometry_msgs/WrenchStamped topic per foot (foot_wrench_topics; ros2_control's "
        "force_torque_sensor_broadcaster): the wrench the ground exerts on the foot, in any frame of the description "
        "(header.frame_id), as a contact source and the published contact wrench",
    ),
    "foot_wrench_topics": NodeParam(
        "string_array",
        ("{foot}/wrench",),
        "the foot wrench topics: one pattern where {foot} is replaced by each foot frame name, or one FOOT=TOPIC "
        "entry per foot (e.g. FL_foot=/fl_ft_broadcaster/wrench)",
    ),
    "qos_depth": NodeParam(
        "integer",
        50,
        "history depth of the best-effort sensor subscriptions",
        range=(1, 10000),
        replay_note="replay reads every message of the bag",
    ),
    "max_time_gap_s": NodeParam(
        "double",
        0.5,
        "an IMU stamp further ahead of the previous one than this resets the filter (a gap in the data)",
        unit="s",
        range=(0.001, 3600.0),
        read_only=False,
        adapter=True,
    ),
    "diagnostics_period_s": NodeParam(
        "double",
        1.0,
        "period of /diagnostics (steady clock, also before /clock arrives)",
        unit="s",
        range=(0.05, 60.0),
        replay_note="replay publishes no diagnostics",
    ),
    "odometry_rate_hz": NodeParam(
        "double",
        0.0,
        "maximum rate of odometry and TF: the first estimate of each 1/rate period of the measurement "
        "stamps is published; 0 = every estimate (every IMU sample)",
        unit="Hz",
        range=(0.0, 10000.0),
        read_only=False,
        adapter=True,
    ),
    "contacts_rate_hz": NodeParam(
        "double",
        0.0,
        "maximum rate of contact_wrench/<foot> and contact_states: the first joint update of each 1/rate "
        "period of the measurement stamps is published; 0 = every joint update",
        unit="Hz",
        range=(0.0, 10000.0),
        read_only=False,
        adapter=True,
    ),
}


def default_value(name: str) -> bool | int | float | str | list[str]:
    """The default of parameter ``name`` as ROS and YAML give values (a string array as a list).

    Raises:
        KeyError: no node parameter has this name.
    """
    value = NODE_PARAMS[name].default
    return list(value) if isinstance(value, tuple) else value


def integer_default(name: str) -> int:
    """The default of the integer parameter ``name``.

    Raises:
        KeyError: no node parameter has this name; TypeError: it is not an integer parameter.
    """
    value = NODE_PARAMS[name].default
    if NODE_PARAMS[name].type != "integer" or not isinstance(value, int):
        raise TypeError(f"{name} is a {NODE_PARAMS[name].type} parameter, not an integer")
    return value


def string_array_default(name: str) -> tuple[str, ...]:
    """The default of the string-array parameter ``name``.

    Raises:
        KeyError: no node parameter has this name; TypeError: it is not a string array.
    """
    value = NODE_PARAMS[name].default
    if not isinstance(value, tuple):
        raise TypeError(f"{name} is a {NODE_PARAMS[name].type} parameter, not a string array")
    return value


#: Parameters replay uses (``--set``, settings files), in table order.
REPLAY_PARAMETERS: tuple[str, ...] = tuple(name for name, p in NODE_PARAMS.items() if not p.replay_note)
#: Parameters of the node only, each with what replay uses instead.
NODE_ONLY_PARAMETERS: dict[str, str] = {name: p.replay_note for name, p in NODE_PARAMS.items() if p.replay_note}
#: Parameters that are ``io.stream.AdapterSettings`` fields.
ADAPTER_PARAMETERS: tuple[str, ...] = tuple(name for name, p in NODE_PARAMS.items() if p.adapter)
#: Parameters that must not be empty.
NON_EMPTY_PARAMETERS: tuple[str, ...] = tuple(name for name, p in NODE_PARAMS.items() if p.non_empty)


def value_problem(name: str, value: object) -> str:
    """What is wrong with ``value`` for parameter ``name``, as the node's descriptors and types would refuse it
    (without ROS: replay's check of ``--set`` and of settings files), or "" when it is fine.

    A number must be a finite int or float (not a bool) inside the range; a frame a string, not empty where the
    table says so; a bool a bool; a string array a non-empty list of strings. Integers are accepted for doubles
    (YAML's ``2`` for ``2.0``), as replay always has.

    Raises:
        KeyError: no node parameter has this name.
    """
    p = NODE_PARAMS[name]
    if p.type in ("integer", "double"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name} must be a number, got {value!r}"
        if not math.isfinite(value):
            return f"{name} must be finite, got {value!r}"
        if p.range is not None:
            lo, hi = p.range
            if not lo <= value <= hi:
                return f"{name} = {value!r} is outside its range [{lo:g}, {hi:g}]"
    elif p.type == "string":
        if not isinstance(value, str):
            what = "a frame name (a string)" if p.frame else "a string"
            return f"{name} must be {what}, got {value!r}"
        if p.non_empty and not value:
            return f"{name} must not be empty"
    elif p.type == "bool":
        if not isinstance(value, bool):
            return f"{name} must be true or false, got {value!r}"
    elif not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        return f"{name} must be a list of topic names, got {value!r}"
    return ""


__all__ = [
    "ADAPTER_PARAMETERS",
    "NODE_ONLY_PARAMETERS",
    "NODE_PARAMS",
    "NON_EMPTY_PARAMETERS",
    "REPLAY_PARAMETERS",
    "NodeParam",
    "ParamType",
    "ParamValue",
    "default_value",
    "integer_default",
    "string_array_default",
    "value_problem",
]
