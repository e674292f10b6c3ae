"""Legged-robot runs with exact ground truth (dynamics exact with 3-4 feet in stance), and their bags.

Public names: :func:`simulate`, :class:`SimulationSettings`, :class:`SlipEvent`, :class:`SimulatedRun`,
:func:`load_sim_robot`, :class:`SimulationError` (bag output: :mod:`.bag`, CLI: :mod:`.cli`).
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
