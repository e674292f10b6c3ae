"""``robot-state-estimator bench`` (``make bench``): throughput, per-step cost, node latency, CPU, memory.

Writes one JSON file per run into ``--output`` (default ``bench/results/``), named by date, and
``latest.json``. Sections:

- ``offline``: the core fed in memory (no message conversion) with a simulated 12-DoF Go1 trot at IMU 1 kHz +
  joints 1 kHz: input samples per second, multiple of real time (on one core, one Python thread);
- ``replay``: replay's real-time factor by CPU time and the CPU per message of reading, the adapter and log, the
  core and writing, for the simulated trot above (IMU 1 kHz + joints 1 kHz) and the real Go1 recording, each with
  the TUM output only and with the full output bag (``tools/bench_replay.py``). Before 2026-12-04 ``replay`` was
  one wall-time entry of the simulated run with the output bag and ``replay_no_bag`` the same without;
- ``step_cost``: per-call cost of ``add_imu`` (propagation) and of ``add_joints`` while standing (4 feet in
  contact: 4 leg-kinematics updates) and while trotting (2 feet), median and p99 in microseconds;
- ``node``: the node (``robot_state_estimator.ros.node`` as its own process, ``ROS_AUTOMATIC_DISCOVERY_RANGE
  =LOCALHOST``, a private ``ROS_DOMAIN_ID``) fed 1 kHz ``imu/data`` + 1 kHz ``joint_states`` over loopback DDS
  for ``--node-duration`` seconds (30 by default) by a feeder in its own process (pre-serialized messages, the
  stamp patched in, wall-clock stamps at publish; about 10 % of a core), while this process receives the
  odometry (raw bytes, only the stamp read) and ``/diagnostics``: the node's own latency as it reports it in
  ``/diagnostics`` (``node_latency_stamp_to_publish_ms``: input stamp to the odometry publish;
  ``node_processing_ms``: callback entry to the odometry publish; merged over the reports of the recording
  window: p50 = median of the per-report p50s, p99 = max of the per-report p99s, max = max), the inputs the
  feeder published and the node received (``node_inputs``: dropped = published - received), the end-to-end
  latency ``latency_stamp_to_reception_us`` (input stamp to the reception of the odometry here: an upper
  bound), the CPU use (% of one core) of the node from ``/proc``, of the feeder and of this process, the
  node's RSS at the start and end of the measurement (growth) and its peak RSS (VmHWM); ``node_500_250`` the
  same at IMU 500 Hz + joints 250 Hz; ``node_all_outputs`` with the TF, the wrenches and the contact states
  subscribed too, ``node_tf`` / ``node_wrenches`` / ``node_contacts`` with one of them each (the cost of each);
  ``--node-prefix`` runs the node under a command (``chrt -f 20``);
- ``decode``: per-message cost of decoding the replay bag's input topics, rosbags' deserializer against the
  bulk CDR decoder (``tools/bench_decode.py``);
- ``kinematics``: one joint step's kinematics and dynamics on the Go1 with 4 feet, pinocchio's calls against the
  compiled kernels, us per call and their ratios (``tools/bench_kinematics.py``);
- ``memory``: peak RSS of the benchmark process and RSS growth over the offline run.

``--short`` shrinks everything (seconds instead of minutes) for the test suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pickle
import platform
import resource
import shlex
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.tools.bench_replay import bench_replay_section
from robot_state_estimator.tools.bench_replay import summary_lines as bench_replay_summary

#: The node's outputs besides the odometry, each published only while subscribed: ``/tf``, ``contact_wrench/<foot>``
#: (one per foot), ``contact_states`` (``bench_node``'s ``subscribe_outputs``; a ``node_<output>`` case each).
EXTRA_OUTPUTS: tuple[str, ...] = ("tf", "wrenches", "contacts")
#: s, the node's diagnostics period during the node benchmark (each report gives the percentiles of its period)
DIAGNOSTICS_PERIOD_S = 1.0


class BenchError(RuntimeError):
    """The benchmark cannot run (the node did not start, no odometry came back, ...)."""


# ------------------------------------------------------------------------------------------ utilities
def _rss_kb(pid: int | str = "self") -> dict[str, int]:
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        pass
    return out


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime


def _steal_s() -> float | None:
    """CPU time the hypervisor took from this (virtual) machine's CPUs, summed over them, s (``steal`` of the
    ``cpu`` line of ``/proc/stat``); None where the kernel does not provide it."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _steal_percent(steal0: float | None, steal1: float | None, wall_s: float) -> float | None:
    """Share of the machine's CPU time taken by the hypervisor over ``wall_s`` (percent of all CPUs)."""
    if steal0 is None or steal1 is None or wall_s <= 0:
        return None
    return 100.0 * (steal1 - steal0) / ((os.cpu_count() or 1) * wall_s)


