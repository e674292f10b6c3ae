"""Faults of issue 19 over the node, in-process over real DDS: each is handled and named (a cause key, a log line that
names the bad sample, a ``/diagnostics`` status), none resets the filter or counts a rejection without bad input.

- a joint driver whose clock is 100 s ahead: ``stamp_future``, no reset, the good samples after it are not blamed;
- a looping recording with a message of the old timeline still queued on the other topic: one reset, not two;
- efforts that disappear from ``joint_states`` (``contact.source`` auto): the contacts status WARNs and names the
  kinematic source, and no zero wrench is published as if measured;
- joint states that stop while the IMU goes on: ``no_joint_states`` and the inputs status WARN;
- samples lost to load (a hole in the stamps longer than ``ekf.max_dt_s``): losses, ``rejected_total`` stays 0;
- ``robot_description:=''`` with no other source: a start-up error, not an endless wait;
- ``base_frame:=base_link`` on a description without it: a start-up warning with the fix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from rclpy.parameter import Parameter  # noqa: E402

from robot_state_estimator.common.time import stamp_to_ns  # noqa: E402
from robot_state_estimator.ros.node import EstimatorNode, StartupError  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .streams import GO1_FEET, Step, imu_msg, joint_msg  # noqa: E402
from .test_node import T0, Harness  # noqa: E402
from .test_node_trial5 import _status, _stream, _values  # noqa: E402

pytestmark = pytest.mark.ros

S = 10**9
#: hip, thigh, calf efforts (N m) of a leg carrying weight: about 42 N per foot, so the filter initialises (it waits
#: for a loaded foot) and the torque contacts are on
LOADED = (0.0, -2.0, 5.0)


def standing(start_ns: int, duration_s: float) -> list[Step]:
    """A Go1 standing still on loaded feet, IMU then joints at every stamp, 500 Hz."""
    return _stream(start_ns, duration_s, LOADED)


def test_joint_states_from_a_clock_100_s_ahead_are_refused_and_reset_nothing(
    quiet_harness: Harness, capfd: pytest.CaptureFixture[str]
) -> None:
    h = quiet_harness
    h.publish(standing(T0, 0.4))
    bad = T0 + 100 * S
    capfd.readouterr()
    h.publish([Step("joints", bad, joint_msg(bad))])
    h.publish(standing(T0 + 400_000_000, 0.4))
    assert spin_until(h.executor, lambda: stamp_to_ns(h.out["odometry"][-1].header.stamp) == h.sent["imu"][-1])
    counts = h.node.reject_counts
    assert counts.get("stamp_future") == 1 and h.node._diag.resets == 0, counts
    assert "stamp_backwards" not in counts and "joint_out_of_order" not in counts, counts
    err = capfd.readouterr().err
    expected = "stamped 1100.000000000 s, 99.602 s after the last IMU sample (1000.398000000 s)"
    assert f"[stamp_future] joint sample skipped: {expected}" in err, err
    assert "stamp_backwards" not in err and "[reset]" not in err, err  # the good samples after it are not blamed
    values = _values(_status(h, "inputs"))
    assert values["rejected.stamp_future"] == "1" and values["rejected_total"] == "1"


def test_a_looping_recording_resets_once_with_an_old_message_queued_on_the_other_topic(quiet_harness: Harness) -> None:
    h = quiet_harness
    h.publish(standing(T0, 0.4))
    end = T0 + 400_000_000
    # the loop: the IMU's new timeline first, then a joint state of the old one still queued, then the new timeline
    h.publish([Step("imu", T0 - 5 * S, imu_msg(T0 - 5 * S)), Step("joints", end, joint_msg(end))])
    h.publish(standing(T0 - 5 * S + 2_000_000, 0.4))
    assert h.node._diag.resets == 1, h.node._diag.last_reset_reason
    assert h.node.reject_counts.get("stamp_future") == 1, h.node.reject_counts
    assert spin_until(h.executor, lambda: stamp_to_ns(h.out["odometry"][-1].header.stamp) == h.sent["imu"][-1])


def test_efforts_that_disappear_make_the_contacts_status_warn_and_stop_the_wrenches(quiet_harness: Harness) -> None:
    h = quiet_harness
    h.publish(standing(T0, 0.4))
    assert spin_until(h.executor, lambda: all(h.out[f"wrench/{f}"] for f in GO1_FEET))
    status = _status(h, "contacts")
    assert status.level == b"\x00" and _values(status)["contact_source"] == "torque", status.message
    assert _values(status)["forces_estimated"] == "true"
    n_wrenches = len(h.out["wrench/FL_foot"])
    steps = []
    for k in range(200):  # 0.4 s without efforts (effort: [])
        t = T0 + 400_000_000 + k * 2_000_000
        steps += [Step("imu", t, imu_msg(t)), Step("joints", t, joint_msg(t, effort=False))]
    h.publish(steps)
    n_contacts = len(h.out["contacts"])
    assert spin_until(h.executor, lambda: stamp_to_ns(h.out["odometry"][-1].header.stamp) == steps[-1].stamp_ns)
    status = _status(h, "contacts")
    values = _values(status)
    assert status.level == b"\x01" and values["contact_source"] == "kinematic", status.message
    assert values["forces_estimated"] == "false"
    assert "no efforts any more" in status.message and "contact_wrench/<foot> is not published" in status.message
    # no zero force published as if measured: at most the wrenches already in flight, while the contact states go on
    assert len(h.out["wrench/FL_foot"]) - n_wrenches <= 25
    assert len(h.out["contacts"]) >= n_contacts
    assert h.node.reject_counts == {}  # the samples are used: no rejection
    h.publish(standing(T0 + 800_000_000, 0.2))  # efforts back
    status = _status(h, "contacts")
    assert _values(status)["contact_source"] == "torque" and "efforts" not in status.message, status.message


def test_joint_states_that_stop_while_the_imu_goes_on_are_warned_about(quiet_harness: Harness) -> None:
    h = quiet_harness
    node = h.node
    node.input_watch.no_imu_after_s = 0.3  # 2 s on a robot; shortened for the test
    h.publish(standing(T0, 0.2))
    ns = node.get_namespace().rstrip("/")
    t = [T0 + 200_000_000]

    def imu_only_until_warned() -> bool:
        t[0] += 2_000_000
        h.imu_pub.publish(imu_msg(t[0]))
        return "joint_states" in node.input_watch.stopped_warning

    assert spin_until(h.executor, imu_only_until_warned, timeout_s=10.0)
    text = node.input_watch.stopped_warning["joint_states"]
    assert f"IMU messages arrive on {ns}/imu/data but no joint state message for" in text, text
    assert f"on {ns}/joint_states" in text and "IMU alone" in text and "remap joint_states:=" in text
    status = _status(h, "inputs")
    assert status.level == b"\x01" and status.message == text
    assert node.reject_counts.get("no_joint_states", 0) == 0  # a warning, not a rejection
    joints_before = node._diag.joints.count
    back = standing(t[0] + 2_000_000, 0.1)  # joint states back
    h.publish(back)
    # the IMU-only messages above were published past the harness's count, so its settle() can return before the
    # joint states arrive: wait for them
    n_back = sum(step.kind == "joints" for step in back)
    assert spin_until(h.executor, lambda: node._diag.joints.count >= joints_before + n_back, timeout_s=10.0)
    node.input_watch.check()
    assert "joint_states" not in node.input_watch.stopped_warning and node._diag.stopped_inputs == ""


def test_foot_forces_that_stop_while_the_imu_goes_on_are_warned_about(ros_context: Any) -> None:
    """use_foot_forces: the foot-sensor topic stops while IMU and joint states go on: ``no_foot_forces`` (a warning,
    not a rejection) and the inputs status WARNs naming the topic; joint states still arriving are not named."""
    from sensor_msgs.msg import JointState

    from robot_state_estimator.common.samples import JointSample
    from robot_state_estimator.io import messages
    from robot_state_estimator.ros import qos
    from robot_state_estimator.ros.message_types import TYPES

    h = Harness(ros_context, "/feet_stop", robot="go1", use_foot_forces=True, diagnostics_period_s=60.0)
    try:
        node = h.node
        node.input_watch.no_imu_after_s = 0.3  # 2 s on a robot; shortened for the test
        pub = h.io.create_publisher(JointState, "foot_forces", qos.sensor_qos(1000))
        assert spin_until(h.executor, lambda: pub.get_subscription_count() >= 1)
        loaded = np.full(len(GO1_FEET), 100.0)  # raw counts above go1.yaml's sensor_on_threshold (60)
        for step in standing(T0, 0.2):
            if step.kind == "joints":
                sample = JointSample(step.stamp_ns, GO1_FEET, loaded, None, loaded)
                pub.publish(messages.joint_state_msg(TYPES, sample))
        h.publish(standing(T0, 0.2))
        assert spin_until(h.executor, lambda: node._diag.foot_forces.count >= 1)  # the stream started
        ns = node.get_namespace().rstrip("/")
        t = [T0 + 200_000_000]

        def imu_and_joints_until_warned() -> bool:
            t[0] += 2_000_000
            h.publish(standing(t[0], 0.002))
            return "foot_forces" in node.input_watch.stopped_warning

        assert spin_until(h.executor, imu_and_joints_until_warned, timeout_s=10.0)
        text = node.input_watch.stopped_warning["foot_forces"]
        assert f"IMU messages arrive on {ns}/imu/data but no foot-force message for" in text, text
        assert f"on {ns}/foot_forces" in text and "remap foot_forces:=" in text
        assert "joint_states" not in node.input_watch.stopped_warning
        status = _status(h, "inputs")
        assert status.level == b"\x01" and status.message == text
        assert node.reject_counts.get("no_foot_forces", 0) == 0  # a warning, not a rejection
    finally:
        h.close()


def test_imu_samples_lost_to_load_are_counted_as_losses_not_rejections(quiet_harness: Harness) -> None:
    """A 100 ms hole in the stamps of both inputs (what a best-effort queue overflowing under load looks like):
    longer than ``ekf.max_dt_s`` = 50 ms (the core re-anchors: ``imu_gap``), shorter than ``max_time_gap_s``."""
    h = quiet_harness
    h.publish(standing(T0, 0.4))
    h.publish(standing(T0 + 500_000_000, 0.2))
    values = _values(_status(h, "inputs"))
    assert values["rejected_total"] == "0" and "rejected.imu_gap" not in values, values
    assert values["imu_lost"] == "50" and values["joint_states_lost"] == "50", values  # 102 ms / 2 ms - 1
    assert h.node._diag.resets == 0


def test_an_explicitly_empty_robot_description_is_a_start_up_error(ros_context: Any) -> None:
    for value in ("", "  "):
        with pytest.raises(StartupError, match=r"robot_description parameter is given but empty .*description_file"):
            EstimatorNode(
                context=ros_context,
                namespace="/empty_param",
                parameter_overrides=[Parameter("robot_description", value=value)],
            )
    # with another source the empty parameter is simply not used
    node = EstimatorNode(
        context=ros_context,
        namespace="/empty_param_robot",
        parameter_overrides=[Parameter("robot_description", value=""), Parameter("robot", value="go1")],
    )
    try:
        assert node.estimator is not None
    finally:
        node.destroy_node()


def test_a_base_frame_the_description_lacks_is_warned_about_at_start(
    ros_context: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    node = EstimatorNode(
        context=ros_context,
        namespace="/base_link",
        parameter_overrides=[Parameter("robot", value="go1"), Parameter("base_frame", value="base_link")],
    )
    node.destroy_node()
    err = capfd.readouterr().err
    assert "[WARN]" in err and "[base_frame] base_frame 'base_link' is not a frame of the robot description" in err
    assert "its base link is 'base'" in err and "will not connect to the robot's TF tree" in err, err
    assert "set base_frame:=base" in err, err
    capfd.readouterr()
    go1 = [Parameter("robot", value="go1")]
    node = EstimatorNode(context=ros_context, namespace="/base_ok", parameter_overrides=go1)
    node.destroy_node()
    assert "[base_frame]" not in capfd.readouterr().err


def test_wrenches_are_published_with_efforts(quiet_harness: Harness) -> None:
    """The counterpart of the no-effort case: with efforts every foot's wrench is published, finite."""
    h = quiet_harness
    h.publish(standing(T0, 0.3))
    assert spin_until(h.executor, lambda: all(h.out[f"wrench/{f}"] for f in GO1_FEET))
    w = h.out["wrench/FL_foot"][-1].wrench.force
    assert np.all(np.isfinite([w.x, w.y, w.z]))
