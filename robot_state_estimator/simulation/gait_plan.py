"""Step 1 of the generators: from the settings to the closed-form plan (base motion, gait schedule, footholds,
slips) of :mod:`.trajectory`.

The base follows :class:`~.trajectory.BaseMotion` (forward speed, turns, bobbing, roll and pitch, all ramped in
after ``settle_s``); the feet step with the gait's phase offsets (:data:`PHASE_OFFSETS`: a trot moves diagonal
pairs together, a walk one foot at a time in the order hind-left, front-left, hind-right, front-right: a
lateral-sequence walk), footholds under the base at mid-stance
(Raibert-style). A slip (``settings.slip``, ``settings.stance_slip_m``) moves the contact point inside one stance
along a quintic smoothstep (:class:`~.trajectory.FootSlip`). Shared by the quadruped (:mod:`.generator`) and biped
(:mod:`.biped`) generators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.robots import SimRobot
from robot_state_estimator.simulation.settings import SimulationSettings
from robot_state_estimator.simulation.trajectory import (
    BaseMotion,
    BaseState,
    FootPlan,
    FootSlip,
    evaluate_base,
    plan_feet,
)

FloatArray = NDArray[np.float64]

#: Gait phase offsets (cycles) per foot order front-left, front-right, hind-left, hind-right.
PHASE_OFFSETS = {
    "trot": np.array([0.0, 0.5, 0.5, 0.0]),
    "walk": np.array([0.25, 0.75, 0.0, 0.5]),  # hind-left, front-left, hind-right, front-right
}


def base_motion(settings: SimulationSettings, robot: SimRobot, period: float, z0: float) -> BaseMotion:
    """The base motion of ``settings.gait`` with gait period ``period`` (s), the base at height ``z0`` (m) while
    standing: still for ``stand``, rising from a crouch for ``stand_up``, moving for ``trot`` and ``walk`` (turn
    oscillation in the walk only)."""
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


def gait_cycle(settings: SimulationSettings, robot: SimRobot, *, walk: bool) -> tuple[float, float]:
    """Gait period (s) and duty factor: the settings', else the robot's walk (``walk``) or trot defaults."""
    if walk:
        return settings.gait_period_s or robot.gait.walk_period_s, settings.duty_factor or robot.gait.walk_duty
    return settings.gait_period_s or robot.gait.trot_period_s, settings.duty_factor or robot.gait.trot_duty


@dataclass(frozen=True)
class GaitPlan:
    """The closed-form plan of a run.

    Attributes:
        motion: the base motion; base: it sampled at the run's ``n`` grid times.
        plans: per foot, its swings, footholds and slips.
    """

    motion: BaseMotion
    base: BaseState
    plans: list[FootPlan]


def plan_gait(
    settings: SimulationSettings,
    robot: SimRobot,
    t: FloatArray,
    *,
    period: float,
    duty: float,
    phase_offsets: FloatArray | None,
    z0: float,
    stance_heights: FloatArray | None = None,
) -> GaitPlan:
    """Base motion (sampled at ``t`` (n,) s) and foot plans (no slips yet) of ``settings.gait``.

    Args:
        settings: the run's settings (step height: the robot's default when None).
        robot: its standing posture gives the nominal foot positions under the base.
        t: (n,) s, the grid times.
        period, duty: gait period (s) and duty factor.
        phase_offsets: (nf,) cycles, per foot (None: all feet stay in stance).
        z0: m, the base height while standing.
        stance_heights: (nf,) m, each foot origin's height above the ground in stance (None: 0).
    """
    step_height = settings.step_height_m if settings.step_height_m is not None else robot.gait.step_height_m
    motion = base_motion(settings, robot, period, z0)
    base = evaluate_base(motion, t)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q_standing)
    r_feet = np.array([data.oMf[robot.model.getFrameId(f)].translation[:2] for f in robot.feet])
    plans = plan_feet(
        motion,
        r_feet,
        phase_offsets=phase_offsets,
        period=period,
        duty=duty,
        step_height=step_height,
        t_gait_start=settings.settle_s,
        t_end=settings.duration_s,
        stance_heights=stance_heights,
    )
    return GaitPlan(motion, base, plans)


def add_random_slips(settings: SimulationSettings, plans: list[FootPlan], rng: np.random.Generator) -> None:
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


def add_slip(settings: SimulationSettings, robot: SimRobot, plans: list[FootPlan]) -> None:
    """``settings.slip`` (not None) into the stance of its foot that contains its start.

    Raises:
        SimulationError: an unknown foot, a start inside a swing, or no time left before the next lift-off.
    """
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
