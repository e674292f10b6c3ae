"""Compiled kinematics and dynamics of a floating-base robot from constants pinocchio extracted once.

What the estimator's joint step takes from pinocchio today (``LegKinematics.foot_terms``,
``pin.jacobianCenterOfMass``, ``ContactForceEstimator.bias_torques``), computed by textbook recursions in numba
from :class:`~robot_state_estimator.estimation.model_constants.ModelConstants`, all with the free-flyer root at the
identity configuration ("base" = pinocchio's world then; the base link frame B for the estimator's models):

- :func:`forward_kinematics`: the placement of every joint frame in its parent's (``liMi``) and in the base
  (``oMi``). Featherstone, "Rigid Body Dynamics Algorithms" (RBDA), 2008, sec. 4.2 (a joint's placement in its
  parent is the tree transform ``X_T`` followed by the joint transform ``X_J(q)``; composed from the root down the
  parent array, sec. 4.1) and sec. 4.4 (``X_J`` of revolute and prismatic joints: a rotation about, a
  translation along, the joint axis; Rodrigues' formula for an unaligned axis).
- :func:`frame_placements`: the requested frames (feet) in the base, ``X_base_frame = oMi[joint] X_joint_frame``.
- :func:`frame_jacobians`: their 6-D Jacobians w.r.t. the joint velocities, linear rows = velocity of the frame
  origin, angular rows = angular velocity, both in base axes (pinocchio's ``LOCAL_WORLD_ALIGNED`` with the base
  at the identity; base columns left out). The column of a joint j supporting the frame is the joint's motion
  subspace ``S_j`` seen at the frame origin (RBDA sec. 2.8 and 4.4; Siciliano et al., "Robotics: Modelling,
  Planning and Control", 2009, sec. 3.1.3): ``[a_j x (p_frame - p_j); a_j]`` for a revolute joint with axis ``a_j``
  through ``p_j`` (base coordinates), ``[a_j; 0]`` for a prismatic one; zero for joints not on the frame's path.
- :func:`center_of_mass`: the centre of mass in the base and its Jacobian w.r.t. the joint velocities. With the
  subtree (composite body, RBDA sec. 6.2) mass ``m_j`` and first moment ``h_j = sum_k m_k c_k`` of the bodies
  joint j carries, ``J_com[:, j] = a_j x (h_j - m_j p_j) / M`` (revolute) or ``a_j m_j / M`` (prismatic), which
  is ``sum_k m_k J_{c_k} / M`` column by column (Orin, Goswami and Lee, "Centroidal dynamics of a humanoid
  robot", Autonomous Robots 35, 2013, sec. 3).
- :func:`gravity_torques`: ``g(q) = -M J_com^T g_base``, the gradient of the potential energy ``-M g_base . c(q)``
  (Siciliano et al. 2009, sec. 7.1: the gravity terms of the Lagrange equations).
- :func:`rnea`: inverse dynamics ``tau = M(q) a + C(q, v) v + g(q)`` of the whole floating-base model, with the
  recursive Newton-Euler algorithm (RBDA sec. 5.3, Table 5.1; the floating base as joint 1 with a 6-D motion
  subspace, sec. 9.3; gravity as a fictitious acceleration ``-g`` of the fixed universe, sec. 5.3), in each
  joint's own frame. Spatial vectors are pinocchio's ``[linear; angular]`` (RBDA writes ``[angular; linear]``);
  the spatial cross products are RBDA sec. 2.9 and the rigid-body inertia sec. 2.13.
- :func:`foot_terms`: the first four in one call (the estimator's joint step).

The model and the work and output arrays are plain arrays (no allocation in the kernels; callers own the buffers):
a compiled step calls these functions with its own arrays. :func:`pack_model` makes the kernels' model arrays
(:class:`KernelModel`), :func:`make_work` the work array;
:class:`~robot_state_estimator.estimation.compiled_kinematics.CompiledKinematics` holds them all and calls the kernels
from Python (through ``jit.entry_point``: no type dispatch).

Array layouts (``njoints`` pinocchio joints with the universe and the root; ``nf`` frames; ``nvj = nv - 6``):

- ``joint_ints`` (njoints, 5) int64: parent, kind (``model_constants.JOINT_*``), axis (0/1/2: x/y/z, 3: the
  general ``axis``), index into ``q_joints``, index into the joint velocities (-1 for the universe and the root);
- ``joint_floats`` (njoints, 25): ``X_parent_joint`` rotation (9, row-major) and translation (3), axis (3), mass,
  lever (3), inertia about the centre of mass (6: xx, xy, xz, yy, yz, zz);
- ``frame_ints`` (nf,) int64: parent joint; ``frame_floats`` (nf, 12): ``X_joint_frame`` rotation (9), translation;
- ``work`` (njoints, 46): ``liMi`` rotation (9) and translation (3), ``oMi`` rotation (9) and translation (3),
  subtree mass and first moment (4), and RNEA's velocity (6), acceleration (6) and force (6) per joint.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.jit import kernel
from robot_state_estimator.estimation.model_constants import (
    JOINT_FREE_FLYER,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_REVOLUTE_UNBOUNDED,
    ModelConstants,
)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "KernelModel",
    "center_of_mass",
    "foot_terms",
    "forward_kinematics",
    "frame_jacobians",
    "frame_placements",
    "gravity_torques",
    "make_work",
    "pack_model",
    "rnea",
]

# joint_ints columns
_PARENT, _KIND, _AXIS, _QI, _VI = 0, 1, 2, 3, 4
# joint_floats columns: placement rotation, translation, axis, mass, lever, inertia about the CoM
_PR, _PP, _AX, _M, _LEV, _IN = 0, 9, 12, 15, 16, 19
JOINT_FLOATS = 25
# work columns: liMi rotation, translation; oMi rotation, translation; subtree mass, first moment; RNEA v, a, f
_LR, _LP, _OR, _OP, _SM, _SH, _V, _A, _F = 0, 9, 12, 21, 24, 25, 28, 34, 40
WORK_COLUMNS = 46
_REV, _RUB, _PRI, _FF = JOINT_REVOLUTE, JOINT_REVOLUTE_UNBOUNDED, JOINT_PRISMATIC, JOINT_FREE_FLYER


class KernelModel(NamedTuple):
    """The kernels' model arrays (layouts in the module docstring), made by :func:`pack_model`."""

    joint_ints: IntArray
    joint_floats: FloatArray
    frame_ints: IntArray
    frame_floats: FloatArray


