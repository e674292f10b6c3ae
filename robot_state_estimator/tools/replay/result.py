"""What a replay produced (:class:`ReplayResult`): the estimate log, counts by cause, timings, and the lines that
report the input's problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robot_state_estimator.evaluation.ground_truth import (
    GroundTruth,
)
from robot_state_estimator.evaluation.plot_series import FootSensorSeries
from robot_state_estimator.tools.replay.log import EstimateLog

#: Stream key of ``ReplayDriver.stream_counts`` -> its name in messages.
STREAM_LABELS: dict[str, str] = {
    "imu": "IMU",
    "joints": "joint-state",
    "foot_forces": "foot-force",
    "foot_wrenches": "foot-wrench",
    "schedule": "contact-schedule",
}


@dataclass(frozen=True)
class ReplayCpu:
    """CPU time of a replay's parts (``time.process_time``: this process's CPU, whatever else runs on the machine).

    Attributes:
        read_s: opening the input bag and reading, decoding and ordering its messages, s.
        loop_s: the loop over the messages without the output bag's batches: the adapter rules, the core, the log
            and holding the output messages, s.
        write_s: the output bag: encoding and writing its messages (during the loop and at its close) and closing
            it, s (0 without an output bag).
        encode_s: of ``write_s``, encoding the messages to CDR, s.
        total_s: reading, the loop and closing the output bag (the set-up excluded: description, model), s.
        output_messages: messages written to the output bag.
    """

    read_s: float = 0.0
    loop_s: float = 0.0
    write_s: float = 0.0
    encode_s: float = 0.0
    total_s: float = 0.0
    output_messages: int = 0


@dataclass
class ReplayResult:
    """What a replay produced.

    Attributes:
        log: every published estimate (columns).
        n_inputs: input messages read (IMU + joints + foot sensors).
        input_duration_s: span of the input stamps, s.
        wall_s: wall time of the estimation loop, s: message conversion, the adapter rules, the core, the log and
            the writing of the output bag's messages (reading excluded).
        read_s: wall time to open the input bag and read, deserialize and order its messages, s.
        write_s: wall time spent writing the output bag, s: building, serializing and writing its messages (a
            part of ``wall_s``) and closing the bag after the loop (0 without an output bag).
        total_s: wall time of reading (opening the input included), the loop and closing the output bag, s (the
            set-up is excluded: description, model, estimator).
        input_topics: topic -> message type of every connection of the input bag.
        skipped, events: counts by cause (driver rules; core events).
        lost: samples missing from the recording, detected from the stamp gaps (``io.stream.LOST_KEYS``, only
            the non-zero ones).
        resets: filter resets by the driver.
        gyro_yaw_rate: ``(t_s, gyro z in the base frame rad/s)`` of the IMU input (time alignment).
        input_span_s: first and last input stamp, s (the span unstamped ground truth is spread over).
        metrics: ``metrics.evaluate`` output (+ contacts) when ground truth was given, else None.
        ground_truth: the loaded ground truth (time-aligned when an alignment was searched), or None.
        description: the robot description used.
        steps_back: input topic -> (how many times, largest step in s) its header stamps went back in recording
            order (``io.bags.StampOrdered.steps_back``); replay runs in stamp order, so the messages before and
            after such a step are interleaved.
        bulk_refused: input topic -> why the bulk CDR decoder refused it (rosbags read it instead).
        cpu: the CPU time of the parts (:class:`ReplayCpu`).
        foot_sensors: the foot contact sensors' readings that reached the estimator (``foot_forces``), or None.
    """

    log: EstimateLog
    n_inputs: int
    input_duration_s: float
    wall_s: float
    read_s: float
    skipped: dict[str, int]
    events: dict[str, int]
    resets: int
    gyro_yaw_rate: tuple[np.ndarray, np.ndarray] | None = None
    input_span_s: tuple[float, float] = (0.0, 0.0)
    metrics: dict[str, Any] | None = None
    ground_truth: GroundTruth | None = None
    description: Any = None
    lost: dict[str, int] = field(default_factory=dict)
    write_s: float = 0.0
    total_s: float = 0.0
    input_topics: dict[str, str] = field(default_factory=dict)
    first_notes: dict[str, tuple[str, str]] = field(default_factory=dict)
    stream_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    steps_back: dict[str, tuple[int, float]] = field(default_factory=dict)
    bulk_refused: dict[str, str] = field(default_factory=dict)
    cpu: ReplayCpu = field(default_factory=ReplayCpu)
    foot_sensors: FootSensorSeries | None = None

    def first_message(self, key: str) -> str:
        """The message of the first occurrence of a skip cause or core event ("" when none was noted)."""
        note = self.first_notes.get(key)
        return note[1] if note else ""

    def problem_lines(self) -> list[str]:
        """What to print after the summary line: per skip cause and per core event of level warn or error, its
        count and its first message; a WARNING for each stream of which more than half of the messages were
        skipped; a WARNING for each input topic whose stamps go back in recording order by ``STEP_BACK_WARN_S`` or
        more (a note for smaller steps)."""
        lines = []
        for key, n in sorted(self.skipped.items()):
            lines.append(f"skipped {key}: {n}, first: {self.first_message(key) or '?'}")
        for key, n in sorted(self.events.items()):
            level = self.first_notes.get(key, ("info", ""))[0]
            if level in ("warn", "error"):
                lines.append(f"event {key} ({level}): {n}, first: {self.first_message(key) or '?'}")
        for stream, (received, skipped) in self.stream_counts.items():
            if received and 2 * skipped > received:
                lines.append(
                    f"WARNING: {skipped} of {received} {STREAM_LABELS[stream]} messages skipped: the estimate "
                    "runs without most of this input (see the causes above)"
                )
        for topic, (n, largest_s) in sorted(self.steps_back.items()):
            if largest_s < STEP_BACK_WARN_S:  # e.g. two publishers on one topic: put in order, nothing lost
                lines.append(
                    f"note: the header stamps of {topic} go back {n} time(s) in recording order by at most "
                    f"{largest_s * 1e3:.1f} ms; replayed in stamp order"
                )
                continue
            lines.append(
                f"WARNING: the header stamps of {topic} go back {n} time(s) in recording order (largest step "
                f"{largest_s:.3f} s): replay runs in stamp order, so messages recorded before and after are "
                "interleaved; a recording that restarts or loops its clock should be cut there"
            )
        for topic, why in sorted(self.bulk_refused.items()):
            lines.append(f"note: {topic} was read by rosbags, not the bulk CDR decoder: {why}")
        return lines

    @property
    def realtime_factor(self) -> float:
        """Input duration / estimation loop wall time (``wall_s``: reading excluded)."""
        return self.input_duration_s / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def realtime_factor_cpu(self) -> float:
        """Input duration / CPU time of reading, the loop and closing the output bag (``cpu.total_s``)."""
        return self.input_duration_s / self.cpu.total_s if self.cpu.total_s > 0 else float("inf")

    @property
    def realtime_factor_total(self) -> float:
        """Input duration / ``total_s`` (reading, the loop and closing the output bag)."""
        return self.input_duration_s / self.total_s if self.total_s > 0 else float("inf")

    def summary(self) -> dict[str, Any]:
        """JSON-serialisable run summary."""
        return {
            "n_inputs": self.n_inputs,
            "n_estimates": len(self.log),
            "input_duration_s": self.input_duration_s,
            "estimation_wall_s": self.wall_s,
            "read_wall_s": self.read_s,
            "write_wall_s": self.write_s,
            "total_wall_s": self.total_s,
            "samples_per_s": self.n_inputs / self.wall_s if self.wall_s > 0 else None,
            "realtime_factor": self.realtime_factor,
            "realtime_factor_total": self.realtime_factor_total,
            "cpu_s": {
                "read": self.cpu.read_s,
                "loop": self.cpu.loop_s,
                "write": self.cpu.write_s,
                "encode": self.cpu.encode_s,
                "total": self.cpu.total_s,
            },
            "realtime_factor_cpu": self.realtime_factor_cpu,
            "output_messages": self.cpu.output_messages,
            "skipped": self.skipped,
            "lost": self.lost,
            "events": self.events,
            "first_messages": {k: m for k, (_level, m) in self.first_notes.items()},
            "streams": {k: {"received": r, "skipped": n} for k, (r, n) in self.stream_counts.items() if r},
            "resets": self.resets,
            "stamp_steps_back": {t: {"count": n, "largest_s": x} for t, (n, x) in self.steps_back.items()},
        }


#: a step back of a topic's header stamps (in recording order) from this size on is a WARNING (a restarted or
#: looping clock), below it a note (jitter between publishers of one topic), s
STEP_BACK_WARN_S = 0.1
