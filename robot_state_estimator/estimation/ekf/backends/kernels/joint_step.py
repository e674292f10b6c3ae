"""The compiled joint step: a joint sample's whole step after pinocchio's kinematics in one call (foot placements and
Jacobians stored, point-foot forces, contact trigger, the stance feet's leg update, the outputs). No new maths: the
kernels it calls are each checked against their references."""

from __future__ import annotations

import numpy as np

from robot_state_estimator.estimation.ekf.backends.kernels.legs import point_foot_forces, schmitt_step
from robot_state_estimator.estimation.ekf.backends.kernels.outputs import finite_outputs
from robot_state_estimator.estimation.ekf.backends.kernels.update import stance_update
from robot_state_estimator.estimation.ekf.layout import (
    JF_G,
    JF_GATE,
    JF_MASS,
    JF_RADII,
    JF_SE2,
    JF_SF2,
    JI_LEGS,
    JI_MIN_OFF,
    JI_MIN_ON,
    JI_ROLLING,
    JI_USE_J,
    JOINT_ACCEPTED_SHIFT,
    JOINT_FORCES_FAILED,
    JOINT_NOT_FINITE_SHIFT,
    JOINT_NOT_PD,
    OUT_SIZE,
    X_R,
)
from robot_state_estimator.estimation.jit import kernel


@kernel
def joint_step(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    placements: tuple[np.ndarray, ...],
    jacobians: tuple[np.ndarray, ...],
    X_base_foot: np.ndarray,
    J6: np.ndarray,
    Jcom: np.ndarray,
    qtau: np.ndarray,
    ti: np.ndarray,
    tf: np.ndarray,
    on: float,
    off: float,
    stamp_ns: int,
    flags: np.ndarray,
    since_ns: np.ndarray,
    force_in_world: np.ndarray,
    wrench_in_foot: np.ndarray,
    buf: np.ndarray,
) -> int:
    """A joint sample's step after pinocchio's kinematics, in one call (``RobotStateEstimator._apply_joints`` with
    the torque contact source, then ``BaseEkf.finite_output_vector``): pinocchio's foot placements and Jacobians
    stored as ``LegKinematics.update`` stores them, the point-foot forces and the Schmitt trigger
    on their vertical components (:func:`.legs.torque_contacts`), the leg
    update of the feet in contact (:func:`stance_update`) and the outputs (:func:`finite_outputs`). No new maths:
    the kernels it calls are each checked against their references.

    Args:
        x, P, c: the filter's buffers (``ekf.layout``).
        placements, jacobians: per foot, pinocchio's placement (4, 4) and frame Jacobian (6, nv) in B
            (``LegKinematics.foot_terms``, base at the identity).
        X_base_foot: (n, 4, 4), J6: (n, 6, nj): written, the placements and the Jacobians' joint columns
            (``LegKinematics``' buffers, as its ``update`` writes them).
        Jcom: (3, nv) centre-of-mass Jacobian in B (pinocchio's ``jacobianCenterOfMass`` after ``foot_terms``).
        qtau: (3, nj) joint positions (rad), the velocities in use (rad/s), the measured torques (N m).
        ti, tf: the integer and float tables (:data:`JI_MIN_ON`, :data:`JF_MASS`, ...).
        on, off: the trigger's thresholds (N, on the vertical force in W). stamp_ns: the sample's stamp (ns).
        flags: (3, n) bool, the trigger's raw state, contact state and pending changes; since_ns: (n,) int64
            (``ContactDetector``; updated in place).
        force_in_world: (n, 3) N, wrench_in_foot: (n, 6) (``ContactForceEstimator``'s; written).
        buf: (:func:`joint_buffer_size`,) written: ``[0:OUT_SIZE]`` the outputs (when finite), then the forces
            (n, 3) and wrenches (n, 6), then the leg update's output (13 k for the k feet in contact, as
            :func:`leg_update`).

    Returns:
        :data:`JOINT_FORCES_FAILED` (a leg's 3 x 3 system is ill-conditioned; nothing changed),
        :data:`JOINT_NOT_PD` (forces and trigger done, filter unchanged), else the contact mask, the number of
        accepted feet and whether the state is not finite (:data:`JOINT_ACCEPTED_SHIFT`).
    """
    n = J6.shape[0]
    nj = J6.shape[2]
    for i in range(n):
        Xi = placements[i]
        Ji = jacobians[i]
        for a in range(4):
            for b in range(4):
                X_base_foot[i, a, b] = Xi[a, b]
        for a in range(6):
            for j in range(nj):
                J6[i, a, j] = Ji[a, 6 + j]
    legs = ti[JI_LEGS : JI_LEGS + 3 * n].reshape((n, 3))
    R = x[X_R : X_R + 9].reshape((3, 3))
    failed = point_foot_forces(
        J6, legs, Jcom, tf[JF_MASS], tf[JF_G : JF_G + 3], qtau[2], R, X_base_foot, force_in_world, wrench_in_foot
    )
    if failed != 0:
        return JOINT_FORCES_FAILED
    in_contact = flags[1]
    schmitt_step(force_in_world[:, 2], stamp_ns, on, off, ti[JI_MIN_ON], ti[JI_MIN_OFF], flags[0], in_contact,
                 flags[2], since_ns)  # fmt: skip
    o = OUT_SIZE
    mask = 0
    k = 0
    for i in range(n):
        for a in range(3):
            buf[o + 3 * i + a] = force_in_world[i, a]
        for a in range(6):
            buf[o + 3 * n + 6 * i + a] = wrench_in_foot[i, a]
        if in_contact[i]:
            mask |= 1 << i
            k += 1
    lo = o + 9 * n
    n_acc = stance_update(x, P, c, in_contact, qtau[1], tf[JF_RADII : JF_RADII + n], X_base_foot[:, :3, 3], J6,
                          ti[JI_ROLLING] != 0, ti[JI_USE_J] != 0, tf[JF_SF2], tf[JF_SE2], tf[JF_GATE],
                          buf[lo : lo + 13 * k])  # fmt: skip
    if n_acc < 0:
        return JOINT_NOT_PD
    result = mask | (n_acc << JOINT_ACCEPTED_SHIFT)
    if not finite_outputs(x, P, c, buf[:OUT_SIZE]):
        result |= 1 << JOINT_NOT_FINITE_SHIFT
    return result
