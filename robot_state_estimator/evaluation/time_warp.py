"""The piecewise-linear clock of ``time_alignment.fit_time_warp``: a monotone mapping of nominal ground-truth stamps
to the reference clock, with knots evenly spread in nominal time, fitted by least squares on yaw (scipy
``least_squares``, soft-L1 loss).

Pure numpy/scipy. Times are float64 s (the estimate's clock for the reference and mapped times, the ground truth's
nominal clock for ``t_gt`` and the knots); yaw in rad, unwrapped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from robot_state_estimator.evaluation.errors import MetricsError

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class WarpProblem:
    """The least squares of ``time_alignment.fit_time_warp`` on ``x = (tau_0 (s), rho (K-1,))``: the mapped time
    of the first knot and the log rate of each segment between knots.

    Attributes:
        t_ref: (N,) s, reference stamps (estimate clock), increasing.
        yaw_ref: (N,) rad, reference yaw, unwrapped.
        t_gt: (M,) s, nominal ground-truth stamps.
        yaw_gt: (M,) rad, ground-truth yaw, unwrapped.
        kn: (K,) s, nominal knot stamps (evenly spread from the first to the last ground-truth stamp).
        dkn: (K-1,) s, the nominal segment durations.
        x0: (K,) the start: the first knot's mapped time (s) and the log rates ``rho0``.
        rho0: (K-1,) the start's log rates, the prior's centre.
        t_mid: s, the middle of the reference span (origin of the yaw drift).
        sigma_yaw_rad, sigma_rate_change, sigma_rate_prior: residual scales (see ``time_alignment.fit_time_warp``).
    """

    t_ref: FloatArray
    yaw_ref: FloatArray
    t_gt: FloatArray
    yaw_gt: FloatArray
    kn: FloatArray
    dkn: FloatArray
    x0: FloatArray
    rho0: FloatArray
    t_mid: float
    sigma_yaw_rad: float
    sigma_rate_change: float
    sigma_rate_prior: float

    def knots(self, x: FloatArray) -> FloatArray:
        """(K,) s, the knots' mapped times (reference clock)."""
        k: FloatArray = x[0] + np.concatenate([[0.0], np.cumsum(np.exp(x[1:]) * self.dkn)])
        return k

    def mapped(self, x: FloatArray) -> FloatArray:
        """(M,) s, the ground-truth rows' mapped times."""
        return np.interp(self.t_gt, self.kn, self.knots(x))

    def inside(self, tau: FloatArray) -> NDArray[np.bool_]:
        """(M,) whether each mapped time ``tau`` (s) lies inside the reference span."""
        m: NDArray[np.bool_] = (tau >= self.t_ref[0]) & (tau <= self.t_ref[-1])
        return m

    def yaw_residuals(self, x: FloatArray, m: NDArray[np.bool_]) -> FloatArray:
        """Rad, ground-truth yaw minus reference yaw at the mapped times of the rows ``m``, less the constant and
        linear drift fitted to them (closed-form least squares)."""
        # rows of the fixed set ``m``; np.interp holds the reference's end values for a row moved outside
        tau = self.mapped(x)[m]
        d = self.yaw_gt[m] - np.interp(tau, self.t_ref, self.yaw_ref)
        A = np.column_stack([np.ones(len(tau)), tau - self.t_mid])
        c, *_ = np.linalg.lstsq(A, d, rcond=None)
        residuals: FloatArray = d - A @ c
        return residuals

    def residuals(self, x: FloatArray, m: NDArray[np.bool_]) -> FloatArray:
        """The scaled residuals: yaw of the rows ``m``, change of log rate between segments, departure from the
        start's log rates."""
        rho = x[1:]
        return np.concatenate(
            [
                self.yaw_residuals(x, m) / self.sigma_yaw_rad,
                np.diff(rho) / self.sigma_rate_change,
                (rho - self.rho0) / self.sigma_rate_prior,
            ]
        )


