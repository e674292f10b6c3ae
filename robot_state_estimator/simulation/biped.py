"""A biped walk with flat feet and exact ground truth (``simulate --robot talos --gait walk``).

The quadruped generator (:mod:`.generator`) places foot *points*; a biped stands on flat soles, which in stance
hold their position **and orientation** on the ground (the contact the 6-D stance update of
:mod:`robot_state_estimator.estimation.flat_feet` models). Pipeline, one sample after the other:

1. base trajectory, gait schedule and footholds in closed form (:mod:`.trajectory`, as for the quadrupeds): a
   straight walk at ``speed_m_s`` with body bobbing, roll and pitch; the two soles alternate with phase offsets
   0 and 1/2 and duty factor ``duty`` (> 1/2: double-support phases); swings are quintic
   :class:`~.trajectory.SwingSegment` from foothold to foothold with a vertical bump;
2. each sole's target pose: the foothold (stance) or the swing point, always at the sole's orientation in the
   standing posture (flat, heading 0: a straight walk does not turn the feet);
3. the 6 joints of each leg by Newton inverse kinematics on the sole's full pose (``log6`` of the pose error,
   the LOCAL frame Jacobian), to ``|error| < 1e-12``; the other joints (torso, arms, head) keep the standing
   posture;
4. joint velocities and accelerations from the sole twists through the 6 x 6 leg Jacobians: ``J_leg qdot =
   V_F - J_base v_base`` (``LOCAL_WORLD_ALIGNED``), ``J_leg qddot = A_F - drift`` with the classical
   accelerations (zero for a sole in stance, the swing's linear acceleration otherwise);
5. ``tau_full = RNEA(q, v, a)``; each stance sole receives a 6-D wrench (force and moment about its origin, world
   axes) from the unactuated rows ``A f = w``: exact in single support (``A`` is 6 x 6), the least-norm
   deviation from an equal share of the weight in double support. Every sample is balanced to rounding; the
   centre of pressure is not constrained to the sole (the base path does not sway over the stance foot) and
   friction is only checked;
6. ``tau = tau_full[6:] - J_joints^T f``; 7. sensors (:func:`.generator.sensor_run`).

The robot is example-robot-data's Talos (``talos_reduced.urdf``, SRDF posture ``half_sitting``, feet
``left_sole_link`` / ``right_sole_link``). Its description's IMU sits on ``torso_2_link``, which the torso joints
move relative to the base (the estimator refuses such an IMU), and its noise block is one libsdformat ignores;
the run's description therefore replaces it by :data:`TALOS_IMU_BLOCK`, an IMU on ``base_link`` with an
assumed noise of a consumer-grade MEMS IMU (stated there), recorded with the run as ``robot_description.urdf``.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pinocchio as pin

from robot_state_estimator.common.robots import example_robot_data_share
from robot_state_estimator.description import load_description
from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.generator import (
    IK_MAX_ITERATIONS,
    IK_TOLERANCE_M,
    UNBALANCED_TOLERANCE,
    FloatArray,
    IndexArray,
    _base_motion,
    make_stamps,
    sensor_run,
)
from robot_state_estimator.simulation.robots import BIPEDS, SimRobot
from robot_state_estimator.simulation.run import SimulatedRun, WholeBodyTrajectory
from robot_state_estimator.simulation.settings import SimulationSettings
from robot_state_estimator.simulation.trajectory import BaseState, FootPlan, SwingSegment, evaluate_base, plan_feet

#: The IMU of a simulated Talos: on ``base_link`` at its origin, axes aligned, 1 kHz. Assumed noise (stated, not a
#: datasheet of Talos' IMU): per sample gyro 1e-3 rad/s, accelerometer 0.02 m/s^2 (consumer MEMS white noise at
#: 1 kHz), turn-on biases 0.005 rad/s and 0.05 m/s^2, and a gz-sensors Gauss-Markov dynamic gyro bias with
#: ``dynamic_bias_stddev`` 0.002 (the density of its driving noise, rad/s/sqrt(s): about 0.009 rad/s of change in 20 s;
#: steady-state stddev 0.002 sqrt(60 s / 2) = 0.011 rad/s) and a 60 s correlation time: the in-run drift the static
#: initialisation cannot remove.
TALOS_IMU_BLOCK = """<gazebo reference="base_link">
    <!-- robot_state_estimator simulation: the IMU on base_link with an assumed consumer-MEMS noise
         (simulation/biped.py); the description's torso IMU block was removed -->
    <sensor name="imu_sensor" type="imu">
      <always_on>true</always_on>
      <update_rate>1000</update_rate>
      <topic>imu/data</topic>
      <pose>0 0 0 0 0 0</pose>
      <imu>
        <angular_velocity>{gyro}</angular_velocity>
        <linear_acceleration>{accel}</linear_acceleration>
      </imu>
    </sensor>
  </gazebo>"""
_GYRO_NOISE = (
    '<noise type="gaussian"><mean>0</mean><stddev>1e-3</stddev><bias_mean>0</bias_mean>'
    "<bias_stddev>0.005</bias_stddev><dynamic_bias_stddev>0.002</dynamic_bias_stddev>"
    "<dynamic_bias_correlation_time>60</dynamic_bias_correlation_time></noise>"
)
_ACCEL_NOISE = (
    '<noise type="gaussian"><mean>0</mean><stddev>0.02</stddev><bias_mean>0</bias_mean>'
    "<bias_stddev>0.05</bias_stddev></noise>"
)


#: Gaits a biped can generate.
BIPED_GAITS = ("stand", "walk")
_IMU_BLOCK_RE = re.compile(r"<gazebo\b[^>]*>(?:(?!</gazebo>).)*?<sensor\b[^>]*type=\"imu\".*?</gazebo>", re.S)


def talos_description_xml(xml: str) -> str:
    """Talos' URDF text with its IMU ``<gazebo>`` block(s) replaced by :data:`TALOS_IMU_BLOCK` (on ``base_link``)."""

    def axes(noise: str) -> str:
        return "".join(f"<{a}>{noise}</{a}>" for a in "xyz")

    block = TALOS_IMU_BLOCK.format(gyro=axes(_GYRO_NOISE), accel=axes(_ACCEL_NOISE))
    out, n = _IMU_BLOCK_RE.subn("", xml)
    if n == 0:
        raise SimulationError("no IMU <gazebo> block found in the Talos description")
    i = out.rindex("</robot>")
    return out[:i] + "  " + block + "\n" + out[i:]


