"""Several runs against one ground truth: one table (a column per run), as evo's ``evo_ape ... est1 est2``.

The numbers are those of ``metrics.evaluate`` for each run (each run time- and space-aligned on its own, as
``report.format_table`` reports a single run); the table keeps the headline ones, with the units in the row
names so the columns hold numbers only. A run's warnings (time alignment on its search edge or not determined)
and the caveats of ``report.metric_caveats`` (metrics not meaningful for its ground truth) follow the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robot_state_estimator.evaluation.report import metric_caveats

#: a missing metric's cell
NA = "-"


def run_labels(paths: Sequence[str | Path], labels: Sequence[str] | None = None) -> list[str]:
    """Column labels: ``labels`` when given (one per run), else the files' stems, lengthened by their folders
    until unique (``a/est.tum``, ``b/est.tum`` -> ``a/est``, ``b/est``).

    Raises:
        ValueError: ``labels`` has another length than ``paths`` or repeats a label.
    """
    if labels:
        if len(labels) != len(paths):
            raise ValueError(f"--labels gives {len(labels)} labels for {len(paths)} estimates")
        if len(set(labels)) != len(labels):
            raise ValueError(f"--labels repeats a label: {list(labels)}")
        return list(labels)
    parts = [Path(p).resolve().with_suffix("").parts for p in paths]
    for n in range(1, max(len(p) for p in parts) + 1):
        out = ["/".join(p[-n:]) for p in parts]
        if len(set(out)) == len(out):
            return out
    return [str(p) for p in paths]  # the same file twice


def _num(value: Any, fmt: str) -> str:
    if value is None:
        return NA
    try:
        v = float(value)
    except (TypeError, ValueError):
        return NA
    return "n/a" if v != v else fmt.format(v)


def comparison_rows(results: Sequence[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """``[(metric name with unit, [cell per run])]`` of ``metrics.evaluate`` results (plus ``contacts`` when a
    result has them); rows no run has are left out."""
    rows: list[tuple[str, list[str]]] = []

    def add(name: str, get: Any, fmt: str) -> None:
        cells = []
        for r in results:
            try:
                cells.append(_num(get(r), fmt))
            except (KeyError, IndexError, TypeError):
                cells.append(NA)
        if any(c != NA for c in cells):
            rows.append((name, cells))

    add(
        "time offset [s]",
        lambda r: r["time_alignment"]["offset_s"] if r["time_alignment"]["mode"] != "none" else None,
        "{:+.4f}",
    )
    add(
        "time scale",
        lambda r: r["time_alignment"]["scale"] if r["time_alignment"]["mode"] != "none" else None,
        "{:.5f}",
    )
    add("duration [s]", lambda r: r["duration_s"], "{:.2f}")
    add("path length [m]", lambda r: r["path_length_m"], "{:.2f}")
    add("ATE 4-DoF RMSE [m]", lambda r: r["ate_4dof"]["trans"]["rmse"], "{:.4f}")
    add("ATE 4-DoF [% of path]", lambda r: r["ate_4dof_pct"], "{:.2f}")
    add("ATE 4-DoF max [m]", lambda r: r["ate_4dof"]["trans"]["max"], "{:.4f}")
    add("ATE rotation RMSE [deg]", lambda r: r["ate_4dof"]["rot_deg"]["rmse"], "{:.2f}")
    add("ATE 6-DoF RMSE [m]", lambda r: r["ate_6dof"]["trans"]["rmse"], "{:.4f}")
    add("Sim(3) scale", lambda r: r["scale_7dof"], "{:.4f}")
    add("final drift, origin aligned [m]", lambda r: r["drift"]["final_error_m"], "{:.4f}")
    add("final drift [% of path]", lambda r: r["drift"]["final_drift_pct"], "{:.2f}")
    add("yaw drift [deg/min]", lambda r: r["drift"]["yaw_drift_deg_per_min"], "{:+.2f}")
    keys: list[tuple[float, str]] = []
    for r in results:
        for p in r.get("rpe", []):
            if (p["delta"], p["unit"]) not in keys:
                keys.append((p["delta"], p["unit"]))
    for delta, unit in keys:

        def pick(r: dict[str, Any], delta: float = delta, unit: str = unit) -> dict[str, Any] | None:
            p: dict[str, Any]
            for p in r.get("rpe", []):
                if p["delta"] == delta and p["unit"] == unit and p["trans"]["n"]:
                    return p
            return None

        add(f"RPE {delta:g} {unit} RMSE [m]", lambda r, pick=pick: pick(r)["trans"]["rmse"], "{:.4f}")
        add(f"RPE {delta:g} {unit} [% of travel]", lambda r, pick=pick: pick(r)["trans_rmse_pct"], "{:.2f}")
        add(f"RPE {delta:g} {unit} rotation [deg]", lambda r, pick=pick: pick(r)["rot_deg"]["rmse"], "{:.2f}")
    add("velocity RMSE, base frame [m/s]", lambda r: r["velocity"]["norm"]["rmse"], "{:.4f}")
    add("contacts precision", lambda r: r["contacts"]["all"]["precision"], "{:.3f}")
    add("contacts recall", lambda r: r["contacts"]["all"]["recall"], "{:.3f}")
    parts: list[tuple[str, int]] = []  # (name, dof) of the NEES parts any run has, in order
    for r in results:
        for name, n in (r.get("nees") or {}).items():
            if name not in [p for p, _ in parts]:
                parts.append((name, int(n.get("dof", 3))))
    for name, dof in parts:
        add(f"NEES {name.replace('_', '/')} ({dof} DoF, mean)", lambda r, name=name: r["nees"][name]["mean"], "{:.2f}")
    return rows


def warnings_of(result: dict[str, Any]) -> list[str]:
    """The warnings ``report.format_table`` prints with a run's numbers (time alignment unreliable)."""
    ta = result.get("time_alignment", {})
    out = []
    if ta.get("at_search_bound"):
        out.append("time alignment on the edge of its search range (offset or rate): unreliable")
    if ta.get("not_determined"):
        out.append(f"time offset not determined: {ta['not_determined']}")
    return out


