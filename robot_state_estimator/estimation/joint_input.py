"""Joint samples made ready for the leg odometry: checks, the name order, the joint velocity in use.

A joint sample must name every model joint, once (``missing_joint``, ``duplicate_joint``). A name not in the model
rejects the sample (``unknown_joint``), unless ``settings.ignore_unknown_joints``: then such names (a gripper, a
head, wheels on the same ``/joint_states``) are ignored, their values unused (not even checked for NaN), and the set
of ignored names is reported when it changes (``ignored_joints``, info), not per sample. The name order is resolved
once per tuple of names and cached (a gather: ``q = position[gather]``). Positions, velocities and efforts of the
wrong length, or with NaN/Inf, reject the sample (``joint_shape``, ``joint_nan``).

The velocities in use are the message's (``joint_velocity.use_measured``) or the estimator's differentiation of the
positions (:mod:`.joint_velocity`). The usual sample (the names of the last one, well formed, the joint velocity's
regular step) is prepared in one call of the backend (``prepare_joints``: gather, check, the joint velocity's step,
the positions into the kinematics' configuration; with efforts, inside the whole joint step, which binds the gather
array, written in place, and the joint velocity's arrays once: :meth:`JointInput.prepare_for_step`); any other sample,
or a backend without that shortcut, takes the reference path here, which also reports the events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.samples import JointSample
from robot_state_estimator.estimation.ekf.backends import Backend, JointStep
from robot_state_estimator.estimation.ekf.layout import (
    GATHER_OK,
    JOINT_NOT_PREPARED,
    PREPARE_FILTERED,
    PREPARE_MEASURED,
    PREPARE_WHOLE,
)
from robot_state_estimator.estimation.events import EventLog
from robot_state_estimator.estimation.joint_velocity import JointVelocityEstimator
from robot_state_estimator.estimation.settings import EstimatorSettings

FloatArray = NDArray[np.float64]

_EMPTY = np.empty(0)
_contiguous = np.ascontiguousarray


@dataclass(slots=True)
class PreparedJoints:
    """A validated joint sample in pinocchio order: stamp (ns); positions ``q`` (nj,) rad; the velocities in use
    ``qdot`` (nj,) rad/s (``qdot_valid``: measured, or a regular step of the estimate); efforts ``tau`` (nj,) N m or
    None; ``qtau`` the (3, nj) rows q, qdot, tau when the backend made them with efforts (for its joint step), else
    None; ``qdot_measured``: the velocities in use are the message's (not differentiated positions)."""

    stamp_ns: int
    q: FloatArray
    qdot: FloatArray
    qdot_valid: bool
    tau: FloatArray | None
    qtau: FloatArray | None = None
    qdot_measured: bool = False


