"""Generate a legged-robot run with exact ground truth (see :func:`simulate`): kinematics always consistent,
dynamics exact whenever the stance feet can balance the base pushing on the ground (step 5), the rest kept as
``base_residual_wrench``.

Pipeline, one sample after the other at the union of the IMU and joint stamps:

1. base trajectory, gait schedule and footholds in closed form (:mod:`.trajectory`);
2. foot origin targets: in stance the foothold plus the planned slip plus, for a rolling sphere, the rolling
   displacement of its centre (below); in swing a quintic :class:`~.trajectory.SwingSegment` from the state
   the foot had at lift-off to the state it must have at touch-down (position, velocity, acceleration);
3. leg joints by Newton inverse kinematics on the foot origins (warm-started from the previous sample
   extrapolated with its velocity and acceleration), to ``|error| < 1e-12 m``;
4. joint velocities and accelerations through the leg Jacobians, not finite differences: in swing
   ``J_leg qdot = v_F - J_base v_base`` (foot origin, ``LOCAL_WORLD_ALIGNED``); in stance the same rows of the
   contact-point Jacobian ``J_c = J_lin - [d]x J_ang`` with the contact point's velocity (zero, or the slip's);
   accelerations from the classical accelerations, ``J_c a + (c_lin - [d]x c_ang) = a_contact`` (``c`` the
   drift: the classical acceleration with zero joint accelerations);
5. ``tau_full = RNEA(q, v, a) = M a + h``; stance forces ``f`` (world axes) act at the contact points, from the
   unactuated rows ``A f = w`` (``A = J_c,base^T``, ``w = tau_full[:6]``): the minimiser of
   ``||A f - w||^2 + lam ||f - f_ref||^2`` (``f_ref`` an equal share of the weight on the normals,
   ``lam = 1e-10 trace(A A^T)``), ``f = f_ref + A^T (A A^T + lam I)^-1 (w - A f_ref)``. The ground only
   pushes: where that solution has a negative normal force (``f_z < 0``, the ground pulling a foot) the same
   problem is solved with the bounds ``f_z >= 0`` (:func:`unilateral_forces`, bounded-variable least
   squares); elsewhere, as in every trot, the closed form stands unchanged. Exact to rounding whenever
   pushing forces can balance the base (three or four feet and the zero-moment point inside their support
   polygon); otherwise the rest is the residual of step 6. In the walk, whose base path does not sway
   towards the support triangle, that happens in about 40 % of the samples (``README.md``, "Simulated
   runs"). Friction cones (``settings.friction_coefficient``) are only checked: ``friction_violations``
   counts the (sample, foot) pairs outside them (a foot at ``f_z = 0`` keeps a tangential force);
6. joint torques ``tau = tau_full[6:] - J_c,joints^T f``; what the contacts cannot balance is kept in
   ``base_residual_wrench`` (``unbalanced_samples`` counts the samples where it is above rounding);
7. IMU readings from :class:`~robot_state_estimator.sensors.ImuModel` (ideal, then gz-sensors noise), joint
   readings with optional encoder and torque noise.

Rolling spherical feet (``foot_model="sphere"``, radius ``rho`` from the description, sphere centred at the
foot frame origin). The lowest point of the sphere is ``c = p_F + d`` with ``d = -rho e_z`` (W); without slip
the body point there is at rest: ``v_F + omega_F x d = 0``, so the centre moves with
``v_F = omega_F x (rho e_z) = [d]x omega_F`` and ``a_F = [d]x alpha_F`` (``e_z`` and ``d`` constant), where
``omega_F``, ``alpha_F`` are the foot's angular velocity and acceleration in W (which depend on the joint
velocities, so the constraint is solved on the joints, step 4). The rolling displacement is integrated from
one sample to the next with a third-order Taylor step, ``r += h v + h^2 a / 2 + h^3 j / 6``, ``j`` from the
backward difference of the last two accelerations; at touch-down it starts from the rolling velocity,
acceleration and jerk the swing ends with, computed when the swing begins (base state at touch-down, inverse
kinematics on the foothold, the constraint; the jerk by a forward difference over ``TOUCHDOWN_DT_S``).

Residuals (Go1 trot at 0.4 m/s, 1 kHz, ``test/simulation/test_rolling.py``): the contact body point's velocity
from ``(q, v)`` is zero to rounding (< 1e-15 m/s); the centres move up to 0.037 m/s in stance, 7-8 mm per
stance. The centre's displacement between samples matches its velocity and acceleration (Euler-Maclaurin)
to 2e-11 m per step, 3e-9 m summed over a 3 s run; the configuration follows the velocity to 9e-8 rad/s
(point feet: 6e-8). At 400 Hz the per-step residual grows to 8e-10 m (``O(h^4)``).

Point feet (``rho = 0``) are the special case ``d = 0``: the foot origin rests in stance, the swing is the
quintic smoothstep between footholds.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.sensors.imu_model import ImuModel
from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.robots import BIPEDS, SimRobot, load_sim_robot, point_feet_description
from robot_state_estimator.simulation.run import SimulatedRun, WholeBodyTrajectory
from robot_state_estimator.simulation.settings import SimulationSettings
from robot_state_estimator.simulation.trajectory import (
    BaseMotion,
    BaseState,
    FootPlan,
    FootSlip,
    SwingSegment,
    evaluate_base,
    plan_feet,
)

#: Gait phase offsets (cycles) per foot order front-left, front-right, hind-left, hind-right.
PHASE_OFFSETS = {
    "trot": np.array([0.0, 0.5, 0.5, 0.0]),
    "walk": np.array([0.25, 0.75, 0.0, 0.5]),  # hind-left, front-left, hind-right, front-right
}

IK_TOLERANCE_M = 1e-12
IK_MAX_ITERATIONS = 50
#: s, the step of the forward difference giving the rolling jerk at touch-down.
TOUCHDOWN_DT_S = 1e-5
#: A sample is unbalanced when its base residual force exceeds this times the weight (N), or its residual
#: torque this times the weight times 1 m (N m): above the error of the regularised solution (< 1e-8 of it).
UNBALANCED_TOLERANCE = 1e-6

FloatArray = NDArray[np.float64]
#: Indices into q or v (joint columns of a leg).
IndexArray = NDArray[np.intp]
StampArray = NDArray[np.int64]


def make_stamps(rate_hz: float, duration_s: float, jitter_s: float, rng: np.random.Generator) -> StampArray:
    """(m,) int64 ns offsets from the run start: ``round(k / rate) + U(-jitter, jitter)``, k = 0.. while
    below ``duration_s``; the first stamp is never jittered (it stays at 0)."""
    n = int(np.floor(duration_s * rate_hz + 1e-9)) + 1
    base = np.round(np.arange(n) * (1e9 / rate_hz)).astype(np.int64)
    if jitter_s > 0:
        jitter = np.round(rng.uniform(-jitter_s, jitter_s, n) * 1e9).astype(np.int64)
        jitter[0] = 0
        base = base + jitter
    return base[base <= round(duration_s * 1e9)]


def _base_motion(settings: SimulationSettings, robot: SimRobot, period: float, z0: float) -> BaseMotion:
    gait = settings.gait
    moving = gait in ("trot", "walk")
    speed = settings.speed_m_s
    if speed is None:
        speed = robot.gait.trot_speed_m_s if gait == "trot" else robot.gait.walk_speed_m_s
    return BaseMotion(
        speed=speed if moving else 0.0,
        yaw_rate=settings.yaw_rate_rad_s if moving else 0.0,
        turn_amplitude=settings.turn_amplitude_rad if gait == "walk" else 0.0,
        turn_period=settings.turn_period_s,
        z0=z0,
        z_amplitude=settings.body_height_amplitude_m if moving else 0.0,
        roll_amplitude=settings.body_roll_amplitude_rad if moving else 0.0,
        pitch_amplitude=settings.body_pitch_amplitude_rad if moving else 0.0,
        gait_frequency=1.0 / period if moving else 0.0,
        t_start=settings.settle_s,
        t_ramp=settings.ramp_s,
        crouch=settings.crouch_m if gait == "stand_up" else 0.0,
        stand_up_time=max(settings.ramp_s, 1.0),
    )


class _Legs:
    """Index bookkeeping: per foot, the frame id and the q/v indices of the joints of its leg."""

    def __init__(self, model: pin.Model, feet: tuple[str, ...]) -> None:
        self.frame_ids = [model.getFrameId(f) for f in feet]
        self.idx_q: list[IndexArray] = []
        self.idx_v: list[IndexArray] = []
        for fid in self.frame_ids:
            joint = model.frames[fid].parentJoint
            chain = [j for j in model.supports[joint] if j > 1]
            self.idx_q.append(np.array([model.joints[j].idx_q for j in chain]))
            self.idx_v.append(np.array([model.joints[j].idx_v for j in chain]))
            if any(model.joints[j].nq != 1 or model.joints[j].nv != 1 for j in chain) or len(chain) != 3:
                raise SimulationError(f"foot {model.frames[fid].name}: expected a 3-joint revolute leg")


def _skew(v: FloatArray) -> FloatArray:
    """(3, 3) ``[v]x`` with ``[v]x w = v x w``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _ik_step(J_leg: FloatArray, errs: FloatArray) -> FloatArray:
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


