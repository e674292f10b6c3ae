"""Inputs that stop arriving, and a robot that has no foot on the ground for long: checked off the message path.

The node calls :meth:`InputWatch.check` twice a second on the steady clock. It reads the receive counters of
``DiagnosticsState`` (the callbacks only tick them) and warns, throttled per key and not counted as rejected
samples:

- ``no_imu``: joint states arrive but no IMU message has for ``NO_IMU_AFTER_S``;
- ``no_joint_states`` / ``no_foot_forces``: IMU messages arrive but no joint state (or, when subscribed,
  foot-force) message has for ``NO_IMU_AFTER_S``; the inputs status of ``/diagnostics`` is WARN meanwhile
  (``DiagnosticsState.stopped_inputs``);
- ``foot_wrench_stopped``: a foot wrench topic has had no message for ``FOOT_WRENCH_STOPPED_S`` while joint
  states arrive (``DiagnosticsState.stopped_foot_wrenches``, diagnostics ``foot_wrenches_stale``);
- ``no_contact``: joint updates arrive and no foot has been in contact for more than
  ``diagnostics.NO_CONTACT_WARN_S`` of estimate time, as the contacts status says.
"""

from __future__ import annotations

import time
from typing import Any

from robot_state_estimator.ros.diagnostics import (
    NO_CONTACT_WARN_S,
    DiagnosticsState,
    no_contact_message,
    no_contact_s,
)
from robot_state_estimator.ros.reporting import ThrottledReporter

#: s, joint states arriving without any IMU message for this long are warned about (``no_imu``).
NO_IMU_AFTER_S = 2.0
#: s, at most one ``no_imu`` (``no_joint_states``, ``no_foot_forces``, ``foot_wrench_stopped``) warning per period.
NO_IMU_WARN_PERIOD_S = 5.0
#: s, at most one ``no_contact`` warning (no foot in contact for long, ``diagnostics.NO_CONTACT_WARN_S``) per period.
NO_CONTACT_LOG_PERIOD_S = 5.0
#: s (steady clock): a foot wrench topic with no message for this long while joint states arrive is named
#: (warning ``foot_wrench_stopped``, diagnostics ``foot_wrenches_stale``).
FOOT_WRENCH_STOPPED_S = 1.0


