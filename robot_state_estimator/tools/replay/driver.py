"""The replay loop: a bag's input messages in stamp order, fed through the node's adapter rules
(:class:`ReplayDriver` over ``io.stream.EstimatorStream``) to the core, each estimate to the log and the output
bag."""

from __future__ import annotations

import functools
import gc
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    FootForceSample,
    FootWrenchSample,
    ImuSample,
    JointSample,
)
from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.evaluation.plot_series import FootSensorSeries
from robot_state_estimator.tools.replay.errors import ReplayError
from robot_state_estimator.tools.replay.inputs import ReplayInputs, bulk_converters, plan_inputs, with_bag_topic_names
from robot_state_estimator.tools.replay.log import EstimateLog
from robot_state_estimator.tools.replay.options import NODE_DEFAULTS, ReplayOptions
from robot_state_estimator.tools.replay.output_bag import OutputBag
from robot_state_estimator.tools.replay.result import STREAM_LABELS, ReplayCpu, ReplayResult

if TYPE_CHECKING:  # imported where used: estimation loads numba, description pinocchio
    from robot_state_estimator.description import RobotDescription
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.estimation.settings import EstimatorSettings

#: Core events (``estimation.pipeline``) that mean the core dropped the sample it was given (a sample the adapter
#: passed on); with the adapter's own skips they make a stream's skipped count.
CORE_SKIP_EVENTS: frozenset[str] = frozenset(
    {
        "imu_shape",
        "imu_nan",
        "imu_dt_nonpositive",
        "imu_out_of_order",
        "joint_shape",
        "joint_nan",
        "duplicate_joint",
        "unknown_joint",
        "missing_joint",
        "joint_dt_nonpositive",
        "joint_out_of_order",
        "foot_force_shape",
        "foot_force_nan",
        "unknown_foot",
        "foot_wrench_shape",
        "foot_wrench_nan",
        "foot_wrench_unknown_frame",
        "foot_wrench_out_of_order",
        "schedule_shape",
        "schedule_duplicate_feet",
        "schedule_unknown_feet",
        "schedule_missing_feet",
    }
)


