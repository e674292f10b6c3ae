"""Rolling spherical feet: how the foot origin (the sphere's centre) moves while the sphere rolls without slipping.

A foot with ``foot_model="sphere"`` is a sphere of radius ``rho`` (from the description) centred at the foot frame
origin. Its lowest point is ``c = p_world_foot + d`` with ``d = -rho e_z`` (W). Rolling without slip, the body point
there is at rest: ``v_foot_in_world + omega_foot_in_world x d = 0``, so the centre moves with ``v_foot_in_world =
omega_foot_in_world x (rho e_z) = [d]x omega_foot_in_world`` and ``a_foot_in_world = [d]x alpha_foot_in_world`` (``e_z``
and ``d`` constant), ``omega_foot_in_world``, ``alpha_foot_in_world`` the foot's angular velocity and acceleration in W
(rigid-body kinematics of a rolling sphere). They depend on the joint velocities, so the constraint is solved on the
joints (:func:`~.inverse_kinematics.foot_joint_rates` on the contact point's Jacobian), and the centre's rolling
displacement follows from them:

- in a stance, it is integrated from one sample to the next with a third-order Taylor step (:class:`RollingState`),
  ``r += h v + h^2 a / 2 + h^3 j / 6``, ``j`` from the backward difference of the last two accelerations;
- at touch-down it starts from the rolling velocity, acceleration and jerk the swing ends with
  (:func:`touchdown_rolling`), computed when the swing begins: the base state at touch-down, inverse kinematics
  on the foothold, the constraint; the jerk by a forward difference over :data:`TOUCHDOWN_DT_S`. The swing
  (:mod:`.foot_targets`) ends with that velocity and acceleration, so the centre's motion is C^2 across it.

Residuals (Go1 trot at 0.4 m/s, 1 kHz, ``test/simulation/test_rolling.py``): the contact body point's velocity
from ``(q, v)`` is zero to rounding (< 1e-15 m/s); the centres move up to 0.037 m/s in stance, 7-8 mm per
stance. The centre's displacement between samples matches its velocity and acceleration (Euler-Maclaurin)
to 2e-11 m per step, 3e-9 m summed over a 3 s run; the configuration follows the velocity to 9e-8 rad/s
(point feet: 6e-8). At 400 Hz the per-step residual grows to 8e-10 m (``O(h^4)``).

Point feet (``rho = 0``) are the special case ``d = 0``: the foot origin rests in stance.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.simulation.inverse_kinematics import IndexArray, Legs, touchdown_posture
from robot_state_estimator.simulation.trajectory import BaseMotion, BaseState, FootPlan, evaluate_base

FloatArray = NDArray[np.float64]

#: s, the step of the forward difference giving the rolling jerk at touch-down.
TOUCHDOWN_DT_S = 1e-5


def skew(v: FloatArray) -> FloatArray:
    """(3, 3) ``[v]x`` with ``[v]x w = v x w``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def contact_offsets(rho: FloatArray) -> FloatArray:
    """(nf, 3, 3) ``[d]x`` per foot, ``d = -rho e_z`` (W) the contact point's offset from the foot origin for
    radii ``rho`` (nf,) m."""
    d_world = -rho[:, None] * np.array([0.0, 0.0, 1.0])  # (nf, 3) contact point - foot origin, W
    return np.array([skew(d) for d in d_world])