class InputWatch:
    """The node's checks of its input streams and of the contacts (module docstring).

    Args:
        diag: the node's diagnostics state (receive counters in, ``stopped_inputs`` and
            ``stopped_foot_wrenches`` out).
        logger_name: the node's logger.

    Attributes:
        topics: input -> resolved topic name (``imu``, ``joint_states``, and ``foot_forces`` once subscribed),
            for the messages.
        no_imu_after_s: s, how long an input may stay silent (``NO_IMU_AFTER_S``; tests shorten it).
        no_imu_warning: the last ``no_imu`` warning ("" before any).
        stopped_warning: key -> the last warning while that stream is stopped.
        no_contact_warning: the last ``no_contact`` warning ("" before any).
    """

    def __init__(self, diag: DiagnosticsState, logger_name: str) -> None:
        self._diag = diag
        self.topics = {"imu": "imu/data", "joint_states": "joint_states"}
        self._wrench_topics: dict[str, str] = {}  # foot -> its wrench topic, once subscribed
        self.no_imu_after_s = NO_IMU_AFTER_S
        self._no_imu_report = ThrottledReporter(logger_name, period_s=NO_IMU_WARN_PERIOD_S)
        self.no_imu_warning = ""
        now = time.monotonic()
        self._imu_seen = (0, now)  # IMU count, steady time it last changed (or the start)
        self._joints_seen = 0
        self._wrench_joints_seen = 0  # joint count at the last foot-wrench check
        self._no_input_report = ThrottledReporter(logger_name, period_s=NO_IMU_WARN_PERIOD_S)
        self.stopped_warning: dict[str, str] = {}
        self._others_seen = {"joint_states": (0, now), "foot_forces": (0, now)}
        self._imu_count_seen = 0
        self._no_contact_report = ThrottledReporter(logger_name, period_s=NO_CONTACT_LOG_PERIOD_S)
        self.no_contact_warning = ""
        self._no_contact_checked: Any = None  # the last estimate with feet seen by check_contacts
        self._foot_wrench_report = ThrottledReporter(logger_name, period_s=NO_IMU_WARN_PERIOD_S)
        self._wrench_seen: dict[str, tuple[int, float]] = {}  # foot -> (count, steady time it last changed)

    def watch_foot_wrench(self, foot: str, topic: str) -> None:
        """Watch the wrench topic ``topic`` of ``foot`` (subscribed now)."""
        self._wrench_topics[foot] = topic
        self._wrench_seen[foot] = (0, time.monotonic())

    def check(self) -> None:
        """All checks (the node's steady timer, twice a second)."""
        self.check_imu_arrives()
        self.check_others_arrive()
        self.check_contacts()
        self.check_foot_wrenches()

    def check_foot_wrenches(self) -> None:
        """Name the feet whose wrench topic has had no message for ``FOOT_WRENCH_STOPPED_S`` while joint states arrive
        (warning ``foot_wrench_stopped`` every ``NO_IMU_WARN_PERIOD_S``, not counted; diagnostics
        ``foot_wrenches_stale``)."""
        if not self._wrench_topics:
            return
        diag = self._diag
        now = time.monotonic()
        stopped = []
        for foot, (count, since) in self._wrench_seen.items():
            current = diag.foot_wrenches[foot].count
            if current != count:
                self._wrench_seen[foot] = (current, now)
            elif now - since > FOOT_WRENCH_STOPPED_S:
                stopped.append(foot)
        joints_arrive = diag.joints.count != self._wrench_joints_seen
        self._wrench_joints_seen = diag.joints.count
        diag.stopped_foot_wrenches = tuple(stopped) if joints_arrive else ()
        if stopped and joints_arrive:
            topics = [self._wrench_topics[f] for f in stopped]
            self._foot_wrench_report.warn(
                "foot_wrench_stopped",
                f"no foot wrench for {FOOT_WRENCH_STOPPED_S:g} s from {stopped} (topics {topics}) while joint states "
                "arrive: contacts come from another source (contact.source auto: the torques)",
                count=False,
            )

    def check_others_arrive(self) -> None:
        """Warn (every ``NO_IMU_WARN_PERIOD_S``, keys ``no_joint_states`` / ``no_foot_forces``, not counted) while
        IMU messages arrive but no joint state (or, when subscribed, foot-force) message has for ``no_imu_after_s``;
        the inputs status of ``/diagnostics`` is WARN meanwhile (``DiagnosticsState.stopped_inputs``)."""
        diag = self._diag
        now = time.monotonic()
        imu = diag.imu.count
        imu_arrives = imu != self._imu_count_seen
        self._imu_count_seen = imu
        streams = [("joint_states", diag.joints, "joint state", "joint-state driver")]
        if "foot_forces" in self.topics:
            streams.append(("foot_forces", diag.foot_forces, "foot-force", "foot sensors"))
        stopped = []
        for key, counter, what, sender in streams:
            count, since = self._others_seen[key]
            if counter.count != count:
                self._others_seen[key] = (counter.count, now)
                since = now
            if not imu_arrives or now - since <= self.no_imu_after_s:
                self.stopped_warning.pop(key, None)
                continue
            when = f"no {what} message" if counter.count == 0 else f"no {what} message for {now - since:.1f} s"
            consequence = (
                "the filter runs on the IMU alone (no leg-kinematics update: its position and velocity drift)"
                if key == "joint_states"
                else "contacts come from the other sources meanwhile"
            )
            text = (
                f"IMU messages arrive on {self.topics['imu']} but {when} on {self.topics[key]}: {consequence}; is "
                f"the {sender} publishing there (remap {key}:=<its topic>), with a matching QoS?"
            )
            self.stopped_warning[key] = text
            self._no_input_report.warn(f"no_{key}", text, count=False)
            stopped.append(text)
        diag.stopped_inputs = "; ".join(stopped)

    def check_contacts(self) -> None:
        """Warn (every ``NO_CONTACT_LOG_PERIOD_S``, key ``no_contact``, not counted) while joint updates arrive and
        no foot has been in contact for more than ``diagnostics.NO_CONTACT_WARN_S`` of estimate time, as the contacts
        status says."""
        est = self._diag.last_feet_estimate
        fresh = est is not self._no_contact_checked  # joint updates arrived since the last check (not a stale state)
        self._no_contact_checked = est
        gap_s = no_contact_s(self._diag)
        if fresh and gap_s > NO_CONTACT_WARN_S:
            self.no_contact_warning = no_contact_message(gap_s)
            self._no_contact_report.warn("no_contact", self.no_contact_warning, count=False)

    def check_imu_arrives(self) -> None:
        """Warn (every ``NO_IMU_WARN_PERIOD_S``) while joint states arrive but no IMU for ``no_imu_after_s``."""
        diag = self._diag
        now = time.monotonic()
        imu_count, since = self._imu_seen
        if diag.imu.count != imu_count:
            self._imu_seen = (diag.imu.count, now)
            since = now
        joints = diag.joints.count
        joints_arrive = joints != self._joints_seen
        self._joints_seen = joints
        if joints_arrive and now - since > self.no_imu_after_s:
            what = "no IMU message" if diag.imu.count == 0 else f"no IMU message for {now - since:.0f} s"
            self.no_imu_warning = (
                f"joint states arrive on {self.topics['joint_states']} but {what} on {self.topics['imu']}: "
                "is the IMU driver publishing there (remap imu/data:=<its topic>), with a matching QoS?"
            )
            self._no_imu_report.warn("no_imu", self.no_imu_warning, count=False)


__all__ = [
    "FOOT_WRENCH_STOPPED_S",
    "NO_CONTACT_LOG_PERIOD_S",
    "NO_IMU_AFTER_S",
    "NO_IMU_WARN_PERIOD_S",
    "InputWatch",
]
