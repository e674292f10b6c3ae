"""Leg odometry: a joint sample's step at the filter time: the joints made ready (:mod:`.joint_input`), the
kinematics (pinocchio), the contact source (:mod:`.contact_source`), the stance feet's leg-odometry update of the
filter (:mod:`.ekf.measurements`; flat feet also their orientation, :mod:`.flat_feet`), the static bias lock, the slip
report (:mod:`.slip`) and the per-foot states.

Cost per sample (the 1 kHz path): with the compiled backend a joint sample with efforts and the torque contact source
is one compiled call, the backend's joint step (:class:`~.ekf.backends.base.JointStep`, ``prepare_and_run``: the joint
velocity's regular step, gather, check, the positions into the kinematics' configuration; then the foot placements and
Jacobians, the centre-of-mass Jacobian or the inverse dynamics computed from the constants pinocchio extracted once,
stored in the kinematics' buffers; forces, contact trigger, the stance feet's leg terms and filter update, outputs),
with the estimator's arrays bound to it once. Around it (:meth:`LegOdometry.usual_step`): the stamp checks, the
contact pattern (one read-only array per pattern), the slip report only when the step reports a stance foot above its
threshold or a foot is watched, and one object that makes the per-foot states when read; the estimate's numbers are
the step's buffer.
Other joint samples (no efforts, another contact source, a held one) take the per-part operations (``gather_joints``,
``joint_velocity_step``, pinocchio's kinematics, ``torque_contacts``, ``BaseEkf.update_stance_feet``, the outputs).
A sample that is not the common case (a new name order, a bad value, a gap, the trigger's first sample, a singular
leg, a stacked innovation covariance that is not positive definite), or the numpy backend, takes the reference path,
which also reports the events. The per-foot states (and the update results) are made when first read.
"""

from __future__ import annotations

import copy
import math
from collections import deque
from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import FOOT_FIELDS, FOOT_STRIDE, OUTPUT_SIZE, PUBLISHED_SIZE
from robot_state_estimator.common.samples import FootState, JointSample, foot_states
from robot_state_estimator.estimation.contact import ContactForceEstimator, kinematic_clearance
from robot_state_estimator.estimation.contact_source import ContactSource
from robot_state_estimator.estimation.ekf.filter import BaseEkf
from robot_state_estimator.estimation.ekf.layout import (
    JOINT_ACCEPTED_SHIFT,
    JOINT_FORCES_FAILED,
    JOINT_HIGH_NIS_SHIFT,
    JOINT_MAX_FEET,
    JOINT_NOT_FINITE_SHIFT,
    joint_rows_offset,
)
from robot_state_estimator.estimation.ekf.measurements import UpdateResult, leg_results
from robot_state_estimator.estimation.events import EventLog
from robot_state_estimator.estimation.flat_feet import flat_feet_mask, rotation_update
from robot_state_estimator.estimation.joint_input import JointInput, PreparedJoints
from robot_state_estimator.estimation.kinematics import LegKinematics
from robot_state_estimator.estimation.settings import EstimatorSettings
from robot_state_estimator.estimation.slip import SlipDetector

FloatArray = NDArray[np.float64]

_NS = 1_000_000_000
_EMPTY = np.empty(0)
_MASK32 = 0xFFFFFFFF
_new_object = object.__new__
_HIGH_NIS, _NOT_FINITE = 1 << JOINT_HIGH_NIS_SHIFT, 1 << JOINT_NOT_FINITE_SHIFT
_FORCE, _WRENCH = FOOT_FIELDS["force_in_world"], FOOT_FIELDS["wrench_in_foot"]


