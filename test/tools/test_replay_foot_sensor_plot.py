"""Replay's foot-sensor figure: the readings of ``/foot_forces`` that reached the estimator, per foot, with the
contact thresholds, made from a simulated trot whose foot sensors read the simulator's true normal forces (its
dynamics, not the estimator's model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.estimation import EstimatorSettings
from robot_state_estimator.estimation.settings import ContactSettings
from robot_state_estimator.evaluation import plots
from robot_state_estimator.io import bags
from robot_state_estimator.tools.replay import ReplayOptions, replay

SPAN_S = 2.0
ON_N, OFF_N = 40.0, 20.0


def _bag_with_foot_sensors(run_dir: Path, run: Any, out: Path) -> tuple[np.ndarray, np.ndarray]:
    """The first ``SPAN_S`` of the run's IMU and joint states, plus ``/foot_forces`` at each joint stamp reading
    the true normal force (N) of each foot, the feet named in reverse order; returns (stamps_ns, forces (k, F))."""
    types = bags.default_types()
    start = int(run.stamps_ns[0])
    msgs = [
        m
        for m in bags.read_messages(run_dir / "bag", ["/imu/data", "/joint_states"])
        if m.log_time_ns - start <= SPAN_S * NS_PER_S
    ]
    k = run.joint_index[run.stamps_ns[run.joint_index] - start <= SPAN_S * NS_PER_S]
    stamps = run.stamps_ns[k]
    forces = run.contact_forces_world[k, :, 2]
    feet = list(run.feet)[::-1]
    with bags.BagWriter(out) as bag:
        for m in msgs:
            bag.write(m.topic, m.msg, m.log_time_ns)
        for stamp, f in zip(stamps, forces):
            sec, nanosec = divmod(int(stamp), NS_PER_S)
            bag.write(
                "/foot_forces",
                types.JointState(
                    header=types.Header(stamp=types.Time(sec=sec, nanosec=nanosec), frame_id=""),
                    name=feet,
                    position=np.zeros(0),
                    velocity=np.zeros(0),
                    effort=np.ascontiguousarray(f[::-1], dtype=float),
                ),
                int(stamp),
            )
    return stamps, forces


def test_the_foot_sensor_figure_draws_each_feet_readings_and_the_thresholds(sim_run: Any, tmp_path: Path) -> None:
    run_dir, run = sim_run
    stamps, forces = _bag_with_foot_sensors(run_dir, run, tmp_path / "bag")
    settings = EstimatorSettings(
        contact=ContactSettings(source="foot_sensor", sensor_on_threshold=ON_N, sensor_off_threshold=OFF_N)
    )
    result = replay(
        tmp_path / "bag",
        description=str(run_dir / "robot_description.urdf"),
        settings=settings,
        options=ReplayOptions(progress=False),
    )
    sensors = result.foot_sensors
    assert sensors is not None
    # every reading reached the estimator, in the order of the first sample's feet (reversed here)
    assert sensors.feet == tuple(run.feet)[::-1]
    np.testing.assert_array_equal(sensors.t_s, (stamps // NS_PER_S) + (stamps % NS_PER_S) / NS_PER_S)
    np.testing.assert_array_equal(sensors.values, forces[:, ::-1])
    figs = plots.replay_figures(result, sensor_thresholds=(ON_N, OFF_N))
    fig = figs["foot_sensors"]
    lines = {line.get_gid(): line for ax in fig.axes for line in ax.get_lines()}
    for j, foot in enumerate(run.feet):
        np.testing.assert_array_equal(lines[f"{foot}:sensor"].get_ydata(), forces[:, j])
        assert list(lines[f"{foot}:on_threshold"].get_ydata()) == [ON_N, ON_N]
        assert list(lines[f"{foot}:off_threshold"].get_ydata()) == [OFF_N, OFF_N]


def test_without_foot_sensors_there_is_no_foot_sensor_figure(sim_run: Any) -> None:
    run_dir, _ = sim_run
    result = replay(
        run_dir / "bag",
        description=str(run_dir / "robot_description.urdf"),
        settings=EstimatorSettings(),
        options=ReplayOptions(progress=False),
    )
    assert result.foot_sensors is None
    assert "foot_sensors" not in plots.replay_figures(result)


@pytest.fixture(autouse=True)
def _close_figures() -> Any:
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
