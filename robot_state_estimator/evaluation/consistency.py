"""Filter consistency: the NEES of one run (:func:`nees`, :func:`state_nees`) and Bar-Shalom's Monte Carlo test
over runs (:func:`block_consistency`).

Bar-Shalom, Li and Kirubarajan, "Estimation with Applications to Tracking and Navigation" (2001), sec. 5.4.2: for a
consistent filter the N-run average at each time, ``eps_k = (1/N) sum_i NEES_ik``, has ``N eps_k ~ chi2(N dof)``,
so the 95 % band of ``eps_k`` is ``chi2.ppf([0.025, 0.975], N dof) / N``; about 95 % of the times should fall
inside it.

Time averages. The errors of one run at nearby times are strongly correlated (the filter's error is a slow
process), so the time average of ``eps_k`` over K times is not ``chi2(N K dof) / (N K)``: that band would be far too
narrow. We use the effective number of independent times per run ``K_eff = K / (1 + 2 sum_j rho_j)`` with
``rho_j`` the autocorrelation at lag j of the runs' NEES series, pooled over the runs about their grand mean, summed
up to its first non-positive value (the initial positive sequence, Geyer 1992), and give the time average the band
``chi2.ppf([0.025, 0.975], N K_eff dof) / (N K_eff)`` (the variance of a mean of correlated samples, e.g. Priestley
1981, sec. 5.3). Pooled about the grand mean, not taken from ``eps_k`` about its own mean: a run's slow error (a bias
estimate that stays off for seconds) is a part of ``eps_k`` that is constant over the run, which the average of the
runs keeps and its own mean removes; from ``eps_k`` the correlation was missed and the band too narrow (on a
consistent synthetic process with a 3 s correlation time, 10 runs of 6.5 s at 50 Hz, the band held 79 % of the time
instead of 95 %; pooled, 93 %; the coverage is tested in ``test_consistency_band.py``). Both tests are reported:
the fraction of times inside the per-time band and the time average against its band.

The Monte Carlo runs themselves (simulator -> estimator) are ``tools/consistency.py``'s: this module imports no
estimator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from robot_state_estimator.evaluation.trajectory import Trajectory

FloatArray = NDArray[np.float64]


def nees(errors: FloatArray, covariances: FloatArray) -> FloatArray:
    """Normalised estimation error squared ``e_k^T P_k^-1 e_k`` per sample (Bar-Shalom 2001, 5.4).

    Args:
        errors: (N, k) true minus estimated, in the covariance's coordinates.
        covariances: (N, k, k) symmetric positive definite.

    Returns:
        (N,) NEES; NaN where a covariance is not positive definite.
    """
    errors = np.asarray(errors, dtype=float)
    covariances = np.asarray(covariances, dtype=float)
    out = np.full(len(errors), np.nan)
    for n, (e, P) in enumerate(zip(errors, covariances)):
        try:
            L = np.linalg.cholesky(0.5 * (P + P.T))
        except np.linalg.LinAlgError:
            continue
        y = np.linalg.solve(L, e)
        out[n] = float(y @ y)
    return out


def nees_band(dof: int, n_runs: int = 1, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided acceptance band of the average NEES over ``n_runs`` Monte Carlo runs.

    ``n_runs * mean NEES`` is chi-square with ``n_runs * dof`` degrees of freedom for a consistent filter.

    Returns:
        ``(low, high)`` bounds of the average NEES.
    """
    alpha = 1.0 - confidence
    k = n_runs * dof
    return float(stats.chi2.ppf(alpha / 2, k) / n_runs), float(stats.chi2.ppf(1 - alpha / 2, k) / n_runs)


def time_average_band(nees_series: FloatArray, dof: int, confidence: float = 0.95) -> tuple[tuple[float, float], float]:
    """The band of the time average of one run's NEES series, and its effective number of independent samples.

    The NEES of one run at nearby times is strongly correlated, so the time average of K samples is not
    ``chi2(K dof) / K`` (far too narrow) nor a single sample's ``chi2(dof)`` (far too wide): with ``K_eff`` from the
    series' autocorrelation (:func:`effective_samples`) the band is
    ``chi2(K_eff dof) / K_eff``.

    Returns:
        ``((low, high), K_eff)``.
    """
    x = np.asarray(nees_series, dtype=float)
    x = x[np.isfinite(x)]
    k_eff = effective_samples(x) if x.size else 1.0
    return nees_band(dof, n_runs=1, confidence=confidence) if k_eff <= 1.0 else (
        float(stats.chi2.ppf((1 - confidence) / 2, k_eff * dof) / k_eff),
        float(stats.chi2.ppf(1 - (1 - confidence) / 2, k_eff * dof) / k_eff),
    ), k_eff


