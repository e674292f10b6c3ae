"""Generate a dynamically consistent legged-robot run with exact ground truth (see :func:`simulate`).

Pipeline (all at the union of the IMU and joint stamps):

1. base trajectory and foot plans, in closed form (:mod:`.trajectory`);
2. leg joints by Newton inverse kinematics per sample (foot positions in W, warm-started from the previous
   sample extrapolated with its velocity and acceleration), to ``|error| < 1e-12 m``;
3. joint velocities and accelerations from the foot motion through the leg Jacobians, not finite
   differences: ``J_leg qdot = v_F - J_base v_base`` and
   ``J_leg qddot = a_F - (J_base a_base + Jdot v)`` (classical foot accelerations, ``LOCAL_WORLD_ALIGNED``);
4. ``tau_full = RNEA(q, v, a) = M a + h``; stance-foot forces ``f`` (world axes, at the foot frame origins)
   from the unactuated rows ``J_c,base^T f = tau_full[:6]``: the least-squares solution closest to an equal
   share of the weight (``f = f_ref + pinv(A) (w - A f_ref)``), exact whenever the contacts can balance the
   base (three or more feet; friction cones are checked and violations counted);
5. joint torques ``tau = tau_full[6:] - J_c,joints^T f``; what the contacts cannot balance is kept in
   ``base_residual_wrench``;
6. IMU readings from :class:`~robot_state_estimator.sensors.ImuModel` (ideal, then gz-sensors noise), joint
   readings with optional encoder and torque noise.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_state_estimator.sensors.imu_model import ImuModel
from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.robots import SimRobot, load_sim_robot
from robot_state_estimator.simulation.run import SimulatedRun
from robot_state_estimator.simulation.settings import SimulationSettings
from robot_state_estimator.simulation.trajectory import (
    BaseMotion,
    FootSlip,
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


def make_stamps(rate_hz: float, duration_s: float, jitter_s: float, rng: np.random.Generator) -> np.ndarray:
    """(m,) int64 ns offsets from the run start: ``round(k / rate) + U(-jitter, jitter)``, k = 0.. while
    below ``duration_s``; the first stamp is never jittered (it stays at 0)."""
    n = int(np.floor(duration_s * rate_hz + 1e-9)) + 1
    base = np.round(np.arange(n) * (1e9 / rate_hz)).astype(np.int64)
    if jitter_s > 0:
        jitter = np.round(rng.uniform(-jitter_s, jitter_s, n) * 1e9).astype(np.int64)
        jitter[0] = 0
        base = base + jitter
    return base[base <= round(duration_s * 1e9)]


def _base_motion(settings: SimulationSettings, robot: SimRobot, period: float) -> BaseMotion:
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
        z0=float(robot.q_standing[2]),
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
        self.idx_q: list[np.ndarray] = []
        self.idx_v: list[np.ndarray] = []
        for fid in self.frame_ids:
            joint = model.frames[fid].parentJoint
            chain = [j for j in model.supports[joint] if j > 1]
            self.idx_q.append(np.array([model.joints[j].idx_q for j in chain]))
            self.idx_v.append(np.array([model.joints[j].idx_v for j in chain]))
            if any(model.joints[j].nq != 1 or model.joints[j].nv != 1 for j in chain) or len(chain) != 3:
                raise SimulationError(f"foot {model.frames[fid].name}: expected a 3-joint revolute leg")


def _whole_body(
    robot: SimRobot,
    t: np.ndarray,
    base_q: np.ndarray,
    base_v: np.ndarray,
    base_a: np.ndarray,
    foot_p: np.ndarray,
    foot_v: np.ndarray,
    foot_a: np.ndarray,
    contact: np.ndarray,
    mu: float,
) -> dict[str, np.ndarray | int]:
    model = robot.model
    data = model.createData()
    legs = _Legs(model, robot.feet)
    n, nf = contact.shape
    nq, nv = model.nq, model.nv
    Q = np.empty((n, nq))
    V = np.empty((n, nv))
    A = np.empty((n, nv))
    TAU = np.empty((n, nv - 6))
    RES = np.empty((n, 6))
    F = np.zeros((n, nf, 3))
    W_FOOT = np.zeros((n, nf, 6))
    weight = pin.computeTotalMass(model) * 9.81
    violations = 0
    LWA = pin.LOCAL_WORLD_ALIGNED
    fids = legs.frame_ids
    idx_q = np.array(legs.idx_q)  # (nf, 3)
    idx_v = np.array(legs.idx_v)  # (nf, 3)
    rows = np.arange(3)[None, :, None]
    feet_ix = np.arange(nf)[:, None, None]
    cols = idx_v[:, None, :]
    eye6 = np.eye(6)
    q = robot.q_standing.copy()
    qd_prev = np.zeros(nv - 6)
    qdd_prev = np.zeros(nv - 6)
    for k in range(n):
        q[:7] = base_q[k]
        if k > 0:
            dt = t[k] - t[k - 1]
            q[7:] = Q[k - 1, 7:] + qd_prev * dt + 0.5 * qdd_prev * dt * dt
        # ---- inverse kinematics (Newton on each 3-joint leg, all legs stacked)
        for it in range(IK_MAX_ITERATIONS + 1):
            pin.computeJointJacobians(model, data, q)
            P = np.array([pin.updateFramePlacement(model, data, fid).translation for fid in fids])
            errs = foot_p[k] - P
            worst = float(np.abs(errs).max())
            Js = np.array([pin.getFrameJacobian(model, data, fid, LWA)[:3] for fid in fids])  # (nf, 3, nv)
            J_leg = Js[feet_ix, rows, cols]  # (nf, 3, 3)
            if worst < IK_TOLERANCE_M:
                break
            if it == IK_MAX_ITERATIONS:
                raise SimulationError(
                    f"inverse kinematics did not converge at t = {t[k]:.4f} s (foot error {worst:.3g} m): "
                    "a foot target is out of reach; lower the speed, step height or crouch"
                )
            if worst > 1e-3:  # far away (first sample): damped, clamped steps
                JT = np.transpose(J_leg, (0, 2, 1))
                steps = np.linalg.solve(JT @ J_leg + 1e-6 * np.eye(3), (JT @ errs[..., None]))[..., 0]
                norms = np.linalg.norm(steps, axis=1, keepdims=True)
                steps *= np.minimum(1.0, 0.2 / np.maximum(norms, 1e-300))
            else:
                steps = np.linalg.solve(J_leg, errs[..., None])[..., 0]
            q[idx_q] += steps
        # ---- velocities from the foot and base velocities
        v = np.zeros(nv)
        v[:6] = base_v[k]
        rhs = foot_v[k] - Js[:, :, :6] @ base_v[k]
        v[idx_v] = np.linalg.solve(J_leg, rhs[..., None])[..., 0]
        # ---- accelerations: classical foot acceleration with zero joint accelerations is the drift term
        a = np.zeros(nv)
        a[:6] = base_a[k]
        pin.forwardKinematics(model, data, q, v, a)
        drift = np.array([pin.getFrameClassicalAcceleration(model, data, fid, LWA).linear for fid in fids])
        a[idx_v] = np.linalg.solve(J_leg, (foot_a[k] - drift)[..., None])[..., 0]
        # ---- inverse dynamics and contact forces
        tau_full = pin.rnea(model, data, q, v, a)
        stance = np.flatnonzero(contact[k])
        f = np.zeros((nf, 3))
        resid = tau_full.copy()
        if stance.size:
            Ab = Js[stance, :, :6].reshape(-1, 6).T  # (6, 3 nc): generalized base force of the stance forces
            f_ref = np.zeros(3 * stance.size)
            f_ref[2::3] = weight / stance.size
            r = tau_full[:6] - Ab @ f_ref
            AAt = Ab @ Ab.T
            sol = f_ref + Ab.T @ np.linalg.solve(AAt + 1e-10 * np.trace(AAt) * eye6, r)
            f[stance] = sol.reshape(-1, 3)
            resid -= Js[stance].reshape(-1, nv).T @ sol
            fs = f[stance]
            violations += int(np.count_nonzero((fs[:, 2] < 0) | (np.hypot(fs[:, 0], fs[:, 1]) > mu * fs[:, 2])))
            for i in stance:
                W_FOOT[k, i, :3] = data.oMf[fids[i]].rotation.T @ f[i]
        Q[k], V[k], A[k] = q, v, a
        TAU[k] = resid[6:]
        RES[k] = resid[:6]
        F[k] = f
        qd_prev = v[6:]
        qdd_prev = a[6:]
    return {"q": Q, "v": V, "a": A, "tau": TAU, "res": RES, "f": F, "w_foot": W_FOOT, "violations": violations}


def simulate(settings: SimulationSettings, *, robot: SimRobot | None = None) -> SimulatedRun:
    """Generate a run (deterministic for given settings and seed).

    Args:
        settings: what to generate.
        robot: a pre-loaded robot (to reuse a model or test a modified IMU); loaded from
            ``settings.robot`` when None.

    Returns:
        The :class:`SimulatedRun`.

    Raises:
        SimulationError: unknown robot/gait, a slip outside a stance, a foot target out of reach.
    """
    if robot is None:
        robot = load_sim_robot(settings.robot)
    seeds = np.random.SeedSequence(settings.seed).spawn(4)
    rng_jitter, rng_imu, rng_joints = (np.random.default_rng(s) for s in seeds[:3])

    # ---- time grid: union of IMU and joint stamps
    imu_rel = make_stamps(settings.imu_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    joint_rel = make_stamps(settings.joint_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    grid_rel = np.union1d(imu_rel, joint_rel)
    imu_index = np.searchsorted(grid_rel, imu_rel).astype(np.int64)
    joint_index = np.searchsorted(grid_rel, joint_rel).astype(np.int64)
    t = grid_rel / 1e9

    # ---- base and feet
    gait = settings.gait
    if gait == "walk":
        period = settings.gait_period_s or robot.gait.walk_period_s
        duty = settings.duty_factor or robot.gait.walk_duty
    else:
        period = settings.gait_period_s or robot.gait.trot_period_s
        duty = settings.duty_factor or robot.gait.trot_duty
    step_height = settings.step_height_m if settings.step_height_m is not None else robot.gait.step_height_m
    motion = _base_motion(settings, robot, period)
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
    )
    if settings.slip is not None:
        _add_slip(settings, robot, plans)
    nf = len(robot.feet)
    n = t.size
    foot_p = np.empty((n, nf, 3))
    foot_v = np.empty((n, nf, 3))
    foot_a = np.empty((n, nf, 3))
    contact = np.empty((n, nf), dtype=bool)
    slipping = np.empty((n, nf), dtype=bool)
    for i, plan in enumerate(plans):
        foot_p[:, i], foot_v[:, i], foot_a[:, i], contact[:, i], slipping[:, i] = plan.evaluate(t)

    wb = _whole_body(
        robot, t, base.q_base, base.v_base, base.a_base, foot_p, foot_v, foot_a, contact, settings.friction_coefficient
    )
    q, v, a = wb["q"], wb["v"], wb["a"]

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
    cov = imu_model.covariances()

    # ---- joints
    qj = q[joint_index, 7:].copy()
    vj = v[joint_index, 6:].copy()
    ej = np.asarray(wb["tau"])[joint_index].copy()
    if settings.noise:
        qj += rng_joints.normal(0.0, settings.encoder_noise_rad, qj.shape)
        vj += rng_joints.normal(0.0, settings.joint_velocity_noise_rad_s, vj.shape)
        ej += rng_joints.normal(0.0, settings.torque_noise_nm, ej.shape)

    return SimulatedRun(
        settings=settings,
        robot=robot.name,
        base_link=robot.base_link,
        joint_names=robot.joint_names,
        feet=tuple(robot.feet),
        imu=robot.imu,
        description_xml=robot.description_xml,
        stamps_ns=grid_rel.astype(np.int64) + np.int64(settings.start_stamp_ns),
        q=q,
        v=v,
        a=a,
        tau=np.asarray(wb["tau"]),
        base_residual_wrench=np.asarray(wb["res"]),
        contact=contact,
        slipping=slipping,
        foot_positions_world=foot_p,
        contact_forces_world=np.asarray(wb["f"]),
        contact_wrenches_in_foot=np.asarray(wb["w_foot"]),
        friction_violations=int(wb["violations"]),
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


def _add_slip(settings: SimulationSettings, robot: SimRobot, plans: list) -> None:
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