class ReplayDriver:
    """Feeds ROS messages (rosbags or rclpy) to a ``RobotStateEstimator`` through the node's adapter rules.

    The rules themselves are ``io.stream.EstimatorStream``'s (the node uses the same class); this driver adds
    what only replay needs: the gyroscope signal for time alignment and a callback per estimate. Unexpected
    exceptions (of the message conversion or of the core) propagate (``strict`` stream): offline, a failure
    should stop the run rather than be counted.

    Args:
        estimator: the core ``RobotStateEstimator``.
        description: its ``RobotDescription`` (joint names, IMU frame).
        settings: its ``EstimatorSettings``.
        node_params: ``NODE_DEFAULTS``-like dict (``imu_frame_id``, ``max_time_gap_s``, ``odometry_rate_hz``,
            ``contacts_rate_hz``).
        on_estimate: called with every estimate the core returns, whether the node publishes its odometry and
            TF, and whether it publishes its wrenches and contact states.
    """

    def __init__(
        self,
        estimator: RobotStateEstimator,
        description: RobotDescription,
        settings: EstimatorSettings,
        node_params: dict[str, Any],
        on_estimate: Callable[[Estimate, bool, bool], None],
    ) -> None:
        from robot_state_estimator.io.stream import AdapterSettings, EstimatorStream

        self.est = estimator
        self.settings = settings
        self.params = {**NODE_DEFAULTS, **node_params}
        self.stream = EstimatorStream(
            estimator, description, settings, AdapterSettings.from_params(self.params), strict=True
        )
        self.on_estimate = on_estimate
        #: gyroscope z in the base frame per accepted IMU sample (time alignment with ground truth)
        self.R_base_imu = np.asarray(description.imu.R_base_imu, dtype=float)
        self._z_of_base_in_imu = self.R_base_imu[2]  # the base z axis in the IMU frame (a row of R_base_imu)
        self.gyro_stamp_ns: list[int] = []
        self.gyro_z_base: list[float] = []
        #: cause or event key -> (level, message) of its first occurrence
        self.first_notes: dict[str, tuple[str, str]] = {}
        #: stream ("imu", "joints", "foot_forces") -> [messages received, messages skipped]
        self.stream_counts: dict[str, list[int]] = {k: [0, 0] for k in STREAM_LABELS}
        #: stream -> cause or event key -> [messages of the stream skipped with it, its first message there]
        self.skip_causes: dict[str, dict[str, list[Any]]] = {k: {} for k in STREAM_LABELS}
        #: the foot-sensor samples that reached the core: feet (of the first), stamps, values in that order
        self.foot_sensor_feet: tuple[str, ...] = ()
        self.foot_sensor_stamp_ns: list[int] = []
        self.foot_sensor_values: list[Any] = []

    def _count(self, stream: str, out: Any) -> None:
        """Count one input of ``stream``; note the first message of each cause; skipped: the adapter refused
        it, or the core dropped it (``CORE_SKIP_EVENTS``)."""
        counts = self.stream_counts[stream]
        counts[0] += 1
        notes = out.notes
        if not notes:
            if out.sample is None:
                counts[1] += 1
            return
        skipped = out.sample is None
        first = self.first_notes
        for note in notes:
            if note.key not in first:
                first[note.key] = (note.level, note.message)
            if note.key in CORE_SKIP_EVENTS:
                skipped = True
        if skipped:
            counts[1] += 1
            causes = self.skip_causes[stream]
            for note in notes:
                causes.setdefault(note.key, [0, note.message])[0] += 1

    def main_skip_cause(self, stream: str) -> tuple[str, str]:
        """(key, first message on ``stream``) of the cause noted with most skipped messages of ``stream``, or
        ("?", "?") when none was noted."""
        causes = self.skip_causes[stream]
        if not causes:
            return "?", "?"
        key = max(causes, key=lambda k: causes[k][0])
        return key, str(causes[key][1])

    @property
    def skipped(self) -> Counter[str]:
        """Cause -> skipped inputs and resets by the adapter rules (``stamp_gap``, ``estimate_not_finite``)."""
        return self.stream.rejected

    @property
    def events(self) -> Counter[str]:
        """Core event key -> count."""
        return self.stream.events

    @property
    def resets(self) -> int:
        """Filter resets requested by the adapter rules."""
        return self.stream.resets

    @property
    def n_estimates(self) -> int:
        """Finite estimates the core returned."""
        return self.stream.n_estimates

    def _emit(self, out: Any) -> None:
        if out.estimate is not None:
            self.on_estimate(out.estimate, out.odometry, out.contacts)

    def imu(self, msg: Any) -> None:
        """An ``sensor_msgs/Imu`` message, or the ``ImuSample`` made of it (``io.bulk_samples``)."""
        out = self.stream.on_imu(msg) if msg.__class__ is ImuSample else self.stream.on_imu_msg(msg)
        sample = out.sample
        if sample is not None:
            self.gyro_stamp_ns.append(sample.stamp_ns)
            self.gyro_z_base.append(float(self._z_of_base_in_imu @ sample.angular_velocity))
        self._count("imu", out)
        self._emit(out)

    def joints(self, msg: Any) -> None:
        """A ``sensor_msgs/JointState`` message, or its ``JointSample``."""
        out = self.stream.on_joints(msg) if msg.__class__ is JointSample else self.stream.on_joints_msg(msg)
        self._count("joints", out)
        self._emit(out)

    def foot_forces(self, msg: Any) -> None:
        """Foot sensors as ``sensor_msgs/JointState`` (name = feet, effort = values), or their ``FootForceSample``."""
        stream = self.stream
        out = stream.on_foot_forces(msg) if msg.__class__ is FootForceSample else stream.on_foot_forces_msg(msg)
        if out.sample is not None:
            self._record_foot_sensors(out.sample)
        self._count("foot_forces", out)
        self._emit(out)

    def _record_foot_sensors(self, sample: FootForceSample) -> None:
        """Keep a reading for the plots, in the feet order of the first (a sample naming other feet is left out)."""
        if not self.foot_sensor_feet:
            self.foot_sensor_feet = tuple(sample.feet)
        feet = self.foot_sensor_feet
        if tuple(sample.feet) == feet:
            values = np.asarray(sample.values, dtype=float)
        elif sorted(sample.feet) == sorted(feet):
            order = [list(sample.feet).index(f) for f in feet]
            values = np.asarray(sample.values, dtype=float)[order]
        else:
            return
        self.foot_sensor_stamp_ns.append(sample.stamp_ns)
        self.foot_sensor_values.append(values)

    def foot_wrench(self, msg: Any, foot: str) -> None:
        """A ``geometry_msgs/WrenchStamped`` of foot ``foot``, or its ``FootWrenchSample``."""
        stream = self.stream
        out = stream.on_foot_wrench(msg) if msg.__class__ is FootWrenchSample else stream.on_foot_wrench_msg(msg, foot)
        self._count("foot_wrenches", out)
        self._emit(out)

    def contact_schedule(self, msg: Any) -> None:
        """A contact schedule (``sensor_msgs/JointState``: name = feet, position = 1 stance / 0 swing), or its
        ``ContactScheduleSample``."""
        stream = self.stream
        is_sample = msg.__class__ is ContactScheduleSample
        out = stream.on_contact_schedule(msg) if is_sample else stream.on_contact_schedule_msg(msg)
        self._count("schedule", out)
        self._emit(out)