class FeetOfStep:
    """The per-foot states of one joint step, made on first request from its per-foot numbers ``vector``
    (``common.output_layout.FOOT_FIELDS`` per foot: ``Estimate.feet_vector``), its contacts and its stance feet's gate
    results (arrays and lists the step no longer changes)."""

    __slots__ = ("_args", "_feet", "vector")

    def __init__(
        self,
        names: tuple[str, ...],
        contacts: NDArray[np.bool_],
        vector: FloatArray,
        stance: list[int],
        accepted: list[bool],
        nis: list[float],
    ) -> None:
        self.vector = vector
        self._args = (names, contacts, stance, accepted, nis)
        self._feet: tuple[FootState, ...] | None = None

    def __call__(self) -> tuple[FootState, ...]:
        if self._feet is None:
            names, contacts, stance, accepted_stance, nis_stance = self._args
            n = len(names)
            accepted = [False] * n
            nis = [math.nan] * n
            for i, a, e in zip(stance, accepted_stance, nis_stance):
                accepted[i] = a
                nis[i] = e
            blocks = self.vector.reshape(n, FOOT_STRIDE)
            self._feet = foot_states(names, contacts.tolist(), blocks[:, _FORCE], blocks[:, _WRENCH], accepted, nis)
        return self._feet


class FeetOfJointStep:
    """The per-foot states of the backend's one-call joint step, made on first request from its buffer (the per-foot
    numbers and the stance feet's NIS; the step no longer changes it) as :class:`FeetOfStep`.

    ``args``: (names, the step's buffer, the stance feet's indices, the NIS gate, the number of stance feet the step
    accepted). The joint step makes one per sample without ``__init__`` (``object.__new__``, then ``args``: half the
    cost)."""

    __slots__ = ("_feet", "args")
    _feet: tuple[FootState, ...]
    args: tuple[tuple[str, ...], FloatArray, list[int], float, int]

    def __init__(
        self, names: tuple[str, ...], buf: FloatArray, stance: list[int], gate: float, n_accepted: int
    ) -> None:
        self.args = (names, buf, stance, gate, n_accepted)

    @property
    def vector(self) -> FloatArray:
        """The per-foot numbers (``Estimate.feet_vector``): a view of the step's buffer."""
        args = self.args
        return args[1][OUTPUT_SIZE : OUTPUT_SIZE + FOOT_STRIDE * len(args[0])]

    def published_of(self, output: FloatArray) -> FloatArray | None:
        """``Estimate.published_vector`` of an estimate whose output vector is ``output``: when that is the step's
        buffer, its published numbers and the per-foot numbers in one copy (:func:`_published_index`); else None."""
        names, buf = self.args[:2]
        if output is not buf:
            return None
        return buf[_published_index(len(names))]

    def stance_summary(self) -> tuple[int, tuple[str, ...]]:
        """``Estimate.stance_summary`` without making the per-foot states: the number of feet in contact and the names
        of those whose update the gate refused (their NIS tested as :meth:`__call__` does, only when the step accepted
        fewer than all)."""
        names, buf, stance, gate, n_accepted = self.args
        k = len(stance)
        if n_accepted >= k:
            return k, ()
        o = OUTPUT_SIZE + FOOT_STRIDE * len(names) + 12 * k  # the stance feet's NIS, as in __call__
        nis = buf[o : o + k].tolist()
        return k, tuple(names[i] for i, e in zip(stance, nis) if not (math.isfinite(e) and (gate <= 0.0 or e <= gate)))

    def __call__(self) -> tuple[FootState, ...]:
        try:
            return self._feet
        except AttributeError:  # (not made yet)
            names, buf, stance, gate, _ = self.args
            n = len(names)
            k = len(stance)
            blocks = self.vector.reshape(n, FOOT_STRIDE)
            o = OUTPUT_SIZE + FOOT_STRIDE * n + 12 * k  # the stance feet's NIS: the end of the leg update's output
            contacts = [False] * n
            accepted = [False] * n
            nis = [math.nan] * n
            for i, e in zip(stance, buf[o : o + k].tolist()):
                contacts[i] = True
                accepted[i] = math.isfinite(e) and (gate <= 0.0 or e <= gate)
                nis[i] = e
            self._feet = foot_states(names, contacts, blocks[:, _FORCE], blocks[:, _WRENCH], accepted, nis)
        return self._feet


_PUBLISHED_INDEX: dict[int, NDArray[np.intp]] = {}