def load_biped(robot: str) -> SimRobot:
    """Model, IMU (:data:`TALOS_IMU_BLOCK`), soles and standing posture of the biped ``robot``.

    Raises:
        SimulationError: unknown biped, or its files are missing.
    """
    if robot not in BIPEDS:
        raise SimulationError(f"unknown biped {robot!r}; known: {sorted(BIPEDS)}")
    info = BIPEDS[robot]
    share = example_robot_data_share() / "robots"
    xml = talos_description_xml((share / info.urdf).read_text())
    desc = load_description(xml)
    model = desc.model
    for foot in info.feet:
        if not model.existFrame(foot):
            raise SimulationError(f"{robot}: sole frame {foot!r} not in the model")
    pin.loadReferenceConfigurations(model, str(share / info.srdf), False)
    try:
        q = np.array(model.referenceConfigurations[info.posture], dtype=float)
    except (KeyError, IndexError) as exc:
        raise SimulationError(f"{info.srdf} has no {info.posture!r} configuration") from exc
    q[:3] = 0.0
    q[3:7] = (0.0, 0.0, 0.0, 1.0)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    q[2] = -float(np.mean([data.oMf[model.getFrameId(f)].translation[2] for f in info.feet]))
    return SimRobot(
        name=robot,
        model=model,
        imu=desc.imu,
        feet=info.feet,
        q_standing=q,
        base_link=desc.base_link,
        description_xml=xml,
        gait=info.gait,
        source="description",
        foot_radii=(0.0, 0.0),
    )


def _leg_columns(model: pin.Model, fid: int) -> tuple[IndexArray, IndexArray]:
    """The q and v indices of the joints moving frame ``fid`` (its supporting joints below the root)."""
    chain = [j for j in model.supports[model.frames[fid].parentJoint] if j > 1]
    if len(chain) != 6 or any(model.joints[j].nq != 1 for j in chain):
        raise SimulationError(f"sole {model.frames[fid].name}: expected a 6-joint revolute leg")
    return np.array([model.joints[j].idx_q for j in chain]), np.array([model.joints[j].idx_v for j in chain])


