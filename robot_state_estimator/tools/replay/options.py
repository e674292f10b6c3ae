"""What replay reads and how it behaves: the node parameters it shares with the node (names, defaults, checks),
:class:`ReplayOptions`, the settings file and ``--set`` overrides, and the description and settings it resolves."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from robot_state_estimator.common.names import close_names, did_you_mean
from robot_state_estimator.io.node_params import (
    NODE_ONLY_PARAMETERS,
    NODE_PARAMS,
    REPLAY_PARAMETERS,
    default_value,
    value_problem,
)
from robot_state_estimator.tools.replay.errors import ReplayError

if TYPE_CHECKING:  # imported where used: estimation loads numba
    from robot_state_estimator.estimation.settings import EstimatorSettings

#: Node parameters that may share a settings file with the estimator settings (``io.node_params.NODE_PARAMS``).
NODE_PARAMETER_NAMES: tuple[str, ...] = tuple(NODE_PARAMS)
#: Defaults of the node parameters replay uses (``io.node_params.REPLAY_PARAMETERS``).
NODE_DEFAULTS: dict[str, Any] = {name: default_value(name) for name in REPLAY_PARAMETERS}


def check_node_params(params: dict[str, Any], source: str) -> None:
    """Check node-parameter values as the node's parameter descriptors do (``io.node_params.value_problem``: the
    same table), plus the non-empty frames and the types.

    Args:
        params: node parameter name -> value (YAML-typed).
        source: where they come from, for the message (``--set``, a settings file).

    Raises:
        ReplayError: a number outside its range, not a number or not finite; an empty ``odom_frame``; a frame
            that is not a string; ``use_foot_forces`` that is not a boolean.
    """
    for name, value in params.items():
        problem = value_problem(name, value) if name in NODE_PARAMS else ""
        if problem:
            raise ReplayError(f"{source}: {problem}")


#: Output topic groups of replay's bag (``--output-topics``), in the order they are written for an estimate:
#: ``odometry`` (nav_msgs/Odometry), ``tf`` (``/tf``, tf2_msgs/TFMessage), ``wrenches``
#: (``contact_wrench/<foot>``, geometry_msgs/WrenchStamped), ``contacts`` (``contact_states``,
#: diagnostic_msgs/DiagnosticArray).
OUTPUT_GROUPS: tuple[str, ...] = ("odometry", "tf", "wrenches", "contacts")
#: Chunk compression of the output bag by default (``--output-compression``).
DEFAULT_OUTPUT_COMPRESSION = "zstd"


@dataclass(frozen=True)
class ReplayOptions:
    """What to read and how to behave.

    Attributes:
        imu_topic, joints_topic, foot_forces_topic: input topics.
        use_foot_forces: "auto" (when the topic is in the bag), "yes" or "no".
        use_foot_wrenches: foot wrench sensors (``geometry_msgs/WrenchStamped``, one topic per foot, named by the
            node parameter ``foot_wrench_topics``; relative names are taken from the root): "auto" (when the bag
            has every foot's topic, or the node parameter ``use_foot_wrenches`` is true), "yes" or "no".
        contact_schedule_topic: the contact schedule (``sensor_msgs/JointState``), read when ``contact.source`` is
            ``schedule``.
        node_params: node parameters (``NODE_DEFAULTS`` keys) as the node would have them.
        progress: show a tqdm progress bar (None = when stderr is a terminal and the input is long).
        output_topics: the groups of ``OUTPUT_GROUPS`` the output bag gets (when one is written).
        output_compression: chunk compression of the output bag, ``"zstd"`` or ``"none"``.
        bulk_decode: decode the input types in bulk (``io.cdr``; rosbags for the rest and for what it refuses,
            noted in ``ReplayResult.bulk_refused``); False: rosbags for every message (the same messages).
    """

    imu_topic: str = "/imu/data"
    joints_topic: str = "/joint_states"
    foot_forces_topic: str = "/foot_forces"
    use_foot_forces: str = "auto"
    use_foot_wrenches: str = "auto"
    contact_schedule_topic: str = "/contact_schedule"
    node_params: dict[str, Any] = field(default_factory=lambda: dict(NODE_DEFAULTS))
    progress: bool | None = None
    output_topics: tuple[str, ...] = OUTPUT_GROUPS
    output_compression: str = DEFAULT_OUTPUT_COMPRESSION
    bulk_decode: bool = True


# --------------------------------------------------------------------------------------------- set-up
def split_config(path: str | Path | None) -> tuple[EstimatorSettings, dict[str, Any]]:
    """Estimator settings and node parameters from a settings YAML (ROS parameter-file layout).

    Returns:
        ``(EstimatorSettings, node parameters found in the file)``.

    Raises:
        ``estimation.errors.SettingsError``: the file cannot be read; ReplayError: an invalid setting (the message
        starts with the file) or a node parameter with a bad value (:func:`check_node_params`).
    """
    from robot_state_estimator.estimation.errors import SettingsError
    from robot_state_estimator.estimation.settings_loading import load_settings

    if path is None:
        return load_settings(None), {}
    try:
        settings = load_settings(path, ignore=NODE_PARAMETER_NAMES)
    except SettingsError as exc:
        if str(path) in str(exc):
            raise
        raise ReplayError(f"{path}: {exc}") from exc  # the file the bad setting is in
    doc = yaml.safe_load(Path(path).read_text()) or {}
    params: dict[str, Any] = {}
    for node_doc in doc.values() if isinstance(doc, dict) else ():
        if isinstance(node_doc, dict) and "ros__parameters" in node_doc:
            params.update({k: v for k, v in node_doc["ros__parameters"].items() if k in NODE_PARAMETER_NAMES})
    if not params and isinstance(doc, dict):
        params = {k: v for k, v in doc.items() if k in NODE_PARAMETER_NAMES}
    check_node_params(params, str(path))
    return settings, params


def apply_overrides(
    settings: EstimatorSettings, node_params: dict[str, Any], items: list[str]
) -> tuple[EstimatorSettings, dict[str, Any]]:
    """Apply ``NAME=VALUE`` overrides (YAML values) to settings (dotted names) and node parameters.

    Raises:
        ReplayError: an item without ``=``; a node parameter replay does not use (``NODE_ONLY_PARAMETERS``) or
            with a bad value (:func:`check_node_params`); ``estimation.errors.SettingsError``: unknown name or bad
            value of a setting.
    """
    from robot_state_estimator.estimation.settings import EstimatorSettings
    from robot_state_estimator.estimation.settings_loading import flatten_settings, settings_from_flat

    flat: dict[str, Any] = {}
    params = dict(node_params)
    setting_names = list(flatten_settings(EstimatorSettings()))
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ReplayError(f"--set expects NAME=VALUE, got {item!r}")
        try:
            value = yaml.safe_load(text) if text else ""
        except yaml.YAMLError:
            value = text  # e.g. "*": a plain string
        if name in NODE_ONLY_PARAMETERS:
            raise ReplayError(
                f"--set {name}: a parameter of the node only, replay does not use it ({NODE_ONLY_PARAMETERS[name]})"
            )
        if name in NODE_PARAMETER_NAMES:
            check_node_params({name: value}, f"--set {name}")
            params[name] = value
        elif name in setting_names or any(k.startswith(f"{name}.") for k in setting_names):
            flat[name] = value
        else:  # the node's rule for a misspelt parameter (common/names.py), as an error here
            close = close_names(name, [*setting_names, *NODE_PARAMETER_NAMES, *NODE_ONLY_PARAMETERS])
            raise ReplayError(
                f"--set {name}: no setting or node parameter has this name{did_you_mean(close)} (the settings are "
                "listed by their dotted names in docs/PARAMETERS.md; the node parameters in README.md, 'Parameters')"
            )
    return (settings_from_flat(flat, base=settings) if flat else settings), params


def check_robot(robot: str | None) -> None:
    """Refuse a ``--robot`` that is not a bundled robot, whatever else would be used.

    Raises:
        ReplayError: ``robot`` is not in ``common.paths.BUNDLED_ROBOTS``; the message names the known ones.
    """
    from robot_state_estimator.common.paths import BUNDLED_ROBOTS

    if robot is not None and robot not in BUNDLED_ROBOTS:
        raise ReplayError(f"unknown bundled robot {robot!r} (--robot); known: {', '.join(sorted(BUNDLED_ROBOTS))}")


def resolve_description(input_path: str | Path, description: str | None, robot: str | None) -> str:
    """The description to use: ``--description``, else ``robot_description.urdf`` next to the input (what
    ``simulate`` writes), else the bundled robot's.

    Raises:
        ReplayError: none found, or ``robot`` is not a bundled robot (also when another description is used).
    """
    check_robot(robot)
    if description:
        return str(description)
    p = Path(input_path)
    for folder in (p if p.is_dir() else p.parent, p.parent):
        for name in ("robot_description.urdf", "robot_description.sdf"):
            if (folder / name).exists():
                return str(folder / name)
    if robot:
        from robot_state_estimator.common.paths import robot_description_path

        return str(robot_description_path(robot))
    raise ReplayError("no robot description: pass --description FILE or --robot NAME")


def resolve_config(config: str | None, robot: str | None) -> str | None:
    """``--config``, else ``config/<robot>.yaml`` when it exists, else None (defaults); ``--config none`` gives the
    built-in defaults with a bundled ``--robot``'s description (as ``tools.go1_nees``).

    Raises:
        ReplayError: ``robot`` is not a bundled robot.
    """
    check_robot(robot)
    if config and config.strip().lower() == "none":
        return None
    if config:
        return config
    if robot:
        from robot_state_estimator.common.paths import config_dir

        path = config_dir() / f"{robot}.yaml"
        if path.exists():
            return str(path)
    return None
