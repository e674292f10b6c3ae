"""The time-average band of Bar-Shalom's Monte Carlo test (``evaluation.consistency``) on processes whose NEES is
chi-square by construction (no filter involved): the band must hold about 95 % of the time, also when each run's
error is slow (a bias estimate that stays off for seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.evaluation.consistency import block_consistency, effective_samples

N_RUNS, K_TIMES, DOF, REPS = 10, 325, 2, 300  # the bench's 10 runs, 6.5 s at 50 Hz


def consistent_nees(rng: np.random.Generator, tau: float) -> np.ndarray:
    """(REPS, N, K) NEES of stationary unit-variance Gaussian AR(1) errors with correlation time ``tau`` samples:
    each time's ``e^T e`` is chi2(DOF) exactly, as a consistent filter's NEES is."""
    a = np.exp(-1.0 / tau)
    e = np.empty((REPS, N_RUNS, K_TIMES, DOF))
    e[:, :, 0] = rng.normal(size=(REPS, N_RUNS, DOF))
    w = rng.normal(size=e.shape) * np.sqrt(1.0 - a * a)
    for k in range(1, K_TIMES):
        e[:, :, k] = a * e[:, :, k - 1] + w[:, :, k]
    return np.sum(e * e, axis=-1)


@pytest.mark.parametrize("tau, low", [(5.0, 0.91), (150.0, 0.90)])
def test_time_average_band_holds_95_percent(tau: float, low: float) -> None:
    """tau 5 samples (0.1 s: the velocity's scale) and 150 (3 s: the gyro bias's). With the autocorrelation of the
    runs' average about its own mean the second held 79 % (docs/uncertainty.md); binomial sd of 300 draws 1.3 %."""
    nees = consistent_nees(np.random.default_rng(7), tau)
    held = np.mean([block_consistency(x, DOF).consistent for x in nees])
    assert low <= held <= 0.99, held


def test_effective_samples_of_runs() -> None:
    """Each run constant at its own level: one independent sample per run (the pooled autocorrelation at lag j is
    (K - j) / K, so 1 + 2 sum = K). White runs: about K. One series: the same as a (1, K) array."""
    rng = np.random.default_rng(3)
    levels = rng.normal(size=(8, 1)) * np.ones((8, 200))
    assert effective_samples(levels) == pytest.approx(1.0, abs=1e-9)
    white = rng.normal(size=(8, 200))
    assert 120 < effective_samples(white) <= 200
    assert effective_samples(white[0]) == effective_samples(white[:1])