def pack_model(constants: ModelConstants) -> KernelModel:
    """The kernels' model arrays from the extracted constants (new C-contiguous arrays).

    Args:
        constants: from :func:`~robot_state_estimator.estimation.model_constants.extract_model_constants`.
    """
    c = constants
    n = c.njoints
    axis_code = np.where(c.joint_axis_index >= 0, c.joint_axis_index, 3)
    joint_ints = np.ascontiguousarray(
        np.stack([c.joint_parent, c.joint_kind, axis_code, c.joint_q_index, c.joint_v_index], axis=1), dtype=np.int64
    )
    inertia = c.body_inertia
    sym = np.stack([inertia[:, 0, 0], inertia[:, 0, 1], inertia[:, 0, 2], inertia[:, 1, 1], inertia[:, 1, 2],
                    inertia[:, 2, 2]], axis=1)  # fmt: skip
    joint_floats = np.concatenate(
        [
            c.X_parent_joint[:, :3, :3].reshape(n, 9),
            c.X_parent_joint[:, :3, 3],
            c.joint_axis,
            c.body_mass[:, None],
            c.body_lever,
            sym,
        ],
        axis=1,
    )
    frame_floats = np.concatenate([c.X_joint_frame[:, :3, :3].reshape(-1, 9), c.X_joint_frame[:, :3, 3]], axis=1)
    return KernelModel(
        joint_ints,
        np.ascontiguousarray(joint_floats, dtype=float),
        np.ascontiguousarray(c.frame_joint, dtype=np.int64),
        np.ascontiguousarray(frame_floats, dtype=float),
    )


