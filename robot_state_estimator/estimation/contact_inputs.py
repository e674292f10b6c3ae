"""Contact inputs besides the joint torques: per-foot wrench sensors and a controller's contact schedule.

:class:`FootWrenches` keeps the last wrench of each foot's force/torque sensor (``geometry_msgs/WrenchStamped``
as ros2_control's force_torque_sensor_broadcaster publishes it: any frame of the description) and expresses it
in the foot frame at the configuration of the joint sample the contact decision is made for. A wrench
``w_in_sensor = (f_in_sensor, m_in_sensor)`` expressed in the sensor frame S, moment about S's origin, becomes in the
foot frame F (moment about F's origin; Featherstone 2008 eq. 2.25, pinocchio ``SE3.act`` on a ``Force``)::

    f_in_foot = R_foot_sensor f_in_sensor
    m_in_foot = R_foot_sensor m_in_sensor + p_foot_sensor x f_in_foot
    X_foot_sensor = X_base_foot^-1 X_base_sensor   (base at the identity, pinocchio)

The wrench is the one the ground (and whatever lies between the ground and the sensor) exerts on the foot, so a
foot standing on level ground reads a positive world-vertical force. Contacts from it are the vertical component
of ``R_world_base R_base_foot f_in_foot`` through the same Schmitt trigger with debounce as the other foot-sensor
path (:class:`~robot_state_estimator.estimation.contact.ContactDetector`), with the force thresholds in N
(``contact.on_threshold`` / ``off_threshold`` and ``threshold_mode``).

:class:`ContactSchedule` keeps a controller's contact schedule (explicitly named feet, a boolean per foot): the
schedule used for a joint sample at stamp t is the latest one stamped at or before t, if it is at most
``contact.schedule_timeout_s`` older than t (else the schedule is stale and the next source is used). It also
tracks disagreements between the schedule and the force-based contact state (see
:meth:`ContactSchedule.compare`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.samples import ContactScheduleSample, FootWrenchSample

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: At most this many schedule samples are kept (ahead of the joint stamps, or late ones).
SCHEDULE_HISTORY = 256


class FootWrenches:
    """The last wrench sample of each foot, expressed in the foot frame on request.

    Args:
        model: the estimator's pinocchio model (its frames are the frames a wrench may be expressed in).
        foot_frames: the feet, in the estimator's order.

    Attributes:
        stamp_ns: (n_feet,) int64, stamp of each foot's last accepted sample (-1: none yet).
        started: a wrench sample has been accepted since the last :meth:`clear`.
    """

    def __init__(self, model: pin.Model, foot_frames: Sequence[str]) -> None:
        self.model = model
        self.feet = tuple(foot_frames)
        self._index = {name: i for i, name in enumerate(self.feet)}
        self._foot_ids = [model.getFrameId(f) for f in self.feet]
        n = len(self.feet)
        self._wrench = np.zeros((n, 6))
        self._frame_ids = np.zeros(n, dtype=np.intp)
        self.stamp_ns = np.full(n, -1, dtype=np.int64)
        self._frame_cache: dict[str, int] = {}
        self.started = False

    def clear(self) -> None:
        """Forget every sample (after a reset: wrenches must arrive again)."""
        self.stamp_ns[:] = -1
        self.started = False

    def frame_id_of(self, name: str) -> int | None:
        """The pinocchio frame id of a frame of the description (None: not one; ``universe`` is not a robot frame)."""
        fid = self._frame_cache.get(name)
        if fid is None:
            if not name or name == "universe" or not self.model.existFrame(name):
                return None
            fid = self._frame_cache[name] = int(self.model.getFrameId(name))
        return fid

    def add(self, sample: FootWrenchSample) -> tuple[str, str] | None:
        """Keep one sample; ``(event key, message)`` when it is refused (nothing kept), else None.

        Keys: ``unknown_foot`` (not a foot of the estimator), ``foot_wrench_shape``, ``foot_wrench_nan``,
        ``foot_wrench_unknown_frame`` (``frame_id`` empty or not a frame of the description),
        ``foot_wrench_out_of_order`` (older than the foot's last sample).
        """
        i = self._index.get(sample.foot)
        if i is None:
            return "unknown_foot", f"foot wrench for {sample.foot!r}, which is not a foot ({list(self.feet)}); skipped"
        w = np.asarray(sample.wrench, dtype=float)
        if w.shape != (6,):
            return "foot_wrench_shape", f"foot wrench of {sample.foot} has shape {w.shape}, expected (6,); skipped"
        if not np.isfinite(w).all():
            return "foot_wrench_nan", f"foot wrench of {sample.foot} at {sample.stamp_ns} ns has NaN/Inf; skipped"
        fid = self.frame_id_of(sample.frame_id)
        if fid is None:
            return (
                "foot_wrench_unknown_frame",
                f"foot wrench of {sample.foot}: header.frame_id {sample.frame_id!r} is not a frame of the robot "
                "description (the wrench must be expressed in a link or frame of the robot, e.g. the foot or its "
                "force/torque sensor frame); skipped",
            )
        stamp = int(sample.stamp_ns)
        if stamp < self.stamp_ns[i]:
            return (
                "foot_wrench_out_of_order",
                f"foot wrench of {sample.foot} at {stamp} ns is older than its last one; skipped",
            )
        self._wrench[i] = w
        self._frame_ids[i] = fid
        self.stamp_ns[i] = stamp
        self.started = True
        return None

    def stale_feet(self, stamp_ns: int, timeout_ns: int) -> list[int]:
        """Indices of the feet without a sample within ``timeout_ns`` of ``stamp_ns`` (either side)."""
        s = self.stamp_ns
        return np.flatnonzero((s < 0) | (np.abs(stamp_ns - s) > timeout_ns)).tolist()

    def in_foot_frames(
        self, data: pin.Data, X_base_foot: FloatArray, R_world_base: FloatArray, wrench_in_foot: FloatArray,
        force_in_world: FloatArray,
    ) -> None:  # fmt: skip
        """Write each foot's last wrench in its foot frame (about its origin) and its force in world axes.

        Args:
            data: pinocchio data after forward kinematics of this joint configuration, base at the identity
                (``LegKinematics.data`` after ``update``); the sensor frames' placements are updated in it.
            X_base_foot: (n_feet, 4, 4) foot placements in B at that configuration.
            R_world_base: (3, 3) the filter's attitude.
            wrench_in_foot: (n_feet, 6) out, [force N, torque N m] in each foot frame.
            force_in_world: (n_feet, 3) out, N, world axes.
        """
        model = self.model
        for i, fid in enumerate(self._frame_ids.tolist()):
            w = self._wrench[i]
            X_base_foot_i = X_base_foot[i]
            if fid == self._foot_ids[i]:
                wrench_in_foot[i] = w
            else:
                X_base_sensor = pin.updateFramePlacement(model, data, fid)
                X_foot_sensor = pin.SE3(X_base_foot_i[:3, :3].copy(), X_base_foot_i[:3, 3].copy()).actInv(X_base_sensor)
                wrench_in_foot[i] = X_foot_sensor.act(pin.Force(w[:3], w[3:])).vector
            force_in_world[i] = R_world_base @ (X_base_foot_i[:3, :3] @ wrench_in_foot[i, :3])


class ContactSchedule:
    """A controller's contact schedule, looked up by joint stamp (module docstring).

    Args:
        foot_frames: the feet, in the estimator's order.
        timeout_s: s, the schedule for a joint stamp t is the latest stamped at or before t, and at most this old.
        disagreement_s: s, a disagreement with the force-based contacts that lasts this long counts once.

    Attributes:
        disagreement_steps: (n_feet,) joint steps with the schedule and the force-based contacts disagreeing.
        disagreements: (n_feet,) disagreements that lasted at least ``disagreement_s`` (episodes).
    """

    def __init__(self, foot_frames: Sequence[str], *, timeout_s: float, disagreement_s: float) -> None:
        self.feet = tuple(foot_frames)
        self._index = {name: i for i, name in enumerate(self.feet)}
        self.timeout_ns = round(timeout_s * 1e9)
        self.disagreement_ns = round(disagreement_s * 1e9)
        n = len(self.feet)
        self.disagreement_steps = np.zeros(n, dtype=np.int64)
        self.disagreements = np.zeros(n, dtype=np.int64)
        self.clear()

    def clear(self) -> None:
        """Forget the schedules (after a reset) and the running disagreements (not their counts)."""
        self._stamps: list[int] = []
        self._states: list[BoolArray] = []
        n = len(self.feet)
        self._disagree_since = np.full(n, -1, dtype=np.int64)  # stamp a running disagreement began (-1: none)
        self._counted = np.zeros(n, dtype=bool)  # the running disagreement was counted
        self.stale = True  # no usable schedule at the last lookup
        self.started = False

    def add(self, sample: ContactScheduleSample) -> tuple[str, str] | None:
        """Keep one schedule; ``(event key, message)`` when it is refused, else None.

        Keys: ``schedule_shape`` (as many booleans as names), ``schedule_duplicate_feet``,
        ``schedule_unknown_feet`` (names that are no foot of the robot; the message lists its feet),
        ``schedule_missing_feet`` (a partial schedule: it must name every foot).
        """
        names = tuple(sample.feet)
        values = tuple(sample.in_contact)
        if len(values) != len(names):
            return "schedule_shape", f"contact schedule has {len(names)} feet but {len(values)} states; skipped"
        if len(set(names)) != len(names):
            dup = sorted({x for x in names if names.count(x) > 1})
            return "schedule_duplicate_feet", f"contact schedule names feet {dup} twice; skipped"
        unknown = [x for x in names if x not in self._index]
        if unknown:
            what = "names no foot of the robot" if len(unknown) == len(names) else "names unknown feet"
            return (
                "schedule_unknown_feet",
                f"contact schedule {what}: {unknown}; the robot's feet are {list(self.feet)}; skipped",
            )
        missing = [f for f in self.feet if f not in set(names)]
        if missing:
            return (
                "schedule_missing_feet",
                f"contact schedule is partial: it lacks the feet {missing} (a schedule names every foot); skipped",
            )
        state = np.zeros(len(self.feet), dtype=bool)
        for name, value in zip(names, values):
            state[self._index[name]] = bool(value)
        stamp = int(sample.stamp_ns)
        k = bisect.bisect_right(self._stamps, stamp)  # a late schedule goes into its place
        self._stamps.insert(k, stamp)
        self._states.insert(k, state)
        if len(self._stamps) > SCHEDULE_HISTORY:
            del self._stamps[0], self._states[0]
        self.started = True
        return None

    def at(self, stamp_ns: int) -> tuple[BoolArray | None, int | None]:
        """The schedule for a joint sample at ``stamp_ns``: ``(states, age_ns)``; ``states`` None when none is
        usable (none at or before the stamp: ``age_ns`` None; or the latest is older than the timeout). Older
        schedules than the one returned are dropped (joint stamps only increase)."""
        k = bisect.bisect_right(self._stamps, stamp_ns) - 1
        if k < 0:
            self.stale = True
            return None, None
        if k:
            del self._stamps[:k], self._states[:k]
        age = stamp_ns - self._stamps[0]
        if age > self.timeout_ns:
            self.stale = True
            return None, age
        self.stale = False
        return self._states[0], age

    def compare(self, stamp_ns: int, schedule: BoolArray, measured: BoolArray) -> list[int]:
        """Count disagreements between the schedule and the force-based contacts ``measured`` at one joint step.

        Returns:
            The feet whose disagreement has just lasted ``disagreement_s`` (each such episode counted once in
            ``disagreements``; ``disagreement_steps`` counts every step).
        """
        differ = schedule != measured
        self.disagreement_steps += differ
        since = self._disagree_since
        new: list[int] = []
        for i in np.flatnonzero(differ).tolist():
            if since[i] < 0:
                since[i] = stamp_ns
            if not self._counted[i] and stamp_ns - since[i] >= self.disagreement_ns:
                self._counted[i] = True
                self.disagreements[i] += 1
                new.append(i)
        agree = ~differ
        since[agree] = -1
        self._counted[agree] = False
        return new
