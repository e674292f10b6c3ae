"""Generate a legged-robot run with exact ground truth (see :func:`simulate`): kinematics always consistent,
dynamics exact whenever the stance feet can balance the base pushing on the ground (step 5), the rest kept as
``base_residual_wrench``.

Pipeline, one sample after the other at the union of the IMU and joint stamps (:mod:`.stamps`):

1. base trajectory, gait schedule, footholds and slips in closed form (:mod:`.gait_plan`, :mod:`.trajectory`);
2. foot origin targets (:mod:`.foot_targets`): in stance the foothold plus the planned slip plus, for a rolling
   sphere, the rolling displacement of its centre (:mod:`.rolling`); in swing a quintic
   :class:`~.trajectory.SwingSegment` from the state the foot had at lift-off to the state it must have at
   touch-down (position, velocity, acceleration);
3. leg joints by Newton inverse kinematics on the foot origins (warm-started from the previous sample
   extrapolated with its velocity and acceleration), to ``|error| < 1e-12 m`` (:mod:`.inverse_kinematics`);
4. joint velocities and accelerations through the leg Jacobians, not finite differences: in swing
   ``J_leg qdot = v_foot_in_world - J_base v_base`` (foot origin, ``LOCAL_WORLD_ALIGNED``); in stance the same rows of
   the contact-point Jacobian ``J_c = J_lin - [d]x J_ang`` with the contact point's velocity (zero, or the slip's);
   accelerations from the classical accelerations, ``J_c a + (c_lin - [d]x c_ang) = a_contact`` (``c`` the
   drift: the classical acceleration with zero joint accelerations) (:mod:`.inverse_kinematics`);
5. ``tau_full = RNEA(q, v, a) = M a + h``; stance forces ``f`` (world axes) at the contact points from the
   unactuated rows ``A f = w`` (``A = J_c,base^T``, ``w = tau_full[:6]``): regularised least squares closest to
   an equal share of the weight, with the bounds ``f_z >= 0`` where that solution would pull a foot
   (:mod:`.contact_forces`). Exact to rounding whenever pushing forces can balance the base (three or four feet
   and the zero-moment point inside their support polygon); friction cones are only checked;
6. joint torques ``tau = tau_full[6:] - J_c,joints^T f``; what the contacts cannot balance is kept in
   ``base_residual_wrench`` (``unbalanced_samples`` counts the samples where it is above rounding);
7. IMU readings from :class:`~robot_state_estimator.sensors.ImuModel` (ideal, then gz-sensors noise), joint
   readings with optional encoder and torque noise (:mod:`.sensor_sampling`).

Steps 2-6 run in :func:`~.whole_body.whole_body`. Feet are rolling spheres (``foot_model="sphere"``, the radius
``rho`` from the description, the sphere centred at the foot frame origin: :mod:`.rolling`) or points (``rho = 0``:
the foot origin rests in stance, the swing is the quintic smoothstep between footholds). Bipeds, on flat soles,
have their own steps 2-6 (:mod:`.biped`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.gait_plan import PHASE_OFFSETS, add_random_slips, add_slip, gait_cycle, plan_gait
from robot_state_estimator.simulation.robots import BIPEDS, SimRobot, load_sim_robot, point_feet_description
from robot_state_estimator.simulation.rolling import touchdown_bases
from robot_state_estimator.simulation.run import SimulatedRun
from robot_state_estimator.simulation.sensor_sampling import sensor_run
from robot_state_estimator.simulation.settings import SimulationSettings
from robot_state_estimator.simulation.stamps import time_grid
from robot_state_estimator.simulation.whole_body import whole_body

FloatArray = NDArray[np.float64]


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
    grid = time_grid(settings, rng_jitter)
    rho, foot_model = _foot_radii(settings, robot)
    settings = dataclasses.replace(settings, foot_model=foot_model)

    # ---- base and feet (the base is raised by the foot radius: the lowest points of the feet on z = 0)
    gait = settings.gait
    period, duty = gait_cycle(settings, robot, walk=gait == "walk")
    q_start = robot.q_standing.copy()
    q_start[2] += float(rho.mean())
    plan = plan_gait(
        settings,
        robot,
        grid.t,
        period=period,
        duty=duty,
        phase_offsets=PHASE_OFFSETS.get(gait),
        z0=float(q_start[2]),
        stance_heights=rho,
    )
    if settings.slip is not None:
        add_slip(settings, robot, plan.plans)
    if settings.stance_slip_m > 0.0:
        add_random_slips(settings, plan.plans, np.random.default_rng(seeds_extra[0]))
    bases_td = touchdown_bases(plan.motion, plan.plans)
    try:
        wb = whole_body(robot, q_start, grid.t, plan.base, plan.plans, bases_td, rho, settings.friction_coefficient)
    except np.linalg.LinAlgError as exc:  # a leg straight or folded flat: its foot Jacobian is singular
        raise SimulationError(
            f"a leg of {robot.name} became singular (straight or folded) in the {gait} ({exc}): lower the speed or "
            "the step height, or stand with bent knees (simulate --srdf with a 'standing' state)"
        ) from exc
    xml = robot.description_xml if foot_model == "sphere" else point_feet_description(robot.description_xml, robot.feet)
    return sensor_run(settings, robot, wb, grid, (rng_imu, rng_joints), rho, xml)


def _foot_radii(settings: SimulationSettings, robot: SimRobot) -> tuple[FloatArray, str]:
    """The foot radii (nf,) m as simulated and the resolved foot model (``settings.foot_model``, else ``"sphere"``
    when the description has foot spheres, else ``"point"``).

    Raises:
        SimulationError: ``"sphere"`` for a robot without foot spheres.
    """
    nf = len(robot.feet)
    radii = np.array(robot.foot_radii if robot.foot_radii else [0.0] * nf, dtype=float)
    foot_model = settings.foot_model or ("sphere" if (radii > 0).any() else "point")
    if foot_model == "sphere" and not (radii > 0).any():
        raise SimulationError(
            f"foot_model 'sphere': the description of {robot.name} has no collision sphere centred at a foot frame"
        )
    return (radii if foot_model == "sphere" else np.zeros(nf)), foot_model
