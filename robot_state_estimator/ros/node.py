"""The ``robot_state_estimator`` node: a thin ROS 2 adapter over the estimation core.

Inputs (relative names: namespaces and remapping work as usual; best-effort QoS, matched by reliable and
best-effort publishers): ``imu/data`` (sensor_msgs/Imu), ``joint_states`` (sensor_msgs/JointState),
optionally ``foot_forces`` (sensor_msgs/JointState, name = foot frames, effort = values), one
geometry_msgs/WrenchStamped per foot (``use_foot_wrenches``, topics ``foot_wrench_topics``), ``contact_schedule``
(sensor_msgs/JointState, name = feet, position = 1 stance / 0 swing; with ``contact.source: schedule``), and the
``robot_description`` topic (std_msgs/String, transient local) when no description parameter is given.

Commands: ``set_pose`` (geometry_msgs/PoseWithCovarianceStamped, reliable; robot_localization's topic of the
same name and meaning) re-seats the pose of ``base_frame`` in ``odom_frame`` at the filter's current stamp
(``RobotStateEstimator.set_pose``; ``header.frame_id`` must be ``odom_frame`` or empty, the stamp is not used);
the ``~/reset`` service (std_srvs/Trigger) resets the filter as time going backwards does.

Outputs, stamped with the stamp of the measurement that produced them (never ``now()``): ``odometry``
(nav_msgs/Odometry), the TF ``odom_frame -> tf_child_frame`` on ``/tf``, ``contact_wrench/<foot>``
(geometry_msgs/WrenchStamped in the foot frame), ``contact_states`` (diagnostic_msgs/DiagnosticArray, one
status per foot) and ``/diagnostics``. See README.md, "The ROS 2 node".

The input and output rules (IMU frame, zero stamps, gap reset, joint names, once-per-stamp odometry,
output decimation, the non-finite guard) are ``io.stream.EstimatorStream``'s, shared with the offline
replay; this module subscribes, publishes what the stream says to, logs its notes and keeps diagnostics.

The sensor inputs are taken as bytes (``raw=True`` subscriptions of the same types and QoS) and deserialized
with one rosbags call (``Typestore.deserialize_cdr``, 20-25 us for an ``Imu``) into the message the readers
of ``io/messages.py`` read, as ``replay`` reads bags: rclpy's own conversion builds the Python message
through the generated classes' ``__init__`` and setters (60-80 us for an ``Imu``). Bytes that do not
deserialize (a publisher of serialized data can send any) are skipped and counted as ``imu_bad_message`` /
``joint_bad_message`` / ``foot_force_bad_message``.

Bad samples are skipped with a warning throttled per cause (``ThrottledReporter``), counted in the
diagnostics, and never reach the filter; nothing non-finite is ever published.
"""

from __future__ import annotations

import gc
import re
import sys
import threading
import time
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pinocchio as pin
import rclpy
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from robot_state_estimator.common.names import close_names, did_you_mean
from robot_state_estimator.common.node_ranges import NON_EMPTY_PARAMETERS
from robot_state_estimator.estimation.errors import SettingsError
from robot_state_estimator.estimation.jit import kernels_need_compiling
from robot_state_estimator.estimation.settings import settings_from_flat
from robot_state_estimator.io import messages
from robot_state_estimator.io.bags import default_typestore
from robot_state_estimator.io.messages import TYPE_NAMES
from robot_state_estimator.io.stream import (
    LOST_KEYS,
    NOT_REJECTIONS,
    AdapterSettings,
    EstimatorStream,
    Outputs,
    foot_wrench_topics,
    output_frame_problem,
    output_frame_warning,
)
from robot_state_estimator.ros.diagnostics import (
    NO_CONTACT_WARN_S,
    DiagnosticsBuilder,
    DiagnosticsState,
    covariances_ok,
    no_contact_message,
    no_contact_s,
)
from robot_state_estimator.ros.message_types import TYPES, PoseWithCovarianceStamped, Trigger
from robot_state_estimator.ros.outputs import OutputMessages
from robot_state_estimator.ros.parameters import (
    NODE_PARAMETERS,
    base_settings,
    declare_node_parameters,
    declare_settings_parameters,
    parameter_values,
    settings_file_for,
)
from robot_state_estimator.ros.qos import command_qos, description_qos, diagnostics_qos, output_qos, sensor_qos
from robot_state_estimator.ros.rclpy_compat import (
    RCLError,
    UnknownROSArgsError,
    logging_get_logger_level,
    logging_set_logger_level,
)
from robot_state_estimator.ros.reporting import ThrottledReporter
from robot_state_estimator.ros.spin import spin
from robot_state_estimator.ros.tf_publisher import TfPublisher, TfUnavailableError, make_transform_broadcaster
from robot_state_estimator.ros.usage import USAGE, wants_help

NODE_NAME = "robot_state_estimator"
IMU_TYPE = TYPE_NAMES["Imu"]
JOINT_STATE_TYPE = TYPE_NAMES["JointState"]
WRENCH_TYPE = TYPE_NAMES["WrenchStamped"]
#: s (steady clock): a foot wrench topic with no message for this long while joint states arrive is named
#: (warning ``foot_wrench_stopped``, diagnostics ``foot_wrenches_stale``).
FOOT_WRENCH_STOPPED_S = 1.0


