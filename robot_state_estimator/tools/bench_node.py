"""``bench``'s node sections (``node``, ``node_500_250``, ``node_all_outputs``, ``node_tf``, ``node_wrenches``,
``node_contacts``): the node as its own process, fed over loopback DDS by the feeder (``tools/bench_feeder.py``, a
process too), measured from this one (:func:`bench_node`), and their summary lines (:func:`summary_line`)."""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from robot_state_estimator.tools.bench_common import (
    BenchError,
    cpu_seconds,
    main_thread_schedstat,
    rss_kb,
    steal_percent,
    steal_s,
)
from robot_state_estimator.tools.bench_feeder import feeder_messages

if TYPE_CHECKING:  # imported where used: rclpy may be missing (BenchError), the simulator loads pinocchio
    from rclpy.subscription import Subscription

    from robot_state_estimator.simulation.run import SimulatedRun

#: The node's outputs besides the odometry, each published only while subscribed: ``/tf``, ``contact_wrench/<foot>``
#: (one per foot), ``contact_states`` (``bench_node``'s ``subscribe_outputs``; a ``node_<output>`` case each).
EXTRA_OUTPUTS: tuple[str, ...] = ("tf", "wrenches", "contacts")
#: s, the node's diagnostics period during the node benchmark (each report gives the percentiles of its period)
DIAGNOSTICS_PERIOD_S = 1.0
#: The JSON keys of the node cases, in the order ``bench`` runs them.
NODE_CASES: tuple[str, ...] = ("node", "node_500_250", "node_all_outputs", *(f"node_{x}" for x in EXTRA_OUTPUTS))


def _cdr_stamp_ns(data: bytes) -> int:
    """``header.stamp`` of a CDR-serialized message that starts with a ``std_msgs/Header`` (little endian)."""
    sec: int
    nanosec: int
    sec, nanosec = struct.unpack_from("<iI", data, 4)
    return sec * 1_000_000_000 + nanosec


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _stderr(proc: subprocess.Popen[str], err_file: IO[str]) -> str:
    """Exit code and the end of the node's stderr (the node is stopped first when still running)."""
    _stop(proc)
    err_file.seek(0)
    return f"exit code {proc.returncode}; stderr: {err_file.read()[-2000:]}"


