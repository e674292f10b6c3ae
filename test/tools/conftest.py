"""Shared fixtures of the tools tests: one small simulated Go1 trot per session (seeded, deterministic)."""

from __future__ import annotations

from pathlib import Path

import pytest

SIM_DURATION_S = 4.0


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory):
    """``(run_dir, SimulatedRun)``: a 4 s Go1 trot with SDF IMU noise, written as the simulate command does."""
    from robot_state_estimator.simulation import generator
    from robot_state_estimator.simulation.bag import write_run_bag
    from robot_state_estimator.simulation.settings import SimulationSettings

    run = generator.simulate(
        SimulationSettings(robot="go1", gait="trot", duration_s=SIM_DURATION_S, seed=7, noise=True)
    )
    run_dir = Path(tmp_path_factory.mktemp("sim")) / "go1_trot"
    write_run_bag(run, run_dir)
    return run_dir, run