def _whole_body_flat(
    robot: SimRobot, t: FloatArray, base: BaseState, plans: list[FootPlan], mu: float
) -> WholeBodyTrajectory:
    """Joint trajectory, torques and sole wrenches, one sample after the other (module docstring, steps 2-6)."""
    model = robot.model
    data = model.createData()
    fids = [model.getFrameId(f) for f in robot.feet]
    cols = [_leg_columns(model, fid) for fid in fids]
    n, nf, nv = t.size, len(fids), model.nv
    pin.framesForwardKinematics(model, data, robot.q_standing)
    R_sole = [data.oMf[fid].rotation.copy() for fid in fids]  # flat, heading 0: held for the whole walk
    contact = np.empty((n, nf), dtype=bool)
    phase = np.empty((n, nf), dtype=np.intp)
    stance_p = np.empty((n, nf, 3))
    for i, plan in enumerate(plans):
        stance_p[:, i], _, _, contact[:, i], _ = plan.evaluate_stance(t)
        phase[:, i] = plan.phases(t)[1]
    Q, V, A = np.empty((n, model.nq)), np.empty((n, nv)), np.empty((n, nv))
    TAU, RES = np.empty((n, nv - 6)), np.empty((n, 6))
    F, W_FOOT, P_FOOT = np.zeros((n, nf, 3)), np.zeros((n, nf, 6)), np.empty((n, nf, 3))
    weight = pin.computeTotalMass(model) * 9.81
    violations = unbalanced = 0
    LWA, LOCAL = pin.LOCAL_WORLD_ALIGNED, pin.LOCAL
    q = robot.q_standing.copy()
    qd_prev, qdd_prev = np.zeros(nv - 6), np.zeros(nv - 6)
    segment: list[SwingSegment | None] = [None] * nf
    targets = np.zeros((nf, 3, 3))  # per foot: position, velocity, acceleration of the sole origin (W)
    for k in range(n):
        tk = float(t[k])
        h = tk - float(t[k - 1]) if k > 0 else 0.0
        q[:7] = base.q_base[k]
        if k > 0:
            q[7:] = Q[k - 1, 7:] + qd_prev * h + 0.5 * qdd_prev * h * h
        for i, plan in enumerate(plans):
            if contact[k, i]:
                segment[i] = None
                targets[i] = 0.0
                targets[i, 0] = stance_p[k, i]
                continue
            s = int(phase[k, i])
            seg = segment[i]
            if seg is None:  # lift-off: foothold s to foothold s + 1
                seg = segment[i] = SwingSegment.hermite(
                    float(plan.swing_start[s]), float(plan.swing_end[s]), (plan.footholds[s], np.zeros(3), np.zeros(3)),
                    (plan.footholds[s + 1], np.zeros(3), np.zeros(3)), plan.step_height,
                )  # fmt: skip
            targets[i] = np.array(seg.evaluate(tk))
        # ---- inverse kinematics of the sole poses (Newton on each 6-joint leg)
        for it in range(IK_MAX_ITERATIONS + 1):
            pin.framesForwardKinematics(model, data, q)
            errs = [
                pin.log6(data.oMf[fid].actInv(pin.SE3(R_sole[i], targets[i, 0]))).vector for i, fid in enumerate(fids)
            ]
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
                J = pin.getFrameJacobian(model, data, fid, LOCAL)[:, cols[i][1]]
                step = np.linalg.solve(J, errs[i])
                norm = float(np.linalg.norm(step))
                q[cols[i][0]] += step * min(1.0, 0.2 / norm) if norm > 0.2 else step
        pin.computeJointJacobians(model, data, q)
        J6 = [pin.getFrameJacobian(model, data, fid, LWA) for fid in fids]  # (6, nv) each
        # ---- velocities and accelerations from the sole twists (zero in stance)
        v = np.zeros(nv)
        v[:6] = base.v_base[k]
        for i in range(nf):
            twist = np.concatenate([targets[i, 1], np.zeros(3)])
            v[cols[i][1]] = np.linalg.solve(J6[i][:, cols[i][1]], twist - J6[i][:, :6] @ v[:6])
        a = np.zeros(nv)
        a[:6] = base.a_base[k]
        pin.forwardKinematics(model, data, q, v, a)
        for i, fid in enumerate(fids):
            drift = pin.getFrameClassicalAcceleration(model, data, fid, LWA).vector
            acc = np.concatenate([targets[i, 2], np.zeros(3)])
            a[cols[i][1]] = np.linalg.solve(J6[i][:, cols[i][1]], acc - drift)
        P_FOOT[k] = targets[:, 0]
        # ---- inverse dynamics and the stance soles' 6-D wrenches (force, moment about the sole origin; W axes)
        tau_full = pin.rnea(model, data, q, v, a)
        resid = tau_full.copy()
        stance = np.flatnonzero(contact[k])
        if stance.size:
            Ab = np.hstack([J6[foot][:, :6].T for foot in stance.tolist()])  # (6, 6 nc)
            f_ref = np.zeros(6 * stance.size)
            f_ref[2::6] = weight / stance.size
            sol = f_ref + np.linalg.lstsq(Ab, tau_full[:6] - Ab @ f_ref, rcond=None)[0]  # least-norm deviation
            for j, foot in enumerate(stance.tolist()):
                w = sol[6 * j : 6 * j + 6]
                resid -= J6[foot].T @ w
                F[k, foot] = w[:3]
                R_FW = data.oMf[fids[foot]].rotation.T
                W_FOOT[k, foot, :3], W_FOOT[k, foot, 3:] = R_FW @ w[:3], R_FW @ w[3:]
                violations += int(np.hypot(w[0], w[1]) > mu * w[2])
        Q[k], V[k], A[k] = q, v, a
        TAU[k], RES[k] = resid[6:], resid[:6]
        unbalanced += bool(
            np.linalg.norm(resid[:3]) > UNBALANCED_TOLERANCE * weight
            or np.linalg.norm(resid[3:6]) > UNBALANCED_TOLERANCE * weight
        )
        qd_prev, qdd_prev = v[6:], a[6:]
    return WholeBodyTrajectory(
        q=Q, v=V, a=A, tau=TAU, res=RES, f=F, w_foot=W_FOOT, violations=violations, unilateral=0,
        unbalanced=unbalanced, foot_p=P_FOOT, contact=contact, slipping=np.zeros((n, nf), dtype=bool),
    )  # fmt: skip


