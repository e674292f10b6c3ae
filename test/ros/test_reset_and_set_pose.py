"""The node's ``~/reset`` service and ``set_pose`` topic over real DDS: a Go1 standing still, the node in-process
(rclpy's executor, and the node's own ``LeanExecutor`` under a 1 kHz input stream), a test node publishing the
inputs and the commands and recording the outputs."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
pytest.importorskip("std_srvs", reason="std_srvs (ros-std-srvs) is not installed")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import PoseWithCovarianceStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_state_estimator.common.time import stamp_to_ns  # noqa: E402
from robot_state_estimator.ros import qos  # noqa: E402
from robot_state_estimator.ros.node import EstimatorNode  # noqa: E402
from robot_state_estimator.ros.spin import LeanExecutor  # noqa: E402

from .conftest import spin_until  # noqa: E402
from .streams import standing  # noqa: E402

pytestmark = pytest.mark.ros

T0 = 1_000 * 10**9
MS = 1_000_000
INIT_SAMPLES = 50  # ekf.init_imu_samples of these tests


class Rig:
    """The estimator node and a test node (inputs, ``set_pose`` publisher, ``~/reset`` client, output recorder).

    ``lean``: the estimator node is spun by its own ``LeanExecutor`` (as ``estimator_node`` spins it), the test
    node by a ``SingleThreadedExecutor``; otherwise one ``SingleThreadedExecutor`` spins both."""

    def __init__(self, context: Any, namespace: str, *, lean: bool = False, **params: Any) -> None:
        overrides = [Parameter(k, value=v) for k, v in {"ekf.init_imu_samples": INIT_SAMPLES, **params}.items()]
        self.node = EstimatorNode(context=context, namespace=namespace, parameter_overrides=overrides)
        self.io = rclpy.create_node("command_test_io", namespace=namespace, context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.io)
        self.lean = LeanExecutor(self.node, self.node.sensor_subscriptions) if lean else None
        if self.lean is None:
            self.executor.add_node(self.node)
        self.imu_pub = self.io.create_publisher(Imu, "imu/data", qos.sensor_qos(1000))
        self.joint_pub = self.io.create_publisher(JointState, "joint_states", qos.sensor_qos(1000))
        self.pose_pub = self.io.create_publisher(PoseWithCovarianceStamped, "set_pose", 10)  # reliable
        self.reset_client = self.io.create_client(Trigger, f"{namespace}/robot_state_estimator/reset")
        self.out: dict[str, list[Any]] = defaultdict(list)
        self.io.create_subscription(Odometry, "odometry", self.out["odometry"].append, 1000)
        self.io.create_subscription(TFMessage, "/tf", self.out["tf"].append, qos.tf_qos())
        self.io.create_subscription(DiagnosticArray, "/diagnostics", self.out["diagnostics"].append, 100)
        ns = namespace.rstrip("/")
        assert self.spin_until(
            lambda: (
                (
                    self.node.estimator is None  # sensor inputs are subscribed once a description is loaded
                    or (self.imu_pub.get_subscription_count() >= 1 and self.joint_pub.get_subscription_count() >= 1)
                )
                and self.pose_pub.get_subscription_count() >= 1
                and self.io.count_publishers(f"{ns}/odometry") >= 1
                and self.reset_client.service_is_ready()
            )
        )
        self.sent = 0

    def spin_once(self) -> None:
        if self.lean is not None:
            self.lean.spin_once(timeout_sec=0.002)
        self.executor.spin_once(timeout_sec=0.002)

    def spin_until(self, condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
        if self.lean is None:
            return spin_until(self.executor, condition, timeout_s=timeout_s)
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return condition()
            self.spin_once()
        return True

    def received(self) -> int:
        return self.node._diag.imu.count + self.node._diag.joints.count

    def stand(self, start_ns: int, duration_s: float, *, rate_hz: float = 1000.0, batch: int = 20) -> int:
        """Publish a standing robot (IMU + joints per stamp), in batches, until the node has taken all; returns
        the last stamp."""
        last = start_ns
        pending = 0
        for s in standing(start_ns, duration_s, rate_hz=rate_hz):
            (self.imu_pub if s.kind == "imu" else self.joint_pub).publish(s.msg)
            self.sent += 1
            last = s.stamp_ns
            pending += 1
            if pending >= batch:
                self.settle()
                pending = 0
        self.settle()
        return last

    def settle(self) -> None:
        assert self.spin_until(lambda: self.received() >= self.sent), f"node took {self.received()} of {self.sent}"

    def odometry_at(self, stamp_ns: int) -> Odometry:
        assert self.spin_until(lambda: any(stamp_to_ns(m.header.stamp) >= stamp_ns for m in self.out["odometry"]))
        return next(m for m in self.out["odometry"] if stamp_to_ns(m.header.stamp) >= stamp_ns)

    def reset(self) -> Any:
        future = self.reset_client.call_async(Trigger.Request())
        assert self.spin_until(future.done)
        return future.result()

    def set_pose(self, p: Any, yaw: float, cov: Any = None, *, frame_id: str = "odom", quat: Any = None) -> None:
        """Publish one ``set_pose`` and spin until the node has handled it (its note changes)."""
        msg = PoseWithCovarianceStamped()
        msg.header.frame_id = frame_id
        msg.header.stamp.sec = 1  # not used by the node (no time travel)
        msg.pose.pose.position.x, msg.pose.pose.position.y, msg.pose.pose.position.z = (float(v) for v in p)
        x, y, z, w = Rotation.from_euler("z", yaw).as_quat() if quat is None else quat
        o = msg.pose.pose.orientation
        o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)
        if cov is not None:
            msg.pose.covariance = [float(c) for c in np.asarray(cov, dtype=float).ravel()]
        self.node.last_command_note = ""
        self.pose_pub.publish(msg)
        assert self.spin_until(lambda: bool(self.node.last_command_note))

    def filter_status(self) -> dict[str, str]:
        """The ``<node>: filter`` status of a diagnostics report made now."""
        name = f"{self.node.get_fully_qualified_name()}: filter"
        self.out["diagnostics"].clear()
        self.node._publish_diagnostics()

        def found() -> dict[str, str]:
            for array in self.out["diagnostics"]:
                for status in array.status:
                    if status.name == name:
                        return {kv.key: kv.value for kv in status.values}
            return {}

        assert self.spin_until(lambda: bool(found()))
        return found()

    def close(self) -> None:
        if self.lean is not None:
            self.lean.destroy()
        self.executor.shutdown()
        self.node.destroy_node()
        self.io.destroy_node()


def pose_of(odom: Odometry) -> tuple[np.ndarray, float, np.ndarray]:
    """(position (3,), yaw, rotation vector (3,)) of an odometry message."""
    p = odom.pose.pose.position
    o = odom.pose.pose.orientation
    r = Rotation.from_quat([o.x, o.y, o.z, o.w])
    return np.array([p.x, p.y, p.z]), float(r.as_euler("ZYX")[0]), r.as_rotvec()


def test_reset_service_under_1khz_input_reinitialises_the_filter(ros_context) -> None:
    """Spun by the node's ``LeanExecutor`` while IMU and joint states stream at 1 kHz (stamps 1 ms apart): the
    request is served between sensor callbacks, the reset is counted at once, and the odometry starts again
    from the initial pose after ``ekf.init_imu_samples`` IMU samples."""
    rig = Rig(ros_context, "/reset_1khz", lean=True, robot="go1")
    try:
        last = rig.stand(T0, 0.2)
        rig.set_pose([2.0, 1.0, 0.3], 0.5)  # away from the initial pose, so the restart shows
        assert rig.node.last_command_note.startswith("pose set"), rig.node.last_command_note
        last = rig.stand(last + MS, 0.05)
        p, yaw, _ = pose_of(rig.odometry_at(last))
        assert np.allclose(p[:2], [2.0, 1.0], atol=1e-6) and yaw == pytest.approx(0.5, abs=1e-6)

        # the request, sent while the input keeps streaming at 1 kHz; served between two batches of samples
        future = rig.reset_client.call_async(Trigger.Request())
        k = 0
        stamps = iter(standing(last + MS, 2.0, rate_hz=1000.0))
        reset_after_ns = None
        while not future.done():
            for _ in range(20):  # 10 stamps: IMU + joints
                s = next(stamps)
                (rig.imu_pub if s.kind == "imu" else rig.joint_pub).publish(s.msg)
                rig.sent += 1
                k += 1
                last = s.stamp_ns
            rig.spin_once()
            if future.done():
                reset_after_ns = last
            assert k < 4000, "no response within 2 s of input"
        rig.settle()  # everything published so far is taken: the reset happened before the last stamp
        response = future.result()
        assert response.success
        assert "initialises again from the next 50 IMU samples" in response.message, response.message
        assert rig.node._diag.resets == 1
        reason = rig.node._diag.last_reset_reason
        assert reason == "estimator reset: requested on the /reset_1khz/robot_state_estimator/reset service"
        status = rig.filter_status()
        assert status["resets"] == "1" and status["last_reset_reason"] == reason

        # the next estimates: initialised again from the static samples, at the initial pose (x = y = 0, yaw 0)
        n_before = len(rig.out["odometry"])
        end = rig.stand(last + MS, 0.15)
        assert rig.spin_until(lambda: stamp_to_ns(rig.out["odometry"][-1].header.stamp) == end)
        assert len(rig.out["odometry"]) > n_before
        at_set = [np.allclose(pose_of(m)[0][:2], [2.0, 1.0], atol=1e-6) for m in rig.out["odometry"]]
        at_initial = [
            np.linalg.norm(pose_of(m)[0][:2]) < 1e-6 and abs(pose_of(m)[1]) < 1e-6 for m in rig.out["odometry"]
        ]
        # every odometry is at the set pose up to the reset, then at the initial pose: none in between, none after
        start = at_set.index(True)  # before: the first initialisation, at the initial pose
        split = at_set.index(False, start)
        assert all(at_set[start:split]) and all(at_initial[split:]), (start, split, len(at_set))
        old_ns = stamp_to_ns(rig.out["odometry"][split - 1].header.stamp)
        new_ns = stamp_to_ns(rig.out["odometry"][split].header.stamp)
        # re-initialised: no odometry for the INIT_SAMPLES IMU samples of the new initialisation window
        assert new_ns - old_ns >= (INIT_SAMPLES - 1) * MS, (old_ns, new_ns)
        assert reset_after_ns is not None and old_ns <= reset_after_ns
        # a reset is counted as a reset (diagnostics' resets, with its reason), not as a rejected sample
        assert "reset" not in rig.node.reject_counts
    finally:
        rig.close()


@pytest.fixture
def rig(ros_context, request):
    r = Rig(ros_context, f"/{request.node.name}", robot="go1")
    yield r
    r.close()


def test_set_pose_moves_the_odometry_and_the_tf(rig: Rig) -> None:
    last = rig.stand(T0, 0.1)
    p_set = np.array([1.5, -0.5, 0.35])
    yaw = 0.8
    cov = np.diag([0.04, 0.09, 0.01, 1e-4, 4e-4, 0.0025])
    cov[0, 1] = cov[1, 0] = 0.01
    rig.set_pose(p_set, yaw, cov)
    note = rig.node.last_command_note
    assert note.startswith(f"pose set at stamp {last} ns: base at (1.500, -0.500, 0.350) m in odom"), note
    n = len(rig.out["odometry"])
    end = rig.stand(last + MS, 0.02)
    first = rig.odometry_at(last + MS)  # the next odometry shows the new pose
    assert rig.out["odometry"].index(first) >= n
    for odom in (first, rig.odometry_at(end)):
        p, y, rotvec = pose_of(odom)
        np.testing.assert_allclose(p, p_set, rtol=0, atol=1e-6)
        assert y == pytest.approx(yaw, abs=1e-6) and np.allclose(rotvec[:2], 0.0, atol=1e-6)
        assert odom.header.frame_id == "odom" and odom.child_frame_id == "base"
    # one propagation step of 1 ms after the set: the published covariance is the one given, plus a little
    got = np.asarray(first.pose.covariance).reshape(6, 6)
    np.testing.assert_allclose(got, cov, rtol=0.02, atol=1e-6)
    assert rig.spin_until(lambda: any(stamp_to_ns(t.header.stamp) == end for m in rig.out["tf"] for t in m.transforms))
    tf = next(t for m in rig.out["tf"] for t in m.transforms if stamp_to_ns(t.header.stamp) == end)
    assert (tf.header.frame_id, tf.child_frame_id) == ("odom", "base")
    tr, rot = tf.transform.translation, tf.transform.rotation
    np.testing.assert_allclose([tr.x, tr.y, tr.z], p_set, rtol=0, atol=1e-6)
    assert Rotation.from_quat([rot.x, rot.y, rot.z, rot.w]).as_euler("ZYX")[0] == pytest.approx(yaw, abs=1e-6)

    # an empty frame_id means odom_frame; an all-zero covariance means the settings' initial stddevs
    rig.set_pose([0.0, 2.0, 0.3], -1.0, np.zeros(36), frame_id="")
    assert rig.node.last_command_note.startswith("pose set"), rig.node.last_command_note
    end = rig.stand(end + MS, 0.01)
    p, y, _ = pose_of(rig.odometry_at(end))
    assert np.allclose(p, [0.0, 2.0, 0.3], atol=1e-6) and y == pytest.approx(-1.0, abs=1e-6)
    assert not any(k.startswith("set_pose") for k in rig.node.reject_counts)


def test_set_pose_in_another_frame_or_not_finite_is_refused_with_a_warning(rig: Rig) -> None:
    last = rig.stand(T0, 0.1)
    before = pose_of(rig.odometry_at(last))[0]
    rig.set_pose([5.0, 5.0, 0.3], 1.0, frame_id="map")
    note = rig.node.last_command_note
    assert "set_pose ignored" in note and "'map'" in note and "'odom'" in note, note
    assert rig.node.reject_counts["set_pose_frame_id"] == 1
    refused = [
        (dict(p=[math.nan, 0.0, 0.3], yaw=0.0), "pose.pose.position is not finite"),
        (dict(p=[0.0, 0.0, 0.3], yaw=0.0, quat=[0.0, 0.0, math.nan, 1.0]), "orientation is not finite"),
        (dict(p=[0.0, 0.0, 0.3], yaw=0.0, quat=[0.0, 0.0, 0.0, 0.0]), "is not a unit quaternion"),
        (dict(p=[0.0, 0.0, 0.3], yaw=0.0, cov=np.diag([1.0, 1, 1, 1, 1, -1])), "not positive semi-definite"),
        (dict(p=[0.0, 0.0, 0.3], yaw=0.0, cov=np.full(36, math.nan)), "pose_covariance is not finite"),
    ]
    for kwargs, text in refused:
        rig.set_pose(**kwargs)
        assert rig.node.last_command_note.startswith("set_pose ignored") and text in rig.node.last_command_note, (
            rig.node.last_command_note
        )
    assert rig.node.reject_counts["set_pose_invalid"] == len(refused)
    end = rig.stand(last + MS, 0.05)  # the estimate goes on where it was, finite
    p, y, _ = pose_of(rig.odometry_at(end))
    np.testing.assert_allclose(p, before, atol=1e-6)
    assert y == pytest.approx(0.0, abs=1e-6)
    for odom in rig.out["odometry"]:
        assert np.isfinite(list(odom.pose.covariance)).all()


def test_commands_before_a_description_or_an_initialised_filter(ros_context) -> None:
    rig = Rig(ros_context, "/no_description_commands")  # no description: waits for the topic
    try:
        response = rig.reset()
        assert not response.success and "no robot description" in response.message
        rig.set_pose([1.0, 0.0, 0.3], 0.0)
        assert rig.node.reject_counts["no_description"] == 1
        assert rig.node._diag.resets == 0
    finally:
        rig.close()
    rig = Rig(ros_context, "/uninitialised_commands", robot="go1")
    try:
        rig.stand(T0, 0.01)  # 10 samples: still initialising
        rig.set_pose([1.0, 0.0, 0.3], 0.0)
        assert rig.node.reject_counts["set_pose_uninitialized"] == 1
        assert "not initialised yet" in rig.node.last_command_note
        response = rig.reset()  # a reset while initialising: allowed, restarts the initialisation
        assert response.success and rig.node._diag.resets == 1
        end = rig.stand(T0 + 10 * MS, 0.1)
        p, _, _ = pose_of(rig.odometry_at(end))
        assert np.allclose(p[:2], 0.0, atol=1e-6)
    finally:
        rig.close()
