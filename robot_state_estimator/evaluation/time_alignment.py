"""Time alignment of ground truth to an estimate on their yaw rates: an offset, an offset and a rate, or a
piecewise-linear clock (a warp) fitted on yaw.

Pure numpy/scipy. Times are float64 seconds on the estimate's clock. Sources: Z. Zhang, D. Scaramuzza, "A tutorial
on quantitative trajectory evaluation for visual(-inertial) odometry", IROS 2018 (what has to be aligned before
comparing); the signal (yaw rate) does not depend on the unobservable yaw and position offsets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.time_warp import solve_warp, warp_problem
from robot_state_estimator.evaluation.trajectory import Trajectory, yaw_of

FloatArray = NDArray[np.float64]

#: Time-alignment modes that search something (besides "none"); see :func:`evaluate`.
TIME_ALIGNMENTS = ("offset", "offset+rate", "warp")


@dataclass(frozen=True)
class TimeAlignment:
    """Result of a time alignment: ground-truth time ``t`` maps to estimate time ``t0 + offset + scale (t - t0)``,
    or, for a warp, to the piecewise-linear interpolation of ``knots_s``.

    Attributes:
        offset_s: s, added to the ground truth's stamps (``t0`` = its first stamp); for a warp, the shift of
            the first knot.
        scale: rate factor applied to the ground truth's time axis (1 when only the offset was searched); for a
            warp, its mean rate (mapped span / nominal span).
        cost: mean squared difference of the aligned signals ((rad/s)^2 for yaw rate; rad^2 of yaw for a warp).
        overlap_s: duration of the overlap used, s.
        knots_s: for a warp (:func:`fit_time_warp`), ``(nominal (K,), mapped (K,))`` ground-truth stamps, s:
            the mapping interpolates linearly between knots and extends the end segments' rates beyond them;
            None for an affine mapping.
        not_determined: None when the offset search found one clear minimum; else why the signal does not
            determine the offset (:func:`timing_information`): the alignment is then a guess.
        warp_start: for a warp, the ``(offset_s, scale)`` of the offset+rate alignment it started from.
    """

    offset_s: float
    scale: float = 1.0
    cost: float = float("nan")
    overlap_s: float = float("nan")
    knots_s: tuple[FloatArray, FloatArray] | None = None
    not_determined: str | None = None
    warp_start: tuple[float, float] | None = None

    def map_time(self, t_s: FloatArray, t0_s: float) -> FloatArray:
        """Ground-truth stamps ``t_s`` (s) on the estimate's clock; ``t0_s``: the ground truth's first stamp."""
        t_s = np.asarray(t_s, dtype=float)
        if self.knots_s is None:
            return t0_s + self.offset_s + self.scale * (t_s - t0_s)
        kn, km = (np.asarray(k, dtype=float) for k in self.knots_s)
        out = np.interp(t_s, kn, km)
        lo, hi = t_s < kn[0], t_s > kn[-1]
        out[lo] = km[0] + (t_s[lo] - kn[0]) * (km[1] - km[0]) / (kn[1] - kn[0])
        out[hi] = km[-1] + (t_s[hi] - kn[-1]) * (km[-1] - km[-2]) / (kn[-1] - kn[-2])
        mapped: FloatArray = out
        return mapped

    def apply(self, traj: Trajectory) -> Trajectory:
        """The ground-truth trajectory with aligned stamps."""
        if self.knots_s is None:
            return traj.shifted(self.offset_s, self.scale)
        return replace(traj, t_s=self.map_time(traj.t_s, float(traj.t_s[0])))

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly fields (``knots_s`` as two lists when a warp)."""
        d: dict[str, Any] = {"offset_s": self.offset_s, "scale": self.scale, "cost": self.cost}
        if self.not_determined is not None:
            d["not_determined"] = self.not_determined
        if self.warp_start is not None:
            d["warp_start"] = {"offset_s": self.warp_start[0], "scale": self.warp_start[1]}
        if self.knots_s is not None:
            d["knots_s"] = [[float(x) for x in self.knots_s[0]], [float(x) for x in self.knots_s[1]]]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TimeAlignment:
        """Inverse of :meth:`as_dict` (extra keys ignored)."""
        knots = d.get("knots_s")
        return cls(
            offset_s=float(d.get("offset_s", 0.0)),
            scale=float(d.get("scale", 1.0)),
            cost=float(d.get("cost", float("nan"))),
            knots_s=None if knots is None else (np.asarray(knots[0], float), np.asarray(knots[1], float)),
            not_determined=d.get("not_determined"),
            warp_start=None if "warp_start" not in d else (d["warp_start"]["offset_s"], d["warp_start"]["scale"]),
        )