def _main_thread_schedstat(pid: int) -> tuple[int, int, int] | None:
    """``/proc/<pid>/task/<pid>/schedstat`` of a process's main thread: (ns on a CPU, ns waiting on a run
    queue, time slices); None where the kernel does not provide it."""
    try:
        fields = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
        return int(fields[0]), int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def _percentiles_us(ns: list[int] | np.ndarray) -> dict[str, float]:
    a = np.asarray(ns, dtype=float) / 1e3
    if a.size == 0:
        return {"n": 0}
    return {
        "n": int(a.size),
        "median_us": float(np.median(a)),
        "p99_us": float(np.percentile(a, 99)),
        "max_us": float(np.max(a)),
        "mean_us": float(np.mean(a)),
    }


def simulated_run(gait: str, duration_s: float, *, seed: int = 0) -> Any:
    """A simulated Go1 run (IMU 1 kHz, joints 1 kHz, no noise) from ``robot_state_estimator.simulation``."""
    from robot_state_estimator.simulation import generator
    from robot_state_estimator.simulation.settings import SimulationSettings

    return generator.simulate(SimulationSettings(robot="go1", gait=gait, duration_s=duration_s, seed=seed))


def samples_of(run: Any) -> list[tuple[int, str, Any]]:
    """``(stamp_ns, "imu"|"joints", sample)`` of a simulated run in stamp order (IMU first on ties)."""
    out: list[tuple[int, str, Any]] = []
    frame = run.imu.frame_id
    for k, s in enumerate(run.imu_stamps_ns.tolist()):
        out.append((s, "imu", ImuSample(s, run.imu_omega[k].copy(), run.imu_f[k].copy(), None, frame)))
    for k, s in enumerate(run.joint_stamps_ns.tolist()):
        out.append(
            (
                s,
                "joints",
                JointSample(
                    s,
                    tuple(run.joint_names),
                    run.joint_position[k].copy(),
                    run.joint_velocity[k].copy(),
                    run.joint_effort[k].copy(),
                ),
            )
        )
    out.sort(key=lambda x: (x[0], 0 if x[1] == "imu" else 1))
    return out


def _estimator(run: Any) -> Any:
    from robot_state_estimator.common.paths import config_dir
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.tools.replay import split_config

    cfg = config_dir() / f"{run.robot}.yaml"
    settings, _ = split_config(cfg if cfg.exists() else None)
    return RobotStateEstimator.from_description(load_description(run.description_xml), settings)


# ------------------------------------------------------------------------------------------- offline
#: times the offline runs are fed (the median is reported)
OFFLINE_REPEATS = 5