def state_nees(est: Trajectory, gt: Trajectory) -> dict[str, Any]:
    """NEES of the base velocity (base frame, 3 DoF), the attitude (3 DoF) and roll/pitch (2 DoF, the observable
    part: yaw is unobservable and its variance grows), averaged over the run.

    Velocity error ``v_gt - v_est`` against the twist covariance's linear block; attitude error
    ``Log(R_gt R_est^T)`` (small angles about the world axes, as the pose covariance defines them) against
    its rotation block. Only meaningful without a spatial alignment (the filter's own frame) and on the same clock,
    e.g. on simulated runs whose world matches the estimator's initial yaw. ``band95`` is the 95 % band of the
    *time average* (:func:`time_average_band`, ``k_eff`` its effective number of independent samples); a Monte
    Carlo over runs is :func:`block_consistency` (runs: ``tools/consistency.py``).

    Returns:
        ``{"velocity": {"mean", "dof", "band95", "k_eff"}, "attitude": {...}, "roll_pitch": {...}}`` for the parts
        available.
    """
    out: dict[str, Any] = {}

    def block(values: FloatArray, dof: int) -> dict[str, Any]:
        band, k_eff = time_average_band(values, dof)
        return {"mean": float(np.nanmean(values)), "dof": dof, "band95": band, "k_eff": k_eff}

    if est.twist_covariance is not None and est.v_base_in_base is not None and gt.v_base_in_base is not None:
        out["velocity"] = block(nees(gt.v_base_in_base - est.v_base_in_base, est.twist_covariance[:, :3, :3]), 3)
    if est.pose_covariance is not None:
        e = (gt.rotations * est.rotations.inv()).as_rotvec()
        out["attitude"] = block(nees(e, est.pose_covariance[:, 3:, 3:]), 3)
        out["roll_pitch"] = block(nees(e[:, :2], est.pose_covariance[:, 3:5, 3:5]), 2)
    return out


def nees_values(errors: FloatArray, covariances: FloatArray) -> FloatArray:
    """(..., ) ``e^T P^-1 e`` of errors (..., d) and covariances (..., d, d)."""
    e = np.asarray(errors, dtype=float)
    P = np.asarray(covariances, dtype=float)
    return np.asarray(np.einsum("...i,...i->...", e, np.linalg.solve(P, e[..., None])[..., 0]))


def effective_samples(series: FloatArray) -> float:
    """``K / (1 + 2 sum rho_j)``, the initial positive sequence of the autocorrelation (module docstring).

    Args:
        series: (K,) one series, or (N, K) N independent runs of the same process: the autocorrelation is then
            pooled over the runs about their grand mean (a run's offset from it counts as correlation).

    Returns:
        The effective number of independent samples per series, in [1, K].
    """
    x = np.atleast_2d(np.asarray(series, dtype=float))
    x = x - float(np.mean(x))
    N, K = x.shape
    var = float(np.sum(x * x)) / (N * K)
    if K < 4 or var <= 0.0:
        return float(K)
    acf = sum(np.correlate(row, row, mode="full")[K - 1 :] for row in x) / (var * N * K)
    s = 0.0
    for rho in acf[1:]:
        if rho <= 0.0:
            break
        s += float(rho)
    return float(max(1.0, K / (1.0 + 2.0 * s)))


@dataclass(frozen=True)
class BlockConsistency:
    """The Monte Carlo NEES of one block.

    Attributes:
        dof: degrees of freedom.
        n_runs: N.
        per_time: (K,) the N-run average NEES at each evaluation time.
        band: the 95 % band of ``per_time`` (chi2 with N dof degrees of freedom, over N).
        fraction_inside: share of the times inside ``band`` (0.95 expected).
        time_average: mean of ``per_time`` (dof expected).
        effective_times: K_eff of the time average (module docstring).
        time_average_band: the 95 % band of ``time_average`` (chi2 with N K_eff dof, over N K_eff).
    """

    dof: int
    n_runs: int
    per_time: FloatArray
    band: tuple[float, float]
    fraction_inside: float
    time_average: float
    effective_times: float
    time_average_band: tuple[float, float]

    @property
    def consistent(self) -> bool:
        """The time average inside its band."""
        return self.time_average_band[0] <= self.time_average <= self.time_average_band[1]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the per-time series)."""
        return {
            "dof": self.dof,
            "n_runs": self.n_runs,
            "band95_per_time": list(self.band),
            "fraction_inside": self.fraction_inside,
            "time_average": self.time_average,
            "effective_times": self.effective_times,
            "band95_time_average": list(self.time_average_band),
            "consistent": self.consistent,
        }


def block_consistency(nees: FloatArray, dof: int) -> BlockConsistency:
    """Bar-Shalom's Monte Carlo test of an (N, K) array of NEES values of one block (module docstring)."""
    nees = np.asarray(nees, dtype=float)
    n = nees.shape[0]
    per_time = nees.mean(axis=0)
    lo, hi = (float(x) for x in stats.chi2.ppf([0.025, 0.975], n * dof) / n)
    k_eff = effective_samples(nees)
    m = n * k_eff
    lo_t, hi_t = (float(x) for x in stats.chi2.ppf([0.025, 0.975], m * dof) / m)
    return BlockConsistency(
        dof=dof,
        n_runs=n,
        per_time=per_time,
        band=(lo, hi),
        fraction_inside=float(np.mean((per_time >= lo) & (per_time <= hi))),
        time_average=float(per_time.mean()),
        effective_times=k_eff,
        time_average_band=(lo_t, hi_t),
    )


def summary_line(name: str, b: BlockConsistency) -> str:
    """``velocity (3 DoF): time average 2.91 in [2.71, 3.31] (K_eff 12), 93 % of times inside [2.0, 4.2]``."""
    lo, hi = b.time_average_band
    return (
        f"{name} ({b.dof} DoF): time average {b.time_average:.2f} in [{lo:.2f}, {hi:.2f}] "
        f"(K_eff {b.effective_times:.0f}){'' if b.consistent else ' OUTSIDE'}, {100 * b.fraction_inside:.0f} % "
        f"of times inside [{b.band[0]:.2f}, {b.band[1]:.2f}]"
    )
