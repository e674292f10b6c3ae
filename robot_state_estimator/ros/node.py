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
replay; this module subscribes, publishes what the stream says to, logs its notes and keeps diagnostics. The
rest is in modules of its own: the parameters (``parameters``, from the table ``io/node_params.py``), where the
description comes from and the estimator built on it (``description_source``), the sensor inputs and their
decoding (``inputs``), the commands (``commands``), the output messages and publishers (``outputs``), the checks
of the input streams (``input_watch``), the diagnostics (``diagnostics``) and the spin loop (``spin``).

Bad samples are skipped with a warning throttled per cause (``ThrottledReporter``), counted in the
diagnostics, and never reach the filter; nothing non-finite is ever published.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from typing import Any

import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import String

from robot_state_estimator.estimation.errors import SettingsError
from robot_state_estimator.estimation.jit import kernels_need_compiling
from robot_state_estimator.estimation.settings_loading import settings_from_flat
from robot_state_estimator.io.node_params import ADAPTER_PARAMETERS, NON_EMPTY_PARAMETERS
from robot_state_estimator.io.stream import (
    FEET_OFFSET,
    LOST_KEYS,
    NOT_REJECTIONS,
    AdapterSettings,
    EstimatorStream,
    Outputs,
    foot_wrench_topics,
    output_frame_warning,
)
from robot_state_estimator.io.stream_causes import CORE_ERROR
from robot_state_estimator.ros import commands
from robot_state_estimator.ros.description_source import (
    description_source,
    empty_topic_message,
    load_estimator,
    rebuild_estimator,
    robot_mismatch_warning,
)
from robot_state_estimator.ros.diagnostics import (
    DESCRIPTION_INVALID,
    NO_DESCRIPTION,
    DiagnosticsBuilder,
    DiagnosticsState,
)
from robot_state_estimator.ros.input_watch import InputWatch
from robot_state_estimator.ros.inputs import SensorInputs
from robot_state_estimator.ros.message_types import TYPES, PoseWithCovarianceStamped, Trigger
from robot_state_estimator.ros.outputs import OutputPublishers
from robot_state_estimator.ros.parameters import (
    base_settings,
    declare_node_parameters,
    declare_settings_parameters,
    settings_file_for,
    settings_source_text,
    undeclared_set_warning,
    unknown_overrides,
    unknown_overrides_warning,
    updated_settings,
)
from robot_state_estimator.ros.qos import command_qos, description_qos, diagnostics_qos
from robot_state_estimator.ros.rclpy_compat import (
    RCLError,
    UnknownROSArgsError,
    init_quietly,
    parameter_overrides,
    ros_args_error,
)
from robot_state_estimator.ros.reporting import ThrottledReporter
from robot_state_estimator.ros.spin import spin
from robot_state_estimator.ros.tf_publisher import TfUnavailableError, make_transform_broadcaster
from robot_state_estimator.ros.usage import USAGE, wants_help

NODE_NAME = "robot_state_estimator"
#: ns, a stamp-to-publish latency above this (or negative) means the stamps are not wall-clock time: not recorded.
MAX_STAMP_LATENCY_NS = 10 * 10**9


