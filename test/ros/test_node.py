"""The node in-process: an executor spins the estimator node and a test node (publisher of synthetic inputs,
subscriber of every output) until conditions hold. Real DDS, real description, real filter."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_state_estimator.common.time import stamp_to_ns  # noqa: E402
from robot_state_estimator.ros import qos  # noqa: E402
from robot_state_estimator.ros.node import EstimatorNode, StartupError  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .streams import GO1_FEET, GO1_JOINTS, STAND_Q, Step, bad_messages, imu_msg, joint_msg, standing  # noqa: E402

pytestmark = pytest.mark.ros

T0 = 1_000 * 10**9  # inputs start at t = 1000 s


class Harness:
    """The estimator node plus a test node that publishes inputs and records every output."""

    def __init__(self, context: Any, namespace: str, **params: Any) -> None:
        self.context = context
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        self.node = EstimatorNode(context=context, namespace=namespace, parameter_overrides=overrides)
        self.io = rclpy.create_node("node_test_io", namespace=namespace, context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.io)
        self.imu_pub = self.io.create_publisher(Imu, "imu/data", 1000)  # reliable publisher
        self.joint_pub = self.io.create_publisher(JointState, "joint_states", qos.sensor_qos(1000))
        self.out: dict[str, list] = defaultdict(list)
        self.io.create_subscription(Odometry, "odometry", self.out["odometry"].append, 1000)
        self.io.create_subscription(TFMessage, "/tf", self.out["tf"].append, qos.tf_qos())
        self.io.create_subscription(DiagnosticArray, "contact_states", self.out["contacts"].append, 1000)
        self.io.create_subscription(DiagnosticArray, "/diagnostics", self.out["diagnostics"].append, 100)
        for foot in GO1_FEET:
            self.io.create_subscription(
                WrenchStamped, f"contact_wrench/{foot}", self.out[f"wrench/{foot}"].append, 1000
            )
        self.ns = namespace.rstrip("/")
        assert spin_until(self.executor, self.connected)
        self.sent: dict[str, list[int]] = defaultdict(list)

    def connected(self) -> bool:
        """The odometry is published, and once the node has a description, its sensor inputs are subscribed
        (the node subscribes them only then)."""
        subscribed = self.node.estimator is None or (
            self.imu_pub.get_subscription_count() >= 1 and self.joint_pub.get_subscription_count() >= 1
        )
        return subscribed and self.io.count_publishers(f"{self.ns}/odometry") >= 1

    def publish(self, steps: Any, *, batch: int = 20) -> None:
        """Publish steps in small batches, spinning until the node has taken each batch."""
        pending = 0
        for step in steps:
            (self.imu_pub if step.kind == "imu" else self.joint_pub).publish(step.msg)
            self.sent[step.kind].append(step.stamp_ns)
            pending += 1
            if pending >= batch:
                self.settle()
                pending = 0
        self.settle()

    def received(self) -> int:
        return self.node._diag.imu.count + self.node._diag.joints.count

    def settle(self) -> None:
        target = len(self.sent["imu"]) + len(self.sent["joints"])
        assert spin_until(self.executor, lambda: self.received() >= target, timeout_s=10), (
            f"node received {self.received()} of {target} inputs"
        )

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.io.destroy_node()


@pytest.fixture
def harness(ros_context, request):
    h = Harness(ros_context, f"/{request.node.name.replace('[', '_').replace(']', '')}", robot="go1")
    yield h
    h.close()


def test_standing_robot_outputs_odometry_tf_wrenches_and_contacts(harness: Harness) -> None:
    harness.publish(standing(T0, 1.0))
    out = harness.out
    assert spin_until(harness.executor, lambda: len(out["odometry"]) > 100 and out["wrench/FL_foot"])
    input_stamps = set(harness.sent["imu"]) | set(harness.sent["joints"])
    for odom in out["odometry"]:
        assert odom.header.frame_id == "odom" and odom.child_frame_id == "base"
        assert stamp_to_ns(odom.header.stamp) in input_stamps
        values = np.r_[odom.pose.covariance, odom.twist.covariance]
        assert np.all(np.isfinite(values))
        for cov in (odom.pose.covariance, odom.twist.covariance):
            np.linalg.cholesky(np.asarray(cov).reshape(6, 6))  # SPD
    last = out["odometry"][-1]
    v = last.twist.twist.linear
    assert np.linalg.norm([v.x, v.y, v.z]) < 0.05
    q = last.pose.pose.orientation
    assert abs(q.w) > 0.999  # level
    transforms = [t for m in out["tf"] for t in m.transforms]
    assert transforms and transforms[-1].header.frame_id == "odom" and transforms[-1].child_frame_id == "base"
    assert {stamp_to_ns(t.header.stamp) for t in transforms} <= input_stamps
    tf_stamps = [stamp_to_ns(t.header.stamp) for t in transforms]
    assert tf_stamps == sorted(set(tf_stamps))  # strictly increasing: no TF_REPEATED_DATA
    for foot in GO1_FEET:
        w = out[f"wrench/{foot}"][-1]
        assert w.header.frame_id == foot and stamp_to_ns(w.header.stamp) in input_stamps
    contacts = out["contacts"][-1]
    assert [s.name for s in contacts.status] == list(GO1_FEET)
    assert all({kv.key for kv in s.values} >= {"contact", "normal_force"} for s in contacts.status)


def test_diagnostics_report_rates_and_filter(harness: Harness) -> None:
    harness.publish(standing(T0, 0.5))

    def status_values(status_name: str) -> dict[str, str]:
        """The key/values of the newest ``<node>: <status_name>`` status received."""
        name = f"{harness.node.get_fully_qualified_name()}: {status_name}"
        for array in reversed(harness.out["diagnostics"]):
            for status in array.status:
                if status.name == name:
                    return {kv.key: kv.value for kv in status.values}
        return {}

    def report(status_name: str) -> dict[str, str]:
        harness.out["diagnostics"].clear()
        harness.node._publish_diagnostics()  # the timer runs every second; trigger one now
        assert spin_until(harness.executor, lambda: bool(status_values(status_name)))
        return status_values(status_name)

    values = report("inputs")
    assert int(values["imu_received"]) == len(harness.sent["imu"])
    assert "rejected.imu_not_finite" in values

    # IMU samples after the last joint sample (an IMU faster than the joints): their estimates carry no feet,
    # and the contacts status keeps the last joint update's four feet (this stream's efforts do not put them in
    # contact; what matters is that they are reported, not "no contact information yet")
    last = harness.sent["imu"][-1]
    harness.publish([Step("imu", last + k * 2_000_000, imu_msg(last + k * 2_000_000)) for k in (1, 2, 3)])
    values = report("contacts")
    assert harness.node._diag.last_estimate is not None and harness.node._diag.last_estimate.feet == ()
    feet = harness.node._diag.last_feet_estimate.feet
    assert [f.name for f in feet] == list(GO1_FEET)
    assert all(values[f"{f.name}.in_contact"] == str(bool(f.in_contact)).lower() for f in feet)
    assert values["feet_in_contact"] == str(sum(f.in_contact for f in feet))


def test_bad_messages_are_skipped_counted_and_survived(harness: Harness) -> None:
    harness.publish(standing(T0, 0.4))
    bad = bad_messages(T0 + 400_000_000)
    for _key, kind, msg in bad:
        (harness.imu_pub if kind == "imu" else harness.joint_pub).publish(msg)
        harness.sent[kind].append(-1)
    harness.settle()
    counts = harness.node.reject_counts
    for key in {k for k, _, _ in bad}:
        assert counts.get(key, 0) >= 1, (key, counts)
    n_before = len(harness.out["odometry"])
    harness.publish(standing(T0 + 410_000_000, 0.2))
    assert spin_until(harness.executor, lambda: len(harness.out["odometry"]) > n_before + 50)
    for odom in harness.out["odometry"]:
        assert np.all(np.isfinite([odom.pose.pose.position.x, odom.twist.twist.linear.x]))


def test_bytes_that_do_not_deserialize_are_skipped_counted_and_survived(harness: Harness) -> None:
    """Bytes that are no Imu/JointState (a publisher of serialized messages can send any: truncated, a wrong
    encapsulation, trailing bytes) reach the node (raw subscriptions), fail rosbags' deserialization, and are
    skipped and counted as ``imu_bad_message`` / ``joint_bad_message``; the node goes on estimating."""
    harness.publish(standing(T0, 0.3))
    garbage = (
        b"\x00\x01\x00\x00abc",
        b"\x00\x01\x00\x00" + b"\xff" * 40,
        b"\x00\x07\x00\x00" + b"\x00" * 400,  # an encapsulation that is not plain CDR
    )
    for kind, pub in (("imu", harness.imu_pub), ("joints", harness.joint_pub)):
        for data in garbage:
            pub.publish(data)
            harness.sent[kind].append(-1)
    trailing = next(s for s in standing(T0 + 302_000_000, 0.01) if s.kind == "imu")
    harness.imu_pub.publish(serialize_message(trailing.msg) + b"\x00" * 16)
    harness.sent["imu"].append(-1)
    harness.settle()
    counts = harness.node.reject_counts
    assert counts.get("imu_bad_message") == len(garbage) + 1, counts
    assert counts.get("joint_bad_message") == len(garbage), counts
    n_before = len(harness.out["odometry"])
    harness.publish(standing(T0 + 310_000_000, 0.1))
    assert spin_until(harness.executor, lambda: len(harness.out["odometry"]) > n_before + 20)
    assert harness.received() == len(harness.sent["imu"]) + len(harness.sent["joints"])


def test_time_backwards_and_gap_reset_the_filter_and_it_continues(harness: Harness) -> None:
    harness.publish(standing(T0, 0.4))
    harness.publish(standing(T0 - 5 * 10**9, 0.4))  # a looping bag: 5 s back
    assert harness.node._diag.resets == 1
    assert harness.node.reject_counts.get("stamp_backwards", 0) >= 1
    harness.publish(standing(T0 + 10 * 10**9, 0.4))  # a 10 s gap (max_time_gap_s 0.5)
    assert harness.node._diag.resets == 2
    assert harness.node.reject_counts.get("stamp_gap", 0) == 1
    last = stamp_to_ns(harness.out["odometry"][-1].header.stamp)
    assert spin_until(
        harness.executor, lambda: stamp_to_ns(harness.out["odometry"][-1].header.stamp) >= T0 + 10 * 10**9
    ), last


def test_runtime_parameters_are_validated(harness: Harness) -> None:
    node = harness.node
    ok = node.set_parameters([Parameter("contact.on_threshold", value=0.4)])[0]
    assert ok.successful, ok.reason
    assert node.estimator.settings.contact.on_threshold == 0.4
    refused = node.set_parameters([Parameter("contact.off_threshold", value=0.9)])[0]
    assert not refused.successful and "off_threshold" in refused.reason
    assert node.get_parameter("contact.off_threshold").value != 0.9
    assert not node.set_parameters([Parameter("ekf.accel_noise_density", value=-1.0)])[0].successful
    assert not node.set_parameters([Parameter("odom_frame", value="map")])[0].successful
    assert not node.set_parameters([Parameter("ekf.max_dt_s", value=1.0)])[0].successful  # read-only
    harness.publish(standing(T0, 0.4))  # still estimating
    assert harness.out["odometry"]


def test_tf_child_frame_override_and_publish_tf_off(ros_context) -> None:
    h = Harness(ros_context, "/tf_override", robot="go1", tf_child_frame="base_rse", odom_frame="odom_rse")
    try:
        h.publish(standing(T0, 0.4))
        assert spin_until(h.executor, lambda: bool(h.out["tf"]))
        t = h.out["tf"][-1].transforms[0]
        assert (t.header.frame_id, t.child_frame_id) == ("odom_rse", "base_rse")
        assert h.out["odometry"][-1].child_frame_id == "base"

        def last_stamp(key: str) -> int:
            msg = h.out[key][-1]
            return stamp_to_ns((msg.transforms[0] if key == "tf" else msg).header.stamp)

        assert spin_until(h.executor, lambda: last_stamp("tf") == max(h.sent["imu"]))  # nothing in flight
        assert h.node.set_parameters([Parameter("publish_tf", value=False)])[0].successful
        n_tf = len(h.out["tf"])
        h.publish(standing(T0 + 400_000_000, 0.2))
        end = max(h.sent["imu"])
        assert spin_until(h.executor, lambda: last_stamp("odometry") == end)
        assert len(h.out["tf"]) == n_tf
    finally:
        h.close()


def test_outputs_without_subscribers_start_when_one_matches(ros_context) -> None:
    """The TF, wrenches and contact states are published only while a subscription is matched (volatile
    QoS: nothing written before a match would reach it anyway). A subscriber that appears mid-stream gets
    every output from its match on, as the one that was there from the start."""
    h = Harness(ros_context, "/lazy", robot="go1")
    late = rclpy.create_node("late_subscriber", namespace="/lazy", context=ros_context)
    try:
        node = h.node
        # the harness subscribes to every output: the node's publishers see those subscriptions
        assert node._outputs.tf_count() >= 1 and node._outputs.contacts_count() >= 1
        h.publish(standing(T0, 0.4))
        # a second subscriber of contact_states, created mid-stream
        got: list[Any] = []
        late.create_subscription(DiagnosticArray, "contact_states", got.append, 1000)
        h.executor.add_node(late)
        assert spin_until(h.executor, lambda: node._outputs.contacts_count() >= 2)
        h.publish(standing(T0 + 400_000_000, 0.2))
        end = max(h.sent["joints"])
        assert spin_until(
            h.executor,
            lambda: all(bool(m) and stamp_to_ns(m[-1].header.stamp) == end for m in (got, h.out["contacts"])),
        )
        late_stamps = [stamp_to_ns(m.header.stamp) for m in got]
        first = late_stamps[0]
        all_stamps = [stamp_to_ns(m.header.stamp) for m in h.out["contacts"]]
        assert late_stamps == [t for t in all_stamps if t >= first]  # none missed after the match
        assert first <= T0 + 400_000_000  # from the first input after the match at the latest
    finally:
        h.executor.remove_node(late)
        late.destroy_node()
        h.close()


def test_unsubscribed_outputs_are_not_published(ros_context) -> None:
    """With only odometry subscribed, the node fills and publishes nothing else (no conversion, no write)."""
    h = Harness(ros_context, "/only_odometry", robot="go1")
    try:
        # drop the harness's subscriptions of everything but odometry and diagnostics
        for sub in list(h.io.subscriptions):
            if sub.topic_name.split("/")[-1] not in ("odometry", "diagnostics"):
                h.io.destroy_subscription(sub)
        node = h.node
        assert spin_until(h.executor, lambda: node._outputs.tf_count() == 0 and node._outputs.contacts_count() == 0)
        assert spin_until(
            h.executor, lambda: all(p.get_subscription_count() == 0 for p in node._outputs.wrenches.values())
        )
        published: list[str] = []
        outputs = node._outputs
        outputs.refresh_counts()  # as the node does every COUNT_REFRESH_S: none of them is subscribed now

        def spy(name: str, original: Any) -> Any:
            def publish(*args: Any) -> Any:
                published.append(name)
                return original(*args)

            return publish

        # every way out of the optional outputs: the raw bytes and the message objects (the fallback)
        for name in ("fill_tf_message", "fill_transform", "fill_wrench", "fill_contacts"):
            setattr(outputs.messages, name, spy(name, getattr(outputs.messages, name)))
        outputs._contacts_publish = spy("contacts", outputs._contacts_publish)
        for foot, pub in outputs.wrenches.items():
            pub.publish = spy(foot, pub.publish)
        tf_pub = outputs._tf_publisher()
        tf_pub.publish = spy("tf", tf_pub.publish)
        h.publish(standing(T0, 0.4))
        end = max(h.sent["imu"])
        assert spin_until(h.executor, lambda: stamp_to_ns(h.out["odometry"][-1].header.stamp) == end)
        assert published == []
    finally:
        h.close()


def test_foot_forces_reach_the_core_and_bad_bytes_are_counted(ros_context) -> None:
    """use_foot_forces: the foot_forces subscription (raw, deserialized by rosbags like the sensor inputs)
    feeds the core: zero foot-sensor readings put every foot out of contact although the joint torques of
    the standing robot say contact; bytes that are no JointState count as foot_force_bad_message."""
    from robot_state_estimator.common.samples import JointSample
    from robot_state_estimator.io import messages
    from robot_state_estimator.ros.message_types import TYPES

    # ekf.init_wait_for_loaded_feet off: the zero foot-sensor readings are this test's input (sensors that disagree
    # with the torques), and the filter would otherwise not initialise on them (98f97dd) nor publish contacts
    h = Harness(
        ros_context, "/foot_forces", robot="go1", use_foot_forces=True, **{"ekf.init_wait_for_loaded_feet": False}
    )
    try:
        pub = h.io.create_publisher(JointState, "foot_forces", qos.sensor_qos(1000))
        assert spin_until(h.executor, lambda: pub.get_subscription_count() >= 1)
        n_sent = 0
        for step in standing(T0, 0.4):
            (h.imu_pub if step.kind == "imu" else h.joint_pub).publish(step.msg)
            h.sent[step.kind].append(step.stamp_ns)
            if step.kind == "joints":
                zeros = np.zeros(len(GO1_FEET))
                pub.publish(messages.joint_state_msg(TYPES, JointSample(step.stamp_ns, GO1_FEET, zeros, None, zeros)))
                n_sent += 1
            if n_sent % 20 == 0:
                h.settle()
        for data in (b"\x00\x01\x00\x00abc", b"\x00\x01\x00\x00" + b"\xff" * 40):
            pub.publish(data)
            n_sent += 1
        h.settle()
        assert spin_until(h.executor, lambda: h.node._diag.foot_forces.count == n_sent)
        assert h.node.reject_counts.get("foot_force_bad_message") == 2
        end = max(h.sent["joints"])
        assert spin_until(
            h.executor, lambda: bool(h.out["contacts"]) and stamp_to_ns(h.out["contacts"][-1].header.stamp) == end
        )
        assert [st.message for st in h.out["contacts"][-1].status] == ["no_contact"] * len(GO1_FEET)
    finally:
        h.close()


def test_description_from_the_robot_description_topic(ros_context) -> None:
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description import load_description

    xml = load_description(str(robot_description_path("go1"))).xml
    latch = rclpy.create_node("description_publisher", namespace="/from_topic", context=ros_context)
    pub = latch.create_publisher(String, "robot_description", qos.description_qos())
    pub.publish(String(data=xml))  # published before the estimator starts: transient local delivers it
    h = Harness(ros_context, "/from_topic")
    try:
        h.executor.add_node(latch)
        assert h.node.estimator is None
        assert spin_until(h.executor, lambda: h.node.estimator is not None)
        assert spin_until(h.executor, h.connected)  # subscribed once the description is loaded
        h.publish(standing(T0, 0.4))
        assert h.out["odometry"]
    finally:
        h.close()
        latch.destroy_node()


def test_sensor_inputs_are_subscribed_only_once_a_description_is_loaded(ros_context) -> None:
    """A player waiting for subscribers (bag_player --wait-for-subscribers) starts only when the node can
    process the first sample: before a description there is no subscription to match, after it the very first
    sample is taken (none is dropped as no_description)."""
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description import load_description

    h = Harness(ros_context, "/no_description")
    latch = rclpy.create_node("late_description_publisher", namespace="/no_description", context=ros_context)
    try:
        for _ in range(50):
            h.executor.spin_once(timeout_sec=0.01)
        assert h.node.sensor_subscriptions == []
        assert h.imu_pub.get_subscription_count() == 0 and h.joint_pub.get_subscription_count() == 0
        pub = latch.create_publisher(String, "robot_description", qos.description_qos())
        pub.publish(String(data=load_description(str(robot_description_path("go1"))).xml))
        assert spin_until(h.executor, lambda: h.node.estimator is not None)
        assert spin_until(h.executor, h.connected)
        h.publish(standing(T0, 0.01))
        assert h.node._diag.imu.count == len(h.sent["imu"]) and h.node._diag.joints.count == len(h.sent["joints"])
        assert h.node.reject_counts.get("no_description", 0) == 0
    finally:
        h.close()
        latch.destroy_node()


def test_invalid_description_source_fails_at_start(ros_context) -> None:
    with pytest.raises(StartupError, match="robot description"):
        EstimatorNode(
            context=ros_context, parameter_overrides=[Parameter("description_file", value="/nonexistent.urdf")]
        )
    with pytest.raises(StartupError) as info:
        EstimatorNode(context=ros_context, parameter_overrides=[Parameter("robot", value="go2")])
    # the message itself, not the repr that str(KeyError) gives (no stray double quotes around it)
    assert str(info.value) == (
        "cannot load the robot description: unknown bundled robot 'go2'; known: ['anymal_c', 'go1', 'solo12']"
    )


def test_output_rates_decimate_odometry_tf_and_contacts(ros_context) -> None:
    h = Harness(ros_context, "/decimated", robot="go1", odometry_rate_hz=50.0, contacts_rate_hz=20.0)
    try:
        h.publish(standing(T0, 1.0))  # IMU and joints at 500 Hz
        end = max(h.sent["imu"])

        def stamps(key: str) -> list[int]:
            return [stamp_to_ns((m.transforms[0] if key == "tf" else m).header.stamp) for m in h.out[key]]

        assert spin_until(h.executor, lambda: stamps("odometry") and stamps("odometry")[-1] >= end - 20_000_000)
        assert spin_until(h.executor, lambda: stamps("tf") == stamps("odometry"))  # TF follows odometry
        for key, period_ns in (("odometry", 20_000_000), ("contacts", 50_000_000), ("wrench/FL_foot", 50_000_000)):
            got = stamps(key)
            assert got == sorted(got) and set(got) <= set(h.sent["imu"]), key
            slots = [s // period_ns for s in got]
            assert len(set(slots)) == len(slots), f"{key}: two messages in one period"
            # every period of the stream after initialisation has its message, the first sample of the period
            expected = range(slots[0], end // period_ns + 1)
            assert slots == list(expected), (key, slots)
            first_of_period = {}
            for t in sorted(h.sent["imu"]):
                first_of_period.setdefault(t // period_ns, t)
            assert all(s == first_of_period[s // period_ns] for s in got[1:]), key  # the first sample of each
        n_odom = len(h.out["odometry"])
        assert 40 <= n_odom <= 51
        # live change back to every sample
        assert h.node.set_parameters([Parameter("odometry_rate_hz", value=0.0)])[0].successful
        h.publish(standing(T0 + 1_000_000_000, 0.2))
        last = max(h.sent["imu"])
        assert spin_until(h.executor, lambda: stamps("odometry")[-1] == last)
        assert len(h.out["odometry"]) - n_odom == 100  # one per IMU sample
        assert not h.node.set_parameters([Parameter("contacts_rate_hz", value=-1.0)])[0].successful
    finally:
        h.close()


def _inputs_status(harness: Harness) -> Any:
    name = f"{harness.node.get_fully_qualified_name()}: inputs"
    for array in reversed(harness.out["diagnostics"]):
        for status in array.status:
            if status.name == name:
                return status
    return None


def test_lost_samples_are_detected_from_the_stamps_and_reported(quiet_harness: Harness) -> None:
    harness = quiet_harness
    # A publisher that skips stamps (as a best-effort queue that overflows): IMU samples 200-202 and 400-404
    # and joint samples 300-301 of a 500 Hz stream are never sent.
    skip_imu = {*range(200, 203), *range(400, 405)}
    skip_joints = {300, 301}
    steps = [
        step
        for k, step in enumerate(standing(T0, 1.0))
        if not (step.kind == "imu" and k // 2 in skip_imu) and not (step.kind == "joints" and k // 2 in skip_joints)
    ]
    harness.publish(steps)
    harness.out["diagnostics"].clear()
    harness.node._publish_diagnostics()  # the timer runs every second; trigger one now
    assert spin_until(harness.executor, lambda: _inputs_status(harness) is not None)
    status = _inputs_status(harness)
    values = {kv.key: kv.value for kv in status.values}
    assert int(values["imu_lost"]) == len(skip_imu)
    assert int(values["joint_states_lost"]) == len(skip_joints)
    assert int(values["lost_total"]) == len(skip_imu) + len(skip_joints)
    assert int(values["rejected_total"]) == 0  # nothing was rejected: the samples never arrived
    assert status.level == b"\x01" and "lost" in status.message and "qos_depth" in status.message
    # the next report without new losses is OK again
    harness.publish(standing(T0 + 10**9, 0.1))
    harness.out["diagnostics"].clear()
    harness.node._publish_diagnostics()
    assert spin_until(harness.executor, lambda: _inputs_status(harness) is not None)
    assert _inputs_status(harness).level == b"\x00", _inputs_status(harness).message


def test_rejected_samples_are_not_also_counted_as_lost(quiet_harness: Harness) -> None:
    """Samples that reach the node and are skipped (missing joint, NaN, wrong frame) are rejections: the next good
    sample is no gap. Of a 500 Hz stream, joint samples 300 (a joint missing) and 301 (a NaN position) and IMU
    samples 200 (NaN acceleration) and 201 (a camera's frame) are replaced by bad ones at their stamps."""
    harness = quiet_harness
    bad = {
        ("joints", 300): ("joint_missing_names", lambda t: joint_msg(t, names=GO1_JOINTS[:-1], position=STAND_Q[:-1])),
        ("joints", 301): ("joint_not_finite", lambda t: joint_msg(t, position=np.r_[STAND_Q[:-1], np.nan])),
        ("imu", 200): ("imu_not_finite", lambda t: imu_msg(t, acc=(float("nan"), 0.0, 9.81))),
        ("imu", 201): ("imu_frame_id", lambda t: imu_msg(t, frame_id="camera_link")),
    }
    steps = []
    for k, step in enumerate(standing(T0, 1.0)):
        replaced = bad.get((step.kind, k // 2))
        steps.append(Step(step.kind, step.stamp_ns, replaced[1](step.stamp_ns)) if replaced else step)
    harness.publish(steps)
    harness.out["diagnostics"].clear()
    harness.node._publish_diagnostics()
    assert spin_until(harness.executor, lambda: _inputs_status(harness) is not None)
    values = {kv.key: kv.value for kv in _inputs_status(harness).values}
    assert int(values["imu_lost"]) == 0 and int(values["joint_states_lost"]) == 0 and int(values["lost_total"]) == 0
    assert int(values["rejected_total"]) == len(bad)
    counts = harness.node.reject_counts
    for key, _ in bad.values():
        assert counts.get(key) == 1, (key, counts)
    assert "joint_states_lost" not in counts and "imu_lost" not in counts


def test_joint_states_without_imu_log_a_warning_naming_the_imu_topic(quiet_harness: Harness) -> None:
    harness = quiet_harness
    node = harness.node
    node.input_watch.no_imu_after_s = 0.3  # 2 s on a robot; shortened for the test
    steps = [s for s in standing(T0, 2.0, rate_hz=200.0) if s.kind == "joints"]
    ns = node.get_namespace().rstrip("/")
    sent = iter(steps)

    def feed_until_warned() -> bool:
        step = next(sent, None)
        if step is not None:
            harness.joint_pub.publish(step.msg)
        return bool(node.input_watch.no_imu_warning)

    assert spin_until(harness.executor, feed_until_warned, timeout_s=10.0)
    assert (
        f"{ns}/imu/data" in node.input_watch.no_imu_warning and f"{ns}/joint_states" in node.input_watch.no_imu_warning
    )
    assert node._diag.imu.count == 0 and node.reject_counts.get("no_imu", 0) == 0


def _wall_clock_standing(duration_s: float, *, rate_hz: float = 500.0) -> Any:
    """``standing`` with each stamp taken from the wall clock when the step is published (as a robot does)."""
    last = 0
    for k, step in enumerate(standing(T0, duration_s, rate_hz=rate_hz)):
        if k % 2 == 0:  # IMU then joints of one stamp
            last = max(time.time_ns(), last + 1000)
            t = last
        if step.kind == "imu":
            yield Step("imu", t, imu_msg(t))
        else:
            yield Step("joints", t, joint_msg(t))


def _report(harness: Harness) -> dict[str, str]:
    harness.out["diagnostics"].clear()
    harness.node._publish_diagnostics()  # the timer of quiet_harness does not fire; trigger one report
    assert spin_until(harness.executor, lambda: _inputs_status(harness) is not None)
    return {kv.key: kv.value for kv in _inputs_status(harness).values}


def _assert_processing(values: dict[str, str]) -> None:
    assert int(values["processing_samples"]) > 0
    p50, p99 = float(values["processing_p50_ms"]), float(values["processing_p99_ms"])
    assert math.isfinite(p50) and math.isfinite(p99) and 0 <= p50 <= p99


def test_diagnostics_report_the_latency_of_wall_clock_stamps_and_not_of_bag_stamps(quiet_harness: Harness) -> None:
    harness = quiet_harness
    harness.publish(_wall_clock_standing(0.6))
    assert spin_until(harness.executor, lambda: len(harness.out["odometry"]) > 100)
    values = _report(harness)
    n_odom = int(values["odometry_published"])
    assert 0 < int(values["latency_samples"]) <= n_odom
    p50, p99 = float(values["latency_p50_ms"]), float(values["latency_p99_ms"])
    assert math.isfinite(p50) and math.isfinite(p99) and 0 <= p50 <= p99 < 10_000
    _assert_processing(values)
    assert int(_report(harness)["latency_samples"]) == 0  # each report covers the values since the previous one
    # stamps that are not wall-clock time (a bag, a simulator at t = 1000 s): no stamp latency, processing still
    harness.publish(standing(T0, 0.3))
    values = _report(harness)
    assert int(values["latency_samples"]) == 0
    assert math.isnan(float(values["latency_p50_ms"])) and math.isnan(float(values["latency_p99_ms"]))
    _assert_processing(values)


def test_no_stamp_latency_with_sim_time(ros_context) -> None:
    h = Harness(ros_context, "/latency_sim_time", robot="go1", diagnostics_period_s=60.0, use_sim_time=True)
    try:
        h.publish(_wall_clock_standing(0.4))  # wall-clock stamps, but the node runs on sim time: not measured
        values = _report(h)
        assert int(values["odometry_published"]) > 0
        assert int(values["latency_samples"]) == 0 and math.isnan(float(values["latency_p99_ms"]))
        _assert_processing(values)
    finally:
        h.close()


def test_input_deserializers_are_generated_at_start_not_by_the_first_samples(ros_context) -> None:
    """rosbags generates a type's deserializer at its first use (10-20 ms of CPU for an Imu or a JointState):
    the node does it at construction, so the first samples' callbacks take no such stall."""
    from robot_state_estimator.io.bags import default_typestore
    from robot_state_estimator.ros.inputs import IMU_TYPE, JOINT_STATE_TYPE

    typestore = default_typestore()
    typestore.cache.clear()  # as in a fresh process (the cache is filled again on demand)
    harness = Harness(ros_context, "/deserializers_at_start", robot="go1")
    try:
        generated = set(typestore.cache)
        assert {IMU_TYPE, JOINT_STATE_TYPE, "std_msgs/msg/Header"} <= generated
        harness.publish(standing(T0, 1.0))  # spins until the node has taken every sample
        assert harness.node._diag.odometry.count > 0
        assert set(typestore.cache) == generated  # nothing generated while streaming
    finally:
        harness.close()


def test_description_warnings_are_logged_and_kept(ros_context, tmp_path) -> None:
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description import load_description

    # gz-sensors compares the localization exactly: a lower-case "enu" loads here with a DescriptionWarning
    xml = load_description(str(robot_description_path("go1"))).xml
    assert xml.count("<imu>") == 1
    xml = xml.replace(
        "<imu>", "<imu><orientation_reference_frame><localization>enu</localization></orientation_reference_frame>"
    )
    path = tmp_path / "go1_lowercase_localization.urdf"
    path.write_text(xml)
    node = EstimatorNode(context=ros_context, parameter_overrides=[Parameter("description_file", value=str(path))])
    try:
        assert node.estimator is not None
        assert len(node.description_warnings) == 1
        assert node.description_warnings[0].startswith("DescriptionWarning:")
        assert "localization" in node.description_warnings[0]
    finally:
        node.destroy_node()


@pytest.mark.parametrize("name", ["base_frame", "tf_child_frame"])
def test_an_output_frame_that_is_another_frame_of_the_robot_fails_at_start(ros_context, name: str) -> None:
    """base_frame / tf_child_frame name B in the outputs: a name of the description that is not B (imu_link: B is
    at (0.01592, 0.06659, 0.00617) m in it, from the Go1 URDF's imu_joint) would label B's pose with another
    frame of the robot's TF tree; a name the description does not have (base_link) renames B."""
    with pytest.raises(StartupError) as info:
        EstimatorNode(
            context=ros_context,
            parameter_overrides=[Parameter("robot", value="go1"), Parameter(name, value="imu_link")],
        )
    assert f"{name} 'imu_link': link 'imu_link' is not the base link 'base'" in str(info.value)
    assert "offset by (0.01592, 0.06659, 0.00617) m" in str(info.value)
    node = EstimatorNode(
        context=ros_context, parameter_overrides=[Parameter("robot", value="go1"), Parameter(name, value="base_link")]
    )
    node.destroy_node()