def make_work(constants: ModelConstants) -> FloatArray:
    """(njoints, 46) a zeroed work array for the kernels."""
    return np.zeros((constants.njoints, WORK_COLUMNS))


# ----------------------------------------------------------------------------------------------- small helpers
@kernel
def _joint_rotation(axis: int, ux: float, uy: float, uz: float, c: float, s: float) -> tuple[float, ...]:
    """Row-major rotation by the angle (cos c, sin s) about the unit axis: aligned (axis 0/1/2) or Rodrigues'
    formula ``c I + s [u]x + (1 - c) u u^T`` (RBDA sec. 2.8)."""
    if axis == 0:
        return (1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c)
    if axis == 1:
        return (c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c)
    if axis == 2:
        return (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)
    t = 1.0 - c
    return (
        c + t * ux * ux, t * ux * uy - s * uz, t * ux * uz + s * uy,
        t * ux * uy + s * uz, c + t * uy * uy, t * uy * uz - s * ux,
        t * ux * uz - s * uy, t * uy * uz + s * ux, c + t * uz * uz,
    )  # fmt: skip


@kernel
def _base_axis(joint_floats: FloatArray, work: FloatArray, j: int) -> tuple[float, float, float]:
    """Joint j's axis in base coordinates, ``R_base_joint a_j``."""
    ax, ay, az = joint_floats[j, _AX], joint_floats[j, _AX + 1], joint_floats[j, _AX + 2]
    return (
        work[j, _OR] * ax + work[j, _OR + 1] * ay + work[j, _OR + 2] * az,
        work[j, _OR + 3] * ax + work[j, _OR + 4] * ay + work[j, _OR + 5] * az,
        work[j, _OR + 6] * ax + work[j, _OR + 7] * ay + work[j, _OR + 8] * az,
    )


@kernel
def _cross(ax: float, ay: float, az: float, bx: float, by: float, bz: float) -> tuple[float, float, float]:
    return (ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx)


# ----------------------------------------------------------------------------------------------- kinematics
@kernel
def forward_kinematics(q_joints: FloatArray, joint_ints: IntArray, joint_floats: FloatArray, work: FloatArray) -> None:
    """Placements of every joint frame with the root at the identity: ``liMi`` (in its parent joint's frame) and
    ``oMi`` (in the base), written into ``work`` (RBDA sec. 4.1, 4.2, 4.4; module docstring).

    Args:
        q_joints: (nq - 7,) the joint part of the pinocchio configuration (rad, m; ``cos, sin`` for continuous
            joints).
        joint_ints, joint_floats: :class:`KernelModel` arrays.
        work: (njoints, 46) work array, its pose columns written.
    """
    for k in range(_SM):
        work[0, k] = 0.0
    for k in (0, 4, 8):
        work[0, _LR + k] = 1.0
        work[0, _OR + k] = 1.0
    for i in range(1, joint_ints.shape[0]):
        kind = joint_ints[i, _KIND]
        ux, uy, uz = joint_floats[i, _AX], joint_floats[i, _AX + 1], joint_floats[i, _AX + 2]
        tx = ty = tz = 0.0
        if kind == _REV or kind == _RUB:
            qi = joint_ints[i, _QI]
            if kind == _REV:
                c, s = math.cos(q_joints[qi]), math.sin(q_joints[qi])
            else:  # pinocchio's continuous joint: (cos, sin) as they are
                c, s = q_joints[qi], q_joints[qi + 1]
            Rj = _joint_rotation(joint_ints[i, _AXIS], ux, uy, uz, c, s)
        else:  # prismatic: a translation along the axis; the free-flyer root at the identity
            Rj = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
            if kind == _PRI:
                d = q_joints[joint_ints[i, _QI]]
                tx, ty, tz = ux * d, uy * d, uz * d
        # liMi = X_parent_joint X_J(q)
        for r in range(3):
            k = _PR + 3 * r
            p0, p1, p2 = joint_floats[i, k], joint_floats[i, k + 1], joint_floats[i, k + 2]
            for col in range(3):
                work[i, _LR + 3 * r + col] = p0 * Rj[col] + p1 * Rj[3 + col] + p2 * Rj[6 + col]
            work[i, _LP + r] = joint_floats[i, _PP + r] + p0 * tx + p1 * ty + p2 * tz
        # oMi = oMi[parent] liMi
        parent = joint_ints[i, _PARENT]
        for r in range(3):
            o0, o1, o2 = work[parent, _OR + 3 * r], work[parent, _OR + 3 * r + 1], work[parent, _OR + 3 * r + 2]
            for col in range(3):
                work[i, _OR + 3 * r + col] = (
                    o0 * work[i, _LR + col] + o1 * work[i, _LR + 3 + col] + o2 * work[i, _LR + 6 + col]
                )
            work[i, _OP + r] = work[parent, _OP + r] + o0 * work[i, _LP] + o1 * work[i, _LP + 1] + o2 * work[i, _LP + 2]


