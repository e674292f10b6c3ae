"""The node over real DDS with foot wrench sensors (one geometry_msgs/WrenchStamped topic per foot, in several frames
of the description) and a controller's contact schedule (sensor_msgs/JointState on ``contact_schedule``): what
reaches the outputs, and bad or stopped foot inputs named in the counts and the diagnostics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_state_estimator.common.samples import ContactScheduleSample  # noqa: E402
from robot_state_estimator.common.time import stamp_to_ns  # noqa: E402
from robot_state_estimator.io import messages  # noqa: E402
from robot_state_estimator.ros import qos  # noqa: E402
from robot_state_estimator.ros.message_types import TYPES  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .streams import GO1_FEET, STAND_Q, standing  # noqa: E402
from .test_node import T0, Harness  # noqa: E402

pytestmark = pytest.mark.ros


def _status(h: Harness, part: str) -> dict[str, str]:
    h.out["diagnostics"].clear()
    h.node._publish_diagnostics()
    name = f"{h.node.get_fully_qualified_name()}: {part}"

    def found() -> dict[str, str]:
        for array in h.out["diagnostics"]:
            for status in array.status:
                if status.name == name:
                    return {kv.key: kv.value for kv in status.values}
        return {}

    assert spin_until(h.executor, lambda: bool(found()))
    return found()


def _foot_wrenches_in(frames: dict[str, str], force_z: dict[str, float]) -> dict[str, np.ndarray]:
    """Per foot, a vertical force at the foot origin (the level standing Go1: world = base axes) as a sensor in
    ``frames[foot]`` reports it: ``R_SB f`` and the moment about S's origin ``R_SB ((r_F - p_S) x f)`` (B axes),
    with the placements from pinocchio's forward kinematics at the standing pose."""
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description import load_description

    model = load_description(str(robot_description_path("go1"))).model
    data = model.createData()
    q = pin.neutral(model)
    q[7:] = STAND_Q
    pin.framesForwardKinematics(model, data, q)
    out = {}
    for foot, frame in frames.items():
        f = np.array([0.0, 0.0, force_z[foot]])
        r = data.oMf[model.getFrameId(foot)].translation
        S = data.oMf[model.getFrameId(frame)]
        out[foot] = np.r_[S.rotation.T @ f, S.rotation.T @ np.cross(r - S.translation, f)]
    return out


def test_foot_wrench_topics_give_contacts_and_wrenches_and_name_bad_ones(ros_context: Any) -> None:
    frames = {"FL_foot": "base", "FR_foot": "FR_calf", "RL_foot": "RL_thigh", "RR_foot": "RR_foot"}
    force_z = {"FL_foot": 0.0, "FR_foot": 45.0, "RL_foot": 45.0, "RR_foot": 45.0}
    wrenches = _foot_wrenches_in(frames, force_z)
    h = Harness(ros_context, "/wrenches", robot="go1", use_foot_wrenches=True, diagnostics_period_s=60.0)
    try:
        pubs = {f: h.io.create_publisher(WrenchStamped, f"{f}/wrench", qos.sensor_qos(1000)) for f in GO1_FEET}
        assert spin_until(h.executor, lambda: all(p.get_subscription_count() >= 1 for p in pubs.values()))
        n = 0
        for step in standing(T0, 0.6):
            if step.kind == "joints":
                stopped = step.stamp_ns >= T0 + 300_000_000  # RR's topic stops after 0.3 s
                for foot, pub in pubs.items():
                    if foot != "RR_foot" or not stopped:
                        pub.publish(messages.wrench_stamped_msg(TYPES, step.stamp_ns, frames[foot], wrenches[foot]))
            (h.imu_pub if step.kind == "imu" else h.joint_pub).publish(step.msg)
            h.sent[step.kind].append(step.stamp_ns)
            n += 1
            if n % 20 == 0:
                h.settle()
        h.settle()
        # while all four streamed: FL unloaded, the others loaded; the published wrench is the sensor's in the foot
        # frame (FR: moved from the calf, a fixed offset along the calf; the force along the world vertical)
        at = T0 + 200_000_000
        assert spin_until(h.executor, lambda: any(stamp_to_ns(m.header.stamp) == at for m in h.out["contacts"]))
        contacts = next(m for m in h.out["contacts"] if stamp_to_ns(m.header.stamp) == at)
        assert [s.message for s in contacts.status] == ["no_contact", "contact", "contact", "contact"]
        fr = next(m for m in h.out["wrench/FR_foot"] if stamp_to_ns(m.header.stamp) == at)
        assert fr.header.frame_id == "FR_foot"
        calf = h.node.estimator.kin  # the standing pose: the foot axes are the calf's, rotated by thigh + calf
        R_bf = calf.R_base_foot[1]
        np.testing.assert_allclose([fr.wrench.force.x, fr.wrench.force.y, fr.wrench.force.z],
                                   R_bf.T @ [0, 0, 45.0], atol=1e-6)  # fmt: skip
        np.testing.assert_allclose([fr.wrench.torque.x, fr.wrench.torque.y, fr.wrench.torque.z], 0.0, atol=1e-6)
        # RR stopped: named by the core (event foot_wrench_stale, not a rejection) and in the contacts status
        assert h.node.estimator.stale_foot_wrenches == ("RR_foot",)
        values = _status(h, "contacts")
        assert values["foot_wrenches_stale"] == "RR_foot" and values["contact_source"] == "torque"
        assert "foot_wrench_stale" in h.node._report.counts or "foot_wrench_stale" in h.node._stream.events
        # bad messages: NaN (the adapter), a frame that is not the Go1's (the core), both counted by cause
        pub = pubs["FL_foot"]
        bad = messages.wrench_stamped_msg(TYPES, T0 + 600_000_000, "base", np.r_[np.nan, np.zeros(5)])
        pub.publish(bad)
        pub.publish(messages.wrench_stamped_msg(TYPES, T0 + 600_000_000, "l_sole", np.zeros(6)))
        assert spin_until(
            h.executor,
            lambda: (
                h.node.reject_counts.get("foot_wrench_not_finite") == 1
                and h.node.reject_counts.get("foot_wrench_unknown_frame") == 1
            ),
        )
        values = _status(h, "inputs")
        assert values["rejected.foot_wrench_not_finite"] == "1" and "foot_wrench_rate_hz.RR_foot" in values
    finally:
        h.close()