def _published_index(n_feet: int) -> NDArray[np.intp]:
    """Where a joint step's buffer holds ``Estimate.published_vector``'s numbers for ``n_feet`` feet: its first
    ``PUBLISHED_SIZE`` numbers, then the per-foot numbers after the output vector (one array per number of feet,
    read-only)."""
    index = _PUBLISHED_INDEX.get(n_feet)
    if index is None:
        index = np.r_[0:PUBLISHED_SIZE, OUTPUT_SIZE : OUTPUT_SIZE + FOOT_STRIDE * n_feet].astype(np.intp)
        index.flags.writeable = False
        _PUBLISHED_INDEX[n_feet] = index
    return index


#: the per-foot states of a joint step: made, or made when first read
StepFeet = tuple[FootState, ...] | FeetOfStep | FeetOfJointStep


def foot_radii_in_use(settings: EstimatorSettings, n_feet: int, foot_radii: Sequence[float] | None) -> FloatArray:
    """(n_feet,) m, the foot sphere radii in use: ``ekf.foot_radius_m`` when >= 0, else the description's
    ``foot_radii`` (None: point feet, 0).

    Raises:
        ValueError: ``foot_radii`` not ``n_feet`` finite values >= 0.
    """
    rho = settings.ekf.foot_radius_m
    if rho >= 0.0:
        return np.full(n_feet, rho)
    if foot_radii is not None:
        radii = np.array(foot_radii, dtype=float)
        if radii.shape != (n_feet,) or not np.isfinite(radii).all() or (radii < 0.0).any():
            raise ValueError(f"foot_radii must be {n_feet} finite values >= 0, got {foot_radii!r}")
        return radii
    return np.zeros(n_feet)