@kernel
def frame_placements(
    frame_ints: IntArray, frame_floats: FloatArray, work: FloatArray, X_base_frame: FloatArray
) -> None:
    """``X_base_frame[f] = oMi[joint of f] X_joint_frame[f]`` (after :func:`forward_kinematics`).

    Args:
        frame_ints, frame_floats: :class:`KernelModel` arrays.
        work: after :func:`forward_kinematics`.
        X_base_frame: (nf, 4, 4) written: homogeneous frame placements in the base (m).
    """
    for f in range(frame_ints.shape[0]):
        j = frame_ints[f]
        for r in range(3):
            o0, o1, o2 = work[j, _OR + 3 * r], work[j, _OR + 3 * r + 1], work[j, _OR + 3 * r + 2]
            for col in range(3):
                X_base_frame[f, r, col] = (
                    o0 * frame_floats[f, col] + o1 * frame_floats[f, 3 + col] + o2 * frame_floats[f, 6 + col]
                )
            t = o0 * frame_floats[f, 9] + o1 * frame_floats[f, 10] + o2 * frame_floats[f, 11]
            X_base_frame[f, r, 3] = work[j, _OP + r] + t
            X_base_frame[f, 3, r] = 0.0
        X_base_frame[f, 3, 3] = 1.0


@kernel
def frame_jacobians(
    joint_ints: IntArray,
    joint_floats: FloatArray,
    frame_ints: IntArray,
    X_base_frame: FloatArray,
    work: FloatArray,
    J_base_frame: FloatArray,
) -> None:
    """6-D Jacobians of the frames w.r.t. the joint velocities, base axes (module docstring; after
    :func:`frame_placements`).

    Args:
        joint_ints, joint_floats, frame_ints: :class:`KernelModel` arrays.
        X_base_frame: (nf, 4, 4) from :func:`frame_placements`.
        work: after :func:`forward_kinematics`.
        J_base_frame: (nf, 6, nv - 6) written: rows linear velocity of the frame origin (m/s per joint
            velocity), angular velocity (rad/s per joint velocity); pinocchio's ``LOCAL_WORLD_ALIGNED`` frame
            Jacobian's joint columns with the base at the identity.
    """
    for f in range(frame_ints.shape[0]):
        for r in range(6):
            for col in range(J_base_frame.shape[2]):
                J_base_frame[f, r, col] = 0.0
        px, py, pz = X_base_frame[f, 0, 3], X_base_frame[f, 1, 3], X_base_frame[f, 2, 3]
        j = frame_ints[f]
        while j > 1:  # the joints from the frame's up to the root (excluded)
            col = joint_ints[j, _VI]
            ax, ay, az = _base_axis(joint_floats, work, j)
            if joint_ints[j, _KIND] == _PRI:
                J_base_frame[f, 0, col], J_base_frame[f, 1, col], J_base_frame[f, 2, col] = ax, ay, az
            else:
                lx, ly, lz = _cross(ax, ay, az, px - work[j, _OP], py - work[j, _OP + 1], pz - work[j, _OP + 2])
                J_base_frame[f, 0, col], J_base_frame[f, 1, col], J_base_frame[f, 2, col] = lx, ly, lz
                J_base_frame[f, 3, col], J_base_frame[f, 4, col], J_base_frame[f, 5, col] = ax, ay, az
            j = joint_ints[j, _PARENT]


