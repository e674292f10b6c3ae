"""Trajectory evaluation metrics: time alignment, Umeyama alignment, ATE, RPE, drift, NEES, contacts.

Pure numpy/scipy (no ROS, no pinocchio), so the core's tests can use it. Frames follow
docs/ARCHITECTURE.md: positions and orientations of the base B in the world ``W`` = ``odom`` (ENU),
base velocities in B. Times in this module are float64 seconds (evaluation works on differences of a few
seconds; convert ``stamp_ns`` with ``robot_state_estimator.common.time.ns_to_s`` at the edges).

Sources:
    - S. Umeyama, "Least-squares estimation of transformation parameters between two point patterns",
      IEEE TPAMI 13(4), 1991 (closed-form SE(3)/Sim(3) alignment).
    - J. Sturm, N. Engelhard, F. Endres, W. Burgard, D. Cremers, "A benchmark for the evaluation of RGB-D
      SLAM systems", IROS 2012 (ATE and RPE definitions, the TUM trajectory format).
    - Z. Zhang, D. Scaramuzza, "A tutorial on quantitative trajectory evaluation for visual(-inertial)
      odometry", IROS 2018 (4-DoF yaw + translation alignment for VIO-like odometry, RPE over travelled
      distance, drift as a percentage of the path length).
    - Y. Bar-Shalom, X. R. Li, T. Kirubarajan, "Estimation with Applications to Tracking and Navigation",
      2001, ch. 5.4 (NEES and its chi-square acceptance band over Monte Carlo runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, stats

from robot_state_estimator.tools.trajectory import (  # re-exported: metrics.Trajectory etc.
    MetricsError,
    Trajectory,
    _take,
    path_length,
    rot_z,
    wrap_angle,
    yaw_of,
)

FloatArray = NDArray[np.float64]


# ----------------------------------------------------------------------------------------------------------
# Time alignment
# ----------------------------------------------------------------------------------------------------------
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
        return out

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
    t_ref = np.asarray(t_ref, dtype=float)
    yaw_ref = np.asarray(yaw_ref, dtype=float)
    tn = gt.t_s
    yaw_gt = np.unwrap(yaw_of(gt.quat_world_base_xyzw))
    n_seg = max(1, math.ceil((tn[-1] - tn[0]) / knot_spacing_s - 1e-9))
    kn = np.linspace(tn[0], tn[-1], n_seg + 1)
    dkn = np.diff(kn)
    km0 = initial.map_time(kn, float(tn[0]))
    rho0 = np.log(np.maximum(np.diff(km0) / dkn, 1e-3))
    x0 = np.concatenate([[km0[0]], rho0])
    t_mid = 0.5 * (t_ref[0] + t_ref[-1])

    def knots(x: FloatArray) -> FloatArray:
        return x[0] + np.concatenate([[0.0], np.cumsum(np.exp(x[1:]) * dkn)])

    def mapped(x: FloatArray) -> FloatArray:
        return np.interp(tn, kn, knots(x))

    def inside(tau: FloatArray) -> NDArray[np.bool_]:
        return (tau >= t_ref[0]) & (tau <= t_ref[-1])

    def yaw_residuals(x: FloatArray, m: NDArray[np.bool_]) -> FloatArray:
        # rows of the fixed set ``m``; np.interp holds the reference's end values for a row moved outside
        tau = mapped(x)[m]
        d = yaw_gt[m] - np.interp(tau, t_ref, yaw_ref)
        A = np.column_stack([np.ones(len(tau)), tau - t_mid])
        c, *_ = np.linalg.lstsq(A, d, rcond=None)
        return d - A @ c

    m = inside(mapped(x0))
    if np.count_nonzero(m) < min_rows:
        raise MetricsError(
            f"fewer than {min_rows} ground-truth rows map into the reference span "
            f"[{t_ref[0]:.3f}, {t_ref[-1]:.3f}] s; cannot fit a time warp"
        )
    x = x0
    # the rows compared stay fixed during a solve (a smooth problem); a few passes update them
    for _ in range(3):

        def residuals(x: FloatArray, m: NDArray[np.bool_] = m) -> FloatArray:
            rho = x[1:]
            return np.concatenate(
                [yaw_residuals(x, m) / sigma_yaw_rad, np.diff(rho) / sigma_rate_change, (rho - rho0) / sigma_rate_prior]
            )

        x = optimize.least_squares(
            residuals,
            x,
            loss="soft_l1",
            f_scale=3.0,
            x_scale=0.05,
            diff_step=1e-4,
            max_nfev=200,
            tr_solver="lsmr",
        ).x
        m_new = inside(mapped(x))
        if np.count_nonzero(m_new) < min_rows:
            raise MetricsError(f"the time warp maps fewer than {min_rows} ground-truth rows into the reference span")
        if np.array_equal(m_new, m):
            break
        m = m_new
    r = yaw_residuals(x, m)
    km = knots(x)
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


def associate(est: Trajectory, gt: Trajectory, *, max_rate_hz: float | None = 200.0) -> tuple[Trajectory, Trajectory]:
    """Pair the samples of estimate and ground truth: the estimate interpolated at the ground-truth stamps.

    Only ground-truth stamps inside the estimate's time span are kept, decimated to at most
    ``max_rate_hz`` (None keeps all).

    Returns:
        ``(est_at_gt, gt_kept)`` with identical ``t_s``.

    Raises:
        MetricsError: fewer than two ground-truth samples overlap the estimate.
    """
    m = (gt.t_s >= est.t_s[0]) & (gt.t_s <= est.t_s[-1])
    idx = np.flatnonzero(m)
    if len(idx) < 2:
        raise MetricsError(
            f"ground truth [{gt.t_s[0]:.3f}, {gt.t_s[-1]:.3f}] s and estimate [{est.t_s[0]:.3f}, "
            f"{est.t_s[-1]:.3f}] s overlap in fewer than two samples; is a time alignment missing?"
        )
    if max_rate_hz is not None and len(idx) > 2:
        dt = float(np.median(np.diff(gt.t_s[idx])))
        stride = max(1, math.floor(1.0 / (max_rate_hz * dt) + 1e-9)) if dt > 0 else 1
        idx = idx[::stride]
    g = _take(gt, idx)
    return est.resampled(g.t_s), g


# ----------------------------------------------------------------------------------------------------------
# Spatial alignment
# ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpatialAlignment:
    """``x_gt ~ scale * R @ x_est + t``.

    Attributes:
        R: (3, 3) rotation.
        t: (3,) m.
        scale: 1 unless a similarity was estimated.
        dof: "4dof" (yaw + translation), "6dof" (SE(3)), "7dof" (Sim(3)), "origin" or "none".
    """

    R: FloatArray
    t: FloatArray
    scale: float = 1.0
    dof: str = "6dof"

    def apply(self, traj: Trajectory) -> Trajectory:
        """The trajectory expressed in the other's world frame."""
        return traj.transformed(self.R, self.t, self.scale)

    @property
    def yaw_deg(self) -> float:
        """Rotation about z of ``R`` in degrees."""
        return float(np.degrees(math.atan2(self.R[1, 0], self.R[0, 0])))