def yaw_rate_signal(
    traj: Trajectory, *, rate_hz: float = 100.0, smooth_s: float = 0.05
) -> tuple[FloatArray, FloatArray]:
    """Yaw rate of a trajectory on a uniform grid, for time alignment.

    The yaw (about the world z axis) is unwrapped, resampled at ``rate_hz``, differentiated by central
    differences and smoothed by a moving average of ``smooth_s``. It does not depend on the unobservable
    yaw and position offsets between estimate and ground truth.

    Args:
        traj: the trajectory (at least two samples).
        rate_hz: grid rate, Hz.
        smooth_s: moving-average window, s (0 for none).

    Returns:
        ``(t_s (M,), yaw_rate (M,) rad/s)``.
    """
    if len(traj) < 2:
        raise MetricsError("need at least two samples for a yaw-rate signal")
    yaw = np.unwrap(yaw_of(traj.quat_world_base_xyzw))
    t = np.arange(traj.t_s[0], traj.t_s[-1], 1.0 / rate_hz)
    y = np.interp(t, traj.t_s, yaw)
    rate = np.gradient(y, 1.0 / rate_hz) if len(t) > 1 else np.zeros_like(t)
    w = round(smooth_s * rate_hz)
    if w > 1:
        rate = np.convolve(rate, np.ones(w) / w, mode="same")
    return t, rate


def _alignment_cost(
    t_est: FloatArray,
    s_est: FloatArray,
    t_gt: FloatArray,
    s_gt: FloatArray,
    offset_s: float,
    scale: float,
    min_overlap_s: float,
) -> tuple[float, float]:
    t_mapped = t_gt[0] + offset_s + scale * (t_gt - t_gt[0])
    m = (t_mapped >= t_est[0]) & (t_mapped <= t_est[-1])
    if not np.any(m):
        return float("inf"), 0.0
    overlap = float(t_mapped[m][-1] - t_mapped[m][0])
    if overlap < min_overlap_s:
        return float("inf"), overlap
    # the signals are rates (per second of their own clock): stretching the ground truth's clock by ``scale``
    # divides its rate by ``scale``
    d = np.interp(t_mapped[m], t_est, s_est) - s_gt[m] / scale
    return float(np.mean(d * d)), overlap


def _infeasible_cost(costs: FloatArray) -> float:
    """A finite cost above every finite one of ``costs``: what a refinement sees where the overlap is too short."""
    finite = costs[np.isfinite(costs)]
    return 10.0 * float(np.max(finite)) + 1.0 if finite.size else 1.0


def _finite(cost: float, penalty: float) -> float:
    return cost if math.isfinite(cost) else penalty


#: Below this standard deviation (rad/s) over the overlap a yaw rate is gyroscope noise and gait wobble: no turns.
MIN_ALIGNMENT_SIGNAL_STD = 0.02
#: Offsets this far (s) from the best one count as a different alignment, not the same minimum's slope.
RUNNER_UP_MIN_DISTANCE_S = 1.0
#: A runner-up whose cost is within this fraction of (median cost - best cost) of the best makes the offset
#: ambiguous (a periodic gait on a straight line matches every stride period).
RUNNER_UP_MIN_MARGIN = 0.2


