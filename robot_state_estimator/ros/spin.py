"""A lean spin loop for one node whose sensor subscriptions carry almost all of its work.

rclpy's ``SingleThreadedExecutor`` costs about 0.25 ms of CPU per received message in the PyPI wheels: every
``spin_once`` gathers all entities of the node (the estimator node has 7 parameter services, 2 timers and
22 QoS-event waitables), enters each handle, builds a new wait set, and wraps the callback in a ``Task`` and
a coroutine. At 1 kHz IMU + 1 kHz joint states that alone is half a core (its ``EventsExecutor`` hangs in
these wheels).

``LeanExecutor`` keeps two wait sets for the node's life (rebuilt only when the node's entities change): the
*full* one holds the *level-triggered* entities: all subscriptions, timers, services and clients (what is ready
stays ready until it is taken), plus its own guard conditions (Ctrl-C and ``wake``); the *hot* one only the hot
subscriptions. While the hot subscriptions keep the loop busy it waits on the hot set, and on the full set when a
timer is due and at least every ``FULL_WAIT_PERIOD_S`` (a service request, another subscription's message, Ctrl-C
or ``wake`` wait at most that long, plus a round); a hot wait's timeout ends there, so an idle loop waits on the
full set. An rcl wait costs per entity in it (added to the set every time, then attached to and detached from the
middleware's wait set): the estimator node's 8 services, 2 timers, 2 guard conditions and other subscription were
about half of the cost of a wait at 1 kHz. After a wait:

- the **hot** subscriptions (given at construction: the sensor inputs) are taken and their callbacks called
  directly, round robin (one message of each per round, as rclpy's executor interleaves them), all of them
  again after a round that took something (what arrived meanwhile needs no new wait), until a round takes
  nothing or ``MAX_ROUNDS`` rounds were done;
- ready **timers** are called directly (before anything else is handed over), as rclpy's executor calls
  them: ``call_timer_with_info`` (which restarts the period), then the callback, with a ``TimerInfo``
  argument when the callback has a parameter annotated with it; a timer whose callback is a coroutine
  function is left to the executor below. Handing a timer to that executor costs a full
  ``wait_for_ready_callbacks`` over every entity of the node (22 QoS-event waitables, 7 parameter services:
  1-2 ms in the estimator node), a stall of the message loop every time a timer fires;
- anything else that is ready (a parameter-service request, another subscription) is handed to a
  ``SingleThreadedExecutor`` on the same node, which runs every callback that is ready then, with rclpy's
  own semantics (timer info, callback groups, service responses, QoS-event waitables, guard conditions);
- that executor also runs at least every ``housekeeping_period_s`` (0.5 s), for what this wait set does
  not hold: waitables (QoS events) and the node's guard conditions, whose trigger a wait would consume.

Everything else stays rclpy's: timers, parameter services, ``use_sim_time`` (its ``/clock`` subscription
is another subscription), shutdown (``rclpy.shutdown`` or Ctrl-C wake the wait; ``spin`` then raises
``ExternalShutdownException`` like rclpy's executors, or the ``KeyboardInterrupt`` propagates).

A hot subscription is taken as rclpy's executor takes it (``take_message`` of its handle with its message
type): rclpy's type support deserializes the sample into a Python message of the subscription's type, or
gives the bytes of a ``raw=True`` subscription. A sample the middleware cannot deserialize is dropped inside
the take (Fast DDS: nothing is taken, nothing raised), as with rclpy's executors. The callbacks must take the
message only (no ``MessageInfo``). The loop is single-threaded: callbacks run in the thread that calls
``spin``/``spin_once``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from typing import Any

from rclpy.exceptions import InvalidHandle
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor, TimeoutException
from rclpy.guard_condition import GuardCondition
from rclpy.node import Node
from rclpy.signals import SignalHandlerGuardCondition
from rclpy.timer import Timer, TimerInfo
from rclpy.utilities import timeout_sec_to_nsec

from robot_state_estimator.ros.rclpy_compat import WaitSet, close_pending_callbacks

#: s, the fallback executor runs at least this often (waitables and guard conditions of the node).
HOUSEKEEPING_PERIOD_S = 0.5
#: Rounds of takes (one message per hot subscription each) before the wait set is checked again.
MAX_ROUNDS = 20
#: s, the longest stretch of waits on the hot subscriptions only (module docstring).
FULL_WAIT_PERIOD_S = 0.01
_NO_HANDLES: list[Any] = []  # (never changed)
_NO_TIMER_NS = 1 << 62


class LeanExecutor:
    """Spin ``node``: ``hot`` subscriptions on a fast path, everything else through rclpy's executor.

    Args:
        node: the node to spin (one node).
        hot: its subscriptions to take and dispatch directly (message-only callbacks), or a function returning
            them, called whenever the node's entities changed (subscriptions created later, e.g. once the
            node can process their messages, become hot then).
        housekeeping_period_s: s, the fallback executor runs at least this often.
        full_wait_period_s: s, the longest stretch of waits on the hot set only (module docstring).

    Attributes:
        fallback: the ``SingleThreadedExecutor`` that runs everything but the hot subscriptions.
    """

    def __init__(
        self,
        node: Node,
        hot: Iterable[Any] | Callable[[], Iterable[Any]],
        *,
        housekeeping_period_s: float = HOUSEKEEPING_PERIOD_S,
        full_wait_period_s: float = FULL_WAIT_PERIOD_S,
    ) -> None:
        self._node = node
        self._context = node.context
        if callable(hot):
            self._hot = hot
        else:
            fixed = list(hot)
            self._hot = lambda: fixed
        self._housekeeping_ns = int(housekeeping_period_s * 1e9)
        self._full_period_ns = int(full_wait_period_s * 1e9)
        self.fallback = SingleThreadedExecutor(context=self._context)
        self.fallback.add_node(node)
        self._sigint_gc = SignalHandlerGuardCondition(context=self._context)
        self._wake_gc = GuardCondition(callback=None, callback_group=None, context=self._context)
        self._stack: ExitStack | None = None
        self._wait_set: Any = None  # every level-triggered entity
        self._hot_wait_set: Any = None  # the hot subscriptions, the timers and the guard conditions
        self._context_ok: Callable[[], bool] = self._context.ok  # the entered context handle's, once built
        self._next_full_ns = 0
        self._hot_handles: list[Any] = []  # the hot subscriptions' handles (the hot wait set's entities)
        self._key: tuple[Any, ...] = ()
        self._hot_entries: list[tuple[int, Any, Any, Any, bool]] = []  # (pointer, handle, msg_type, callback, raw)
        self._others: frozenset[int] = frozenset()  # pointers of the non-hot entities (timers excepted)
        self._timers: dict[int, Timer] = {}  # pointer -> timer, called directly
        self._next_housekeeping_ns = 0
        self._dirty = True  # the entities must be (re)read before the next wait
        self._shutdown = False
        self._context.on_shutdown(self.wake)

    # ------------------------------------------------------------------------------------------ set-up

    def _entities(self) -> tuple[Any, ...]:
        node = self._node
        return (tuple(node.subscriptions), tuple(node.timers), tuple(node.services), tuple(node.clients))

    def _rebuild(self, key: tuple[Any, ...]) -> None:
        """(Re)build the wait set over the node's current level-triggered entities."""
        self._release()
        context_handle = self._context.handle
        if context_handle is None:  # rclpy's executor raises the same (Executor._wait_for_ready_callbacks)
            raise RuntimeError("Cannot enter context if context is None")
        subs, timers, services, clients = key
        stack = ExitStack()
        entered: dict[str, list[Any]] = {"sub": [], "timer": [], "service": [], "client": []}
        for kind, entities in (("sub", subs), ("timer", timers), ("service", services), ("client", clients)):
            for entity in entities:
                try:
                    stack.enter_context(entity.handle)
                except InvalidHandle:  # being destroyed
                    continue
                entered[kind].append(entity)
        gcs = [self._sigint_gc.handle, self._wake_gc.handle]
        for gc in gcs:
            stack.enter_context(gc)
        stack.enter_context(context_handle)
        self._stack = stack
        self._key = key
        self._wait_set = WaitSet(
            len(entered["sub"]),
            len(gcs),
            len(entered["timer"]),
            len(entered["client"]),
            len(entered["service"]),
            0,
            context_handle,
        )
        self._handles = (
            [s.handle for s in entered["sub"]],
            [t.handle for t in entered["timer"]],
            [s.handle for s in entered["service"]],
            [c.handle for c in entered["client"]],
            gcs,
        )
        hot_ids = {id(s) for s in self._hot()}
        self._hot_entries = [
            (s.handle.pointer, s.handle, s.msg_type, s.callback, s.raw) for s in entered["sub"] if id(s) in hot_ids
        ]
        self._hot_handles = [e[1] for e in self._hot_entries]
        self._hot_wait_set = WaitSet(len(self._hot_handles), 0, 0, 0, 0, 0, context_handle)
        self._next_full_ns = 0  # the timers' next call is read at the first (full) wait
        # the context is entered for the wait sets' life: its handle's ok() without rclpy's lock and entering
        self._context_ok = context_handle.ok
        hot_pointers = {e[0] for e in self._hot_entries}
        self._timers = {t.handle.pointer: t for t in entered["timer"]}
        self._others = frozenset(
            h.pointer
            for handles in (self._handles[0], self._handles[2], self._handles[3])
            for h in handles
            if h.pointer not in hot_pointers
        )

    def _release(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None
        self._wait_set = self._hot_wait_set = None
        self._context_ok = self._context.ok
        self._dirty = True

    # ------------------------------------------------------------------------------------------- spinning

    def spin(self) -> None:
        """Spin until the context shuts down (then ``ExternalShutdownException``) or ``shutdown``."""
        try:
            while not self._shutdown:
                self.spin_once(timeout_sec=None)
        finally:
            self._release()

    def spin_once(self, timeout_sec: float | None = None) -> None:
        """Wait for work (at most ``timeout_sec``; None = until there is some) and do what is ready.

        Raises:
            ExternalShutdownException: the context was shut down.
        """
        if self._dirty:  # the fallback ran callbacks, which may have created or destroyed entities
            if not self._context.ok():
                raise ExternalShutdownException()
            key = self._entities()
            if key != self._key or self._wait_set is None:
                self._rebuild(key)
            self._dirty = False
        now_ns = time.monotonic_ns()
        if now_ns >= self._next_housekeeping_ns:
            self._next_housekeeping_ns = now_ns + self._housekeeping_ns
            if not self._context.ok():
                raise ExternalShutdownException()
            self._run_fallback()
            return
        wait_ns = self._next_housekeeping_ns - now_ns
        if timeout_sec is not None:
            wait_ns = min(wait_ns, max(0, timeout_sec_to_nsec(timeout_sec)))
        hot_subs = self._hot_handles
        full = now_ns >= self._next_full_ns or not hot_subs
        if full:
            ws = self._wait_set
            subs, timers, services, clients, gcs = self._handles
        else:  # the hot set, until the next full wait is due
            ws = self._hot_wait_set
            subs, timers, services, clients, gcs = hot_subs, _NO_HANDLES, _NO_HANDLES, _NO_HANDLES, _NO_HANDLES
            wait_ns = min(wait_ns, self._next_full_ns - now_ns)
        ws.clear_entities()
        for h in subs:
            ws.add_subscription(h)
        for h in services:
            ws.add_service(h)
        for h in clients:
            ws.add_client(h)
        for h in timers:
            ws.add_timer(h)
        for h in gcs:
            ws.add_guard_condition(h)
        ws.wait(wait_ns)
        if not self._context_ok():
            raise ExternalShutdownException()
        if timers:
            ready_timers = ws.get_ready_entities("timer")
            if ready_timers:
                self._call_timers(ready_timers)
        ready = ws.get_ready_entities("subscription")
        if full:
            self._next_full_ns = time.monotonic_ns() + min(self._full_period_ns, self._until_next_timer_ns(timers))
            if services:
                ready += ws.get_ready_entities("service")
            if clients:
                ready += ws.get_ready_entities("client")
            others = self._others
            if any(p in others for p in ready):
                self._run_fallback()
        self._take_hot(ready)

    @staticmethod
    def _until_next_timer_ns(timers: list[Any]) -> int:
        """ns until the first of the timers (handles) is due (0 when one is; a large number without any): its clock's
        time, which is the steady or wall clock's for a timer on those (a ROS-time timer's is the simulated time's)."""
        until = _NO_TIMER_NS
        for h in timers:
            t = h.time_until_next_call()  # None: cancelled
            if t is not None and t < until:
                until = max(0, t)
        return until

    def _take_hot(self, ready: list[int]) -> None:
        """Take and dispatch the hot subscriptions' messages: one per subscription per round (the order of
        arrival across the streams, as rclpy's executor interleaves them), first from those the wait found
        ready, then from every hot subscription while a round took something, until a round takes nothing or
        ``MAX_ROUNDS`` rounds were done (then the wait set is checked again, so timers and services are not starved
        by a backlog). A message of another stream that arrived during a callback (an IMU and the joint states of
        one control cycle) is so taken without another wait: a take that finds nothing costs about 0.5 us, a wait
        (rcl_wait with its wait set) about 20 us."""
        entries = [e for e in self._hot_entries if e[0] in ready]
        every = self._hot_entries
        for _ in range(MAX_ROUNDS):
            took = False
            for entry in entries:
                _, handle, msg_type, callback, raw = entry
                taken = handle.take_message(msg_type, raw)
                if taken is not None:
                    took = True
                    callback(taken[0])
            if not took:
                return
            entries = every

    def _call_timers(self, ready: list[int]) -> None:
        """Call the ready timers as rclpy's executor does (``Executor._take_timer``): restart the period with
        ``call_timer_with_info``, then the callback, with a ``TimerInfo`` for a parameter annotated with it.
        A coroutine callback goes to the fallback executor (the timer is still ready for it)."""
        fallback = False
        for pointer in ready:
            timer = self._timers.get(pointer)
            if timer is None:
                continue
            # its parameters are checked below (a TimerInfo one or none), as rclpy's executor does
            callback: Callable[..., None] | None = timer.callback
            if callback is None:
                continue
            if inspect.iscoroutinefunction(callback):
                fallback = True
                continue
            try:
                with timer.handle:
                    info = timer.handle.call_timer_with_info()
            except InvalidHandle:  # destroyed meanwhile
                continue
            arg = _timer_info_parameter(callback)
            if arg is None:
                callback()
            else:
                callback(
                    **{
                        arg: TimerInfo(
                            expected_call_time=info["expected_call_time"],
                            actual_call_time=info["actual_call_time"],
                            clock_type=timer.clock.clock_type,
                        )
                    }
                )
        self._dirty = True  # a callback may add or remove entities: the next spin_once looks
        if fallback:
            self._run_fallback()

    def _run_fallback(self) -> None:
        """Let rclpy's executor run every callback that is ready now (timers, services, waitables, ...)."""
        executor = self.fallback
        for _ in range(100):  # bounded: work that keeps arriving is picked up by the next rounds
            if self._shutdown:
                return
            try:
                handler, _entity, _node = executor.wait_for_ready_callbacks(timeout_sec=0.0)
            except TimeoutException:
                break
            except ExternalShutdownException:
                raise
            self._dirty = True  # the callback may add or remove entities: the next spin_once looks
            handler()
            exception = handler.exception()
            if exception is not None:
                raise exception

    def wake(self) -> None:
        """Wake a ``spin_once`` that is waiting (from another thread, or at the context's shutdown)."""
        try:
            self._wake_gc.trigger()
        except InvalidHandle:  # destroyed already
            pass

    def shutdown(self) -> None:
        """Stop ``spin`` after the current round (also from a callback)."""
        self._shutdown = True
        self.wake()

    def destroy(self) -> None:
        """Release the wait set, the fallback executor and the guard conditions (before the node is destroyed).

        An exception out of a callback the fallback executor ran (Ctrl-C) leaves its wait generator suspended
        with every handle of the node entered; closed here, so that the node's entities are destroyed by
        ``destroy_node`` and not later, behind their node's back (a crash at exit).
        """
        self._release()
        close_pending_callbacks(self.fallback)
        self.fallback.shutdown(timeout_sec=0)
        for gc in (self._sigint_gc, self._wake_gc):
            try:
                gc.destroy()
            except InvalidHandle:
                pass


def _timer_info_parameter(callback: Any) -> str | None:
    """The name of ``callback``'s first parameter annotated ``TimerInfo`` (rclpy's rule), or None."""
    for param in inspect.signature(callback).parameters.values():
        if param.annotation == TimerInfo:
            return param.name
    return None


def spin(node: Node, hot: Iterable[Any] | Callable[[], Iterable[Any]]) -> None:
    """``rclpy.spin(node)`` with ``LeanExecutor``: returns on ``shutdown``; raises as rclpy's executors do."""
    executor = LeanExecutor(node, hot)
    try:
        executor.spin()
    finally:
        executor.destroy()


__all__ = ["FULL_WAIT_PERIOD_S", "HOUSEKEEPING_PERIOD_S", "LeanExecutor", "spin"]