@kernel
def center_of_mass(
    joint_ints: IntArray, joint_floats: FloatArray, work: FloatArray, com: FloatArray, J_com: FloatArray
) -> float:
    """Centre of mass in the base and its Jacobian w.r.t. the joint velocities (module docstring; after
    :func:`forward_kinematics`); subtree masses and first moments left in ``work``.

    Args:
        joint_ints, joint_floats: :class:`KernelModel` arrays.
        work: after :func:`forward_kinematics`; its subtree columns written.
        com: (3,) written, m, the centre of mass in the base (pinocchio's ``data.com[0]``).
        J_com: (3, nv - 6) written, m/s per joint velocity (the joint columns of ``pin.jacobianCenterOfMass``).

    Returns:
        The total mass (kg).
    """
    n = joint_ints.shape[0]
    for i in range(1, n):
        m = joint_floats[i, _M]
        lx, ly, lz = joint_floats[i, _LEV], joint_floats[i, _LEV + 1], joint_floats[i, _LEV + 2]
        work[i, _SM] = m
        for r in range(3):  # m (R_base_joint lever + p_base_joint)
            work[i, _SH + r] = m * (
                work[i, _OR + 3 * r] * lx + work[i, _OR + 3 * r + 1] * ly + work[i, _OR + 3 * r + 2] * lz
                + work[i, _OP + r]
            )  # fmt: skip
    for i in range(n - 1, 1, -1):  # children after parents: accumulate the subtrees up to joint 1
        parent = joint_ints[i, _PARENT]
        for k in range(4):
            work[parent, _SM + k] += work[i, _SM + k]
    total: float = work[1, _SM]
    inv = 1.0 / total if total > 0.0 else 0.0
    for r in range(3):
        com[r] = work[1, _SH + r] * inv
    for col in range(J_com.shape[1]):
        J_com[0, col] = J_com[1, col] = J_com[2, col] = 0.0
    for j in range(2, n):
        col = joint_ints[j, _VI]
        ax, ay, az = _base_axis(joint_floats, work, j)
        m = work[j, _SM]
        if joint_ints[j, _KIND] == _PRI:
            J_com[0, col], J_com[1, col], J_com[2, col] = ax * m * inv, ay * m * inv, az * m * inv
        else:
            hx = work[j, _SH] - m * work[j, _OP]
            hy = work[j, _SH + 1] - m * work[j, _OP + 1]
            hz = work[j, _SH + 2] - m * work[j, _OP + 2]
            cx, cy, cz = _cross(ax, ay, az, hx, hy, hz)
            J_com[0, col], J_com[1, col], J_com[2, col] = cx * inv, cy * inv, cz * inv
    return total


