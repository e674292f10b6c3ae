"""The adapter rules between input messages and the core, once, without ROS: ``EstimatorStream``.

The node (``ros/node.py``) and the offline replay (``tools/replay/``) both feed messages to a
``RobotStateEstimator`` and decide what to output; the rules for that live here and in the modules named below:

- Message values -> samples (the ``*_msg`` entry points): ``io.sample_rules``, through ``io.message_readers``; a
  refused message is skipped under its cause key (``MessageError.cause``: ``imu_not_finite``, ``joint_bad_lengths``,
  ``foot_wrench_not_finite``, ``schedule_bad_message`` ...). Frames and foot names of foot wrenches and contact
  schedules are the core's checks (events ``foot_wrench_unknown_frame``, ``schedule_unknown_feet`` ...).
- IMU ``frame_id``: accepted when it names the IMU sensor frame S (``ImuSpec.accepted_frame_ids``: its
  ``frame_id``, the ``gz_frame_id`` gz-sim publishes, and the links / ``<frame>``s coinciding with S, such as
  a URDF ``imu_link`` lumped into the base; not a link in which S is rotated or offset), or the
  ``imu_frame_id`` parameter (``'*'`` accepts any); an accepted alias is renamed to the core's IMU frame.
- A zero or negative stamp is skipped (``stamp_zero``), for every input.
- An IMU stamp more than ``max_time_gap_s`` after the previous one resets the filter (``stamp_gap``), then the
  sample is processed; time going backwards (by more than ``out_of_order_tolerance_s``) is left to the core,
  which resets itself (events ``stamp_backwards``, ``reset``).
- The IMU is the clock: a joint, foot-force, foot-wrench or contact-schedule sample stamped more than
  ``max_time_gap_s`` after the last IMU sample that reached the core is skipped (``stamp_future``: a driver whose
  clock is ahead, a message of the timeline before a reset still queued, or an IMU that stopped), one stamped
  more than ``max_time_gap_s`` before it too (``stamp_past``: a driver whose clock is behind, or the first
  messages of a looping bag's new timeline before the IMU's own goes back and resets the filter). Neither
  reaches the core, so neither resets the filter nor makes the good samples after it look like time going
  backwards; the note names the skipped sample's stamp and the IMU's. No bound before the first IMU sample.
- Joint samples must name every model joint (``joint_missing_names``) and, unless the estimator setting
  ``ignore_unknown_joints`` is on, no other joint (``joint_unknown_names``); with it on, samples with extra
  names go to the core, which ignores those names and reports them when their set changes (core event
  ``ignored_joints``, info). With ``contact.source: torque`` a sample without efforts is skipped
  (``joint_effort_missing``). The check runs once per tuple of names (cached).
- A non-finite estimate is never output: the filter is reset (``estimate_not_finite``).
- Odometry and TF once per stamp, in increasing stamp order (when an IMU and a joint sample share a stamp, the
  first estimate at that stamp is output), decimated by ``odometry_rate_hz`` (the first estimate of each
  ``stamp // period`` slot); wrenches and contact states for every estimate with feet, decimated by
  ``contacts_rate_hz``. After a reset the next stamp is output whatever it is (``io.stream_outputs``: what is
  output, the numbers packed in one buffer).
- Lost samples are detected from the stamps of each stream (``io.stamp_loss``; keys ``imu_lost``,
  ``joint_states_lost``, ``foot_forces_lost``, ``foot_wrenches_lost``: one key for every foot's topic). Every
  sample with a readable positive stamp feeds the detection, also one the adapter then skips: a rejected sample
  arrived, so it is a rejection, never also a loss.
- The contact source the core uses is followed after each joint sample (``io.contact_source``): a fall back to the
  kinematic detector is a note ``contact_source`` (warn), kept in ``contact_source_problem`` until a better
  source is back. ``forces_estimated`` tells whether the last joint step estimated the foot forces (from joint
  torques): the adapters publish no wrench without them (a zero force would read as a measured one).
- Every skipped sample or reset is counted by its stable cause key (``rejected``), every core event by its key
  (``events``); both use the keys of the node's ``rejected.<cause>`` diagnostics.

Each ``on_*`` call returns an :class:`Outputs`: what to publish (or write) and the notes to log. The adapters
keep only what is theirs (the node: subscriptions, parameters, publishing, throttled logs, diagnostics; the
replay: bag reading and writing, metrics). The adapter parameters and the checks of the output frames are
``io.adapter_settings``'. This module imports neither rclpy nor ROS message packages: the ``*_msg`` entry points
take any message with the ROS field names (rclpy or rosbags).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    Event,
    FootForceSample,
    FootWrenchSample,
    ImuSample,
    JointSample,
)
from robot_state_estimator.common.time import NS_PER_S, format_stamp_s, stamp_to_ns

# The adapter settings, the output packing and the loss counter are modules of their own; their names stay
# importable from here (the node, replay, the tools and the tests import them from io.stream).
from robot_state_estimator.io.adapter_settings import (
    DEFAULT_FOOT_WRENCH_TOPICS,
    AdapterSettings,
    foot_wrench_topics,
    output_frame_problem,
    output_frame_warning,
)
from robot_state_estimator.io.contact_source import kinematic_fallback_problem
from robot_state_estimator.io.core_protocols import EstimatorCore, RobotModel, StreamSettings
from robot_state_estimator.io.message_readers import (
    contact_schedule_from_msg,
    foot_force_sample_from_msg,
    foot_wrench_sample_from_msg,
    imu_sample_from_msg,
    joint_sample_from_msg,
)
from robot_state_estimator.io.message_shapes import ImuMsg, JointStateMsg, StampedMsg, WrenchStampedMsg
from robot_state_estimator.io.sample_rules import (
    FOOT_FORCE_BAD_MESSAGE,
    FOOT_WRENCH_BAD_MESSAGE,
    IMU_BAD_MESSAGE,
    JOINT_BAD_MESSAGE,
    SCHEDULE_BAD_MESSAGE,
    MessageError,
)
from robot_state_estimator.io.stamp_loss import LOSS_WINDOW, LOST_KEYS, StampLossCounter
from robot_state_estimator.io.stream_causes import (
    CORE_ERROR,
    ESTIMATE_NOT_FINITE,
    IMU_FRAME_ID,
    JOINT_EFFORT_MISSING,
    JOINT_MISSING_NAMES,
    JOINT_UNKNOWN_NAMES,
    NOT_REJECTIONS,
    STAMP_FUTURE,
    STAMP_GAP,
    STAMP_PAST,
    STAMP_ZERO,
    STREAM_CAUSES,
)
from robot_state_estimator.io.stream_outputs import (
    FEET_OFFSET,
    FOOT_STRIDE,
    P_OFFSET,
    POSE_COV_OFFSET,
    Q_OFFSET,
    TWIST_COV_OFFSET,
    V_OFFSET,
    W_OFFSET,
    Outputs,
    pack_estimate,
)


def _period_ns(rate_hz: float) -> int:
    return round(NS_PER_S / rate_hz) if rate_hz > 0 else 0


class EstimatorStream:
    """Feeds samples (or ROS-like messages) to a ``RobotStateEstimator`` with the adapter rules (module doc).

    Args:
        estimator: the core ``RobotStateEstimator`` (``add_imu``, ``add_joints``, ``add_foot_forces``,
            ``pop_events``, ``reset``).
        description: its ``RobotDescription`` (``joint_names``, ``imu_frame_mismatch``; the IMU is the estimator's
            ``imu``, the one its settings chose, else ``description.imu``).
        settings: its ``EstimatorSettings`` (``out_of_order_tolerance_s``, ``contact.source``,
            ``ignore_unknown_joints``).
        adapter: the adapter parameters.
        strict: re-raise unexpected exceptions of the message conversion and of the core (offline tools);
            False (the node) turns them into the causes ``*_bad_message`` and ``core_error``.

    Attributes:
        rejected: cause -> number of skipped inputs and of resets by the adapter (``stamp_gap``,
            ``estimate_not_finite``).
        events: core event key -> number of events (all levels).
        resets: resets requested by the adapter.
        lost: key (``LOST_KEYS``) -> samples lost before reaching the adapter, detected from the stamps.
        n_estimates: finite estimates returned by the core.
    """

    def __init__(
        self,
        estimator: EstimatorCore,
        description: RobotModel,
        settings: StreamSettings,
        adapter: AdapterSettings,
        *,
        strict: bool = False,
    ) -> None:
        self.strict = strict
        self.model_joints = frozenset(description.joint_names)
        # the estimator's IMU: the one its settings chose (imu_name, declared_imu), else the description's only one
        imu = getattr(estimator, "imu", None) or description.imu
        self.imu_frame_of_core = str(imu.frame_id)
        # The names of frames that coincide with the IMU frame S (description.imu_frames); stand-in descriptions
        # without accepted_frame_ids: frame_id, link and gz_frame_id (model/link/sensor, as gz-sim publishes).
        names = getattr(imu, "accepted_frame_ids", None) or (imu.frame_id, imu.link, getattr(imu, "gz_frame_id", ""))
        self._imu_frames_of_description = frozenset(f for f in names if f)
        mismatch = getattr(description, "imu_frame_mismatch", None)  # why a frame is not S
        self._imu_frame_mismatch = None if mismatch is None else (lambda frame_id: mismatch(frame_id, imu))
        self.rejected: Counter[str] = Counter()
        self.events: Counter[str] = Counter()
        self.resets = 0
        self.n_estimates = 0
        self.lost: Counter[str] = Counter(dict.fromkeys(LOST_KEYS, 0))
        self._imu_loss = StampLossCounter("imu_lost", "IMU")
        self._joint_loss = StampLossCounter("joint_states_lost", "joint")
        self._foot_loss = StampLossCounter("foot_forces_lost", "foot-force")
        self._wrench_loss: dict[str, StampLossCounter] = {}  # per foot topic, one count key
        self._checked_joint_names: tuple[str, ...] | None = None
        #: the stamp of the last IMU sample that reached the core (the clock joint and foot samples are bounded
        #: against: ``stamp_future``, ``stamp_past``); None before the first one
        self.imu_clock_ns: int | None = None
        #: the contact source the core used for the last joint sample ("" before any)
        self.contact_source = ""
        #: why the contact source in use is worse than the one used before or configured ("" when it is not)
        self.contact_source_problem = ""
        self.set_core(estimator, settings)
        self.set_adapter(adapter)
        self.restart_outputs()

    # ------------------------------------------------------------------------------------------ set-up

    def set_core(self, estimator: EstimatorCore, settings: StreamSettings) -> None:
        """Use another estimator and/or settings (a settings change in the node)."""
        self.estimator = estimator
        self.settings = settings
        self._backwards_tolerance_ns = int(settings.out_of_order_tolerance_s * NS_PER_S)
        self._needs_effort = settings.contact.source == "torque"
        # getattr: settings-like objects without the field keep the strict rule (the default)
        self._ignore_unknown_joints = bool(getattr(settings, "ignore_unknown_joints", False))
        self._checked_joint_names = None  # the joint-name rule may have changed

    def set_adapter(self, adapter: AdapterSettings) -> None:
        """Change the adapter parameters (live parameters of the node)."""
        self.adapter = adapter
        frame = adapter.imu_frame_id
        if frame == "*":
            self.imu_frames: frozenset[str] | None = None
        elif frame:
            self.imu_frames = frozenset({frame})
        else:
            self.imu_frames = self._imu_frames_of_description
        self._max_gap_ns = int(adapter.max_time_gap_s * NS_PER_S)
        self.odom_period_ns = _period_ns(adapter.odometry_rate_hz)
        self.contacts_period_ns = _period_ns(adapter.contacts_rate_hz)

    def restart_outputs(self) -> None:
        """After a reset or at the start: the next stamp is output whatever it is."""
        self.last_imu_ns: int | None = None
        self.last_odometry_ns: int | None = None
        self.odom_slot: int | None = None
        self.contacts_slot: int | None = None

    # ---------------------------------------------------------------------------------------- helpers

    def _skip(self, key: str, message: str, level: str = "warn", notes: list[Event] | None = None) -> Outputs:
        self.rejected[key] += 1
        event = Event(key, message, level)
        if notes:
            notes.append(event)
            return Outputs(notes=notes)
        return Outputs(notes=(event,))

    def _check_loss(self, counter: StampLossCounter, stamp_ns: int) -> list[Event] | None:
        """Feed one arrived stamp (> 0) to the stream's loss counter; the loss note, if any, as a list."""
        n = counter.check(stamp_ns, self._max_gap_ns, self._backwards_tolerance_ns)
        return self._lost(counter, n, stamp_ns, None) if n else None

    def _check_loss_of_msg(self, counter: StampLossCounter, msg: StampedMsg) -> list[Event] | None:
        """The loss check for a message the conversion rejected, when its ``header.stamp`` is readable and > 0."""
        try:
            stamp_ns = stamp_to_ns(msg.header.stamp)
        except Exception:
            stamp_ns = 0
        if stamp_ns > 0:
            return self._check_loss(counter, stamp_ns)
        counter.arrived_unstamped()
        return None

    def off_imu_clock(self, what: str, stamp_ns: int, counter: StampLossCounter | None = None) -> Outputs | None:
        """The skip of a ``what`` ("joint", "foot-force") sample stamped ``stamp_ns`` (> 0) more than
        ``max_time_gap_s`` after (``stamp_future``) or before (``stamp_past``) the IMU clock (``imu_clock_ns``);
        None when it is within (or before the first IMU sample). ``counter``: the stream's loss counter, told that
        the sample arrived (so that the gap it leaves in the stream's stamps is not taken for a loss)."""
        clock = self.imu_clock_ns
        if clock is None:
            return None
        d = stamp_ns - clock
        limit = self._max_gap_ns
        if -limit <= d <= limit:
            return None
        if counter is not None:
            counter.arrived_unstamped()
        where = (
            f"stamped {format_stamp_s(stamp_ns)} s, {abs(d) / NS_PER_S:.3f} s {'after' if d > 0 else 'before'} the "
            f"last IMU sample ({format_stamp_s(clock)} s), more than max_time_gap_s = {self.adapter.max_time_gap_s:g} s"
        )
        if d > 0:
            return self._skip(
                STAMP_FUTURE,
                f"{what} sample skipped: {where}: is the clock of its driver ahead (the IMU's is the estimator's), "
                "is it a message from before a reset (a looping bag), or has the IMU stopped?",
            )
        return self._skip(
            STAMP_PAST,
            f"{what} sample skipped: {where}: is the clock of its driver behind (the IMU's is the estimator's), or "
            "did its time go back (a looping bag) before the IMU's?",
        )

    def reject(self, key: str, message: str) -> Outputs:
        """Skip an input the adapter could not even read (e.g. bytes that do not deserialize), counted under
        ``key`` like the stream's own causes."""
        return self._skip(key, message)

    def _lost(self, counter: StampLossCounter, n: int, stamp_ns: int, notes: list[Event] | None) -> list[Event]:
        self.lost[counter.key] += n
        if notes is None:
            notes = []
        notes.append(counter.note(n, stamp_ns))
        return notes

    def _reset(self, reason: str, key: str, notes: list[Event]) -> None:
        self.rejected[key] += 1
        notes.append(Event(key, f"{reason}: resetting the filter"))
        self.estimator.reset(reason)  # reported by the core as a "reset" event
        self.resets += 1
        self.restart_outputs()

    # -------------------------------------------------------------------------------------------- inputs

    def on_imu_msg(self, msg: ImuMsg) -> Outputs:
        """A ``sensor_msgs/Imu`` message (rclpy or rosbags)."""
        try:
            sample = imu_sample_from_msg(msg)
        except MessageError as exc:
            notes = self._check_loss_of_msg(self._imu_loss, msg)
            return self._skip(exc.cause or IMU_BAD_MESSAGE, f"IMU sample skipped: {exc}", notes=notes)
        except Exception as exc:
            if self.strict:
                raise
            notes = self._check_loss_of_msg(self._imu_loss, msg)
            return self._skip(IMU_BAD_MESSAGE, f"IMU sample skipped: {exc}", notes=notes)
        return self.on_imu(sample)

    def on_imu(self, sample: ImuSample) -> Outputs:
        """An ``ImuSample``."""
        stamp_ns = sample.stamp_ns
        if stamp_ns <= 0:
            self._imu_loss.arrived_unstamped()
            return self._skip(STAMP_ZERO, "IMU sample skipped: zero or negative stamp")
        notes = self._check_loss(self._imu_loss, stamp_ns) or []  # also for a sample skipped below
        frames = self.imu_frames
        if frames is not None and sample.frame_id not in frames:
            why = ""
            if frames is self._imu_frames_of_description and self._imu_frame_mismatch is not None:
                why = self._imu_frame_mismatch(sample.frame_id)  # e.g. S rotated 90 deg in the lumped base link
            return self._skip(
                IMU_FRAME_ID,
                f"IMU sample skipped: frame_id {sample.frame_id!r} is not the IMU's frame"
                f"{' (' + why + ')' if why else ''}; accepted: {sorted(frames)} "
                "(set the parameter imu_frame_id, '*' accepts any)",
                notes=notes,
            )
        # Time going backwards (a looping bag) is detected and reset by the core (events stamp_backwards,
        # reset); a forward gap larger than max_time_gap_s is reset here.
        last = self.last_imu_ns
        if last is not None:
            dt_ns = stamp_ns - last
            if dt_ns > self._max_gap_ns:
                self._reset(f"gap of {dt_ns / NS_PER_S:.3f} s in the IMU stamps", STAMP_GAP, notes)
            elif dt_ns < -self._backwards_tolerance_ns:
                last = None
        if last is None or stamp_ns > last:
            self.last_imu_ns = stamp_ns
        clock = self.imu_clock_ns
        if clock is None or stamp_ns > clock or clock - stamp_ns > self._backwards_tolerance_ns:
            self.imu_clock_ns = stamp_ns  # forward, or back by more than the tolerance (the core resets)
        if sample.frame_id != self.imu_frame_of_core:  # an accepted alias (imu_frame_id): the core's frame
            sample = dataclasses.replace(sample, frame_id=self.imu_frame_of_core)
        return self._step(self.estimator.add_imu, sample, notes)

    def on_joints_msg(self, msg: JointStateMsg) -> Outputs:
        """A ``sensor_msgs/JointState`` message."""
        try:
            sample = joint_sample_from_msg(msg)
        except MessageError as exc:
            notes = self._check_loss_of_msg(self._joint_loss, msg)
            return self._skip(exc.cause or JOINT_BAD_MESSAGE, f"joint sample skipped: {exc}", notes=notes)
        except Exception as exc:
            if self.strict:
                raise
            notes = self._check_loss_of_msg(self._joint_loss, msg)
            return self._skip(JOINT_BAD_MESSAGE, f"joint sample skipped: {exc}", notes=notes)
        return self.on_joints(sample)

    def on_joints(self, sample: JointSample) -> Outputs:
        """A ``JointSample``."""
        stamp_ns = sample.stamp_ns
        if stamp_ns <= 0:
            self._joint_loss.arrived_unstamped()
            return self._skip(STAMP_ZERO, "joint sample skipped: zero or negative stamp")
        clock = self.imu_clock_ns  # inlined bound (the 1 kHz path): the method only for a sample off the IMU clock
        if clock is not None and not -self._max_gap_ns <= stamp_ns - clock <= self._max_gap_ns:
            off = self.off_imu_clock("joint", stamp_ns, self._joint_loss)
            if off is not None:
                return off
        notes = self._check_loss(self._joint_loss, stamp_ns)  # also for a sample skipped below
        if sample.names != self._checked_joint_names:  # the names of a stream rarely change: check them once
            names = set(sample.names)
            missing = self.model_joints - names
            unknown = names - self.model_joints
            if missing:
                # a misspelt name is both: name the message's names the model lacks too
                extra = f"; the message's joints {sorted(unknown)} are not in the model" if unknown else ""
                return self._skip(
                    JOINT_MISSING_NAMES, f"joint sample skipped: missing joints {sorted(missing)}{extra}", notes=notes
                )
            if unknown and not self._ignore_unknown_joints:
                return self._skip(
                    JOINT_UNKNOWN_NAMES,
                    f"joint sample skipped: joints {sorted(unknown)} are not in the model (set ignore_unknown_joints "
                    "to use the model's joints of such messages)",
                    notes=notes,
                )
            self._checked_joint_names = sample.names
        if sample.effort is None and self._needs_effort:
            return self._skip(
                JOINT_EFFORT_MISSING,
                "joint sample skipped: empty effort, but contact.source is 'torque' (needs joint torques)",
                notes=notes,
            )
        out = self._step(self.estimator.add_joints, sample, notes)
        source = getattr(self.estimator, "contact_source", None)
        if source is not None and source != self.contact_source:
            note = self._contact_source_changed(str(source))
            if note is not None:
                out = out._replace(notes=[*out.notes, note])
        return out

    @property
    def forces_estimated(self) -> bool:
        """Whether the core estimated the foot forces of its last joint step (from joint torques; the core's
        ``forces_estimated``, True for a core without it): without them the wrenches are zeros, not measured."""
        return bool(getattr(self.estimator, "forces_estimated", True))

    def _contact_source_changed(self, source: str) -> Event | None:
        """The core's contact source changed to ``source``: the note to log, if any (``io.contact_source``)."""
        before, self.contact_source = self.contact_source, source
        if source == "kinematic":
            problem = kinematic_fallback_problem(before, str(getattr(self.settings.contact, "source", "auto")))
            if not problem:
                return None  # contact.source auto on a robot without efforts or foot sensors: the core says so once
            self.contact_source_problem = problem
            self.events["contact_source"] += 1
            return Event("contact_source", problem)
        if self.contact_source_problem:
            self.contact_source_problem = ""
            self.events["contact_source"] += 1
            return Event("contact_source", f"contacts come from {source!r} again", "info")
        return None

    def on_foot_forces_msg(self, msg: JointStateMsg) -> Outputs:
        """Foot sensors as ``sensor_msgs/JointState`` (name = feet, effort = values)."""
        try:
            sample = foot_force_sample_from_msg(msg)
        except Exception as exc:  # any conversion failure, also offline (as before the extraction)
            notes = self._check_loss_of_msg(self._foot_loss, msg)
            return self._skip(FOOT_FORCE_BAD_MESSAGE, f"foot-force sample skipped: {exc}", notes=notes)
        return self.on_foot_forces(sample)

    def on_foot_forces(self, sample: FootForceSample) -> Outputs:
        """A ``FootForceSample``."""
        stamp_ns = sample.stamp_ns
        if stamp_ns <= 0:  # as IMU and joint samples: a sensor without a clock; never a contact source
            self._foot_loss.arrived_unstamped()
            return self._skip(STAMP_ZERO, "foot-force sample skipped: zero or negative stamp")
        off = self.off_imu_clock("foot-force", stamp_ns, self._foot_loss)
        if off is not None:
            return off
        notes = self._check_loss(self._foot_loss, stamp_ns)
        return self._step(self.estimator.add_foot_forces, sample, notes)

    def on_foot_wrench_msg(self, msg: WrenchStampedMsg, foot: str) -> Outputs:
        """A ``geometry_msgs/WrenchStamped`` of foot ``foot`` (its own topic)."""
        try:
            sample = foot_wrench_sample_from_msg(msg, foot)
        except Exception as exc:  # any conversion failure, also offline (as the JointState form)
            key = (exc.cause if isinstance(exc, MessageError) else "") or FOOT_WRENCH_BAD_MESSAGE
            notes = self._check_loss_of_msg(self._foot_wrench_loss(foot), msg)
            return self._skip(key, f"foot wrench sample skipped: {exc}", notes=notes)
        return self.on_foot_wrench(sample)

    def _foot_wrench_loss(self, foot: str) -> StampLossCounter:
        counter = self._wrench_loss.get(foot)
        if counter is None:
            counter = self._wrench_loss[foot] = StampLossCounter("foot_wrenches_lost", f"{foot} wrench")
        return counter

    def on_foot_wrench(self, sample: FootWrenchSample) -> Outputs:
        """A ``FootWrenchSample``."""
        counter = self._foot_wrench_loss(sample.foot)
        if sample.stamp_ns <= 0:
            counter.arrived_unstamped()
            return self._skip(STAMP_ZERO, f"foot wrench sample of {sample.foot} skipped: zero or negative stamp")
        off = self.off_imu_clock(f"foot wrench ({sample.foot})", sample.stamp_ns, counter)
        if off is not None:
            return off
        notes = self._check_loss(counter, sample.stamp_ns)
        return self._step(self.estimator.add_foot_wrench, sample, notes)

    def on_contact_schedule_msg(self, msg: JointStateMsg) -> Outputs:
        """A contact schedule as ``sensor_msgs/JointState`` (name = feet, position = 1 stance / 0 swing)."""
        try:
            sample = contact_schedule_from_msg(msg)
        except Exception as exc:
            return self._skip(SCHEDULE_BAD_MESSAGE, f"contact schedule skipped: {exc}")
        return self.on_contact_schedule(sample)

    def on_contact_schedule(self, sample: ContactScheduleSample) -> Outputs:
        """A ``ContactScheduleSample``."""
        if sample.stamp_ns <= 0:
            return self._skip(STAMP_ZERO, "contact schedule skipped: zero or negative stamp")
        off = self.off_imu_clock("contact schedule", sample.stamp_ns)
        if off is not None:
            return off
        return self._step(self.estimator.add_contact_schedule, sample, None)

    # ---------------------------------------------------------------------------------------- the step

    def _step(self, add: Callable[[Any], object], sample: Any, notes: list[Event] | None) -> Outputs:
        """Feed one sample to the core, collect its events, decide what to output."""
        est = self.estimator
        if self.strict:
            estimate = add(sample)
        else:
            try:
                estimate = add(sample)
            except Exception as exc:  # the node never dies on one sample
                self.rejected[CORE_ERROR] += 1
                if notes is None:
                    notes = []
                notes.append(Event(CORE_ERROR, f"estimator failed on a sample ({type(exc).__name__}: {exc})", "error"))
                estimate = None
        events = est.pop_events()
        if events:
            if notes is None:
                notes = []
            for event in events:
                self.events[event.key] += 1
                notes.append(event)
                if event.key == "reset":
                    self.last_odometry_ns = None
                    self.odom_slot = None
                    self.contacts_slot = None
        if not isinstance(estimate, Estimate):
            return Outputs(notes=notes or (), sample=sample)
        buf = pack_estimate(estimate)
        if buf is None:
            if notes is None:
                notes = []
            self._reset("the estimate is not finite", ESTIMATE_NOT_FINITE, notes)
            return Outputs(notes=notes, sample=sample)
        self.n_estimates += 1
        stamp_ns = estimate.stamp_ns
        # Odometry and TF once per stamp, in increasing stamp order: when an IMU sample and a joint sample share
        # a stamp, the first estimate at that stamp is output (tf2 also rejects repeated stamps).
        odometry = False
        last = self.last_odometry_ns
        if last is None or stamp_ns > last:
            self.last_odometry_ns = stamp_ns
            period = self.odom_period_ns
            slot = stamp_ns // period if period else None
            if slot is None or slot != self.odom_slot:  # odometry_rate_hz: first estimate of each period
                self.odom_slot = slot
                odometry = True
        contacts = False
        if len(buf) > FEET_OFFSET:  # estimate.feet (without making the per-foot states)
            period = self.contacts_period_ns
            slot = stamp_ns // period if period else None
            if slot is None or slot != self.contacts_slot:  # contacts_rate_hz
                self.contacts_slot = slot
                contacts = True
        # tuple.__new__ directly: a third of the cost of the NamedTuple constructor, on every estimate
        return _new_tuple(Outputs, (estimate, buf, odometry, contacts, notes or (), sample))


_new_tuple = tuple.__new__


__all__ = [
    "CORE_ERROR",
    "DEFAULT_FOOT_WRENCH_TOPICS",
    "ESTIMATE_NOT_FINITE",
    "FEET_OFFSET",
    "FOOT_STRIDE",
    "IMU_FRAME_ID",
    "JOINT_EFFORT_MISSING",
    "JOINT_MISSING_NAMES",
    "JOINT_UNKNOWN_NAMES",
    "LOSS_WINDOW",
    "LOST_KEYS",
    "NOT_REJECTIONS",
    "POSE_COV_OFFSET",
    "P_OFFSET",
    "Q_OFFSET",
    "STAMP_FUTURE",
    "STAMP_GAP",
    "STAMP_PAST",
    "STAMP_ZERO",
    "STREAM_CAUSES",
    "TWIST_COV_OFFSET",
    "V_OFFSET",
    "W_OFFSET",
    "AdapterSettings",
    "EstimatorStream",
    "Outputs",
    "StampLossCounter",
    "foot_wrench_topics",
    "output_frame_problem",
    "output_frame_warning",
    "pack_estimate",
]
