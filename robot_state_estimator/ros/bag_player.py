"""``bag_player``: publish a bag's messages through rclpy at their recorded rate, with ``/clock``.

For machines without rosbag2 (``ros2 bag play``): reads rosbag2 bags (mcap or sqlite3) and ROS 1 bags
with ``rosbags`` and publishes every message on its recorded topic, in log-time order::

    bag_player BAG [--rate 2.0 | --fast] [--clock] [--topics /imu/data /joint_states]
               [--repeat N] [--wait-for-subscribers /imu/data ...] [--ros-args -r /imu/data:=/robot/imu]

- Timing follows the bag's log (receive) times, scaled by ``--rate``; ``--fast`` publishes as fast as
  possible (no sleeping).
- ``--clock`` publishes ``/clock`` (rosgraph_msgs/Clock) with the bag time before every message whose
  log time advanced (``--clock-hz`` > 0 limits it to that rate of bag time instead), so nodes with
  ``use_sim_time:=true`` follow the bag; a ``/clock`` recorded in the bag is then not played.
- ROS 2 bags are published as they are stored (serialized CDR, no conversion); ROS 1 messages are
  converted to CDR by rosbags.
- ``--repeat N`` plays the bag N times (0 = until stopped), like ``ros2 bag play --loop``; the time then
  jumps backwards at each restart, as with a looping bag.
- Publishers are reliable, keep last ``--qos-depth``; ``/tf_static`` and ``robot_description`` are
  transient local. Best-effort subscribers (sensor QoS) receive them too.
- Remap topics with the usual ``--ros-args -r FROM:=TO``.

Exit code: 0 when played to the end, 1 on an unreadable bag or a timeout while waiting for subscribers.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.utilities import remove_ros_args

from robot_state_estimator.common.time import NS_PER_S, ns_to_sec_nanosec
from robot_state_estimator.ros.rclpy_compat import RCLError

if TYPE_CHECKING:
    from rosgraph_msgs.msg import Clock

LATCHED_TOPICS = ("/tf_static", "/robot_description")


class BagPlayerError(RuntimeError):
    """The bag cannot be played: unreadable, unknown message type, no subscriber in time."""


def message_class(msgtype: str) -> Any:
    """The rclpy message class of a ROS 2 type name (``sensor_msgs/msg/Imu``).

    Raises:
        BagPlayerError: the message package is not installed (the message names it).
    """
    parts = msgtype.split("/")
    pkg, name = parts[0], parts[-1]
    try:
        return getattr(importlib.import_module(f"{pkg}.msg"), name)
    except (ImportError, AttributeError) as exc:
        raise BagPlayerError(f"message type {msgtype} is not installed (python module {pkg}.msg)") from exc


def _qos(topic: str, depth: int) -> QoSProfile:
    latched = topic in LATCHED_TOPICS
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1 if latched else depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
    )


class BagPlayer:
    """Publishes a bag through ``node``.

    Args:
        node: the node that owns the publishers.
        path: bag directory or file.
        topics: topics to play (None = all).
        rate: playback speed (1 = recorded rate); 0 or less = as fast as possible.
        clock: publish ``/clock``.
        clock_hz: when > 0, publish ``/clock`` at most at this rate of bag time (else before every
            message whose time advanced).
        qos_depth: history depth of the publishers.

    Raises:
        BagPlayerError: unreadable bag, a requested topic is missing, or a type is not installed.
    """

    def __init__(
        self,
        node: Node,
        path: str | Path,
        *,
        topics: Sequence[str] | None = None,
        rate: float = 1.0,
        clock: bool = False,
        clock_hz: float = 0.0,
        qos_depth: int = 1000,
    ) -> None:
        from rosbags.highlevel import AnyReader

        from robot_state_estimator.io.bags import default_typestore

        self._node = node
        self._path = Path(path)
        self._rate = float(rate)
        self._clock_period_ns = int(NS_PER_S / clock_hz) if clock_hz > 0 else 0
        self._typestore = default_typestore()
        self._reader_cls = AnyReader
        try:
            with AnyReader([self._path], default_typestore=self._typestore) as reader:
                present = {c.topic: c.msgtype for c in reader.connections}
        except Exception as exc:
            raise BagPlayerError(f"cannot read bag {self._path}: {exc}") from exc
        if topics:
            missing = sorted(set(topics) - set(present))
            if missing:
                raise BagPlayerError(f"bag {self._path} lacks topics {missing}; it has {sorted(present)}")
            present = {t: present[t] for t in topics}
        if clock:
            # the player's clock replaces a recorded /clock (both would give subscribers two interleaved clocks)
            present.pop("/clock", None)
        self.topics = present
        self._publishers = {
            topic: node.create_publisher(message_class(msgtype), topic, _qos(topic, qos_depth))
            for topic, msgtype in present.items()
        }
        self._clock_pub = None
        if clock:
            from rosgraph_msgs.msg import Clock

            self._clock_cls: type[Clock] = Clock
            self._clock_pub = node.create_publisher(Clock, "/clock", QoSProfile(depth=100))
        self.published = 0

    def wait_for_subscribers(self, topics: Sequence[str], timeout_s: float, settle_s: float = 0.0) -> None:
        """Block until each of ``topics`` has a subscriber (DDS discovery), at most ``timeout_s``, then
        ``settle_s`` more.

        DDS matches the two ends of a connection separately: the player's publisher counts the subscriber as soon
        as its own participant has the subscriber's announcement, but the subscriber accepts samples only once its
        participant has matched the publisher too. A best-effort subscriber (sensor QoS) drops what arrives in
        between, and nothing resends it: about 40 ms of a 200 Hz bag on a loaded 2-core machine. ``settle_s``
        covers that interval.

        Raises:
            BagPlayerError: a topic is not played from this bag, or the timeout passed (names the topics).
        """
        resolved = [self._publishers.get(t) for t in topics]
        unknown = [t for t, p in zip(topics, resolved) if p is None]
        if self._clock_pub is not None and "/clock" in unknown:
            unknown.remove("/clock")
        if unknown:
            raise BagPlayerError(f"cannot wait for subscribers of {unknown}: not played from this bag")
        clock_pub = self._clock_pub
        # "/clock" is the player's own clock publisher when it has one, else the bag's recorded /clock topic
        pubs = [clock_pub if t == "/clock" and clock_pub is not None else self._publishers[t] for t in topics]
        deadline = time.monotonic() + timeout_s
        while True:
            waiting = [t for t, p in zip(topics, pubs) if p.get_subscription_count() == 0]
            if not waiting:
                if settle_s > 0:
                    time.sleep(settle_s)
                return
            if time.monotonic() > deadline:
                raise BagPlayerError(f"no subscriber on {waiting} after {timeout_s:.1f} s")
            time.sleep(0.01)

    def _publish_clock(self, clock_pub: Publisher[Any], t_ns: int) -> None:
        sec, nanosec = ns_to_sec_nanosec(t_ns)
        msg = self._clock_cls()
        msg.clock.sec, msg.clock.nanosec = sec, nanosec
        clock_pub.publish(msg)

    def play_once(self) -> None:
        """Play the bag once from the start (blocking)."""
        with self._reader_cls([self._path], default_typestore=self._typestore) as reader:
            connections = [c for c in reader.connections if c.topic in self._publishers]
            ros1 = not reader.is2
            start_wall = time.monotonic()
            t0: int | None = None
            last_clock: int | None = None
            clock_pub = self._clock_pub
            for connection, t_ns, raw in reader.messages(connections=connections):
                if not rclpy.ok(context=self._node.context):
                    return
                if t0 is None:
                    t0 = t_ns
                if self._rate > 0:
                    delay = start_wall + (t_ns - t0) / NS_PER_S / self._rate - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                if clock_pub is not None and (
                    last_clock is None or (t_ns > last_clock and t_ns - last_clock >= self._clock_period_ns)
                ):
                    self._publish_clock(clock_pub, t_ns)
                    last_clock = t_ns
                data: bytes | memoryview = raw
                if ros1:
                    msg = reader.deserialize(raw, connection.msgtype)
                    data = self._typestore.serialize_cdr(msg, connection.msgtype)
                self._publishers[connection.topic].publish(bytes(data))
                self.published += 1

    def play(self, repeat: int = 1) -> None:
        """Play ``repeat`` times (0 = until shutdown)."""
        n = 0
        while (repeat <= 0 or n < repeat) and rclpy.ok(context=self._node.context):
            self.play_once()
            n += 1

    def flush(self, timeout_s: float = 5.0) -> None:
        """Wait (bounded) until reliable subscribers acknowledged everything published."""
        from rclpy.duration import Duration

        for pub in self._publishers.values():
            try:
                pub.wait_for_all_acked(Duration(seconds=timeout_s))
            except Exception:  # pragma: no cover - depends on the RMW
                pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bag_player", description=__doc__.splitlines()[0].replace("``", ""))
    parser.add_argument("bag", type=Path, help="rosbag2 directory or file (mcap, sqlite3) or ROS 1 bag")
    speed = parser.add_mutually_exclusive_group()
    speed.add_argument("--rate", type=float, default=1.0, help="playback speed factor (default 1)")
    speed.add_argument("--fast", action="store_true", help="publish as fast as possible")
    parser.add_argument("--clock", action="store_true", help="publish /clock with the bag time")
    parser.add_argument(
        "--clock-hz", type=float, default=0.0, help="limit /clock to this rate of bag time (0: every step)"
    )
    parser.add_argument("--topics", nargs="+", default=None, help="topics to play (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="play N times, 0 = until stopped (default 1)")
    parser.add_argument("--qos-depth", type=int, default=1000, help="publisher history depth (default 1000)")
    parser.add_argument(
        "--wait-for-subscribers",
        nargs="+",
        default=(),
        metavar="TOPIC",
        help="before playing, wait until each TOPIC has a subscriber",
    )
    parser.add_argument("--wait-timeout", type=float, default=30.0, help="seconds to wait (default 30)")
    parser.add_argument(
        "--wait-settle",
        type=float,
        default=0.5,
        metavar="S",
        help="after the subscribers appeared, seconds to wait before playing, until they have matched the player's "
        "publishers too (a best-effort subscriber drops samples sent before; default 0.5)",
    )
    parser.add_argument("--start-delay", type=float, default=0.0, help="seconds to sleep before playing")
    return parser


def main(args: list[str] | None = None) -> int:
    """Entry point of ``bag_player``."""
    argv = list(sys.argv if args is None else ["bag_player", *args])
    options = build_parser().parse_args(remove_ros_args(argv)[1:])
    rclpy.init(args=argv)
    node = None
    code = 0
    try:
        node = rclpy.create_node("bag_player")
        player = BagPlayer(
            node,
            options.bag,
            topics=options.topics,
            rate=0.0 if options.fast else options.rate,
            clock=options.clock,
            clock_hz=options.clock_hz,
            qos_depth=options.qos_depth,
        )
        if options.wait_for_subscribers:
            player.wait_for_subscribers(
                list(options.wait_for_subscribers), options.wait_timeout, settle_s=options.wait_settle
            )
        if options.start_delay > 0:
            time.sleep(options.start_delay)
        player.play(options.repeat)
        player.flush()
        if rclpy.ok(context=node.context):
            node.get_logger().info(f"published {player.published} messages from {options.bag}")
        else:  # stopped by SIGINT/SIGTERM: the context is shut down, so the logger's /rosout publisher is gone
            print(f"bag_player: stopped after publishing {player.published} messages from {options.bag}")
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RCLError:
        if rclpy.ok():  # a real publish failure; after SIGTERM/SIGINT the context is shut down: a normal stop
            raise
    except BagPlayerError as exc:
        print(f"bag_player: error: {exc}", file=sys.stderr)
        code = 1
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == "__main__":
    sys.exit(main())