def umeyama_alignment(src: FloatArray, dst: FloatArray, *, with_scale: bool = False) -> SpatialAlignment:
    """Closed-form least-squares similarity/rigid transform ``dst ~ s R src + t`` (Umeyama 1991).

    Args:
        src: (N, 3) points (the estimate), N >= 3 not collinear for a unique rotation.
        dst: (N, 3) corresponding points (the ground truth).
        with_scale: also estimate the scale ``s`` (Sim(3)); else ``s = 1`` (SE(3)).

    Returns:
        The alignment (``dof`` "7dof" or "6dof").

    Raises:
        MetricsError: shapes differ or fewer than 3 points.
    """
    src = np.asarray(src, dtype=float)
    dst = np.asarray(dst, dtype=float)
    if src.shape != dst.shape or src.ndim != 2 or src.shape[1] != 3 or len(src) < 3:
        raise MetricsError(f"umeyama needs two (N>=3, 3) arrays, got {src.shape} and {dst.shape}")
    mu_s, mu_d = src.mean(axis=0), dst.mean(axis=0)
    xs, xd = src - mu_s, dst - mu_d
    sigma = xd.T @ xs / len(src)
    U, D, Vt = np.linalg.svd(sigma)
    S = np.eye(3)
    if np.linalg.det(U) * np.linalg.det(Vt) < 0:
        S[2, 2] = -1.0
    R = U @ S @ Vt
    s = 1.0
    if with_scale:
        var_s = float(np.mean(np.sum(xs * xs, axis=1)))
        s = float(np.trace(np.diag(D) @ S) / var_s) if var_s > 0 else 1.0
    t = mu_d - s * R @ mu_s
    return SpatialAlignment(R=R, t=t, scale=s, dof="7dof" if with_scale else "6dof")