def test_contact_schedule_topic_decides_contacts(ros_context: Any) -> None:
    h = Harness(ros_context, "/schedule", robot="go1", diagnostics_period_s=60.0, **{"contact.source": "schedule"})
    try:
        pub = h.io.create_publisher(JointState, "contact_schedule", qos.sensor_qos(1000))
        assert spin_until(h.executor, lambda: pub.get_subscription_count() >= 1)
        schedule = (True, False, False, True)
        n = 0
        for step in standing(T0, 0.4):
            if step.kind == "imu":
                sample = ContactScheduleSample(step.stamp_ns, GO1_FEET[::-1], schedule[::-1])  # any order of names
                pub.publish(messages.contact_schedule_msg(TYPES, sample))
            (h.imu_pub if step.kind == "imu" else h.joint_pub).publish(step.msg)
            h.sent[step.kind].append(step.stamp_ns)
            n += 1
            if n % 20 == 0:
                h.settle()
        h.settle()
        end = max(h.sent["joints"])
        assert spin_until(
            h.executor, lambda: bool(h.out["contacts"]) and stamp_to_ns(h.out["contacts"][-1].header.stamp) == end
        )
        assert [s.message for s in h.out["contacts"][-1].status] == ["contact", "no_contact", "no_contact", "contact"]
        assert h.node.estimator.contact_source == "schedule"
        biped = messages.contact_schedule_msg(TYPES, ContactScheduleSample(end, ("l_sole", "r_sole"), (True, True)))
        pub.publish(biped)
        assert spin_until(h.executor, lambda: h.node.reject_counts.get("schedule_unknown_feet") == 1)
        values = _status(h, "contacts")
        assert values["contact_source"] == "schedule" and "FL_foot.schedule_disagreements" in values
    finally:
        h.close()