class LegOdometry:
    """The joint samples' side of the estimator (module docstring).

    Args:
        kin: the leg kinematics (the foot frames, in the order of the per-foot states).
        ekf: the filter it updates.
        settings: estimator settings.
        foot_radii: per foot, m, the description's sphere radii (:func:`foot_radii_in_use`); None = point feet.
        events: the estimator's event log.

    Raises:
        ValueError: bad ``foot_radii``.
    """

    def __init__(
        self,
        kin: LegKinematics,
        ekf: BaseEkf,
        settings: EstimatorSettings,
        *,
        foot_radii: Sequence[float] | None,
        events: EventLog,
    ) -> None:
        backend = kin.backend
        self.kin, self.ekf, self.settings, self.backend = kin, ekf, settings, backend
        self._events = events
        self.foot_frames: tuple[str, ...] = kin.foot_frames
        n_feet = kin.n_feet
        #: (n_feet,) m, the foot sphere radii in use (0 = point foot).
        self.foot_radii = radii = foot_radii_in_use(settings, n_feet, foot_radii)
        self.rolling = bool((radii > 0.0).any())
        cs, es = settings.contact, settings.ekf
        #: (n_feet,) bool, the flat feet: the orientation update too in stance (``ekf.flat_foot_update``)
        self.flat_feet = flat_feet_mask(es.flat_foot_update, self.foot_frames, radii, cs.flat_feet)
        self._any_flat = bool(self.flat_feet.any())
        self.forces = ContactForceEstimator(
            kin, flat_feet=cs.flat_feet, use_full_dynamics=cs.use_full_dynamics, gravity_m_s2=es.gravity_m_s2,
            backend=backend,
        )  # fmt: skip
        self.contact = ContactSource(kin, self.forces, ekf, cs, radii, backend, events)
        self.joint_input = JointInput(tuple(kin.model.names[2:]), settings, kin.configuration, backend, events)
        #: the slip report over the stance feet's leg-update NIS (:mod:`.slip`; episodes per foot, feet slipping now)
        self.slip = SlipDetector(self.foot_frames, es.slip_nis_window_s, es.slip_nis_fraction)
        # The backend's one-call joint step: torque contacts with the point-foot forces (g(q) or the full dynamics),
        # no static bias lock, no flat feet (the orientation update runs after the per-call leg update, _leg_step).
        self.joint_step = None
        if (
            not es.static_bias_lock
            and cs.source in ("torque", "auto")
            and n_feet <= JOINT_MAX_FEET
            and not self._any_flat
        ):
            self.joint_step = backend.joint_step(ekf, kin, self.forces, self.contact.torque_detector, self.joint_input,
                                                 radii, self.rolling, self.slip.threshold)  # fmt: skip
        self._auto_source = cs.source == "auto"
        self._max_delay_s = settings.max_measurement_delay_s
        self._gate = float(es.foot_gate_nis)
        self._leg_offset = OUTPUT_SIZE + FOOT_STRIDE * n_feet  # where the joint step's leg update output starts
        self._stance_by_mask: dict[int, tuple[list[int], list[str], int, int, slice, NDArray[np.bool_]]] = {}
        self._stance_cache: dict[bytes, tuple[NDArray[np.intp], list[int], list[str], FloatArray]] = {}
        #: joint samples ahead of the filter, applied when an IMU sample reaches their stamp
        self.pending: deque[PreparedJoints] = deque()
        # the joint positions and velocities of the last joint sample: own arrays, or (None) the rows of the joint
        # step's buffer ``_joint_buf`` (layout.joint_rows_offset; views made when read)
        self._q_joints: FloatArray | None = np.array(pin.neutral(kin.model)[7:])
        self._qdot_joints: FloatArray | None = np.zeros(kin.n_joints)
        self._joint_buf = _EMPTY
        self._rows_at = joint_rows_offset(n_feet)
        self.rotation_results: list[UpdateResult] = []
        self.reset()

    def reset(self) -> None:
        """Forget the joint samples' state (not the name order, the last contacts and joint positions)."""
        self.last_joint_stamp_ns: int | None = None
        self.have_joints = False
        self.pending.clear()
        self.joint_input.joint_velocity.reset()
        self.contact.reset()
        #: the per-foot states of the last joint step (made when first read)
        self.step_feet: StepFeet = ()
        self._leg_results: list[UpdateResult] | tuple[list[str], FloatArray, float, int] = []
        self.rotation_results = []
        self.slip.clear()

    @property
    def q_joints(self) -> FloatArray:
        """(nj,) rad, the joint positions of the last joint sample, pinocchio order (do not write to it)."""
        q = self._q_joints
        return self._rows(self._joint_buf)[0] if q is None else q

    @q_joints.setter
    def q_joints(self, q: FloatArray) -> None:
        self._q_joints = q

    @property
    def qdot_joints(self) -> FloatArray:
        """(nj,) rad/s, the joint velocities in use of the last joint sample (do not write to it)."""
        qdot = self._qdot_joints
        return self._rows(self._joint_buf)[1] if qdot is None else qdot

    @qdot_joints.setter
    def qdot_joints(self, qdot: FloatArray) -> None:
        self._qdot_joints = qdot

    @property
    def leg_results(self) -> list[UpdateResult]:
        """The results of the last joint step's leg update, one per stance foot (made on first read)."""
        res = self._leg_results
        if isinstance(res, tuple):
            res = self._leg_results = leg_results(*res)
        return res

    def drop_pending(self, stamp: int) -> None:
        """Forget the held joint samples stamped at or before ``stamp`` (at initialisation: not replayed)."""
        while self.pending and self.pending[0].stamp_ns <= stamp:
            self.pending.popleft()

    def usual_step(self, sample: JointSample) -> tuple[int, StepFeet, FloatArray | None] | None:
        """``add_joints`` for the usual sample in the backend's joint step: in order, applied now (at most
        ``max_measurement_delay_s`` behind the filter, nothing held), the names of the last sample, positions,
        efforts (and velocities) of the right lengths and finite, the joint velocity's regular step, the torque
        contact source: the backend's ``prepare_and_run`` (:meth:`JointInput.prepare_for_step`).
        Returns the filter's stamp (ns), the per-foot states and the outputs (as :meth:`apply`), or None, with
        nothing changed, for any other sample (the reference path then handles it, events included)."""
        joint_step = self.joint_step
        if joint_step is None:
            return None
        stamp = int(sample.stamp_ns)
        last = self.last_joint_stamp_ns
        ekf_stamp = self.ekf.stamp_ns
        if (
            last is None
            or stamp <= last
            or ekf_stamp is None
            or stamp > ekf_stamp
            or (ekf_stamp - stamp) / _NS > self._max_delay_s
            or not self.contact.torque_step_applies(self._auto_source)
        ):
            return None
        step = self.joint_input.prepare_for_step(sample, stamp, joint_step)
        if step is None:
            return None
        result, buf = step
        self.last_joint_stamp_ns = stamp
        self.have_joints = True
        self._joint_buf = buf
        self._q_joints = self._qdot_joints = None
        feet, out = self._joint_step_done(result, buf, None, stamp, self.joint_input.measured)
        return ekf_stamp, feet, out

    def apply(self, prepared: PreparedJoints) -> tuple[StepFeet, FloatArray | None]:
        """The kinematic update at the current filter time; returns the per-foot states (made when first read) and
        the outputs after it (the filter's output vector, when the joint step made it and the state is finite;
        else None: the caller makes them)."""
        if self.joint_step is not None:
            step = self._joint_step_of(prepared)
            if step is not None:
                return step
        self.kin.update(prepared.q)
        self.q_joints = prepared.q
        self.qdot_joints = prepared.qdot
        self.contact.select(prepared)
        return self._leg_step(prepared), None

    def _joint_step_of(self, prepared: PreparedJoints) -> tuple[StepFeet, FloatArray | None] | None:
        """:meth:`apply` with the torque contact source in the backend's joint step (:meth:`_run_joint_step`); None
        (nothing done) when the sample is not the usual one (no efforts, velocities not valid, the trigger's first
        sample, foot sensors streaming)."""
        qtau = prepared.qtau
        if qtau is None or not prepared.qdot_valid or not self.contact.torque_step_applies(self._auto_source):
            return None
        self.q_joints = prepared.q
        self.qdot_joints = prepared.qdot
        return self._run_joint_step(qtau, prepared.stamp_ns, prepared.q, prepared.qdot_measured)

    def _run_joint_step(
        self, qtau: FloatArray, stamp: int, q_joints: FloatArray | None, measured: bool
    ) -> tuple[StepFeet, FloatArray | None]:
        """The joint step of a prepared sample ``qtau`` (3, nj) (positions, the velocities in use, efforts; valid
        velocities, ``measured`` when the message's) at the filter time with the torque contact source, in the backend
        (``JointStep.run``: the compiled kinematics of the positions, ``q_joints`` also written into
        ``kin.configuration`` (None: already there); forces, trigger, leg update, outputs). An unusual outcome
        continues on the reference path after pinocchio's kinematics (``kin.update``). Returns the per-foot states
        and the outputs (None when the state is not finite or the reference leg update ran: the caller makes
        them)."""
        assert self.joint_step is not None
        result, buf = self.joint_step.run(qtau, stamp, q_joints, measured)
        return self._joint_step_done(result, buf, qtau, stamp, measured)

    def _joint_step_done(
        self, result: int, buf: FloatArray, qtau: FloatArray | None, stamp: int, measured: bool
    ) -> tuple[StepFeet, FloatArray | None]:
        """The rest of a joint step after the backend's call: its ``result`` (``JointStep.run``) and buffer read, the
        contacts, the slip report, the gate's events and the per-foot states (made when read); an unusual outcome
        continues on the reference path (:meth:`_joint_step_declined`) with the sample's rows ``qtau`` (None: the
        buffer's). The outputs returned are the step's buffer, which starts with them."""
        contact = self.contact
        contact.forces_estimated = True
        if result < 0:
            return self._joint_step_declined(result, self._rows(buf) if qtau is None else qtau, stamp, measured)
        stance = self._stance_by_mask.get(result & _MASK32)
        if stance is None:
            stance = self._stance_by_mask[result & _MASK32] = self._stance_of_mask(result & _MASK32)
        stance_list, names, k, leg_start, nis_slice, contacts = stance
        contact.contacts = contacts  # the trigger's contact state (read-only, one array per pattern)
        contact.source = "torque"
        gate = self._gate
        slip = self.slip
        n_accepted = (result >> JOINT_ACCEPTED_SHIFT) & 0xFFFF
        if result & _HIGH_NIS or slip.active_feet:
            slip_events = slip.update(stamp, stance_list, buf[nis_slice].tolist())
            if slip_events:
                self._events.extend(slip_events)
        else:  # no stance foot above the slip threshold, none watched: the slip report's update records the stamp
            slip.last_stamp_ns = stamp
        if k:
            # the leg update's results, made when read (as BaseEkf.update_stance_feet leaves them)
            self.ekf._pending_results = self._leg_results = (names, buf, gate, leg_start)
            if n_accepted < k:
                for i, e in zip(stance_list, buf[nis_slice].tolist()):
                    if not (math.isfinite(e) and (gate <= 0.0 or e <= gate)):
                        self._events.emit(
                            "foot_gated", f"foot {self.foot_frames[i]} rejected by the gate (NIS {e:.1f})", "info"
                        )
        else:
            self._leg_results = []
        feet = self.step_feet = _new_object(FeetOfJointStep)
        feet.args = (self.foot_frames, buf, stance_list, gate, n_accepted)
        return feet, None if result & _NOT_FINITE else buf

    def _joint_step_declined(
        self, result: int, qtau: FloatArray, stamp: int, measured: bool
    ) -> tuple[StepFeet, FloatArray | None]:
        """A joint step the backend's call left to the reference path (``JOINT_FORCES_FAILED``: nothing done;
        ``JOINT_NOT_PD``: forces and trigger done): pinocchio's kinematics, then the rest as :meth:`apply`."""
        contact = self.contact
        prepared = PreparedJoints(stamp, qtau[0], qtau[1], True, qtau[2], qtau, measured)
        self.kin.update(qtau[0])  # pinocchio's kinematics (and data) for the reference path
        if result == JOINT_FORCES_FAILED:  # nothing done: the reference forces (least squares) and trigger
            contact.select(prepared)
        else:  # JOINT_NOT_PD: forces and trigger done; the reference leg update
            contact.contacts = contact.torque_detector.in_contact.copy()
            contact.source = "torque"
        return self._leg_step(prepared), None

    def _rows(self, buf: FloatArray) -> FloatArray:
        """The (3, nj) rows (positions, velocities in use, efforts) of a joint step's buffer."""
        return buf[self._rows_at :].reshape(3, -1)

    def _stance_of_mask(self, mask: int) -> tuple[list[int], list[str], int, int, slice, NDArray[np.bool_]]:
        """The feet in contact of a joint step's contact mask: indices, names, their number k, where the leg
        update's output (13 k) starts in the step's buffer and where its NIS (the last k of it) are, and the contact
        flags (n_feet,) bool, read-only (shared by every step of that pattern)."""
        n = len(self.foot_frames)
        stance_list = [i for i in range(n) if mask >> i & 1]
        k = len(stance_list)
        o = self._leg_offset
        names = [self.foot_frames[i] for i in stance_list]
        contacts = np.array([bool(mask >> i & 1) for i in range(n)])
        contacts.flags.writeable = False
        return stance_list, names, k, o, slice(o + 12 * k, o + 13 * k), contacts

    def _stance_of(self, contacts: NDArray[np.bool_]) -> tuple[NDArray[np.intp], list[int], list[str], FloatArray]:
        """The stance feet of a contact pattern: indices (array and list), names, radii; cached per pattern
        (at most 2^n_feet of them). The cached arrays are never written."""
        key = contacts.tobytes()
        entry = self._stance_cache.get(key)
        if entry is None:
            stance = np.flatnonzero(contacts)
            stance_list = stance.tolist()
            entry = (stance, stance_list, [self.foot_frames[i] for i in stance_list], self.foot_radii[stance])
            self._stance_cache[key] = entry
        return entry

    def _leg_update(self, prepared: PreparedJoints, stance: NDArray[np.intp], radii: FloatArray,
                    names: list[str]) -> tuple[list[bool], list[float]]:  # fmt: skip
        """The stance feet's leg-odometry update (:mod:`.ekf.measurements`): the backend's one-call
        ``update_stance_feet`` (results made when read), else the terms of ``LegKinematics`` and
        ``BaseEkf.update_leg_velocities``. Returns whether each stance foot was accepted and its NIS."""
        ekf, kin = self.ekf, self.kin
        contacts = self.contact.contacts
        out = None
        if names:
            out = ekf.update_stance_feet(names, contacts, prepared.qdot, self.foot_radii, kin.p_base_foot,
                                         kin.J6_base_foot, rolling=self.rolling)  # fmt: skip
        if out is not None:
            k = len(names)
            gate = self.settings.ekf.foot_gate_nis
            nis = out[12 * k :].tolist()
            self._leg_results = (names, out, gate, 0)
            return [math.isfinite(e) and (gate <= 0.0 or e <= gate) for e in nis], nis
        res: list[UpdateResult] = []
        if names:
            omega = ekf.omega_base_in_base_at_state  # the rate whose noise the velocity carries (ekf.model)
            if self.rolling:
                # Rolling spheres: the contact points c_i = r_i + d_i are at rest (kinematics docstring); the
                # attitude block of H left out (ekf.measurements, "Rolling spherical feet").
                y, c, Jc, _ = kin.rolling_contact_terms(stance, prepared.qdot, omega, ekf.R_world_base, radii)
                res = ekf.update_leg_velocities(names, y, c, Jc)
            else:
                # v_base_in_base = -(J_i qdot) - omega x r_i for all stance feet at once.
                y, r, J = kin.point_contact_terms(stance, prepared.qdot, omega)
                res = ekf.update_leg_velocities(names, y, r, J)
        self._leg_results = list(res)
        return [bool(r.accepted) for r in res], [float(r.nis) for r in res]

    def _leg_step(self, prepared: PreparedJoints) -> FeetOfStep:
        """The rest of :meth:`apply` after the contacts: the stance feet's leg update (and the static bias lock);
        returns the per-foot states (made when first read)."""
        ekf = self.ekf
        s = self.settings.ekf
        contacts = self.contact.contacts
        stance_list: list[int] = []
        accepted: list[bool] = []
        nis: list[float] = []
        if prepared.qdot_valid:
            stance, stance_list, names, radii = self._stance_of(contacts)
            accepted, nis = self._leg_update(prepared, stance, radii, names)
            for i, ok in enumerate(accepted):
                if not ok:
                    name = self.foot_frames[stance_list[i]]
                    self._events.emit("foot_gated", f"foot {name} rejected by the gate (NIS {nis[i]:.1f})", "info")
            slip_events = self.slip.update(prepared.stamp_ns, stance_list, nis)
            if slip_events:
                self._events.extend(slip_events)
            if self._any_flat:
                self._rotation_step(stance_list, accepted, prepared.qdot)
            if (
                s.static_bias_lock
                and contacts.all()
                and float(np.linalg.norm(ekf.omega_base_in_base)) < s.static_gyro_threshold_rad_s
                and float(np.max(np.abs(prepared.qdot))) < s.static_joint_velocity_threshold_rad_s
            ):
                ekf.update([ekf.zero_rate_measurement()], gate_nis=0.0)
        # One copy of the force arrays per step (the per-foot numbers); each foot gets views of it when read.
        forces = self.forces
        vector = np.empty((len(contacts), FOOT_STRIDE))
        vector[:, _FORCE] = forces.force_in_world
        vector[:, _WRENCH] = forces.wrench_in_foot
        feet = FeetOfStep(self.foot_frames, contacts, vector.ravel(), stance_list, accepted, nis)
        self.step_feet = feet
        return feet

    def _rotation_step(self, stance_list: list[int], accepted: list[bool], qdot: FloatArray) -> None:
        """The orientation half of the flat feet's 6-D stance update (:mod:`.flat_feet`), after the 3-D one: the
        flat stance feet the 3-D gate accepted; a gated foot is reported as ``foot_gated`` (info)."""
        feet = [i for i, ok in zip(stance_list, accepted) if ok and self.flat_feet[i]]
        if not feet:
            self.rotation_results = []
            return
        es = self.ekf.settings
        names = [self.foot_frames[i] for i in feet]
        res = rotation_update(self.ekf, names, np.array(feet, dtype=np.int64), qdot, self.kin.J6_base_foot,
                              es.foot_angular_velocity_noise, es.encoder_velocity_noise, es.foot_gate_nis)  # fmt: skip
        self.rotation_results = res
        for r in res:
            if not r.accepted:
                self._events.emit(
                    "foot_gated", f"foot {r.name} orientation rejected by the gate (NIS {r.nis:.1f})", "info"
                )

    def warm_up(self) -> None:
        """Compile the joint path now (or load it from numba's on-disk cache) with a compiled backend, so the first
        real sample does not pay the compilation: each operation runs once with the array layouts of the real calls.
        The state it touches is reset by the estimator's reset (next at construction); the forces are zeroed here."""
        if not self.backend.compiled:
            return
        backend, kin, ekf, contact = self.backend, self.kin, self.ekf, self.contact
        jin = self.joint_input
        n = len(jin.joint_names)
        zeros = np.zeros(n)
        out = np.empty((3, n))
        backend.gather_joints(zeros, zeros, zeros, jin.gather, True, out)
        q = np.array(self.q_joints)
        jv = jin.joint_velocity
        jv.advance(0, out[0])
        jv.advance(1, out[0])
        kin.update(q)
        forces = self.forces
        forces.estimate(q, out[2], ekf.R_world_base)
        everyone = np.arange(kin.n_feet)
        kin.rolling_contact_terms(everyone, out[1], ekf.omega_base_in_base, ekf.R_world_base, self.foot_radii)
        kin.point_contact_terms(everyone, out[1], ekf.omega_base_in_base)
        no_feet = np.zeros(kin.n_feet, dtype=bool)  # compiles the stance update, changes nothing
        ekf.update_stance_feet([], no_feet, out[1], self.foot_radii, kin.p_base_foot, kin.J6_base_foot,
                               rolling=self.rolling)  # fmt: skip
        for det, values in (
            (contact.torque_detector, forces.force_in_world[:, 2]),
            (contact.sensor_detector, contact.foot_sensor_values),
            (contact.kinematic_detector, -kinematic_clearance(kin.p_base_foot, ekf.R_world_base)),
        ):
            det.update(0, values)
            det.update(1, values)  # the first update sets the state without the backend
        forces.estimate_and_trigger(out[2], ekf.R_world_base, contact.torque_detector, 2)
        # prepare_joints and the joint step on scratch copies of the state they change; the joint step calls them
        # through their entry points (jit.entry_point: no type dispatch), resolved with arguments of the types of the
        # real calls (the real calls' own buffers, pinocchio's arrays, C-contiguous float64 inputs).
        backend.prepare_joints(zeros, _EMPTY, zeros, jin.gather, 0, zeros.copy(), jv.qdot.copy(), 1e-3, 0.0, out,
                               kin.configuration.copy())  # fmt: skip
        if self.joint_step is not None:
            self.joint_step.warm_up(q)
        if self._any_flat:  # compiles the orientation update on a scratch copy of the filter (changes nothing)
            rotation_update(copy.deepcopy(ekf), ["warm_up"], np.zeros(1, dtype=np.int64), out[1], kin.J6_base_foot,
                            1.0, 0.0, 0.0)  # fmt: skip
        forces.force_in_world[:] = 0.0
        forces.wrench_in_foot[:] = 0.0
