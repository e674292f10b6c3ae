"""Compiled kernels of the per-joint-sample path: joint gather, joint velocity, foot forces, contact trigger, and
the leg-odometry measurement terms.

Each kernel computes what a reference formulation elsewhere in the package computes (named in its docstring),
in one call instead of tens of numpy calls on 3-vectors. Callers choose with
:func:`robot_state_estimator.estimation.jit.use_kernels`; the numpy references stay the path without numba
and the tests check both give the same numbers to 1e-12 (``test/estimation/test_leg_kernels.py``).

The kernels write into caller-owned output arrays (no allocation) and use plain loops (numba compiles them; no
``fastmath``, so IEEE arithmetic as numpy's). Shapes: ``n`` feet, ``nj`` actuated joints, ``nv = nj + 6``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.ekf.layout import (
    GATHER_NAN_EFFORT,
    GATHER_NAN_POSITION,
    GATHER_NAN_VELOCITY,
    GATHER_OK,
    PREPARE_FILTERED,
    PREPARE_MEASURED,
    PREPARE_WHOLE,
)
from robot_state_estimator.estimation.jit import kernel

FloatArray = NDArray[np.float64]

__all__ = [
    "forces_from_bias",
    "gather_joints",
    "joint_velocity_step",
    "leg_velocity_terms",
    "point_foot_forces",
    "prepare_joints",
    "schmitt_step",
    "torque_contacts",
]


@kernel
def _gather_one(arr: FloatArray, gather: NDArray[np.intp], whole: bool, out: FloatArray, row: int) -> bool:
    """``out[row] = arr[gather]`` unless a checked entry of ``arr`` is not finite (returns False then)."""
    if whole:
        for i in range(arr.shape[0]):
            if not math.isfinite(arr[i]):
                return False
    for j in range(gather.shape[0]):
        x = arr[gather[j]]
        if not math.isfinite(x):
            return False
        out[row, j] = x
    return True


@kernel
def gather_joints(
    position: FloatArray,
    velocity: FloatArray,
    effort: FloatArray,
    gather: NDArray[np.intp],
    whole: bool,
    out: FloatArray,
) -> int:
    """Finiteness check and gather of a joint sample into model order (``RobotStateEstimator._prepare_joints``).

    Args:
        position: (m,) message positions. velocity, effort: (m,) or (0,) when absent (not checked then).
        gather: (nj,) message index of each model joint.
        whole: check every message entry (strict names) instead of the gathered ones only.
        out: (3, nj) written: ``position[gather]``, ``velocity[gather]``, ``effort[gather]`` (rows of absent
            arrays untouched).

    Returns:
        :data:`GATHER_OK`, or the first of position, velocity, effort with a NaN/Inf among the checked entries.
    """
    if not _gather_one(position, gather, whole, out, 0):
        return GATHER_NAN_POSITION
    if velocity.shape[0] and not _gather_one(velocity, gather, whole, out, 1):
        return GATHER_NAN_VELOCITY
    if effort.shape[0] and not _gather_one(effort, gather, whole, out, 2):
        return GATHER_NAN_EFFORT
    return GATHER_OK


@kernel
def joint_velocity_step(
    q: FloatArray, q_prev: FloatArray, qdot: FloatArray, dt: float, alpha: float, filtered: bool
) -> None:
    """One step of :class:`~robot_state_estimator.estimation.joint_velocity.JointVelocityEstimator` in place:
    ``raw = (q - q_prev) / dt``; ``qdot = qdot + alpha (raw - qdot)`` when ``filtered`` else ``qdot = raw``;
    then ``q_prev = q``. All (nj,) rad, rad/s; dt s."""
    for j in range(q.shape[0]):
        raw = (q[j] - q_prev[j]) / dt
        if filtered:
            qdot[j] = qdot[j] + alpha * (raw - qdot[j])
        else:
            qdot[j] = raw
        q_prev[j] = q[j]


@kernel
def prepare_joints(
    position: FloatArray,
    velocity: FloatArray,
    effort: FloatArray,
    gather: NDArray[np.intp],
    mode: int,
    q_prev: FloatArray,
    qdot_est: FloatArray,
    dt: float,
    alpha: float,
    out: FloatArray,
    q_full: FloatArray,
) -> int:
    """A joint sample made ready in one call (``RobotStateEstimator._prepare_joints``): :func:`gather_joints`, then
    when it passed, the regular step of the joint velocity estimate :func:`joint_velocity_step` on the gathered
    positions, the velocity in use into ``out[1]`` and the positions into the joint part of ``q_full``.

    Args:
        position, velocity, effort, gather: as :func:`gather_joints` (``whole`` = ``mode & PREPARE_WHOLE``).
        mode: bits :data:`PREPARE_WHOLE`, :data:`PREPARE_FILTERED` (the step's low-pass), :data:`PREPARE_MEASURED`
            (``out[1]`` keeps the gathered message velocities; else it gets a copy of ``qdot_est``).
        q_prev: (nj,) rad, the estimator's previous positions; qdot_est: (nj,) rad/s, its estimate (both updated in
            place, ``JointVelocityEstimator``). dt: s, > 0, since the previous positions. alpha: low-pass gain.
        out: (3, nj) written: positions, the velocities in use (rad/s), efforts (row untouched without efforts).
        q_full: (nq,) a pinocchio configuration (``LegKinematics.configuration``); its last nj entries written: the
            positions.

    Returns:
        As :func:`gather_joints`; when not :data:`GATHER_OK` the joint velocity estimate and ``q_full`` are
        unchanged.
    """
    code = gather_joints(position, velocity, effort, gather, (mode & PREPARE_WHOLE) != 0, out)
    if code != GATHER_OK:
        return code
    joint_velocity_step(out[0], q_prev, qdot_est, dt, alpha, (mode & PREPARE_FILTERED) != 0)
    nj = qdot_est.shape[0]
    o = q_full.shape[0] - nj
    for j in range(nj):
        q_full[o + j] = out[0, j]
    if not mode & PREPARE_MEASURED:
        for j in range(nj):
            out[1, j] = qdot_est[j]
    return GATHER_OK


@kernel
def _leg_force(
    J6: FloatArray,
    leg_cols: NDArray[np.intp],
    i: int,
    x: float,
    y: float,
    z: float,
    R_world_base: FloatArray,
    X_base_foot: FloatArray,
    force_in_world: FloatArray,
    wrench_in_foot: FloatArray,
) -> bool:
    """Foot i's point force from its leg's 3 x 3 system ``J_leg^T f_base_in_base = (x, y, z)`` (the bias torques minus
    the measured ones on the leg's joints) by the adjugate, when the Hadamard ratio test of ``contact._solve3`` passes:
    ``force_in_world[i] = R_world_base f_base_in_base``, ``wrench_in_foot[i] = [R_base_foot^T f_base_in_base, 0]``.
    False (outputs untouched) when the system is ill-conditioned."""
    # A = J_leg^T: A[r, k] = J6[i, k, cols[r]] (the naming of contact._solve3)
    c0_, c1_, c2_ = leg_cols[i, 0], leg_cols[i, 1], leg_cols[i, 2]
    a, b_, c = J6[i, 0, c0_], J6[i, 1, c0_], J6[i, 2, c0_]
    d, e, f = J6[i, 0, c1_], J6[i, 1, c1_], J6[i, 2, c1_]
    g, h, ii = J6[i, 0, c2_], J6[i, 1, c2_], J6[i, 2, c2_]
    c0 = e * ii - f * h
    c1 = f * g - d * ii
    c2 = d * h - e * g
    det = a * c0 + b_ * c1 + c * c2
    hadamard = (
        math.sqrt(a * a + d * d + g * g) * math.sqrt(b_ * b_ + e * e + h * h) * math.sqrt(c * c + f * f + ii * ii)
    )
    if not (hadamard > 0.0 and abs(det) > 1e-6 * hadamard):
        return False
    inv = 1.0 / det
    f0 = (c0 * x + (c * h - b_ * ii) * y + (b_ * f - c * e) * z) * inv
    f1 = (c1 * x + (a * ii - c * g) * y + (c * d - a * f) * z) * inv
    f2 = (c2 * x + (b_ * g - a * h) * y + (a * e - b_ * d) * z) * inv
    R = R_world_base
    for k in range(3):
        force_in_world[i, k] = R[k, 0] * f0 + R[k, 1] * f1 + R[k, 2] * f2
        wrench_in_foot[i, k] = X_base_foot[i, 0, k] * f0 + X_base_foot[i, 1, k] * f1 + X_base_foot[i, 2, k] * f2
        wrench_in_foot[i, 3 + k] = 0.0
    return True


@kernel
def forces_from_bias(
    J6: FloatArray,
    leg_cols: NDArray[np.intp],
    bias: FloatArray,
    tau: FloatArray,
    R_world_base: FloatArray,
    X_base_foot: FloatArray,
    force_in_world: FloatArray,
    wrench_in_foot: FloatArray,
) -> int:
    """Point-foot contact forces of 3-joint legs, all feet in one call, from the bias torques ``bias`` on the joints:
    ``g(q)`` (quasi-static) or the joint rows of ``M a + h`` (full dynamics). Per leg
    ``f_base_in_base = (J_leg^T)^-1 (bias_leg - tau_leg)`` (``ContactForceEstimator.estimate`` with
    ``_estimate_point_3x3``).

    Args:
        J6: (n, 6, nj) foot Jacobians in B. leg_cols: (n, 3) joint columns of each leg.
        bias: (nj,) N m, the bias torques. tau: (nj,) N m, measured joint torques.
        R_world_base: (3, 3). X_base_foot: (n, 4, 4) foot placements in B.
        force_in_world: (n, 3) N, wrench_in_foot: (n, 6): written (as :func:`point_foot_forces`).

    Returns:
        As :func:`point_foot_forces`: bit i set when foot i's system failed the conditioning test.
    """
    failed = 0
    for i in range(J6.shape[0]):
        c0_, c1_, c2_ = leg_cols[i, 0], leg_cols[i, 1], leg_cols[i, 2]
        x = bias[c0_] - tau[c0_]
        y = bias[c1_] - tau[c1_]
        z = bias[c2_] - tau[c2_]
        if not _leg_force(J6, leg_cols, i, x, y, z, R_world_base, X_base_foot, force_in_world, wrench_in_foot):
            failed |= 1 << i
    return failed


@kernel
def point_foot_forces(
    J6: FloatArray,
    leg_cols: NDArray[np.intp],
    Jcom: FloatArray,
    total_mass: float,
    g_world: FloatArray,
    tau: FloatArray,
    R_world_base: FloatArray,
    X_base_foot: FloatArray,
    force_in_world: FloatArray,
    wrench_in_foot: FloatArray,
) -> int:
    """Point-foot contact forces of 3-joint legs with gravity compensation, all feet in one call.

    The reference is ``ContactForceEstimator.estimate`` (``bias_torques`` then ``_estimate_point_3x3``): with
    ``g_base = R_world_base^T g_world`` the gravity torques are ``g(q) = -m J_com^T g_base`` (the gradient of the
    potential ``-m g_base . c(q)``; pinocchio's ``computeGeneralizedGravity`` gives the same to rounding), and per leg
    ``f_base_in_base = (J_leg^T)^-1 (g_leg - tau_leg)`` by the adjugate when the Hadamard ratio test of
    ``contact._solve3`` passes.

    Args:
        J6: (n, 6, nj) foot Jacobians in B (``LegKinematics.J6_base_foot``).
        leg_cols: (n, 3) joint columns of each leg.
        Jcom: (3, nv) centre-of-mass Jacobian in B (pinocchio ``jacobianCenterOfMass``, base at the identity).
        total_mass: kg.
        g_world: (3,) m/s^2, gravity in W.
        tau: (nj,) N m, measured joint torques.
        R_world_base: (3, 3) base attitude.
        X_base_foot: (n, 4, 4) foot placements in B (homogeneous).
        force_in_world: (n, 3) N, written: the ground force on each foot, world axes.
        wrench_in_foot: (n, 6) written: [force N, torque N m (zero)] in each foot frame.

    Returns:
        Bit i set when foot i's 3 x 3 system failed the conditioning test (its outputs are then untouched; the
        caller solves it by least squares); 0 when all were solved.
    """
    R = R_world_base
    gb0 = R[0, 0] * g_world[0] + R[1, 0] * g_world[1] + R[2, 0] * g_world[2]
    gb1 = R[0, 1] * g_world[0] + R[1, 1] * g_world[1] + R[2, 1] * g_world[2]
    gb2 = R[0, 2] * g_world[0] + R[1, 2] * g_world[1] + R[2, 2] * g_world[2]
    failed = 0
    for i in range(J6.shape[0]):
        c0_, c1_, c2_ = leg_cols[i, 0], leg_cols[i, 1], leg_cols[i, 2]
        x = -total_mass * (Jcom[0, 6 + c0_] * gb0 + Jcom[1, 6 + c0_] * gb1 + Jcom[2, 6 + c0_] * gb2) - tau[c0_]
        y = -total_mass * (Jcom[0, 6 + c1_] * gb0 + Jcom[1, 6 + c1_] * gb1 + Jcom[2, 6 + c1_] * gb2) - tau[c1_]
        z = -total_mass * (Jcom[0, 6 + c2_] * gb0 + Jcom[1, 6 + c2_] * gb1 + Jcom[2, 6 + c2_] * gb2) - tau[c2_]
        if not _leg_force(J6, leg_cols, i, x, y, z, R, X_base_foot, force_in_world, wrench_in_foot):
            failed |= 1 << i
    return failed


@kernel
def schmitt_step(
    values: FloatArray,
    stamp_ns: int,
    on: float,
    off: float,
    min_on_ns: int,
    min_off_ns: int,
    raw: NDArray[np.bool_],
    in_contact: NDArray[np.bool_],
    pending: NDArray[np.bool_],
    since_ns: NDArray[np.int64],
) -> None:
    """One step of :meth:`~robot_state_estimator.estimation.contact.ContactDetector.update` after the first
    sample, in place: Schmitt trigger per foot, a change reported once held ``min_on_ns`` / ``min_off_ns``
    (``pending[i]`` with ``since_ns[i]``: a change waiting since then); non-finite values keep the state."""
    for i in range(values.shape[0]):
        v = values[i]
        if not math.isfinite(v):
            continue
        if v > on:
            raw[i] = True
        elif v < off:
            raw[i] = False
        if raw[i] == in_contact[i]:
            pending[i] = False
            continue
        if not pending[i]:
            pending[i] = True
            since_ns[i] = stamp_ns
        hold = min_on_ns if raw[i] else min_off_ns
        if stamp_ns - since_ns[i] >= hold:
            in_contact[i] = raw[i]
            pending[i] = False


@kernel
def torque_contacts(
    J6: FloatArray,
    leg_cols: NDArray[np.intp],
    Jcom: FloatArray,
    total_mass: float,
    g_world: FloatArray,
    tau: FloatArray,
    R_world_base: FloatArray,
    X_base_foot: FloatArray,
    force_in_world: FloatArray,
    wrench_in_foot: FloatArray,
    stamp_ns: int,
    on: float,
    off: float,
    min_on_ns: int,
    min_off_ns: int,
    raw: NDArray[np.bool_],
    in_contact: NDArray[np.bool_],
    pending: NDArray[np.bool_],
    since_ns: NDArray[np.int64],
) -> int:
    """:func:`point_foot_forces`, then :func:`schmitt_step` on the vertical forces ``force_in_world[:, 2]`` (the
    torque contact source), in one call. Returns :func:`point_foot_forces`' failure bits; when not 0 the trigger
    did not run (the caller takes the reference path)."""
    failed = point_foot_forces(
        J6, leg_cols, Jcom, total_mass, g_world, tau, R_world_base, X_base_foot, force_in_world, wrench_in_foot
    )
    if failed == 0:
        schmitt_step(force_in_world[:, 2], stamp_ns, on, off, min_on_ns, min_off_ns, raw, in_contact, pending, since_ns)
    return failed


@kernel
def leg_velocity_terms(
    idx: NDArray[np.intp],
    qdot: FloatArray,
    omega: FloatArray,
    R_world_base: FloatArray,
    radii: FloatArray,
    p_base_foot: FloatArray,
    J6: FloatArray,
    v_out: FloatArray,
    c_out: FloatArray,
    Jc_out: FloatArray,
    H_out: FloatArray,
) -> None:
    """Leg-odometry velocities of the feet ``idx`` with rolling spherical feet (radius 0 = point foot).

    The reference is ``LegKinematics.rolling_contact_terms`` (see its docstring and the module docstring of
    :mod:`~robot_state_estimator.estimation.kinematics`): ``z = R_world_base^T e_z``, ``c = r - rho z``,
    ``J_c = J_lin + rho [z]x J_ang``, ``v = -(J_c qdot) - omega x c``, ``H = -rho [omega_foot]x [z]x`` with
    ``omega_foot = J_ang qdot + omega``.

    Args:
        idx: (k,) foot indices. qdot: (nj,) rad/s. omega: (3,) rad/s in B. R_world_base: (3, 3).
        radii: (k,) m, those feet's radii. p_base_foot: (n, 3) m. J6: (n, 6, nj).
        v_out: (k, 3), c_out: (k, 3), Jc_out: (k, 3, nj), H_out: (k, 3, 3): written.
    """
    z0, z1, z2 = R_world_base[2, 0], R_world_base[2, 1], R_world_base[2, 2]
    nj = qdot.shape[0]
    for m in range(idx.shape[0]):
        i = idx[m]
        rho = radii[m]
        c0 = p_base_foot[i, 0] - rho * z0
        c1 = p_base_foot[i, 1] - rho * z1
        c2 = p_base_foot[i, 2] - rho * z2
        c_out[m, 0], c_out[m, 1], c_out[m, 2] = c0, c1, c2
        jq0 = jq1 = jq2 = 0.0
        wf0, wf1, wf2 = 0.0, 0.0, 0.0
        for j in range(nj):
            a0, a1, a2 = J6[i, 3, j], J6[i, 4, j], J6[i, 5, j]
            # [z]x J_ang column: z x a
            j0 = J6[i, 0, j] + rho * (z1 * a2 - z2 * a1)
            j1 = J6[i, 1, j] + rho * (z2 * a0 - z0 * a2)
            j2 = J6[i, 2, j] + rho * (z0 * a1 - z1 * a0)
            Jc_out[m, 0, j], Jc_out[m, 1, j], Jc_out[m, 2, j] = j0, j1, j2
            qd = qdot[j]
            jq0 += j0 * qd
            jq1 += j1 * qd
            jq2 += j2 * qd
            wf0 += a0 * qd
            wf1 += a1 * qd
            wf2 += a2 * qd
        w0, w1, w2 = omega[0], omega[1], omega[2]
        v_out[m, 0] = -jq0 - (w1 * c2 - w2 * c1)
        v_out[m, 1] = -jq1 - (w2 * c0 - w0 * c2)
        v_out[m, 2] = -jq2 - (w0 * c1 - w1 * c0)
        wf0 += w0
        wf1 += w1
        wf2 += w2
        # [wf]x [z]x = z wf^T - (wf . z) I, times -rho
        dot = wf0 * z0 + wf1 * z1 + wf2 * z2
        wf = (wf0, wf1, wf2)
        z = (z0, z1, z2)
        for r in range(3):
            for s in range(3):
                val = z[r] * wf[s]
                if r == s:
                    val -= dot
                H_out[m, r, s] = -rho * val
