"""``ros.spin.LeanExecutor`` over real DDS: hot subscriptions (messages and raw bytes) in order, other
subscriptions, timers, parameter services, entities created later, ``shutdown`` and the context's shutdown."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.timer import TimerInfo  # noqa: E402
from std_msgs.msg import String, UInt32  # noqa: E402

from robot_state_estimator.ros.qos import output_qos  # noqa: E402
from robot_state_estimator.ros.spin import LeanExecutor  # noqa: E402

pytestmark = pytest.mark.ros


def _spin_both(lean: LeanExecutor, other: Any, condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return condition()
        lean.spin_once(timeout_sec=0.005)
        other.spin_once(timeout_sec=0.005)
    return True


def test_hot_and_other_entities_are_served(ros_context) -> None:
    node = rclpy.create_node("lean_test", context=ros_context)
    node.declare_parameter("x", 1)
    hot_msgs: list[int] = []
    raw_msgs: list[bytes] = []
    other_msgs: list[str] = []
    later_msgs: list[str] = []
    ticks: list[float] = []
    hot = node.create_subscription(UInt32, "lean/hot", lambda m: hot_msgs.append(m.data), output_qos(1000))
    raw = node.create_subscription(UInt32, "lean/raw", raw_msgs.append, output_qos(1000), raw=True)
    node.create_subscription(String, "lean/other", lambda m: other_msgs.append(m.data), 10)
    node.create_timer(0.05, lambda: ticks.append(time.monotonic()))
    infos: list[Any] = []

    def with_info(info):  # annotated below with the class itself: rclpy compares the annotation to it
        infos.append(info)

    with_info.__annotations__ = {"info": TimerInfo}
    node.create_timer(0.05, with_info)  # called with a TimerInfo, as rclpy's executor does
    async_ticks: list[float] = []

    async def coroutine_timer() -> None:  # left to rclpy's executor (the fallback)
        async_ticks.append(time.monotonic())

    node.create_timer(0.05, coroutine_timer)
    lean = LeanExecutor(node, [hot, raw])
    peer = rclpy.create_node("lean_peer", context=ros_context)
    peer_exec = SingleThreadedExecutor(context=ros_context)
    peer_exec.add_node(peer)
    try:
        pub_hot = peer.create_publisher(UInt32, "lean/hot", output_qos(1000))
        pub_raw = peer.create_publisher(UInt32, "lean/raw", output_qos(1000))
        pub_other = peer.create_publisher(String, "lean/other", 10)
        assert _spin_both(
            lean,
            peer_exec,
            lambda: (
                all(p.get_subscription_count() >= 1 for p in (pub_hot, pub_raw, pub_other))
                and hot.get_publisher_count() >= 1
                and raw.get_publisher_count() >= 1
            ),
        )
        for i in range(200):
            pub_hot.publish(UInt32(data=i))
            pub_raw.publish(UInt32(data=i))
            if i % 50 == 0:
                pub_other.publish(String(data=str(i)))
        assert _spin_both(lean, peer_exec, lambda: len(hot_msgs) == 200 and len(raw_msgs) == 200)
        assert hot_msgs == list(range(200))  # in order, none lost (reliable, deep queues)
        assert all(type(m) is bytes for m in raw_msgs)  # raw subscriptions give the CDR bytes
        assert raw_msgs[7][4:8] == (7).to_bytes(4, "little")
        assert _spin_both(lean, peer_exec, lambda: other_msgs == ["0", "50", "100", "150"])
        assert _spin_both(lean, peer_exec, lambda: len(ticks) >= 5 and len(infos) >= 2 and len(async_ticks) >= 2)
        assert all(isinstance(i, TimerInfo) for i in infos)

        client = peer.create_client(SetParameters, "/lean_test/set_parameters")
        assert _spin_both(lean, peer_exec, client.service_is_ready)
        future = client.call_async(SetParameters.Request(parameters=[Parameter("x", value=5).to_parameter_msg()]))
        assert _spin_both(lean, peer_exec, future.done)
        assert future.result().results[0].successful and node.get_parameter("x").value == 5

        # an entity created while spinning is served too (found at the next housekeeping round at the latest)
        node.create_subscription(String, "lean/later", lambda m: later_msgs.append(m.data), 10)
        pub_later = peer.create_publisher(String, "lean/later", 10)
        assert _spin_both(lean, peer_exec, lambda: pub_later.get_subscription_count() >= 1)
        assert _spin_both(lean, peer_exec, lambda: (pub_later.publish(String(data="x")), bool(later_msgs))[1])
    finally:
        lean.destroy()
        peer_exec.shutdown()
        peer.destroy_node()
        node.destroy_node()


def test_spin_returns_on_shutdown(ros_context) -> None:
    node = rclpy.create_node("lean_stop", context=ros_context)
    lean = LeanExecutor(node, [])
    node.create_timer(0.05, lean.shutdown)
    try:
        t0 = time.monotonic()
        lean.spin()  # returns once the timer called shutdown
        assert time.monotonic() - t0 < 5.0
    finally:
        lean.destroy()
        node.destroy_node()


def test_the_context_shutdown_ends_spin(ros_domain_env) -> None:
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(ros_domain_env["ROS_DOMAIN_ID"]))
    node = rclpy.create_node("lean_context", context=context)
    lean = LeanExecutor(node, [])
    node.create_timer(0.05, context.try_shutdown)
    try:
        with pytest.raises(ExternalShutdownException):
            lean.spin()
    finally:
        lean.destroy()
        context.try_shutdown()


def test_services_and_other_messages_are_served_while_hot_messages_keep_coming(ros_context) -> None:
    """While a hot subscription has a message at every wait, the loop waits on the hot set, and on every entity when
    a timer is due and at least every ``FULL_WAIT_PERIOD_S``: a timer, a parameter request and another subscription's
    message are served meanwhile (the housekeeping round, which would serve them too, is out of reach: 1000 s)."""
    node = rclpy.create_node("lean_busy", context=ros_context)
    node.declare_parameter("x", 1)
    hot_msgs: list[int] = []
    other_msgs: list[str] = []
    hot = node.create_subscription(UInt32, "busy/hot", lambda m: hot_msgs.append(m.data), output_qos(1000))
    node.create_subscription(String, "busy/other", lambda m: other_msgs.append(m.data), 10)
    ticks: list[float] = []
    node.create_timer(0.02, lambda: ticks.append(time.monotonic()))
    lean = LeanExecutor(node, [hot], housekeeping_period_s=1000.0)
    peer = rclpy.create_node("lean_busy_peer", context=ros_context)
    peer_exec = SingleThreadedExecutor(context=ros_context)
    peer_exec.add_node(peer)
    sent = [0]

    def busy(condition: Callable[[], bool]) -> bool:  # a hot message before every wait
        def step() -> bool:
            pub_hot.publish(UInt32(data=sent[0]))
            sent[0] += 1
            return condition()

        return _spin_both(lean, peer_exec, step)

    try:
        pub_hot = peer.create_publisher(UInt32, "busy/hot", output_qos(1000))
        pub_other = peer.create_publisher(String, "busy/other", 10)
        assert busy(lambda: pub_hot.get_subscription_count() >= 1 and pub_other.get_subscription_count() >= 1)
        assert busy(lambda: len(hot_msgs) > 10)
        n_ticks = len(ticks)
        assert busy(lambda: len(ticks) >= n_ticks + 3)  # the timer is called while busy (a full wait when it is due)
        pub_other.publish(String(data="other"))
        assert busy(lambda: other_msgs == ["other"])
        client = peer.create_client(SetParameters, "/lean_busy/set_parameters")
        assert busy(client.service_is_ready)
        future = client.call_async(SetParameters.Request(parameters=[Parameter("x", value=7).to_parameter_msg()]))
        assert busy(future.done)
        assert future.result().results[0].successful and node.get_parameter("x").value == 7
        # none lost once matched, in order (reliable, deep queues)
        assert _spin_both(lean, peer_exec, lambda: hot_msgs[-1] == sent[0] - 1)
        assert hot_msgs == list(range(hot_msgs[0], sent[0])) and len(hot_msgs) > 10
    finally:
        lean.destroy()
        peer_exec.shutdown()
        peer.destroy_node()
        node.destroy_node()