def yaw_translation_alignment(src: FloatArray, dst: FloatArray) -> SpatialAlignment:
    """Least-squares 4-DoF alignment (rotation about z + translation) ``dst ~ Rz(yaw) src + t``.

    The closed form of the planar Umeyama/Procrustes problem on the centred x, y coordinates; z only
    shifts (Zhang & Scaramuzza 2018, sec. IV: the 4 unobservable DoF of visual-inertial odometry, which are
    also those of IMU + leg kinematics).

    Args:
        src: (N, 3) estimate positions, m.
        dst: (N, 3) ground-truth positions, m.

    Raises:
        MetricsError: shapes differ or fewer than 2 points.
    """
    src = np.asarray(src, dtype=float)
    dst = np.asarray(dst, dtype=float)
    if src.shape != dst.shape or src.ndim != 2 or src.shape[1] != 3 or len(src) < 2:
        raise MetricsError(f"4-DoF alignment needs two (N>=2, 3) arrays, got {src.shape} and {dst.shape}")
    mu_s, mu_d = src.mean(axis=0), dst.mean(axis=0)
    xs, xd = src - mu_s, dst - mu_d
    num = float(np.sum(xs[:, 0] * xd[:, 1] - xs[:, 1] * xd[:, 0]))
    den = float(np.sum(xs[:, 0] * xd[:, 0] + xs[:, 1] * xd[:, 1]))
    yaw = math.atan2(num, den) if (abs(num) + abs(den)) > 1e-12 else 0.0
    R = rot_z(yaw)
    return SpatialAlignment(R=R, t=mu_d - R @ mu_s, dof="4dof")


def origin_alignment(est: Trajectory, gt: Trajectory, *, n_poses: int = 1) -> SpatialAlignment:
    """4-DoF alignment from the first pose(s): yaw from orientations, translation from positions.

    Used for drift (the estimate starts where the ground truth starts, evo's ``--align_origin`` restricted
    to yaw). Works while the robot stands still, where a position-based alignment is degenerate.

    Args:
        est, gt: associated trajectories (same stamps).
        n_poses: number of first poses to average (yaw by circular mean).
    """
    n = max(1, min(n_poses, len(est)))
    dyaw = wrap_angle(yaw_of(gt.quat_world_base_xyzw[:n]) - yaw_of(est.quat_world_base_xyzw[:n]))
    yaw = math.atan2(float(np.mean(np.sin(dyaw))), float(np.mean(np.cos(dyaw))))
    R = rot_z(yaw)
    t = np.mean(gt.p_world_base[:n] - est.p_world_base[:n] @ R.T, axis=0)
    return SpatialAlignment(R=R, t=t, dof="origin")


def align_trajectory(est: Trajectory, gt: Trajectory, *, dof: str = "4dof") -> SpatialAlignment:
    """Spatial alignment of associated trajectories by name: "4dof", "6dof", "7dof", "origin" or "none"."""
    if dof == "4dof":
        return yaw_translation_alignment(est.p_world_base, gt.p_world_base)
    if dof == "6dof":
        return umeyama_alignment(est.p_world_base, gt.p_world_base)
    if dof == "7dof":
        return umeyama_alignment(est.p_world_base, gt.p_world_base, with_scale=True)
    if dof == "origin":
        return origin_alignment(est, gt)
    if dof == "none":
        return SpatialAlignment(R=np.eye(3), t=np.zeros(3), dof="none")
    raise MetricsError(f"unknown alignment {dof!r}; use 4dof, 6dof, 7dof, origin or none")


# ----------------------------------------------------------------------------------------------------------
# Error metrics
# ----------------------------------------------------------------------------------------------------------
def _stats(e: FloatArray) -> dict[str, float]:
    e = np.asarray(e, dtype=float)
    if e.size == 0:
        return {"rmse": float("nan"), "mean": float("nan"), "median": float("nan"), "max": float("nan"), "n": 0}
    return {
        "rmse": float(np.sqrt(np.mean(e * e))),
        "mean": float(np.mean(e)),
        "median": float(np.median(e)),
        "max": float(np.max(e)),
        "n": int(e.size),
    }