def format_comparison(labels: Sequence[str], results: Sequence[dict[str, Any]], *, title: str = "") -> str:
    """The table: a row per metric, a column per run (right-aligned numbers), then each run's warnings."""
    rows = comparison_rows(results)
    head = ("metric", *labels)
    width0 = max(len(head[0]), *(len(name) for name, _ in rows))
    widths = [max(len(labels[k]), *(len(cells[k]) for _, cells in rows)) for k in range(len(labels))]
    lines = [title] if title else []
    lines.append("  " + head[0].ljust(width0) + "".join("  " + h.rjust(w) for h, w in zip(labels, widths)))
    lines.append("  " + "-" * (width0 + sum(w + 2 for w in widths)))
    for name, cells in rows:
        lines.append("  " + name.ljust(width0) + "".join("  " + c.rjust(w) for c, w in zip(cells, widths)))
    for label, r in zip(labels, results):
        for w in warnings_of(r):
            lines.append(f"  WARNING {label}: {w}")
    lines += caveat_lines(labels, results)
    return "\n".join(lines)


def caveat_lines(labels: Sequence[str], results: Sequence[dict[str, Any]]) -> list[str]:
    """``report.metric_caveats`` of each run (the metrics not meaningful for its ground truth), once for all runs
    when they share it: ``caveat (label[, label]) METRIC: why``."""
    by_caveat: dict[tuple[str, str], list[str]] = {}
    for label, r in zip(labels, results):
        for name, why in metric_caveats(r).items():
            by_caveat.setdefault((name, why), []).append(label)
    who = {len(labels): "all runs"}
    return [
        f"  caveat ({who.get(len(runs), ', '.join(runs))}) {name}: {why}" for (name, why), runs in by_caveat.items()
    ]
