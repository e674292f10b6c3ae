"""Legged-robot runs with exact ground truth (dynamics exact with 3-4 feet in stance), and their bags.

Public names: :func:`simulate`, :class:`SimulationSettings`, :class:`SlipEvent`, :class:`SimulatedRun`,
:func:`load_sim_robot`, :class:`SimulationError` (bag output: :mod:`.bag`, CLI: :mod:`.cli`).

The modules follow the generator's pipeline (:mod:`.generator`): :mod:`.stamps` (time grid), :mod:`.gait_plan` and
:mod:`.trajectory` (base motion, gait, footholds, slips), :mod:`.foot_targets` and :mod:`.rolling` (stance, swing,
rolling feet), :mod:`.inverse_kinematics`, :mod:`.contact_forces`, :mod:`.sensor_sampling`; :mod:`.whole_body` runs
the per-sample steps of the quadrupeds, :mod:`.biped` those of the flat-footed bipeds; :mod:`.robots`,
:mod:`.settings` and :mod:`.run` hold the inputs and the result.
"""

from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.generator import simulate
from robot_state_estimator.simulation.robots import SimRobot, load_sim_robot
from robot_state_estimator.simulation.run import SimulatedRun
from robot_state_estimator.simulation.settings import SimulationSettings, SlipEvent

__all__ = [
    "SimRobot",
    "SimulatedRun",
    "SimulationError",
    "SimulationSettings",
    "SlipEvent",
    "load_sim_robot",
    "simulate",
]