def timing_information(
    offsets_s: FloatArray,
    costs: FloatArray,
    best_s: float,
    signal_std: float,
) -> str | None:
    """Whether an offset search on a signal found the clock: None if so, else why not (a sentence).

    Not determined when (a) the signal's standard deviation over the overlap is below
    ``MIN_ALIGNMENT_SIGNAL_STD`` (a run without turns: the yaw rate is noise), or (b) the cost is flat (its
    median is within 1e-12 of its minimum), or (c) an offset at least ``RUNNER_UP_MIN_DISTANCE_S`` from the
    best has a cost within ``RUNNER_UP_MIN_MARGIN`` of (median - best) of the best one (a periodic signal
    matches every period).

    Args:
        offsets_s: (K,) s, the searched offsets.
        costs: (K,) the cost of each (inf where the overlap is too short).
        best_s: s, the offset found.
        signal_std: rad/s, the smaller standard deviation of the two signals over the overlap at ``best_s``.
    """
    if not signal_std >= MIN_ALIGNMENT_SIGNAL_STD:
        return (
            f"the yaw rate hardly varies (std {signal_std:.3f} rad/s < {MIN_ALIGNMENT_SIGNAL_STD} over the "
            "overlap): no turns, so it carries no timing information"
        )
    ok = np.isfinite(costs)
    finite_offsets, finite = offsets_s[ok], costs[ok]
    best = float(np.min(finite))
    median = float(np.median(finite))
    if median - best <= 1e-12 * max(1.0, abs(median)):
        return "the cost does not depend on the offset (flat): the yaw rate carries no timing information"
    far = np.abs(finite_offsets - best_s) >= RUNNER_UP_MIN_DISTANCE_S
    if np.any(far):
        k = int(np.argmin(np.where(far, finite, np.inf)))
        if finite[k] - best < RUNNER_UP_MIN_MARGIN * (median - best):
            return (
                f"an offset {finite_offsets[k] - best_s:+.2f} s away fits almost as well (cost "
                f"{finite[k]:.3g} vs {best:.3g}): the yaw rate (a periodic gait without distinct turns) does not "
                "single out one offset"
            )
    return None


def _overlap_std(
    t_est: FloatArray, s_est: FloatArray, t_gt: FloatArray, s_gt: FloatArray, offset_s: float, scale: float
) -> float:
    """The smaller standard deviation of the two signals over their overlap at ``offset_s``/``scale``."""
    t_mapped = t_gt[0] + offset_s + scale * (t_gt - t_gt[0])
    m_gt = (t_mapped >= t_est[0]) & (t_mapped <= t_est[-1])
    if not np.any(m_gt):
        return 0.0
    m_est = (t_est >= t_mapped[m_gt][0]) & (t_est <= t_mapped[m_gt][-1])
    if not np.any(m_est):
        return 0.0
    return float(min(np.std(s_est[m_est]), np.std(s_gt[m_gt] / scale)))


