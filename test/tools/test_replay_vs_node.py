"""Replay equals the live node on the same input: same stamps, same values within 1e-9.

The real node (``EstimatorNode``) runs in this process with an executor, over real DDS
(``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, a domain id unique to this test module); the input messages of a
generated run are published one at a time in stamp order, each processed before the next is sent (spin until
the node has counted it), so the node sees exactly replay's order.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from robot_state_estimator.common.paths import config_dir
from robot_state_estimator.io import bags, messages
from robot_state_estimator.tools import replay

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")

pytestmark = [pytest.mark.ros]


def _spin_until(executor, condition, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return condition()
        executor.spin_once(timeout_sec=0.001)
    return True


@pytest.fixture()
def ros_context(monkeypatch, domain_ids):
    with domain_ids.reserve() as domain:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
        monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain)
        yield context
        context.try_shutdown()


def test_replay_equals_the_node(sim_run, ros_context):
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from robot_state_estimator.ros.message_types import TYPES
    from robot_state_estimator.ros.node import EstimatorNode

    run_dir, _ = sim_run
    description = str(run_dir / "robot_description.urdf")
    settings, params = replay.split_config(config_dir() / "go1.yaml")
    result = replay.replay(
        run_dir / "bag",
        description=description,
        settings=settings,
        options=replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, **params}, progress=False),
    )
    assert len(result.log) > 1000

    node = EstimatorNode(
        context=ros_context,
        parameter_overrides=[
            rclpy.parameter.Parameter("robot", value="go1"),
            rclpy.parameter.Parameter("description_file", value=description),
        ],
    )
    feeder = rclpy.create_node("rse_replay_feeder", context=ros_context)
    received: list = []
    feeder.create_subscription(TYPES.Odometry, "odometry", received.append, 100_000)
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    pubs = {
        "/imu/data": feeder.create_publisher(TYPES.Imu, "imu/data", qos),
        "/joint_states": feeder.create_publisher(TYPES.JointState, "joint_states", qos),
    }
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    executor.add_node(feeder)
    try:
        assert _spin_until(
            executor,
            lambda: (
                all(p.get_subscription_count() >= 1 for p in pubs.values())
                and node._outputs.odometry.get_subscription_count() >= 1
            ),
        ), "the node and the feeder did not discover each other"
        diag = node._diag
        for n, m in enumerate(bags.read_messages_in_stamp_order(run_dir / "bag", list(pubs))):
            if m.topic == "/imu/data":
                msg = messages.imu_msg(TYPES, messages.imu_sample_from_msg(m.msg))
            else:
                msg = messages.joint_state_msg(TYPES, messages.joint_sample_from_msg(m.msg))
            pubs[m.topic].publish(msg)
            assert _spin_until(
                executor,
                lambda n=n: diag.imu.count + diag.joints.count >= n + 1 and len(received) >= diag.odometry.count,
            ), f"the node did not receive input message {n}, or its odometry did not come back"
        assert _spin_until(executor, lambda: len(received) >= len(result.log), timeout_s=20.0), (
            f"node published {len(received)} odometry messages, replay {len(result.log)}; node rejections "
            f"{node.reject_counts}; replay skipped {result.skipped}, events {result.events}"
        )
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        feeder.destroy_node()

    assert len(received) == len(result.log)
    node_out = [messages.odometry_arrays_from_msg(m) for m in received]
    assert [o["stamp_ns"] for o in node_out] == result.log.stamp_ns
    for key, col in (
        ("p_world_base", result.log.p),
        ("quat_world_base_xyzw", result.log.quat_xyzw),
        ("v_base_in_base", result.log.v),
        ("omega_base_in_base", result.log.omega),
        ("pose_covariance", result.log.pose_cov),
        ("twist_covariance", result.log.twist_cov),
    ):
        np.testing.assert_allclose(np.array([o[key] for o in node_out]), np.array(col), rtol=0, atol=1e-9, err_msg=key)