def warp_problem(
    t_ref: FloatArray,
    yaw_ref: FloatArray,
    t_gt: FloatArray,
    yaw_gt: FloatArray,
    start_map: Callable[[FloatArray], FloatArray],
    *,
    knot_spacing_s: float,
    sigma_yaw_rad: float,
    sigma_rate_change: float,
    sigma_rate_prior: float,
) -> WarpProblem:
    """The problem with knots every ``knot_spacing_s`` (nominal s; at least one segment) over the ground truth's span,
    started (and its rate prior centred) where ``start_map`` puts the knots.

    Args:
        t_ref: (N,) s, reference stamps (estimate clock), increasing.
        yaw_ref: (N,) rad, reference yaw, unwrapped.
        t_gt: (M,) s, nominal ground-truth stamps, increasing.
        yaw_gt: (M,) rad, ground-truth yaw, unwrapped.
        start_map: nominal stamps (K,) s -> the start's times on the reference clock (K,) s (an offset+rate
            alignment's mapping).
        knot_spacing_s: nominal s between knots.
        sigma_yaw_rad, sigma_rate_change, sigma_rate_prior: residual scales (see
            ``time_alignment.fit_time_warp``).
    """
    t_ref = np.asarray(t_ref, dtype=float)
    yaw_ref = np.asarray(yaw_ref, dtype=float)
    n_seg = max(1, math.ceil((t_gt[-1] - t_gt[0]) / knot_spacing_s - 1e-9))
    kn = np.linspace(t_gt[0], t_gt[-1], n_seg + 1)
    dkn = np.diff(kn)
    km0 = start_map(kn)
    rho0 = np.log(np.maximum(np.diff(km0) / dkn, 1e-3))
    return WarpProblem(
        t_ref=t_ref,
        yaw_ref=yaw_ref,
        t_gt=t_gt,
        yaw_gt=yaw_gt,
        kn=kn,
        dkn=dkn,
        x0=np.concatenate([[km0[0]], rho0]),
        rho0=rho0,
        t_mid=0.5 * (t_ref[0] + t_ref[-1]),
        sigma_yaw_rad=sigma_yaw_rad,
        sigma_rate_change=sigma_rate_change,
        sigma_rate_prior=sigma_rate_prior,
    )


class ClockProblem(Protocol):
    """What :func:`solve_warp` needs of a clock problem: the start ``x0``, the reference stamps ``t_ref`` (N,) s,
    the rows' mapped times, which of them lie inside the reference span, and the scaled residuals of the rows
    ``m``. :class:`WarpProblem` (yaw) and ``gyro_clock.RotationClockProblem`` (rotation over a few rows)."""

    @property
    def x0(self) -> FloatArray: ...

    @property
    def t_ref(self) -> FloatArray: ...

    def mapped(self, x: FloatArray) -> FloatArray: ...

    def inside(self, tau: FloatArray) -> NDArray[np.bool_]: ...

    def residuals(self, x: FloatArray, m: NDArray[np.bool_]) -> FloatArray: ...


def solve_warp(
    problem: ClockProblem,
    min_rows: int,
    jac: Callable[[FloatArray, NDArray[np.bool_]], FloatArray] | None = None,
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """The fitted ``x`` and the (M,) rows inside the reference span it was fitted on.

    ``jac(x, m)``: the residuals' Jacobian (R, K); None: forward differences (step 1e-4 of ``x``).

    The rows compared stay fixed during a solve (a smooth problem); up to three passes update them, until they
    no longer change.

    Raises:
        MetricsError: fewer than ``min_rows`` rows map inside the reference span, at the start or after a pass.
    """
    t_ref = problem.t_ref
    m = problem.inside(problem.mapped(problem.x0))
    if np.count_nonzero(m) < min_rows:
        raise MetricsError(
            f"fewer than {min_rows} ground-truth rows map into the reference span "
            f"[{t_ref[0]:.3f}, {t_ref[-1]:.3f}] s; cannot fit a time warp"
        )
    x = problem.x0
    for _ in range(3):
        x = optimize.least_squares(
            problem.residuals,
            x,
            loss="soft_l1",
            f_scale=3.0,
            x_scale=0.05,
            jac="2-point" if jac is None else jac,
            diff_step=1e-4,
            max_nfev=200,
            tr_solver="lsmr",
            args=(m,),
        ).x
        m_new = problem.inside(problem.mapped(x))
        if np.count_nonzero(m_new) < min_rows:
            raise MetricsError(f"the time warp maps fewer than {min_rows} ground-truth rows into the reference span")
        if np.array_equal(m_new, m):
            break
        m = m_new
    return x, m
