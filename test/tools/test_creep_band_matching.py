"""The Monte Carlo's creep density for the simulated slips, white-equivalent over the filter's band
(``tools.consistency.band_matched_creep_density``, issue 16 item 3).

The function works in the frequency domain (the slip pulse's spectrum through the steady-state filter's transfer
function); the test checks it in the time domain: a seeded train of simulated slips (the simulator's profile,
written here by hand: a quintic smoothstep over the middle half of each 0.3 s stance, N(0, 2 mm) per stance) from two
feet, averaged as the filter's stacked leg update averages them, through the first-order filter of the corner the
Riccati equation gives, has the variance of white noise of the returned density through the same filter.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import signal

from robot_state_estimator.tools.consistency import band_matched_creep_density, creep_density_of_slips

SIGMA_D, STANCE_S, SIGMA_A = 0.002, 0.3, 0.02  # m, s, m/s^2/sqrt(Hz)


def _slip_train(rng: np.random.Generator, n_stances: int, dt: float) -> np.ndarray:
    """(n_stances * samples per stance,) m/s: one foot's contact-point velocity, stances back to back, each moving
    by d ~ N(0, SIGMA_D^2) along the quintic 10 u^3 - 15 u^4 + 6 u^5 over the stance's middle half."""
    t = (np.arange(round(STANCE_S / dt)) + 0.5) * dt
    slip_s = 0.5 * STANCE_S
    u = np.clip((t - 0.25 * STANCE_S) / slip_s, 0.0, 1.0)
    profile = 30.0 * u**2 * (1.0 - u) ** 2 / slip_s  # d/dt of the quintic, unit area
    d = rng.normal(0.0, SIGMA_D, n_stances)
    return (d[:, None] * profile[None, :]).ravel()


def _first_order(x: np.ndarray, w_c: float, dt: float) -> np.ndarray:
    """y_k = y_(k-1) + a (x_k - y_(k-1)), a = 1 - exp(-w_c dt): the discrete w_c / (s + w_c)."""
    a = 1.0 - math.exp(-w_c * dt)
    return signal.lfilter([a], [1.0, a - 1.0], x)


def _white_variance_through(density: float, n_feet: int, w_c: float, dt: float) -> float:
    """(m/s)^2: white noise of density ``density`` per foot, averaged over ``n_feet`` (per-sample variance
    density^2 / (n dt)), through :func:`_first_order`: sigma^2 a / (2 - a)."""
    a = 1.0 - math.exp(-w_c * dt)
    return density**2 / (n_feet * dt) * a / (2.0 - a)


def test_band_matched_density_gives_the_slips_variance_through_the_filter() -> None:
    """20000 stances (6000 s at 1 kHz) per foot, two feet: the filtered slips' variance equals the white equivalent's
    to the sampling error (about 1 %; 5 % allowed), while the zero-frequency density over-counts it by more than
    20 % (the filter's corner, about 1.4 Hz, lies inside the slip's band)."""
    dt, n_feet = 1e-3, 2
    q = band_matched_creep_density(SIGMA_D, STANCE_S, accel_noise_density=SIGMA_A, feet_in_stance=n_feet)
    q0 = creep_density_of_slips(SIGMA_D, STANCE_S)
    w_c = SIGMA_A * math.sqrt(n_feet) / q  # Riccati: P = sigma_a q / sqrt(n), gain P n / q^2
    assert 1.0 < w_c / (2.0 * math.pi) < 2.0
    rng = np.random.default_rng(16)
    x = np.mean([_slip_train(rng, 20000, dt) for _ in range(n_feet)], axis=0)
    y = _first_order(x, w_c, dt)[round(10.0 / dt) :]  # the filter's start-up (10 s = 90 time constants) dropped
    var_slips = float(np.var(y))
    assert var_slips == pytest.approx(_white_variance_through(q, n_feet, w_c, dt), rel=0.05)
    assert _white_variance_through(q0, n_feet, w_c, dt) > 1.2 * var_slips


def test_limits_and_bad_input() -> None:
    """A filter far slower than a stance sees the stance mean (q0); no slip, no creep; the density falls as the
    filter gets faster (a larger accelerometer density or more feet: a wider band); bad arguments raise."""
    q0 = creep_density_of_slips(SIGMA_D, STANCE_S)
    slow = band_matched_creep_density(SIGMA_D, STANCE_S, accel_noise_density=1e-6, feet_in_stance=2.0)
    assert slow == pytest.approx(q0, rel=1e-6)
    assert band_matched_creep_density(0.0, STANCE_S, accel_noise_density=SIGMA_A, feet_in_stance=2.0) == 0.0
    qs = [
        band_matched_creep_density(SIGMA_D, STANCE_S, accel_noise_density=s, feet_in_stance=n)
        for s, n in ((0.01, 2.0), (0.02, 2.0), (0.02, 4.0), (0.05, 4.0))
    ]
    assert all(a > b for a, b in itertools.pairwise(qs)) and qs[0] < q0
    for slip in (-SIGMA_D, float("nan")):
        with pytest.raises(ValueError, match="stance_slip_m must be >= 0"):
            band_matched_creep_density(slip, STANCE_S, accel_noise_density=SIGMA_A, feet_in_stance=2.0)
    for kwargs in (
        {"accel_noise_density": 0.0, "feet_in_stance": 2.0},
        {"accel_noise_density": 0.02, "feet_in_stance": 0.0},
    ):
        with pytest.raises(ValueError, match="feet_in_stance > 0"):
            band_matched_creep_density(SIGMA_D, STANCE_S, **kwargs)
