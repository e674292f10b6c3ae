"""The feeder of ``bench``'s node sections (``tools/bench_node.py``), run as its own process:
``python -m robot_state_estimator.tools.bench_feeder <pickle> <imu Hz> <joint Hz> <warmup> <total>`` publishes
pre-serialized IMU and joint-state messages to the node, stamped with the wall clock at publish."""

from __future__ import annotations

import json
import pickle
import struct
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.tools.bench_common import BenchError, samples_of

if TYPE_CHECKING:  # imported where used: the simulator loads pinocchio
    from robot_state_estimator.simulation.run import SimulatedRun

#: s, longest wait for the feeder's subscribers (the node) to be discovered
FEEDER_STARTUP_TIMEOUT_S = 30.0


def feeder_messages(run: SimulatedRun, n: int) -> tuple[list[bytes], list[bytes]]:
    """The first ``n`` IMU and joint samples of ``run`` as serialized (CDR) messages with a zero stamp."""
    from rclpy.serialization import serialize_message

    from robot_state_estimator.io import messages
    from robot_state_estimator.ros.message_types import TYPES

    samples = samples_of(run)
    imus = [s for _, _, s in samples if isinstance(s, ImuSample)][:n]
    joints = [s for _, _, s in samples if isinstance(s, JointSample)][:n]
    imu_bytes = [
        serialize_message(
            messages.imu_msg(TYPES, ImuSample(1, s.angular_velocity, s.linear_acceleration, None, s.frame_id))
        )
        for s in imus
    ]
    joint_bytes = [
        serialize_message(messages.joint_state_msg(TYPES, JointSample(1, s.names, s.position, s.velocity, s.effort)))
        for s in joints
    ]
    return imu_bytes, joint_bytes


def feed(
    imu_bytes: list[bytes],
    joint_bytes: list[bytes],
    *,
    imu_rate_hz: int,
    joint_rate_hz: int,
    warmup: int,
    total: int,
    out: TextIO = sys.stdout,
) -> dict[str, Any]:
    """The feeder (its own process, ``python -m robot_state_estimator.tools.bench_feeder``): publish
    ``total`` IMU messages at ``imu_rate_hz`` and a joint state with every ``imu_rate_hz // joint_rate_hz``-th
    one (same stamp), cyclically from the pre-serialized messages, stamped with the wall clock at publish.

    As cheap as a publisher can be, so that it takes little of the cores it shares with the node: the
    messages are serialized once, a publish patches the 8 stamp bytes and hands the bytes to rclpy (no Python
    message, no conversion); no executor (publishing needs none). Prints ``ready``, ``recording`` (after
    ``warmup`` IMU messages) and ``done <json>`` lines on ``out``.

    Raises:
        BenchError: the node did not subscribe within ``FEEDER_STARTUP_TIMEOUT_S``.
    """
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from robot_state_estimator.ros.message_types import TYPES

    rclpy.init()
    node = rclpy.create_node("rse_bench_feeder")
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
    imu_pub = node.create_publisher(TYPES.Imu, "imu/data", qos)
    joint_pub = node.create_publisher(TYPES.JointState, "joint_states", qos)
    try:
        t_wait = time.monotonic() + FEEDER_STARTUP_TIMEOUT_S
        while imu_pub.get_subscription_count() < 1 or joint_pub.get_subscription_count() < 1:
            if time.monotonic() > t_wait:
                raise BenchError("the node did not subscribe to the feeder's topics")
            time.sleep(0.05)
        print("ready", file=out, flush=True)
        # the feeder's writers see the node's readers: give the readers the moment they take to see the writers
        # (DDS discovery runs both ways), so that the first messages are not lost to the matching
        time.sleep(0.5)
        joint_every = imu_rate_hz // joint_rate_hz
        period_ns = 1_000_000_000 // imu_rate_hz
        imu_buf = [bytearray(b) for b in imu_bytes]
        joint_buf = [bytearray(b) for b in joint_bytes]
        n = min(len(imu_buf), len(joint_buf))
        pack_stamp = struct.Struct("<iI").pack_into
        publish_imu, publish_joints = imu_pub.publish, joint_pub.publish
        late = published_imu = published_joints = total_imu = total_joints = 0
        clock, sleep, time_ns = time.monotonic_ns, time.sleep, time.time_ns
        cpu0 = time.process_time()
        t0 = clock()
        for k in range(total):
            if k == warmup:
                print("recording", file=out, flush=True)
                published_imu = published_joints = 0
                late = 0
                cpu0 = time.process_time()
                t0_rec = clock()
            d = t0 + k * period_ns - clock()
            if d > 0:
                sleep(d / 1e9)
            elif -d > 2 * period_ns:
                late += 1
            stamp = time_ns()
            sec, nanosec = divmod(stamp, 1_000_000_000)
            i = k % n
            msg = imu_buf[i]
            pack_stamp(msg, 4, sec, nanosec)
            publish_imu(bytes(msg))
            published_imu += 1
            total_imu += 1
            if k % joint_every == 0:
                msg = joint_buf[i]
                pack_stamp(msg, 4, sec, nanosec)
                publish_joints(bytes(msg))
                published_joints += 1
                total_joints += 1
        wall = (clock() - t0_rec) / 1e9
        stats = {
            "imu_published": published_imu,
            "joint_states_published": published_joints,
            "imu_published_total": total_imu,
            "joint_states_published_total": total_joints,
            "late_ticks": late,
            "duration_s": wall,
            "cpu_percent_of_one_core": 100.0 * (time.process_time() - cpu0) / wall,
        }
        print("done " + json.dumps(stats), file=out, flush=True)
        return stats
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def main(argv: list[str]) -> int:
    """``python -m robot_state_estimator.tools.bench_feeder <pickle> <imu Hz> <joint Hz> <warmup> <total>``
    (the pickle is the benchmark's own temporary file: the serialized IMU and joint messages)."""
    path, imu_rate, joint_rate, warmup, total = argv
    imu_bytes, joint_bytes = pickle.loads(Path(path).read_bytes())
    feed(
        imu_bytes,
        joint_bytes,
        imu_rate_hz=int(imu_rate),
        joint_rate_hz=int(joint_rate),
        warmup=int(warmup),
        total=int(total),
    )
    return 0


__all__ = ["FEEDER_STARTUP_TIMEOUT_S", "feed", "feeder_messages", "main"]

if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(
            "usage: python -m robot_state_estimator.tools.bench_feeder <pickle> <imu Hz> <joint Hz> <warmup> <total>"
        )
    sys.exit(main(sys.argv[1:]))