def estimate_time_offset(
    t_est: FloatArray,
    signal_est: FloatArray,
    t_gt: FloatArray,
    signal_gt: FloatArray,
    *,
    max_offset_s: float = 5.0,
    step_s: float = 0.005,
    scale: float = 1.0,
    min_overlap_fraction: float = 0.5,
) -> TimeAlignment:
    """Find the offset to add to the ground-truth stamps so the two signals agree (least squares).

    An exhaustive search over ``[-max_offset_s, max_offset_s]`` in steps of ``step_s`` (robust to the
    periodic content of a gait), refined by a bounded scalar minimisation around the best step.

    Args:
        t_est: (N,) s, estimate signal stamps (increasing).
        signal_est: (N,) the estimate's signal, a rate (e.g. yaw rate, rad/s: the ground truth's is divided by
            ``scale`` when its clock is stretched).
        t_gt: (M,) s, ground-truth stamps (increasing; the first one is the origin of ``scale``).
        signal_gt: (M,) the same quantity from the ground truth.
        max_offset_s: search half-width, s.
        step_s: grid step, s.
        scale: fixed rate factor on the ground-truth time axis.
        min_overlap_fraction: reject offsets whose overlap is shorter than this fraction of the shorter
            signal's duration.

    Returns:
        The :class:`TimeAlignment`.

    Raises:
        MetricsError: no offset gives enough overlap.
    """
    t_est = np.asarray(t_est, dtype=float)
    t_gt = np.asarray(t_gt, dtype=float)
    min_overlap = min_overlap_fraction * min(t_est[-1] - t_est[0], scale * (t_gt[-1] - t_gt[0]))
    offsets = np.arange(-max_offset_s, max_offset_s + 0.5 * step_s, step_s)
    costs = np.array([_alignment_cost(t_est, signal_est, t_gt, signal_gt, o, scale, min_overlap)[0] for o in offsets])
    if not np.any(np.isfinite(costs)):
        raise MetricsError(
            f"no time offset within +-{max_offset_s} s gives an overlap of {min_overlap:.2f} s between "
            "estimate and ground truth"
        )
    k = int(np.argmin(costs))
    lo, hi = offsets[k] - step_s, offsets[k] + step_s
    # Near the edge of the overlap the cost is inf; Brent's parabolic step on an inf value computes inf - inf
    # (a NaN and a RuntimeWarning from SciPy). The refinement sees a finite penalty above every cost of the grid
    # instead, and a penalised point is never taken (res.fun <= costs[k] below).
    penalty = _infeasible_cost(costs)
    res = optimize.minimize_scalar(
        lambda o: _finite(_alignment_cost(t_est, signal_est, t_gt, signal_gt, o, scale, min_overlap)[0], penalty),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": step_s * 1e-3},
    )
    best = float(res.x) if np.isfinite(res.fun) and res.fun <= costs[k] else float(offsets[k])
    cost, overlap = _alignment_cost(t_est, signal_est, t_gt, signal_gt, best, scale, min_overlap)
    why = timing_information(offsets, costs, best, _overlap_std(t_est, signal_est, t_gt, signal_gt, best, scale))
    return TimeAlignment(offset_s=best, scale=scale, cost=cost, overlap_s=overlap, not_determined=why)


def estimate_time_offset_and_rate(
    t_est: FloatArray,
    signal_est: FloatArray,
    t_gt: FloatArray,
    signal_gt: FloatArray,
    *,
    max_offset_s: float = 5.0,
    max_rate_deviation: float = 0.1,
    n_rates: int = 21,
    step_s: float = 0.01,
    min_overlap_fraction: float = 0.5,
) -> TimeAlignment:
    """Offset and rate for ground truth without stamps (rows spread evenly over a nominal time span).

    For each rate factor on a grid over ``1 +- max_rate_deviation`` the best offset is searched (as in
    :func:`estimate_time_offset`); the best pair is then refined jointly (Nelder-Mead, kept only inside the
    search ranges).

    Args:
        t_est, signal_est: (N,) estimate stamps (s) and signal.
        t_gt, signal_gt: (M,) nominal ground-truth stamps (s) and signal.
        max_offset_s: offset search half-width, s.
        max_rate_deviation: rate search half-width (0.05 = +-5 %).
        n_rates: number of rate factors on the grid.
        step_s: offset grid step, s.
        min_overlap_fraction: see :func:`estimate_time_offset`.

    Returns:
        The :class:`TimeAlignment` (``scale`` maps nominal ground-truth durations to estimate durations).

    Raises:
        MetricsError: no offset/rate pair gives enough overlap.
    """
    best: TimeAlignment | None = None
    for scale in np.linspace(1.0 - max_rate_deviation, 1.0 + max_rate_deviation, n_rates):
        try:
            a = estimate_time_offset(
                t_est,
                signal_est,
                t_gt,
                signal_gt,
                max_offset_s=max_offset_s,
                step_s=step_s,
                scale=float(scale),
                min_overlap_fraction=min_overlap_fraction,
            )
        except MetricsError:
            continue
        if best is None or a.cost < best.cost:
            best = a
    if best is None:
        raise MetricsError("no time offset and rate give enough overlap between estimate and ground truth")
    min_overlap = min_overlap_fraction * min(t_est[-1] - t_est[0], t_gt[-1] - t_gt[0])
    penalty = _infeasible_cost(np.array([best.cost]))  # inf costs would reach Nelder-Mead's arithmetic

    def f(x: FloatArray) -> float:
        return _finite(_alignment_cost(t_est, signal_est, t_gt, signal_gt, x[0], x[1], min_overlap)[0], penalty)

    res = optimize.minimize(
        f,
        x0=np.array([best.offset_s, best.scale]),
        method="Nelder-Mead",
        options={"xatol": 1e-5, "fatol": 1e-12, "initial_simplex": None},
    )
    in_range = abs(float(res.x[1]) - 1.0) <= max_rate_deviation and abs(float(res.x[0])) <= max_offset_s
    if np.isfinite(res.fun) and res.fun < best.cost and in_range:
        cost, overlap = _alignment_cost(t_est, signal_est, t_gt, signal_gt, res.x[0], res.x[1], min_overlap)
        best = replace(best, offset_s=float(res.x[0]), scale=float(res.x[1]), cost=cost, overlap_s=overlap)
    return best


