"""The ``robot_state_estimator`` node: a thin ROS 2 adapter over the estimation core.

Inputs (relative names: namespaces and remapping work as usual; best-effort QoS, matched by reliable and
best-effort publishers): ``imu/data`` (sensor_msgs/Imu), ``joint_states`` (sensor_msgs/JointState),
optionally ``foot_forces`` (sensor_msgs/JointState, name = foot frames, effort = values), and the
``robot_description`` topic (std_msgs/String, transient local) when no description parameter is given.

Outputs, stamped with the stamp of the measurement that produced them (never ``now()``): ``odometry``
(nav_msgs/Odometry), the TF ``odom_frame -> tf_child_frame`` on ``/tf``, ``contact_wrench/<foot>``
(geometry_msgs/WrenchStamped in the foot frame), ``contact_states`` (diagnostic_msgs/DiagnosticArray, one
status per foot) and ``/diagnostics``. See docs/node.md.

Bad samples are skipped with a warning throttled per cause (``ThrottledReporter``), counted in the
diagnostics, and never reach the filter; nothing non-finite is ever published.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.estimation.errors import SettingsError
from robot_state_estimator.estimation.settings import settings_from_flat
from robot_state_estimator.estimation.types import Estimate
from robot_state_estimator.io import messages
from robot_state_estimator.ros.diagnostics import DiagnosticsBuilder, DiagnosticsState, covariances_ok
from robot_state_estimator.ros.message_types import TYPES
from robot_state_estimator.ros.outputs import OutputMessages, pack_estimate
from robot_state_estimator.ros.parameters import (
    NODE_PARAMETERS,
    base_settings,
    declare_node_parameters,
    declare_settings_parameters,
    parameter_values,
)
from robot_state_estimator.ros.qos import description_qos, diagnostics_qos, output_qos, sensor_qos
from robot_state_estimator.ros.reporting import ThrottledReporter
from robot_state_estimator.ros.tf_publisher import TfUnavailableError, make_transform_broadcaster

NODE_NAME = "robot_state_estimator"


class StartupError(RuntimeError):
    """The node cannot start: bad description source, unreadable settings, TF unavailable."""


class EstimatorNode(Node):
    """Floating-base state estimator node (see the module docstring and docs/node.md).

    Args:
        node_name: ROS node name (``robot_state_estimator``; the settings files key on it).
        **kwargs: passed to ``rclpy.node.Node`` (``parameter_overrides``, ``context``, ``namespace``...).

    Raises:
        StartupError: the description source or the settings are invalid, or TF cannot be published.
    """

    def __init__(self, node_name: str = NODE_NAME, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        self._types = TYPES
        self._report = ThrottledReporter(self.get_logger().name)
        self._diag = DiagnosticsState()
        self._diag_builder = DiagnosticsBuilder(self._types, self.get_fully_qualified_name())

        p = declare_node_parameters(self)
        self._p = p
        try:
            base = base_settings(p["robot"], p["config_file"])
            self._settings_values = declare_settings_parameters(self, base)
            self._settings = settings_from_flat(self._settings_values)
        except SettingsError as exc:
            self.destroy_node()
            raise StartupError(f"invalid estimator settings: {exc}") from exc
        self.add_on_set_parameters_callback(self._on_set_parameters)

        self._est: Any = None
        self._desc: Any = None
        self._description_xml: str | None = None
        self._model_joints: frozenset[str] = frozenset()
        self._accepted_imu_frames: frozenset[str] | None = None
        self._base_frame = p["base_frame"]
        self._last_imu_ns: int | None = None
        self._last_tf_ns: int | None = None
        self._wrench_pubs: dict[str, Any] = {}
        self._outputs: OutputMessages | None = None
        self._odom_period_ns = self._contacts_period_ns = 0
        self._set_output_rates(p["odometry_rate_hz"], p["contacts_rate_hz"])
        self._odom_slot: int | None = None
        self._contacts_slot: int | None = None
        self._checked_joint_names: tuple[str, ...] | None = None

        self._odom_pub = self.create_publisher(self._types.Odometry, "odometry", output_qos())
        self._contacts_pub = self.create_publisher(self._types.DiagnosticArray, "contact_states", output_qos())
        self._diag_pub = self.create_publisher(self._types.DiagnosticArray, "/diagnostics", diagnostics_qos())
        self._tf = None
        if p["publish_tf"]:
            try:
                self._tf = self._make_tf()
            except StartupError:
                self.destroy_node()
                raise

        depth = int(p["qos_depth"])
        self.create_subscription(Imu, "imu/data", self._on_imu, sensor_qos(depth))
        self.create_subscription(JointState, "joint_states", self._on_joints, sensor_qos(depth))
        if p["use_foot_forces"]:
            self.create_subscription(JointState, "foot_forces", self._on_foot_forces, sensor_qos(depth))

        self._description_sub = None
        try:
            source = self._description_source()
            if source is not None:
                self._set_description(source)
        except Exception as exc:
            self.destroy_node()
            raise StartupError(f"cannot load the robot description: {exc}") from exc
        if source is None:
            self._description_sub = self.create_subscription(
                String, "robot_description", self._on_description, description_qos()
            )
            self.get_logger().info("waiting for the robot description on the robot_description topic")

        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(float(p["diagnostics_period_s"]), self._publish_diagnostics, clock=steady)

    # ------------------------------------------------------------------------------------------ set-up

    def _make_tf(self) -> Any:
        try:
            return make_transform_broadcaster(self)
        except TfUnavailableError as exc:
            raise StartupError(str(exc)) from exc

    def _description_source(self) -> str | None:
        """The description to load now (XML or path), or None to wait for the topic."""
        if self._p["robot_description"]:
            return str(self._p["robot_description"])
        if self._p["description_file"]:
            return str(self._p["description_file"])
        if self._p["robot"]:
            from robot_state_estimator.common.paths import robot_description_path

            return str(robot_description_path(self._p["robot"]))
        return None

    def _set_description(self, source: str) -> None:
        """Load a description (XML string or path) and (re)build the estimator on it."""
        from robot_state_estimator.description import load_description
        from robot_state_estimator.estimation import RobotStateEstimator

        desc = load_description(source)
        est = RobotStateEstimator.from_description(desc, self._settings)
        self._desc, self._est = desc, est
        self._model_joints = frozenset(desc.joint_names)
        if not self._base_frame:
            self._base_frame = desc.base_link
        frame_param = str(self._p["imu_frame_id"])
        if frame_param == "*":
            self._accepted_imu_frames = None
        elif frame_param:
            self._accepted_imu_frames = frozenset({frame_param})
        else:
            self._accepted_imu_frames = frozenset(f for f in (desc.imu.frame_id, desc.imu.link) if f)
        feet = list(self._settings.foot_frames) or list(desc.foot_frames())
        for foot in feet:
            if foot not in self._wrench_pubs:
                self._wrench_pubs[foot] = self.create_publisher(
                    self._types.WrenchStamped, f"contact_wrench/{foot}", output_qos()
                )
        self._diag.has_description = True
        self._diag_builder.hardware_id = str(getattr(desc.model, "name", "") or self._p["robot"])
        self._outputs = OutputMessages(
            self._types,
            odom_frame=str(self._p["odom_frame"]),
            base_frame=self._base_frame,
            tf_child_frame=str(self._p["tf_child_frame"] or self._base_frame),
            hardware_id=self._diag_builder.hardware_id,
        )
        self._checked_joint_names = None
        self._restart_outputs()
        self.get_logger().info(
            f"estimating {self._diag_builder.hardware_id or 'robot'}: base {self._base_frame}, "
            f"IMU frame {sorted(self._accepted_imu_frames) if self._accepted_imu_frames else 'any'}, "
            f"feet {feet}, {len(self._model_joints)} joints"
        )

    def _on_description(self, msg: String) -> None:
        if msg.data == self._description_xml:
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
        for param in params:
            if param.name == "publish_tf":
                if param.value and self._tf is None:
                    try:
                        self._tf = self._make_tf()
                    except StartupError as exc:
                        return SetParametersResult(successful=False, reason=str(exc))
                self._p["publish_tf"] = bool(param.value)
            elif param.name == "max_time_gap_s":
                self._p["max_time_gap_s"] = float(param.value)
            elif param.name in ("odometry_rate_hz", "contacts_rate_hz"):
                self._p[param.name] = float(param.value)
                self._set_output_rates(self._p["odometry_rate_hz"], self._p["contacts_rate_hz"])
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

    def _set_output_rates(self, odometry_rate_hz: float, contacts_rate_hz: float) -> None:
        """Periods (ns) of the decimated outputs; 0 = every estimate."""
        self._odom_period_ns = round(NS_PER_S / odometry_rate_hz) if odometry_rate_hz > 0 else 0
        self._contacts_period_ns = round(NS_PER_S / contacts_rate_hz) if contacts_rate_hz > 0 else 0

    def _restart_outputs(self) -> None:
        """After a reset or a new description: the next stamp is published whatever it is."""
        self._last_imu_ns = None
        self._last_tf_ns = None
        self._odom_slot = None
        self._contacts_slot = None

    def _reset(self, reason: str, key: str) -> None:
        self._report.warn(key, f"{reason}: resetting the filter")
        self._est.reset(reason)  # reported by the core as a "reset" event (counted in _step)
        self._restart_outputs()

    def _on_imu(self, msg: Imu) -> None:
        self._diag.imu.tick()
        if self._est is None:
            self._report.warn("no_description", "IMU sample dropped: no robot description yet")
            return
        try:
            sample = messages.imu_sample_from_msg(msg)
        except messages.MessageError as exc:
            key = "imu_not_finite" if "finite" in str(exc) else "imu_bad_message"
            self._report.warn(key, f"IMU sample skipped: {exc}")
            return
        except Exception as exc:
            self._report.warn("imu_bad_message", f"IMU sample skipped: {exc}")
            return
        frames = self._accepted_imu_frames
        if frames is not None and sample.frame_id not in frames:
            self._report.warn(
                "imu_frame_id",
                f"IMU sample skipped: frame_id {sample.frame_id!r} is not the IMU's {sorted(frames)} "
                "(set the parameter imu_frame_id, '*' accepts any)",
            )
            return
        if sample.stamp_ns <= 0:
            self._report.warn("stamp_zero", "IMU sample skipped: zero or negative stamp")
            return
        # Time going backwards (a looping bag) is detected and reset by the core (events stamp_backwards,
        # reset); a forward gap larger than max_time_gap_s is reset here.
        last = self._last_imu_ns
        if last is not None:
            dt_ns = sample.stamp_ns - last
            if dt_ns > int(self._p["max_time_gap_s"] * NS_PER_S):
                self._reset(f"gap of {dt_ns / NS_PER_S:.3f} s in the IMU stamps", "stamp_gap")
            elif dt_ns < -int(self._settings.out_of_order_tolerance_s * NS_PER_S):
                last = None
        if last is None or sample.stamp_ns > last:
            self._last_imu_ns = sample.stamp_ns
        if sample.frame_id != self._desc.imu.frame_id:  # accepted alias (imu_frame_id): the core's frame
            sample = dataclasses.replace(sample, frame_id=self._desc.imu.frame_id)
        self._step(self._est.add_imu, sample)

    def _on_joints(self, msg: JointState) -> None:
        self._diag.joints.tick()
        if self._est is None:
            self._report.warn("no_description", "joint sample dropped: no robot description yet")
            return
        try:
            sample = messages.joint_sample_from_msg(msg)
        except messages.MessageError as exc:
            text = str(exc)
            key = (
                "joint_not_finite"
                if "finite" in text
                else "joint_bad_lengths"
                if " but " in text
                else ("joint_bad_message")
            )
            self._report.warn(key, f"joint sample skipped: {text}")
            return
        except Exception as exc:
            self._report.warn("joint_bad_message", f"joint sample skipped: {exc}")
            return
        if sample.stamp_ns <= 0:
            self._report.warn("stamp_zero", "joint sample skipped: zero or negative stamp")
            return
        if sample.names != self._checked_joint_names:  # the names of a stream rarely change: check them once
            names = set(sample.names)
            missing = self._model_joints - names
            if missing:
                self._report.warn("joint_missing_names", f"joint sample skipped: missing joints {sorted(missing)}")
                return
            unknown = names - self._model_joints
            if unknown:
                self._report.warn(
                    "joint_unknown_names", f"joint sample skipped: joints {sorted(unknown)} are not in the model"
                )
                return
            self._checked_joint_names = sample.names
        if sample.effort is None and self._settings.contact.source == "torque":
            self._report.warn(
                "joint_effort_missing",
                "joint sample skipped: empty effort, but contact.source is 'torque' (needs joint torques)",
            )
            return
        self._step(self._est.add_joints, sample)

    def _on_foot_forces(self, msg: JointState) -> None:
        self._diag.foot_forces.tick()
        if self._est is None:
            self._report.warn("no_description", "foot-force sample dropped: no robot description yet")
            return
        try:
            sample = messages.foot_force_sample_from_msg(msg)
        except Exception as exc:
            self._report.warn("foot_force_bad_message", f"foot-force sample skipped: {exc}")
            return
        self._step(self._est.add_foot_forces, sample)

    def _step(self, add: Any, sample: Any) -> None:
        """Feed one sample to the core, report its events, publish what it returns."""
        try:
            estimate = add(sample)
        except Exception as exc:  # the node never dies on one sample
            self._report.error("core_error", f"estimator failed on a sample ({type(exc).__name__}: {exc})")
            estimate = None
        for event in self._est.pop_events():
            if event.level == "error":
                self._report.error(event.key, event.message)
            elif event.level == "info":
                self._report.info(event.key, event.message)
            else:
                self._report.warn(event.key, event.message)
            if event.key == "reset":
                self._diag.resets += 1
                self._diag.last_reset_reason = event.message
                self._last_tf_ns = None
                self._odom_slot = None
                self._contacts_slot = None
        if isinstance(estimate, Estimate):
            self._publish(estimate)

    # ------------------------------------------------------------------------------------------- outputs

    def _publish(self, est: Estimate) -> None:
        buf = pack_estimate(est)
        if buf is None:
            self._reset("the estimate is not finite", "estimate_not_finite")
            return
        out = self._outputs
        stamp_ns = est.stamp_ns
        # Odometry and TF once per stamp, in increasing stamp order: when an IMU sample and a joint sample share
        # a stamp, the first estimate at that stamp is published (tf2 also rejects repeated stamps).
        if self._last_tf_ns is None or stamp_ns > self._last_tf_ns:
            self._last_tf_ns = stamp_ns
            period = self._odom_period_ns
            slot = stamp_ns // period if period else None
            if slot is None or slot != self._odom_slot:  # odometry_rate_hz: first estimate of each period
                self._odom_slot = slot
                self._odom_pub.publish(out.fill_odometry(stamp_ns, buf))
                self._diag.odometry.tick()
                if self._p["publish_tf"] and self._tf is not None:
                    self._tf.sendTransform(out.fill_transform(stamp_ns, buf))
        feet = est.feet
        if feet:
            period = self._contacts_period_ns
            slot = stamp_ns // period if period else None
            if slot is None or slot != self._contacts_slot:  # contacts_rate_hz
                self._contacts_slot = slot
                for i, foot in enumerate(feet):
                    pub = self._wrench_pubs.get(foot.name)
                    if pub is None:
                        pub = self._wrench_pubs[foot.name] = self.create_publisher(
                            self._types.WrenchStamped, f"contact_wrench/{foot.name}", output_qos()
                        )
                    pub.publish(out.fill_wrench(stamp_ns, foot.name, buf, i))
                self._contacts_pub.publish(out.fill_contacts(stamp_ns, feet, buf))
            for foot in feet:
                if foot.in_contact and not foot.update_accepted:
                    self._diag.foot_rejected_updates[foot.name] += 1
        self._diag.last_estimate = est

    def _publish_diagnostics(self) -> None:
        if self._diag.last_estimate is not None:
            self._diag.covariance_ok = covariances_ok(self._diag.last_estimate)
        stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(self._diag_builder.build(self._diag, self._report.counts, stamp))

    # ---------------------------------------------------------------------------------------- accessors

    @property
    def estimator(self) -> Any:
        """The core ``RobotStateEstimator`` (None until a description is loaded)."""
        return self._est

    @property
    def reject_counts(self) -> dict[str, int]:
        """Cause -> number of warnings/rejections so far (the ``rejected.<cause>`` diagnostics)."""
        return dict(self._report.counts)


def main(args: list[str] | None = None) -> int:
    """Entry point of ``estimator_node`` (``ros2 run robot_state_estimator estimator_node``)."""
    rclpy.init(args=args)
    node = None
    code = 0
    try:
        node = EstimatorNode()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except StartupError as exc:
        rclpy.logging.get_logger(NODE_NAME).fatal(str(exc))
        code = 1
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


__all__ = ["NODE_NAME", "NODE_PARAMETERS", "EstimatorNode", "StartupError", "main"]

if __name__ == "__main__":
    sys.exit(main())