def ate(est_aligned: Trajectory, gt: Trajectory) -> dict[str, Any]:
    """Absolute trajectory error of associated, aligned trajectories (Sturm et al. 2012).

    Returns:
        ``{"trans": stats of ||p_est - p_gt|| (m), "rot_deg": stats of the rotation angle of
        R_gt^T R_est (deg), "rmse_xyz": per-axis RMSE (m)}`` where stats = rmse, mean, median, max, n.
    """
    d = est_aligned.p_world_base - gt.p_world_base
    ang = (gt.rotations.inv() * est_aligned.rotations).magnitude()
    return {
        "trans": _stats(np.linalg.norm(d, axis=1)),
        "rot_deg": _stats(np.degrees(ang)),
        "rmse_xyz": [float(x) for x in np.sqrt(np.mean(d * d, axis=0))],
    }


def _relative_pairs_by_distance(p_gt: FloatArray, delta_m: float, stride: int) -> tuple[NDArray[Any], NDArray[Any]]:
    cum = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(p_gt, axis=0), axis=1))])
    i = np.arange(0, len(cum), max(1, stride))
    j = np.searchsorted(cum, cum[i] + delta_m, side="left")
    ok = j < len(cum)
    return i[ok], j[ok]


def _relative_pairs_by_time(t: FloatArray, delta_s: float, stride: int) -> tuple[NDArray[Any], NDArray[Any]]:
    i = np.arange(0, len(t), max(1, stride))
    j = np.searchsorted(t, t[i] + delta_s - 1e-9, side="left")
    ok = j < len(t)
    return i[ok], j[ok]


def rpe(
    est: Trajectory,
    gt: Trajectory,
    *,
    delta: float,
    unit: str = "m",
    max_pairs: int = 2000,
) -> dict[str, Any]:
    """Relative pose error over a travelled distance or a time window (Sturm 2012; Zhang & Scaramuzza 2018).

    For pairs ``(i, j)`` where the ground truth travelled ``delta`` metres (``unit="m"``) or ``delta``
    seconds elapsed (``unit="s"``), ``E = (Q_i^-1 Q_j)^-1 (P_i^-1 P_j)`` with ``Q`` ground-truth and ``P``
    estimated poses; the translation error is ``||trans(E)||`` and the rotation error its angle. The
    result does not depend on a global alignment.

    Args:
        est, gt: associated trajectories (same stamps).
        delta: distance (m) or duration (s).
        unit: "m" or "s".
        max_pairs: start indices are strided to keep at most about this many pairs.

    Returns:
        ``{"delta", "unit", "trans": stats (m), "trans_pct": stats of trans / travelled distance (%, per pair:
        large on pairs that barely move), "mean_length_m": mean ground-truth travel of the pairs (m),
        "trans_rmse_pct": 100 * trans RMSE / mean_length_m (%, NaN when the pairs do not move),
        "rot_deg": stats (deg)}``; ``n = 0`` when the trajectory is shorter than ``delta``.
    """
    n = len(gt)
    stride = max(1, n // max_pairs)
    if unit == "m":
        i, j = _relative_pairs_by_distance(gt.p_world_base, delta, stride)
    elif unit == "s":
        i, j = _relative_pairs_by_time(gt.t_s, delta, stride)
    else:
        raise MetricsError(f"unknown RPE unit {unit!r}; use 'm' or 's'")
    Rg, Re = gt.rotations, est.rotations
    pg, pe = gt.p_world_base, est.p_world_base
    if len(i) == 0:
        empty = _stats(np.array([]))
        return {
            "delta": delta,
            "unit": unit,
            "trans": empty,
            "trans_pct": empty,
            "mean_length_m": float("nan"),
            "trans_rmse_pct": float("nan"),
            "rot_deg": empty,
        }
    # relative motions in the frame of pose i
    dRg = Rg[i].inv() * Rg[j]
    dRe = Re[i].inv() * Re[j]
    dpg = Rg[i].inv().apply(pg[j] - pg[i])
    dpe = Re[i].inv().apply(pe[j] - pe[i])
    # E = dQ^-1 dP : rotation dRg^T dRe, translation dRg^T (dpe - dpg)
    e_t = np.linalg.norm(dRg.inv().apply(dpe - dpg), axis=1)
    e_r = np.degrees((dRg.inv() * dRe).magnitude())
    cum = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pg, axis=0), axis=1))])
    dist = cum[j] - cum[i]
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(dist > 1e-6, 100.0 * e_t / dist, np.nan)
    trans = _stats(e_t)
    mean_length = float(np.mean(dist))
    return {
        "delta": delta,
        "unit": unit,
        "trans": trans,
        "trans_pct": _stats(pct[np.isfinite(pct)]),
        "mean_length_m": mean_length,
        "trans_rmse_pct": 100.0 * trans["rmse"] / mean_length if mean_length > 1e-6 else float("nan"),
        "rot_deg": _stats(e_r),
    }


