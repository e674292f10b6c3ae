"""Where the node's robot description comes from, and the estimator built on it.

The sources, in this order (node parameters, ``io.node_params``): ``robot_description`` (the XML itself),
``description_file`` (a path: SDFormat, URDF or xacro, which ``description.load_description`` expands), ``robot``
(a bundled robot's ``config/robots/<robot>.urdf.xacro``); when all three are empty, the ``robot_description``
topic (std_msgs/String, transient local, as robot_state_publisher publishes it), which the node subscribes to.

Loading gives the description with the IMU the settings choose or declare (``estimation.imu_setup``), the feet
(``description.feet.chosen_feet``), the estimator, and the description's warnings (``DescriptionWarning``: what
loads here but Gazebo reads differently), which the node logs where a robot's operator sees them.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from robot_state_estimator.description.feet import chosen_feet
from robot_state_estimator.io.stream import output_frame_problem

if TYPE_CHECKING:  # imported where used
    from robot_state_estimator.description import RobotDescription
    from robot_state_estimator.estimation import RobotStateEstimator


def description_source(params: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> str | None:
    """The description to load now (XML or path), or None to wait for the topic.

    Args:
        params: the node parameters (``robot_description``, ``description_file``, ``robot``).
        overrides: the parameter overrides given to the node (``rclpy_compat.parameter_overrides``), to tell an
            empty ``robot_description`` that was given from one left unset; None when unknown.

    Raises:
        ValueError: ``robot_description`` was given but is empty (or blank) and neither ``description_file`` nor
            ``robot`` is set: the node would wait on the topic forever for what was meant to be a parameter
            (e.g. ``robot_description:="$(cat robot.urdf)"`` of a file that is not there).
        KeyError: ``robot`` is not a bundled robot.
    """
    if str(params["robot_description"]).strip():
        return str(params["robot_description"])
    given = overrides is not None and "robot_description" in overrides
    if given and not params["description_file"] and not params["robot"]:
        raise ValueError(
            "the robot_description parameter is given but empty (no URDF or SDFormat XML): pass the XML itself "
            '(e.g. robot_description:="$(xacro robot.urdf.xacro)"), or set description_file or robot; to '
            "take the description from the robot_description topic, do not set the parameter"
        )
    if params["description_file"]:
        return str(params["description_file"])
    if params["robot"]:
        from robot_state_estimator.common.paths import robot_description_path

        return str(robot_description_path(params["robot"]))
    return None


@dataclass(frozen=True)
class LoadedDescription:
    """A description loaded for the node, with the estimator built on it.

    Attributes:
        desc: the ``RobotDescription`` (with the IMU of the settings applied).
        estimator: the ``RobotStateEstimator`` built on it.
        feet: the foot frames (the ``foot_frames`` setting, else detected).
        warnings: the description's warnings, ``"DescriptionWarning: ..."``.
    """

    desc: RobotDescription
    estimator: RobotStateEstimator
    feet: list[str]
    warnings: list[str] = field(default_factory=list)


def load_estimator(source: str, settings: Any, params: Mapping[str, Any]) -> LoadedDescription:
    """Load a description (XML string or path) and build the estimator on it.

    Args:
        source: the XML or a path (:func:`description_source`, or the topic's message).
        settings: the ``EstimatorSettings`` (IMU choice or declaration, feet, filter).
        params: the node parameters (the output frames are checked against the description).

    Raises:
        ValueError: no foot detected (the message names the ``foot_frames`` parameter), or ``base_frame`` /
            ``tf_child_frame`` naming another frame of the robot (``io.stream.output_frame_problem``).
        Exception: what loading the description or building the estimator raises (``DescriptionError``,
            ``SettingsError``, ``OSError``...).
    """
    from robot_state_estimator.description import DescriptionWarning, load_description
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.estimation.imu_setup import apply_imu_settings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DescriptionWarning)
        desc = apply_imu_settings(load_description(source), settings)  # imu_name, declared_imu
        feet = chosen_feet(desc, settings.foot_frames)
        est = RobotStateEstimator.from_description(desc, settings)
    problem = output_frame_problem(desc, params)  # B's names in the outputs: not another frame of the robot
    if problem:
        raise ValueError(problem)
    return LoadedDescription(desc, est, feet, [f"{w.category.__name__}: {w.message}" for w in caught])


def rebuild_estimator(old: Any, desc: Any, settings: Any) -> Any:
    """A new estimator on ``desc`` with new ``settings``, started from ``old``'s last pose and twist when it was
    initialised (``initialize_state``); covariance and biases restart from their initial values.

    Raises:
        Exception: what building the estimator raises for these settings (the node refuses the change with it).
    """
    from robot_state_estimator.estimation import RobotStateEstimator

    new = RobotStateEstimator.from_description(desc, settings)
    last = getattr(old, "last_estimate", None)
    if last is not None and getattr(old, "initialized", False):
        new.initialize_state(last.stamp_ns, old.q, old.v)
    return new


def bundled_model_name(robot: str) -> str | None:
    """The model name (``<robot name=...>``) of the bundled description of ``robot``, read from the root
    element of its xacro file without processing it; None when there is none or it cannot be read."""
    from xml.etree import ElementTree

    from robot_state_estimator.common.paths import robot_description_path

    try:
        path = robot_description_path(robot)
        for _, element in ElementTree.iterparse(path, events=("start",)):
            name = element.get("name")
            return name if name and "$" not in name else None
    except (KeyError, OSError, ElementTree.ParseError):
        return None
    return None


def robot_mismatch_warning(params: Mapping[str, Any], desc: Any, settings_source: str) -> str:
    """The warning when ``robot``'s settings (``config/<robot>.yaml``) are used for a description from
    ``robot_description`` or ``description_file`` whose model name is not that of ``robot``'s bundled
    description (e.g. ``robot:=solo12`` with a Go1 URDF): its noise and contact thresholds are tuned for
    another robot; "" otherwise.

    Args:
        params: the node parameters.
        desc: the loaded ``RobotDescription``.
        settings_source: where the settings came from (for the message).
    """
    robot = str(params["robot"])
    if not robot or params["config_file"] or not (params["robot_description"] or params["description_file"]):
        return ""
    bundled = bundled_model_name(robot)
    name = str(getattr(desc, "name", "") or getattr(desc.model, "name", ""))
    if bundled is None or name == bundled:
        return ""
    source = "robot_description" if params["robot_description"] else f"description_file {params['description_file']!r}"
    return (
        f"[robot_mismatch] the settings of robot {robot!r} ({settings_source}) are used for the model "
        f"{name!r} of {source}, not for the model of robot {robot!r} ({bundled!r}): its noise values and contact "
        "thresholds are tuned for another robot; set config_file to settings for this one (or leave robot "
        "empty for the built-in defaults)"
    )


def empty_topic_message(topic: str, loaded: bool) -> str:
    """The error for an empty message on the description topic ``topic`` (``loaded``: a description is in use)."""
    return f"the message on the {topic} topic is empty (no URDF or SDFormat XML): " + (
        "the current description is kept" if loaded else "still waiting for a robot description"
    )


__all__ = [
    "LoadedDescription",
    "bundled_model_name",
    "description_source",
    "empty_topic_message",
    "load_estimator",
    "rebuild_estimator",
    "robot_mismatch_warning",
]
