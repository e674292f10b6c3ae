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

from robot_state_estimator.estimation.jit import kernel

FloatArray = NDArray[np.float64]

__all__ = [
    "foot_jacobians",
    "forward_kinematics",
    "gather_joints",
    "joint_velocity_step",
    "leg_velocity_terms",
    "point_foot_forces",
    "schmitt_step",
    "torque_contacts",
]

#: return codes of :func:`gather_joints`: the first array (in the order position, velocity, effort) with a
#: non-finite value that is used
GATHER_OK, GATHER_NAN_POSITION, GATHER_NAN_VELOCITY, GATHER_NAN_EFFORT = 0, 1, 2, 3


@kernel
def foot_jacobians(J_world: FloatArray, X_base_foot: FloatArray, support: NDArray[np.bool_], J6: FloatArray) -> None:
    """Foot Jacobians ``LOCAL_WORLD_ALIGNED`` from the joint Jacobians, what pinocchio's ``getFrameJacobian`` does.

    A column of pinocchio's joint Jacobian ``data.J`` (after ``computeJointJacobians``) is the joint's unit twist
    in the world frame at the world origin, ``(v_k, w_k)``; at the foot point ``p`` (world axes) it is
    ``(v_k - p x w_k, w_k)`` (Featherstone 2008 sec. 2.8, the change of reference point). With the base at the
    identity the world frame is B.

    Args:
        J_world: (6, nv) ``data.J``.
        X_base_foot: (n, 4, 4) foot placements (``updateFramePlacement``), for ``p``.
        support: (n, nj) whether joint j moves foot i; the other columns of ``J6`` are left untouched (zero).
        J6: (n, 6, nj) written: the joint columns (``nv = nj + 6``).
    """
    for i in range(X_base_foot.shape[0]):
        p0, p1, p2 = X_base_foot[i, 0, 3], X_base_foot[i, 1, 3], X_base_foot[i, 2, 3]
        for j in range(support.shape[1]):
            if not support[i, j]:
                continue
            k = 6 + j
            w0, w1, w2 = J_world[3, k], J_world[4, k], J_world[5, k]
            J6[i, 0, j] = J_world[0, k] - (p1 * w2 - p2 * w1)
            J6[i, 1, j] = J_world[1, k] - (p2 * w0 - p0 * w2)
            J6[i, 2, j] = J_world[2, k] - (p0 * w1 - p1 * w0)
            J6[i, 3, j] = w0
            J6[i, 4, j] = w1
            J6[i, 5, j] = w2