def simulate_biped(settings: SimulationSettings, *, robot: SimRobot | None = None) -> SimulatedRun:
    """Generate a biped run (deterministic for given settings and seed); ``settings.foot_model`` becomes ``flat``.

    Raises:
        SimulationError: a gait other than ``stand``/``walk``, a foot model other than flat, a slip (not
            modelled for soles), a sole target out of reach.
    """
    if settings.gait not in BIPED_GAITS:
        raise SimulationError(f"a biped generates the gaits {list(BIPED_GAITS)}, not {settings.gait!r}")
    if settings.foot_model not in (None, "flat"):
        raise SimulationError(f"a biped has flat feet (foot_model 'flat'), not {settings.foot_model!r}")
    if settings.slip is not None:
        raise SimulationError("slips are not simulated for flat feet")
    if settings.yaw_rate_rad_s:
        raise SimulationError("the biped walk is straight: yaw_rate_rad_s must be 0")
    if robot is None:
        robot = load_biped(settings.robot)
    settings = dataclasses.replace(settings, foot_model="flat", turn_amplitude_rad=0.0)
    seeds = np.random.SeedSequence(settings.seed).spawn(4)
    rng_jitter, rng_imu, rng_joints = (np.random.default_rng(s) for s in seeds[:3])
    imu_rel = make_stamps(settings.imu_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    joint_rel = make_stamps(settings.joint_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    grid_rel = np.union1d(imu_rel, joint_rel)
    imu_index = np.searchsorted(grid_rel, imu_rel).astype(np.int64)
    joint_index = np.searchsorted(grid_rel, joint_rel).astype(np.int64)
    t = grid_rel / 1e9
    period = settings.gait_period_s or robot.gait.walk_period_s
    duty = settings.duty_factor or robot.gait.walk_duty
    step_height = settings.step_height_m if settings.step_height_m is not None else robot.gait.step_height_m
    motion = _base_motion(settings, robot, period, float(robot.q_standing[2]))
    base = evaluate_base(motion, t)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q_standing)
    r_feet = np.array([data.oMf[robot.model.getFrameId(f)].translation[:2] for f in robot.feet])
    plans = plan_feet(
        motion,
        r_feet,
        phase_offsets=np.array([0.0, 0.5]) if settings.gait == "walk" else None,
        period=period,
        duty=duty,
        step_height=step_height,
        t_gait_start=settings.settle_s,
        t_end=settings.duration_s,
    )
    wb = _whole_body_flat(robot, t, base, plans, settings.friction_coefficient)
    rho = np.zeros(len(robot.feet))
    return sensor_run(
        settings, robot, wb, grid_rel, imu_rel, imu_index, joint_index, rng_imu, rng_joints, rho,
        robot.description_xml,
    )  # fmt: skip