@kernel
def gravity_torques(J_com: FloatArray, total_mass: float, g_base: FloatArray, tau_g: FloatArray) -> None:
    """Gravity torques on the joints, ``g(q) = -M J_com^T g_base`` (module docstring).

    Args:
        J_com: (3, nv - 6) from :func:`center_of_mass`.
        total_mass: kg (:func:`center_of_mass`'s return).
        g_base: (3,) m/s^2, gravity in base axes (``R_world_base^T g_world``).
        tau_g: (nv - 6,) written, N m (N for prismatic joints): the joint rows of pinocchio's
            ``computeGeneralizedGravity`` with ``model.gravity = (g_base, 0)``.
    """
    for col in range(J_com.shape[1]):
        tau_g[col] = -total_mass * (J_com[0, col] * g_base[0] + J_com[1, col] * g_base[1] + J_com[2, col] * g_base[2])


@kernel
def foot_terms(
    q_joints: FloatArray,
    joint_ints: IntArray,
    joint_floats: FloatArray,
    frame_ints: IntArray,
    frame_floats: FloatArray,
    work: FloatArray,
    X_base_frame: FloatArray,
    J_base_frame: FloatArray,
    com: FloatArray,
    J_com: FloatArray,
) -> float:
    """:func:`forward_kinematics`, :func:`frame_placements`, :func:`frame_jacobians` and :func:`center_of_mass` in
    one call (what the joint step takes from pinocchio: ``LegKinematics.foot_terms`` and
    ``jacobianCenterOfMass``). Arguments as those; returns the total mass (kg)."""
    forward_kinematics(q_joints, joint_ints, joint_floats, work)
    frame_placements(frame_ints, frame_floats, work, X_base_frame)
    frame_jacobians(joint_ints, joint_floats, frame_ints, X_base_frame, work, J_base_frame)
    return center_of_mass(joint_ints, joint_floats, work, com, J_com)


# ----------------------------------------------------------------------------------------------- dynamics
@kernel
def _body_force(jf: FloatArray, w: FloatArray, i: int) -> None:
    """RNEA's body force ``f = I a + v x* (I v)`` of joint i's body, in its frame, into ``w[i, _F:_F+6]``
    (RBDA Table 5.1; inertia about the origin from mass, lever c and rotational inertia about the CoM, sec. 2.13:
    momentum ``(m (v + w x c), I_c w + c x m (v + w x c))``)."""
    m = jf[i, _M]
    cx, cy, cz = jf[i, _LEV], jf[i, _LEV + 1], jf[i, _LEV + 2]
    ixx, ixy, ixz = jf[i, _IN], jf[i, _IN + 1], jf[i, _IN + 2]
    iyy, iyz, izz = jf[i, _IN + 3], jf[i, _IN + 4], jf[i, _IN + 5]
    vx, vy, vz, wx, wy, wz = w[i, _V], w[i, _V + 1], w[i, _V + 2], w[i, _V + 3], w[i, _V + 4], w[i, _V + 5]
    ax, ay, az, bx, by, bz = w[i, _A], w[i, _A + 1], w[i, _A + 2], w[i, _A + 3], w[i, _A + 4], w[i, _A + 5]
    # momentum I v: linear m (v + w x c), angular I_c w + c x linear
    t = _cross(wx, wy, wz, cx, cy, cz)
    hx, hy, hz = m * (vx + t[0]), m * (vy + t[1]), m * (vz + t[2])
    cxh = _cross(cx, cy, cz, hx, hy, hz)
    kx = ixx * wx + ixy * wy + ixz * wz + cxh[0]
    ky = ixy * wx + iyy * wy + iyz * wz + cxh[1]
    kz = ixz * wx + iyz * wy + izz * wz + cxh[2]
    # I a: linear m (a + alpha x c), angular I_c alpha + c x linear
    t = _cross(bx, by, bz, cx, cy, cz)
    fx, fy, fz = m * (ax + t[0]), m * (ay + t[1]), m * (az + t[2])
    cxf = _cross(cx, cy, cz, fx, fy, fz)
    nx = ixx * bx + ixy * by + ixz * bz + cxf[0]
    ny = ixy * bx + iyy * by + iyz * bz + cxf[1]
    nz = ixz * bx + iyz * by + izz * bz + cxf[2]
    # + v x* (I v) = (w x h, w x k + v x h)   (RBDA sec. 2.9, [linear; angular] order)
    wh = _cross(wx, wy, wz, hx, hy, hz)
    wk = _cross(wx, wy, wz, kx, ky, kz)
    vh = _cross(vx, vy, vz, hx, hy, hz)
    w[i, _F], w[i, _F + 1], w[i, _F + 2] = fx + wh[0], fy + wh[1], fz + wh[2]
    w[i, _F + 3], w[i, _F + 4], w[i, _F + 5] = nx + wk[0] + vh[0], ny + wk[1] + vh[1], nz + wk[2] + vh[2]


