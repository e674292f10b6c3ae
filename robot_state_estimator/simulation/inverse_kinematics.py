"""Steps 3 and 4 of the generators: the leg joints from the foot targets, by inverse kinematics at the position,
velocity and acceleration levels (pinocchio kinematics; the base is given, each leg solved on its own joints).

Positions (step 3), Newton's method on the foot errors, warm-started from the previous sample:

- point and spherical feet (3-joint legs, :func:`solve_foot_positions`): the foot origins, all legs stacked,
  ``J_leg dq = p_target - p_world_foot`` with ``J_leg`` the leg's columns of the foot's ``LOCAL_WORLD_ALIGNED`` linear
  Jacobian; far from the solution (error above 1 mm: the first sample, a touch-down posture) the step is damped
  least squares (Levenberg-Marquardt, ``(J^T J + 1e-6 I)^-1 J^T e``) clamped to 0.2 rad, plain Newton close to it
  (:func:`ik_step`);
- soles (6-joint legs, :func:`solve_sole_poses`): the full pose, error ``log6(X_WF^-1 X_W,target)`` (in the sole
  frame) against the ``LOCAL`` frame Jacobian, the scheme of pinocchio's inverse-kinematics example (doc
  "Inverse kinematics (clik)") with ``Jlog6 ~ I``, which leaves the converged solution unchanged; steps longer
  than 0.2 rad are clamped.

Both stop at ``|error| < IK_TOLERANCE_M`` (1e-12 m, or rad for the sole's rotation) and raise after
``IK_MAX_ITERATIONS``.

Velocities and accelerations (step 4), through the leg Jacobians, not finite differences: the velocity of a body
point at offset ``d`` (W) from the foot origin is ``v_foot_in_world + omega_foot_in_world x d = (J_lin - [d]x J_ang) v``
(:func:`contact_jacobians`), so ``J_leg qdot = v_target - J_base v_base`` and, from the classical accelerations,
``J_leg qddot = a_target - drift`` with ``drift`` the point's classical acceleration at zero joint accelerations
(:func:`foot_joint_rates`; a sole: the same with its 6-D twist and classical spatial acceleration,
:func:`sole_joint_rates`).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.simulation.errors import SimulationError

FloatArray = NDArray[np.float64]
#: Indices into q or v (joint columns of a leg).
IndexArray = NDArray[np.intp]

IK_TOLERANCE_M = 1e-12
IK_MAX_ITERATIONS = 50


class Legs:
    """Index bookkeeping: per foot, the frame id and the q/v indices of the joints of its leg.

    Attributes:
        frame_ids: (nf,) pinocchio frame ids of the feet.
        idx_q, idx_v: per foot, the (n,) q and v indices of its leg's joints (root to foot).
        q_cols, v_cols: the same stacked, (nf, n).
    """

    def __init__(self, model: pin.Model, feet: tuple[str, ...], *, joints: int = 3, what: str = "foot") -> None:
        """Raises SimulationError when a foot's leg is not ``joints`` revolute (1-DoF) joints below the root
        (``what`` names the foot in the message)."""
        self.frame_ids = [model.getFrameId(f) for f in feet]
        self.idx_q: list[IndexArray] = []
        self.idx_v: list[IndexArray] = []
        for fid in self.frame_ids:
            joint = model.frames[fid].parentJoint
            chain = [j for j in model.supports[joint] if j > 1]
            self.idx_q.append(np.array([model.joints[j].idx_q for j in chain]))
            self.idx_v.append(np.array([model.joints[j].idx_v for j in chain]))
            if any(model.joints[j].nq != 1 or model.joints[j].nv != 1 for j in chain) or len(chain) != joints:
                raise SimulationError(f"{what} {model.frames[fid].name}: expected a {joints}-joint revolute leg")
        self.q_cols = np.array(self.idx_q)
        self.v_cols = np.array(self.idx_v)
        self._feet = np.arange(len(feet))[:, None, None]
        self._rows = np.arange(3)[None, :, None]

    def position_blocks(self, J: FloatArray) -> FloatArray:
        """(nf, 3, 3): the leg columns of the first three rows of stacked foot Jacobians ``J`` (nf, >= 3, nv)."""
        blocks: FloatArray = J[self._feet, self._rows, self.v_cols[:, None, :]]
        return blocks


def ik_step(J_leg: FloatArray, errs: FloatArray) -> FloatArray:
    """Newton steps (nf, 3) rad of stacked 3-joint legs for foot errors ``errs`` (nf, 3) m: damped and clamped
    to 0.2 rad when far (the first sample, a touch-down posture), plain Newton close to the solution."""
    if float(np.abs(errs).max()) > 1e-3:
        JT = np.transpose(J_leg, (0, 2, 1))
        # cast: numpy's stubs type solve() of float64 arrays as floating[Any]; it returns float64
        steps = cast(FloatArray, np.linalg.solve(JT @ J_leg + 1e-6 * np.eye(3), (JT @ errs[..., None]))[..., 0])
        norms = np.linalg.norm(steps, axis=1, keepdims=True)
        clamped: FloatArray = steps * np.minimum(1.0, 0.2 / np.maximum(norms, 1e-300))
        return clamped
    return cast(FloatArray, np.linalg.solve(J_leg, errs[..., None])[..., 0])


def solve_foot_positions(
    model: pin.Model, data: pin.Data, legs: Legs, q: FloatArray, target_p: FloatArray, tk: float
) -> FloatArray:
    """Move the leg joints of ``q`` (nq,) in place until every foot origin is at ``target_p`` (nf, 3) m (W).

    Returns:
        (nf, 6, nv) the feet's ``LOCAL_WORLD_ALIGNED`` frame Jacobians at the solution (``data.oMf`` of the feet
        updated there too).

    Raises:
        SimulationError: no convergence within ``IK_MAX_ITERATIONS`` (a target out of reach; ``tk`` s is named).
    """
    fids = legs.frame_ids
    for it in range(IK_MAX_ITERATIONS + 1):
        pin.computeJointJacobians(model, data, q)
        P = np.array([pin.updateFramePlacement(model, data, fid).translation for fid in fids])
        errs = target_p - P
        worst = float(np.abs(errs).max())
        J6 = np.array([pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED) for fid in fids])
        if worst < IK_TOLERANCE_M:
            break
        if it == IK_MAX_ITERATIONS:
            raise SimulationError(
                f"inverse kinematics did not converge at t = {tk:.4f} s (foot error {worst:.3g} m): "
                "a foot target is out of reach; lower the speed, step height or crouch"
            )
        q[legs.q_cols] += ik_step(legs.position_blocks(J6), errs)
    return J6


def touchdown_posture(
    model: pin.Model, data: pin.Data, q: FloatArray, fid: int, iq: IndexArray, iv: IndexArray, target: FloatArray
) -> FloatArray:
    """``q`` with the joints of one leg moved (Newton, from ``q``) to put the foot origin at ``target`` (3,) m."""
    q = q.copy()
    for _ in range(IK_MAX_ITERATIONS + 1):
        pin.computeJointJacobians(model, data, q)
        err = target - pin.updateFramePlacement(model, data, fid).translation
        if float(np.abs(err).max()) < IK_TOLERANCE_M:
            return q
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3, iv]
        q[iq] += ik_step(J[None], err[None])[0]
    raise SimulationError(f"touch-down posture of {model.frames[fid].name} out of reach (target {target})")


def contact_jacobians(J6: FloatArray, Dx: FloatArray, rollers: IndexArray) -> FloatArray:
    """(nf, 3, nv) the linear Jacobians of the feet's contact points, ``J_c = J_lin - [d]x J_ang`` for the feet
    ``rollers`` (``Dx`` (nf, 3, 3) = ``[d]x``, ``d`` the contact point's offset from the foot origin, W), the foot
    origins' ``J_lin`` for the others; ``J6`` (nf, 6, nv) ``LOCAL_WORLD_ALIGNED``."""
    J_ang = J6[:, 3:]
    Jc = J6[:, :3].copy()
    if rollers.size:
        Jc[rollers] -= Dx[rollers] @ J_ang[rollers]
    return Jc


def foot_joint_rates(
    model: pin.Model,
    data: pin.Data,
    legs: Legs,
    q: FloatArray,
    Jc: FloatArray,
    base_twist: tuple[FloatArray, FloatArray],
    target_v: FloatArray,
    target_a: FloatArray,
    Dx: FloatArray,
    rollers: IndexArray,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Velocity and acceleration (nv,) each that give the feet's points ``Jc`` (:func:`contact_jacobians`) the
    velocities ``target_v`` and accelerations ``target_a`` (nf, 3), W, with the base velocity and acceleration
    ``base_twist`` ((6,) each, pinocchio layout).

    Returns:
        ``v``, ``a`` and (m, 3) rad/s^2 the angular classical accelerations (W) at zero joint accelerations of
        the feet ``rollers`` (m of them); ``data`` holds the kinematics of ``(q, v, a with zero leg
        accelerations)``.
    """
    v_base, a_base = base_twist
    J_leg = legs.position_blocks(Jc)  # (nf, 3, 3)
    v = np.zeros(model.nv)
    v[:6] = v_base
    rhs = target_v - Jc[:, :, :6] @ v_base
    v[legs.v_cols] = np.linalg.solve(J_leg, rhs[..., None])[..., 0]
    # the classical accelerations with zero joint accelerations are the drift terms
    a = np.zeros(model.nv)
    a[:6] = a_base
    pin.forwardKinematics(model, data, q, v, a)
    acc0 = [pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED) for fid in legs.frame_ids]
    drift = np.array([m.linear for m in acc0])
    drift_ang = np.empty((0, 3))
    if rollers.size:
        drift_ang = np.array([acc0[i].angular for i in rollers])
        drift[rollers] -= (Dx[rollers] @ drift_ang[..., None])[..., 0]
    a[legs.v_cols] = np.linalg.solve(J_leg, (target_a - drift)[..., None])[..., 0]
    return v, a, drift_ang


def solve_sole_poses(
    model: pin.Model,
    data: pin.Data,
    legs: Legs,
    q: FloatArray,
    R_sole: list[FloatArray],
    p_sole: FloatArray,
    tk: float,
) -> list[FloatArray]:
    """Move the 6 leg joints of each sole in ``q`` (nq,) in place until the sole is at the pose ``(R_sole[i],
    p_sole[i])`` ((3, 3), (3,) m; W).

    Returns:
        per sole its (6, nv) ``LOCAL_WORLD_ALIGNED`` frame Jacobian at the solution (``data.oMf`` updated there).

    Raises:
        SimulationError: no convergence within ``IK_MAX_ITERATIONS`` (a target out of reach; ``tk`` s is named).
    """
    fids = legs.frame_ids
    for it in range(IK_MAX_ITERATIONS + 1):
        pin.framesForwardKinematics(model, data, q)
        errs = [pin.log6(data.oMf[fid].actInv(pin.SE3(R_sole[i], p_sole[i]))).vector for i, fid in enumerate(fids)]
        worst = max(float(np.abs(e).max()) for e in errs)
        if worst < IK_TOLERANCE_M:
            break
        if it == IK_MAX_ITERATIONS:
            raise SimulationError(
                f"inverse kinematics of the soles did not converge at t = {tk:.4f} s (error {worst:.3g}): "
                "a sole target is out of reach; lower the speed or step height"
            )
        pin.computeJointJacobians(model, data, q)
        for i, fid in enumerate(fids):
            J = pin.getFrameJacobian(model, data, fid, pin.LOCAL)[:, legs.idx_v[i]]
            step = np.linalg.solve(J, errs[i])
            norm = float(np.linalg.norm(step))
            q[legs.idx_q[i]] += step * min(1.0, 0.2 / norm) if norm > 0.2 else step
    pin.computeJointJacobians(model, data, q)
    return [pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED) for fid in fids]


def sole_joint_rates(
    model: pin.Model,
    data: pin.Data,
    legs: Legs,
    q: FloatArray,
    J6: list[FloatArray],
    base_twist: tuple[FloatArray, FloatArray],
    targets: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Velocity and acceleration (nv,) each that move the soles (Jacobians ``J6``, :func:`solve_sole_poses`)
    without turning them: linear velocity ``targets[i, 1]`` and acceleration ``targets[i, 2]`` (W) of sole i
    (``targets`` (nf, 3, 3): position, velocity, acceleration), with the base velocity and acceleration
    ``base_twist`` ((6,) each, pinocchio layout)."""
    v_base, a_base = base_twist
    v = np.zeros(model.nv)
    v[:6] = v_base
    for i in range(len(J6)):
        cols = legs.idx_v[i]
        twist = np.concatenate([targets[i, 1], np.zeros(3)])
        v[cols] = np.linalg.solve(J6[i][:, cols], twist - J6[i][:, :6] @ v[:6])
    a = np.zeros(model.nv)
    a[:6] = a_base
    pin.forwardKinematics(model, data, q, v, a)
    for i, fid in enumerate(legs.frame_ids):
        cols = legs.idx_v[i]
        drift = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED).vector
        acc = np.concatenate([targets[i, 2], np.zeros(3)])
        a[cols] = np.linalg.solve(J6[i][:, cols], acc - drift)
    return v, a
