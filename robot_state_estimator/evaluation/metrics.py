"""Trajectory error metrics: ATE, RPE, final drift, velocity RMSE, contact precision/recall, and
:func:`evaluate`, which time-aligns, pairs, aligns and computes them all.

Pure numpy/scipy (no ROS, no pinocchio), so the core's tests can use it. Frames follow
docs/ARCHITECTURE.md: positions and orientations of the base B in the world ``W`` = ``odom`` (ENU),
base velocities in B. Times in this module are float64 seconds (evaluation works on differences of a few
seconds; convert ``stamp_ns`` with ``robot_state_estimator.common.time.ns_to_s`` at the edges).

Sources:
    - J. Sturm, N. Engelhard, F. Endres, W. Burgard, D. Cremers, "A benchmark for the evaluation of RGB-D
      SLAM systems", IROS 2012 (ATE and RPE definitions, the TUM trajectory format).
    - Z. Zhang, D. Scaramuzza, "A tutorial on quantitative trajectory evaluation for visual(-inertial)
      odometry", IROS 2018 (4-DoF yaw + translation alignment for VIO-like odometry, RPE over travelled
      distance, drift as a percentage of the path length).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.evaluation.alignment import align_trajectory, associate, origin_alignment
from robot_state_estimator.evaluation.consistency import state_nees
from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.time_alignment import TIME_ALIGNMENTS, TimeAlignment, align_time
from robot_state_estimator.evaluation.trajectory import Trajectory, path_length, wrap_angle, yaw_of

FloatArray = NDArray[np.float64]


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
    ta = _align_clocks(
        est,
        gt,
        time_alignment,
        max_offset_s=max_offset_s,
        max_rate_deviation=max_rate_deviation,
        reference_yaw_rate=reference_yaw_rate,
    )
    at_bound = _at_search_bound_of(ta, time_alignment, max_offset_s, max_rate_deviation)
    gt_t = ta.apply(gt) if time_alignment != "none" else gt
    e, g = associate(est, gt_t)
    out: dict[str, Any] = {
        "time_alignment": {"mode": time_alignment, **ta.as_dict(), "at_search_bound": at_bound},
        **_pair_metrics(e, g, rpe_distances_m=rpe_distances_m, rpe_windows_s=rpe_windows_s),
    }
    if with_nees:
        out["nees"] = state_nees(e, g)
    return out


def _align_clocks(
    est: Trajectory,
    gt: Trajectory,
    time_alignment: str,
    *,
    max_offset_s: float,
    max_rate_deviation: float,
    reference_yaw_rate: tuple[FloatArray, FloatArray] | None,
) -> TimeAlignment:
    """The time alignment of ``gt`` to ``est`` that ``time_alignment`` asks for (see :func:`evaluate`; "none": the
    identity).

    Raises:
        MetricsError: an unknown mode; the search found no overlap (:func:`align_time`).
    """
    if time_alignment == "none":
        return TimeAlignment(offset_s=0.0)
    if time_alignment in TIME_ALIGNMENTS:
        return align_time(
            est,
            gt,
            estimate_rate=time_alignment == "offset+rate",
            warp=time_alignment == "warp",
            max_offset_s=max_offset_s,
            max_rate_deviation=max_rate_deviation,
            reference_yaw_rate=reference_yaw_rate,
        )
    raise MetricsError(f"unknown time alignment {time_alignment!r}; use none, {', '.join(TIME_ALIGNMENTS)}")


def _at_search_bound_of(ta: TimeAlignment, time_alignment: str, max_offset_s: float, max_rate_deviation: float) -> bool:
    """Whether the time alignment ``ta`` (of mode ``time_alignment``) ended on the edge of its search range (s,
    rate factor): a search that ends there has probably not found the clock, which the metrics then say."""
    if time_alignment == "warp" and ta.knots_s is not None:
        # a warp started from an offset+rate search on its edge, or whose local rates all sit on the edge (the
        # prior held them at such a start), has not found the clock either
        kn, km = ta.knots_s
        rates = np.diff(km) / np.diff(kn)
        edge = 1.0 + np.sign(rates - 1.0) * max_rate_deviation
        return bool(np.all(np.abs(rates - edge) <= 1e-3 * max_rate_deviation)) or (
            ta.warp_start is not None and _at_search_bound(*ta.warp_start, max_offset_s, max_rate_deviation)
        )
    return time_alignment in ("offset", "offset+rate") and _at_search_bound(
        ta.offset_s, ta.scale if time_alignment == "offset+rate" else 1.0, max_offset_s, max_rate_deviation
    )


def _pair_metrics(
    e: Trajectory, g: Trajectory, *, rpe_distances_m: tuple[float, ...], rpe_windows_s: tuple[float, ...]
) -> dict[str, Any]:
    """The metrics of paired, time-aligned poses (``e[i]`` and ``g[i]`` at one time; positions in m, in the world
    frame W): ATE after 4-DoF and 6-DoF alignment, the 7-DoF scale, the final error and drift, the RPE over
    ``rpe_distances_m`` (m) and ``rpe_windows_s`` (s), the velocity RMSE; the keys of :func:`evaluate` after
    ``time_alignment``, in its order."""
    a4 = align_trajectory(e, g, dof="4dof")
    a6 = align_trajectory(e, g, dof="6dof")
    e4 = a4.apply(e)
    L = path_length(g.p_world_base)
    ate4 = ate(e4, g)
    return {
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


def _at_search_bound(offset_s: float, scale: float, max_offset_s: float, max_rate_deviation: float) -> bool:
    """Whether an offset (s) or rate lies on the edge of its search range (to 0.1 % of the range)."""
    return abs(offset_s) >= max_offset_s * (1.0 - 1e-3) or abs(scale - 1.0) >= max_rate_deviation * (1.0 - 1e-3)