def _reason(exc: BaseException) -> str:
    """The message of ``exc``: ``str(KeyError(msg))`` is ``repr(msg)``, in quotes; the message itself instead."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


class StartupError(RuntimeError):
    """The node cannot start: bad description source, unreadable settings, TF unavailable."""


class EstimatorNode(Node):
    """Floating-base state estimator node (see the module docstring and README.md, "The ROS 2 node").

    Args:
        node_name: ROS node name (``robot_state_estimator``; the settings files key on it).
        subscribe_sensors: subscribe to the sensor topics as soon as a description is loaded (here, when the
            parameters name one). False: not before :meth:`subscribe_sensors` is called (``main`` calls it
            right before spinning, after its start-up work, so that no sample queues up unspun meanwhile).
        **kwargs: passed to ``rclpy.node.Node`` (``parameter_overrides``, ``context``, ``namespace``...).

    Attributes:
        description_warnings: the warnings of the last description loaded ("DescriptionWarning: ..."), also
            logged at warn level.
        unknown_overrides_warning: the start-up warning about overrides matching no parameter ("" for none).
        last_command_note: the outcome of the last set_pose message or reset request (what was logged).
        input_watch: the checks of the input streams and contacts (``ros.input_watch``).

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
        self._est: Any = None
        self._desc: Any = None
        self._stream: EstimatorStream | None = None  # the adapter rules (io/stream.py), once a description is loaded
        self.description_warnings: list[str] = []
        self._description_xml: str | None = None
        self._description_sub: Any = None
        self.last_command_note = ""
        try:
            self._declare_parameters()
            self._create_outputs()
        except StartupError:
            self.destroy_node()
            raise
        # inputs that stop, no foot in contact: checked off the hot path, from the receive counters
        self.input_watch = InputWatch(self._diag, self.get_logger().name)
        self._create_inputs()
        self._load_first_description()
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(float(self._p["diagnostics_period_s"]), self._publish_diagnostics, clock=steady)
        self.create_timer(0.5, self.input_watch.check, clock=steady)

    # ------------------------------------------------------------------------------------------ set-up

    def _declare_parameters(self) -> None:
        """The node parameters and the settings parameters (defaults from the settings file), checked.

        Raises:
            StartupError: an empty frame that must not be, or invalid settings.
        """
        p = self._p = declare_node_parameters(self)
        empty = [name for name in NON_EMPTY_PARAMETERS if not str(p[name]).strip()]
        if empty:
            raise StartupError(f"parameters {empty} must not be empty (the parent frame of the odometry and the TF)")
        try:
            base = base_settings(p["robot"], p["config_file"])
            self._settings_values = declare_settings_parameters(self, base)
            self._settings = settings_from_flat(self._settings_values)
        except SettingsError as exc:
            raise StartupError(f"invalid estimator settings: {exc}") from exc
        settings_file = settings_file_for(p["robot"], p["config_file"])
        #: where the settings came from: their file, and the parameters that changed them (the start-up log line)
        self._settings_source = settings_source_text(settings_file, base, self._settings_values)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        pre_set = getattr(self, "add_pre_set_parameters_callback", None)  # rclpy of Iron and later
        if pre_set is not None:
            pre_set(self._before_set_parameters)
        # before the description is loaded: a misspelt foot_frames or base_frame may be why it fails
        self.unknown_overrides_warning = unknown_overrides_warning(self.unknown_overrides())
        if self.unknown_overrides_warning:
            self.get_logger().warning(self.unknown_overrides_warning)

    def _create_outputs(self) -> None:
        """The output publishers (odometry, contact states, diagnostics, the TF when ``publish_tf``).

        Raises:
            StartupError: TF cannot be published.
        """
        self._base_frame = self._p["base_frame"]
        # latency of the odometry (diagnostics): from the input stamp when stamps are wall-clock time (not with
        # sim time), and from the entry of the input's callback (steady clock) in any case
        self._stamp_latency = not self.get_parameter("use_sim_time").value
        self._outputs = OutputPublishers(self, self._types)
        self._diag_pub = self.create_publisher(self._types.DiagnosticArray, "/diagnostics", diagnostics_qos())
        if self._p["publish_tf"]:
            self._outputs.tf = self._make_tf()
            self._outputs.publish_tf = True

    def _create_inputs(self) -> None:
        """The sensor inputs (``ros.inputs``; their subscriptions are created once a description is loaded:
        a player that waits for subscribers (bag_player --wait-for-subscribers, ros2 bag play
        --wait-for-all-acked...) then starts when the node can process the first sample, and none is dropped as
        "no description yet") and the command inputs."""
        self._inputs = SensorInputs(
            self, self._diag, self._report, self.input_watch, self._feed, int(self._p["qos_depth"])
        )
        # commands (not hot: rare, served by the spin loop's fallback executor, between two sensor callbacks)
        self._set_pose_sub = self.create_subscription(
            PoseWithCovarianceStamped, "set_pose", self._on_set_pose, command_qos()
        )
        self._reset_srv = None
        if Trigger is not None:
            self._reset_srv = self.create_service(Trigger, "~/reset", self._on_reset)
        else:  # pragma: no cover - depends on the environment
            self.get_logger().warning("std_srvs is not installed: no ~/reset service (pip install ros-std-srvs)")

    def _load_first_description(self) -> None:
        """Load the description the parameters name, or subscribe to the ``robot_description`` topic.

        Raises:
            StartupError: the description cannot be loaded (the node is destroyed).
        """
        if kernels_need_compiling():  # the first start after an install: say why nothing happens for a while
            self.get_logger().info(
                "compiling the estimator's numba kernels (once after an install or update: about a minute)"
            )
        try:
            source = description_source(self._p, parameter_overrides(self))
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

    def _before_set_parameters(self, params: list[Parameter[Any]]) -> list[Parameter[Any]]:
        """rclpy's pre-set callback: the parameters unchanged; a warning naming those that are no parameter of this
        node, with the closest names (``ros.parameters.undeclared_set_warning``), before rclpy refuses them."""
        known = list(self.list_parameters([], 0).names)
        text = undeclared_set_warning([p.name for p in params], known)
        if text:
            self.get_logger().warning(text)
        return params

    def unknown_overrides(self) -> dict[str, list[str]]:
        """Parameter overrides given to this node that match no declared parameter, each with the closest declared
        names (``ros.parameters.unknown_overrides``)."""
        return unknown_overrides(self)

    def _make_tf(self) -> Any:
        try:
            return make_transform_broadcaster(self)
        except TfUnavailableError as exc:
            raise StartupError(str(exc)) from exc

    def _set_description(self, source: str) -> None:
        """Load a description (XML string or path) and (re)build the estimator on it (``ros.description_source``)."""
        loaded = load_estimator(source, self._settings, self._p)
        desc, est, feet = loaded.desc, loaded.estimator, loaded.feet
        self.description_warnings = loaded.warnings
        for text in self.description_warnings:
            self.get_logger().warning(f"[description] {text}")
        stream = EstimatorStream(est, desc, self._settings, AdapterSettings.from_params(self._p))
        self._desc, self._est = desc, est
        self._base_frame = str(self._p["base_frame"]) or desc.base_link  # this description's base link
        for foot in feet:
            self._outputs.wrench_publisher(foot)
        if self._p["use_foot_wrenches"]:
            topics = foot_wrench_topics(self._p["foot_wrench_topics"], feet)  # ValueError: not fitting the feet
            self._inputs.subscribe_foot_wrenches(topics)
            wrenches = self._inputs.wrenches
            self.get_logger().info(
                "foot wrench sensors: " + ", ".join(f"{f} <- {wrenches[f].topic_name}" for f in topics)
            )
        self._diag.has_description = True
        self._diag_builder.hardware_id = str(getattr(desc.model, "name", "") or self._p["robot"])
        self._outputs.set_frames(
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
        for warning in (
            robot_mismatch_warning(self._p, desc, self._settings_source),
            f"[base_frame] {text}" if (text := output_frame_warning(desc, self._p)) else "",
        ):
            if warning:
                self.get_logger().warning(warning)
        self._subscribe_sensors()

    def subscribe_sensors(self) -> None:
        """Allow the sensor subscriptions (see ``subscribe_sensors`` of the constructor): created now when a
        description is loaded, else when the first one is."""
        self._sensors_enabled = True
        if self._stream is not None:
            self._subscribe_sensors()

    def _subscribe_sensors(self) -> None:
        """Create the sensor subscriptions (once, when the first description is loaded, if allowed)."""
        if self._sensors_enabled:
            self._inputs.subscribe(
                foot_forces=bool(self._p["use_foot_forces"]), schedule=self._settings.contact.source == "schedule"
            )

    def _on_description(self, msg: String) -> None:
        if msg.data == self._description_xml:
            return
        if not msg.data.strip():
            topic = self._description_sub.topic_name if self._description_sub is not None else "robot_description"
            self._report.error(DESCRIPTION_INVALID, empty_topic_message(topic, self._stream is not None))
            return
        try:
            self._set_description(msg.data)
        except Exception as exc:
            self._report.error(DESCRIPTION_INVALID, f"robot_description topic: {exc}")
            return
        self._description_xml = msg.data

    # ---------------------------------------------------------------------------------------- parameters

    def _on_set_parameters(self, params: list[Any]) -> SetParametersResult:
        """Validate and apply a parameter change: settings (the estimator is rebuilt from its last state), the TF
        switch, the adapter's live parameters."""
        try:
            update = updated_settings(self._settings_values, params)
        except SettingsError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        if update is not None:
            flat, new_settings = update
            if self._est is not None:
                try:
                    self._est = rebuild_estimator(self._est, self._desc, new_settings)
                except Exception as exc:
                    return SetParametersResult(successful=False, reason=f"the estimator refused it: {exc}")
                self.get_logger().info("settings changed: estimator rebuilt from its last state")
            self._settings_values, self._settings = flat, new_settings
            if self._stream is not None:
                self._stream.set_core(self._est, new_settings)
        for param in params:
            if param.name == "use_sim_time":
                self._stamp_latency = not param.value
            elif param.name == "publish_tf":
                if param.value and self._outputs.tf is None:
                    try:
                        self._outputs.tf = self._make_tf()
                    except StartupError as exc:
                        return SetParametersResult(successful=False, reason=str(exc))
                self._p["publish_tf"] = self._outputs.publish_tf = bool(param.value)
            elif param.name in ADAPTER_PARAMETERS:
                self._p[param.name] = param.value
                if self._stream is not None:
                    self._stream.set_adapter(AdapterSettings.from_params(self._p))
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------------------------------ commands

    def _on_reset(self, request: Any, response: Any) -> Any:
        """``~/reset`` (std_srvs/Trigger): reset the estimator as time going backwards does (``ros.commands.reset``).

        The core's ``reset`` event is logged and counted at once (``resets``, ``last_reset_reason`` of the
        diagnostics) and the outputs restart (the next estimate is published whatever its stamp). Refused
        (``success`` False) while no description is loaded: there is no estimator to reset.
        """
        est, stream = self._est, self._stream
        if est is None or stream is None:
            response.success, response.message = False, commands.RESET_REFUSED
            self._report.warn("reset_refused", f"reset refused: {response.message}", count=False)
        else:
            srv = self._reset_srv
            reason = f"requested on the {srv.service_name if srv is not None else '~/reset'} service"
            events, response.message = commands.reset(est, stream, self._settings.ekf, reason)
            self._log_notes(events)
            response.success = True
        self.last_command_note = response.message
        return response

    def _on_set_pose(self, msg: Any) -> None:
        """``set_pose`` (geometry_msgs/PoseWithCovarianceStamped): re-seat the pose of the base in ``odom_frame``
        at the filter's current stamp (``ros.commands.set_pose``: what is refused, and why)."""
        outcome = commands.set_pose(
            self._est,
            msg,
            odom_frame=str(self._p["odom_frame"]),
            base_frame=self._base_frame,
            init_imu_samples=self._settings.ekf.init_imu_samples,
        )
        self.last_command_note = outcome.note
        if outcome.key == CORE_ERROR:
            self._report.error(outcome.key, outcome.message)
        elif outcome.key:  # refused: warn (throttled per key), count under the key (rejected.<key>)
            self._report.warn(outcome.key, outcome.message)
        else:
            self._diag.last_estimate = outcome.estimate
            self.get_logger().info(outcome.message)

    # ------------------------------------------------------------------------------------------- the stream

    def _feed(self, handler: Any, msg: Any, what: str) -> None:
        """Pass one message through the stream's rules and the core; log its notes, publish its outputs."""
        stream = self._stream
        if stream is None:
            self._report.warn(NO_DESCRIPTION, f"{what} sample dropped: no robot description yet")
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
        preallocated messages of ``OutputPublishers``, refilled, each output but the odometry only while
        subscribed; then the diagnostics' bookkeeping."""
        est, buf, odometry, contacts, _, _ = out
        # invariant: _feed publishes only an estimate (the stream packs each one into buf)
        assert est is not None and buf is not None
        stamp_ns = est.stamp_ns
        if odometry:
            self._outputs.publish_odometry(stamp_ns, buf)
            self._record_latency(stamp_ns)
            self._diag.odometry.tick()
        if len(buf) > FEET_OFFSET:  # an estimate with feet (the per-foot states are made only when subscribed)
            if contacts and self._outputs.contacts_subscribed():
                forces = getattr(self._est, "forces_estimated", True)
                self._outputs.publish_contacts(stamp_ns, est.feet, buf, forces_estimated=forces)
            self._diag.note_feet(est)
        self._diag.last_estimate = est

    def _record_latency(self, stamp_ns: int) -> None:
        """After an odometry publish: processing time since the callback entry, and the time since the input
        stamp when it is wall-clock time (not with sim time; only a difference within [0, MAX_STAMP_LATENCY_NS])."""
        self._diag.processing.add(time.perf_counter_ns() - self._inputs.t_entry_ns)
        if self._stamp_latency:
            d = time.time_ns() - stamp_ns
            if 0 <= d <= MAX_STAMP_LATENCY_NS:
                self._diag.latency.add(d)

    def _publish_diagnostics(self) -> None:
        self._diag.read_core(self._est, self._stream)
        stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(self._diag_builder.build(self._diag, self._report.counts, stamp))

    # ---------------------------------------------------------------------------------------- accessors

    @property
    def sensor_subscriptions(self) -> list[Any]:
        """The sensor-input subscriptions (the hot path of ``ros.spin.LeanExecutor``)."""
        return self._inputs.subscriptions

    @property
    def estimator(self) -> Any:
        """The core ``RobotStateEstimator`` (None until a description is loaded)."""
        return self._est

    @property
    def reject_counts(self) -> dict[str, int]:
        """Cause -> number of warnings/rejections so far (the ``rejected.<cause>`` diagnostics)."""
        return dict(self._report.counts)


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
        init_quietly(args, argv)
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


__all__ = ["NODE_NAME", "EstimatorNode", "StartupError", "main"]

if __name__ == "__main__":
    sys.exit(main())