class JointInput:
    """Joint samples to :class:`PreparedJoints` (module docstring).

    Args:
        joint_names: the model's actuated joints in pinocchio order.
        settings: estimator settings (``ignore_unknown_joints``, ``joint_velocity``).
        configuration: the kinematics' configuration (nq,), whose joint part the backend's preparation writes.
        backend: the numerics. events: the estimator's event log.

    Attributes:
        joint_velocity: the joint velocity estimator (its state: the previous positions and the estimate).
    """

    def __init__(
        self,
        joint_names: tuple[str, ...],
        settings: EstimatorSettings,
        configuration: FloatArray,
        backend: Backend,
        events: EventLog,
    ) -> None:
        n_joints = len(joint_names)
        self.joint_names = joint_names
        self._joint_index = {name: i for i, name in enumerate(joint_names)}
        self._configuration = configuration
        self._backend = backend
        self._events = events
        js = settings.joint_velocity
        self.joint_velocity = JointVelocityEstimator(
            n_joints, cutoff_hz=js.cutoff_hz, max_dt_s=js.max_dt_s, backend=backend
        )
        # The name order of the last valid tuple of names: the message index of each model joint (a gather:
        # ``q = position[gather]``); message entries of ignored names are simply not gathered.
        self._order_names: tuple[str, ...] | None = None
        self.gather = np.arange(n_joints)
        self._ignore_unknown = bool(settings.ignore_unknown_joints)
        self._ignored_reported: frozenset[str] = frozenset()
        self._mode = 0 if self._ignore_unknown else PREPARE_WHOLE
        self._mode_measured = self._mode | PREPARE_MEASURED
        self._use_measured = bool(js.use_measured)
        self._n_joints = n_joints
        #: whether the last sample :meth:`prepare_for_step` made ready uses the message's velocities
        self.measured = False

    def prepare(self, sample: JointSample) -> PreparedJoints | None:
        """The sample checked and in model order, the joint velocity advanced; None (with an event) when refused."""
        prepared = self._prepare_usual(sample)
        if prepared is not None:
            return prepared
        # The reference path; also every sample the backend leaves (a new name order, a bad sample: the events
        # come from here).
        names = tuple(sample.names)
        n = len(names)
        pos = np.asarray(sample.position, dtype=float)
        vel = None if sample.velocity is None else np.asarray(sample.velocity, dtype=float)
        eff = None if sample.effort is None else np.asarray(sample.effort, dtype=float)
        if vel is not None and vel.size == 0:
            vel = None
        if eff is not None and eff.size == 0:
            eff = None
        strict = not self._ignore_unknown
        for label, arr in (("position", pos), ("velocity", vel), ("effort", eff)):
            if arr is not None and arr.shape != (n,):
                self._events.emit("joint_shape", f"joint {label} has shape {arr.shape} for {n} names; skipped")
                return None
            if strict and arr is not None and not np.isfinite(arr).all():
                self._events.emit("joint_nan", f"joint {label} at {sample.stamp_ns} ns has NaN/Inf; skipped")
                return None
        gather: NDArray[np.intp] | None = self.gather
        if names != self._order_names:  # else the same names as the last valid sample: same order, checked
            gather = self._joint_order(names)
            if gather is None:
                return None
        q = pos[gather]
        use_measured = self._use_measured
        qdot_meas = None if vel is None or (strict and not use_measured) else vel[gather]
        tau = None if eff is None else eff[gather]
        if not strict:  # only the values of model joints must be finite (ignored ones are unused)
            for label, arr in (("position", q), ("velocity", qdot_meas), ("effort", tau)):
                if arr is not None and not np.isfinite(arr).all():
                    self._events.emit("joint_nan", f"joint {label} at {sample.stamp_ns} ns has NaN/Inf; skipped")
                    return None
        stamp = int(sample.stamp_ns)
        qdot_est = self.joint_velocity.update(stamp, q)
        if qdot_meas is not None and use_measured:
            return PreparedJoints(stamp, q, qdot_meas, True, tau, qdot_measured=True)
        return PreparedJoints(stamp, q, qdot_est, self.joint_velocity.valid, tau)

    def same_names(self, names: Sequence[str]) -> tuple[str, ...] | None:
        """``names`` as the tuple of the last sample's names when they are those (same order), else None."""
        if names is self._order_names:
            return names
        if type(names) is not tuple:
            names = tuple(names)
        return names if names == self._order_names else None

    def _prepare_usual(self, sample: JointSample) -> PreparedJoints | None:
        """:meth:`prepare` for a well-formed sample with the names of the last one, in one call of the backend
        (``gather_joints``, or ``prepare_joints`` for the joint velocity's regular step); None for any other sample,
        or when the backend declines (the reference path then handles it, events included)."""
        names = self.same_names(sample.names)
        if names is None:
            return None
        pos = np.asarray(sample.position, dtype=float)
        n = len(names)
        vel = sample.velocity
        eff = sample.effort
        vel = _EMPTY if vel is None else np.asarray(vel, dtype=float)
        eff = _EMPTY if eff is None else np.asarray(eff, dtype=float)
        if pos.shape != (n,) or (vel.size and vel.shape != (n,)) or (eff.size and eff.shape != (n,)):
            return None
        out = np.empty((3, self._n_joints))
        stamp = int(sample.stamp_ns)
        jv = self.joint_velocity
        coefficients = jv.step_coefficients(stamp)
        if coefficients is not None:
            # The usual sample: gather, the joint velocity's regular step and the velocity in use in one call.
            dt, alpha, filtered = coefficients
            mode = self._mode | (PREPARE_FILTERED if filtered else 0)
            if vel.size and self._use_measured:
                mode |= PREPARE_MEASURED
            code = self._backend.prepare_joints(pos, vel, eff, self.gather, mode, jv._q_prev, jv.qdot, dt, alpha, out,
                                                self._configuration)  # fmt: skip
            if code != GATHER_OK:
                return None
            jv.stepped(stamp)
            measured = bool(mode & PREPARE_MEASURED)
            if eff.size:
                return PreparedJoints(stamp, out[0], out[1], True, out[2], out, measured)
            return PreparedJoints(stamp, out[0], out[1], True, None, None, measured)
        if self._backend.gather_joints(pos, vel, eff, self.gather, not self._ignore_unknown, out) != GATHER_OK:
            return None
        q = out[0]
        jv.advance(stamp, q)
        if vel.size and self._use_measured:
            return PreparedJoints(stamp, q, out[1], True, out[2] if eff.size else None, None, True)
        return PreparedJoints(stamp, q, jv.qdot.copy(), jv.valid, out[2] if eff.size else None)

    def prepare_for_step(self, sample: JointSample, stamp: int, joint_step: JointStep) -> tuple[int, FloatArray] | None:
        """The usual sample with efforts through the backend's joint step from its message arrays
        (``joint_step.prepare_and_run``: the joint velocity's regular step, the preparation, the positions into the
        kinematics' configuration, then the step): the step's result and buffer (with the (3, nj) rows q, qdot, tau
        from ``layout.joint_rows_offset``; :attr:`measured` says whether the velocities are the message's); None, with
        nothing changed, for any other sample (names not the last sample's, wrong lengths, no efforts, no regular step
        of the joint velocity, a NaN/Inf: the reference path then handles it, events included)."""
        names = sample.names
        if names is not self._order_names and self.same_names(names) is None:
            return None
        eff = sample.effort
        if eff is None:
            return None
        n = len(names)
        # C-contiguous float64 of the checked shapes: the step is called through its entry points
        pos = _contiguous(sample.position, dtype=float)
        eff = _contiguous(eff, dtype=float)
        vel = sample.velocity
        vel = _EMPTY if vel is None else _contiguous(vel, dtype=float)
        if pos.shape != (n,) or eff.shape != (n,) or (vel.size and vel.shape != (n,)) or vel.ndim != 1:
            return None
        measured = self._use_measured and vel.size != 0
        result, buf = joint_step.prepare_and_run(pos, vel, eff, self._mode_measured if measured else self._mode, stamp)
        if result == JOINT_NOT_PREPARED:
            return None  # not a regular step, a NaN/Inf (nothing changed): the reference path
        self.measured = measured
        return result, buf

    def _joint_order(self, names: tuple[str, ...]) -> NDArray[np.intp] | None:
        """Message index of each model joint (remembered for the next samples), or None with an event
        (module docstring)."""
        n = len(names)
        if len(set(names)) != n:
            self._events.emit("duplicate_joint", "joint sample has duplicate names; skipped")
            return None
        index = self._joint_index
        unknown = [name for name in names if name not in index]
        if unknown and not self._ignore_unknown:
            self._events.emit("unknown_joint", f"unknown joint name(s) {unknown}; skipped")
            return None
        if n - len(unknown) != len(self.joint_names):
            present = set(names)
            missing = [name for name in self.joint_names if name not in present]
            self._events.emit("missing_joint", f"joint sample lacks {missing}; skipped")
            return None
        gather = self.gather  # (changed in place: the backend's joint step binds it once)
        for i, name in enumerate(names):
            j = index.get(name)
            if j is not None:
                gather[j] = i
        self._order_names = names
        ignored = frozenset(unknown)
        if ignored and ignored != self._ignored_reported:
            self._events.emit(
                "ignored_joints",
                f"joint(s) {sorted(ignored)} are not in the model; ignored (ignore_unknown_joints)",
                "info",
            )
        self._ignored_reported = ignored
        return gather
