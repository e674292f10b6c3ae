"""What a replay reads from its bag: the input topics (IMU, joints, and the foot sensors, foot wrenches and contact
schedule when they are read), their expected message types, and the bulk converters that make core samples straight
from the decoded arrays."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robot_state_estimator.tools.replay.errors import ReplayError
from robot_state_estimator.tools.replay.options import NODE_DEFAULTS, ReplayOptions

if TYPE_CHECKING:  # imported where used: description loads pinocchio
    from robot_state_estimator.description import RobotDescription


@dataclass(frozen=True)
class ReplayInputs:
    """What a replay reads from its bag (:func:`plan_inputs`).

    Attributes:
        topics: the input topics in tie order (equal stamps): IMU, foot sensors when read, foot wrenches when
            read, contact schedule when read, joints last.
        wrench_topics: foot frame -> its ``geometry_msgs/WrenchStamped`` topic (absolute); empty when the wrenches
            are not read.
        params: the node parameters (``NODE_DEFAULTS`` with the options' ``node_params`` over them).
        desc: the robot description, with the IMU the settings choose (``imu_name`` / ``declared_imu``).
    """

    topics: list[str]
    wrench_topics: dict[str, str]
    params: dict[str, Any]
    desc: RobotDescription


def with_bag_topic_names(opts: ReplayOptions, present: dict[str, str]) -> ReplayOptions:
    """``opts`` with each input topic (IMU, joints, foot sensors, contact schedule) spelt as the bag spells it:
    found with or without its leading ``/`` (``io.bags.find_topic``; rosbag2 records ``/imu/data``, a user may
    write ``imu/data``). A topic not in the bag is left as given (:func:`plan_inputs` names it if it is needed)."""
    import dataclasses

    from robot_state_estimator.io import bags

    names: dict[str, Any] = {}
    for field in ("imu_topic", "joints_topic", "foot_forces_topic", "contact_schedule_topic"):
        given = getattr(opts, field)
        found = bags.find_topic(given, present)
        if found is not None and found != given:
            names[field] = found
    return dataclasses.replace(opts, **names) if names else opts


def plan_inputs(
    present: dict[str, str], input_path: str | Path, *, description: str, settings: Any, opts: ReplayOptions
) -> ReplayInputs:
    """The topics to read, the node parameters and the description; the bag's topic types checked.

    Args:
        present: topic -> ROS 2 type name of the bag's connections (``io.bags.BagReader.topics``).
        input_path: the bag (for messages).
        description: description file or XML (``load_description`` input).
        settings: ``EstimatorSettings``.
        opts: the replay's options.

    Raises:
        ReplayError: a missing input topic (:func:`_main_topics`, :func:`_contact_topics`).
        io.bags.BagError: an input topic of another message type.
    """
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation.imu_setup import apply_imu_settings
    from robot_state_estimator.io import bags

    topics, use_ff = _main_topics(present, input_path, opts)
    params = {**NODE_DEFAULTS, **opts.node_params}
    desc = apply_imu_settings(load_description(description), settings)  # the IMU of imu_name / declared_imu
    feet = settings.foot_frames or tuple(desc.foot_frames())
    wrench_topics, use_schedule = _contact_topics(present, input_path, opts, params, settings, feet)
    topics += list(wrench_topics.values())
    if use_schedule:
        topics.append(opts.contact_schedule_topic)
    topics.append(opts.joints_topic)
    bags.check_topic_types(input_path, present, _expected_types(opts, use_ff, wrench_topics, use_schedule))
    return ReplayInputs(topics=topics, wrench_topics=wrench_topics, params=params, desc=desc)


def _main_topics(present: dict[str, str], input_path: str | Path, opts: ReplayOptions) -> tuple[list[str], bool]:
    """The IMU topic and, when read, the foot-sensor topic (in that order), and whether foot sensors are read.

    Raises:
        ReplayError: the bag lacks the IMU or joint topic, or the foot-sensor topic that ``opts`` asks for.
    """
    missing = [t for t in (opts.imu_topic, opts.joints_topic) if t not in present]
    if missing:
        options = ", ".join(f"{t} (--{'imu' if t == opts.imu_topic else 'joints'}-topic)" for t in missing)
        raise ReplayError(f"{input_path} lacks the input topics {options}; it has {sorted(present)}")
    topics = [opts.imu_topic]
    use_ff = opts.use_foot_forces == "yes" or (
        opts.use_foot_forces == "auto"
        and (opts.foot_forces_topic in present or bool(opts.node_params.get("use_foot_forces")))
    )
    if use_ff:
        if opts.foot_forces_topic not in present:
            raise ReplayError(f"{input_path} has no foot-sensor topic {opts.foot_forces_topic}")
        topics.append(opts.foot_forces_topic)
    return topics, use_ff


def _contact_topics(
    present: dict[str, str],
    input_path: str | Path,
    opts: ReplayOptions,
    params: dict[str, Any],
    settings: Any,
    feet: tuple[str, ...],
) -> tuple[dict[str, str], bool]:
    """The foot wrench topics (foot -> topic, absolute) when they are read, and whether the contact schedule is.

    Raises:
        ReplayError: a bad ``foot_wrench_topics``; wrench topics asked for but missing; ``contact.source`` schedule
            without the schedule topic.
    """
    from robot_state_estimator.io.stream import foot_wrench_topics

    try:
        wrench_topics = {
            foot: topic if topic.startswith("/") else "/" + topic
            for foot, topic in foot_wrench_topics(params["foot_wrench_topics"], feet).items()
        }
    except ValueError as exc:
        raise ReplayError(str(exc)) from exc
    have_wrenches = all(t in present for t in wrench_topics.values())
    use_fw = opts.use_foot_wrenches == "yes" or (
        opts.use_foot_wrenches == "auto" and (have_wrenches or bool(params.get("use_foot_wrenches")))
    )
    if use_fw:
        lacking = [t for t in wrench_topics.values() if t not in present]
        if lacking:
            raise ReplayError(
                f"{input_path} lacks the foot wrench topics {lacking} (node parameter foot_wrench_topics; "
                "--use-foot-wrenches no reads none)"
            )
    use_schedule = settings.contact.source == "schedule"
    if use_schedule and opts.contact_schedule_topic not in present:
        raise ReplayError(
            f"contact.source is schedule but {input_path} has no contact schedule topic "
            f"{opts.contact_schedule_topic} (--contact-schedule-topic); it has {sorted(present)}"
        )
    return (wrench_topics if use_fw else {}), use_schedule


def _expected_types(
    opts: ReplayOptions, use_ff: bool, wrench_topics: dict[str, str], use_schedule: bool
) -> dict[str, tuple[str, str]]:
    """Input topic -> (its message type, the option that chooses it), for ``io.bags.check_topic_types``."""
    joint_state = "sensor_msgs/msg/JointState"
    expected = {
        opts.imu_topic: ("sensor_msgs/msg/Imu", "--imu-topic"),
        opts.joints_topic: (joint_state, "--joints-topic"),
    }
    if use_ff:
        expected[opts.foot_forces_topic] = (joint_state, "--foot-forces-topic or --use-foot-forces no")
    for topic in wrench_topics.values():
        expected[topic] = ("geometry_msgs/msg/WrenchStamped", "foot_wrench_topics or --use-foot-wrenches no")
    if use_schedule:
        expected[opts.contact_schedule_topic] = (joint_state, "--contact-schedule-topic")
    return expected


def bulk_converters(opts: ReplayOptions, topics: list[str], wrench_topics: dict[str, str]) -> dict[str, Any]:
    """Input topic -> the ``io.bulk_samples`` converter that makes its core samples straight from the decoded arrays
    (the bulk path: no message object per message)."""
    from robot_state_estimator.io import bulk_samples

    converters: dict[str, Any] = {
        opts.imu_topic: bulk_samples.imu_samples,
        opts.joints_topic: bulk_samples.joint_samples,
        opts.foot_forces_topic: bulk_samples.foot_force_samples,
        opts.contact_schedule_topic: bulk_samples.contact_schedule_samples,
    }
    for foot, topic in wrench_topics.items():
        converters[topic] = functools.partial(bulk_samples.foot_wrench_samples, foot=foot)
    return {t: converters[t] for t in topics}
