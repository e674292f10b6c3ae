"""The node parameters the adapter rules read (``AdapterSettings``), and the checks of the output frames and foot
wrench topics they name against the robot description, shared by the node and replay.

Names, defaults and meaning of the parameters come from the one parameter table, ``io.node_params.NODE_PARAMS``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_state_estimator.io.node_params import NODE_PARAMS, string_array_default


def output_frame_problem(desc: Any, params: Mapping[str, Any]) -> str:
    """Why the output frames of the node parameters ``params`` cannot name the base B of ``desc``
    (``RobotDescription``): ``base_frame`` or ``tf_child_frame`` naming another frame of the robot (``imu_link``, a
    foot), which would label B's pose and twist with that frame; "" when both are fine (empty, B, a frame
    coinciding with B, or a name the description lacks, e.g. ``base_link``). The node refuses such a description
    load and replay such a run, with this message."""
    for name in ("base_frame", "tf_child_frame"):
        value = str(params.get(name, "") or "")
        why = desc.base_frame_mismatch(value)
        if why:
            return (
                f"{name} {value!r}: {why}; the odometry and the TF are the pose of the base link, so name it, a frame "
                f"that coincides with it, or a name that is not in the description (e.g. base_link), or leave {name} "
                "empty"
            )
    return ""


#: Default of the node parameter ``foot_wrench_topics``: one ``geometry_msgs/WrenchStamped`` topic per foot, named
#: after it (ros2_control's force_torque_sensor_broadcaster publishes ``<controller name>/wrench``: name the
#: broadcasters after the feet, remap, or list the topics).
DEFAULT_FOOT_WRENCH_TOPICS: tuple[str, ...] = string_array_default("foot_wrench_topics")


def foot_wrench_topics(entries: Any, feet: Any) -> dict[str, str]:
    """Foot -> wrench topic from the ``foot_wrench_topics`` parameter: either one pattern with ``{foot}`` (replaced by
    each foot frame name, e.g. ``{foot}/wrench``), or one ``FOOT=TOPIC`` entry for every foot.

    Raises:
        ValueError: an entry that is neither, a pattern without ``{foot}`` for several feet, ``FOOT=TOPIC`` entries
            naming unknown feet, a foot twice, or missing feet (the message names them and the feet).
    """
    entries = [str(e).strip() for e in entries or ()]
    feet = [str(f) for f in feet]
    if len(entries) == 1 and "=" not in entries[0]:
        pattern = entries[0]
        if "{foot}" not in pattern and len(feet) > 1:
            raise ValueError(
                f"foot_wrench_topics: the pattern {pattern!r} lacks '{{foot}}' (every foot would share one topic); "
                f"use e.g. '{{foot}}/wrench' or one FOOT=TOPIC entry per foot of {feet}"
            )
        return {f: pattern.replace("{foot}", f) for f in feet}
    out: dict[str, str] = {}
    for entry in entries:
        foot, sep, topic = entry.partition("=")
        foot, topic = foot.strip(), topic.strip()
        if not sep or not foot or not topic:
            raise ValueError(
                f"foot_wrench_topics: {entry!r} is not FOOT=TOPIC (give one pattern with '{{foot}}', or FOOT=TOPIC "
                f"for every foot of {feet})"
            )
        if foot not in feet:
            raise ValueError(f"foot_wrench_topics: {foot!r} is not a foot; the feet are {feet}")
        if foot in out:
            raise ValueError(f"foot_wrench_topics: foot {foot!r} is given twice")
        out[foot] = topic
    missing = [f for f in feet if f not in out]
    if missing:
        raise ValueError(f"foot_wrench_topics: no topic for the feet {missing} (every foot needs one)")
    return out


def output_frame_warning(desc: Any, params: Mapping[str, Any]) -> str:
    """The warning when the TF child frame of the node parameters ``params`` (``tf_child_frame``, else
    ``base_frame``) names no frame of ``desc`` (``RobotDescription``) while ``tf_child_frame`` is left empty: e.g.
    ``base_frame:=base_link`` (REP-105's name) on a description whose base link is ``base`` or ``trunk``. The TF
    ``odom -> base_link`` then does not connect to the robot's tree, which robot_state_publisher publishes from the
    description's base link; "" otherwise (an explicit ``tf_child_frame`` such as ``base_rse`` is meant to be apart,
    to run beside another estimator). The node logs it at start, replay prints it."""
    base = str(params.get("base_frame", "") or "")
    if not base or str(params.get("tf_child_frame", "") or "") or base in desc.graph:
        return ""
    link = desc.base_link
    return (
        f"base_frame {base!r} is not a frame of the robot description (its base link is {link!r}): the TF "
        f"odom -> {base} will not connect to the robot's TF tree, which robot_state_publisher publishes from "
        f"{link!r} (RViz shows the robot model apart from the odometry). Fix: leave base_frame empty (the base link "
        f"{link!r}) or set base_frame:={link}; or, to keep the name {base!r}, add to the description a link {base!r} "
        f"with a fixed joint to {link!r}"
    )


def _default(name: str) -> Any:
    return NODE_PARAMS[name].default


@dataclass(frozen=True)
class AdapterSettings:
    """The adapter parameters of the node: the rows of ``io.node_params.NODE_PARAMS`` marked ``adapter`` (names,
    defaults and meaning from there; README.md, "Parameters"; a test checks that the fields are those rows).

    Attributes:
        imu_frame_id: accepted ``header.frame_id`` of IMU samples; "" = the names of the description's IMU
            frame (``ImuSpec.accepted_frame_ids``); "*" = any.
        max_time_gap_s: s, an IMU stamp further ahead of the previous one than this resets the filter.
        odometry_rate_hz: Hz, maximum rate of odometry and TF (0 = every estimate).
        contacts_rate_hz: Hz, maximum rate of wrenches and contact states (0 = every joint update).
    """

    imu_frame_id: str = _default("imu_frame_id")
    max_time_gap_s: float = _default("max_time_gap_s")
    odometry_rate_hz: float = _default("odometry_rate_hz")
    contacts_rate_hz: float = _default("contacts_rate_hz")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AdapterSettings:
        """From a node-parameter mapping (other keys are ignored, missing ones take the defaults).

        Raises:
            ValueError: a rate or gap that is not a number (the message names the parameter and the value);
                ranges are checked by the callers (the node's descriptors, replay's ``check_node_params``).
        """
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in params.items() if k in names}
        for k, v in values.items():
            if NODE_PARAMS[k].type == "double":
                if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise ValueError(f"{k} must be a number, got {v!r}")
                values[k] = float(v)
            else:
                values[k] = str(v)
        return cls(**values)


__all__ = [
    "DEFAULT_FOOT_WRENCH_TOPICS",
    "AdapterSettings",
    "foot_wrench_topics",
    "output_frame_problem",
    "output_frame_warning",
]
