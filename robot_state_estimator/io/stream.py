"""The adapter rules between input messages and the core, once, without ROS: ``EstimatorStream``.

The node (``ros/node.py``) and the offline replay (``tools/replay/``) both feed messages to a
``RobotStateEstimator`` and decide what to output; the rules for that live here and only here:

- IMU ``frame_id``: accepted when it names the IMU sensor frame S (``ImuSpec.accepted_frame_ids``: its
  ``frame_id``, the ``gz_frame_id`` gz-sim publishes, and the links / ``<frame>``s coinciding with S, such as
  a URDF ``imu_link`` lumped into the base; not a link in which S is rotated or offset), or the
  ``imu_frame_id`` parameter (``'*'`` accepts any); an accepted alias is renamed to the core's IMU frame.
- A zero or negative stamp is skipped (``stamp_zero``), for IMU, joint and foot-force samples.
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
- Foot wrench samples (``geometry_msgs/WrenchStamped``, one topic per foot: ``on_foot_wrench_msg(msg, foot)``) and
  contact schedules (``sensor_msgs/JointState``, name = feet, position = 1 stance / 0 swing): a non-finite wrench is
  skipped (``foot_wrench_not_finite``), an unreadable message too (``foot_wrench_bad_message``,
  ``schedule_bad_message``: also a schedule value that is not 0 or 1); frames and foot names are the core's checks
  (events ``foot_wrench_unknown_frame``, ``schedule_unknown_feet``, ``schedule_missing_feet`` ...). Lost wrench
  samples are counted per foot topic under one key, ``foot_wrenches_lost``.
- A non-finite estimate is never output: the filter is reset (``estimate_not_finite``).
- Odometry and TF once per stamp, in increasing stamp order (when an IMU and a joint sample share a stamp, the
  first estimate at that stamp is output), decimated by ``odometry_rate_hz`` (the first estimate of each
  ``stamp // period`` slot); wrenches and contact states for every estimate with feet, decimated by
  ``contacts_rate_hz``. After a reset the next stamp is output whatever it is.
- Lost samples are detected from the stamps of each stream (IMU, joint states, foot forces): a running
  period (the median of the last ``LOSS_WINDOW`` positive stamp differences) is kept per stream, and a stamp
  difference of more than 1.5 periods counts ``round(gap / period) - 1`` lost samples (``lost``, keys
  ``imu_lost``, ``joint_states_lost``, ``foot_forces_lost``; note of the same key, level warn). A difference
  above ``max_time_gap_s`` is a gap in the data (the IMU's ``stamp_gap`` reset), not a loss; time going
  backwards restarts the detection, a repeated or slightly older stamp is ignored. Every sample with a
  readable positive stamp feeds the detection, also one the adapter then skips (wrong frame, missing joints,
  non-finite values, bad lengths ...): a rejected sample arrived, so it is a rejection, never also a loss. A
  sample without a usable stamp (zero, negative, unreadable) arrived too: it cancels one loss of the next gap.
- The contact source the core uses (``contact_source``: ``torque``, ``foot_sensor``, ``kinematic``; the
  core's ``RobotStateEstimator.contact_source``) is followed after each joint sample: when it falls back to
  the kinematic detector after another source was used (e.g. the efforts disappear from the joint states with
  ``contact.source: auto``), or when the configured source has no data, a note ``contact_source`` (warn) says so
  and ``contact_source_problem`` keeps the message until a better source is back (a note at info level then).
  ``forces_estimated`` tells whether the last joint step estimated the foot forces (from joint torques): the
  adapters publish no wrench without them (a zero force would read as a measured one).
- Every skipped sample or reset is counted by its stable cause key (``rejected``), every core event by its key
  (``events``); both use the keys of the node's ``rejected.<cause>`` diagnostics.

Each ``on_*`` call returns an :class:`Outputs`: what to publish (or write) and the notes to log. The adapters
keep only what is theirs (the node: subscriptions, parameters, publishing, throttled logs, diagnostics; the
replay: bag reading and writing, metrics). This module imports neither rclpy nor ROS message packages: the
``*_msg`` entry points take any message with the ROS field names (rclpy or rosbags).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from robot_state_estimator.common.output_layout import (
    OMEGA_BASE_IN_BASE,
    P_WORLD_BASE,
    POSE_COVARIANCE,
    PUBLISHED_SIZE,
    QUAT_WORLD_BASE_XYZW,
    TWIST_COVARIANCE,
    V_BASE_IN_BASE,
)
from robot_state_estimator.common.samples import Estimate, Event
from robot_state_estimator.common.time import NS_PER_S, stamp_to_ns
from robot_state_estimator.io.message_readers import (
    contact_schedule_from_msg,
    foot_force_sample_from_msg,
    foot_wrench_sample_from_msg,
    imu_sample_from_msg,
    joint_sample_from_msg,
)
from robot_state_estimator.io.node_params import NODE_PARAMS, string_array_default
from robot_state_estimator.io.sample_rules import (
    FOOT_FORCE_BAD_MESSAGE,
    FOOT_WRENCH_BAD_MESSAGE,
    IMU_BAD_MESSAGE,
    JOINT_BAD_MESSAGE,
    SCHEDULE_BAD_MESSAGE,
    MessageError,
)

#: Offsets in the buffer of :func:`pack_estimate`: the output vector's first numbers (``common.output_layout``).
P_OFFSET: int = P_WORLD_BASE.start
Q_OFFSET: int = QUAT_WORLD_BASE_XYZW.start
V_OFFSET: int = V_BASE_IN_BASE.start
W_OFFSET: int = OMEGA_BASE_IN_BASE.start
POSE_COV_OFFSET: int = POSE_COVARIANCE.start
TWIST_COV_OFFSET: int = TWIST_COVARIANCE.start
FEET_OFFSET: int = PUBLISHED_SIZE
#: Per foot: wrench in the foot frame (6), then force in the world (3).
FOOT_STRIDE = 9


def pack_estimate(est: Estimate) -> np.ndarray | None:
    """All numbers of ``est`` that are output, in one float64 buffer; None when one is not finite.

    Layout: position (3), quaternion xyzw (4), linear velocity (3), angular velocity (3), pose covariance
    (36, row-major), twist covariance (36), then per foot its wrench in the foot frame (6) and its force in
    the world (3). One concatenation (a copy of the output vector's numbers for an estimate without feet) and one
    ``isfinite`` call: the finiteness guard and, for the node, the values to publish.

    Raises:
        ValueError: an array of the estimate has an unexpected size.
    """
    vector = getattr(est, "output_vector", None)  # the core's own (91,) vector: its first 85 numbers are these
    feet = est.feet
    if vector is not None:
        head = vector()[:FEET_OFFSET]
    else:
        head = np.concatenate(
            [
                est.p_world_base,
                est.quat_world_base_xyzw,
                est.v_base_in_base,
                est.omega_base_in_base,
                np.ravel(est.pose_covariance),
                np.ravel(est.twist_covariance),
            ]
        )
    if feet:
        parts = [head]
        for foot in feet:
            parts.append(foot.wrench_in_foot)
            parts.append(foot.force_in_world)
        buf = np.concatenate(parts).astype(np.float64, copy=False)
    else:
        buf = np.array(head, dtype=np.float64)  # a copy, as the concatenation makes
    expected = FEET_OFFSET + FOOT_STRIDE * len(feet)
    if buf.shape != (expected,):
        raise ValueError(f"estimate arrays have unexpected sizes ({buf.size} numbers, expected {expected})")
    if not np.isfinite(buf).all():
        return None
    return buf


def output_frame_problem(desc: Any, params: Mapping[str, Any]) -> str:
    """Why the output frames of the node parameters ``params`` cannot name the base B of ``desc``
    (``RobotDescription``): ``base_frame`` or ``tf_child_frame`` naming another frame of the robot (``imu_link``, a
    foot), which would label B's pose and twist with that frame; "" when both are fine (empty, B, a frame
    coinciding with B, or a name the description lacks, e.g. ``base_link``). The node refuses such a description
    load and replay such a run, with this message."""
    for name in ("base_frame", "tf_child_frame"):
        value = str(params.get(name, "") or "")
        why = desc.base_frame_mismatch(value)
        if why:
            return (
                f"{name} {value!r}: {why}; the odometry and the TF are the pose of the base link, so name it, a frame "
                f"that coincides with it, or a name that is not in the description (e.g. base_link), or leave {name} "
                "empty"
            )
    return ""


#: Default of the node parameter ``foot_wrench_topics``: one ``geometry_msgs/WrenchStamped`` topic per foot, named
#: after it (ros2_control's force_torque_sensor_broadcaster publishes ``<controller name>/wrench``: name the
#: broadcasters after the feet, remap, or list the topics).
DEFAULT_FOOT_WRENCH_TOPICS: tuple[str, ...] = string_array_default("foot_wrench_topics")


def foot_wrench_topics(entries: Any, feet: Any) -> dict[str, str]:
    """Foot -> wrench topic from the ``foot_wrench_topics`` parameter: either one pattern with ``{foot}`` (replaced by
    each foot frame name, e.g. ``{foot}/wrench``), or one ``FOOT=TOPIC`` entry for every foot.

    Raises:
        ValueError: an entry that is neither, a pattern without ``{foot}`` for several feet, ``FOOT=TOPIC`` entries
            naming unknown feet, a foot twice, or missing feet (the message names them and the feet).
    """
    entries = [str(e).strip() for e in entries or ()]
    feet = [str(f) for f in feet]
    if len(entries) == 1 and "=" not in entries[0]:
        pattern = entries[0]
        if "{foot}" not in pattern and len(feet) > 1:
            raise ValueError(
                f"foot_wrench_topics: the pattern {pattern!r} lacks '{{foot}}' (every foot would share one topic); "
                f"use e.g. '{{foot}}/wrench' or one FOOT=TOPIC entry per foot of {feet}"
            )
        return {f: pattern.replace("{foot}", f) for f in feet}
    out: dict[str, str] = {}
    for entry in entries:
        foot, sep, topic = entry.partition("=")
        foot, topic = foot.strip(), topic.strip()
        if not sep or not foot or not topic:
            raise ValueError(
                f"foot_wrench_topics: {entry!r} is not FOOT=TOPIC (give one pattern with '{{foot}}', or FOOT=TOPIC "
                f"for every foot of {feet})"
            )
        if foot not in feet:
            raise ValueError(f"foot_wrench_topics: {foot!r} is not a foot; the feet are {feet}")
        if foot in out:
            raise ValueError(f"foot_wrench_topics: foot {foot!r} is given twice")
        out[foot] = topic
    missing = [f for f in feet if f not in out]
    if missing:
        raise ValueError(f"foot_wrench_topics: no topic for the feet {missing} (every foot needs one)")
    return out


def output_frame_warning(desc: Any, params: Mapping[str, Any]) -> str:
    """The warning when the TF child frame of the node parameters ``params`` (``tf_child_frame``, else
    ``base_frame``) names no frame of ``desc`` (``RobotDescription``) while ``tf_child_frame`` is left empty: e.g.
    ``base_frame:=base_link`` (REP-105's name) on a description whose base link is ``base`` or ``trunk``. The TF
    ``odom -> base_link`` then does not connect to the robot's tree, which robot_state_publisher publishes from the
    description's base link; "" otherwise (an explicit ``tf_child_frame`` such as ``base_rse`` is meant to be apart,
    to run beside another estimator). The node logs it at start, replay prints it."""
    base = str(params.get("base_frame", "") or "")
    if not base or str(params.get("tf_child_frame", "") or "") or base in desc.graph:
        return ""
    link = desc.base_link
    return (
        f"base_frame {base!r} is not a frame of the robot description (its base link is {link!r}): the TF "
        f"odom -> {base} will not connect to the robot's TF tree, which robot_state_publisher publishes from "
        f"{link!r} (RViz shows the robot model apart from the odometry). Fix: leave base_frame empty (the base link "
        f"{link!r}) or set base_frame:={link}; or, to keep the name {base!r}, add to the description a link {base!r} "
        f"with a fixed joint to {link!r}"
    )


def _default(name: str) -> Any:
    return NODE_PARAMS[name].default


@dataclass(frozen=True)
class AdapterSettings:
    """The adapter parameters of the node: the rows of ``io.node_params.NODE_PARAMS`` marked ``adapter`` (names,
    defaults and meaning from there; README.md, "Parameters"; a test checks that the fields are those rows).

    Attributes:
        imu_frame_id: accepted ``header.frame_id`` of IMU samples; "" = the names of the description's IMU
            frame (``ImuSpec.accepted_frame_ids``); "*" = any.
        max_time_gap_s: s, an IMU stamp further ahead of the previous one than this resets the filter.
        odometry_rate_hz: Hz, maximum rate of odometry and TF (0 = every estimate).
        contacts_rate_hz: Hz, maximum rate of wrenches and contact states (0 = every joint update).
    """

    imu_frame_id: str = _default("imu_frame_id")
    max_time_gap_s: float = _default("max_time_gap_s")
    odometry_rate_hz: float = _default("odometry_rate_hz")
    contacts_rate_hz: float = _default("contacts_rate_hz")

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AdapterSettings:
        """From a node-parameter mapping (other keys are ignored, missing ones take the defaults).

        Raises:
            ValueError: a rate or gap that is not a number (the message names the parameter and the value);
                ranges are checked by the callers (the node's descriptors, replay's ``check_node_params``).
        """
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in params.items() if k in names}
        for k, v in values.items():
            if NODE_PARAMS[k].type == "double":
                if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise ValueError(f"{k} must be a number, got {v!r}")
                values[k] = float(v)
            else:
                values[k] = str(v)
        return cls(**values)


#: Stable keys of the lost-sample counts (``EstimatorStream.lost``), one per input stream.
LOST_KEYS: tuple[str, ...] = ("imu_lost", "joint_states_lost", "foot_forces_lost", "foot_wrenches_lost")
#: Core events of level warn or error that refuse no sample (the sample was used): the node logs them but does
#: not count them as rejected samples (``rejected.<cause>``); resets are counted as resets. ``imu_gap`` (a stamp
#: difference above ``ekf.max_dt_s``: the sample is used, the filter re-anchors its clock) is what samples lost
#: before the node (a queue overflowing under CPU load) look like: they are counted as losses (``imu_lost``).
NOT_REJECTIONS: frozenset[str] = frozenset(
    {
        "reset",
        "filter_diverged",
        "initialized_moving",
        "contacts_from_kinematics",
        "contact_source_unavailable",
        "foot_wrench_stale",
        "contact_schedule_disagrees",
        "imu_gap",
        "contact_source",
    }
)
#: Number of positive stamp differences whose median is a stream's period (recomputed every window).
LOSS_WINDOW = 15

_LOSS_HINT = "raise qos_depth, lower the input rate, or set odometry_rate_hz/contacts_rate_hz"


class StampLossCounter:
    """Lost samples of one stream, from its stamps (module doc). ``check`` costs a few hundred ns.

    Args:
        key: the stable count key (``imu_lost`` ...).
        what: the stream in messages ("IMU", "joint").

    Attributes:
        period_ns: the current period estimate (0 until ``LOSS_WINDOW`` differences were seen).
        gap_ns: the stamp difference of the last loss counted (0 before any).
        lost: lost samples so far.
    """

    __slots__ = ("_diffs", "_last", "_threshold_ns", "_unstamped", "gap_ns", "key", "lost", "period_ns", "what")

    def __init__(self, key: str, what: str) -> None:
        self.key = key
        self.what = what
        self.lost = 0
        self.period_ns = 0
        self.gap_ns = 0
        self._threshold_ns = 0  # 1.5 periods; 0 = no period yet
        self._last: int | None = None
        self._diffs: list[int] = []
        self._unstamped = 0  # samples without a usable stamp since the last stamp: arrived, so not lost

    def arrived_unstamped(self) -> None:
        """A sample without a usable stamp arrived (zero, negative, unreadable): one fewer lost in the next gap."""
        self._unstamped += 1

    def check(self, stamp_ns: int, max_gap_ns: int, backwards_tolerance_ns: int) -> int:
        """Take one stamp; return the number of samples lost just before it (usually 0)."""
        last = self._last
        unstamped = self._unstamped
        if unstamped:
            self._unstamped = 0
        if last is None:
            self._last = stamp_ns
            return 0
        d = stamp_ns - last
        if d <= 0:
            if d < -backwards_tolerance_ns:
                self._last = stamp_ns  # time went back (a looping bag): start again from here
            else:
                # a repeated or slightly older stamp (the core refuses the sample): it arrived, perhaps in place of
                # a sample whose own stamp never came, so it counts like an unstamped one against the next gap
                self._unstamped = unstamped + 1
            return 0
        self._last = stamp_ns
        if d > max_gap_ns:
            return 0  # a gap in the data (stamp_gap), not a loss
        diffs = self._diffs
        diffs.append(d)
        if len(diffs) >= LOSS_WINDOW:
            diffs.sort()
            self.period_ns = period = diffs[LOSS_WINDOW // 2]
            self._threshold_ns = period + (period >> 1)
            diffs.clear()
        threshold = self._threshold_ns
        if threshold and d > threshold:
            n = round(d / self.period_ns) - 1 - unstamped
            if n <= 0:
                return 0
            self.lost += n
            self.gap_ns = d
            return n
        return 0

    def note(self, n: int, stamp_ns: int) -> Event:
        """The warning for ``n`` samples lost before ``stamp_ns``: the gap in the stamps, and its possible causes
        (the loss is inferred from the stamps alone, so a sender whose stamps jitter looks the same)."""
        return Event(
            self.key,
            f"{n} {self.what} samples lost before stamp {stamp_ns // NS_PER_S}.{stamp_ns % NS_PER_S:09d} s: a gap "
            f"of {self.gap_ns / 1e6:.3g} ms in the stamps, {self.period_ns / 1e6:.3g} ms apart usually "
            f"({self.lost} so far). Possible causes: the input queue overflows ({_LOSS_HINT}), the sender or the "
            "link drops samples, or the sender's stamps jitter (stamped when published instead of when measured)",
        )


def _stamp_s(stamp_ns: int) -> str:
    """A stamp in ns as seconds with 9 decimals, exact."""
    sec, nsec = divmod(int(stamp_ns), NS_PER_S)
    return f"{sec}.{nsec:09d}"


def _period_ns(rate_hz: float) -> int:
    return round(NS_PER_S / rate_hz) if rate_hz > 0 else 0


class Outputs(NamedTuple):
    """What one input produced.

    Attributes:
        estimate: the (finite) estimate the core returned, or None.
        buf: its :func:`pack_estimate` buffer (None without an estimate).
        odometry: publish odometry and TF for ``estimate``.
        contacts: publish wrenches and contact states for ``estimate`` (only when it has feet).
        notes: what to log, in order: the adapter's own causes (``Event`` with a cause key) and the core's
            events; empty on the normal path.
        sample: the sample that reached the core (after the frame alias), None when the input was skipped.
    """

    estimate: Estimate | None = None
    buf: np.ndarray | None = None
    odometry: bool = False
    contacts: bool = False
    notes: tuple[Event, ...] | list[Event] = ()
    sample: Any = None


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
        self, estimator: Any, description: Any, settings: Any, adapter: AdapterSettings, *, strict: bool = False
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

    def set_core(self, estimator: Any, settings: Any) -> None:
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

    def _check_loss_of_msg(self, counter: StampLossCounter, msg: Any) -> list[Event] | None:
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
            f"stamped {_stamp_s(stamp_ns)} s, {abs(d) / NS_PER_S:.3f} s {'after' if d > 0 else 'before'} the last IMU "
            f"sample ({_stamp_s(clock)} s), more than max_time_gap_s = {self.adapter.max_time_gap_s:g} s"
        )
        if d > 0:
            return self._skip(
                "stamp_future",
                f"{what} sample skipped: {where}: is the clock of its driver ahead (the IMU's is the estimator's), "
                "is it a message from before a reset (a looping bag), or has the IMU stopped?",
            )
        return self._skip(
            "stamp_past",
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

    def on_imu_msg(self, msg: Any) -> Outputs:
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

    def on_imu(self, sample: Any) -> Outputs:
        """An ``ImuSample``."""
        stamp_ns = sample.stamp_ns
        if stamp_ns <= 0:
            self._imu_loss.arrived_unstamped()
            return self._skip("stamp_zero", "IMU sample skipped: zero or negative stamp")
        notes = self._check_loss(self._imu_loss, stamp_ns) or []  # also for a sample skipped below
        frames = self.imu_frames
        if frames is not None and sample.frame_id not in frames:
            why = ""
            if frames is self._imu_frames_of_description and self._imu_frame_mismatch is not None:
                why = self._imu_frame_mismatch(sample.frame_id)  # e.g. S rotated 90 deg in the lumped base link
            return self._skip(
                "imu_frame_id",
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
                self._reset(f"gap of {dt_ns / NS_PER_S:.3f} s in the IMU stamps", "stamp_gap", notes)
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

    def on_joints_msg(self, msg: Any) -> Outputs:
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

    def on_joints(self, sample: Any) -> Outputs:
        """A ``JointSample``."""
        stamp_ns = sample.stamp_ns
        if stamp_ns <= 0:
            self._joint_loss.arrived_unstamped()
            return self._skip("stamp_zero", "joint sample skipped: zero or negative stamp")
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
                    "joint_missing_names", f"joint sample skipped: missing joints {sorted(missing)}{extra}", notes=notes
                )
            if unknown and not self._ignore_unknown_joints:
                return self._skip(
                    "joint_unknown_names",
                    f"joint sample skipped: joints {sorted(unknown)} are not in the model (set ignore_unknown_joints "
                    "to use the model's joints of such messages)",
                    notes=notes,
                )
            self._checked_joint_names = sample.names
        if sample.effort is None and self._needs_effort:
            return self._skip(
                "joint_effort_missing",
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
        """The core's contact source changed to ``source``: the note to log, if any (module doc)."""
        before, self.contact_source = self.contact_source, source
        configured = str(getattr(self.settings.contact, "source", "auto"))
        if source == "kinematic":
            if before not in ("", "none", "kinematic"):
                why = {
                    "torque": "the joint states carry no efforts any more",
                    "foot_sensor": "the foot sensors are silent or stale (contact.foot_sensor_timeout_s)",
                    "foot_wrench": "the foot wrenches are silent or stale",
                    "schedule": "the contact schedule is stale (contact.schedule_timeout_s)",
                }.get(before, f"{before!r} has no data any more")
                text = f"{why}: contacts now come from the foot heights and speeds (kinematic), not from {before!r}"
            elif configured not in ("auto", "kinematic"):
                text = f"contact.source is {configured!r} but it has no data: contacts come from the foot heights and "
                text += "speeds (kinematic fallback)"
            else:
                return None  # contact.source auto on a robot without efforts or foot sensors: the core says so once
            self.contact_source_problem = (
                f"{text}; no foot force is estimated, so contact_wrench/<foot> is not published meanwhile, and the "
                "kinematic contacts are unreliable for gaits with low foot clearance"
            )
            self.events["contact_source"] += 1
            return Event("contact_source", self.contact_source_problem)
        if self.contact_source_problem:
            self.contact_source_problem = ""
            self.events["contact_source"] += 1
            return Event("contact_source", f"contacts come from {source!r} again", "info")
        return None

    def on_foot_forces_msg(self, msg: Any) -> Outputs:
        """Foot sensors as ``sensor_msgs/JointState`` (name = feet, effort = values)."""
        try:
            sample = foot_force_sample_from_msg(msg)
        except Exception as exc:  # any conversion failure, also offline (as before the extraction)
            notes = self._check_loss_of_msg(self._foot_loss, msg)
            return self._skip(FOOT_FORCE_BAD_MESSAGE, f"foot-force sample skipped: {exc}", notes=notes)
        return self.on_foot_forces(sample)

    def on_foot_forces(self, sample: Any) -> Outputs:
        """A ``FootForceSample``."""
        stamp_ns = sample.stamp_ns
        if stamp_ns <= 0:  # as IMU and joint samples: a sensor without a clock; never a contact source
            self._foot_loss.arrived_unstamped()
            return self._skip("stamp_zero", "foot-force sample skipped: zero or negative stamp")
        off = self.off_imu_clock("foot-force", stamp_ns, self._foot_loss)
        if off is not None:
            return off
        notes = self._check_loss(self._foot_loss, stamp_ns)
        return self._step(self.estimator.add_foot_forces, sample, notes)

    def on_foot_wrench_msg(self, msg: Any, foot: str) -> Outputs:
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

    def on_foot_wrench(self, sample: Any) -> Outputs:
        """A ``FootWrenchSample``."""
        counter = self._foot_wrench_loss(sample.foot)
        if sample.stamp_ns <= 0:
            counter.arrived_unstamped()
            return self._skip("stamp_zero", f"foot wrench sample of {sample.foot} skipped: zero or negative stamp")
        off = self.off_imu_clock(f"foot wrench ({sample.foot})", sample.stamp_ns, counter)
        if off is not None:
            return off
        notes = self._check_loss(counter, sample.stamp_ns)
        return self._step(self.estimator.add_foot_wrench, sample, notes)

    def on_contact_schedule_msg(self, msg: Any) -> Outputs:
        """A contact schedule as ``sensor_msgs/JointState`` (name = feet, position = 1 stance / 0 swing)."""
        try:
            sample = contact_schedule_from_msg(msg)
        except Exception as exc:
            return self._skip(SCHEDULE_BAD_MESSAGE, f"contact schedule skipped: {exc}")
        return self.on_contact_schedule(sample)

    def on_contact_schedule(self, sample: Any) -> Outputs:
        """A ``ContactScheduleSample``."""
        if sample.stamp_ns <= 0:
            return self._skip("stamp_zero", "contact schedule skipped: zero or negative stamp")
        off = self.off_imu_clock("contact schedule", sample.stamp_ns)
        if off is not None:
            return off
        return self._step(self.estimator.add_contact_schedule, sample, None)

    # ---------------------------------------------------------------------------------------- the step

    def _step(self, add: Any, sample: Any, notes: list[Event] | None) -> Outputs:
        """Feed one sample to the core, collect its events, decide what to output."""
        est = self.estimator
        if self.strict:
            estimate = add(sample)
        else:
            try:
                estimate = add(sample)
            except Exception as exc:  # the node never dies on one sample
                self.rejected["core_error"] += 1
                if notes is None:
                    notes = []
                notes.append(
                    Event("core_error", f"estimator failed on a sample ({type(exc).__name__}: {exc})", "error")
                )
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
            self._reset("the estimate is not finite", "estimate_not_finite", notes)
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
        if estimate.feet:
            period = self.contacts_period_ns
            slot = stamp_ns // period if period else None
            if slot is None or slot != self.contacts_slot:  # contacts_rate_hz
                self.contacts_slot = slot
                contacts = True
        # tuple.__new__ directly: a third of the cost of the NamedTuple constructor, on every estimate
        return _new_tuple(Outputs, (estimate, buf, odometry, contacts, notes or (), sample))


_new_tuple = tuple.__new__


__all__ = [
    "DEFAULT_FOOT_WRENCH_TOPICS",
    "LOST_KEYS",
    "AdapterSettings",
    "EstimatorStream",
    "Outputs",
    "StampLossCounter",
    "foot_wrench_topics",
    "output_frame_problem",
    "output_frame_warning",
    "pack_estimate",
]