def bench_offline(run: Any, repeats: int = 1) -> dict[str, Any]:
    """Throughput of the core fed in memory, and the cost of each call by kind.

    With ``repeats`` > 1 the run is fed that many times, each to a new estimator, and the repeat with the
    median wall time is returned, with every repeat's realtime factor under ``repeats`` (this machine's
    speed varies by tens of percent from one second to the next, also when nothing else runs).
    """
    if repeats > 1:
        results = [bench_offline(run) for _ in range(repeats)]
        median = sorted(results, key=lambda r: r["wall_s"])[len(results) // 2]
        return {
            **median,
            "repeats": {
                "n": repeats,
                "what": "the repeat with the median wall time is the one reported",
                "realtime_factor": [r["realtime_factor"] for r in results],
                "machine_steal_percent": [r["machine_steal_percent"] for r in results],
                "realtime_factor_best": max(r["realtime_factor"] for r in results),
            },
        }
    samples = samples_of(run)
    est = _estimator(run)
    rss0 = _rss_kb().get("VmRSS", 0)
    cost: dict[str, list[int]] = {"imu": [], "joints": []}
    contacts_of_step: list[Any] = []
    pc = time.perf_counter_ns
    # the loop's own work kept small (bound methods looked up once): the wall time is mostly the core's
    add_imu, add_joints, pop_events = est.add_imu, est.add_joints, est.pop_events
    imu_cost, joints_cost_append, contacts_append = cost["imu"].append, cost["joints"].append, contacts_of_step.append
    steal0 = _steal_s()
    t_start = pc()
    for _, kind, sample in samples:
        if kind == "imu":
            t0 = pc()
            add_imu(sample)
            imu_cost(pc() - t0)
        else:
            t0 = pc()
            e = add_joints(sample)
            joints_cost_append(pc() - t0)
            # the core's contact flags of the step (a new array each step, never written after): counting them
            # here through ``e.feet`` would build the FootState objects inside the timed loop
            contacts_append(est.contacts if e is not None else None)
        pop_events()
    wall = (pc() - t_start) / 1e9
    steal = _steal_percent(steal0, _steal_s(), wall)
    rss1 = _rss_kb().get("VmRSS", 0)
    span = (samples[-1][0] - samples[0][0]) / 1e9
    fic = np.asarray([-1 if c is None else int(c.sum()) for c in contacts_of_step])
    joints_cost = np.asarray(cost["joints"])
    by_feet = {str(n): _percentiles_us(joints_cost[fic == n]) for n in sorted(set(fic.tolist())) if n >= 0}
    return {
        "gait": run.settings.gait,
        "input_duration_s": span,
        "n_samples": len(samples),
        "wall_s": wall,
        "samples_per_s": len(samples) / wall,
        "realtime_factor": span / wall,
        "imu_step": _percentiles_us(cost["imu"]),
        "joint_step": _percentiles_us(cost["joints"]),
        "joint_step_by_feet_in_contact": by_feet,
        "rss_growth_kb": rss1 - rss0,
        "machine_steal_percent": steal,
    }


# ---------------------------------------------------------------------------------------------- node
#: s, longest wait for the feeder's subscribers (the node) to be discovered
FEEDER_STARTUP_TIMEOUT_S = 30.0


def _cdr_stamp_ns(data: bytes) -> int:
    """``header.stamp`` of a CDR-serialized message that starts with a ``std_msgs/Header`` (little endian)."""
    sec, nanosec = struct.unpack_from("<iI", data, 4)
    return sec * 1_000_000_000 + nanosec


def _feeder_messages(run: Any, n: int) -> tuple[list[bytes], list[bytes]]:
    """The first ``n`` IMU and joint samples of ``run`` as serialized (CDR) messages with a zero stamp."""
    from rclpy.serialization import serialize_message

    from robot_state_estimator.io import messages
    from robot_state_estimator.ros.message_types import TYPES

    samples = samples_of(run)
    imus = [s for _, k, s in samples if k == "imu"][:n]
    joints = [s for _, k, s in samples if k == "joints"][:n]
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
    out: Any = sys.stdout,
) -> dict[str, Any]:
    """The feeder (its own process, ``python -m robot_state_estimator.tools.bench --feeder``): publish
    ``total`` IMU messages at ``imu_rate_hz`` and a joint state with every ``imu_rate_hz // joint_rate_hz``-th
    one (same stamp), cyclically from the pre-serialized messages, stamped with the wall clock at publish.

    As cheap as a publisher can be, so that it takes little of the cores it shares with the node: the
    messages are serialized once, a publish patches the 8 stamp bytes and hands the bytes to rclpy (no Python
    message, no conversion); no executor (publishing needs none). Prints ``ready``, ``recording`` (after
    ``warmup`` IMU messages) and ``done <json>`` lines on ``out``.
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


def _feeder_main(argv: list[str]) -> int:
    """``python -m robot_state_estimator.tools.bench --feeder <pickle> <imu Hz> <joint Hz> <warmup> <total>``
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


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def bench_node(
    run: Any,
    duration_s: float,
    *,
    imu_rate_hz: int = 1000,
    joint_rate_hz: int = 1000,
    domain_id: int | None = None,
    startup_timeout_s: float = 30.0,
    node_prefix: list[str] | tuple[str, ...] = (),
    subscribe_all_outputs: bool = False,
    subscribe_outputs: tuple[str, ...] = (),
) -> dict:
    """Latency, CPU, memory and dropped input of the node process fed IMU + joint states over loopback DDS.

    Three processes share the machine: the node (``robot_state_estimator.ros.node``, as ``estimator_node``
    runs it), the feeder (:func:`feed`, its own process: pre-serialized messages, wall-clock stamps) and this
    one, which receives the odometry (raw bytes: only the stamp is read) and the node's ``/diagnostics``
    with ``ros.spin.LeanExecutor``. ``imu_rate_hz`` must be a multiple of ``joint_rate_hz``.

    What the node achieves is what it reports itself in ``/diagnostics`` over the recording window (after
    the warm-up): its latency from the input stamp to the odometry publish and from the callback entry to
    the publish (p50, p99, max: ``_merge_node_reports``), the inputs it received and the samples it counted
    as lost (from the stamps), next to what the feeder published; its CPU use from ``/proc``. The latency
    from the stamp to the reception of the odometry here is an upper bound (it adds the DDS trip back and
    this process's scheduling). ``node_prefix`` is put before the node's command line (``chrt -f 20``: a
    real-time priority; ``taskset -c 1``: a core of its own).

    The node fills and publishes TF, wrenches and contact states only while they have a subscriber
    (volatile QoS), so without ``subscribe_all_outputs`` and ``subscribe_outputs`` this measures a deployment that
    consumes the odometry alone; ``subscribe_outputs`` names the extra outputs (``EXTRA_OUTPUTS``: ``tf``,
    ``wrenches``, ``contacts``) this process also subscribes to (raw bytes, nothing read): ``/tf``,
    ``contact_wrench/<foot>`` of every foot, ``contact_states``; ``subscribe_all_outputs=True`` all three, as RViz
    and a bag recorder would. The CPU per input (node CPU / inputs received; ``main_thread_cpu_us_per_input`` for the
    node's main thread alone, the rest being DDS's threads) and the share of the node's main thread's wall time spent
    waiting for a CPU (``/proc/<pid>/task/<pid>/schedstat``: run-queue wait) come with it.

    Raises:
        BenchError: rclpy missing, bad rates, the node or the feeder did not start or published nothing.
    """
    if imu_rate_hz % joint_rate_hz:
        raise BenchError(f"imu rate {imu_rate_hz} Hz is not a multiple of the joint rate {joint_rate_hz} Hz")
    # 215..232: valid Fast DDS domains outside the Linux ephemeral port range and the tests' 1..200
    domain = domain_id if domain_id is not None else 215 + os.getpid() % 18
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    try:
        import rclpy
        from rclpy.qos import QoSProfile

        from robot_state_estimator.ros.message_types import TYPES
        from robot_state_estimator.ros.qos import output_qos
        from robot_state_estimator.ros.spin import LeanExecutor
    except ImportError as exc:
        raise BenchError(f"rclpy is not importable: {exc}") from exc

    warmup = 300 if duration_s < 5 else 1000  # the filter initializes on the first 100 IMU samples
    total = warmup + int(duration_s * imu_rate_hz)
    tmp = Path(tempfile.mkdtemp(prefix="rse_bench_"))
    desc_path = tmp / "robot_description.urdf"
    desc_path.write_text(run.description_xml)
    imu_bytes, joint_bytes = _feeder_messages(run, 2000)
    (tmp / "feed.pickle").write_bytes(pickle.dumps((imu_bytes, joint_bytes)))
    node_cmd = [*node_prefix, sys.executable, "-m", "robot_state_estimator.ros.node", "--ros-args"]
    node_cmd += ["-p", f"robot:={run.robot}", "-p", f"description_file:={desc_path}"]
    node_cmd += ["-p", f"diagnostics_period_s:={DIAGNOSTICS_PERIOD_S}", "--log-level", "warn"]
    feeder_cmd = [sys.executable, "-m", "robot_state_estimator.tools.bench", "--feeder", str(tmp / "feed.pickle")]
    feeder_cmd += [str(imu_rate_hz), str(joint_rate_hz), str(warmup), str(total)]
    # stderr to files, not pipes: a full pipe would block the process
    err_file = tempfile.TemporaryFile("w+")
    feeder_err = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(node_cmd, env=env, stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    proc.err_file = err_file  # type: ignore[attr-defined]
    feeder: subprocess.Popen | None = None
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node("rse_bench_receiver", context=context)
    state: dict[str, Any] = {"recording": False, "latencies": [], "reports": [], "last_report": 0.0, "first": {}}
    latencies: list[int] = state["latencies"]

    def on_odom(data: bytes) -> None:
        if state["recording"]:
            latencies.append(time.time_ns() - _cdr_stamp_ns(data))

    def on_diagnostics(msg: Any) -> None:
        for status in msg.status:
            if status.name.endswith(": inputs") and "robot_state_estimator" in status.name:
                values = {kv.key: kv.value for kv in status.values}
                state["last_report"] = time.monotonic()
                state["last_values"] = values
                if state["recording"]:
                    state["reports"].append(values)
                else:
                    state["before"] = values

    odom_sub = node.create_subscription(TYPES.Odometry, "odometry", on_odom, output_qos(1000), raw=True)
    node.create_subscription(TYPES.DiagnosticArray, "/diagnostics", on_diagnostics, QoSProfile(depth=100))
    extra_subs = []
    outputs_received: dict[str, int] = {}
    extra = tuple(EXTRA_OUTPUTS) if subscribe_all_outputs else tuple(subscribe_outputs)
    unknown = sorted(set(extra) - set(EXTRA_OUTPUTS))
    if unknown:
        raise BenchError(f"unknown outputs {unknown}; the extra outputs are {list(EXTRA_OUTPUTS)}")
    if extra:
        from robot_state_estimator.ros.qos import tf_qos

        def counter(topic: str) -> Any:
            outputs_received[topic] = 0

            def count(_: bytes) -> None:
                outputs_received[topic] += 1

            return count

        topics = []
        if "tf" in extra:
            topics.append((TYPES.TFMessage, "/tf", tf_qos()))
        if "contacts" in extra:
            topics.append((TYPES.DiagnosticArray, "contact_states", output_qos(1000)))
        if "wrenches" in extra:
            topics += [(TYPES.WrenchStamped, f"contact_wrench/{foot}", output_qos(1000)) for foot in run.feet]
        for msg_type, topic, qos in topics:
            extra_subs.append(node.create_subscription(msg_type, topic, counter(topic), qos, raw=True))
    executor = LeanExecutor(node, [odom_sub, *extra_subs])
    result: dict[str, Any] = {}

    def spin_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    try:
        # the node first: the feeder waits for its subscriptions, then prints "ready"
        t_wait = time.monotonic() + startup_timeout_s
        while node.count_publishers("/diagnostics") < 1 or odom_sub.get_publisher_count() < 1:
            if proc.poll() is not None or time.monotonic() > t_wait:
                raise BenchError(f"the node did not start within {startup_timeout_s} s: {_stderr(proc)}")
            spin_for(0.05)
        feeder = subprocess.Popen(feeder_cmd, env=env, stdout=subprocess.PIPE, stderr=feeder_err)
        feeder_out = feeder.stdout.fileno()  # type: ignore[union-attr]
        os.set_blocking(feeder_out, False)
        lines: list[str] = []
        pending = ""
        recording_start: tuple[float, dict[str, int], float] | None = None  # node CPU s, node RSS, wall s
        sched0: tuple[int, int, int] | None = None
        steal0: float | None = None
        self_cpu0 = time.process_time()
        while True:
            spin_for(0.02)
            try:
                chunk = os.read(feeder_out, 65536).decode()
            except BlockingIOError:
                chunk = ""
            if chunk:
                pending += chunk
                *new, pending = pending.split("\n")
                for line in new:
                    lines.append(line)
                    if line == "recording":
                        recording_start = (_cpu_seconds(proc.pid), _rss_kb(proc.pid), time.monotonic())
                        sched0 = _main_thread_schedstat(proc.pid)
                        steal0 = _steal_s()
                        self_cpu0 = time.process_time()
                        state["recording"] = True
            if any(line.startswith("done") for line in lines) or feeder.poll() is not None:
                break
            if proc.poll() is not None:
                raise BenchError(f"the node exited during the benchmark: {_stderr(proc)}")
        feed_end = time.monotonic()
        done = [line for line in lines if line.startswith("done")]
        if not done or recording_start is None:
            feeder_err.seek(0)
            raise BenchError(f"the feeder failed: {' '.join(lines)} {feeder_err.read()[-2000:]}")
        cpu0, rss0, wall0 = recording_start
        fed = json.loads(done[0][5:])
        cpu1, rss1 = _cpu_seconds(proc.pid), _rss_kb(proc.pid)
        sched1 = _main_thread_schedstat(proc.pid)
        steal1 = _steal_s()
        wall = time.monotonic() - wall0
        self_cpu = time.process_time() - self_cpu0
        # the node's next report covers the end of the feed (on a loaded machine it can come seconds late: without
        # it the counts of the window would be those of the report before the feed ended)
        deadline = feed_end + 2 * DIAGNOSTICS_PERIOD_S + 10.0
        while state["last_report"] <= feed_end + 0.05 and time.monotonic() < deadline:
            spin_for(0.02)
        state["recording"] = False
        if proc.poll() is not None:
            raise BenchError(f"the node exited during the benchmark: {_stderr(proc)}")
        if not latencies:
            raise BenchError(f"no odometry received from the node: {_stderr(proc)}")
        reports = state["reports"][1:]  # the first report of the window covers the end of the warm-up
        before = state["reports"][0] if state["reports"] else state.get("before", {})
        after = state.get("last_values", {})

        def delta(key: str) -> int:
            return int(after.get(key, 0)) - int(before.get(key, 0))

        lat = np.asarray(latencies, dtype=np.float64)
        result = {
            "duration_s": wall,
            "input_rate_hz": {"imu": imu_rate_hz, "joint_states": joint_rate_hz},
            "inputs_published": fed["imu_published"] + fed["joint_states_published"],
            "feeder": fed,
            "node_latency_stamp_to_publish_ms": _merge_node_reports(reports, "latency"),
            "node_processing_ms": _merge_node_reports(reports, "processing"),
            "node_inputs": {
                "what": "dropped = published by the feeder - received by the node, over the whole feed (warm-up "
                "included); the rest over the reports of the recording window: what the node received, what it "
                "counted as lost from the stamps (the feeder stamps at publish time, so a feeder stalled by "
                "the scheduler shows as a stamp gap: an over-count here) and what it published",
                "imu_dropped": fed["imu_published_total"] - int(after.get("imu_received", 0)),
                "joint_states_dropped": fed["joint_states_published_total"]
                - int(after.get("joint_states_received", 0)),
                "imu_received": delta("imu_received"),
                "joint_states_received": delta("joint_states_received"),
                "imu_lost": delta("imu_lost"),
                "joint_states_lost": delta("joint_states_lost"),
                "odometry_published": delta("odometry_published"),
                "reports": len(reports),
            },
            "odometry_received": int(lat.size),
            "odometry_received_ratio": lat.size / max(1, fed["imu_published"]),
            "latency_stamp_to_reception_us": {
                "what": "input stamp to the reception of the odometry in the benchmark process: an upper bound "
                "(adds the DDS trip back and this process's scheduling on the shared cores)",
                "p50": float(np.percentile(lat, 50) / 1e3),
                "p90": float(np.percentile(lat, 90) / 1e3),
                "p99": float(np.percentile(lat, 99) / 1e3),
                "max": float(np.max(lat) / 1e3),
            },
            "cpu_percent_of_one_core": 100.0 * (cpu1 - cpu0) / wall,
            "cpu_us_per_input": cpu_us_per_input(
                cpu1 - cpu0,
                fed["imu_published"] + fed["joint_states_published"],
                fed["imu_published_total"] - int(after.get("imu_received", 0)),
                fed["joint_states_published_total"] - int(after.get("joint_states_received", 0)),
            ),
            "main_thread_cpu_us_per_input": (
                cpu_us_per_input(
                    (sched1[0] - sched0[0]) / 1e9,
                    fed["imu_published"] + fed["joint_states_published"],
                    fed["imu_published_total"] - int(after.get("imu_received", 0)),
                    fed["joint_states_published_total"] - int(after.get("joint_states_received", 0)),
                )
                if sched0 is not None and sched1 is not None
                else None
            ),
            "main_thread_runqueue_wait_percent": (
                100.0 * (sched1[1] - sched0[1]) / 1e9 / wall if sched0 is not None and sched1 is not None else None
            ),
            "machine_steal_percent": _steal_percent(steal0, steal1, wall),
            "outputs_subscribed": (
                "all" if set(extra) == set(EXTRA_OUTPUTS) else "+".join(("odometry", *extra)) if extra else "odometry"
            ),
            "outputs_received": dict(outputs_received),
            "receiver_cpu_percent_of_one_core": 100.0 * self_cpu / wall,
            "rss_start_kb": rss0.get("VmRSS"),
            "rss_end_kb": rss1.get("VmRSS"),
            "rss_growth_kb": (rss1.get("VmRSS", 0) - rss0.get("VmRSS", 0)),
            "peak_rss_kb": rss1.get("VmHWM"),
            "ros_domain_id": domain,
            "gait": run.settings.gait,
            "node_prefix": " ".join(node_prefix),
            "load_average_1min": os.getloadavg()[0],
        }
    finally:
        # the processes first: a failure in this process's teardown must not leave them running
        if feeder is not None:
            _stop(feeder)
        _stop(proc)
        try:
            executor.destroy()
            node.destroy_node()
        finally:
            context.try_shutdown()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
        err_file.close()
        feeder_err.close()
    return result


def cpu_us_per_input(cpu_s: float, inputs_published_in_window: int, *inputs_dropped: int) -> float | None:
    """The node's CPU per input received, in us: CPU seconds over the recording window / the inputs of that
    window (published by the feeder between its ``recording`` and ``done``, the window of the CPU samples)
    less the inputs dropped (published, never received: counted over the whole feed, so an upper bound for
    the window; negative counts, a report older than the last inputs, count as 0). Not one diagnostics
    report's counts: those cover the node's report period, not the CPU window.

    Returns:
        us of node CPU per input; None when no input of the window was received.
    """
    received = inputs_published_in_window - sum(max(0, d) for d in inputs_dropped)
    return 1e6 * cpu_s / received if received > 0 else None


def _merge_node_reports(reports: list[dict[str, str]], prefix: str) -> dict[str, Any]:
    """Merge the node's per-report percentiles ``<prefix>_p50_ms``/``<prefix>_p99_ms``/``<prefix>_max_ms``.

    Each ``/diagnostics`` report carries the p50, p99 and max of the values since the previous report; the
    merged ``p50_ms`` is the median of the per-report p50s, ``p99_ms`` the max of the per-report p99s (an
    upper bound of the p99 over the whole window) and ``max_ms`` the max. Reports without values
    (``<prefix>_samples`` 0) are skipped.
    """
    p50s, p99s, maxs, n = [], [], [], 0
    for r in reports:
        k = int(r.get(f"{prefix}_samples", "0") or 0)
        p50, p99 = float(r.get(f"{prefix}_p50_ms", "nan")), float(r.get(f"{prefix}_p99_ms", "nan"))
        if k <= 0 or not (np.isfinite(p50) and np.isfinite(p99)):
            continue
        p50s.append(p50)
        p99s.append(p99)
        maxs.append(float(r.get(f"{prefix}_max_ms", "nan")))
        n += k
    out: dict[str, Any] = {
        "merge": "p50 = median of the per-report p50s, p99 = max of the per-report p99s, max = max",
        "reports": len(p50s),
        "samples": n,
    }
    if p50s:
        out["p50_ms"] = float(np.median(p50s))
        out["p99_ms"] = float(np.max(p99s))
        out["max_ms"] = float(np.nanmax(maxs)) if np.isfinite(maxs).any() else float("nan")
    return out


def _stderr(proc: subprocess.Popen) -> str:
    """Exit code and the end of the node's stderr (the node is stopped first when still running)."""
    _stop(proc)
    err_file = getattr(proc, "err_file", None)
    err = ""
    if err_file is not None:
        err_file.seek(0)
        err = err_file.read()
    return f"exit code {proc.returncode}; stderr: {err[-2000:]}"


# ---------------------------------------------------------------------------------------------- main
def run_bench(
    *,
    short: bool = False,
    node: bool = True,
    node_duration_s: float | None = None,
    offline_duration_s: float | None = None,
    cache_dir: Path | None = None,
    node_prefix: list[str] | tuple[str, ...] = (),
    consistency: bool = True,
) -> dict[str, Any]:
    """All sections; returns the JSON document (``consistency``: the Monte Carlo NEES of
    :mod:`robot_state_estimator.tools.consistency`, skipped with ``short``)."""
    from robot_state_estimator.simulation.bag import write_run_bag

    offline_s = offline_duration_s or (1.0 if short else 10.0)
    node_s = node_duration_s or (1.0 if short else 30.0)
    doc: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "short": short,
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
        },
        "robot": "go1 (12 joints, 4 point feet)",
    }
    t = time.perf_counter()
    trot = simulated_run("trot", offline_s)
    stand = simulated_run("stand", 1.0 if short else 5.0)
    doc["simulation_wall_s"] = time.perf_counter() - t
    doc["offline"] = bench_offline(trot, repeats=1 if short else OFFLINE_REPEATS)
    doc["offline_stand"] = bench_offline(stand, repeats=1 if short else OFFLINE_REPEATS)
    doc["step_cost"] = {
        "propagation_add_imu": doc["offline"]["imu_step"],
        "update_4_feet_add_joints": doc["offline_stand"]["joint_step_by_feet_in_contact"].get("4"),
        "update_trot_add_joints": doc["offline"]["joint_step"],
    }
    with tempfile.TemporaryDirectory() as tmp:
        write_run_bag(trot, Path(tmp) / "run")
        run_bag, run_description = Path(tmp) / "run" / "bag", str(Path(tmp) / "run" / "robot_description.urdf")
        doc["replay"] = bench_replay_section(run_bag, run_description, short=short)
        from robot_state_estimator.tools.bench_decode import bench_decode

        doc["decode"] = bench_decode(run_bag, repeats=1 if short else 3)
    from robot_state_estimator.tools.bench_kinematics import bench_kinematics

    doc["kinematics"] = bench_kinematics(short=short)
    if node:
        # the case (1 kHz + 1 kHz), then a rate this machine sustains (500 Hz IMU + 250 Hz joints)
        # and the case with every output subscribed (RViz, a bag recorder: TF, wrenches, contact states)
        # and what each extra output costs on its own (one subscribed at a time, next to the odometry)
        cases: tuple[tuple[str, tuple[int, int], tuple[str, ...]], ...] = (
            ("node", (1000, 1000), ()),
            ("node_500_250", (500, 250), ()),
            ("node_all_outputs", (1000, 1000), EXTRA_OUTPUTS),
            *((f"node_{extra}", (1000, 1000), (extra,)) for extra in EXTRA_OUTPUTS),
        )
        for key, rates, extra in cases:
            if short and key != "node":
                continue
            try:
                doc[key] = bench_node(
                    stand,
                    node_s,
                    imu_rate_hz=rates[0],
                    joint_rate_hz=rates[1],
                    node_prefix=node_prefix,
                    subscribe_outputs=extra,
                )
            except BenchError as exc:
                doc[key] = {"error": str(exc)}
    if consistency and not short:
        from robot_state_estimator.tools.consistency import bench_consistency

        t = time.perf_counter()
        doc["consistency"] = bench_consistency(short=short)
        doc["consistency"]["wall_s"] = time.perf_counter() - t
    ru = resource.getrusage(resource.RUSAGE_SELF)
    doc["memory"] = {
        "bench_process_peak_rss_kb": int(ru.ru_maxrss),
        "offline_rss_growth_kb": doc["offline"]["rss_growth_kb"],
    }
    return doc