def final_drift(est: Trajectory, gt: Trajectory, *, n_origin_poses: int = 1) -> dict[str, float]:
    """Final position and yaw error after aligning the start (origin alignment), relative to the path.

    Args:
        est, gt: associated trajectories (same stamps).
        n_origin_poses: first poses used for the origin alignment.

    Returns:
        ``{"final_error_m", "path_length_m", "final_drift_pct", "final_yaw_error_deg",
        "yaw_drift_deg_per_min"}``: the position error at the last stamp, the ground-truth path length, their
        ratio in percent, the yaw error at the end and the slope of the yaw error over time (least squares).
    """
    a = origin_alignment(est, gt, n_poses=n_origin_poses)
    e = a.apply(est)
    err = float(np.linalg.norm(e.p_world_base[-1] - gt.p_world_base[-1]))
    L = path_length(gt.p_world_base)
    yaw_err = np.unwrap(wrap_angle(yaw_of(e.quat_world_base_xyzw) - yaw_of(gt.quat_world_base_xyzw)))
    slope = float(np.polyfit(gt.t_s - gt.t_s[0], yaw_err, 1)[0]) if len(gt) > 2 else float("nan")
    return {
        "final_error_m": err,
        "path_length_m": L,
        "final_drift_pct": 100.0 * err / L if L > 0 else float("nan"),
        "final_yaw_error_deg": float(np.degrees(yaw_err[-1])),
        "yaw_drift_deg_per_min": float(np.degrees(slope) * 60.0),
    }


