"""JointVelocityEstimator: exact on ramps, documented lag on a sine, restarts on gaps."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.estimation import JointVelocityEstimator

MS = 1_000_000


def test_ramp_is_exact_and_first_sample_invalid() -> None:
    est = JointVelocityEstimator(2, cutoff_hz=50.0)
    out = est.update(0, np.zeros(2))
    assert not est.valid and np.all(out == 0)
    for k in range(1, 200):
        out = est.update(k * 2 * MS, np.array([0.5, -1.0]) * k * 2e-3)
    assert est.valid
    np.testing.assert_allclose(out, [0.5, -1.0], atol=1e-9)
    before = out.copy()
    np.testing.assert_array_equal(est.update(398 * MS, np.ones(2)), before)  # non-increasing stamp ignored


@pytest.mark.parametrize("cutoff_hz", [0.0, 30.0, 100.0])
def test_lag_matches_the_documented_value(cutoff_hz: float) -> None:
    """On a slow sine the estimate is the true derivative delayed by dt/2 + 1/(2 pi fc)."""
    rate, f = 400.0, 1.0
    est = JointVelocityEstimator(1, cutoff_hz=cutoff_hz)
    t = np.arange(0, 3.0, 1 / rate)
    out = np.array([est.update(round(tk * 1e9), np.array([np.sin(2 * np.pi * f * tk)]))[0] for tk in t])
    lag = est.lag_s(1 / rate)
    mask = t > 1.0
    expected = 2 * np.pi * f * np.cos(2 * np.pi * f * (t[mask] - lag))
    assert np.max(np.abs(out[mask] - expected)) < 0.02 * 2 * np.pi * f


def test_gap_restarts() -> None:
    est = JointVelocityEstimator(1, max_dt_s=0.1)
    est.update(0, np.zeros(1))
    est.update(MS, np.ones(1) * 1e-3)
    assert est.valid
    est.update(500 * MS, np.ones(1))
    assert not est.valid
