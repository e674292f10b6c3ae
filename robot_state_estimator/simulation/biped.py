"""A biped walk with flat feet and exact ground truth (``simulate --robot talos --gait walk``).

The quadruped generator (:mod:`.generator`) places foot *points*; a biped stands on flat soles, which in stance
hold their position **and orientation** on the ground (the contact the 6-D stance update of
:mod:`robot_state_estimator.estimation.flat_feet` models). Pipeline, one sample after the other:

1. base trajectory, gait schedule and footholds in closed form (:mod:`.gait_plan`, as for the quadrupeds): a
   straight walk at ``speed_m_s`` with body bobbing, roll and pitch; the two soles alternate with phase offsets
   0 and 1/2 and duty factor ``duty`` (> 1/2: double-support phases); swings are quintic
   :class:`~.trajectory.SwingSegment` from foothold to foothold with a vertical bump;
2. each sole's target pose: the foothold (stance) or the swing point, always at the sole's orientation in the
   standing posture (flat, heading 0: a straight walk does not turn the feet);
3. the 6 joints of each leg by Newton inverse kinematics on the sole's full pose (``log6`` of the pose error,
   the LOCAL frame Jacobian), to ``|error| < 1e-12``; the other joints (torso, arms, head) keep the standing
   posture (:func:`~.inverse_kinematics.solve_sole_poses`);
4. joint velocities and accelerations from the sole twists through the 6 x 6 leg Jacobians: ``J_leg qdot =
   V_F - J_base v_base`` (``LOCAL_WORLD_ALIGNED``), ``J_leg qddot = A_F - drift`` with the classical
   accelerations (zero for a sole in stance, the swing's linear acceleration otherwise)
   (:func:`~.inverse_kinematics.sole_joint_rates`);
5. ``tau_full = RNEA(q, v, a)``; each stance sole receives a 6-D wrench (force and moment about its origin, world
   axes) from the unactuated rows ``A f = w``: exact in single support (``A`` is 6 x 6), the least-norm
   deviation from an equal share of the weight in double support. Every sample is balanced to rounding; the
   centre of pressure is not constrained to the sole (the base path does not sway over the stance foot) and
   friction is only checked (:func:`~.contact_forces.sole_wrenches`);
6. ``tau = tau_full[6:] - J_joints^T f``; 7. sensors (:func:`.sensor_sampling.sensor_run`).

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
from numpy.typing import NDArray

from robot_state_estimator.common.robots import example_robot_data_share
from robot_state_estimator.description import load_description
from robot_state_estimator.simulation.contact_forces import sole_wrenches
from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.foot_targets import FootSchedule
from robot_state_estimator.simulation.gait_plan import gait_cycle, plan_gait
from robot_state_estimator.simulation.inverse_kinematics import Legs, sole_joint_rates, solve_sole_poses
from robot_state_estimator.simulation.robots import BIPEDS, SimRobot
from robot_state_estimator.simulation.run import SimulatedRun, WholeBodyTrajectory
from robot_state_estimator.simulation.sensor_sampling import sensor_run
from robot_state_estimator.simulation.settings import SimulationSettings
from robot_state_estimator.simulation.stamps import time_grid
from robot_state_estimator.simulation.trajectory import BaseState, FootPlan, SwingSegment
from robot_state_estimator.simulation.whole_body import TrajectoryRecorder

FloatArray = NDArray[np.float64]

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


def _sole_targets(
    k: int, t: FloatArray, plans: list[FootPlan], schedule: FootSchedule, segment: list[SwingSegment | None]
) -> FloatArray:
    """(nf, 3, 3): per sole the position (m), velocity (m/s) and acceleration (m/s^2) of its origin (W) at sample
    ``k``: the foothold in stance, else the swing ``segment[i]`` from foothold to foothold (planned at lift-off,
    forgotten at touch-down) evaluated at ``t[k]``."""
    targets = np.zeros((len(plans), 3, 3))
    tk = float(t[k])
    for i, plan in enumerate(plans):
        if schedule.contact[k, i]:
            segment[i] = None
            targets[i, 0] = schedule.stance_p[k, i]
            continue
        s = int(schedule.phase_index[k, i])
        seg = segment[i]
        if seg is None:  # lift-off: foothold s to foothold s + 1
            seg = segment[i] = SwingSegment.hermite(
                float(plan.swing_start[s]), float(plan.swing_end[s]), (plan.footholds[s], np.zeros(3), np.zeros(3)),
                (plan.footholds[s + 1], np.zeros(3), np.zeros(3)), plan.step_height,
            )  # fmt: skip
        targets[i] = np.array(seg.evaluate(tk))
    return targets


def _whole_body_flat(
    robot: SimRobot, t: FloatArray, base: BaseState, plans: list[FootPlan], mu: float
) -> WholeBodyTrajectory:
    """Joint trajectory, torques and sole wrenches, one sample after the other (module docstring, steps 2-6)."""
    model = robot.model
    data = model.createData()
    legs = Legs(model, robot.feet, joints=6, what="sole")
    pin.framesForwardKinematics(model, data, robot.q_standing)
    R_sole = [data.oMf[fid].rotation.copy() for fid in legs.frame_ids]  # flat, heading 0: held for the whole walk
    schedule = FootSchedule.evaluate(plans, t)
    out = TrajectoryRecorder(model, t.size, len(plans))
    q = robot.q_standing.copy()
    segment: list[SwingSegment | None] = [None] * len(plans)
    for k in range(t.size):
        tk = float(t[k])
        h = tk - float(t[k - 1]) if k > 0 else 0.0
        q[:7] = base.q_base[k]
        if k > 0:
            q[7:] = out.predicted_joints(k, h)
        targets = _sole_targets(k, t, plans, schedule, segment)  # per sole: position, velocity, acceleration (W)
        J6 = solve_sole_poses(model, data, legs, q, R_sole, targets[:, 0], tk)
        v, a = sole_joint_rates(model, data, legs, q, J6, (base.v_base[k], base.a_base[k]), targets)
        # ---- inverse dynamics and the stance soles' 6-D wrenches (force, moment about the sole origin; W axes)
        tau_full = pin.rnea(model, data, q, v, a)
        stance = np.flatnonzero(schedule.contact[k])
        wrenches = sole_wrenches(data, legs.frame_ids, J6, stance, tau_full, out.weight, mu)
        out.store(k, (q, v, a), targets[:, 0], wrenches)
    return out.trajectory(schedule.contact, np.zeros((t.size, len(plans)), dtype=bool))


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
    grid = time_grid(settings, rng_jitter)
    period, duty = gait_cycle(settings, robot, walk=True)
    plan = plan_gait(
        settings,
        robot,
        grid.t,
        period=period,
        duty=duty,
        phase_offsets=np.array([0.0, 0.5]) if settings.gait == "walk" else None,
        z0=float(robot.q_standing[2]),
    )
    wb = _whole_body_flat(robot, grid.t, plan.base, plan.plans, settings.friction_coefficient)
    rho = np.zeros(len(robot.feet))
    return sensor_run(settings, robot, wb, grid, (rng_imu, rng_joints), rho, robot.description_xml)