def _reason(exc: BaseException) -> str:
    """The message of ``exc``: ``str(KeyError(msg))`` is ``repr(msg)``, in quotes; the message itself instead."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def _leaf_bodies(model: Any) -> list[str]:
    """Names of the bodies (links) of a pinocchio ``model`` at the ends of its kinematic chains (no child joint)."""
    parents = {int(model.parents[j]) for j in range(1, model.njoints)}
    return [
        f.name
        for f in model.frames
        if f.type == pin.FrameType.BODY and int(f.parentJoint) not in parents and int(f.parentJoint) != 0
    ]


def _bundled_model_name(robot: str) -> str | None:
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


class StartupError(RuntimeError):
    """The node cannot start: bad description source, unreadable settings, TF unavailable."""


#: s, joint states arriving without any IMU message for this long are warned about (``no_imu``).
NO_IMU_AFTER_S = 2.0
#: ns, a stamp-to-publish latency above this (or negative) means the stamps are not wall-clock time: not recorded.
MAX_STAMP_LATENCY_NS = 10 * 10**9
#: s, at most one ``no_imu`` warning per this period.
NO_IMU_WARN_PERIOD_S = 5.0
#: s, at most one ``no_contact`` warning (no foot in contact for long, ``diagnostics.NO_CONTACT_WARN_S``) per period.
NO_CONTACT_LOG_PERIOD_S = 5.0


class EstimatorNode(Node):
    """Floating-base state estimator node (see the module docstring and README.md, "The ROS 2 node").

    Args:
        node_name: ROS node name (``robot_state_estimator``; the settings files key on it).
        subscribe_sensors: subscribe to the sensor topics as soon as a description is loaded (here, when the
            parameters name one). False: not before :meth:`subscribe_sensors` is called (``main`` calls it
            right before spinning, after its start-up work, so that no sample queues up unspun meanwhile).
        **kwargs: passed to ``rclpy.node.Node`` (``parameter_overrides``, ``context``, ``namespace``...).

    Raises:
        StartupError: the description source or the settings are invalid, or TF cannot be published.
    """

    def __init__(self, node_name: str = NODE_NAME, *, subscribe_sensors: bool = True, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self._sensors_enabled = subscribe_sensors
        self._types = TYPES
        self._report = ThrottledReporter(self.get_logger().name)
        self._diag = DiagnosticsState()
        self._diag_builder = DiagnosticsBuilder(self._types, self.get_fully_qualified_name())

        p = declare_node_parameters(self)
        self._p = p
        empty = [name for name in NON_EMPTY_PARAMETERS if not str(p[name]).strip()]
        if empty:
            self.destroy_node()
            raise StartupError(f"parameters {empty} must not be empty (the parent frame of the odometry and the TF)")
        try:
            base = base_settings(p["robot"], p["config_file"])
            self._settings_values = declare_settings_parameters(self, base)
            self._settings = settings_from_flat(self._settings_values)
            settings_file = settings_file_for(p["robot"], p["config_file"])
            #: where the defaults of the settings parameters came from (the start-up log line)
            self._settings_source = str(settings_file) if settings_file is not None else "built-in defaults"
        except SettingsError as exc:
            self.destroy_node()
            raise StartupError(f"invalid estimator settings: {exc}") from exc
        self.add_on_set_parameters_callback(self._on_set_parameters)
        #: the start-up warning about overrides matching no parameter ("" when there was none; tests)
        self.unknown_overrides_warning = ""
        # before the description is loaded: a misspelt foot_frames or base_frame may be why it fails
        self._warn_unknown_overrides()

        self._est: Any = None
        self._desc: Any = None
        #: the warnings of the last description loaded ("DescriptionWarning: ..."), also logged at warn level
        self.description_warnings: list[str] = []
        self._description_xml: str | None = None
        self._stream: EstimatorStream | None = None  # the adapter rules (io/stream.py), once a description is loaded
        self._base_frame = p["base_frame"]
        self._wrench_pubs: dict[str, Any] = {}
        self._outputs: OutputMessages | None = None
        # latency of the odometry (diagnostics): from the input stamp when stamps are wall-clock time (not with
        # sim time), and from the entry of the input's callback (steady clock) in any case
        self._stamp_latency = not self.get_parameter("use_sim_time").value
        self._t_entry_ns = 0

        self._odom_pub = self.create_publisher(self._types.Odometry, "odometry", output_qos())
        self._contacts_pub = self.create_publisher(self._types.DiagnosticArray, "contact_states", output_qos())
        self._diag_pub = self.create_publisher(self._types.DiagnosticArray, "/diagnostics", diagnostics_qos())
        self._odom_publish = self._odom_pub.publish
        self._contacts_publish = self._contacts_pub.publish
        self._contacts_count = self._contacts_pub.get_subscription_count
        self._tf = None
        if p["publish_tf"]:
            try:
                self._tf = self._make_tf()
            except StartupError:
                self.destroy_node()
                raise

        # raw: the bytes, deserialized by rosbags in the callbacks (see the module docstring)
        typestore = default_typestore()
        self._deserialize = typestore.deserialize_cdr
        # rosbags generates (and caches) the code that deserializes a type at its first use: about 20 ms of CPU
        # for an Imu, 10 ms for a JointState, which the first samples' callbacks would spend; done here instead
        for typename in (IMU_TYPE, JOINT_STATE_TYPE, WRENCH_TYPE):
            typestore.get_msgdef(typename)
        depth = int(p["qos_depth"])
        self._depth = depth
        self._wrench_subs: dict[str, Any] = {}  # foot -> its WrenchStamped subscription (made with the description)
        self._wrench_seen: dict[str, tuple[int, float]] = {}  # foot -> (count, steady time it last changed)
        self._foot_wrench_report = ThrottledReporter(self.get_logger().name, period_s=NO_IMU_WARN_PERIOD_S)
        # the sensor subscriptions are created once a description is loaded (_subscribe_sensors): a player that
        # waits for subscribers (bag_player --wait-for-subscribers, ros2 bag play --wait-for-all-acked...) then
        # starts when the node can process the first sample, and none is dropped as "no description yet"
        self._imu_sub: Any = None
        self._joints_sub: Any = None
        self._foot_forces_sub: Any = None
        self._schedule_sub: Any = None

        # commands (not hot: rare, served by the spin loop's fallback executor, between two sensor callbacks)
        self._set_pose_sub = self.create_subscription(
            PoseWithCovarianceStamped, "set_pose", self._on_set_pose, command_qos()
        )
        #: the outcome of the last set_pose message or reset request (what was logged; tests)
        self.last_command_note = ""

        self._reset_srv = None
        if Trigger is not None:
            self._reset_srv = self.create_service(Trigger, "~/reset", self._on_reset)
        else:  # pragma: no cover - depends on the environment
            self.get_logger().warning("std_srvs is not installed: no ~/reset service (pip install ros-std-srvs)")

        self._description_sub = None
        if kernels_need_compiling():  # the first start after an install: say why nothing happens for a while
            self.get_logger().info(
                "compiling the estimator's numba kernels (once after an install or update: about a minute)"
            )
        try:
            source = self._description_source()
            if source is not None:
                self._set_description(source)
        except Exception as exc:
            self.destroy_node()
            raise StartupError(f"cannot load the robot description: {_reason(exc)}") from exc
        if source is None:
            self._description_sub = self.create_subscription(
                String, "robot_description", self._on_description, description_qos()
            )
            self.get_logger().info("waiting for the robot description on the robot_description topic")

        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(float(p["diagnostics_period_s"]), self._publish_diagnostics, clock=steady)
        # joint states without IMU: checked off the hot path, from the receive counters
        self._no_imu_after_s = NO_IMU_AFTER_S
        self._no_imu_report = ThrottledReporter(self.get_logger().name, period_s=NO_IMU_WARN_PERIOD_S)
        self._no_imu_warning = ""  # the last no_imu warning (tests)
        self._imu_seen = (0, time.monotonic())  # IMU count, steady time it last changed (or the start)
        self._joints_seen = 0
        self._wrench_joints_seen = 0  # joint count at the last foot-wrench check
        # IMU messages arriving without joint states (or foot forces, when subscribed) for NO_IMU_AFTER_S: warned
        # about as no_joint_states / no_foot_forces, as no_imu
        self._no_input_report = ThrottledReporter(self.get_logger().name, period_s=NO_IMU_WARN_PERIOD_S)
        self._stopped_warning: dict[str, str] = {}  # key -> the last warning while the stream is stopped (tests)
        self._others_seen = {"joint_states": (0, time.monotonic()), "foot_forces": (0, time.monotonic())}
        self._imu_count_seen = 0
        # no foot in contact for long (diagnostics.NO_CONTACT_WARN_S of estimate time): the filter is on the IMU alone
        self._no_contact_report = ThrottledReporter(self.get_logger().name, period_s=NO_CONTACT_LOG_PERIOD_S)
        self._no_contact_warning = ""  # the last no_contact warning (tests)
        self._no_contact_checked: Any = None  # the last estimate with feet seen by _check_contacts
        self.create_timer(0.5, self._check_inputs, clock=steady)

    # ------------------------------------------------------------------------------------------ set-up

    def unknown_overrides(self) -> dict[str, list[str]]:
        """Parameter overrides given to this node (``-p``, ``--params-file`` sections that apply to it,
        ``parameter_overrides``) that match no declared parameter, each with the closest declared names
        (``common.names.close_names``, at most 3); empty when rclpy keeps its overrides elsewhere (it has
        no public accessor: ``Node._parameter_overrides`` is read when present)."""
        overrides = getattr(self, "_parameter_overrides", None)
        if not isinstance(overrides, Mapping):
            return {}
        known = list(self.list_parameters([], 0).names)
        known_set = set(known)
        return {name: close_names(name, known) for name in sorted(str(n) for n in overrides) if name not in known_set}

    def _warn_unknown_overrides(self) -> None:
        """One warning at start-up naming the overrides that match no parameter (``unknown_overrides``): a
        misspelt name is otherwise ignored without a word. A warning, not an error: a ``/**:`` params file
        legitimately carries the parameters of other nodes."""
        unknown = self.unknown_overrides()
        if not unknown:
            return
        parts = []
        for name, close in unknown.items():
            parts.append(f"{name!r}{did_you_mean(close)}")
        self.unknown_overrides_warning = (
            f"[unknown_parameter] ignored: {', '.join(parts)}: no parameter of this node has "
            f"{'this name' if len(parts) == 1 else 'these names'} (from -p or a --params-file section that "
            "applies to this node; fine for a parameter meant for another node). The parameters are listed in "
            'README.md, "Parameters", and by ros2 param list'
        )
        self.get_logger().warning(self.unknown_overrides_warning)

    def _make_tf(self) -> Any:
        try:
            return make_transform_broadcaster(self)
        except TfUnavailableError as exc:
            raise StartupError(str(exc)) from exc

    def _description_source(self) -> str | None:
        """The description to load now (XML or path), or None to wait for the topic.

        Raises:
            ValueError: ``robot_description`` was given but is empty (or blank) and neither ``description_file`` nor
                ``robot`` is set: the node would wait on the topic forever for what was meant to be a parameter
                (e.g. ``robot_description:="$(cat robot.urdf)"`` of a file that is not there).
        """
        if str(self._p["robot_description"]).strip():
            return str(self._p["robot_description"])
        overrides = getattr(self, "_parameter_overrides", None)
        given = isinstance(overrides, Mapping) and "robot_description" in overrides
        if given and not self._p["description_file"] and not self._p["robot"]:
            raise ValueError(
                "the robot_description parameter is given but empty (no URDF or SDFormat XML): pass the XML itself "
                '(e.g. robot_description:="$(xacro robot.urdf.xacro)"), or set description_file or robot; to '
                "take the description from the robot_description topic, do not set the parameter"
            )
        if self._p["description_file"]:
            return str(self._p["description_file"])
        if self._p["robot"]:
            from robot_state_estimator.common.paths import robot_description_path

            return str(robot_description_path(self._p["robot"]))
        return None

    def _set_description(self, source: str) -> None:
        """Load a description (XML string or path) and (re)build the estimator on it."""
        from robot_state_estimator.description import DescriptionWarning, load_description
        from robot_state_estimator.estimation import RobotStateEstimator
        from robot_state_estimator.estimation.imu_setup import apply_imu_settings

        # Warnings of the description (DescriptionWarning: what loads here but Gazebo reads differently) go to the
        # node's log, where a robot's operator sees them, instead of the process's stderr only.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DescriptionWarning)
            desc = apply_imu_settings(load_description(source), self._settings)  # imu_name, declared_imu
            feet = self._foot_frames(desc)
            est = RobotStateEstimator.from_description(desc, self._settings)
        problem = output_frame_problem(desc, self._p)  # B's names in the outputs: not another frame of the robot
        if problem:
            raise ValueError(problem)
        self.description_warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
        for text in self.description_warnings:
            self.get_logger().warning(f"[description] {text}")
        stream = EstimatorStream(est, desc, self._settings, AdapterSettings.from_params(self._p))
        self._desc, self._est = desc, est
        self._base_frame = str(self._p["base_frame"]) or desc.base_link  # this description's base link
        for foot in feet:
            if foot not in self._wrench_pubs:
                self._wrench_publisher(foot)
        if self._p["use_foot_wrenches"]:
            self._subscribe_foot_wrenches(feet)
        self._diag.has_description = True
        self._diag_builder.hardware_id = str(getattr(desc.model, "name", "") or self._p["robot"])
        self._outputs = OutputMessages(
            self._types,
            odom_frame=str(self._p["odom_frame"]),
            base_frame=self._base_frame,
            tf_child_frame=str(self._p["tf_child_frame"] or self._base_frame),
            hardware_id=self._diag_builder.hardware_id,
        )
        self._diag.lost = stream.lost
        self._stream = stream  # fresh output state: the next stamp is published whatever it is
        self.get_logger().info(
            f"estimating {self._diag_builder.hardware_id or 'robot'}: base {self._base_frame}, "
            f"IMU {est.imu.name!r} ({'declared by settings' if est.imu.source == 'settings' else 'description'}) "
            f"frame {sorted(stream.imu_frames) if stream.imu_frames else 'any'}, "
            f"feet {feet}, {len(stream.model_joints)} joints; settings {self._settings_source}"
        )
        self._check_robot_matches(desc)
        frame_warning = output_frame_warning(desc, self._p)
        if frame_warning:
            self.get_logger().warning(f"[base_frame] {frame_warning}")
        self._subscribe_sensors()

    def subscribe_sensors(self) -> None:
        """Allow the sensor subscriptions (see ``subscribe_sensors`` of the constructor): created now when a
        description is loaded, else when the first one is."""
        self._sensors_enabled = True
        if self._stream is not None:
            self._subscribe_sensors()

    def _subscribe_sensors(self) -> None:
        """Create the sensor subscriptions (once, when the first description is loaded, if allowed)."""
        if self._imu_sub is not None or not self._sensors_enabled:
            return
        p = self._p
        depth = int(p["qos_depth"])
        self._imu_sub = self.create_subscription(Imu, "imu/data", self._on_imu, sensor_qos(depth), raw=True)
        self._joints_sub = self.create_subscription(
            JointState, "joint_states", self._on_joints, sensor_qos(depth), raw=True
        )
        if p["use_foot_forces"]:
            self._foot_forces_sub = self.create_subscription(
                JointState, "foot_forces", self._on_foot_forces, sensor_qos(depth), raw=True
            )
        if self._settings.contact.source == "schedule":
            self._schedule_sub = self.create_subscription(
                JointState, "contact_schedule", self._on_contact_schedule, sensor_qos(depth), raw=True
            )

    def _subscribe_foot_wrenches(self, feet: list[str]) -> None:
        """One WrenchStamped subscription per foot (``foot_wrench_topics``; raw, deserialized like the others).

        Raises:
            ValueError: ``foot_wrench_topics`` does not fit the feet (``io.stream.foot_wrench_topics``).
        """
        topics = foot_wrench_topics(self._p["foot_wrench_topics"], feet)
        for foot, topic in topics.items():
            if foot in self._wrench_subs:
                continue
            self._wrench_subs[foot] = self.create_subscription(
                WrenchStamped, topic, lambda data, foot=foot: self._on_foot_wrench(data, foot),
                sensor_qos(self._depth), raw=True,
            )  # fmt: skip
            self._diag.foot_wrenches[foot] = self._diag.foot_wrenches.get(foot) or type(self._diag.imu)()
            self._wrench_seen[foot] = (0, time.monotonic())
        self.get_logger().info(
            "foot wrench sensors: " + ", ".join(f"{f} <- {self._wrench_subs[f].topic_name}" for f in topics)
        )

    def _foot_frames(self, desc: Any) -> list[str]:
        """The feet: the ``foot_frames`` parameter, else those the description's names show
        (``RobotDescription.foot_frames``).

        Raises:
            ValueError: none detected; the message names the ``foot_frames`` parameter (the description's own
                message says ``names=...``, its Python argument) and the frames at the ends of the legs.
        """
        if self._settings.foot_frames:
            return list(self._settings.foot_frames)  # checked against the model by the estimator
        from robot_state_estimator.description import DescriptionError

        try:
            return list(desc.foot_frames())
        except DescriptionError as exc:
            if "no foot frames detected" not in str(exc):
                raise
            leaves = _leaf_bodies(desc.model)
            example = ", ".join(leaves[:4]) or "FL_foot, FR_foot, RL_foot, RR_foot"
            raise ValueError(
                f"no foot frames detected in {getattr(desc, 'name', '')!r} (frame names ending in foot, sole or toe "
                "at the ends of the legs): set the foot_frames parameter to the names of the foot frames, e.g. "
                f'-p foot_frames:="[{example}]" (links at the ends of the chains: {leaves or "none"})'
            ) from exc

    def _check_robot_matches(self, desc: Any) -> None:
        """Warn when ``robot``'s settings (``config/<robot>.yaml``) are used for a description from
        ``robot_description`` or ``description_file`` whose model name is not that of ``robot``'s bundled
        description (e.g. ``robot:=solo12`` with a Go1 URDF): its noise and contact thresholds are tuned for
        another robot."""
        p = self._p
        robot = str(p["robot"])
        if not robot or p["config_file"] or not (p["robot_description"] or p["description_file"]):
            return
        bundled = _bundled_model_name(robot)
        name = str(getattr(desc, "name", "") or getattr(desc.model, "name", ""))
        if bundled is None or name == bundled:
            return
        source = "robot_description" if p["robot_description"] else f"description_file {p['description_file']!r}"
        self.get_logger().warning(
            f"[robot_mismatch] the settings of robot {robot!r} ({self._settings_source}) are used for the model "
            f"{name!r} of {source}, not for the model of robot {robot!r} ({bundled!r}): its noise values and contact "
            "thresholds are tuned for another robot; set config_file to settings for this one (or leave robot "
            "empty for the built-in defaults)"
        )

    def _on_description(self, msg: String) -> None:
        if msg.data == self._description_xml:
            return
        if not msg.data.strip():
            self._report.error(
                "description_invalid",
                f"the message on the {self._description_topic()} topic is empty (no URDF or SDFormat XML): "
                + (
                    "still waiting for a robot description"
                    if self._stream is None
                    else "the current description is kept"
                ),
            )
            return
        try:
            self._set_description(msg.data)
        except Exception as exc:
            self._report.error("description_invalid", f"robot_description topic: {exc}")
            return
        self._description_xml = msg.data

    # ---------------------------------------------------------------------------------------- parameters

    def _on_set_parameters(self, params: list[Any]) -> SetParametersResult:
        updates = {}
        for param in params:
            if param.name in self._settings_values:
                updates[param.name] = param.value
        if updates:
            flat = dict(self._settings_values)
            flat.update(parameter_values(updates))
            try:
                new_settings = settings_from_flat(flat)
            except SettingsError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            if self._est is not None:
                try:
                    self._apply_settings(new_settings)
                except Exception as exc:
                    return SetParametersResult(successful=False, reason=f"the estimator refused it: {exc}")
            self._settings_values, self._settings = flat, new_settings
            if self._stream is not None:
                self._stream.set_core(self._est, new_settings)
        for param in params:
            if param.name == "use_sim_time":
                self._stamp_latency = not param.value
            elif param.name == "publish_tf":
                if param.value and self._tf is None:
                    try:
                        self._tf = self._make_tf()
                    except StartupError as exc:
                        return SetParametersResult(successful=False, reason=str(exc))
                self._p["publish_tf"] = bool(param.value)
            elif param.name in ("max_time_gap_s", "odometry_rate_hz", "contacts_rate_hz"):
                self._p[param.name] = float(param.value)
                if self._stream is not None:
                    self._stream.set_adapter(AdapterSettings.from_params(self._p))
        return SetParametersResult(successful=True)

    def _apply_settings(self, settings: Any) -> None:
        """Give new settings to the running estimator.

        Uses the core's ``update_settings`` when it has one. Otherwise the estimator is rebuilt with the new
        settings and, when the old one was initialised, started from its last pose and twist
        (``initialize_state``); covariance and biases restart from their initial values.
        """
        update = getattr(self._est, "update_settings", None)
        if update is not None:
            update(settings)
            return
        from robot_state_estimator.estimation import RobotStateEstimator

        old = self._est
        new = RobotStateEstimator.from_description(self._desc, settings)
        last = getattr(old, "last_estimate", None)
        if last is not None and getattr(old, "initialized", False):
            new.initialize_state(last.stamp_ns, old.q, old.v)
        self._est = new
        self.get_logger().info("settings changed: estimator rebuilt from its last state")

    # -------------------------------------------------------------------------------------------- inputs

    def _on_imu(self, data: bytes) -> None:
        self._t_entry_ns = time.perf_counter_ns()
        self._diag.imu.tick()
        try:
            msg = self._deserialize(data, IMU_TYPE)
        except Exception as exc:
            self._report.warn("imu_bad_message", f"IMU sample skipped: {len(data)} bytes are no {IMU_TYPE}: {exc}")
            return
        self._feed(EstimatorStream.on_imu_msg, msg, "IMU")

    def _on_joints(self, data: bytes) -> None:
        self._t_entry_ns = time.perf_counter_ns()
        self._diag.joints.tick()
        try:
            msg = self._deserialize(data, JOINT_STATE_TYPE)
        except Exception as exc:
            self._report.warn(
                "joint_bad_message", f"joint sample skipped: {len(data)} bytes are no {JOINT_STATE_TYPE}: {exc}"
            )
            return
        self._feed(EstimatorStream.on_joints_msg, msg, "joint")

    def _on_foot_forces(self, data: bytes) -> None:
        self._t_entry_ns = time.perf_counter_ns()
        self._diag.foot_forces.tick()
        try:
            msg = self._deserialize(data, JOINT_STATE_TYPE)
        except Exception as exc:
            self._report.warn(
                "foot_force_bad_message",
                f"foot-force sample skipped: {len(data)} bytes are no {JOINT_STATE_TYPE}: {exc}",
            )
            return
        self._feed(EstimatorStream.on_foot_forces_msg, msg, "foot-force")

    def _on_foot_wrench(self, data: bytes, foot: str) -> None:
        self._t_entry_ns = time.perf_counter_ns()
        self._diag.foot_wrenches[foot].tick()
        try:
            msg = self._deserialize(data, WRENCH_TYPE)
        except Exception as exc:
            self._report.warn(
                "foot_wrench_bad_message",
                f"foot wrench sample of {foot} skipped: {len(data)} bytes are no {WRENCH_TYPE}: {exc}",
            )
            return
        self._feed(lambda stream, m: stream.on_foot_wrench_msg(m, foot), msg, f"{foot} wrench")

    def _on_contact_schedule(self, data: bytes) -> None:
        self._t_entry_ns = time.perf_counter_ns()
        self._diag.schedule.tick()
        try:
            msg = self._deserialize(data, JOINT_STATE_TYPE)
        except Exception as exc:
            self._report.warn(
                "schedule_bad_message", f"contact schedule skipped: {len(data)} bytes are no {JOINT_STATE_TYPE}: {exc}"
            )
            return
        self._feed(EstimatorStream.on_contact_schedule_msg, msg, "contact-schedule")

    # ------------------------------------------------------------------------------------------ commands

    def _on_reset(self, request: Any, response: Any) -> Any:
        """``~/reset`` (std_srvs/Trigger): reset the estimator as time going backwards does.

        The core's ``reset`` event is logged and counted at once (``resets``, ``last_reset_reason`` of the
        diagnostics) and the outputs restart (the next estimate is published whatever its stamp). Refused
        (``success`` False) while no description is loaded: there is no estimator to reset.
        """
        est, stream = self._est, self._stream
        if est is None or stream is None:
            response.success = False
            response.message = (
                "nothing to reset: no robot description loaded yet (the estimator starts when one is loaded)"
            )
            self._report.warn("reset_refused", f"reset refused: {response.message}", count=False)
            self.last_command_note = response.message
            return response
        srv = self._reset_srv
        reason = f"requested on the {srv.service_name if srv is not None else '~/reset'} service"
        est.reset(reason)
        stream.restart_outputs()
        events = est.pop_events()  # the core's "reset" event: logged and counted now, not at the next sample
        stream.events.update(event.key for event in events)
        self._log_notes(events)
        es = self._settings.ekf
        moving = (
            f", or from a moving robot after ekf.init_timeout_s = {es.init_timeout_s:g} s of IMU time"
            if es.init_timeout_s > 0.0
            else ""
        )
        response.success = True
        response.message = (
            f"estimator reset ({reason}): it initialises again from the next {es.init_imu_samples} IMU samples of "
            f"a robot standing still{moving} (roll and pitch from gravity, yaw 0, position ekf.initial_position "
            f"{list(es.initial_position)}, the height from the stance feet); odometry resumes then"
        )
        self.last_command_note = response.message
        return response

    def _description_topic(self) -> str:
        sub = self._description_sub
        return sub.topic_name if sub is not None else "robot_description"

    def _on_set_pose(self, msg: Any) -> None:
        """``set_pose`` (geometry_msgs/PoseWithCovarianceStamped): re-seat the pose of the base in ``odom_frame``
        at the filter's current stamp (``RobotStateEstimator.set_pose``); warn and ignore a message in another
        frame, a non-finite pose, a quaternion that is not unit (to 1e-3), a covariance that is not symmetric
        positive semi-definite, or one that arrives before the filter is initialised."""
        odom = str(self._p["odom_frame"])
        est = self._est
        if est is None:
            self._command_warn("no_description", "set_pose ignored: no robot description yet")
            return
        frame = msg.header.frame_id
        if frame and frame != odom:
            self._command_warn(
                "set_pose_frame_id",
                f"set_pose ignored: header.frame_id {frame!r} is not the odom_frame {odom!r} (the pose of "
                f"{self._base_frame!r} in {odom!r} is expected; an empty frame_id means {odom!r})",
            )
            return
        try:
            p_world_base, R_world_base = messages.pose_arrays_from_msg(msg.pose.pose)
            estimate = est.set_pose(p_world_base, R_world_base, np.asarray(msg.pose.covariance, dtype=float))
        except ValueError as exc:
            self._command_warn("set_pose_invalid", f"set_pose ignored: {exc}")
            return
        except Exception as exc:  # the node never dies on one message (as core_error for the sensor inputs)
            self._report.error("core_error", f"set_pose failed ({type(exc).__name__}: {exc}); the pose is unchanged")
            self.last_command_note = f"set_pose failed: {exc}"
            return
        if estimate is None:
            self._command_warn(
                "set_pose_uninitialized",
                "set_pose ignored: the filter is not initialised yet (it initialises from the first "
                f"{self._settings.ekf.init_imu_samples} IMU samples; send the pose again once odometry is published)",
            )
            return
        self._diag.last_estimate = estimate
        x, y, z = p_world_base.tolist()
        yaw = float(Rotation.from_matrix(R_world_base).as_euler("ZYX")[0])
        self.last_command_note = (
            f"pose set at stamp {estimate.stamp_ns} ns: {self._base_frame} at ({x:.3f}, {y:.3f}, {z:.3f}) m in "
            f"{odom}, yaw {yaw:.4f} rad"
        )
        self.get_logger().info(self.last_command_note)

    def _command_warn(self, key: str, message: str) -> None:
        """A refused command: warn (throttled per key), count under ``key`` (``rejected.<key>``), keep the note."""
        self._report.warn(key, message)
        self.last_command_note = message

    def _feed(self, handler: Any, msg: Any, what: str) -> None:
        """Pass one message through the stream's rules and the core; log its notes, publish its outputs."""
        stream = self._stream
        if stream is None:
            self._report.warn("no_description", f"{what} sample dropped: no robot description yet")
            return
        out = handler(stream, msg)
        if out.notes:
            self._log_notes(out.notes)
        if out.estimate is not None:
            try:
                self._publish(out)
            except RCLError as exc:  # e.g. RMW_FASTRTPS_PUBLICATION_MODE=ASYNCHRONOUS with its queue full
                if self.context.ok():  # not while shutting down (SIGTERM): the context is invalid then
                    self._report.warn("publish_failed", f"an output was not published: {exc}", count=False)

    def _log_notes(self, notes: Any) -> None:
        """Log (throttled per cause) and count the stream's notes: its own causes and the core's events."""
        for event in notes:
            if event.key in LOST_KEYS:  # samples lost before the node: counted by the stream, not rejections
                self._report.warn(event.key, event.message, count=False)
                continue
            rejected = event.key not in NOT_REJECTIONS  # e.g. a reset: counted in resets, with its reason
            if event.level == "error":
                self._report.error(event.key, event.message, count=rejected)
            elif event.level == "info":
                self._report.info(event.key, event.message)
            else:
                self._report.warn(event.key, event.message, count=rejected)
            if event.key == "reset":
                self._diag.resets += 1
                self._diag.last_reset_reason = event.message

    # ------------------------------------------------------------------------------------------- outputs

    def _publish(self, out: Outputs) -> None:
        """Publish what the stream decided for one finite estimate (``out.buf`` holds its numbers): the
        preallocated messages of ``OutputMessages``, refilled.

        The odometry is always published. The TF, the wrenches and the contact states are filled and published
        only while a subscription is matched (``get_subscription_count``, about 1 us): their QoS is volatile, so
        a sample written while no reader is matched reaches no one, now or later; a subscriber that matches
        receives everything published from then on, as before. At 1 kHz that saves the conversion and the
        write of each unsubscribed output (25-70 us each)."""
        est, buf, odometry, contacts, _, _ = out
        msgs = self._outputs
        # invariants: _feed publishes only an estimate (the stream packs each one into buf), and _outputs is set
        # by the description load before _stream, without which nothing is fed
        assert est is not None and buf is not None and msgs is not None
        stamp_ns = est.stamp_ns
        if odometry:
            self._odom_publish(msgs.fill_odometry(stamp_ns, buf))
            self._record_latency(stamp_ns)
            self._diag.odometry.tick()
            tf = self._tf
            if tf is not None and self._p["publish_tf"] and self._tf_count():
                if type(tf) is TfPublisher:
                    tf.publish(msgs.fill_tf_message(stamp_ns, buf))
                else:  # tf2_ros's TransformBroadcaster takes messages
                    tf.sendTransform(msgs.fill_transform(stamp_ns, buf))
        feet = est.feet
        if feet:
            if contacts:
                pubs = self._wrench_pubs
                # no wrench without estimated forces (no efforts): zeros would read as a measured force
                for i, foot in enumerate(feet if getattr(self._est, "forces_estimated", True) else ()):
                    name = foot.name
                    pub = pubs.get(name) or self._wrench_publisher(name)
                    if pub.get_subscription_count():
                        pub.publish(msgs.fill_wrench(stamp_ns, name, buf, i))
                if self._contacts_count():
                    self._contacts_publish(msgs.fill_contacts(stamp_ns, feet, buf))
            diag = self._diag
            touching = False
            for foot in feet:
                if foot.in_contact:
                    touching = True
                    if not foot.update_accepted:
                        diag.foot_rejected_updates[foot.name] += 1
            if touching:
                diag.no_contact_since_ns = None
            else:  # the start of a stretch without contact (again after time went back: a reset)
                since = diag.no_contact_since_ns
                if since is None or stamp_ns < since:
                    diag.no_contact_since_ns = stamp_ns
            diag.last_feet_estimate = est
        self._diag.last_estimate = est

    def _tf_count(self) -> int:
        """Subscriptions matched by the ``/tf`` publisher (1 when the broadcaster does not tell)."""
        tf = self._tf
        pub = getattr(tf, "publisher", None) or getattr(tf, "pub_tf", None)  # TfPublisher / tf2_ros broadcaster
        return pub.get_subscription_count() if pub is not None else 1

    def _wrench_publisher(self, foot: str) -> Any:
        """Create the ``contact_wrench/<foot>`` publisher (kept in ``_wrench_pubs``) and return it."""
        pub = self._wrench_pubs[foot] = self.create_publisher(
            self._types.WrenchStamped, f"contact_wrench/{foot}", output_qos()
        )
        return pub

    def _record_latency(self, stamp_ns: int) -> None:
        """After an odometry publish: processing time since the callback entry, and the time since the input
        stamp when it is wall-clock time (not with sim time; only a difference within [0, MAX_STAMP_LATENCY_NS])."""
        self._diag.processing.add(time.perf_counter_ns() - self._t_entry_ns)
        if self._stamp_latency:
            d = time.time_ns() - stamp_ns
            if 0 <= d <= MAX_STAMP_LATENCY_NS:
                self._diag.latency.add(d)

    def _check_inputs(self) -> None:
        """Twice a second on the steady clock, off the message path: IMU arriving, the other inputs arriving while
        the IMU does, feet in contact."""
        self._check_imu_arrives()
        self._check_others_arrive()
        self._check_contacts()
        self._check_foot_wrenches()

    def _check_foot_wrenches(self) -> None:
        """Name the feet whose wrench topic has had no message for ``FOOT_WRENCH_STOPPED_S`` while joint states arrive
        (warning ``foot_wrench_stopped`` every ``NO_IMU_WARN_PERIOD_S``, not counted; diagnostics
        ``foot_wrenches_stale``)."""
        if not self._wrench_subs:
            return
        now = time.monotonic()
        stopped = []
        for foot, (count, since) in self._wrench_seen.items():
            current = self._diag.foot_wrenches[foot].count
            if current != count:
                self._wrench_seen[foot] = (current, now)
            elif now - since > FOOT_WRENCH_STOPPED_S:
                stopped.append(foot)
        joints_arrive = self._diag.joints.count != self._wrench_joints_seen
        self._wrench_joints_seen = self._diag.joints.count
        self._diag.stopped_foot_wrenches = tuple(stopped) if joints_arrive else ()
        if stopped and joints_arrive:
            topics = [self._wrench_subs[f].topic_name for f in stopped]
            self._foot_wrench_report.warn(
                "foot_wrench_stopped",
                f"no foot wrench for {FOOT_WRENCH_STOPPED_S:g} s from {stopped} (topics {topics}) while joint states "
                "arrive: contacts come from another source (contact.source auto: the torques)",
                count=False,
            )

    def _check_others_arrive(self) -> None:
        """Warn (every ``NO_IMU_WARN_PERIOD_S``, keys ``no_joint_states`` / ``no_foot_forces``, not counted) while
        IMU messages arrive but no joint state (or, when subscribed, foot-force) message has for ``NO_IMU_AFTER_S``;
        the inputs status of ``/diagnostics`` is WARN meanwhile (``DiagnosticsState.stopped_inputs``)."""
        now = time.monotonic()
        imu = self._diag.imu.count
        imu_arrives = imu != self._imu_count_seen
        self._imu_count_seen = imu
        streams = [("joint_states", self._diag.joints, self._joints_sub, "joint state", "joint-state driver")]
        if self._foot_forces_sub is not None:
            streams.append(("foot_forces", self._diag.foot_forces, self._foot_forces_sub, "foot-force", "foot sensors"))
        stopped = []
        for key, counter, sub, what, sender in streams:
            count, since = self._others_seen[key]
            if counter.count != count:
                self._others_seen[key] = (counter.count, now)
                since = now
            if not imu_arrives or now - since <= self._no_imu_after_s:
                self._stopped_warning.pop(key, None)
                continue
            when = f"no {what} message" if counter.count == 0 else f"no {what} message for {now - since:.1f} s"
            consequence = (
                "the filter runs on the IMU alone (no leg-kinematics update: its position and velocity drift)"
                if key == "joint_states"
                else "contacts come from the other sources meanwhile"
            )
            text = (
                f"IMU messages arrive on {self._imu_sub.topic_name} but {when} on {sub.topic_name}: {consequence}; is "
                f"the {sender} publishing there (remap {key}:=<its topic>), with a matching QoS?"
            )
            self._stopped_warning[key] = text
            self._no_input_report.warn(f"no_{key}", text, count=False)
            stopped.append(text)
        self._diag.stopped_inputs = "; ".join(stopped)

    def _check_contacts(self) -> None:
        """Warn (every ``NO_CONTACT_LOG_PERIOD_S``, key ``no_contact``, not counted) while joint updates arrive and
        no foot has been in contact for more than ``diagnostics.NO_CONTACT_WARN_S`` of estimate time, as the contacts
        status says."""
        est = self._diag.last_feet_estimate
        fresh = est is not self._no_contact_checked  # joint updates arrived since the last check (not a stale state)
        self._no_contact_checked = est
        gap_s = no_contact_s(self._diag)
        if fresh and gap_s > NO_CONTACT_WARN_S:
            self._no_contact_warning = no_contact_message(gap_s)
            self._no_contact_report.warn("no_contact", self._no_contact_warning, count=False)

    def _check_imu_arrives(self) -> None:
        """Warn (every ``NO_IMU_WARN_PERIOD_S``) while joint states arrive but no IMU for ``NO_IMU_AFTER_S``."""
        now = time.monotonic()
        imu_count, since = self._imu_seen
        if self._diag.imu.count != imu_count:
            self._imu_seen = (self._diag.imu.count, now)
            since = now
        joints = self._diag.joints.count
        joints_arrive = joints != self._joints_seen
        self._joints_seen = joints
        if joints_arrive and now - since > self._no_imu_after_s:
            what = "no IMU message" if self._diag.imu.count == 0 else f"no IMU message for {now - since:.0f} s"
            self._no_imu_warning = (
                f"joint states arrive on {self._joints_sub.topic_name} but {what} on {self._imu_sub.topic_name}: "
                "is the IMU driver publishing there (remap imu/data:=<its topic>), with a matching QoS?"
            )
            self._no_imu_report.warn("no_imu", self._no_imu_warning, count=False)

    def _publish_diagnostics(self) -> None:
        est = self._est
        if est is not None:  # the core's contact-source state, read here (not per sample)
            diag = self._diag
            diag.contact_source = str(getattr(est, "contact_source", ""))
            diag.stale_foot_wrenches = tuple(getattr(est, "stale_foot_wrenches", ()))
            schedule = getattr(est, "schedule", None)
            if schedule is not None:
                diag.schedule_disagreements = dict(zip(est.foot_frames, schedule.disagreements.tolist()))
            slip = getattr(est, "slip", None)
            if slip is not None:
                diag.slip_episodes = dict(zip(est.foot_frames, slip.episodes))
                diag.feet_slipping = slip.slipping
        stream = self._stream
        if stream is not None:  # the degradation of the contact source (io/stream.py follows it)
            self._diag.contact_source_problem = stream.contact_source_problem
            self._diag.forces_estimated = stream.forces_estimated
        if self._diag.last_estimate is not None:
            self._diag.covariance_ok = covariances_ok(self._diag.last_estimate)
        stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(self._diag_builder.build(self._diag, self._report.counts, stamp))

    # ---------------------------------------------------------------------------------------- accessors

    @property
    def sensor_subscriptions(self) -> list[Any]:
        """The sensor-input subscriptions (the hot path of ``ros.spin.LeanExecutor``)."""
        subs = [self._imu_sub, self._joints_sub, self._foot_forces_sub, self._schedule_sub, *self._wrench_subs.values()]
        return [s for s in subs if s is not None]

    @property
    def estimator(self) -> Any:
        """The core ``RobotStateEstimator`` (None until a description is loaded)."""
        return self._est

    @property
    def reject_counts(self) -> dict[str, int]:
        """Cause -> number of warnings/rejections so far (the ``rejected.<cause>`` diagnostics)."""
        return dict(self._report.counts)


def _init_quietly(args: list[str] | None, argv: list[str]) -> None:
    """``rclpy.init(args=args)`` with the ``rcl`` logger at FATAL meanwhile: a malformed argument makes rcl log
    ``[ERROR] [rcl]: Failed to parse global arguments`` before raising, which ``ros_args_error`` reports instead.
    Its level is restored afterwards unless ``--log-level rcl:=...`` set one."""
    before = logging_get_logger_level("rcl")
    fatal = int(rclpy.logging.LoggingSeverity.FATAL)
    logging_set_logger_level("rcl", fatal)
    try:
        rclpy.init(args=args)
    finally:
        if logging_get_logger_level("rcl") == fatal and not any("rcl:=" in a for a in argv):
            logging_set_logger_level("rcl", before)


def ros_args_error(exc: BaseException) -> str:
    """The one-line report of ``rclpy.init`` refusing the command line (``RCLError`` for a ``-p``, ``-r`` or
    ``--params-file`` rcl cannot parse, ``UnknownROSArgsError`` for an unknown flag after ``--ros-args``):
    rcl's message without its source locations, and for ``-p`` how values are written."""
    text = re.sub(r",? at /\S+:\d+", "", str(exc)).replace(" Error: error not set", "").strip()
    text = text.removeprefix("failed to initialize rcl: ")
    if isinstance(exc, UnknownROSArgsError):
        return f"unknown ROS arguments {text} (after --ros-args: -p NAME:=VALUE, -r FROM:=TO, --params-file FILE, ...)"
    if "parameter override" in text:
        text += (
            " (-p takes NAME:=VALUE, the value in YAML: an empty string is NAME:='' (in a shell: "
            "-p NAME:=\"''\"), a list [a, b] and a string with spaces are quoted for the shell)"
        )
    return f"invalid --ros-args: {text}"


def main(args: list[str] | None = None, stop: threading.Event | None = None) -> int:
    """The node's process: init, construction, spin, clean-up; returns the exit code.

    Args:
        args: command line (``sys.argv`` when None), ROS arguments after ``--ros-args``.
        stop: set by SIGINT/SIGTERM from the start of the process (``ros.entry.main``, the console script): a
            stop asked during the imports or the construction ends the process quietly (exit code 0) instead of
            starting it or reporting the construction's failure on the context rclpy's handler shut down.
    """
    argv = sys.argv if args is None else list(args)
    if wants_help(argv[1:]):  # also for python -m robot_state_estimator.ros.node --help
        print(USAGE, end="")
        return 0
    try:
        _init_quietly(args, argv)
    except (RCLError, UnknownROSArgsError) as exc:  # a malformed --ros-args: one line, no traceback
        rclpy.logging.get_logger(NODE_NAME).fatal(ros_args_error(exc))
        return 1
    node = None
    code = 0

    def stopping() -> bool:
        return (stop is not None and stop.is_set()) or not rclpy.ok()

    try:
        if stopping():
            return 0
        node = EstimatorNode(subscribe_sensors=False)
        # everything built at start-up (the model, the description, rclpy's objects) lives until the end: move
        # it out of the collector's generations, so that a full collection does not walk it while estimating
        gc.collect()
        gc.freeze()
        if not stopping():
            # subscribed now, not before that collection (0.3 s and more under load): a player that waited for
            # the subscription would otherwise overrun the queue (qos_depth) before the first spin
            node.subscribe_sensors()
            spinning = getattr(stop, "spinning", None)  # ros.entry.ExitGuard: a stop from now on is a clean one
            if spinning is not None:
                spinning.set()
            spin(node, lambda: node.sensor_subscriptions)  # re-read: subscribed once a description is loaded
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except StartupError as exc:
        if not stopping():
            rclpy.logging.get_logger(NODE_NAME).fatal(str(exc))
            code = 1
    except InvalidParameterValueException as exc:  # a -p value outside its descriptor's range
        rclpy.logging.get_logger(NODE_NAME).fatal(f"invalid parameter value: {exc}")
        code = 1
    except InvalidParameterTypeException as exc:  # e.g. -p odometry_rate_hz:=100 (an integer for a double)
        rclpy.logging.get_logger(NODE_NAME).fatal(
            f"invalid parameter type: {exc} (a double parameter takes a decimal point: 100.0, not 100)"
        )
        code = 1
    except Exception:
        if not stopping():  # an rcl call on the context a SIGINT shut down during the construction
            raise
    finally:
        if node is not None:
            # collect what the interrupt left (frames, generators holding handles of the node), so that nothing
            # destroys an entity of the node after it. Those were made while spinning, after gc.freeze: the
            # collection walks them only, not the frozen start-up heap (a full collection of that took 0.3-1 s
            # under load, holding the GIL, which delayed the exit beyond a second: ros.entry.ExitGuard)
            gc.collect()
            node.destroy_node()
            gc.unfreeze()
        rclpy.try_shutdown()
    return code


__all__ = ["NODE_NAME", "NODE_PARAMETERS", "EstimatorNode", "StartupError", "main"]

if __name__ == "__main__":
    sys.exit(main())