def _progress(total: int, enabled: bool | None) -> Any:
    if enabled is None:
        enabled = sys.stderr.isatty() and total > 20000
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="msg", unit_scale=True, desc="replay", leave=False)


# ------------------------------------------------------------------------------------------------ run
def replay(
    input_path: str | Path,
    *,
    description: str,
    settings: Any,
    options: ReplayOptions | None = None,
    output_bag: str | Path | None = None,
    on_estimate: Callable[[Estimate, bool, bool], None] | None = None,
) -> ReplayResult:
    """Run the estimator over a bag.

    Args:
        input_path: rosbag2 directory/file or ROS 1 bag.
        description: description file or XML (``load_description`` input).
        settings: ``EstimatorSettings``.
        options: topics, node parameters, output topics and compression.
        output_bag: mcap bag directory to create with the node's outputs (``options.output_topics``; None: do not
            write one, the fastest when only the log, metrics or a TUM file are wanted).
        on_estimate: extra callback per estimate (and whether its odometry is published).

    Returns:
        the :class:`ReplayResult`, with the wall times of reading (``read_s``), of the loop (``wall_s``), of
        writing the output bag (``write_s``) and of all of it (``total_s``).

    Raises:
        ReplayError: unreadable input, missing topics, an output bag that exists already or unknown output
            topics; a run that fails after making ``output_bag`` removes it again.
    """
    from robot_state_estimator.io import bags

    clock, cpu = time.perf_counter, time.process_time
    t_start, cpu_start = clock(), cpu()
    # the output bag is made by this call (OutputBag refuses an existing path): removed again when the replay
    # fails, so that the same command can run again once the problem is fixed (kept on Ctrl-C)
    made_output = output_bag is not None and not Path(output_bag).exists()
    try:
        with bags.BagReader(input_path) as bag:  # opened once: its topics, then its messages
            open_s, open_cpu_s = clock() - t_start, cpu() - cpu_start
            return _replay_bag(
                bag,
                input_path,
                description=description,
                settings=settings,
                opts=options or ReplayOptions(),
                output_bag=output_bag,
                on_estimate=on_estimate,
                open_s=open_s,
                open_cpu_s=open_cpu_s,
            )
    except Exception as exc:
        if made_output and output_bag is not None and Path(output_bag).is_dir():
            shutil.rmtree(output_bag, ignore_errors=True)
        if isinstance(exc, bags.BagError):
            raise ReplayError(str(exc)) from exc
        raise


def _open_output_bag(output_bag: str | Path | None, inputs: ReplayInputs, opts: ReplayOptions) -> OutputBag | None:
    """The output bag at ``output_bag`` with the node's frames (``base_frame`` "" = the description's base link),
    or None when none is asked for.

    Raises:
        ReplayError: unknown output topics; ``io.bags.BagError``: the path exists or a bad compression.
    """
    if output_bag is None:
        return None
    params = inputs.params
    return OutputBag(
        output_bag,
        odom_frame=params["odom_frame"],
        base_frame=params["base_frame"] or inputs.desc.base_link,
        tf_child_frame=params["tf_child_frame"],
        groups=opts.output_topics,
        compression=opts.output_compression,
    )


def _read_messages(bag: Any, inputs: ReplayInputs, opts: ReplayOptions, out: OutputBag | None) -> Any:
    """The input messages in stamp order (``io.bags.StampOrdered``; core samples straight from the decoded arrays
    with ``opts.bulk_decode``); the output bag is closed when reading fails."""
    converters = bulk_converters(opts, inputs.topics, inputs.wrench_topics) if opts.bulk_decode else None
    try:
        return bag.stamp_ordered(inputs.topics, bulk=opts.bulk_decode, samples=converters)
    except BaseException:
        if out is not None:
            out.close()
        raise


def _refuse_empty_inputs(msgs: Any, input_path: str | Path, opts: ReplayOptions, out: OutputBag | None) -> None:
    """Refuse a bag without IMU or joint messages (the output bag closed first).

    Raises:
        ReplayError: naming the empty topics and their options.
    """
    counts = Counter(msgs.topic_index)
    empty = [t for t in (opts.imu_topic, opts.joints_topic) if not counts[msgs.topics.index(t)]]
    if empty:
        if out is not None:
            out.close()
        options = ", ".join(f"{t} (--{'imu' if t == opts.imu_topic else 'joints'}-topic)" for t in empty)
        raise ReplayError(f"{input_path} has no messages on {options}")


