"""Consistency by Monte Carlo through the simulator (issue 16.3), never through the filter's own model.

Four seeded 4 s Go1 trots with the errors of a real robot (``REAL_ROBOT_ERRORS``: encoder quantisation, random
2 mm slips per stance, IMU vibration up to the legged-robot noise floor, an accelerometer bias walk, a gyroscope
turn-on offset, stamp jitter; SDF IMU and encoder noise), the estimator with its built-in defaults except what
describes the simulated robot: the accelerometer turn-on bias prior, set to the spread the description states and the
simulator draws (the default 0.1 m/s^2 is a real-robot prior, 5x wider), the gyroscope's, set to the simulated
offset's 1 deg/s, the simulated bias walk, and the simulated feet's contact noise (white
0.055 m/s, read off slip-free runs, and the creep density of the simulated slips, 2 mm per 0.3 s stance, on the
ground plane). Bar-Shalom's test (``tools/consistency.py``): the N-run average NEES at each time against
chi2(N dof) / N, and its time average against the band of the effective number of independent times. x, y and yaw
are unobservable: excluded from the band, their stddev must grow. The long version (more and longer runs) is
``make bench``'s ``consistency`` section.

The gyro bias x, y is banded since the simulator makes a gyroscope turn-on offset (1 deg/s per axis) and the filter
is told it as its prior: the initial errors are then drawn from the filter's initial covariance, as Bar-Shalom's test
assumes. Before, the description's 9.7e-6 rad/s spread was the only offset, 1000 times inside the moving
initialisation's 0.01 rad/s prior, and the block was conservative (1.09). Here 1.37 in 0.90-3.52; ``make bench``'s
10 x 8 s 1.36 in 1.35-2.77, at the band's low end. 40 runs of 8 s, measured once, narrow the bands enough to show the
gyro bias conservative (1.44 in 1.64-2.40) and velocity 6 % over-confident (3.17 in 2.92-3.09; docs/uncertainty.md):
this short test guards against larger departures.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("robot_state_estimator.simulation")
from robot_state_estimator.evaluation.consistency import block_consistency, summary_line
from robot_state_estimator.tools.consistency import go1_monte_carlo

N_RUNS, DURATION_S = 4, 4.0


@pytest.fixture(scope="module")
def mc():
    return go1_monte_carlo(N_RUNS, DURATION_S)


@pytest.mark.parametrize("block", ["velocity", "roll_pitch", "gyro_bias_xy"])
def test_observable_blocks_are_consistent(mc, block: str) -> None:
    b = mc["blocks"][block]
    print("\n" + summary_line(block, b))
    assert b.consistent, summary_line(block, b)
    assert b.fraction_inside >= 0.8, summary_line(block, b)


def test_covariances_are_recorded_per_time(mc) -> None:
    """Each evaluation time keeps the covariance of that time: the filter's P is a live view of its buffer, and
    recording the view (not a copy) gave every time the run's final P (the gyro bias NEES read 5.3 instead of 1.2)."""
    for run in mc["runs"]:
        for name in ("gyro_bias_xy", "velocity", "roll_pitch"):
            cov = run[name + "_cov"]
            assert not np.array_equal(cov[0], cov[-1]), name
            assert len({c.tobytes() for c in cov}) > len(cov) // 2, name


def test_unobservable_directions_grow(mc) -> None:
    u = mc["unobservable"]
    for axis, (first, last) in enumerate(zip(u["std_first"], u["std_last"])):
        assert last > 1.5 * first, ("x", "y", "yaw")[axis]


def test_band_arithmetic() -> None:
    """chi2(N dof) / N for N = 4, 3 DoF: the per-time 95 % band, 4.404 / 4 and 23.337 / 4."""
    b = block_consistency(np.full((4, 10), 3.0), 3)
    assert b.band == pytest.approx((1.1009, 5.8342), abs=1e-3)
    assert dataclasses.asdict(b)["fraction_inside"] == 1.0