class _Rolling:
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


def _rolling_contact(
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
    moves with ``omega_F x (rho e_z) = [d]x omega_F`` and ``[d]x alpha_F`` (``Dx = [d]x``, ``d = -rho e_z``)."""
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


def _touchdown_posture(
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
        q[iq] += _ik_step(J[None], err[None])[0]
    raise SimulationError(f"touch-down posture of {model.frames[fid].name} out of reach (target {target})")


def unilateral_forces(A: FloatArray, w: FloatArray, f_ref: FloatArray, lam: float) -> FloatArray:
    """Stance forces that push and never pull: ``argmin ||A f - w||^2 + lam ||f - f_ref||^2`` subject to
    ``f_z >= 0`` for every foot (world z, the ground is the plane z = 0), x and y free.

    The unconstrained minimiser is ``f_ref + A^T (A A^T + lam I)^-1 (w - A f_ref)`` (step 5 of the module
    docstring); this is the same problem with the bounds, solved by bounded-variable least squares
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


def _whole_body(
    robot: SimRobot,
    q_start: FloatArray,
    t: FloatArray,
    base: BaseState,
    plans: list[FootPlan],
    touchdown_bases: list[tuple[BaseState, BaseState] | None],
    rho: FloatArray,
    mu: float,
) -> WholeBodyTrajectory:
    """Joint trajectory, torques and contact forces, one sample after the other (module docstring)."""
    model = robot.model
    data = model.createData()
    data_td = model.createData()
    legs = _Legs(model, robot.feet)
    n = t.size
    nf = len(plans)
    nq, nv = model.nq, model.nv
    base_q, base_v, base_a = base.q_base, base.v_base, base.a_base
    stance_p = np.empty((n, nf, 3))
    slip_v = np.empty((n, nf, 3))
    slip_a = np.empty((n, nf, 3))
    contact = np.empty((n, nf), dtype=bool)
    slipping = np.empty((n, nf), dtype=bool)
    in_swing = np.empty((n, nf), dtype=bool)
    phase_index = np.empty((n, nf), dtype=np.intp)
    for i_foot, plan in enumerate(plans):  # not i: the loops below bind i to numpy integers
        (
            stance_p[:, i_foot],
            slip_v[:, i_foot],
            slip_a[:, i_foot],
            contact[:, i_foot],
            slipping[:, i_foot],
        ) = plan.evaluate_stance(t)
        in_swing[:, i_foot], phase_index[:, i_foot] = plan.phases(t)
    Q = np.empty((n, nq))
    V = np.empty((n, nv))
    A = np.empty((n, nv))
    TAU = np.empty((n, nv - 6))
    RES = np.empty((n, 6))
    F = np.zeros((n, nf, 3))
    W_FOOT = np.zeros((n, nf, 6))
    P_FOOT = np.empty((n, nf, 3))
    weight = pin.computeTotalMass(model) * 9.81
    violations = 0
    unilateral = 0
    unbalanced = 0
    LWA = pin.LOCAL_WORLD_ALIGNED
    fids = legs.frame_ids
    idx_q = np.array(legs.idx_q)  # (nf, 3)
    idx_v = np.array(legs.idx_v)  # (nf, 3)
    rows = np.arange(3)[None, :, None]
    feet_ix = np.arange(nf)[:, None, None]
    cols = idx_v[:, None, :]
    eye6 = np.eye(6)
    d_world = -rho[:, None] * np.array([0.0, 0.0, 1.0])  # (nf, 3) contact point - foot origin, W
    Dx = np.array([_skew(d) for d in d_world])  # (nf, 3, 3)
    rolling = rho > 0.0
    roll = _Rolling(nf)
    segments: list[SwingSegment | None] = [None] * nf
    # (first sample, p, v, a over the swing's samples) of each foot's current swing
    swing_targets: list[tuple[int, FloatArray, FloatArray, FloatArray] | None] = [None] * nf
    touchdown = np.zeros((nf, 3, 3))  # rolling velocity, acceleration and jerk at the end of each segment
    code = 2 * phase_index + in_swing  # (n, nf) one integer per stance (even) and swing (odd)
    prev_code = np.full(nf, -1)
    target_p = np.empty((nf, 3))
    target_v = np.empty((nf, 3))
    target_a = np.empty((nf, 3))
    q = q_start.copy()
    qd_prev = np.zeros(nv - 6)
    qdd_prev = np.zeros(nv - 6)
    for k in range(n):
        tk = float(t[k])
        h = tk - float(t[k - 1]) if k > 0 else 0.0
        q[:7] = base_q[k]
        if k > 0:
            q[7:] = Q[k - 1, 7:] + qd_prev * h + 0.5 * qdd_prev * h * h
        # ---- foot targets: stance = plan (foothold + slip) + rolling; swing = segment from the lift-off state
        same = code[k] == prev_code
        in_stance = contact[k]
        if rolling.any():
            going_on = in_stance & same & rolling  # the same stance: integrate the rolling from the last sample
            roll.r = np.where(going_on[:, None], roll.extrapolated(h)[0], roll.r)
            for i in np.flatnonzero(in_stance & ~same):
                seg = segments[i]
                if seg is None:  # the first stance: at rest
                    roll.r[i] = 0.0
                    roll.jerk0[i] = 0.0
                else:  # touched down at the end of the segment, with its rolling velocity, acceleration, jerk
                    h_td = tk - seg.t1
                    v1, a1, j1 = touchdown[i]
                    roll.r[i] = h_td * v1 + (0.5 * h_td * h_td) * a1 + (h_td**3 / 6.0) * j1
                    roll.jerk0[i] = j1
        target_p[in_stance] = stance_p[k, in_stance] + roll.r[in_stance]
        target_v[in_stance] = slip_v[k, in_stance]  # of the contact point
        target_a[in_stance] = slip_a[k, in_stance]
        for i in np.flatnonzero(~in_stance):
            if not same[i]:  # lift-off: a new swing from the state reached
                plan, s = plans[i], int(phase_index[k, i])
                t0, t1 = float(plan.swing_start[s]), float(plan.swing_end[s])
                if k > 0 and prev_code[i] % 2 == 0:
                    r0, v0, a0 = (x[i] for x in roll.extrapolated(t0 - float(t[k - 1])))
                else:
                    r0, v0, a0 = np.zeros(3), np.zeros(3), np.zeros(3)
                p1 = plan.footholds[s + 1]
                touchdown[i] = 0.0
                tds = touchdown_bases[i]
                if rolling[i] and tds is not None:
                    # rolling velocity and acceleration at touch-down, and at TOUCHDOWN_DT_S later for the jerk
                    q_td = q.copy()
                    for j, td in enumerate(tds):
                        p_td = p1 if j == 0 else p1 + TOUCHDOWN_DT_S * v1 + (0.5 * TOUCHDOWN_DT_S**2) * a1
                        q_td[:7] = td.q_base[s]
                        q_td = _touchdown_posture(model, data_td, q_td, fids[i], idx_q[i], idx_v[i], p_td)
                        v_td, a_td = _rolling_contact(
                            model, data_td, q_td, fids[i], idx_v[i], Dx[i], td.v_base[s], td.a_base[s]
                        )
                        if j == 0:
                            v1, a1 = v_td, a_td
                    touchdown[i] = (v1, a1, (a_td - a1) / TOUCHDOWN_DT_S)
                p0 = plan.stance_end_position(s) + r0
                seg = SwingSegment.hermite(
                    t0, t1, (p0, v0, a0), (p1, touchdown[i, 0], touchdown[i, 1]), plan.step_height
                )
                segments[i] = seg
                k_end = k + int(np.count_nonzero(code[k:, i] == code[k, i]))  # the samples of this swing
                swing_targets[i] = (k, *seg.evaluate(t[k:k_end]))
            swing = swing_targets[i]
            assert swing is not None  # set at the lift-off sample of this swing, above
            k0, p_sw, v_sw, a_sw = swing
            target_p[i], target_v[i], target_a[i] = p_sw[k - k0], v_sw[k - k0], a_sw[k - k0]
        # ---- inverse kinematics of the foot origins (Newton on each 3-joint leg, all legs stacked)
        for it in range(IK_MAX_ITERATIONS + 1):
            pin.computeJointJacobians(model, data, q)
            P = np.array([pin.updateFramePlacement(model, data, fid).translation for fid in fids])
            errs = target_p - P
            worst = float(np.abs(errs).max())
            J6 = np.array([pin.getFrameJacobian(model, data, fid, LWA) for fid in fids])  # (nf, 6, nv)
            if worst < IK_TOLERANCE_M:
                break
            if it == IK_MAX_ITERATIONS:
                raise SimulationError(
                    f"inverse kinematics did not converge at t = {tk:.4f} s (foot error {worst:.3g} m): "
                    "a foot target is out of reach; lower the speed, step height or crouch"
                )
            q[idx_q] += _ik_step(J6[feet_ix, rows, cols], errs)
        stance = np.flatnonzero(contact[k])
        rollers = stance[rolling[stance]]  # stance feet with a radius
        # contact-point Jacobians J_c = J_lin - [d]x J_ang for stance feet, foot-origin Jacobians in swing
        J_ang = J6[:, 3:]
        Jc = J6[:, :3].copy()
        if rollers.size:
            Jc[rollers] -= Dx[rollers] @ J_ang[rollers]
        J_leg = Jc[feet_ix, rows, cols]  # (nf, 3, 3)
        # ---- velocities: contact points move with the slip (at rest otherwise), swing origins as planned
        v = np.zeros(nv)
        v[:6] = base_v[k]
        rhs = target_v - Jc[:, :, :6] @ base_v[k]
        v[idx_v] = np.linalg.solve(J_leg, rhs[..., None])[..., 0]
        # ---- accelerations: the classical accelerations with zero joint accelerations are the drift terms
        a = np.zeros(nv)
        a[:6] = base_a[k]
        pin.forwardKinematics(model, data, q, v, a)
        acc0 = [pin.getFrameClassicalAcceleration(model, data, fid, LWA) for fid in fids]
        drift = np.array([m.linear for m in acc0])
        if rollers.size:
            drift_ang = np.array([acc0[i].angular for i in rollers])
            drift[rollers] -= (Dx[rollers] @ drift_ang[..., None])[..., 0]
        a[idx_v] = np.linalg.solve(J_leg, (target_a - drift)[..., None])[..., 0]
        P_FOOT[k] = target_p
        # ---- rolling: the foot origin moves with omega_F x (rho e_z) = [d]x omega_F (and [d]x alpha_F)
        if rolling.any():
            cont = in_stance & rolling & same
            roll.a_prev = np.where(cont[:, None], roll.a, roll.a_prev)
            roll.h_prev = np.where(cont, h, roll.h_prev)
            roll.has_prev = cont
            if rollers.size:
                omega_feet = J_ang[rollers] @ v  # (m, 3) rad/s, W
                alpha_feet = drift_ang + J_ang[rollers][:, :, 6:] @ a[6:]  # (m, 3) rad/s^2, W
                roll.v[rollers] = (Dx[rollers] @ omega_feet[..., None])[..., 0]
                roll.a[rollers] = (Dx[rollers] @ alpha_feet[..., None])[..., 0]
        prev_code = code[k]
        # ---- inverse dynamics and contact forces (at the contact points)
        tau_full = pin.rnea(model, data, q, v, a)
        f = np.zeros((nf, 3))
        resid = tau_full.copy()
        if stance.size:
            Ab = Jc[stance, :, :6].reshape(-1, 6).T  # (6, 3 nc): generalized base force of the stance forces
            f_ref = np.zeros(3 * stance.size)
            f_ref[2::3] = weight / stance.size
            r = tau_full[:6] - Ab @ f_ref
            AAt = Ab @ Ab.T
            lam = 1e-10 * np.trace(AAt)
            sol = f_ref + Ab.T @ np.linalg.solve(AAt + lam * eye6, r)
            if (sol[2::3] < 0.0).any():  # the ground would pull a foot: the same problem with f_z >= 0
                sol = unilateral_forces(Ab, tau_full[:6], f_ref, lam)
                unilateral += 1
            f[stance] = sol.reshape(-1, 3)
            resid -= Jc[stance].reshape(-1, nv).T @ sol
            fs = f[stance]
            violations += int(np.count_nonzero(np.hypot(fs[:, 0], fs[:, 1]) > mu * fs[:, 2]))
            for i in stance:
                R_FW = data.oMf[fids[i]].rotation.T
                W_FOOT[k, i, :3] = R_FW @ f[i]
                W_FOOT[k, i, 3:] = R_FW @ (Dx[i] @ f[i])  # (d x f): the force acts at the contact point
        Q[k], V[k], A[k] = q, v, a
        TAU[k] = resid[6:]
        RES[k] = resid[:6]
        unbalanced += bool(
            np.linalg.norm(resid[:3]) > UNBALANCED_TOLERANCE * weight
            or np.linalg.norm(resid[3:6]) > UNBALANCED_TOLERANCE * weight * 1.0  # N m: the weight at 1 m
        )
        F[k] = f
        qd_prev = v[6:]
        qdd_prev = a[6:]
    return WholeBodyTrajectory(
        q=Q,
        v=V,
        a=A,
        tau=TAU,
        res=RES,
        f=F,
        w_foot=W_FOOT,
        violations=violations,
        unilateral=unilateral,
        unbalanced=unbalanced,
        foot_p=P_FOOT,
        contact=contact,
        slipping=slipping,
    )


def simulate(settings: SimulationSettings, *, robot: SimRobot | None = None) -> SimulatedRun:
    """Generate a run (deterministic for given settings and seed).

    Args:
        settings: what to generate.
        robot: a pre-loaded robot (to reuse a model or test a modified IMU); loaded from
            ``settings.robot`` when None.

    Returns:
        The :class:`SimulatedRun` (its ``settings.foot_model`` resolved: ``"sphere"`` when the description has
        foot spheres and the settings leave it None).

    Raises:
        SimulationError: unknown robot/gait, a slip outside a stance, a foot target out of reach, a leg whose
            Jacobian becomes singular, ``foot_model="sphere"`` for a robot without foot spheres.
    """
    from robot_state_estimator.simulation.biped import simulate_biped

    if settings.robot in BIPEDS:
        return simulate_biped(settings, robot=robot)
    if settings.foot_model == "flat":
        raise SimulationError(f"foot_model 'flat' is the bipeds' ({sorted(BIPEDS)}); {settings.robot} has not")
    if robot is None:
        robot = load_sim_robot(settings.robot)
    seeds = np.random.SeedSequence(settings.seed).spawn(4)
    rng_jitter, rng_imu, rng_joints = (np.random.default_rng(s) for s in seeds[:3])
    # the errors added later draw from further children (spawn key 4, 5): the runs without them are unchanged
    seeds_extra = np.random.SeedSequence(settings.seed).spawn(6)[4:]

    # ---- time grid: union of IMU and joint stamps
    imu_rel = make_stamps(settings.imu_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    joint_rel = make_stamps(settings.joint_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    grid_rel = np.union1d(imu_rel, joint_rel)
    imu_index = np.searchsorted(grid_rel, imu_rel).astype(np.int64)
    joint_index = np.searchsorted(grid_rel, joint_rel).astype(np.int64)
    t = grid_rel / 1e9

    # ---- foot model
    nf = len(robot.feet)
    radii = np.array(robot.foot_radii if robot.foot_radii else [0.0] * nf, dtype=float)
    foot_model = settings.foot_model or ("sphere" if (radii > 0).any() else "point")
    if foot_model == "sphere" and not (radii > 0).any():
        raise SimulationError(
            f"foot_model 'sphere': the description of {robot.name} has no collision sphere centred at a foot frame"
        )
    rho = radii if foot_model == "sphere" else np.zeros(nf)
    settings = dataclasses.replace(settings, foot_model=foot_model)

    # ---- base and feet (the base is raised by the foot radius: the lowest points of the feet on z = 0)
    gait = settings.gait
    if gait == "walk":
        period = settings.gait_period_s or robot.gait.walk_period_s
        duty = settings.duty_factor or robot.gait.walk_duty
    else:
        period = settings.gait_period_s or robot.gait.trot_period_s
        duty = settings.duty_factor or robot.gait.trot_duty
    step_height = settings.step_height_m if settings.step_height_m is not None else robot.gait.step_height_m
    q_start = robot.q_standing.copy()
    q_start[2] += float(rho.mean())
    motion = _base_motion(settings, robot, period, float(q_start[2]))
    base = evaluate_base(motion, t)

    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q_standing)
    r_feet = np.array([data.oMf[robot.model.getFrameId(f)].translation[:2] for f in robot.feet])
    plans = plan_feet(
        motion,
        r_feet,
        phase_offsets=PHASE_OFFSETS.get(gait),
        period=period,
        duty=duty,
        step_height=step_height,
        t_gait_start=settings.settle_s,
        t_end=settings.duration_s,
        stance_heights=rho,
    )
    if settings.slip is not None:
        _add_slip(settings, robot, plans)
    if settings.stance_slip_m > 0.0:
        _add_random_slips(settings, plans, np.random.default_rng(seeds_extra[0]))
    touchdown_bases = [
        (evaluate_base(motion, plan.swing_end), evaluate_base(motion, plan.swing_end + TOUCHDOWN_DT_S))
        if plan.swing_end.size
        else None
        for plan in plans
    ]

    try:
        wb = _whole_body(robot, q_start, t, base, plans, touchdown_bases, rho, settings.friction_coefficient)
    except np.linalg.LinAlgError as exc:  # a leg straight or folded flat: its foot Jacobian is singular
        raise SimulationError(
            f"a leg of {robot.name} became singular (straight or folded) in the {gait} ({exc}): lower the speed or "
            "the step height, or stand with bent knees (simulate --srdf with a 'standing' state)"
        ) from exc
    xml = robot.description_xml if foot_model == "sphere" else point_feet_description(robot.description_xml, robot.feet)
    return sensor_run(settings, robot, wb, grid_rel, imu_rel, imu_index, joint_index, rng_imu, rng_joints, rho, xml)


def sensor_run(
    settings: SimulationSettings,
    robot: SimRobot,
    wb: WholeBodyTrajectory,
    grid_rel: StampArray,
    imu_rel: StampArray,
    imu_index: StampArray,
    joint_index: StampArray,
    rng_imu: np.random.Generator,
    rng_joints: np.random.Generator,
    rho: FloatArray,
    description_xml: str,
) -> SimulatedRun:
    """The sensors of a generated whole-body trajectory ``wb`` and the :class:`SimulatedRun` (step 7 of
    the module docstring): IMU readings (ideal, then gz-sensors noise) at ``imu_index``, joint readings with
    optional encoder and torque noise at ``joint_index``; shared by the quadruped and biped generators."""
    foot_model = str(settings.foot_model)
    q, v, a = wb.q, wb.v, wb.a
    contact, slipping = wb.contact, wb.slipping
    foot_p = wb.foot_p

    # ---- IMU
    imu_model = ImuModel(robot.imu, robot.model, heading_rad=settings.heading_rad, rng=rng_imu)
    imu_model.set_reference(q[0])
    omega_ideal, f_ideal, quat = imu_model.ideal_series(q[imu_index], v[imu_index], a[imu_index])
    gyro_bias0, accel_bias0 = imu_model.noise.gyro_bias, imu_model.noise.accel_bias
    if settings.noise:
        dts = np.diff(imu_rel, prepend=imu_rel[0]) / 1e9
        omega, f_meas = imu_model.noise.apply_series(omega_ideal, f_ideal, dts)
    else:
        omega, f_meas = omega_ideal.copy(), f_ideal.copy()
        gyro_bias0 = np.zeros(3)
        accel_bias0 = np.zeros(3)
    if settings.imu_vibration_accel_m_s2 > 0.0 or settings.imu_vibration_gyro_rad_s > 0.0:
        rng_vib = np.random.default_rng(np.random.SeedSequence(settings.seed).spawn(6)[5])  # (spawn key 5)
        omega = omega + rng_vib.normal(0.0, settings.imu_vibration_gyro_rad_s, omega.shape)
        f_meas = f_meas + rng_vib.normal(0.0, settings.imu_vibration_accel_m_s2, f_meas.shape)
    cov = imu_model.covariances()

    # ---- joints
    qj = q[joint_index, 7:].copy()
    vj = v[joint_index, 6:].copy()
    ej = wb.tau[joint_index].copy()
    if settings.noise:
        qj += rng_joints.normal(0.0, settings.encoder_noise_rad, qj.shape)
        vj += rng_joints.normal(0.0, settings.joint_velocity_noise_rad_s, vj.shape)
        ej += rng_joints.normal(0.0, settings.torque_noise_nm, ej.shape)
    if settings.encoder_resolution_rad > 0.0:
        qj = settings.encoder_resolution_rad * np.round(qj / settings.encoder_resolution_rad)

    return SimulatedRun(
        settings=settings,
        robot=robot.name,
        base_link=robot.base_link,
        joint_names=robot.joint_names,
        feet=tuple(robot.feet),
        imu=robot.imu,
        description_xml=description_xml,
        foot_model=foot_model,
        foot_radii=rho,
        stamps_ns=grid_rel.astype(np.int64) + np.int64(settings.start_stamp_ns),
        q=q,
        v=v,
        a=a,
        tau=wb.tau,
        base_residual_wrench=wb.res,
        contact=contact,
        slipping=slipping,
        foot_positions_world=foot_p,
        contact_points_world=foot_p - rho[None, :, None] * np.array([0.0, 0.0, 1.0]),
        contact_forces_world=wb.f,
        contact_wrenches_in_foot=wb.w_foot,
        friction_violations=wb.violations,
        unilateral_samples=wb.unilateral,
        unbalanced_samples=wb.unbalanced,
        imu_index=imu_index,
        imu_omega=omega,
        imu_f=f_meas,
        imu_omega_ideal=omega_ideal,
        imu_f_ideal=f_ideal,
        imu_quat_xyzw=quat,
        imu_gyro_bias=gyro_bias0,
        imu_accel_bias=accel_bias0,
        imu_covariances={
            "orientation": cov.orientation,
            "angular_velocity": cov.angular_velocity,
            "linear_acceleration": cov.linear_acceleration,
        },
        joint_index=joint_index,
        joint_position=qj,
        joint_velocity=vj,
        joint_effort=ej,
    )


def _add_random_slips(settings: SimulationSettings, plans: list[FootPlan], rng: np.random.Generator) -> None:
    """``settings.stance_slip_m``: a small random slip in every stance that starts after ``settle_s`` (and has no
    slip yet), over the middle half of the stance."""
    for plan in plans:
        n_stances = plan.swing_start.size + 1
        for j in range(n_stances):
            start = plan.swing_end[j - 1] if j > 0 else 0.0
            end = plan.swing_start[j] if j < plan.swing_start.size else settings.duration_s
            d = np.array([*rng.normal(0.0, settings.stance_slip_m, 2), 0.0])
            if j in plan.slips or start < settings.settle_s or end - start < 0.02:
                continue
            T = 0.5 * (end - start)
            plan.slips[j] = FootSlip(start + 0.25 * (end - start), T, d)


def _add_slip(settings: SimulationSettings, robot: SimRobot, plans: list[FootPlan]) -> None:
    slip = settings.slip
    assert slip is not None
    foot = slip.foot
    if foot in robot.feet:
        i = robot.feet.index(foot)
    else:
        try:
            i = int(foot)
            robot.feet[i]
        except (ValueError, IndexError):
            raise SimulationError(
                f"slip foot {foot!r} is neither a foot frame {list(robot.feet)} nor an index"
            ) from None
    plan = plans[i]
    t0 = slip.start_s
    k = int(np.searchsorted(plan.swing_start, t0, side="right")) - 1
    if k >= 0 and t0 < plan.swing_end[k]:
        raise SimulationError(f"slip of {robot.feet[i]} at {t0} s starts during a swing; pick a stance time")
    stance_end = plan.swing_start[k + 1] if k + 1 < plan.swing_start.size else np.inf
    T = min(slip.duration_s, stance_end - t0 - 1e-3)
    if T <= 0:
        raise SimulationError(f"slip of {robot.feet[i]} at {t0} s leaves no time before lift-off")
    d = np.array([slip.displacement_m[0], slip.displacement_m[1], 0.0])
    plan.slips[k + 1] = FootSlip(t0, T, d)