def _handlers(
    driver: ReplayDriver, opts: ReplayOptions, inputs: ReplayInputs, topics: list[str]
) -> list[Callable[[Any], None]]:
    """The driver's entry point for each of ``topics`` (``io.bags.StampOrdered.topics``), in that order."""
    by_topic: dict[str, Callable[[Any], None]] = {
        opts.imu_topic: driver.imu,
        opts.joints_topic: driver.joints,
        opts.foot_forces_topic: driver.foot_forces,
        opts.contact_schedule_topic: driver.contact_schedule,
    }
    for foot, topic in inputs.wrench_topics.items():
        by_topic[topic] = functools.partial(driver.foot_wrench, foot=foot)
    return [by_topic[t] for t in topics]


def _replay_bag(
    bag: Any,
    input_path: str | Path,
    *,
    description: str,
    settings: Any,
    opts: ReplayOptions,
    output_bag: str | Path | None,
    on_estimate: Callable[[Estimate, bool, bool], None] | None,
    open_s: float,
    open_cpu_s: float,
) -> ReplayResult:
    """:func:`replay` on an opened ``io.bags.BagReader`` (``open_s``, ``open_cpu_s``: the wall and CPU s it took to
    open): the inputs planned, the estimator and the output bag made, the messages read and fed, the result
    gathered with the wall and CPU times of each part."""
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.io.stream import output_frame_problem

    present = bag.topics
    opts = with_bag_topic_names(opts, present)  # "imu/data" reads "/imu/data", and the other way round
    inputs = plan_inputs(present, input_path, description=description, settings=settings, opts=opts)
    desc, params = inputs.desc, inputs.params
    est = RobotStateEstimator.from_description(desc, settings)
    problem = output_frame_problem(desc, params)  # as the node: B's names in the outputs, no other robot frame
    if problem:
        raise ReplayError(problem)
    log = EstimateLog()
    out = _open_output_bag(output_bag, inputs, opts)
    write_s = 0.0
    clock = time.perf_counter

    def sink(e: Estimate, odometry: bool, contacts: bool) -> None:
        nonlocal write_s
        log.append(e, odometry, contacts)
        if out is not None:
            t = clock()
            out.write(e, odometry, contacts, driver.stream.forces_estimated)
            write_s += clock() - t
        if on_estimate is not None:
            on_estimate(e, odometry, contacts)

    driver = ReplayDriver(est, desc, settings, params, sink)
    cpu = time.process_time
    t_start = clock()
    cpu_start = cpu()
    msgs = _read_messages(bag, inputs, opts, out)
    read_s = open_s + clock() - t_start
    cpu_read = cpu()
    _refuse_empty_inputs(msgs, input_path, opts, out)
    try:
        wall = _feed(msgs, _handlers(driver, opts, inputs, msgs.topics), opts.progress)
    finally:
        cpu_loop = cpu()
        written_in_loop = out.cpu_s if out is not None else 0.0
        if out is not None:
            t = clock()
            out.close()
            write_s += clock() - t
    total_s = open_s + clock() - t_start
    cpu_end = cpu()
    cpu_times = ReplayCpu(
        read_s=open_cpu_s + cpu_read - cpu_start,
        loop_s=cpu_loop - cpu_read - written_in_loop,
        write_s=out.cpu_s if out is not None else 0.0,
        encode_s=out.cpu_encode_s if out is not None else 0.0,
        total_s=open_cpu_s + cpu_end - cpu_start,
        output_messages=out.n_messages if out is not None else 0,
    )
    _check_inputs_reached(driver, opts)
    return _replay_result(
        driver, msgs, log, desc, present, wall_s=wall, read_s=read_s, write_s=write_s, total_s=total_s, cpu=cpu_times
    )