def test_the_node_equals_replay_on_foot_wrenches(ros_context: Any, tmp_path: Any) -> None:
    """The same IMU, joint and foot wrench messages (three feet in other frames, one foot unloaded, then RR's sensor
    stopping) through the node over DDS, one at a time in stamp order, and through replay from a bag: the same contact
    states and the same wrenches at every joint stamp (both adapters run io/stream's rules over the same core)."""
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.common.samples import ImuSample, JointSample
    from robot_state_estimator.io.bags import BagWriter, default_types
    from robot_state_estimator.ros.parameters import base_settings
    from robot_state_estimator.tools.replay import ReplayOptions, replay

    frames = {"FL_foot": "base", "FR_foot": "FR_calf", "RL_foot": "RL_thigh", "RR_foot": "RR_foot"}
    force_z = {"FL_foot": 0.0, "FR_foot": 45.0, "RL_foot": 45.0, "RR_foot": 45.0}
    wrenches = _foot_wrenches_in(frames, force_z)
    joints = tuple(f"{leg}_{j}_joint" for leg in ("FL", "FR", "RL", "RR") for j in ("hip", "thigh", "calf"))
    effort = np.resize([0.0, 2.0, -5.0], 12)
    steps: list[tuple[str, Any, Any]] = []  # (topic, sample builder(types), foot) in stamp order, replay's tie order
    for k in range(260):
        t = T0 + k * 2_000_000
        acc = np.array([0.0, 0.0, 9.81]) + 0.02 * np.sin(k / 7)  # a little motion: the estimates differ per step
        steps.append(("/imu/data", lambda ty, t=t, acc=acc: messages.imu_msg(
            ty, ImuSample(t, np.zeros(3), acc, frame_id="imu_sensor")), None))  # fmt: skip
        for foot in GO1_FEET:
            if foot != "RR_foot" or k < 180:
                steps.append((f"/{foot}/wrench", lambda ty, t=t, foot=foot, k=k: messages.wrench_stamped_msg(
                    ty, t, frames[foot], wrenches[foot] * (1 + 0.01 * np.cos(k / 5))), foot))  # fmt: skip
        steps.append(("/joint_states", lambda ty, t=t: messages.joint_state_msg(
            ty, JointSample(t, joints, STAND_Q, np.zeros(12), effort)), None))  # fmt: skip
    types = default_types()
    with BagWriter(tmp_path / "bag") as bag:
        for topic, build, _ in steps:
            msg = build(types)
            bag.write(topic, msg, stamp_to_ns(msg.header.stamp))
    replayed: dict[int, tuple[list[bool], list[Any]]] = {}

    def on_estimate(e: Any, odometry: bool, contacts: bool) -> None:
        if contacts:
            replayed[e.stamp_ns] = ([f.in_contact for f in e.feet], [np.array(f.wrench_in_foot) for f in e.feet])

    replay(
        tmp_path / "bag",
        description=str(robot_description_path("go1")),
        settings=base_settings("go1", ""),
        options=ReplayOptions(progress=False, node_params={"use_foot_wrenches": True}),
        on_estimate=on_estimate,
    )
    h = Harness(ros_context, "/equal", robot="go1", use_foot_wrenches=True, diagnostics_period_s=60.0)
    try:
        pubs = {f: h.io.create_publisher(WrenchStamped, f"{f}/wrench", qos.sensor_qos(1000)) for f in GO1_FEET}
        assert spin_until(h.executor, lambda: all(p.get_subscription_count() >= 1 for p in pubs.values()))
        diag = h.node._diag
        for topic, build, foot in steps:  # one at a time: the node takes them in this order
            if foot is not None:
                counter, pub = diag.foot_wrenches[foot], pubs[foot]
            elif topic == "/imu/data":
                counter, pub = diag.imu, h.imu_pub
            else:
                counter, pub = diag.joints, h.joint_pub
            before = counter.count
            pub.publish(build(TYPES))
            assert spin_until(h.executor, lambda c=counter, b=before: c.count > b)
        last = T0 + 259 * 2_000_000
        assert spin_until(h.executor, lambda: any(stamp_to_ns(m.header.stamp) == last for m in h.out["contacts"]))
        node_contacts = {
            stamp_to_ns(m.header.stamp): [s.message == "contact" for s in m.status] for m in h.out["contacts"]
        }
        assert node_contacts == {s: c for s, (c, _) in replayed.items()}
        assert node_contacts[T0 + 100 * 2_000_000] == [False, True, True, True]  # from the wrenches (FL unloaded)
        for i, foot in enumerate(GO1_FEET):
            assert spin_until(
                h.executor, lambda f=foot: any(stamp_to_ns(m.header.stamp) == last for m in h.out[f"wrench/{f}"])
            )
            got = {stamp_to_ns(m.header.stamp): m.wrench for m in h.out[f"wrench/{foot}"]}
            assert set(got) == set(replayed)
            for stamp, (_, w) in replayed.items():
                m = got[stamp]
                values = [m.force.x, m.force.y, m.force.z, m.torque.x, m.torque.y, m.torque.z]
                np.testing.assert_array_equal(values, w[i])
    finally:
        h.close()
