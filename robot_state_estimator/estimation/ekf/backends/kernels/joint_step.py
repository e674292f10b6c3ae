"""The compiled joint step: a joint sample's whole step in one call, its kinematics included (foot placements and
Jacobians, the centre-of-mass Jacobian or the inverse dynamics, computed from the constants pinocchio extracted
once: :mod:`robot_state_estimator.estimation.kinematics_kernels`), then the point-foot forces, the contact trigger,
the stance feet's leg update and the outputs. No new maths: the kernels it calls are each checked against their
references (pinocchio for the kinematics, the numpy backend for the rest)."""

from __future__ import annotations

import numpy as np

from robot_state_estimator.common.output_layout import FOOT_FORCE, FOOT_STRIDE, FOOT_WRENCH
from robot_state_estimator.estimation.ekf.backends.kernels.legs import forces_from_bias, prepare_joints, schmitt_step
from robot_state_estimator.estimation.ekf.backends.kernels.outputs import finite_outputs
from robot_state_estimator.estimation.ekf.backends.kernels.update import stance_update
from robot_state_estimator.estimation.ekf.layout import (
    C_G_WORLD,
    GATHER_OK,
    JF_G,
    JF_GATE,
    JF_HIGH_NIS,
    JF_JV_MAX_DT,
    JF_JV_TAU,
    JF_RADII,
    JF_SC2,
    JF_SE2,
    JF_SF2,
    JI_FULL,
    JI_LEGS,
    JI_MIN_OFF,
    JI_MIN_ON,
    JI_ROLLING,
    JI_USE_J,
    JOINT_ACCEPTED_SHIFT,
    JOINT_FORCES_FAILED,
    JOINT_HIGH_NIS_SHIFT,
    JOINT_NOT_FINITE_SHIFT,
    JOINT_NOT_PD,
    JOINT_NOT_PREPARED,
    JV_HAS_PREV,
    JV_STAMP,
    JV_VALID,
    OUT_SIZE,
    PREPARE_FILTERED,
    PREPARE_MEASURED,
    TAB_DYN,
    TAB_DYN_LEN,
    TAB_FF,
    TAB_FF_COLS,
    TAB_FI,
    TAB_JF,
    TAB_JF_COLS,
    TAB_JI,
    TAB_JI_COLS,
    TAB_NF,
    TAB_NJ,
    TAB_TF,
    TAB_TF_LEN,
    TAB_TI,
    TAB_TI_LEN,
    TAB_WORK,
    TAB_WORK_COLS,
    X_ALPHA,
    X_F,
    X_OMEGA,
    X_R,
    X_V,
)
from robot_state_estimator.estimation.jit import kernel
from robot_state_estimator.estimation.kinematics_kernels import foot_terms, gravity_torques, rnea