class _Receiver:
    """This process's side: a node receiving the odometry (raw bytes: only the stamp is read), the node's
    ``/diagnostics`` (its ``inputs`` status) and the extra outputs subscribed (raw bytes, counted), spun by
    ``ros.spin.LeanExecutor``."""

    def __init__(self, domain: int, extra: tuple[str, ...], feet: Sequence[str]) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import WrenchStamped
        from nav_msgs.msg import Odometry
        from rclpy.qos import QoSProfile

        from robot_state_estimator.ros.message_types import TFMessage
        from robot_state_estimator.ros.qos import output_qos, tf_qos
        from robot_state_estimator.ros.spin import LeanExecutor

        self.recording = False
        #: ns, input stamp to the reception of its odometry, while recording
        self.latencies: list[int] = []
        #: the ``inputs`` status values of the reports received while recording
        self.reports: list[dict[str, str]] = []
        self.before: dict[str, str] = {}  # the last report before the recording
        self.last_values: dict[str, str] = {}
        self.last_report = 0.0  # monotonic s
        self.outputs_received: dict[str, int] = {}
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("rse_bench_receiver", context=self.context)
        try:
            # raw subscriptions (the callbacks get bytes), which rclpy's types do not model: typed Subscription[Any]
            self.odom_sub: Subscription[Any] = self.node.create_subscription(
                Odometry, "odometry", self._on_odom, output_qos(1000), raw=True
            )
            self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, QoSProfile(depth=100))
            topics: list[tuple[Any, str, QoSProfile]] = []  # (rclpy message class, topic, QoS)
            if "tf" in extra:
                topics.append((TFMessage, "/tf", tf_qos()))
            if "contacts" in extra:
                topics.append((DiagnosticArray, "contact_states", output_qos(1000)))
            if "wrenches" in extra:
                topics += [(WrenchStamped, f"contact_wrench/{foot}", output_qos(1000)) for foot in feet]
            extra_subs: list[Subscription[Any]] = [
                self.node.create_subscription(msg_type, topic, self._counter(topic), qos, raw=True)
                for msg_type, topic, qos in topics
            ]
            self.executor = LeanExecutor(self.node, [self.odom_sub, *extra_subs])
        except BaseException:
            self.node.destroy_node()
            self.context.try_shutdown()
            raise

    def _on_odom(self, data: bytes) -> None:
        if self.recording:
            self.latencies.append(time.time_ns() - _cdr_stamp_ns(data))

    def _on_diagnostics(self, msg: Any) -> None:
        for status in msg.status:
            if status.name.endswith(": inputs") and "robot_state_estimator" in status.name:
                values = {kv.key: kv.value for kv in status.values}
                self.last_report = time.monotonic()
                self.last_values = values
                if self.recording:
                    self.reports.append(values)
                else:
                    self.before = values

    def _counter(self, topic: str) -> Callable[[bytes], None]:
        """The callback counting the messages of ``topic`` received while recording (the CPU window's)."""
        self.outputs_received[topic] = 0

        def count(_: bytes) -> None:
            if self.recording:
                self.outputs_received[topic] += 1

        return count

    def spin_for(self, seconds: float) -> None:
        """Run the callbacks for ``seconds`` s."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def node_started(self) -> bool:
        """Whether the node under test publishes ``/diagnostics`` and the odometry."""
        return bool(self.node.count_publishers("/diagnostics") >= 1 and self.odom_sub.get_publisher_count() >= 1)

    def destroy(self) -> None:
        try:
            self.executor.destroy()
            self.node.destroy_node()
        finally:
            self.context.try_shutdown()


@dataclass(frozen=True)
class _Window:
    """What was read over the recording window (from the feeder's ``recording`` line to its ``done``): the
    feeder's counts (``fed``), the node's CPU s, RSS and main-thread schedstat at both ends, the wall time and this
    process's CPU s over it, the hypervisor's steal."""

    fed: dict[str, Any]
    cpu_s: float
    rss0: dict[str, int]
    rss1: dict[str, int]
    sched0: tuple[int, int, int] | None
    sched1: tuple[int, int, int] | None
    steal_percent: float | None
    wall_s: float
    self_cpu_s: float


def _record(
    proc: subprocess.Popen[str], err_file: IO[str], feeder: subprocess.Popen[bytes], feeder_err: IO[str], rx: _Receiver
) -> _Window:
    """Spin the receiver while the feeder feeds; read the node's CPU, RSS and schedstat when the feeder says
    ``recording`` and when it is ``done``; then wait for the node's report covering the end of the feed.

    Raises:
        BenchError: the node exited, the feeder failed, or no odometry came back.
    """
    assert feeder.stdout is not None  # stdout=PIPE
    feeder_out = feeder.stdout.fileno()
    os.set_blocking(feeder_out, False)
    lines: list[str] = []
    pending = ""
    recording_start: tuple[float, dict[str, int], float] | None = None  # node CPU s, node RSS, wall s
    sched0: tuple[int, int, int] | None = None
    steal0: float | None = None
    self_cpu0 = time.process_time()
    while True:
        rx.spin_for(0.02)
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
                    recording_start = (cpu_seconds(proc.pid), rss_kb(proc.pid), time.monotonic())
                    sched0 = main_thread_schedstat(proc.pid)
                    steal0 = steal_s()
                    self_cpu0 = time.process_time()
                    rx.recording = True
        if any(line.startswith("done") for line in lines) or feeder.poll() is not None:
            break
        if proc.poll() is not None:
            raise BenchError(f"the node exited during the benchmark: {_stderr(proc, err_file)}")
    feed_end = time.monotonic()
    done = [line for line in lines if line.startswith("done")]
    if not done or recording_start is None:
        feeder_err.seek(0)
        raise BenchError(f"the feeder failed: {' '.join(lines)} {feeder_err.read()[-2000:]}")
    cpu0, rss0, wall0 = recording_start
    fed = json.loads(done[0][5:])
    cpu1, rss1 = cpu_seconds(proc.pid), rss_kb(proc.pid)
    sched1 = main_thread_schedstat(proc.pid)
    steal1 = steal_s()
    wall = time.monotonic() - wall0
    self_cpu = time.process_time() - self_cpu0
    # the node's next report covers the end of the feed (on a loaded machine it can come seconds late: without
    # it the counts of the window would be those of the report before the feed ended)
    deadline = feed_end + 2 * DIAGNOSTICS_PERIOD_S + 10.0
    while rx.last_report <= feed_end + 0.05 and time.monotonic() < deadline:
        rx.spin_for(0.02)
    rx.recording = False
    if proc.poll() is not None:
        raise BenchError(f"the node exited during the benchmark: {_stderr(proc, err_file)}")
    if not rx.latencies:
        raise BenchError(f"no odometry received from the node: {_stderr(proc, err_file)}")
    return _Window(fed, cpu1 - cpu0, rss0, rss1, sched0, sched1, steal_percent(steal0, steal1, wall), wall, self_cpu)


def window_reports(
    in_window: list[dict[str, str]], before_window: dict[str, str]
) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The node's ``inputs`` reports that describe the recording window, and the report its counts start from.

    Args:
        in_window: the reports received while recording, the last one after the feed's end (``_record``).
        before_window: the last report before the recording ({} if none).

    Returns:
        ``(reports, before)``: with two reports or more, all but the first (which covers the end of the warm-up)
        and the first; with one, that one and ``before_window``: a window shorter than the report period
        (``--short``: 1 s) on a loaded machine can hold only the report that came after the feed, whose counts
        against itself would read 0 (they then include the end of the warm-up); with none, none and
        ``before_window``.
    """
    if len(in_window) >= 2:
        return list(in_window[1:]), in_window[0]
    return list(in_window), before_window


def _node_inputs(fed: dict[str, Any], before: dict[str, str], after: dict[str, str], reports: int) -> dict[str, Any]:
    """The ``node_inputs`` entry: the feeder's counts against the node's (its reports' ``inputs`` values)."""

    def delta(key: str) -> int:
        return int(after.get(key, 0)) - int(before.get(key, 0))

    return {
        "what": "dropped = published by the feeder - received by the node, over the whole feed (warm-up "
        "included); the rest over the reports of the recording window: what the node received, what it "
        "counted as lost from the stamps (the feeder stamps at publish time, so a feeder stalled by "
        "the scheduler shows as a stamp gap: an over-count here) and what it published",
        "imu_dropped": fed["imu_published_total"] - int(after.get("imu_received", 0)),
        "joint_states_dropped": fed["joint_states_published_total"] - int(after.get("joint_states_received", 0)),
        "imu_received": delta("imu_received"),
        "joint_states_received": delta("joint_states_received"),
        "imu_lost": delta("imu_lost"),
        "joint_states_lost": delta("joint_states_lost"),
        "odometry_published": delta("odometry_published"),
        "reports": reports,
    }


def _node_result(w: _Window, rx: _Receiver, *, rates_hz: tuple[int, int], extra: tuple[str, ...]) -> dict[str, Any]:
    """The case's JSON entry from the window's readings and what the receiver got (:func:`bench_node` adds
    ``ros_domain_id``, ``gait``, ``node_prefix`` and ``load_average_1min`` at the end)."""
    fed = w.fed
    reports, before = window_reports(rx.reports, rx.before)
    after = rx.last_values
    dropped = (
        fed["imu_published_total"] - int(after.get("imu_received", 0)),
        fed["joint_states_published_total"] - int(after.get("joint_states_received", 0)),
    )
    published = fed["imu_published"] + fed["joint_states_published"]
    lat = np.asarray(rx.latencies, dtype=np.float64)
    s0, s1 = w.sched0, w.sched1
    return {
        "duration_s": w.wall_s,
        "input_rate_hz": {"imu": rates_hz[0], "joint_states": rates_hz[1]},
        "inputs_published": published,
        "feeder": fed,
        "node_latency_stamp_to_publish_ms": _merge_node_reports(reports, "latency"),
        "node_processing_ms": _merge_node_reports(reports, "processing"),
        "node_inputs": _node_inputs(fed, before, after, len(reports)),
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
        "cpu_percent_of_one_core": 100.0 * w.cpu_s / w.wall_s,
        "cpu_us_per_input": cpu_us_per_input(w.cpu_s, published, *dropped),
        "main_thread_cpu_us_per_input": (
            cpu_us_per_input((s1[0] - s0[0]) / 1e9, published, *dropped) if s0 is not None and s1 is not None else None
        ),
        "main_thread_runqueue_wait_percent": (
            100.0 * (s1[1] - s0[1]) / 1e9 / w.wall_s if s0 is not None and s1 is not None else None
        ),
        "machine_steal_percent": w.steal_percent,
        "outputs_subscribed": (
            "all" if set(extra) == set(EXTRA_OUTPUTS) else "+".join(("odometry", *extra)) if extra else "odometry"
        ),
        "outputs_received": dict(rx.outputs_received),
        "receiver_cpu_percent_of_one_core": 100.0 * w.self_cpu_s / w.wall_s,
        "rss_start_kb": w.rss0.get("VmRSS"),
        "rss_end_kb": w.rss1.get("VmRSS"),
        "rss_growth_kb": (w.rss1.get("VmRSS", 0) - w.rss0.get("VmRSS", 0)),
        "peak_rss_kb": w.rss1.get("VmHWM"),
    }


def bench_node(
    run: SimulatedRun,
    duration_s: float,
    *,
    imu_rate_hz: int = 1000,
    joint_rate_hz: int = 1000,
    domain_id: int | None = None,
    startup_timeout_s: float = 30.0,
    node_prefix: list[str] | tuple[str, ...] = (),
    subscribe_all_outputs: bool = False,
    subscribe_outputs: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Latency, CPU, memory and dropped input of the node process fed IMU + joint states over loopback DDS.

    Three processes share the machine: the node (``robot_state_estimator.ros.node``, as ``estimator_node``
    runs it), the feeder (``tools.bench_feeder.feed``, its own process: pre-serialized messages, wall-clock stamps)
    and this one, which receives the odometry (raw bytes: only the stamp is read) and the node's ``/diagnostics``
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
        BenchError: rclpy missing, bad rates, unknown outputs, the node or the feeder did not start or published
            nothing.
    """
    if imu_rate_hz % joint_rate_hz:
        raise BenchError(f"imu rate {imu_rate_hz} Hz is not a multiple of the joint rate {joint_rate_hz} Hz")
    extra = tuple(EXTRA_OUTPUTS) if subscribe_all_outputs else tuple(subscribe_outputs)
    unknown = sorted(set(extra) - set(EXTRA_OUTPUTS))
    if unknown:
        raise BenchError(f"unknown outputs {unknown}; the extra outputs are {list(EXTRA_OUTPUTS)}")
    # 215..232: valid Fast DDS domains outside the Linux ephemeral port range and the tests' 1..200
    domain = domain_id if domain_id is not None else 215 + os.getpid() % 18
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    try:
        import rclpy  # noqa: F401  # the receiver's, checked before anything starts
    except ImportError as exc:
        raise BenchError(f"rclpy is not importable: {exc}") from exc

    warmup = 300 if duration_s < 5 else 1000  # the filter initializes on the first 100 IMU samples
    total = warmup + int(duration_s * imu_rate_hz)
    tmp = Path(tempfile.mkdtemp(prefix="rse_bench_"))
    desc_path = tmp / "robot_description.urdf"
    desc_path.write_text(run.description_xml)
    imu_bytes, joint_bytes = feeder_messages(run, 2000)
    (tmp / "feed.pickle").write_bytes(pickle.dumps((imu_bytes, joint_bytes)))
    node_cmd = [*node_prefix, sys.executable, "-m", "robot_state_estimator.ros.node", "--ros-args"]
    node_cmd += ["-p", f"robot:={run.robot}", "-p", f"description_file:={desc_path}"]
    node_cmd += ["-p", f"diagnostics_period_s:={DIAGNOSTICS_PERIOD_S}", "--log-level", "warn"]
    feeder_cmd = [sys.executable, "-m", "robot_state_estimator.tools.bench_feeder", str(tmp / "feed.pickle")]
    feeder_cmd += [str(imu_rate_hz), str(joint_rate_hz), str(warmup), str(total)]
    # stderr to files, not pipes: a full pipe would block the process
    err_file = tempfile.TemporaryFile("w+")
    feeder_err = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(node_cmd, env=env, stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    feeder: subprocess.Popen[bytes] | None = None
    rx: _Receiver | None = None
    try:
        rx = _Receiver(domain, extra, run.feet)
        # the node first: the feeder waits for its subscriptions, then prints "ready"
        t_wait = time.monotonic() + startup_timeout_s
        while not rx.node_started():
            if proc.poll() is not None or time.monotonic() > t_wait:
                raise BenchError(f"the node did not start within {startup_timeout_s} s: {_stderr(proc, err_file)}")
            rx.spin_for(0.05)
        feeder = subprocess.Popen(feeder_cmd, env=env, stdout=subprocess.PIPE, stderr=feeder_err)
        window = _record(proc, err_file, feeder, feeder_err, rx)
        return {
            **_node_result(window, rx, rates_hz=(imu_rate_hz, joint_rate_hz), extra=extra),
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
        if rx is not None:
            rx.destroy()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
        err_file.close()
        feeder_err.close()


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


def output_costs(doc: dict[str, Any]) -> dict[str, Any]:
    """The ``node_output_costs`` entry: what each extra output (``EXTRA_OUTPUTS``, and all of them) adds to the node's
    CPU per input over the odometry alone, from the node cases of ``doc`` (``node`` and ``node_<output>``, the same
    rates, run one after the other); per message of that output too (the messages the benchmark received over the
    CPU window). Empty when the ``node`` case is missing or failed; a case that failed is left out.

    Each case is a separate run of the node (15-30 s), so a difference carries the run-to-run spread of the CPU per
    input (5-15 % on this machine from one minute to the next).
    """
    base = doc.get("node") or {}
    base_us = base.get("cpu_us_per_input")
    if base_us is None:
        return {}
    out: dict[str, Any] = {
        "what": "node CPU per input with the output subscribed beside the odometry less the odometry alone (node), "
        "and that per message of the output received over the CPU window",
        "odometry_only_us_per_input": base_us,
    }
    for extra in (*EXTRA_OUTPUTS, "all_outputs"):
        case = doc.get(f"node_{extra}") or {}
        us = case.get("cpu_us_per_input")
        if us is None:
            continue
        inputs = case["inputs_published"] - sum(
            max(0, case["node_inputs"][k]) for k in ("imu_dropped", "joint_states_dropped")
        )
        messages = sum(case.get("outputs_received", {}).values())
        per_input = messages / inputs if inputs > 0 else 0.0
        out[extra] = {
            "us_per_input": us - base_us,
            "messages_per_input": per_input,
            "us_per_message": (us - base_us) / per_input if per_input > 0 else None,
        }
    return out


def output_costs_line(costs: dict[str, Any]) -> str | None:
    """The summary line of :func:`output_costs` (None without any case)."""
    names = {"tf": "/tf", "wrenches": "contact_wrench/<foot>", "contacts": "contact_states", "all_outputs": "all"}
    parts = []
    for key, name in names.items():
        c = costs.get(key)
        if c is None:
            continue
        per_message = c["us_per_message"]
        each = f", {per_message:.0f} us a message" if per_message is not None else ""
        parts.append(f"{name} {c['us_per_input']:+.0f} us ({c['messages_per_input']:.2f} messages per input{each})")
    if not parts:
        return None
    return (
        f"node, each extra output subscribed beside the odometry (CPU per input over the odometry alone, "
        f"{costs['odometry_only_us_per_input']:.0f} us): " + "; ".join(parts)
    )


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


def summary_line(key: str, n: dict[str, Any]) -> str:
    """The summary line of the node case ``key`` (its JSON entry ``n``, or ``{"error": ...}``)."""
    if "error" in n:
        return f"{key}: {n['error']}"
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
    return (
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


__all__ = [
    "DIAGNOSTICS_PERIOD_S",
    "EXTRA_OUTPUTS",
    "NODE_CASES",
    "bench_node",
    "cpu_us_per_input",
    "output_costs",
    "output_costs_line",
    "summary_line",
]