@kernel
def forward_kinematics(
    q: FloatArray,
    parent: NDArray[np.intp],
    q_index: NDArray[np.intp],
    axis: FloatArray,
    M_joint: FloatArray,
    foot_joint: NDArray[np.intp],
    M_foot: FloatArray,
    mass: FloatArray,
    lever: FloatArray,
    support: NDArray[np.bool_],
    oMi: FloatArray,
    J_world: FloatArray,
    X_base_foot: FloatArray,
    J6: FloatArray,
    Jcom: FloatArray,
) -> None:
    """Forward kinematics of a floating-base tree of revolute joints with the base at the identity: what
    pinocchio's ``computeJointJacobians``, ``updateFramePlacement`` per foot, :func:`foot_jacobians` and
    ``jacobianCenterOfMass`` compute (the reference path of ``LegKinematics.update``), in one call.

    Joint j (j >= 2; 0 is the universe, 1 the free flyer, at the identity) is placed in its parent by ``M_joint[j]``
    and rotates by ``q[q_index[j]]`` about its unit ``axis[j]`` (joint frame): ``oMi[j] = oMi[parent] M_joint[j]
    Rot(axis, q)`` with ``Rot = c I + s [a]x + (1 - c) a a^T`` (Rodrigues). Its joint Jacobian column (world =
    base frame, at the origin) is ``(p x w, w)``, ``w = R_oi a``, ``p`` its origin (Featherstone 2008 sec. 2.8).
    Foot f is ``oMi[foot_joint[f]] M_foot[f]``. Centre of mass: ``J_com = sum_b m_b dc_b/dq / sum_b m_b`` with
    ``dc_b/dq_k = w_k x (c_b - p_k)`` for each joint k supporting body b (``c_b = oMi[b] lever_b``).

    Args:
        q: (nj,) rad. parent, q_index: (n,) per joint, its parent and its index in q (-1 for 0 and 1).
        axis: (n, 3) unit axes. M_joint: (n, 4, 4) joint placements in the parent. foot_joint: (nf,).
        M_foot: (nf, 4, 4) foot frame placements in their joint. mass: (n,) kg; lever: (n, 3) m, body centres
            of mass in the joint frames. support: (nf, nj) as :func:`foot_jacobians`.
        oMi: (n, 4, 4) work, written (entries 0 and 1 must hold the identity). J_world: (6, nj + 6) written
            (``data.J``: the columns of the joints; the first six untouched). X_base_foot: (nf, 4, 4), J6:
            (nf, 6, nj) and Jcom: (3, nj + 6) written (Jcom's first six columns untouched).
    """
    n = parent.shape[0]
    for j in range(2, n):
        qi = q[q_index[j]]
        s = math.sin(qi)
        c = math.cos(qi)
        a0, a1, a2 = axis[j, 0], axis[j, 1], axis[j, 2]
        t = 1.0 - c
        Rq = (
            (c + t * a0 * a0, t * a0 * a1 - s * a2, t * a0 * a2 + s * a1),
            (t * a1 * a0 + s * a2, c + t * a1 * a1, t * a1 * a2 - s * a0),
            (t * a2 * a0 - s * a1, t * a2 * a1 + s * a0, c + t * a2 * a2),
        )
        P = oMi[parent[j]]
        M = M_joint[j]
        for r in range(3):
            T0 = P[r, 0] * M[0, 0] + P[r, 1] * M[1, 0] + P[r, 2] * M[2, 0]
            T1 = P[r, 0] * M[0, 1] + P[r, 1] * M[1, 1] + P[r, 2] * M[2, 1]
            T2 = P[r, 0] * M[0, 2] + P[r, 1] * M[1, 2] + P[r, 2] * M[2, 2]
            oMi[j, r, 3] = P[r, 0] * M[0, 3] + P[r, 1] * M[1, 3] + P[r, 2] * M[2, 3] + P[r, 3]
            for col in range(3):
                oMi[j, r, col] = T0 * Rq[0][col] + T1 * Rq[1][col] + T2 * Rq[2][col]
        Oj = oMi[j]
        w0 = Oj[0, 0] * a0 + Oj[0, 1] * a1 + Oj[0, 2] * a2
        w1 = Oj[1, 0] * a0 + Oj[1, 1] * a1 + Oj[1, 2] * a2
        w2 = Oj[2, 0] * a0 + Oj[2, 1] * a1 + Oj[2, 2] * a2
        p0, p1, p2 = Oj[0, 3], Oj[1, 3], Oj[2, 3]
        k = 6 + q_index[j]
        J_world[0, k] = p1 * w2 - p2 * w1
        J_world[1, k] = p2 * w0 - p0 * w2
        J_world[2, k] = p0 * w1 - p1 * w0
        J_world[3, k] = w0
        J_world[4, k] = w1
        J_world[5, k] = w2
    for f in range(foot_joint.shape[0]):
        Oj = oMi[foot_joint[f]]
        M = M_foot[f]
        for r in range(3):
            for col in range(4):
                X_base_foot[f, r, col] = Oj[r, 0] * M[0, col] + Oj[r, 1] * M[1, col] + Oj[r, 2] * M[2, col]
            X_base_foot[f, r, 3] += Oj[r, 3]
    foot_jacobians(J_world, X_base_foot, support, J6)
    total = 0.0
    for b in range(n):
        total += mass[b]
    for k in range(6, Jcom.shape[1]):
        for r in range(3):
            Jcom[r, k] = 0.0
    for b in range(2, n):
        Oj = oMi[b]
        cb = (
            Oj[0, 0] * lever[b, 0] + Oj[0, 1] * lever[b, 1] + Oj[0, 2] * lever[b, 2] + Oj[0, 3],
            Oj[1, 0] * lever[b, 0] + Oj[1, 1] * lever[b, 1] + Oj[1, 2] * lever[b, 2] + Oj[1, 3],
            Oj[2, 0] * lever[b, 0] + Oj[2, 1] * lever[b, 1] + Oj[2, 2] * lever[b, 2] + Oj[2, 3],
        )
        m = mass[b] / total
        j = b
        while j >= 2:
            k = 6 + q_index[j]
            w0, w1, w2 = J_world[3, k], J_world[4, k], J_world[5, k]
            d0, d1, d2 = cb[0] - oMi[j, 0, 3], cb[1] - oMi[j, 1, 3], cb[2] - oMi[j, 2, 3]
            Jcom[0, k] += m * (w1 * d2 - w2 * d1)
            Jcom[1, k] += m * (w2 * d0 - w0 * d2)
            Jcom[2, k] += m * (w0 * d1 - w1 * d0)
            j = parent[j]


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
    ``g_B = R_WB^T g_W`` the gravity torques are ``g(q) = -m J_com^T g_B`` (the gradient of the potential
    ``-m g_B . c(q)``; pinocchio's ``computeGeneralizedGravity`` gives the same to rounding), and per leg
    ``f_B = (J_leg^T)^-1 (g_leg - tau_leg)`` by the adjugate when the Hadamard ratio test of
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
    failed = 0
    R = R_world_base
    gb0 = R[0, 0] * g_world[0] + R[1, 0] * g_world[1] + R[2, 0] * g_world[2]
    gb1 = R[0, 1] * g_world[0] + R[1, 1] * g_world[1] + R[2, 1] * g_world[2]
    gb2 = R[0, 2] * g_world[0] + R[1, 2] * g_world[1] + R[2, 2] * g_world[2]
    for i in range(J6.shape[0]):
        # A = J_leg^T: A[r, k] = J6[i, k, cols[r]] (the naming of contact._solve3); right-hand side g - tau
        c0_, c1_, c2_ = leg_cols[i, 0], leg_cols[i, 1], leg_cols[i, 2]
        x = -total_mass * (Jcom[0, 6 + c0_] * gb0 + Jcom[1, 6 + c0_] * gb1 + Jcom[2, 6 + c0_] * gb2) - tau[c0_]
        y = -total_mass * (Jcom[0, 6 + c1_] * gb0 + Jcom[1, 6 + c1_] * gb1 + Jcom[2, 6 + c1_] * gb2) - tau[c1_]
        z = -total_mass * (Jcom[0, 6 + c2_] * gb0 + Jcom[1, 6 + c2_] * gb1 + Jcom[2, 6 + c2_] * gb2) - tau[c2_]
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
            failed |= 1 << i
            continue
        inv = 1.0 / det
        f0 = (c0 * x + (c * h - b_ * ii) * y + (b_ * f - c * e) * z) * inv
        f1 = (c1 * x + (a * ii - c * g) * y + (c * d - a * f) * z) * inv
        f2 = (c2 * x + (b_ * g - a * h) * y + (a * e - b_ * d) * z) * inv
        for k in range(3):
            force_in_world[i, k] = R[k, 0] * f0 + R[k, 1] * f1 + R[k, 2] * f2
            wrench_in_foot[i, k] = X_base_foot[i, 0, k] * f0 + X_base_foot[i, 1, k] * f1 + X_base_foot[i, 2, k] * f2
            wrench_in_foot[i, 3 + k] = 0.0
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
    :mod:`~robot_state_estimator.estimation.kinematics`): ``z = R_WB^T e_z``, ``c = r - rho z``,
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