def fit_time_warp(
    t_ref: FloatArray,
    yaw_ref: FloatArray,
    gt: Trajectory,
    initial: TimeAlignment,
    *,
    knot_spacing_s: float = 1.0,
    sigma_yaw_rad: float = math.radians(1.0),
    sigma_rate_change: float = 0.02,
    sigma_rate_prior: float = 0.15,
    min_rows: int = 20,
) -> TimeAlignment:
    """A piecewise-linear clock for ground-truth rows that are not evenly spread in time, fitted on yaw.

    Motion-capture rows exported without stamps are not evenly spaced when frames were dropped (occlusions in
    turns, a busy receiver): one offset and one rate then fit the recording on average but not locally, and a
    slice of the recording fits a different pair. Model: the nominal ground-truth stamps ``t`` map to the
    reference clock through a monotone piecewise-linear function with knots every ``knot_spacing_s``
    (nominal): ``tau_0`` at the first knot, then ``exp(rho_j)`` (rate) on segment ``j``. Least squares
    (scipy ``least_squares``, soft-L1 loss against outlier rows) on:

    - the yaw of each row mapped inside the reference's span minus the reference yaw at its mapped time, up
      to a constant and a linear drift solved in closed form (the unobservable yaw offset and a residual
      gyroscope bias), over ``sigma_yaw_rad``;
    - the change of log rate between neighbouring segments over ``sigma_rate_change``, and each log rate's
      departure from ``initial``'s over ``sigma_rate_prior``: where yaw carries no timing (standing still,
      outside the reference's span) the rate stays near its neighbours' and loosely near the recording's mean.
      These two (0.02, 0.15) let the fit start from an offset+rate alignment that is far off (an uneven clock
      can pull it to the edge of its search); a tighter prior keeps such a start.

    Args:
        t_ref: (N,) s, reference stamps (estimate clock), increasing.
        yaw_ref: (N,) rad, reference yaw (unwrapped; e.g. the integrated gyroscope z or the estimate's yaw).
        gt: ground truth with nominal stamps (its yaw is unwrapped here).
        initial: an offset+rate alignment (:func:`estimate_time_offset_and_rate`), the start and the prior.
        knot_spacing_s: nominal s between knots.
        sigma_yaw_rad: yaw residual scale, rad.
        sigma_rate_change: scale of the change of log rate between segments.
        sigma_rate_prior: scale of a segment's log rate around ``initial``'s.
        min_rows: fewest rows inside the reference span.

    Returns:
        A :class:`TimeAlignment` with ``knots_s``; ``offset_s``/``scale`` summarise it, ``cost`` is the mean
        squared yaw residual (rad^2) of the rows inside the span.

    Raises:
        MetricsError: fewer than ``min_rows`` rows map inside the reference span.
    """
    tn = gt.t_s
    t0 = float(tn[0])
    problem = warp_problem(
        t_ref,
        yaw_ref,
        tn,
        np.unwrap(yaw_of(gt.quat_world_base_xyzw)),
        lambda t: initial.map_time(t, t0),
        knot_spacing_s=knot_spacing_s,
        sigma_yaw_rad=sigma_yaw_rad,
        sigma_rate_change=sigma_rate_change,
        sigma_rate_prior=sigma_rate_prior,
    )
    x, m = solve_warp(problem, min_rows)
    r = problem.yaw_residuals(x, m)
    kn, km = problem.kn, problem.knots(x)
    tau = np.interp(tn, kn, km)
    return TimeAlignment(
        offset_s=float(km[0] - tn[0]),
        scale=float((km[-1] - km[0]) / (kn[-1] - kn[0])),
        cost=float(np.mean(r**2)),
        overlap_s=float(tau[m][-1] - tau[m][0]),
        knots_s=(kn, km),
        not_determined=initial.not_determined,
        warp_start=(initial.offset_s, initial.scale),
    )


