"""The node's sensor inputs: raw subscriptions, their messages decoded, counted and handed to the stream.

Topics (relative names; best-effort QoS of depth ``qos_depth``, matched by reliable and best-effort publishers):
``imu/data`` (sensor_msgs/Imu), ``joint_states`` (sensor_msgs/JointState), ``foot_forces`` (sensor_msgs/JointState,
with ``use_foot_forces``), ``contact_schedule`` (sensor_msgs/JointState, with ``contact.source: schedule``) and one
geometry_msgs/WrenchStamped topic per foot (``use_foot_wrenches``, ``foot_wrench_topics``).

The inputs are taken as bytes (``raw=True`` subscriptions of the same types and QoS): rclpy's own conversion
builds the Python message through the generated classes' ``__init__`` and setters (60-80 us for an ``Imu``). The
IMU and joint-state bytes are decoded straight into the core's samples (``io.cdr_samples``: the CDR rules of
``io.cdr`` on one message, then the same conversion as a deserialized message; 2-5 us) and given to
``EstimatorStream.on_imu`` / ``on_joints``. Whatever is not the plain case there (a non-finite value, duplicate
names, big-endian data, bytes that do not decode), and the other inputs, are deserialized with one rosbags call
(``Typestore.deserialize_cdr``, 20-35 us) into the message the readers of ``io/messages.py`` read, as ``replay``
reads bags, and go through ``EstimatorStream.on_*_msg``, which names what is wrong. Bytes that do not deserialize
(a publisher of serialized data can send any) are skipped and counted as ``imu_bad_message`` /
``joint_bad_message`` / ``foot_force_bad_message`` / ``foot_wrench_bad_message`` / ``schedule_bad_message``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState

from robot_state_estimator.io.bags import default_typestore
from robot_state_estimator.io.cdr_samples import ImuDecoder, JointStateDecoder
from robot_state_estimator.io.messages import TYPE_NAMES
from robot_state_estimator.io.stream import EstimatorStream
from robot_state_estimator.ros.diagnostics import DiagnosticsState
from robot_state_estimator.ros.input_watch import InputWatch
from robot_state_estimator.ros.qos import sensor_qos
from robot_state_estimator.ros.reporting import ThrottledReporter

IMU_TYPE = TYPE_NAMES["Imu"]
JOINT_STATE_TYPE = TYPE_NAMES["JointState"]
WRENCH_TYPE = TYPE_NAMES["WrenchStamped"]

#: ``feed(handler, msg, what)``: the node passes ``msg`` through ``handler(stream, msg)`` (an
#: ``EstimatorStream.on_*_msg``) and publishes the outputs; ``what`` names the input in its messages.
Feed = Callable[[Callable[[EstimatorStream, Any], Any], Any, str], None]


class SensorInputs:
    """The node's sensor subscriptions and their callbacks (module docstring).

    Args:
        node: the node that owns the subscriptions.
        diag: its diagnostics state (the receive counters are ticked here).
        report: its throttled reporter (bad messages).
        watch: its input watch (told the resolved topic names).
        feed: the node's feed (``Feed``).
        depth: history depth of the subscriptions (``qos_depth``).

    Attributes:
        t_entry_ns: ``time.perf_counter_ns()`` at the entry of the last callback (the processing latency).
    """

    def __init__(
        self, node: Node, diag: DiagnosticsState, report: ThrottledReporter, watch: InputWatch, feed: Feed, depth: int
    ) -> None:
        self._node = node
        self._diag = diag
        self._report = report
        self._watch = watch
        self._feed = feed
        self._depth = depth
        self.t_entry_ns = 0
        typestore = default_typestore()
        self._deserialize = typestore.deserialize_cdr
        # rosbags generates (and caches) the code that deserializes a type at its first use: about 20 ms of CPU
        # for an Imu, 10 ms for a JointState, which the first samples' callbacks would spend; done here instead
        for typename in (IMU_TYPE, JOINT_STATE_TYPE, WRENCH_TYPE):
            typestore.get_msgdef(typename)
        self._imu_sample = ImuDecoder().sample
        self._joint_sample = JointStateDecoder().sample
        self.imu: Any = None
        self.joints: Any = None
        self.foot_forces: Any = None
        self.schedule: Any = None
        self.wrenches: dict[str, Any] = {}  # foot -> its WrenchStamped subscription

    @property
    def subscriptions(self) -> list[Any]:
        """The sensor subscriptions made so far (the hot path of ``ros.spin.LeanExecutor``)."""
        subs = [self.imu, self.joints, self.foot_forces, self.schedule, *self.wrenches.values()]
        return [s for s in subs if s is not None]

    def subscribe(self, *, foot_forces: bool, schedule: bool) -> None:
        """Create the IMU and joint-state subscriptions, and those of the foot forces and the contact schedule
        when asked (once: later calls do nothing)."""
        if self.imu is not None:
            return
        node, qos = self._node, sensor_qos(self._depth)
        self.imu = node.create_subscription(Imu, "imu/data", self._on_imu, qos, raw=True)
        self.joints = node.create_subscription(JointState, "joint_states", self._on_joints, qos, raw=True)
        topics = self._watch.topics
        topics["imu"], topics["joint_states"] = self.imu.topic_name, self.joints.topic_name
        if foot_forces:
            self.foot_forces = node.create_subscription(JointState, "foot_forces", self._on_foot_forces, qos, raw=True)
            topics["foot_forces"] = self.foot_forces.topic_name
        if schedule:
            self.schedule = node.create_subscription(
                JointState, "contact_schedule", self._on_contact_schedule, qos, raw=True
            )

    def subscribe_foot_wrenches(self, topics: dict[str, str]) -> None:
        """One WrenchStamped subscription per foot of ``topics`` (foot -> topic) that has none yet."""
        diag = self._diag
        for foot, topic in topics.items():
            if foot in self.wrenches:
                continue
            sub = self.wrenches[foot] = self._node.create_subscription(
                WrenchStamped, topic, lambda data, foot=foot: self._on_foot_wrench(data, foot),
                sensor_qos(self._depth), raw=True,
            )  # fmt: skip
            diag.foot_wrenches[foot] = diag.foot_wrenches.get(foot) or type(diag.imu)()
            self._watch.watch_foot_wrench(foot, sub.topic_name)

    # ------------------------------------------------------------------------------------------ callbacks

    def _take(self, data: bytes, typename: str, bad_key: str, what: str) -> Any:
        """The message the bytes ``data`` hold (rosbags' deserializer), or None after reporting ``bad_key``."""
        try:
            return self._deserialize(data, typename)
        except Exception as exc:
            self._report.warn(bad_key, f"{what} skipped: {len(data)} bytes are no {typename}: {exc}")
            return None

    def _on_imu(self, data: bytes) -> None:
        self.t_entry_ns = time.perf_counter_ns()
        self._diag.imu.tick()
        sample = self._imu_sample(data)
        if sample is not None:
            self._feed(EstimatorStream.on_imu, sample, "IMU")
            return
        msg = self._take(data, IMU_TYPE, "imu_bad_message", "IMU sample")
        if msg is not None:
            self._feed(EstimatorStream.on_imu_msg, msg, "IMU")

    def _on_joints(self, data: bytes) -> None:
        self.t_entry_ns = time.perf_counter_ns()
        self._diag.joints.tick()
        sample = self._joint_sample(data)
        if sample is not None:
            self._feed(EstimatorStream.on_joints, sample, "joint")
            return
        msg = self._take(data, JOINT_STATE_TYPE, "joint_bad_message", "joint sample")
        if msg is not None:
            self._feed(EstimatorStream.on_joints_msg, msg, "joint")

    def _on_foot_forces(self, data: bytes) -> None:
        self.t_entry_ns = time.perf_counter_ns()
        self._diag.foot_forces.tick()
        msg = self._take(data, JOINT_STATE_TYPE, "foot_force_bad_message", "foot-force sample")
        if msg is not None:
            self._feed(EstimatorStream.on_foot_forces_msg, msg, "foot-force")

    def _on_foot_wrench(self, data: bytes, foot: str) -> None:
        self.t_entry_ns = time.perf_counter_ns()
        self._diag.foot_wrenches[foot].tick()
        msg = self._take(data, WRENCH_TYPE, "foot_wrench_bad_message", f"foot wrench sample of {foot}")
        if msg is not None:
            self._feed(lambda stream, m: stream.on_foot_wrench_msg(m, foot), msg, f"{foot} wrench")

    def _on_contact_schedule(self, data: bytes) -> None:
        self.t_entry_ns = time.perf_counter_ns()
        self._diag.schedule.tick()
        msg = self._take(data, JOINT_STATE_TYPE, "schedule_bad_message", "contact schedule")
        if msg is not None:
            self._feed(EstimatorStream.on_contact_schedule_msg, msg, "contact-schedule")


__all__ = ["IMU_TYPE", "JOINT_STATE_TYPE", "WRENCH_TYPE", "Feed", "SensorInputs"]