def _replay_result(
    driver: ReplayDriver,
    msgs: Any,
    log: EstimateLog,
    desc: RobotDescription,
    present: dict[str, str],
    *,
    wall_s: float,
    read_s: float,
    write_s: float,
    total_s: float,
    cpu: ReplayCpu,
) -> ReplayResult:
    """The :class:`ReplayResult` of a finished loop: the driver's counts and notes, the input's span (s, from the
    messages' stamps in ns), the timings (s)."""
    stamps = msgs.stamp_ns
    span = (stamps[-1] - stamps[0]) / NS_PER_S if stamps else 0.0
    return ReplayResult(
        log=log,
        n_inputs=len(msgs),
        input_duration_s=span,
        wall_s=wall_s,
        read_s=read_s,
        write_s=write_s,
        total_s=total_s,
        skipped=dict(driver.skipped),
        lost={k: n for k, n in driver.stream.lost.items() if n},
        events=dict(driver.events),
        resets=driver.resets,
        gyro_yaw_rate=_gyro_signal(driver),
        input_span_s=(stamps[0] / NS_PER_S, stamps[-1] / NS_PER_S) if stamps else (0.0, 0.0),
        description=desc,
        input_topics=dict(present),
        first_notes=dict(driver.first_notes),
        stream_counts={k: (r, n) for k, (r, n) in driver.stream_counts.items()},
        steps_back={t: (n, ns / NS_PER_S) for t, (n, ns) in msgs.steps_back.items()},
        bulk_refused=dict(msgs.bulk_refused),
        cpu=cpu,
        foot_sensors=_foot_sensor_series(driver),
    )


def _foot_sensor_series(driver: ReplayDriver) -> FootSensorSeries | None:
    """The foot-sensor readings the driver kept, or None when none reached the core."""
    if not driver.foot_sensor_stamp_ns:
        return None
    t = np.asarray(driver.foot_sensor_stamp_ns, dtype=np.int64)
    t_s = (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S
    values = np.asarray(driver.foot_sensor_values, dtype=float).reshape(len(t), len(driver.foot_sensor_feet))
    return FootSensorSeries(driver.foot_sensor_feet, t_s, values)


def _feed(msgs: Any, handlers: list[Callable[[Any], None]], progress: bool | None) -> float:
    """Hand every message of ``msgs`` (``io.bags.StampOrdered``) to the handler of its topic, in order; returns the
    wall time of the loop, s."""
    clock = time.perf_counter
    bar = _progress(len(msgs), progress)
    # The messages read stay alive until the end: keep the garbage collector from walking them again at every
    # collection of the loop (gc.freeze: they are left out of collections; unfrozen after the loop unless the
    # process had frozen objects of its own before). They are freed by reference counting as usual.
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        t0 = clock()
        if bar is None:
            for i, msg in zip(msgs.topic_index, msgs.msgs, strict=True):
                handlers[i](msg)
        else:
            for k, (i, msg) in enumerate(zip(msgs.topic_index, msgs.msgs, strict=True)):
                handlers[i](msg)
                if k % 1000 == 999:
                    bar.update(1000)
        return clock() - t0
    finally:
        if not frozen_before:
            gc.unfreeze()
        if bar is not None:
            bar.close()


def _check_inputs_reached(driver: ReplayDriver, opts: ReplayOptions) -> None:
    """Refuse a run in which no joint sample, or no IMU sample, reached the estimator (every one skipped).

    Raises:
        ReplayError: naming the stream, how many were skipped and the main cause with its first message.
    """
    received, skipped = driver.stream_counts["joints"]
    if received and skipped == received:
        key, first = driver.main_skip_cause("joints")
        imu_received, imu_skipped = driver.stream_counts["imu"]
        if imu_received and imu_skipped == imu_received:
            imu_key, imu_first = driver.main_skip_cause("imu")
            outcome = (
                f"and all {imu_received} IMU samples of {opts.imu_topic} were skipped too ({imu_key}: {imu_first})"
            )
        else:
            outcome = "the run would be IMU-only"
        raise ReplayError(
            f"no joint sample of {opts.joints_topic} reached the estimator: all {received} skipped ({key}: {first}); "
            + outcome
        )
    imu_received, imu_skipped = driver.stream_counts["imu"]
    if imu_received and imu_skipped == imu_received:
        key, first = driver.main_skip_cause("imu")
        raise ReplayError(
            f"no IMU sample of {opts.imu_topic} reached the estimator: all {imu_received} skipped ({key}: {first})"
        )


def _gyro_signal(driver: ReplayDriver) -> tuple[np.ndarray, np.ndarray] | None:
    if len(driver.gyro_stamp_ns) < 2:
        return None
    t = np.asarray(driver.gyro_stamp_ns, dtype=np.int64)
    z = np.asarray(driver.gyro_z_base, dtype=float)
    keep = np.concatenate([np.diff(t) > 0, [True]])
    t, z = t[keep], z[keep]
    if np.any(np.diff(t) <= 0):  # stamps went backwards (reset): no single clock to align on
        return None
    return (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S, z