@kernel
def bias_torques(
    x: np.ndarray,
    c: np.ndarray,
    joint_ints: np.ndarray,
    joint_floats: np.ndarray,
    work: np.ndarray,
    dyn: np.ndarray,
    total_mass: float,
    g_world: np.ndarray,
    qdot: np.ndarray,
    full: bool,
    stamp_ns: int,
    qdot_prev: np.ndarray,
    prev_stamp: np.ndarray,
) -> np.ndarray:
    """The bias torques of the force estimate on the joints (``ContactSource._estimate_forces``,
    ``ContactForceEstimator.bias_torques``) after :func:`foot_terms` of the joint positions: ``g(q) = -M J_com^T
    g_base``, or with ``full`` the joint rows of ``M a + h`` by RNEA with the filter's base motion (``v =
    [v_base_in_base, omega_base_in_base, qdot]``, ``a = [f_base_in_base + R^T g_world - omega_base_in_base x
    v_base_in_base, alpha_base_in_base, qddot]``) and the joint accelerations ``qddot`` from the previous joint
    velocities (``ContactForceEstimator.joint_acceleration``: zero without them).

    Args:
        x, c: the filter's buffers (``ekf.layout``).
        joint_ints, joint_floats, work: the kinematics' model and work arrays (after :func:`foot_terms`).
        dyn: (:func:`~...layout.dynamics_buffer_size`,) the dynamics buffer (its J_com written by
            :func:`foot_terms`); its torque part written.
        total_mass: kg. g_world: (3,) m/s^2, gravity in W of the force estimate.
        qdot: (nj,) rad/s, the joint velocities in use. full: the full dynamics.
        stamp_ns: the sample's stamp. qdot_prev: (nj,) rad/s, prev_stamp: (2,) int64 [held, stamp ns]: the previous
            joint velocities (read; the caller records the new ones once the forces are solved).

    Returns:
        (nj,) N m, a view of ``dyn``.
    """
    nj = qdot.shape[0]
    nv = nj + 6
    R = x[X_R : X_R + 9]
    gb = dyn[0:3]
    for k in range(3):
        gb[k] = R[k] * g_world[0] + R[3 + k] * g_world[1] + R[6 + k] * g_world[2]
    o = 6 + 3 * nj
    tau = dyn[o : o + nv]
    if not full:
        J_com = dyn[6 : 6 + 3 * nj].reshape((3, nj))
        gravity_torques(J_com, total_mass, gb, tau[6:])
        return tau[6:]
    v = dyn[o + nv : o + 2 * nv]
    a = dyn[o + 2 * nv : o + 3 * nv]
    w0, w1, w2 = x[X_OMEGA], x[X_OMEGA + 1], x[X_OMEGA + 2]
    v0, v1, v2 = x[X_V], x[X_V + 1], x[X_V + 2]
    for k in range(3):
        v[k] = x[X_V + k]
        v[3 + k] = x[X_OMEGA + k]
        a[3 + k] = x[X_ALPHA + k]
        a[k] = x[X_F + k] + (R[k] * c[C_G_WORLD] + R[3 + k] * c[C_G_WORLD + 1] + R[6 + k] * c[C_G_WORLD + 2])
    a[0] -= w1 * v2 - w2 * v1
    a[1] -= w2 * v0 - w0 * v2
    a[2] -= w0 * v1 - w1 * v0
    held = prev_stamp[0] != 0 and stamp_ns > prev_stamp[1]
    dt = (stamp_ns - prev_stamp[1]) * 1e-9
    for j in range(nj):
        v[6 + j] = qdot[j]
        a[6 + j] = (qdot[j] - qdot_prev[j]) / dt if held else 0.0
    rnea(v, a, gb, joint_ints, joint_floats, work, tau)
    return tau[6:]


