"""Diagnostics of the node on ``/diagnostics`` (``diagnostic_msgs/DiagnosticArray``), with stable keys.

Three statuses, named ``<node name>: <part>`` as diagnostic_updater names its tasks, hardware_id = the
robot (model name of the description):

- ``<node>: inputs``: ``imu_rate_hz``, ``joint_states_rate_hz``, ``foot_forces_rate_hz``,
  ``foot_wrench_rate_hz.<foot>`` (with ``use_foot_wrenches``), ``contact_schedule_rate_hz``,
  ``odometry_rate_hz``, ``imu_received``, ``joint_states_received``, ``odometry_published``,
  ``rejected_total`` and one ``rejected.<cause>`` per cause in ``REJECT_KEYS`` (always present, 0 when
  nothing was rejected, plus any other cause the core reported), ``lost_total`` and ``imu_lost``,
  ``joint_states_lost``, ``foot_forces_lost`` (samples that never reached the node, detected from the
  stamps; not in ``rejected_total``), ``latency_p50_ms``, ``latency_p99_ms``, ``latency_max_ms``,
  ``latency_samples`` (time from the input stamp to the odometry publish, ``time.time_ns() - stamp``, over the
  odometry published since the previous report; only while ``use_sim_time`` is false and the difference is
  within [0, 10 s], i.e. when the stamps are wall-clock time; ``nan`` and 0 samples otherwise) and
  ``processing_p50_ms``, ``processing_p99_ms``, ``processing_max_ms``, ``processing_samples`` (steady time
  from the entry of the input's callback to the odometry publish, meaningful for any stamps). Level WARN when
  samples were lost or rejected since the previous report, no IMU arrived while the description is loaded, or
  IMU messages arrive but another input stream stopped (``stopped_inputs``: joint states, foot forces); ERROR
  without a description.
- ``<node>: filter``: ``status``, ``resets``, ``last_reset_reason``, ``last_stamp_s`` (the stamp of the last
  estimate, seconds with 9 decimals: exact to the nanosecond, also for wall-clock stamps),
  ``position_std_m``, ``velocity_std_m_s``, ``attitude_std_rad`` (square roots of the largest diagonal
  element of each covariance block), ``covariance_ok``, ``accel_bias``, ``gyro_bias``. Level WARN when the
  status is not ``ok`` or a covariance was not finite/positive definite, OK otherwise.
- ``<node>: contacts``: ``feet_in_contact``, ``no_contact_s`` (estimate time since the last estimate with a
  foot in contact, 0 while one is), ``contact_source`` (of the last joint step: ``torque``, ``foot_wrench``,
  ``foot_sensor``, ``schedule``, ``kinematic``), ``forces_estimated`` (whether the foot forces of the last joint
  step were estimated: false without joint efforts (or foot wrenches), when ``contact_wrench/<foot>`` is not
  published), ``foot_wrenches_stale`` (the feet whose wrench topic stopped, comma-separated; WARN),
  ``schedule_disagreements_total``, then per foot ``<foot>.in_contact``, ``<foot>.force_z_n``, ``<foot>.nis``,
  ``<foot>.updates_rejected``, ``<foot>.schedule_disagreements`` (episodes of the schedule and the force
  disagreeing for ``contact.schedule_disagreement_s``), ``<foot>.slip_episodes`` (episodes of its leg-update NIS
  staying high, ``estimation.slip``), then ``feet_slipping`` (the feet slipping now, comma-separated; WARN). Level
  WARN when a foot slips, when the contact source degraded
  (``contact_source_problem``, ``io.stream``: e.g. the efforts disappeared and the filter fell back to kinematic
  contacts, or the configured source has no data), when foot wrench topics stopped, or when no foot has been in
  contact for more than ``NO_CONTACT_WARN_S`` of estimate time (the filter runs on the IMU alone:
  ``no_contact_message``), OK otherwise.

Rates are computed over the interval between two reports (``diagnostics_period`` parameter).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_state_estimator.common.samples import Estimate
from robot_state_estimator.common.time import format_stamp_s
from robot_state_estimator.io.message_shapes import DiagnosticArrayMsg, DiagnosticStatusMsg, KeyValueMsg, TimeMsg
from robot_state_estimator.io.message_types import MessageTypes
from robot_state_estimator.io.sample_rules import (
    FOOT_FORCE_BAD_MESSAGE,
    FOOT_WRENCH_BAD_MESSAGE,
    FOOT_WRENCH_NOT_FINITE,
    IMU_BAD_MESSAGE,
    IMU_NOT_FINITE,
    JOINT_BAD_LENGTHS,
    JOINT_BAD_MESSAGE,
    JOINT_NOT_FINITE,
    SCHEDULE_BAD_MESSAGE,
)
from robot_state_estimator.io.stamp_loss import LOST_KEYS
from robot_state_estimator.io.stream_causes import (
    CORE_ERROR,
    ESTIMATE_NOT_FINITE,
    IMU_FRAME_ID,
    JOINT_EFFORT_MISSING,
    JOINT_MISSING_NAMES,
    JOINT_UNKNOWN_NAMES,
    STAMP_FUTURE,
    STAMP_GAP,
    STAMP_PAST,
    STAMP_ZERO,
)

if TYPE_CHECKING:
    from robot_state_estimator.estimation.pipeline import RobotStateEstimator
    from robot_state_estimator.io.stream import EstimatorStream

OK = b"\x00"
WARN = b"\x01"
ERROR = b"\x02"

#: The node's own causes of rejected samples: no description loaded yet, a description that does not load.
NO_DESCRIPTION = "no_description"
DESCRIPTION_INVALID = "description_invalid"
#: The core's event when a stream's time went backwards (a looping bag): the core resets, the sample goes on.
STAMP_BACKWARDS = "stamp_backwards"

#: Causes of rejected samples, each always present in diagnostics: the node's, the message rules'
#: (``io.sample_rules.MESSAGE_CAUSES``), the stream's (``io.stream.STREAM_CAUSES``) and the core's time going back,
#: by input (``test/ros/test_components.py`` checks that none of the first three is left out).
REJECT_KEYS: tuple[str, ...] = (
    NO_DESCRIPTION,
    DESCRIPTION_INVALID,
    IMU_NOT_FINITE,
    IMU_FRAME_ID,
    IMU_BAD_MESSAGE,
    JOINT_BAD_LENGTHS,
    JOINT_NOT_FINITE,
    JOINT_MISSING_NAMES,
    JOINT_UNKNOWN_NAMES,
    JOINT_BAD_MESSAGE,
    JOINT_EFFORT_MISSING,
    FOOT_FORCE_BAD_MESSAGE,
    FOOT_WRENCH_NOT_FINITE,
    FOOT_WRENCH_BAD_MESSAGE,
    SCHEDULE_BAD_MESSAGE,
    STAMP_ZERO,
    STAMP_BACKWARDS,
    STAMP_GAP,
    STAMP_FUTURE,
    STAMP_PAST,
    ESTIMATE_NOT_FINITE,
    CORE_ERROR,
)


#: s of estimate time: no foot in contact for longer than this makes the contacts status WARN (the filter then runs
#: on the IMU alone and its position and velocity drift). Longer than a flight phase of a running gait (0.1-0.3 s)
#: or a jump; a robot that is lifted or carried, or a contact detector that never fires, passes it.
NO_CONTACT_WARN_S = 1.0

#: s of estimate time without a joint sample applied (every one refused, e.g. a joint name missing, or none arriving)
#: that makes the filter and contacts statuses WARN: the estimate then runs on the IMU alone and its position and
#: velocity drift, and the contacts shown are old. 50 joint periods at 100 Hz.
NO_LEG_UPDATE_WARN_S = 0.5


def no_contact_message(no_contact_s: float) -> str:
    """The contacts status message (and the node's ``no_contact`` warning) for ``no_contact_s`` s without any foot
    in contact."""
    return (
        f"no foot in contact for {no_contact_s:.1f} s of estimate time: the filter runs on the IMU alone (its "
        "position and velocity drift); unless the robot is lifted, check that joint_states carries efforts "
        "(contact.source auto uses the torques when efforts are present, else the kinematic detector), "
        "contact.source, and the thresholds (contact.on_threshold/off_threshold with contact.threshold_mode, "
        "contact.sensor_*_threshold for foot_forces, contact.kinematic_*_height_m)"
    )


@dataclass
class _RateCounter:
    count: int = 0
    window: int = 0

    def tick(self) -> None:
        self.count += 1
        self.window += 1

    def rate(self, dt_s: float) -> float:
        r = self.window / dt_s if dt_s > 0 else 0.0
        self.window = 0
        return r


#: Capacity of the latency rings: the values of one report period at 1 kHz odometry for up to ~8 s; with a
#: longer period or a higher rate the percentiles are over the most recent ``LATENCY_RING_SIZE`` values.
LATENCY_RING_SIZE = 8192


def _percentile(sorted_values: list[int], q: float) -> float:
    """The ``q`` percentile of sorted values, interpolated linearly (``numpy.percentile``'s default)."""
    h = (len(sorted_values) - 1) * q / 100.0
    lo = int(h)
    if lo + 1 >= len(sorted_values):
        return float(sorted_values[-1])
    a, b = sorted_values[lo], sorted_values[lo + 1]
    return a + (h - lo) * (b - a)


class LatencyRing:
    """Fixed-size ring of the recent latencies (ns): ``add`` stores into a preallocated list (no growth)."""

    __slots__ = ("_buf", "_i", "_n", "_size")

    def __init__(self, size: int = LATENCY_RING_SIZE) -> None:
        self._buf = [0] * size
        self._size = size
        self._i = 0  # next slot
        self._n = 0  # values added since the last ``take``

    def add(self, value_ns: int) -> None:
        i = self._i
        self._buf[i] = value_ns
        i += 1
        self._i = 0 if i == self._size else i
        self._n += 1

    @property
    def pending(self) -> int:
        """Values added since the last ``take``."""
        return self._n

    def take(self) -> tuple[float, float, float, int]:
        """``(p50_ms, p99_ms, max_ms, n)`` of the values added since the last call (the most recent ``size`` of
        them when more); ``(nan, nan, nan, 0)`` without values. Resets the count."""
        n = min(self._n, self._size)
        self._n = 0
        if n == 0:
            return float("nan"), float("nan"), float("nan"), 0
        i = self._i
        if n <= i:
            values = self._buf[i - n : i]
        else:
            values = self._buf[i - n :] + self._buf[:i]
        values.sort()  # a copy (slices): the percentiles as numpy's "linear" method, without its overhead
        return _percentile(values, 50) / 1e6, _percentile(values, 99) / 1e6, values[-1] / 1e6, n


@dataclass
class DiagnosticsState:
    """What the node tells the diagnostics: counters, the last estimate, reset history."""

    imu: _RateCounter = field(default_factory=_RateCounter)
    joints: _RateCounter = field(default_factory=_RateCounter)
    foot_forces: _RateCounter = field(default_factory=_RateCounter)
    odometry: _RateCounter = field(default_factory=_RateCounter)
    resets: int = 0
    last_reset_reason: str = ""
    last_estimate: Estimate | None = None
    # the last estimate with feet (a joint update): IMU-only estimates carry none, so with the IMU faster than
    # the joints the last estimate alone would make the contacts status flicker
    last_feet_estimate: Estimate | None = None
    covariance_ok: bool = True
    foot_rejected_updates: Counter[str] = field(default_factory=Counter)
    has_description: bool = False
    lost: Counter[str] = field(default_factory=Counter)  # the stream's lost-sample counts (io.stream.LOST_KEYS)
    # stamp (ns) of the first estimate with feet of the current stretch without any foot in contact; None while a
    # foot is in contact (or before any estimate with feet)
    no_contact_since_ns: int | None = None
    stopped_inputs: str = ""  # the node's warning while IMU messages arrive but another input stream does not
    contact_source_problem: str = ""  # why it is worse than before or than configured ("" when it is not)
    forces_estimated: bool = True  # whether the foot forces of the last joint step were estimated
    latency: LatencyRing = field(default_factory=LatencyRing)  # input stamp -> odometry publish (wall clock)
    processing: LatencyRing = field(default_factory=LatencyRing)  # callback entry -> odometry publish
    # foot wrench topics (use_foot_wrenches): foot -> receive counter; the contact schedule's (contact.source schedule)
    foot_wrenches: dict[str, _RateCounter] = field(default_factory=dict)
    schedule: _RateCounter = field(default_factory=_RateCounter)
    contact_source: str = ""  # the contact source of the last joint step (the core's contact_source)
    stale_foot_wrenches: tuple[str, ...] = ()  # feet whose wrench was not fresh at the last joint step (the core)
    stopped_foot_wrenches: tuple[str, ...] = ()  # feet whose wrench topic stopped while joints arrive (the node)
    schedule_disagreements: dict[str, int] = field(default_factory=dict)  # foot -> episodes (the core)
    slip_episodes: dict[str, int] = field(default_factory=dict)  # foot -> slip episodes (the core's slip report)
    feet_slipping: tuple[str, ...] = ()  # the feet slipping at the last diagnostics report (the core)
    # the estimate stamp from which estimates came without any joint sample applied (since the start, a reset or time
    # going back), followed at each report (read_core): None while joint samples are applied
    imu_only_since_ns: int | None = None

    def note_feet(self, est: Estimate) -> None:
        """After an estimate with feet (a joint update): count the stance feet whose update was refused, and
        follow the stretches without any foot in contact (``no_contact_since_ns``). Reads the estimate's
        ``stance_summary`` (the per-foot states are made only for a report, from ``last_feet_estimate``)."""
        touching, rejected = est.stance_summary()
        for name in rejected:
            self.foot_rejected_updates[name] += 1
        if touching:
            self.no_contact_since_ns = None
        else:  # the start of a stretch without contact (again after time went back: a reset)
            since = self.no_contact_since_ns
            if since is None or est.stamp_ns < since:
                self.no_contact_since_ns = est.stamp_ns
        self.last_feet_estimate = est

    def read_core(self, est: RobotStateEstimator | None, stream: EstimatorStream | None) -> None:
        """Before a report: the state of the core's contact sources and slip report (``est``, a
        ``RobotStateEstimator`` or None) and the contact source's degradation the stream follows (``stream``, an
        ``io.stream.EstimatorStream`` or None), read here rather than per sample; the covariance check of the
        last estimate."""
        if est is not None:
            self.contact_source = str(getattr(est, "contact_source", ""))
            self.stale_foot_wrenches = tuple(getattr(est, "stale_foot_wrenches", ()))
            schedule = getattr(est, "schedule", None)
            if schedule is not None:
                self.schedule_disagreements = dict(zip(est.foot_frames, schedule.disagreements.tolist()))
            slip = getattr(est, "slip", None)
            if slip is not None:
                self.slip_episodes = dict(zip(est.foot_frames, slip.episodes))
                self.feet_slipping = slip.slipping
        if stream is not None:
            self.contact_source_problem = stream.contact_source_problem
            self.forces_estimated = stream.forces_estimated
        last, feet = self.last_estimate, self.last_feet_estimate
        if last is not None:
            self.covariance_ok = covariances_ok(last)
            if feet is None or feet.stamp_ns > last.stamp_ns:  # none yet, or only before time went back
                since = self.imu_only_since_ns
                if since is None or last.stamp_ns < since:
                    self.imu_only_since_ns = last.stamp_ns
            else:
                self.imu_only_since_ns = None


def _covariance_spd(cov: np.ndarray) -> bool:
    if not np.all(np.isfinite(cov)):
        return False
    try:
        np.linalg.cholesky(0.5 * (cov + cov.T))
    except np.linalg.LinAlgError:
        return False
    return True


def covariances_ok(estimate: Estimate) -> bool:
    """True when both 6x6 covariances of ``estimate`` are finite and symmetric positive definite."""
    return _covariance_spd(np.asarray(estimate.pose_covariance)) and _covariance_spd(
        np.asarray(estimate.twist_covariance)
    )


class DiagnosticsBuilder:
    """Turns ``DiagnosticsState`` plus reject counts into a ``DiagnosticArray`` (keys documented above).

    Args:
        types: message-class namespace (``message_types.TYPES``).
        node_name: the node's name (status names are ``<node_name>: <part>``).
    """

    def __init__(self, types: MessageTypes, node_name: str) -> None:
        self._types = types
        self._node_name = node_name
        self._last_report = time.monotonic()
        self._last_reject_total = 0
        self._last_lost_total = 0
        self.hardware_id = ""

    def _kv(self, key: str, value: Any) -> KeyValueMsg:
        if isinstance(value, float):
            text = f"{value:.6g}"
        elif isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, np.ndarray | list | tuple):
            text = " ".join(f"{float(v):.6g}" for v in value)
        else:
            text = str(value)
        return self._types.KeyValue(key=key, value=text)

    def _status(self, part: str, level: bytes, message: str, values: list[tuple[str, Any]]) -> DiagnosticStatusMsg:
        return self._types.DiagnosticStatus(
            level=level,
            name=f"{self._node_name}: {part}",
            message=message,
            hardware_id=self.hardware_id,
            values=[self._kv(k, v) for k, v in values],
        )

    def build(self, state: DiagnosticsState, reject_counts: Counter[str], stamp: TimeMsg) -> DiagnosticArrayMsg:
        """One ``DiagnosticArray`` stamped ``stamp`` (a ``builtin_interfaces/Time``)."""
        now = time.monotonic()
        dt_s = now - self._last_report
        self._last_report = now
        return self._types.DiagnosticArray(
            header=self._types.Header(stamp=stamp),
            status=[
                self._inputs(state, reject_counts, dt_s),
                self._filter(state),
                self._contacts(state),
            ],
        )

    def _inputs(self, state: DiagnosticsState, reject_counts: Counter[str], dt_s: float) -> DiagnosticStatusMsg:
        imu_rate = state.imu.rate(dt_s)
        values: list[tuple[str, Any]] = [
            ("imu_rate_hz", imu_rate),
            ("joint_states_rate_hz", state.joints.rate(dt_s)),
            ("foot_forces_rate_hz", state.foot_forces.rate(dt_s)),
            *[(f"foot_wrench_rate_hz.{foot}", c.rate(dt_s)) for foot, c in state.foot_wrenches.items()],
            ("contact_schedule_rate_hz", state.schedule.rate(dt_s)),
            ("odometry_rate_hz", state.odometry.rate(dt_s)),
            ("imu_received", state.imu.count),
            ("joint_states_received", state.joints.count),
            ("odometry_published", state.odometry.count),
        ]
        total = sum(reject_counts.values())
        values.append(("rejected_total", total))
        keys = list(REJECT_KEYS) + sorted(k for k in reject_counts if k not in REJECT_KEYS)
        values += [(f"rejected.{k}", reject_counts.get(k, 0)) for k in keys]
        new_rejects = total - self._last_reject_total
        self._last_reject_total = total
        lost_total = sum(state.lost.values())
        values.append(("lost_total", lost_total))
        values += [(k, state.lost.get(k, 0)) for k in LOST_KEYS]
        lat50, lat99, lat_max, lat_n = state.latency.take()
        proc50, proc99, proc_max, proc_n = state.processing.take()
        values += [
            ("latency_p50_ms", lat50),
            ("latency_p99_ms", lat99),
            ("latency_max_ms", lat_max),
            ("latency_samples", lat_n),
            ("processing_p50_ms", proc50),
            ("processing_p99_ms", proc99),
            ("processing_max_ms", proc_max),
            ("processing_samples", proc_n),
        ]
        new_lost = lost_total - self._last_lost_total
        self._last_lost_total = lost_total
        if not state.has_description:
            level, message = ERROR, "waiting for the robot description"
        elif state.stopped_inputs:  # an input stream stopped (the node's check): before the per-report counts
            level, message = WARN, state.stopped_inputs
        elif new_lost > 0:
            level, message = (
                WARN,
                (
                    f"{new_lost} input samples lost since the last report, from gaps in the stamps (a queue "
                    "overflowing: raise qos_depth, lower the input rate, or set odometry_rate_hz/contacts_rate_hz; "
                    "or the sender drops samples, or its stamps jitter)"
                ),
            )
            if new_rejects > 0:
                message += f"; {new_rejects} samples rejected"
        elif new_rejects > 0:
            level, message = WARN, f"{new_rejects} samples rejected since the last report"
        elif imu_rate == 0.0:
            level, message = WARN, "no IMU messages"
        else:
            level, message = OK, "receiving"
        return self._status("inputs", level, message, values)

    def _filter(self, state: DiagnosticsState) -> DiagnosticStatusMsg:
        est = state.last_estimate
        values: list[tuple[str, Any]] = [
            ("status", est.status if est else "no estimate"),
            ("resets", state.resets),
            ("last_reset_reason", state.last_reset_reason),
            ("covariance_ok", state.covariance_ok),
        ]
        if est is None:
            return self._status("filter", WARN, "no estimate yet", values)
        P = np.asarray(est.pose_covariance)
        T = np.asarray(est.twist_covariance)

        def std(block: np.ndarray) -> float:
            d = np.diag(block)
            return math.sqrt(float(np.max(d))) if np.all(np.isfinite(d)) and np.all(d >= 0) else float("nan")

        values += [
            ("last_stamp_s", format_stamp_s(est.stamp_ns)),
            ("position_std_m", std(P[:3, :3])),
            ("attitude_std_rad", std(P[3:, 3:])),
            ("velocity_std_m_s", std(T[:3, :3])),
            ("accel_bias", np.asarray(est.accel_bias)),
            ("gyro_bias", np.asarray(est.gyro_bias)),
        ]
        age = leg_update_age_s(state)
        values.append(("last_leg_update_age_s", float("nan") if age is None else age))
        if not state.covariance_ok:
            level, message = WARN, "covariance not finite or not positive definite"
        elif est.status != "ok":
            level, message = WARN, est.status
        elif age is not None and age > NO_LEG_UPDATE_WARN_S:
            level = WARN
            message = f"no joint sample applied for {age:.1f} s: the estimate runs on the IMU alone (position and "
            message += "velocity drift; see the inputs status)"
        else:
            level, message = OK, "ok"
        return self._status("filter", level, message, values)

    def _contacts(self, state: DiagnosticsState) -> DiagnosticStatusMsg:
        est = state.last_feet_estimate
        feet = est.feet if est is not None else ()
        no_contact = no_contact_s(state)
        stale = sorted(set(state.stale_foot_wrenches) | set(state.stopped_foot_wrenches))
        values: list[tuple[str, Any]] = [
            ("feet_in_contact", sum(1 for f in feet if f.in_contact)),
            ("no_contact_s", no_contact),
            ("contact_source", state.contact_source or "none"),
            ("forces_estimated", bool(state.forces_estimated)),
            ("foot_wrenches_stale", ",".join(stale)),
            ("schedule_disagreements_total", sum(state.schedule_disagreements.values())),
        ]
        for foot in feet:
            values += [
                (f"{foot.name}.in_contact", bool(foot.in_contact)),
                (f"{foot.name}.force_z_n", float(np.asarray(foot.force_in_world)[2])),
                (f"{foot.name}.nis", float(foot.nis)),
                (f"{foot.name}.updates_rejected", state.foot_rejected_updates.get(foot.name, 0)),
                (f"{foot.name}.schedule_disagreements", state.schedule_disagreements.get(foot.name, 0)),
                (f"{foot.name}.slip_episodes", state.slip_episodes.get(foot.name, 0)),
            ]
        values.append(("feet_slipping", ",".join(state.feet_slipping)))
        if not feet:
            return self._status("contacts", OK, "no contact information yet", values)
        age = leg_update_age_s(state)
        if age is not None and age > NO_LEG_UPDATE_WARN_S:
            message = f"contacts from {age:.1f} s ago: no joint sample applied since"
            return self._status("contacts", WARN, message, values)
        if no_contact > NO_CONTACT_WARN_S:
            message = no_contact_message(no_contact)
            if state.contact_source_problem:
                message += f"; {state.contact_source_problem}"
            return self._status("contacts", WARN, message, values)
        if state.contact_source_problem:
            return self._status("contacts", WARN, state.contact_source_problem, values)
        if state.feet_slipping:
            slipping = ", ".join(state.feet_slipping)
            return self._status("contacts", WARN, f"slipping (leg-update NIS high): {slipping}", values)
        if stale:
            return self._status(
                "contacts", WARN, f"foot wrench topics of {stale} stopped: contacts from {state.contact_source}", values
            )
        return self._status("contacts", OK, f"{values[0][1]} of {len(feet)} feet in contact", values)


def leg_update_age_s(state: DiagnosticsState) -> float | None:
    """s of estimate time from the last estimate with feet (a joint sample applied) to the last estimate; without
    one (none yet, or only before time went back) from ``imu_only_since_ns``; None before any estimate or when
    neither is known."""
    est, feet = state.last_estimate, state.last_feet_estimate
    if est is None:
        return None
    if feet is not None and feet.stamp_ns <= est.stamp_ns:
        return (est.stamp_ns - feet.stamp_ns) * 1e-9
    since = state.imu_only_since_ns
    if since is not None and since <= est.stamp_ns:
        return (est.stamp_ns - since) * 1e-9
    return None


def no_contact_s(state: DiagnosticsState) -> float:
    """s of estimate time from the first estimate of the current stretch without any foot in contact to the last
    estimate with feet; 0.0 while a foot is in contact or before any estimate with feet."""
    est, since = state.last_feet_estimate, state.no_contact_since_ns
    if est is None or since is None:
        return 0.0
    return max(0, est.stamp_ns - since) * 1e-9