def summary_lines(doc: dict[str, Any]) -> list[str]:
    """Human-readable headline numbers."""
    o, s = doc["offline"], doc["step_cost"]
    rep = o.get("repeats")
    spread = f"; median of {rep['n']}: " + ", ".join(f"{f:.1f}x" for f in sorted(rep["realtime_factor"])) if rep else ""
    lines = [
        f"offline core: {o['samples_per_s']:.0f} samples/s = {o['realtime_factor']:.1f}x real time "
        f"(Go1 trot, IMU 1 kHz + joints 1 kHz{spread})",
    ]
    if doc.get("replay"):
        lines += bench_replay_summary(doc["replay"])
    if doc.get("decode"):
        from robot_state_estimator.tools import bench_decode

        lines += bench_decode.summary_lines(doc["decode"])
    if doc.get("kinematics"):
        from robot_state_estimator.tools import bench_kinematics

        lines += bench_kinematics.summary_lines(doc["kinematics"])
    lines += [
        f"add_imu (propagation): median {s['propagation_add_imu']['median_us']:.0f} us, "
        f"p99 {s['propagation_add_imu']['p99_us']:.0f} us",
    ]
    u4 = s.get("update_4_feet_add_joints")
    if u4 and u4.get("n"):
        lines.append(f"add_joints, 4 feet in contact: median {u4['median_us']:.0f} us, p99 {u4['p99_us']:.0f} us")
    for key in ("node", "node_500_250", "node_all_outputs", *(f"node_{extra}" for extra in EXTRA_OUTPUTS)):
        n = doc.get(key)
        if n and "error" not in n:
            lat = n["latency_stamp_to_reception_us"]
            rates = n["input_rate_hz"]
            own = n.get("node_latency_stamp_to_publish_ms", {})
            proc_ms = n.get("node_processing_ms", {})
            inputs = n.get("node_inputs", {})

            def ms(d: dict[str, Any]) -> str:
                if "p50_ms" not in d:
                    return "no values"
                return f"p50 {d['p50_ms']:.2f} ms, p99 {d['p99_ms']:.2f} ms, max {d['max_ms']:.2f} ms"

            dropped = inputs.get("imu_dropped", 0) + inputs.get("joint_states_dropped", 0)
            us = n.get("cpu_us_per_input")
            per_input = "n/a" if us is None else f"{us:.0f}"
            lines.append(
                f"node over DDS ({n['duration_s']:.0f} s, IMU {rates['imu']} Hz + joints {rates['joint_states']} Hz, "
                f"{n.get('outputs_subscribed', 'odometry')} subscribed): "
                f"node latency stamp to publish {ms(own)}; processing (callback to publish) {ms(proc_ms)}; "
                f"stamp to reception (upper bound) p50 {lat['p50'] / 1e3:.2f} ms, p99 {lat['p99'] / 1e3:.2f} ms; "
                f"odometry for {100 * n['odometry_received_ratio']:.1f} % of IMU inputs; {dropped} inputs dropped; "
                f"CPU {n['cpu_percent_of_one_core']:.0f} % of a core, {per_input} us per input "
                f"(main thread waiting for a CPU {n.get('main_thread_runqueue_wait_percent') or 0:.0f} % of the "
                f"time; hypervisor steal {n.get('machine_steal_percent') or 0:.1f} % of the machine's CPU; feeder "
                f"{n['feeder']['cpu_percent_of_one_core']:.0f} %, "
                f"receiver {n['receiver_cpu_percent_of_one_core']:.0f} %); "
                f"RSS {n['rss_end_kb'] / 1024:.0f} MiB (growth {n['rss_growth_kb'] / 1024:+.1f} MiB)"
            )
        elif n:
            lines.append(f"{key}: {n['error']}")
    c = doc.get("consistency")
    if c:
        st = c["settings"]
        lines.append(
            f"consistency, Monte Carlo NEES ({st['n_runs']} Go1 trots of {st['duration_s']:g} s, real errors):"
        )
        lines += [f"  {line}" for line in c["summary"]]
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator bench``."""
    parser.add_argument("--output", default="bench/results", help="folder for the JSON results")
    parser.add_argument("--short", action="store_true", help="seconds instead of minutes (tests)")
    parser.add_argument("--no-node", action="store_true", help="skip the node latency benchmark")
    parser.add_argument(
        "--no-consistency", action="store_true", help="skip the Monte Carlo NEES (10 simulated trots, minutes)"
    )
    parser.add_argument(
        "--node-duration", type=float, default=None, help="s of node feeding; default: 30, a few with --short"
    )
    parser.add_argument(
        "--offline-duration", type=float, default=None, help="s of simulated trot; default: 10, a few with --short"
    )
    parser.add_argument(
        "--node-prefix",
        default="",
        help="command put before the node's (e.g. 'chrt -f 20' for a real-time priority, 'taskset -c 1')",
    )


def run(args: argparse.Namespace) -> int:
    """Run and write ``<output>/bench-<date>.json`` and ``<output>/latest.json``."""
    doc = run_bench(
        short=args.short,
        node=not args.no_node,
        node_duration_s=args.node_duration,
        offline_duration_s=args.offline_duration,
        node_prefix=shlex.split(getattr(args, "node_prefix", "") or ""),
        consistency=not getattr(args, "no_consistency", False),
    )
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    name = "bench-" + dt.datetime.now().strftime("%Y%m%d-%H%M%S") + ("-short" if args.short else "") + ".json"
    text = json.dumps(doc, indent=2)
    (out / name).write_text(text)
    (out / "latest.json").write_text(text)
    for line in summary_lines(doc):
        print(line)
    print(f"wrote {out / name}")
    return 0 if not any("error" in doc.get(k, {}) for k in ("node", "node_500_250")) else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--feeder"]:
        sys.exit(_feeder_main(sys.argv[2:]))
    sys.exit("usage: python -m robot_state_estimator.tools.bench --feeder <pickle> <imu Hz> <joint Hz> <warmup> <n>")
