"""Steps 5 and 6 of the generators: contact forces that make the motion's inverse dynamics hold, and the joint
torques that remain.

``tau_full = RNEA(q, v, a) = M a + h`` (pinocchio). The stance contacts act through their Jacobians, ``M a + h =
tau + J_c^T f``, and the six unactuated (base) rows say which forces the motion needs: ``A f = w`` with ``A =
J_c,base^T``, ``w = tau_full[:6]``; the actuated rows then give ``tau = tau_full[6:] - J_c,joints^T f``.

- Point and spherical feet (:func:`point_contact_forces`): a force ``f`` (world axes) per stance foot at its
  contact point, the minimiser of ``||A f - w||^2 + lam ||f - f_ref||^2`` (``f_ref`` an equal share of the
  weight on the normals, ``lam = 1e-10 trace(A A^T)``): ``f = f_ref + A^T (A A^T + lam I)^-1 (w - A f_ref)``
  (regularised least squares, the Tikhonov / ridge closed form). The ground only pushes: where that solution has
  a negative normal force (``f_z < 0``, the ground pulling a foot) the same problem is solved with the bounds
  ``f_z >= 0`` (:func:`unilateral_forces`, bounded-variable least squares); elsewhere, as in every trot, the
  closed form stands unchanged. Exact to rounding whenever pushing forces can balance the base (three or four
  feet and the zero-moment point inside their support polygon); otherwise the rest is left as the base residual
  wrench. In the walk, whose base path does not sway towards the support triangle, that happens in about 40 % of
  the samples (``docs/TOOLS.md``, "Simulated runs").
- Soles (:func:`sole_wrenches`): a 6-D wrench (force and moment about the sole origin, world axes) per stance
  sole: exact in single support (``A`` is 6 x 6), the least-norm deviation from an equal share of the weight in
  double support (``numpy.linalg.lstsq``). The centre of pressure is not constrained to the sole.

Friction cones (``settings.friction_coefficient``) are only checked: ``violations`` counts the (sample, foot) pairs
outside them (a foot at ``f_z = 0`` keeps a tangential force). What the contacts cannot balance is kept as the base
residual wrench, ``tau_full[:6] - A f``; a sample is unbalanced when it is above rounding (:func:`is_unbalanced`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.simulation.errors import SimulationError

FloatArray = NDArray[np.float64]

#: A sample is unbalanced when its base residual force exceeds this times the weight (N), or its residual
#: torque this times the weight times 1 m (N m): above the error of the regularised solution (< 1e-8 of it).
UNBALANCED_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ContactForces:
    """The contacts of one sample.

    Attributes:
        f: (nf, 3) N, force of the ground on each foot, world axes (0 in swing).
        w_foot: (nf, 6) [N, N m], the same as a wrench in the foot frame about its origin (0 in swing).
        residual: (nv,) ``tau_full - J_c^T f``: the joint torques (``[6:]``) and the base residual wrench
            (``[:6]``).
        unilateral: the forces were found with ``f_z >= 0`` bounds.
        violations: the number of stance feet outside their friction cone.
    """

    f: FloatArray
    w_foot: FloatArray
    residual: FloatArray
    unilateral: bool
    violations: int


def is_unbalanced(residual: FloatArray, weight: float) -> bool:
    """Whether the base residual wrench ``residual[:6]`` (N, N m) is above rounding (:data:`UNBALANCED_TOLERANCE`)
    for a robot of ``weight`` N."""
    return bool(
        np.linalg.norm(residual[:3]) > UNBALANCED_TOLERANCE * weight
        or np.linalg.norm(residual[3:6]) > UNBALANCED_TOLERANCE * weight * 1.0  # N m: the weight at 1 m
    )


def unilateral_forces(A: FloatArray, w: FloatArray, f_ref: FloatArray, lam: float) -> FloatArray:
    """Stance forces that push and never pull: ``argmin ||A f - w||^2 + lam ||f - f_ref||^2`` subject to
    ``f_z >= 0`` for every foot (world z, the ground is the plane z = 0), x and y free.

    The unconstrained minimiser is ``f_ref + A^T (A A^T + lam I)^-1 (w - A f_ref)`` (module docstring); this is
    the same problem with the bounds, solved by bounded-variable least squares
    (``scipy.optimize.lsq_linear``, ``method="bvls"``, Stark & Parker 1995) on the stacked system
    ``[A; sqrt(lam) I] f = [w; sqrt(lam) f_ref]``. With ``lam`` small it balances ``w`` to rounding whenever
    some pushing forces can, and is the one closest to ``f_ref`` among those; otherwise ``A f - w`` is what
    the feet cannot give (the zero-moment point outside the support polygon).

    Args:
        A: (6, 3 nc) generalized base force of the stacked stance forces (``J_c,base^T``).
        w: (6,) the base rows of ``M a + h`` (N, N m, pinocchio base frame).
        f_ref: (3 nc,) N, world axes, the forces to stay close to (an equal share of the weight).
        lam: weight of ``||f - f_ref||^2``, > 0.

    Returns:
        (3 nc,) N, world axes, ``[f_x, f_y, f_z]`` per foot with every ``f_z >= 0``.

    Raises:
        SimulationError: the solver did not converge (a non-finite ``A`` or ``w``).
    """
    from scipy.optimize import lsq_linear

    n = f_ref.size
    s = float(np.sqrt(lam))
    lower = np.full(n, -np.inf)
    lower[2::3] = 0.0
    res = lsq_linear(
        np.vstack([A, s * np.eye(n)]),
        np.concatenate([w, s * f_ref]),
        bounds=(lower, np.full(n, np.inf)),
        method="bvls",
        tol=1e-14,
    )
    if res.status < 1 or not np.isfinite(res.x).all():
        raise SimulationError(f"unilateral contact forces: {res.message} (base wrench {w})")
    x = np.asarray(res.x, dtype=float)
    x[2::3] = np.maximum(x[2::3], 0.0)
    return x


def point_contact_forces(
    data: pin.Data,
    frame_ids: list[int],
    Jc: FloatArray,
    stance: NDArray[np.intp],
    Dx: FloatArray,
    tau_full: FloatArray,
    weight: float,
    mu: float,
) -> ContactForces:
    """The forces of the stance feet at their contact points (module docstring).

    Args:
        data: pinocchio data with the feet's placements (``oMf``) at the sample's configuration.
        frame_ids: (nf,) the feet's frame ids.
        Jc: (nf, 3, nv) the contact points' linear Jacobians (W).
        stance: (nc,) the feet in stance.
        Dx: (nf, 3, 3) ``[d]x``, ``d`` the contact point's offset from the foot origin (W).
        tau_full: (nv,) ``M a + h``.
        weight: N, the robot's weight; mu: the friction coefficient.
    """
    nf, nv = Jc.shape[0], Jc.shape[2]
    f = np.zeros((nf, 3))
    w_foot = np.zeros((nf, 6))
    resid = tau_full.copy()
    unilateral = False
    violations = 0
    if stance.size:
        Ab = Jc[stance, :, :6].reshape(-1, 6).T  # (6, 3 nc): generalized base force of the stance forces
        f_ref = np.zeros(3 * stance.size)
        f_ref[2::3] = weight / stance.size
        r = tau_full[:6] - Ab @ f_ref
        AAt = Ab @ Ab.T
        lam = 1e-10 * np.trace(AAt)
        sol = f_ref + Ab.T @ np.linalg.solve(AAt + lam * np.eye(6), r)
        if (sol[2::3] < 0.0).any():  # the ground would pull a foot: the same problem with f_z >= 0
            sol = unilateral_forces(Ab, tau_full[:6], f_ref, lam)
            unilateral = True
        f[stance] = sol.reshape(-1, 3)
        resid -= Jc[stance].reshape(-1, nv).T @ sol
        fs = f[stance]
        violations = int(np.count_nonzero(np.hypot(fs[:, 0], fs[:, 1]) > mu * fs[:, 2]))
        for i in stance:
            R_foot_world = data.oMf[frame_ids[i]].rotation.T
            w_foot[i, :3] = R_foot_world @ f[i]
            w_foot[i, 3:] = R_foot_world @ (Dx[i] @ f[i])  # (d x f): the force acts at the contact point
    return ContactForces(f, w_foot, resid, unilateral, violations)


def sole_wrenches(
    data: pin.Data,
    frame_ids: list[int],
    J6: list[FloatArray],
    stance: NDArray[np.intp],
    tau_full: FloatArray,
    weight: float,
    mu: float,
) -> ContactForces:
    """The 6-D wrenches of the stance soles about their origins (module docstring).

    Args:
        data: pinocchio data with the soles' placements (``oMf``) at the sample's configuration.
        frame_ids: (nf,) the soles' frame ids.
        J6: per sole its (6, nv) ``LOCAL_WORLD_ALIGNED`` frame Jacobian.
        stance: (nc,) the soles in stance.
        tau_full: (nv,) ``M a + h``.
        weight: N, the robot's weight; mu: the friction coefficient.
    """
    nf = len(frame_ids)
    f = np.zeros((nf, 3))
    w_foot = np.zeros((nf, 6))
    resid = tau_full.copy()
    violations = 0
    if stance.size:
        Ab = np.hstack([J6[foot][:, :6].T for foot in stance.tolist()])  # (6, 6 nc)
        f_ref = np.zeros(6 * stance.size)
        f_ref[2::6] = weight / stance.size
        sol = f_ref + np.linalg.lstsq(Ab, tau_full[:6] - Ab @ f_ref, rcond=None)[0]  # least-norm deviation
        for j, foot in enumerate(stance.tolist()):
            w = sol[6 * j : 6 * j + 6]
            resid -= J6[foot].T @ w
            f[foot] = w[:3]
            R_foot_world = data.oMf[frame_ids[foot]].rotation.T
            w_foot[foot, :3], w_foot[foot, 3:] = R_foot_world @ w[:3], R_foot_world @ w[3:]
            violations += int(np.hypot(w[0], w[1]) > mu * w[2])
    return ContactForces(f, w_foot, resid, False, violations)