class RollingState:
    """The rolling displacement of every foot origin in its current stance, carried from sample to sample.

    Attributes (per foot, W): ``r`` (nf, 3) m, the displacement since the stance began; ``v``, ``a`` (nf, 3) its
    velocity (m/s) and acceleration (m/s^2) at the previous sample; ``a_prev`` (nf, 3) the acceleration one
    sample earlier, ``h_prev`` (nf,) s before; ``has_prev`` (nf,) whether ``a_prev`` belongs to this stance;
    ``jerk0`` (nf, 3) m/s^3 the jerk at touch-down, used until two accelerations of the stance are known.
    """

    def __init__(self, nf: int) -> None:
        self.r = np.zeros((nf, 3))
        self.v = np.zeros((nf, 3))
        self.a = np.zeros((nf, 3))
        self.a_prev = np.zeros((nf, 3))
        self.h_prev = np.ones(nf)
        self.has_prev = np.zeros(nf, dtype=bool)
        self.jerk0 = np.zeros((nf, 3))

    def extrapolated(self, h: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Displacement, velocity, acceleration ((nf, 3) each) ``h`` s after the previous sample: a third-order
        Taylor step, the jerk from the backward difference of the accelerations (``jerk0`` on the first stance
        sample)."""
        jerk = np.where(self.has_prev[:, None], (self.a - self.a_prev) / self.h_prev[:, None], self.jerk0)
        hh = 0.5 * h * h
        return (
            self.r + h * self.v + hh * self.a + (h * hh / 3.0) * jerk,
            self.v + h * self.a + hh * jerk,
            self.a + h * jerk,
        )

    def advance(self, h: float, going_on: NDArray[np.bool_]) -> None:
        """Integrate the displacement of the feet ``going_on`` (nf,) (the same stance as at the previous sample)
        over ``h`` s."""
        self.r = np.where(going_on[:, None], self.extrapolated(h)[0], self.r)

    def touch_down(self, i: int, h_td: float | None, touchdown: FloatArray) -> None:
        """Foot ``i`` begins a stance: at rest (``h_td`` None, the first stance) or ``h_td`` s after touching down
        with the rolling velocity, acceleration and jerk ``touchdown`` (3, 3) (:func:`touchdown_rolling`)."""
        if h_td is None:
            self.r[i] = 0.0
            self.jerk0[i] = 0.0
        else:
            v1, a1, j1 = touchdown
            self.r[i] = h_td * v1 + (0.5 * h_td * h_td) * a1 + (h_td**3 / 6.0) * j1
            self.jerk0[i] = j1

    def record(
        self,
        h: float,
        going_on: NDArray[np.bool_],
        rollers: IndexArray,
        Dx: FloatArray,
        J_ang: FloatArray,
        va: tuple[FloatArray, FloatArray],
        drift_ang: FloatArray,
    ) -> None:
        """Keep this sample's rolling velocity and acceleration, ``[d]x omega_foot_in_world`` and ``[d]x
        alpha_foot_in_world``, of the stance feet ``rollers`` (m of them), and the previous acceleration of the feet
        ``going_on`` (nf,) (the same stance, ``h`` s ago) for the backward difference.

        Args:
            h: s since the previous sample.
            going_on: (nf,) bool, the rolling feet in the same stance as at the previous sample.
            rollers: (m,) the rolling feet in stance now.
            Dx: (nf, 3, 3) ``[d]x`` per foot.
            J_ang: (nf, 3, nv) the feet's angular Jacobians (W).
            va: the sample's velocity and acceleration (nv,) each.
            drift_ang: (m, 3) rad/s^2, the angular classical accelerations of ``rollers`` at zero joint
                accelerations (:func:`~.inverse_kinematics.foot_joint_rates`).
        """
        v, a = va
        self.a_prev = np.where(going_on[:, None], self.a, self.a_prev)
        self.h_prev = np.where(going_on, h, self.h_prev)
        self.has_prev = going_on
        if rollers.size:
            omega_feet = J_ang[rollers] @ v  # (m, 3) rad/s, W
            alpha_feet = drift_ang + J_ang[rollers][:, :, 6:] @ a[6:]  # (m, 3) rad/s^2, W
            self.v[rollers] = (Dx[rollers] @ omega_feet[..., None])[..., 0]
            self.a[rollers] = (Dx[rollers] @ alpha_feet[..., None])[..., 0]


def rolling_contact(
    model: pin.Model,
    data: pin.Data,
    q: FloatArray,
    fid: int,
    iv: IndexArray,
    Dx: FloatArray,
    v_base: FloatArray,
    a_base: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Velocity (3,) m/s and acceleration (3,) m/s^2 (W) of a rolling foot's origin in configuration ``q``
    with the base twist ``v_base`` (6,) and its derivative ``a_base`` (6,) (pinocchio layout), the contact
    point at rest: leg velocities from ``J_c v = 0``, accelerations from ``J_c a + c_drift = 0``; the origin
    moves with ``omega_foot_in_world x (rho e_z) = [d]x omega_foot_in_world`` and ``[d]x alpha_foot_in_world`` (``Dx =
    [d]x``, ``d = -rho e_z``)."""
    nv = model.nv
    pin.computeJointJacobians(model, data, q)
    J6 = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
    Jc = J6[:3] - Dx @ J6[3:]
    v = np.zeros(nv)
    v[:6] = v_base
    v[iv] = np.linalg.solve(Jc[:, iv], -Jc[:, :6] @ v_base)
    a = np.zeros(nv)
    a[:6] = a_base
    pin.forwardKinematics(model, data, q, v, a)
    drift = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
    qdd = np.linalg.solve(Jc[:, iv], -(drift.linear - Dx @ drift.angular))
    omega = J6[3:] @ v
    alpha = drift.angular + J6[3:, iv] @ qdd
    return Dx @ omega, Dx @ alpha


def touchdown_bases(motion: BaseMotion, plans: list[FootPlan]) -> list[tuple[BaseState, BaseState] | None]:
    """Per foot, the base state at each touch-down and :data:`TOUCHDOWN_DT_S` later (None: the foot never
    swings)."""
    return [
        (evaluate_base(motion, plan.swing_end), evaluate_base(motion, plan.swing_end + TOUCHDOWN_DT_S))
        if plan.swing_end.size
        else None
        for plan in plans
    ]


def touchdown_rolling(
    model: pin.Model,
    data: pin.Data,
    legs: Legs,
    i: int,
    Dx: FloatArray,
    q: FloatArray,
    foothold: FloatArray,
    bases: tuple[BaseState, BaseState],
    s: int,
) -> FloatArray:
    """(3, 3): the rolling velocity (m/s), acceleration (m/s^2) and jerk (m/s^3) of foot ``i``'s origin (W) at
    the touch-down that ends its swing ``s`` on ``foothold`` (3,) m: the leg posed there by inverse kinematics
    (from ``q``) with the base of ``bases[0]`` (row ``s``), the contact point at rest (:func:`rolling_contact`,
    ``Dx`` = ``[d]x`` of that foot); the jerk by a forward difference over :data:`TOUCHDOWN_DT_S` (``bases[1]``,
    the foothold moved along the rolling)."""
    q_td = q.copy()
    fid, iq, iv = legs.frame_ids[i], legs.q_cols[i], legs.v_cols[i]
    v1 = a1 = a_td = np.zeros(3)
    for j, td in enumerate(bases):
        p_td = foothold if j == 0 else foothold + TOUCHDOWN_DT_S * v1 + (0.5 * TOUCHDOWN_DT_S**2) * a1
        q_td[:7] = td.q_base[s]
        q_td = touchdown_posture(model, data, q_td, fid, iq, iv, p_td)
        v_td, a_td = rolling_contact(model, data, q_td, fid, iv, Dx, td.v_base[s], td.a_base[s])
        if j == 0:
            v1, a1 = v_td, a_td
    return np.array([v1, a1, (a_td - a1) / TOUCHDOWN_DT_S])