@kernel
def tables(
    itab: np.ndarray, ftab: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The parts of the joint step's tables (``layout.TAB_*``), as views: ``joint_ints`` (njoints, cols),
    ``frame_ints`` (n_frames,), ``ti``, ``joint_floats`` (njoints, cols), ``frame_floats`` (n_frames, cols), ``work``
    (njoints, cols), ``dyn``, ``tf``."""
    nj, nf = itab[TAB_NJ], itab[TAB_NF]
    o, w = itab[TAB_JI], itab[TAB_JI_COLS]
    joint_ints = itab[o : o + nj * w].reshape((nj, w))
    frame_ints = itab[itab[TAB_FI] : itab[TAB_FI] + nf]
    ti = itab[itab[TAB_TI] : itab[TAB_TI] + itab[TAB_TI_LEN]]
    o, w = itab[TAB_JF], itab[TAB_JF_COLS]
    joint_floats = ftab[o : o + nj * w].reshape((nj, w))
    o, w = itab[TAB_FF], itab[TAB_FF_COLS]
    frame_floats = ftab[o : o + nf * w].reshape((nf, w))
    o, w = itab[TAB_WORK], itab[TAB_WORK_COLS]
    work = ftab[o : o + nj * w].reshape((nj, w))
    dyn = ftab[itab[TAB_DYN] : itab[TAB_DYN] + itab[TAB_DYN_LEN]]
    tf = ftab[itab[TAB_TF] : itab[TAB_TF] + itab[TAB_TF_LEN]]
    return joint_ints, frame_ints, ti, joint_floats, frame_floats, work, dyn, tf


@kernel
def joint_step(
    qtau: np.ndarray,
    stamp_ns: int,
    measured: bool,
    on: float,
    off: float,
    buf: np.ndarray,
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    itab: np.ndarray,
    ftab: np.ndarray,
    X_base_foot: np.ndarray,
    J6: np.ndarray,
    flags: np.ndarray,
    since_ns: np.ndarray,
    qdot_prev: np.ndarray,
    prev_stamp: np.ndarray,
    force_in_world: np.ndarray,
    wrench_in_foot: np.ndarray,
) -> int:
    """A joint sample's step in one call (``LegOdometry.apply`` with the torque contact source, then
    ``BaseEkf.finite_output_vector``): the foot placements and Jacobians and the centre-of-mass Jacobian
    (:func:`foot_terms`, stored as ``LegKinematics.update`` stores pinocchio's), the bias torques
    (:func:`bias_torques`: ``g(q)`` or ``M a + h``), the point-foot forces and the Schmitt trigger on their vertical
    components, the leg update of the feet in contact (:func:`stance_update`) and the outputs
    (:func:`finite_outputs`).

    The sample's arguments come first, then the estimator's state (the same arrays at every call: the caller binds
    them once, ``CompiledJointStep``).

    Args:
        qtau: (3, nj) joint positions (rad), the velocities in use (rad/s), the measured torques (N m).
        stamp_ns: the sample's stamp (ns).
        measured: the velocities are the message's (the full dynamics, when ``ti[JI_FULL]``, needs them).
        on, off: the trigger's thresholds (N, on the vertical force in W).
        buf: (:func:`joint_buffer_size`,) written: ``[0:OUT_SIZE]`` the outputs (when finite), then per foot its
            wrench in the foot frame (6) and its force in W (3) (``common.output_layout.FOOT_FIELDS``), then the leg
            update's output (13 k for the k feet in contact, as :func:`leg_update`).
        x, P, c: the filter's buffers (``ekf.layout``).
        itab, ftab: the step's tables (``layout.TAB_*``, :func:`tables`): the kinematics' model arrays
            (``kinematics_kernels.pack_model`` of the feet) and work array, the dynamics work buffer
            (:func:`~...layout.dynamics_buffer_size`), the integer and float tables ``ti``, ``tf``
            (:data:`JI_MIN_ON`, :data:`JF_MASS`, ...).
        X_base_foot: (n, 4, 4), J6: (n, 6, nj): written, the foot placements and Jacobians in B (``LegKinematics``'
            buffers, as its ``update`` writes them).
        flags: (3, n) bool, the trigger's raw state, contact state and pending changes; since_ns: (n,) int64
            (``ContactDetector``; updated in place).
        qdot_prev: (nj,), prev_stamp: (2,) int64: the previous joint velocities of the full dynamics
            (``ContactForceEstimator``'s; once the forces are solved: updated with the full dynamics, else dropped).
        force_in_world: (n, 3) N, wrench_in_foot: (n, 6) (``ContactForceEstimator``'s; written).

    Returns:
        :data:`JOINT_FORCES_FAILED` (a leg's 3 x 3 system is ill-conditioned; only the kinematics' buffers
        changed), :data:`JOINT_NOT_PD` (forces and trigger done, filter unchanged), else the contact mask, the
        number of accepted feet, whether the state is not finite and whether a stance foot's NIS is above
        ``tf[JF_HIGH_NIS]`` (:data:`JOINT_ACCEPTED_SHIFT`).
    """
    n = J6.shape[0]
    nj = J6.shape[2]
    joint_ints, frame_ints, ti, joint_floats, frame_floats, work, dyn, tf = tables(itab, ftab)
    qdot = qtau[1]
    J_com = dyn[6 : 6 + 3 * nj].reshape((3, nj))
    total_mass = foot_terms(qtau[0], joint_ints, joint_floats, frame_ints, frame_floats, work, X_base_foot, J6,
                            dyn[3:6], J_com)  # fmt: skip
    full = ti[JI_FULL] != 0 and measured
    bias = bias_torques(x, c, joint_ints, joint_floats, work, dyn, total_mass, tf[JF_G : JF_G + 3], qdot, full,
                        stamp_ns, qdot_prev, prev_stamp)  # fmt: skip
    legs = ti[JI_LEGS : JI_LEGS + 3 * n].reshape((n, 3))
    R = x[X_R : X_R + 9].reshape((3, 3))
    if forces_from_bias(J6, legs, bias, qtau[2], R, X_base_foot, force_in_world, wrench_in_foot) != 0:
        return JOINT_FORCES_FAILED
    if full:
        for j in range(nj):
            qdot_prev[j] = qdot[j]
        prev_stamp[0] = 1
        prev_stamp[1] = stamp_ns
    else:
        prev_stamp[0] = 0
    in_contact = flags[1]
    schmitt_step(force_in_world[:, 2], stamp_ns, on, off, ti[JI_MIN_ON], ti[JI_MIN_OFF], flags[0], in_contact,
                 flags[2], since_ns)  # fmt: skip
    o = OUT_SIZE
    mask = 0
    k = 0
    for i in range(n):
        for a in range(6):
            buf[o + FOOT_STRIDE * i + FOOT_WRENCH + a] = wrench_in_foot[i, a]
        for a in range(3):
            buf[o + FOOT_STRIDE * i + FOOT_FORCE + a] = force_in_world[i, a]
        if in_contact[i]:
            mask |= 1 << i
            k += 1
    lo = o + FOOT_STRIDE * n
    n_acc = stance_update(x, P, c, in_contact, qdot, tf[JF_RADII : JF_RADII + n], X_base_foot[:, :3, 3], J6,
                          ti[JI_ROLLING] != 0, ti[JI_USE_J] != 0, tf[JF_SF2], tf[JF_SC2], tf[JF_SE2], tf[JF_GATE],
                          buf[lo : lo + 13 * k])  # fmt: skip
    if n_acc < 0:
        return JOINT_NOT_PD
    result = mask | (n_acc << JOINT_ACCEPTED_SHIFT)
    high = tf[JF_HIGH_NIS]
    for i in range(k):  # the slip report's test (SlipDetector.update): a stance foot's NIS above its threshold
        if buf[lo + 12 * k + i] > high:
            result |= 1 << JOINT_HIGH_NIS_SHIFT
            break
    if not finite_outputs(x, P, c, buf[:OUT_SIZE]):
        result |= 1 << JOINT_NOT_FINITE_SHIFT
    return result


@kernel
def prepared_joint_step(
    position: np.ndarray,
    velocity: np.ndarray,
    effort: np.ndarray,
    mode: int,
    stamp_ns: int,
    on: float,
    off: float,
    buf: np.ndarray,
    gather: np.ndarray,
    q_prev: np.ndarray,
    qdot_est: np.ndarray,
    jv_state: np.ndarray,
    q_full: np.ndarray,
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    itab: np.ndarray,
    ftab: np.ndarray,
    X_base_foot: np.ndarray,
    J6: np.ndarray,
    flags: np.ndarray,
    since_ns: np.ndarray,
    qdot_prev: np.ndarray,
    prev_stamp: np.ndarray,
    force_in_world: np.ndarray,
    wrench_in_foot: np.ndarray,
) -> int:
    """A joint sample from its message arrays to the outputs in one call: the joint velocity estimate's regular step
    to ``stamp_ns`` (``JointVelocityEstimator.step_coefficients`` on ``jv_state`` and its limits, copied into ``tf``:
    the interval and the low-pass gain), :func:`.legs.prepare_joints` (gather, finiteness, that step, the positions
    into ``q_full``) into the rows of ``buf`` (``layout.joint_rows_offset``), the step recorded
    (``JointVelocityEstimator.stepped``), then :func:`joint_step` of those rows (``measured`` from ``mode``'s
    :data:`PREPARE_MEASURED`). The sample's arguments first (``mode``: its :data:`PREPARE_WHOLE` and
    :data:`PREPARE_MEASURED` bits; :data:`PREPARE_FILTERED` is set here; ``buf`` of ``layout.joint_buffer_size``),
    then the estimator's state: the joint input's ``gather``, the joint velocity estimator's previous positions,
    estimate (:func:`.legs.prepare_joints`) and ``state`` (``layout.JV_*``; updated in place), ``q_full``, then
    :func:`joint_step`'s.

    Returns:
        :data:`JOINT_NOT_PREPARED` when it is not the usual sample (no regular step of the joint velocity estimate,
        a used value not finite; nothing changed), else :func:`joint_step`'s.
    """
    if jv_state[JV_HAS_PREV] == 0:
        return JOINT_NOT_PREPARED
    tf = tables(itab, ftab)[7]
    dt = (stamp_ns - jv_state[JV_STAMP]) * 1e-9
    if not 0.0 < dt <= tf[JF_JV_MAX_DT]:
        return JOINT_NOT_PREPARED
    tau = tf[JF_JV_TAU]
    alpha = 0.0
    if jv_state[JV_VALID] != 0 and tau != 0.0:
        alpha = dt / (dt + tau)
        mode |= PREPARE_FILTERED
    nj = q_prev.shape[0]
    rows = buf.shape[0] - 3 * nj  # layout.joint_rows_offset
    qtau = buf[rows:].reshape((3, nj))
    if prepare_joints(position, velocity, effort, gather, mode, q_prev, qdot_est, dt, alpha, qtau, q_full) != GATHER_OK:
        return JOINT_NOT_PREPARED
    jv_state[JV_VALID] = 1
    jv_state[JV_STAMP] = stamp_ns
    return joint_step(qtau, stamp_ns, (mode & PREPARE_MEASURED) != 0, on, off, buf, x, P, c, itab, ftab, X_base_foot,
                      J6, flags, since_ns, qdot_prev, prev_stamp, force_in_world, wrench_in_foot)  # fmt: skip