def reference_yaw(
    est: Trajectory | None, reference_yaw_rate: tuple[FloatArray, FloatArray] | None
) -> tuple[FloatArray, FloatArray]:
    """The yaw to fit a time warp on: the reference yaw rate integrated (trapezoids), else the estimate's yaw.

    Returns:
        ``(t_s (N,), yaw (N,) rad, unwrapped)``.
    """
    if reference_yaw_rate is not None:
        t = np.asarray(reference_yaw_rate[0], dtype=float)
        w = np.asarray(reference_yaw_rate[1], dtype=float)
        return t, np.concatenate([[0.0], np.cumsum(0.5 * (w[1:] + w[:-1]) * np.diff(t))])
    if est is None:
        raise MetricsError("a time warp needs the estimate or a reference yaw rate")
    return est.t_s, np.unwrap(yaw_of(est.quat_world_base_xyzw))


def align_time(
    est: Trajectory,
    gt: Trajectory,
    *,
    estimate_rate: bool = False,
    max_offset_s: float = 5.0,
    max_rate_deviation: float = 0.1,
    signal_rate_hz: float = 100.0,
    smooth_s: float = 0.1,
    reference_yaw_rate: tuple[FloatArray, FloatArray] | None = None,
    warp: bool = False,
    knot_spacing_s: float = 1.0,
) -> TimeAlignment:
    """Time-align ground truth to an estimate on their yaw rates (see :func:`yaw_rate_signal`).

    Args:
        est: the estimate.
        gt: the ground truth (nominal stamps when ``estimate_rate``).
        estimate_rate: also search a rate factor (ground truth without stamps).
        max_offset_s: offset search half-width, s.
        max_rate_deviation: rate search half-width.
        signal_rate_hz: rate of the yaw-rate signals, Hz.
        smooth_s: moving-average window of both signals, s.
        reference_yaw_rate: ``(t_s (N,), yaw rate (N,) rad/s)`` on the estimate's clock to align on instead
            of the estimate's own yaw rate, e.g. the gyroscope's z axis in the base frame (independent of how
            well the estimate tracks yaw).
        warp: after the offset and rate, fit a piecewise-linear clock on yaw (:func:`fit_time_warp`; the
            reference yaw is ``reference_yaw_rate`` integrated, else the estimate's yaw): ground truth whose
            rows are not evenly spread in time.
        knot_spacing_s: nominal s between the warp's knots.

    Returns:
        The alignment; apply it with ``alignment.apply(gt)``.
    """
    if reference_yaw_rate is not None:
        t_ref = np.asarray(reference_yaw_rate[0], dtype=float)
        te = np.arange(t_ref[0], t_ref[-1], 1.0 / signal_rate_hz)
        se = np.interp(te, t_ref, np.asarray(reference_yaw_rate[1], dtype=float))
        w = round(smooth_s * signal_rate_hz)
        if w > 1:
            se = np.convolve(se, np.ones(w) / w, mode="same")
    else:
        te, se = yaw_rate_signal(est, rate_hz=signal_rate_hz, smooth_s=smooth_s)
    tg, sg = yaw_rate_signal(gt, rate_hz=signal_rate_hz, smooth_s=smooth_s)
    step = 1.0 / signal_rate_hz
    if estimate_rate or warp:
        affine = estimate_time_offset_and_rate(
            te, se, tg, sg, max_offset_s=max_offset_s, max_rate_deviation=max_rate_deviation, step_s=step
        )
        if not warp:
            return affine
        t_ref, yaw_ref = reference_yaw(est, reference_yaw_rate)
        return fit_time_warp(t_ref, yaw_ref, gt, affine, knot_spacing_s=knot_spacing_s)
    return estimate_time_offset(te, se, tg, sg, max_offset_s=max_offset_s, step_s=step / 2)
