"""Contact forces from joint torques, and contact detection (Schmitt trigger with debounce).

Forces (mim_estimation ``EndEffectorForceEstimator``, with the gravity compensation mim leaves out): the
floating-base dynamics with contact forces ``f_i`` acting on the feet read ``M a + h = tau + sum_i J_i^T f_i``
(pinocchio convention, Featherstone 2008 ch. 2). On the joints of leg i (the rows of its own joints, where
only its foot's Jacobian is non-zero), quasi-statically (``M a + h ~ g(q)``):

    J_i,leg^T f_i = g_leg(q) - tau_leg   =>   f_i = -(J_i,leg^T)^+ (tau_leg - g_leg(q))

with ``J_i,leg`` the foot Jacobian restricted to the leg's joint columns. With ``use_full_dynamics`` the
gravity torques are replaced by the leg rows of ``M a + h`` (RNEA with the estimated base motion and the
joint accelerations). Point feet give a 3-D force; flat feet a 6-D wrench (force and torque about the foot
origin; least-norm when the leg has fewer than 6 joints). Computed with the base at the identity and gravity
rotated into the base frame (``g_base = R_world_base^T g_world``), which is the same as using the full configuration.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.estimation.ekf.backends import Backend, select_backend
from robot_state_estimator.estimation.ekf.layout import DECLINED
from robot_state_estimator.estimation.kinematics import LegKinematics

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


class ContactForceEstimator:
    """Per-foot ground reaction forces from measured joint torques.

    Args:
        kinematics: the leg kinematics (its :meth:`~LegKinematics.update` must have run for the same joint
            positions before :meth:`estimate`).
        flat_feet: estimate 6-D wrenches instead of 3-D point forces.
        use_full_dynamics: use ``M a + h`` instead of ``g(q)`` (needs velocities and accelerations).
        gravity_m_s2: magnitude of gravity (m/s^2).
        backend: the numerics (:mod:`.ekf.backends`; None: ``select_backend()``): the compiled point-foot forces
            (point feet on 3-joint legs, ``g(q)`` from the centre-of-mass Jacobian), else the reference below.

    Attributes:
        total_mass_kg: robot mass (kg), for weight-relative thresholds.
        point_3x3: point feet on legs of 3 joints each (the closed-form 3 x 3 solve, and the compiled forces).
        leg_columns: (n_feet, 3) intp, each leg's joint columns when ``point_3x3`` (else (n_feet, 0)).
    """

    def __init__(
        self,
        kinematics: LegKinematics,
        *,
        flat_feet: bool = False,
        use_full_dynamics: bool = False,
        gravity_m_s2: float = 9.81,
        backend: Backend | None = None,
    ) -> None:
        self.kin = kinematics
        self.backend = select_backend() if backend is None else backend
        self._model = pin.Model(kinematics.model)
        self._data = self._model.createData()
        self.flat_feet = flat_feet
        self.use_full_dynamics = use_full_dynamics
        self.g_world = np.array([0.0, 0.0, -gravity_m_s2])
        self.total_mass_kg = float(pin.computeTotalMass(self._model))
        self._q = pin.neutral(self._model)
        self._q[:7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        n = kinematics.n_feet
        self.force_in_world = np.zeros((n, 3))
        self.wrench_in_foot = np.zeros((n, 6))
        self._zeros3 = np.zeros(3)
        # Per foot, the leg's joint columns as a slice when contiguous (a view instead of a fancy-index copy),
        # and whether the closed-form 3 x 3 point-foot solve applies.
        self._leg_cols: list[slice | NDArray[np.intp]] = []
        for idx in kinematics.leg_joint_indices:
            contiguous = len(idx) > 0 and bool(np.all(np.diff(idx) == 1))
            self._leg_cols.append(slice(int(idx[0]), int(idx[-1]) + 1) if contiguous else idx)
        self.point_3x3 = (not flat_feet) and all(len(idx) == 3 for idx in kinematics.leg_joint_indices)
        self.leg_columns = (
            np.array(kinematics.leg_joint_indices, dtype=np.intp) if self.point_3x3 else np.zeros((n, 0), np.intp)
        )
        self._unsolved = 0  # bit i: foot i's 3 x 3 solve failed the conditioning test in the last compiled call
        #: (n_joints,) rad/s, the joint velocities of the last full-dynamics estimate (for the joint accelerations)
        self.qdot_prev = np.zeros(kinematics.n_joints)
        #: (2,) int64: [1 when ``qdot_prev`` is held, its stamp (ns)]
        self.qdot_prev_stamp = np.zeros(2, dtype=np.int64)

    def joint_acceleration(self, stamp_ns: int, qdot_joints: FloatArray) -> FloatArray:
        """(n_joints,) rad/s^2, the backward difference of the joint velocities since the last call (zero when none
        is held or the stamp does not increase); ``qdot_joints`` (n_joints,) rad/s at ``stamp_ns`` is held for the
        next call."""
        prev = int(self.qdot_prev_stamp[1])
        if self.qdot_prev_stamp[0] and stamp_ns > prev:
            qddot = (np.asarray(qdot_joints, dtype=float) - self.qdot_prev) / ((stamp_ns - prev) * 1e-9)
        else:
            qddot = np.zeros(len(self.qdot_prev))
        self.qdot_prev[:] = qdot_joints
        self.qdot_prev_stamp[:] = (1, stamp_ns)
        return qddot

    def forget_joint_velocities(self) -> None:
        """Hold no joint velocities: the next :meth:`joint_acceleration` is zero (a reset, velocities not valid)."""
        self.qdot_prev_stamp[0] = 0

    @property
    def weight_n(self) -> float:
        """Robot weight (N)."""
        return self.total_mass_kg * float(np.linalg.norm(self.g_world))

    def bias_torques(
        self,
        q_joints: FloatArray,
        R_world_base: FloatArray,
        *,
        v: FloatArray | None = None,
        a: FloatArray | None = None,
    ) -> FloatArray:
        """(n_joints,) N m: ``g(q)`` on the joints, or the joint rows of ``M a + h`` with the full dynamics.

        Args:
            q_joints: (n_joints,) joint positions, pinocchio order.
            R_world_base: (3, 3) base attitude (only gravity's direction in B matters).
            v: (nv,) pinocchio velocity ``[v_base_in_base, omega_base_in_base, qdot]`` (full dynamics only).
            a: (nv,) pinocchio acceleration ``[d(v_base_in_base)/dt, d(omega_base_in_base)/dt, qddot]`` with gravity
                excluded (full dynamics only).
        """
        self._model.gravity = pin.Motion(R_world_base.T @ self.g_world, self._zeros3)
        q = self._q
        q[7:] = q_joints
        if self.use_full_dynamics and v is not None and a is not None:
            tau = pin.rnea(self._model, self._data, q, v, a)
        else:
            tau = pin.computeGeneralizedGravity(self._model, self._data, q)
        return np.asarray(tau)[6:]

    def estimate(
        self,
        q_joints: FloatArray,
        tau_joints: FloatArray,
        R_world_base: FloatArray,
        *,
        v: FloatArray | None = None,
        a: FloatArray | None = None,
    ) -> tuple[FloatArray, FloatArray]:
        """Contact forces of all feet (also stored in ``force_in_world`` / ``wrench_in_foot``).

        Args:
            q_joints: (n_joints,) rad, joint positions in pinocchio order.
            tau_joints: (n_joints,) N m, measured joint torques in pinocchio order.
            R_world_base: (3, 3) base attitude.
            v: see :meth:`bias_torques`.
            a: see :meth:`bias_torques`.

        Returns:
            ``force_in_world`` (n_feet, 3) N, force of the ground on each foot, world axes; and
            ``wrench_in_foot`` (n_feet, 6) [force N, torque N m] in each foot frame.
        """
        full = self.use_full_dynamics and v is not None and a is not None
        if not full and self._compiled_forces(tau_joints, R_world_base):
            return self.force_in_world, self.wrench_in_foot
        rhs_all = self.bias_torques(q_joints, R_world_base, v=v, a=a) - np.asarray(tau_joints, dtype=float)
        kin = self.kin
        if self.point_3x3 and not self.flat_feet:
            return self._estimate_point_3x3(rhs_all, R_world_base)
        for i, idx in enumerate(kin.leg_joint_indices):
            rhs = rhs_all[idx]
            R_base_foot = kin.R_base_foot[i]
            if self.flat_feet:
                Jt = kin.J6_base_foot[i][:, idx].T  # (n_leg, 6)
                wrench_in_base = _solve_least_norm(Jt, rhs)
                force_in_base, moment_in_base = wrench_in_base[:3], wrench_in_base[3:]
            else:
                Jt = kin.J_base_foot[i][:, idx].T  # (n_leg, 3)
                force_in_base = _solve_least_norm(Jt, rhs)
                moment_in_base = np.zeros(3)
            self.force_in_world[i] = R_world_base @ force_in_base
            self.wrench_in_foot[i, :3] = R_base_foot.T @ force_in_base
            self.wrench_in_foot[i, 3:] = R_base_foot.T @ moment_in_base
        return self.force_in_world, self.wrench_in_foot

    def _compiled_forces(self, tau_joints: FloatArray, R_world_base: FloatArray) -> bool:
        """The backend's point-foot forces (``kernels.legs.point_foot_forces``): the gravity torques from
        pinocchio's centre-of-mass Jacobian at the kinematics' last configuration (``g(q) = -m J_com^T g_base``, the
        same as ``computeGeneralizedGravity`` to rounding, one pinocchio call instead of two plus the gravity
        assignment), then the closed-form 3 x 3 solves. False when the backend declines (the reference) or a leg's
        3 x 3 system is ill-conditioned: the caller then takes the reference path (least squares)."""
        unsolved = self.backend.point_foot_forces(self, tau_joints, R_world_base)
        if unsolved == DECLINED:
            return False
        self._unsolved = unsolved
        return unsolved == 0

    def estimate_and_trigger(
        self, tau_joints: FloatArray, R_world_base: FloatArray, detector: ContactDetector, stamp_ns: int
    ) -> bool:
        """:meth:`estimate` (g(q) only) then ``detector.update(stamp_ns, force_in_world[:, 2])`` in one call of the
        backend (``kernels.legs.torque_contacts``), when it applies: compiled point forces, a detector past its first
        sample. False (the caller runs the two) when it does not apply or a leg's 3 x 3 system is ill-conditioned."""
        if not detector._started:
            return False
        unsolved = self.backend.torque_contacts(self, tau_joints, R_world_base, detector, stamp_ns)
        if unsolved == DECLINED:
            return False
        self._unsolved = unsolved
        return unsolved == 0

    def _estimate_point_3x3(self, rhs_all: FloatArray, R_world_base: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Point feet on 3-joint legs: :func:`_solve_least_norm` in closed form on Python floats per foot (numpy's
        per-call overhead dominates 3 x 3 solves), rotations batched."""
        kin = self.kin
        J = kin.J_base_foot
        force_in_base = []
        for i, cols in enumerate(self._leg_cols):
            A = J[i][:, cols].T  # (3, 3) = J_leg^T
            f = _solve3(A.tolist(), rhs_all[cols].tolist())
            if f is None:
                f = np.linalg.lstsq(A, rhs_all[cols], rcond=None)[0].tolist()
            force_in_base.append(f)
        F = np.array(force_in_base)  # (n, 3) forces in B
        np.matmul(F, R_world_base.T, out=self.force_in_world)
        # R_base_foot^T f per foot: (n, 3, 3)^T @ (n, 3, 1).
        self.wrench_in_foot[:, :3] = (kin.R_base_foot.transpose(0, 2, 1) @ F[:, :, None])[:, :, 0]
        self.wrench_in_foot[:, 3:] = 0.0
        return self.force_in_world, self.wrench_in_foot


def _solve3(A: list[list[float]], b: list[float]) -> list[float] | None:
    """``A^-1 b`` for a 3 x 3 A (nested lists) by the adjugate, or None when A fails the conditioning test of
    :func:`_solve_least_norm` (Hadamard ratio ``|det A| / prod_j ||a_j|| <= 1e-6``)."""
    (a, b_, c), (d, e, f), (g, h, i) = A
    c0 = e * i - f * h
    c1 = f * g - d * i
    c2 = d * h - e * g
    det = a * c0 + b_ * c1 + c * c2
    hadamard = math.sqrt(a * a + d * d + g * g) * math.sqrt(b_ * b_ + e * e + h * h) * math.sqrt(c * c + f * f + i * i)
    if not (hadamard > 0.0 and abs(det) > 1e-6 * hadamard):
        return None
    x, y, z = b
    inv = 1.0 / det
    return [
        (c0 * x + (c * h - b_ * i) * y + (b_ * f - c * e) * z) * inv,
        (c1 * x + (a * i - c * g) * y + (c * d - a * f) * z) * inv,
        (c2 * x + (b_ * g - a * h) * y + (a * e - b_ * d) * z) * inv,
    ]


def _solve_least_norm(A: FloatArray, b: FloatArray) -> FloatArray:
    """``A^+ b``: a direct solve for a square, well-conditioned A, else least squares / least norm.

    Conditioning test without an SVD: ``|det A| / prod_j ||a_j||`` (Hadamard ratio, 1 for orthogonal
    columns, 0 when singular) above 1e-6.
    """
    if A.shape[0] == A.shape[1]:
        hadamard = float(np.prod(np.linalg.norm(A, axis=0)))
        if hadamard > 0.0 and abs(float(np.linalg.det(A))) > 1e-6 * hadamard:
            return np.asarray(np.linalg.solve(A, b), dtype=float)
    return np.asarray(np.linalg.lstsq(A, b, rcond=None)[0], dtype=float)


class ContactDetector:
    """Schmitt trigger per foot with minimum on/off durations (debounce).

    Raw trigger: on when the value rises above ``on_threshold``, off when it falls below ``off_threshold``,
    unchanged in between. Debounce: a change of the raw trigger is reported only once it has held for
    ``min_on_duration_s`` (for touch-down) or ``min_off_duration_s`` (for lift-off); a shorter blip is ignored.
    The first sample sets the state directly (above the mid threshold = contact). Non-finite values keep the
    previous state.

    Args:
        n_feet: number of feet.
        on_threshold: value above which the trigger switches on (any unit: N, counts, negated clearance).
        off_threshold: value below which it switches off (<= on_threshold).
        min_on_duration_s: s, hold time before a touch-down is reported.
        min_off_duration_s: s, hold time before a lift-off is reported.
        backend: the numerics of the trigger's step (:mod:`.ekf.backends`; None: ``select_backend()``).

    Raises:
        ValueError: off_threshold > on_threshold, or negative durations.
    """

    def __init__(
        self,
        n_feet: int,
        *,
        on_threshold: float,
        off_threshold: float,
        min_on_duration_s: float = 0.0,
        min_off_duration_s: float = 0.0,
        backend: Backend | None = None,
    ) -> None:
        if off_threshold > on_threshold:
            raise ValueError(f"off_threshold {off_threshold} must be <= on_threshold {on_threshold}")
        if min_on_duration_s < 0.0 or min_off_duration_s < 0.0:
            raise ValueError("minimum durations must be >= 0")
        self.n_feet = n_feet
        self.on_threshold = float(on_threshold)
        self.off_threshold = float(off_threshold)
        self._min_on_ns = round(min_on_duration_s * 1e9)
        self._min_off_ns = round(min_off_duration_s * 1e9)
        self.backend = select_backend() if backend is None else backend
        # The trigger's state in one (3, n_feet) bool array (one kernel argument): the raw trigger, the debounced
        # contact state and a change of the raw trigger waiting to be reported (pending[i], since _since_ns[i] ns).
        # The arrays are made once and changed in place (the backend's joint step binds them once).
        self._flags = np.zeros((3, self.n_feet), dtype=bool)
        self._raw, self.in_contact, self._pending = self._flags
        self._since_ns = np.zeros(self.n_feet, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        """Forget the state (the next sample sets it directly)."""
        self._flags[:] = False
        self._since_ns[:] = 0
        self._started = False

    def set_thresholds(self, on_threshold: float, off_threshold: float) -> None:
        """Change the thresholds at run time (e.g. a parameter update).

        Raises:
            ValueError: off_threshold > on_threshold.
        """
        if off_threshold > on_threshold:
            raise ValueError(f"off_threshold {off_threshold} must be <= on_threshold {on_threshold}")
        self.on_threshold = float(on_threshold)
        self.off_threshold = float(off_threshold)

    def update(self, stamp_ns: int, values: Sequence[float] | FloatArray) -> BoolArray:
        """Feed one sample per foot; returns the debounced contact states (n_feet,) bool (a copy).

        Args:
            stamp_ns: sample time (ns), non-decreasing.
            values: (n_feet,) trigger values.
        """
        vals = np.asarray(values, dtype=float)
        if not self._started:
            mid = 0.5 * (self.on_threshold + self.off_threshold)
            finite = np.isfinite(vals)
            self._raw[:] = finite & (vals > mid)
            self.in_contact[:] = self._raw
            self._pending[:] = False
            self._started = True
            return self.in_contact.copy()
        self.backend.schmitt_step(
            vals,
            stamp_ns,
            self.on_threshold,
            self.off_threshold,
            self._min_on_ns,
            self._min_off_ns,
            self._raw,
            self.in_contact,
            self._pending,
            self._since_ns,
        )
        return self.in_contact.copy()


def kinematic_clearance(p_base_foot: FloatArray, R_world_base: FloatArray) -> FloatArray:
    """(n_feet,) m, height of each foot above the lowest one along the world vertical.

    The kinematic contact fallback (no torques, no foot sensors): feet near the lowest one may be in stance
    (with their speeds: :func:`kinematic_contact_score`).

    Args:
        p_base_foot: (n_feet, 3) m, foot positions in B.
        R_world_base: (3, 3) base attitude (only roll and pitch matter).
    """
    heights = p_base_foot @ R_world_base[2, :]
    clearance: FloatArray = heights - heights.min()
    return clearance


def kinematic_contact_score(
    clearance_m: FloatArray,
    foot_speed_m_s: FloatArray | None,
    *,
    on_height_m: float,
    off_height_m: float,
    on_speed_m_s: float,
    off_speed_m_s: float,
) -> FloatArray:
    """(n_feet,) the kinematic contact trigger value: below 0 = both "on" conditions hold, above 1 = one of the
    "off" conditions holds, in between = keep the previous state.

    ``x_i = max((h_i - on_h) / (off_h - on_h), (s_i - on_s) / (off_s - on_s))`` with ``h_i`` the foot's height
    above the lowest foot and ``s_i`` its speed relative to it: a foot touches down when it is low *and* still
    (``h < on_h`` and ``s < on_s``), and lifts off when it is high *or* moving (``h > off_h`` or ``s > off_s``).
    Feed ``-x`` to a :class:`ContactDetector` with ``on_threshold=0``, ``off_threshold=-1`` (its Schmitt trigger
    is then exactly this two-condition hysteresis; its first sample: ``x < 0.5``). Equal on/off values make that
    condition a single threshold.

    Args:
        clearance_m: (n_feet,) m, :func:`kinematic_clearance`.
        foot_speed_m_s: (n_feet,) m/s, :func:`kinematic_foot_speed`; None = unknown (no valid joint velocities
            yet): the height alone decides.
        on_height_m, off_height_m: m, with ``off >= on``.
        on_speed_m_s, off_speed_m_s: m/s, with ``off >= on``.
    """
    x = (np.asarray(clearance_m, dtype=float) - on_height_m) / max(off_height_m - on_height_m, 1e-12)
    if foot_speed_m_s is not None:
        xs = (np.asarray(foot_speed_m_s, dtype=float) - on_speed_m_s) / max(off_speed_m_s - on_speed_m_s, 1e-12)
        x = np.maximum(x, xs)
    return x


def kinematic_foot_speed(v_base_from_feet: FloatArray, clearance_m: FloatArray) -> FloatArray:
    """(n_feet,) m/s, speed of each foot's contact point relative to the lowest foot's.

    A foot at rest on the ground measures the base velocity: leg odometry
    (:meth:`~robot_state_estimator.estimation.kinematics.LegKinematics.rolling_contact_terms`,
    ``y_i = -(J_c,i qdot) - omega_base_in_base x c_i`` in B, Bloesch et al. RSS 2012 eq. 9) gives
    ``y_i = v_base_in_base - v_i`` with ``v_i`` the contact point's velocity over the ground. Two feet both at rest give
    the same ``y``, so ``|y_i - y_low|`` (the lowest foot taken as at rest) is foot i's speed over the ground. It uses
    the joint positions, velocities and the angular velocity only, not the filter's base velocity: a detector built on
    it cannot lock itself out (a wrong base velocity does not make every foot look moving), and the lowest foot always
    counts as still. Norms do not depend on the axes.

    Args:
        v_base_from_feet: (n_feet, 3) m/s, ``y_i`` in B.
        clearance_m: (n_feet,) m, :func:`kinematic_clearance` (its argmin is the lowest foot).
    """
    y = np.asarray(v_base_from_feet, dtype=float)
    return np.asarray(np.linalg.norm(y - y[int(np.argmin(clearance_m))], axis=1), dtype=float)