def velocity_rmse(est: Trajectory, gt: Trajectory) -> dict[str, Any]:
    """RMSE of the base linear velocity in the base frame (invariant to yaw/translation alignment).

    Returns:
        ``{"norm": stats of ||v_est - v_gt|| (m/s), "rmse_xyz": per-axis RMSE (m/s)}``, or an empty dict
        when either trajectory has no velocity.
    """
    if est.v_base_in_base is None or gt.v_base_in_base is None:
        return {}
    d = est.v_base_in_base - gt.v_base_in_base
    return {"norm": _stats(np.linalg.norm(d, axis=1)), "rmse_xyz": [float(x) for x in np.sqrt(np.mean(d * d, 0))]}


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
    series' autocorrelation (:func:`robot_state_estimator.tools.consistency.effective_samples`) the band is
    ``chi2(K_eff dof) / K_eff``.

    Returns:
        ``((low, high), K_eff)``.
    """
    from robot_state_estimator.tools.consistency import effective_samples

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
    Carlo over runs is :mod:`robot_state_estimator.tools.consistency`.

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


def contact_precision_recall(est_contact: NDArray[Any], gt_contact: NDArray[Any]) -> dict[str, float]:
    """Precision and recall of boolean contact states (positive = in contact).

    Args:
        est_contact: (N,) or (N, F) estimated contact flags.
        gt_contact: same shape, ground-truth flags.

    Returns:
        ``{"precision", "recall", "f1", "tp", "fp", "fn"}`` over all entries (NaN when undefined).
    """
    e = np.asarray(est_contact, dtype=bool)
    g = np.asarray(gt_contact, dtype=bool)
    if e.shape != g.shape:
        raise MetricsError(f"contact arrays differ in shape: {e.shape} vs {g.shape}")
    tp = int(np.sum(e & g))
    fp = int(np.sum(e & ~g))
    fn = int(np.sum(~e & g))
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * p * r / (p + r) if (tp and (p + r) > 0) else float("nan")
    return {"precision": p, "recall": r, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


# ----------------------------------------------------------------------------------------------------------
# All together
# ----------------------------------------------------------------------------------------------------------
def evaluate(
    est: Trajectory,
    gt: Trajectory,
    *,
    time_alignment: str = "none",
    max_offset_s: float = 5.0,
    max_rate_deviation: float = 0.1,
    reference_yaw_rate: tuple[FloatArray, FloatArray] | None = None,
    rpe_distances_m: tuple[float, ...] = (1.0, 10.0),
    rpe_windows_s: tuple[float, ...] = (1.0, 10.0),
    with_nees: bool = False,
) -> dict[str, Any]:
    """Every metric of this module in one JSON-serialisable dict.

    Args:
        est: the estimate.
        gt: the ground truth.
        time_alignment: "none" (stamps are trusted), "offset" (search an offset on yaw rate),
            "offset+rate" (ground truth without stamps, rows evenly spread) or "warp" (ground truth without
            stamps whose rows are not evenly spread: offset+rate, then a piecewise-linear clock fitted on yaw,
            :func:`fit_time_warp`).
        max_offset_s, max_rate_deviation: search ranges of the time alignment.
        reference_yaw_rate: align on this ``(t_s, yaw rate)`` instead of the estimate's (see
            :func:`align_time`).
        rpe_distances_m: RPE travelled distances, m.
        rpe_windows_s: RPE time windows, s.
        with_nees: also compute the NEES in the estimator's own frame (no spatial alignment).

    Returns:
        ``{"time_alignment", "n_pairs", "duration_s", "path_length_m", "ate_4dof", "ate_6dof",
        "alignment_4dof", "scale_7dof", "drift", "rpe", "velocity", "nees"?}``; ``ate_4dof.trans.rmse`` is the headline
        ATE, also given as ``ate_4dof_pct`` of the path length.

    Raises:
        MetricsError: no overlap, bad names.
    """
    if time_alignment == "none":
        ta = TimeAlignment(offset_s=0.0)
    elif time_alignment in TIME_ALIGNMENTS:
        ta = align_time(
            est,
            gt,
            estimate_rate=time_alignment == "offset+rate",
            warp=time_alignment == "warp",
            max_offset_s=max_offset_s,
            max_rate_deviation=max_rate_deviation,
            reference_yaw_rate=reference_yaw_rate,
        )
    else:
        raise MetricsError(f"unknown time alignment {time_alignment!r}; use none, {', '.join(TIME_ALIGNMENTS)}")
    # a search that ends on the edge of its range has probably not found the clock: say so with the metrics
    at_bound = time_alignment in ("offset", "offset+rate") and _at_search_bound(
        ta.offset_s, ta.scale if time_alignment == "offset+rate" else 1.0, max_offset_s, max_rate_deviation
    )
    if time_alignment == "warp" and ta.knots_s is not None:
        # a warp started from an offset+rate search on its edge, or whose local rates all sit on the edge (the
        # prior held them at such a start), has not found the clock either
        kn, km = ta.knots_s
        rates = np.diff(km) / np.diff(kn)
        edge = 1.0 + np.sign(rates - 1.0) * max_rate_deviation
        at_bound = bool(np.all(np.abs(rates - edge) <= 1e-3 * max_rate_deviation)) or (
            ta.warp_start is not None and _at_search_bound(*ta.warp_start, max_offset_s, max_rate_deviation)
        )
    gt_t = ta.apply(gt) if time_alignment != "none" else gt
    e, g = associate(est, gt_t)
    a4 = align_trajectory(e, g, dof="4dof")
    a6 = align_trajectory(e, g, dof="6dof")
    e4 = a4.apply(e)
    L = path_length(g.p_world_base)
    ate4 = ate(e4, g)
    out: dict[str, Any] = {
        "time_alignment": {"mode": time_alignment, **ta.as_dict(), "at_search_bound": at_bound},
        "n_pairs": len(g),
        "duration_s": g.duration_s,
        "path_length_m": L,
        "ate_4dof": ate4,
        "ate_4dof_pct": 100.0 * ate4["trans"]["rmse"] / L if L > 0 else float("nan"),
        "ate_6dof": ate(a6.apply(e), g),
        "alignment_4dof": {"yaw_deg": a4.yaw_deg, "t": [float(x) for x in a4.t]},
        "scale_7dof": align_trajectory(e, g, dof="7dof").scale if len(g) >= 3 else float("nan"),
        "final_error_4dof_m": float(np.linalg.norm(e4.p_world_base[-1] - g.p_world_base[-1])),
        "drift": final_drift(e, g),
        "rpe": [rpe(e, g, delta=d, unit="m") for d in rpe_distances_m]
        + [rpe(e, g, delta=d, unit="s") for d in rpe_windows_s],
        "velocity": velocity_rmse(e, g),
    }
    if with_nees:
        out["nees"] = state_nees(e, g)
    return out


def _at_search_bound(offset_s: float, scale: float, max_offset_s: float, max_rate_deviation: float) -> bool:
    """Whether an offset (s) or rate lies on the edge of its search range (to 0.1 % of the range)."""
    return abs(offset_s) >= max_offset_s * (1.0 - 1e-3) or abs(scale - 1.0) >= max_rate_deviation * (1.0 - 1e-3)


def _rpe_pct(r: dict[str, Any]) -> str:
    """``x.xx % of the y.yy m mean travel``: an RPE's translation RMSE over its pairs' mean ground-truth travel."""
    pct, length = r.get("trans_rmse_pct", float("nan")), r.get("mean_length_m", float("nan"))
    if pct != pct:
        return "% n/a: the ground truth does not move"
    return f"{pct:.2f} % of the {length:.3g} m mean travel"


#: s, an RPE whose pairs span less time than this is "short-range": with ground truth without stamps its error is
#: dominated by the rows' unknown local timing (see :func:`metric_caveats`)
SHORT_RANGE_S = 10.0
#: m, a path shorter than this makes "% of path" figures not meaningful (a standing or barely moving run)
SHORT_PATH_M = 1.0


def metric_caveats(result: dict[str, Any]) -> dict[str, str]:
    """Row label of :func:`format_table` -> why that metric is not meaningful for this ground truth (printed under
    the row, and in the JSON as ``caveats``):

    - ground truth without stamps (``result["ground_truth_stamped"]`` False, e.g. mocap rows spread evenly over the
      recording; or a time alignment that fits a rate, ``offset+rate`` / ``warp``): each row's time is only known
      from that spread and the fitted clock, so its local timing error is unknown; where it changes by ``dt``
      within the ``T`` seconds of an RPE pair, the ground truth's own travel over the pair is off by ``v dt``, a
      relative error of ``dt / T`` (10 % for 0.1 s over 1 s). The RPE rows whose pairs span less than
      ``SHORT_RANGE_S`` (a time window, or a distance over the mean speed) measure that timing more than the
      estimator;
    - a ground-truth path shorter than ``SHORT_PATH_M``: the "% of path" rows divide by almost nothing.
    """
    caveats: dict[str, str] = {}
    mode = result.get("time_alignment", {}).get("mode", "none")
    stamped = bool(result.get("ground_truth_stamped", mode not in ("offset+rate", "warp")))
    duration = float(result.get("duration_s", 0.0) or 0.0)
    length = float(result.get("path_length_m", 0.0) or 0.0)
    speed = length / duration if duration > 0 else 0.0
    if not stamped:
        for r in result.get("rpe", []):
            if not r["trans"]["n"]:
                continue
            span_s = r["delta"] if r["unit"] == "s" else (r["delta"] / speed if speed > 0 else float("inf"))
            if span_s < SHORT_RANGE_S:
                caveats[f"RPE {r['delta']:g} {r['unit']}"] = (
                    f"not meaningful with ground truth without stamps: a timing error of its rows that changes by 0.1 "
                    f"s over the {span_s:.2g} s of a pair alone gives {100 * 0.1 / span_s:.0f} % of the travel; "
                    f"compare the RPE over {SHORT_RANGE_S:g} s or more, and the ATE"
                )
    if 0.0 < length < SHORT_PATH_M:
        why = f"not meaningful: the ground truth travels only {length:.3g} m"
        caveats["ATE 4-DoF % of path"] = why
        caveats["final drift % of path"] = why
    return caveats


def format_table(result: dict[str, Any], *, title: str = "") -> str:
    """A plain-text table of the headline numbers of :func:`evaluate`'s result."""
    rows: list[tuple[str, str]] = []

    def add(name: str, value: float, fmt: str = "{:.3f}", unit: str = "", why_nan: str = "") -> None:
        if value != value:  # NaN: no unit after "n/a"
            rows.append((name, "n/a" + (f" ({why_nan})" if why_nan else "")))
        else:
            rows.append((name, fmt.format(value) + (f" {unit}" if unit else "")))

    ta = result.get("time_alignment", {})
    if ta.get("mode", "none") != "none":
        add("time offset", ta["offset_s"], "{:+.4f}", "s")
        if ta.get("scale", 1.0) != 1.0:
            add("time scale" + (" (mean of the warp)" if "knots_s" in ta else ""), ta["scale"], "{:.5f}")
        if "knots_s" in ta:
            kn, km = (np.asarray(k) for k in ta["knots_s"])
            rates = np.diff(km) / np.diff(kn)
            rows.append(("time warp local rates", f"{rates.min():.3f} .. {rates.max():.3f} ({len(kn)} knots)"))
        if ta.get("at_search_bound"):
            rows.append(("time alignment", "WARNING: on the edge of its search range (offset or rate): unreliable"))
        if ta.get("not_determined"):
            rows.append(
                (
                    "time alignment",
                    f"WARNING: offset not determined: {ta['not_determined']}; align on a run with turns, or "
                    "trust the stamps (--time-align none)",
                )
            )
    add("duration", result["duration_s"], "{:.2f}", "s")
    add("path length", result["path_length_m"], "{:.2f}", "m")
    add("ATE 4-DoF RMSE", result["ate_4dof"]["trans"]["rmse"], "{:.4f}", "m")
    add("ATE 4-DoF % of path", result["ate_4dof_pct"], "{:.2f}", "%", "the ground truth does not move")
    xyz = result["ate_4dof"]["rmse_xyz"]
    rows.append(("ATE 4-DoF x/y/z RMSE", f"{xyz[0]:.4f} / {xyz[1]:.4f} / {xyz[2]:.4f} m"))
    add("ATE 4-DoF rotation RMSE", result["ate_4dof"]["rot_deg"]["rmse"], "{:.2f}", "deg")
    add("ATE 6-DoF RMSE", result["ate_6dof"]["trans"]["rmse"], "{:.4f}", "m")
    if "scale_7dof" in result:
        add("scale (Sim(3) alignment)", result["scale_7dof"], "{:.4f}")
    add("final error (4-DoF aligned)", result["final_error_4dof_m"], "{:.4f}", "m")
    d = result["drift"]
    add("final drift (origin aligned)", d["final_error_m"], "{:.4f}", "m")
    add("final drift % of path", d["final_drift_pct"], "{:.2f}", "%", "the ground truth does not move")
    add("final yaw error", d["final_yaw_error_deg"], "{:+.2f}", "deg")
    add("yaw drift", d["yaw_drift_deg_per_min"], "{:+.2f}", "deg/min")
    for r in result["rpe"]:
        if r["trans"]["n"]:
            label = f"RPE {r['delta']:g} {r['unit']}"
            rows.append(
                (
                    label,
                    f"{r['trans']['rmse']:.4f} m RMSE ({_rpe_pct(r)}), {r['rot_deg']['rmse']:.2f} deg",
                )
            )
    v = result.get("velocity") or {}
    if v:
        add("velocity RMSE (base frame)", v["norm"]["rmse"], "{:.4f}", "m/s")
    for k, c in (result.get("contacts") or {}).items():
        rows.append((f"contacts {k} precision/recall", f"{c['precision']:.3f} / {c['recall']:.3f}"))
    for k, n in (result.get("nees") or {}).items():
        lo, hi = n["band95"]
        rows.append(
            (
                f"NEES {k} ({n.get('dof', 3)} DoF)",
                f"{n['mean']:.2f} (95 % band of this time average {lo:.2f}-{hi:.2f}, "
                f"{n.get('k_eff', 1.0):.0f} independent samples)",
            )
        )
    caveats = metric_caveats(result)
    w = max(len(r[0]) for r in rows)
    lines = [title] if title else []
    for name, val in rows:
        lines.append(f"  {name:<{w}}  {val}")
        if name in caveats:  # next to the metric it qualifies
            lines.append(f"  {'':<{w}}  ^ caveat: {caveats[name]}")
    return "\n".join(lines)
