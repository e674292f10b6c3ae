"""The metrics of one run as a plain-text table, with the caveats of the metrics that are not meaningful for the
ground truth given (next to the row they qualify, and in the JSON as ``caveats``)."""

from __future__ import annotations

from typing import Any

import numpy as np


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
    - a ground-truth path shorter than ``SHORT_PATH_M``: the "% of path" rows divide by almost nothing;
    - a NEES below its band: the reported covariance is wider than the error (conservative); the usual cause in a
      simulated run is a noise of the settings above the simulated one (the filter's IMU noise floors above the
      simulator's datasheet noise, event ``imu_noise_below_floor``; a robot configuration's contact noise, e.g.
      ``config/go1.yaml``'s 0.1 m/s against the simulated feet's 0.003) or a wide initial prior (event
      ``initialized_moving``; docs/uncertainty.md); for ``attitude``, which holds the unobservable yaw, also its
      variance growing with the gyroscope z bias's prior;
    - a NEES above its band: the reported covariance is narrower than the error (over-confident, the dangerous
      direction for whatever consumes it); in a simulated run with ``--real-errors``, the settings not told the
      simulated errors (docs/TOOLS.md, "A real robot's errors"). Not caveats of meaning: of reading.
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
    for k, n in (result.get("nees") or {}).items():
        lo, hi = n["band95"]
        row = f"NEES {k} ({n.get('dof', 3)} DoF)"
        if n["mean"] < lo:
            caveats[row] = (
                f"below the band ({_apart(n['mean'], lo, '<')}): the reported uncertainty is wider than the error "
                "(conservative); in a simulated run usually a noise of the settings above the simulated one (the "
                "IMU noise floors, event imu_noise_below_floor; a robot config's contact noise) or a wide initial "
                "prior (event initialized_moving)"
                + (
                    "; this block holds the yaw, which nothing observes: its variance grows with the gyroscope z "
                    "bias's prior, one run's error with that run's own bias; compare roll_pitch"
                    if k == "attitude"
                    else ""
                )
                + "; docs/uncertainty.md"
            )
        elif n["mean"] > hi:
            caveats[row] = (
                f"above the band ({_apart(n['mean'], hi, '>')}): the reported uncertainty is narrower than the error "
                "(over-confident); with simulate --real-errors, tell the filter the simulated errors "
                '(docs/TOOLS.md, "A real robot\'s errors")'
            )
    if 0.0 < length < SHORT_PATH_M:
        why = f"not meaningful: the ground truth travels only {length:.3g} m"
        caveats["ATE 4-DoF % of path"] = why
        caveats["final drift % of path"] = why
    return caveats


def _apart(value: float, bound: float, sign: str) -> str:
    """``"value sign bound"`` with two decimals, or as many more (up to six) as it takes for the two to differ as
    printed (``1.303 < 1.304``, not ``1.30 < 1.30``)."""
    digits = 2
    while digits < 6 and f"{value:.{digits}f}" == f"{bound:.{digits}f}":
        digits += 1
    return f"{value:.{digits}f} {sign} {bound:.{digits}f}"


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