@kernel
def _motion_to_child(w: FloatArray, i: int, parent: int, col: int) -> None:
    """``w[i, col:col+6] = iX_parent w[parent, col:col+6]``: a motion vector (linear at the origin, angular) from
    the parent joint's frame into joint i's, with ``liMi`` = (R, p): ``(R^T (u + w x p), R^T w)`` (RBDA sec. 2.8)."""
    wx, wy, wz = w[parent, col + 3], w[parent, col + 4], w[parent, col + 5]
    t = _cross(wx, wy, wz, w[i, _LP], w[i, _LP + 1], w[i, _LP + 2])
    ux, uy, uz = w[parent, col] + t[0], w[parent, col + 1] + t[1], w[parent, col + 2] + t[2]
    for r in range(3):  # R^T: column r of R
        w[i, col + r] = w[i, _LR + r] * ux + w[i, _LR + 3 + r] * uy + w[i, _LR + 6 + r] * uz
        w[i, col + 3 + r] = w[i, _LR + r] * wx + w[i, _LR + 3 + r] * wy + w[i, _LR + 6 + r] * wz


@kernel
def rnea(
    v: FloatArray,
    a: FloatArray,
    g_base: FloatArray,
    joint_ints: IntArray,
    joint_floats: FloatArray,
    work: FloatArray,
    tau: FloatArray,
) -> None:
    """Inverse dynamics of the floating-base model, ``tau = M(q) a + C(q, v) v + g(q)`` (RBDA Table 5.1; module
    docstring), with the root at the identity and gravity ``g_base`` in base axes: pinocchio's ``rnea(model,
    data, q, v, a)`` with ``q[:7]`` the identity and ``model.gravity = (g_base, 0)`` (what
    ``ContactForceEstimator.bias_torques`` computes with ``use_full_dynamics``). Needs :func:`forward_kinematics`
    (or :func:`foot_terms`) of the same joint positions first (it reads ``liMi`` from ``work``).

    Args:
        v: (nv,) pinocchio velocity ``[v_base_in_base (3) m/s, omega_base_in_base (3) rad/s, joint velocities]`` (base
            frame).
        a: (nv,) its time derivative ``[d(v_base_in_base)/dt, d(omega_base_in_base)/dt, joint accelerations]`` (spatial
            acceleration of the base in B, gravity excluded).
        g_base: (3,) m/s^2, gravity in base axes.
        joint_ints, joint_floats: :class:`KernelModel` arrays.
        work: after :func:`forward_kinematics`; its RNEA columns written.
        tau: (nv,) written: the base wrench ``[force N, torque N m]`` in B, then the joint torques (N m; N for
            prismatic joints).
    """
    n = joint_ints.shape[0]
    for k in range(6):
        work[0, _V + k] = 0.0
        work[0, _A + k] = 0.0
    for k in range(3):  # gravity as the universe accelerating upwards (RBDA sec. 5.3)
        work[0, _A + k] = -g_base[k]
    for i in range(1, n):
        parent = joint_ints[i, _PARENT]
        _motion_to_child(work, i, parent, _V)
        _motion_to_child(work, i, parent, _A)
        kind = joint_ints[i, _KIND]
        if kind == _FF:  # S = identity: v += v_root, a += a_root (v x v = 0)
            for k in range(6):
                work[i, _V + k] += v[k]
                work[i, _A + k] += a[k]
        else:
            col = 6 + joint_ints[i, _VI]
            qd, qdd = v[col], a[col]
            ux, uy, uz = joint_floats[i, _AX], joint_floats[i, _AX + 1], joint_floats[i, _AX + 2]
            sx, sy, sz = ux * qd, uy * qd, uz * qd  # S qd (its linear or angular half)
            vx, vy, vz = work[i, _V], work[i, _V + 1], work[i, _V + 2]
            if kind == _PRI:  # S = [u; 0]: v_i x (S qd) = (w_i x u qd, 0)
                work[i, _V], work[i, _V + 1], work[i, _V + 2] = vx + sx, vy + sy, vz + sz
                wx, wy, wz = work[i, _V + 3], work[i, _V + 4], work[i, _V + 5]
                c = _cross(wx, wy, wz, sx, sy, sz)
                work[i, _A] += ux * qdd + c[0]
                work[i, _A + 1] += uy * qdd + c[1]
                work[i, _A + 2] += uz * qdd + c[2]
            else:  # S = [0; u]: v_i x (S qd) = (v_i x u qd, w_i x u qd)
                wx, wy, wz = work[i, _V + 3] + sx, work[i, _V + 4] + sy, work[i, _V + 5] + sz
                work[i, _V + 3], work[i, _V + 4], work[i, _V + 5] = wx, wy, wz
                c = _cross(vx, vy, vz, sx, sy, sz)
                d = _cross(wx, wy, wz, sx, sy, sz)
                work[i, _A] += c[0]
                work[i, _A + 1] += c[1]
                work[i, _A + 2] += c[2]
                work[i, _A + 3] += ux * qdd + d[0]
                work[i, _A + 4] += uy * qdd + d[1]
                work[i, _A + 5] += uz * qdd + d[2]
        _body_force(joint_floats, work, i)
    for i in range(n - 1, 0, -1):  # backward: joint torques, then the force onto the parent
        kind = joint_ints[i, _KIND]
        if kind == _FF:
            for k in range(6):
                tau[k] = work[i, _F + k]
            continue
        ux, uy, uz = joint_floats[i, _AX], joint_floats[i, _AX + 1], joint_floats[i, _AX + 2]
        half = _F if kind == _PRI else _F + 3
        tau[6 + joint_ints[i, _VI]] = ux * work[i, half] + uy * work[i, half + 1] + uz * work[i, half + 2]
        parent = joint_ints[i, _PARENT]
        if parent == 0:
            continue
        # parent's frame: f_p += R f, n_p += R n + p x (R f)   (RBDA sec. 2.8, the force transform)
        rf0 = work[i, _LR] * work[i, _F] + work[i, _LR + 1] * work[i, _F + 1] + work[i, _LR + 2] * work[i, _F + 2]
        rf1 = work[i, _LR + 3] * work[i, _F] + work[i, _LR + 4] * work[i, _F + 1] + work[i, _LR + 5] * work[i, _F + 2]
        rf2 = work[i, _LR + 6] * work[i, _F] + work[i, _LR + 7] * work[i, _F + 1] + work[i, _LR + 8] * work[i, _F + 2]
        pxf = _cross(work[i, _LP], work[i, _LP + 1], work[i, _LP + 2], rf0, rf1, rf2)
        work[parent, _F] += rf0
        work[parent, _F + 1] += rf1
        work[parent, _F + 2] += rf2
        for r in range(3):
            work[parent, _F + 3 + r] += (
                work[i, _LR + 3 * r] * work[i, _F + 3] + work[i, _LR + 3 * r + 1] * work[i, _F + 4]
                + work[i, _LR + 3 * r + 2] * work[i, _F + 5] + pxf[r]
            )  # fmt: skip
