"""Plots of several runs against one ground truth (``evaluate EST1 EST2 ... GT --plots DIR``), as evo's
``evo_ape ... --plot`` with several files.

- ``trajectories.png``: top view of the ground truth and of every run, each 4-DoF aligned onto it;
- ``errors.png``: per run over time: position error norm (m), rotation error (deg, the rotation ATE's angle) and,
  when both sides have velocities, velocity error norm (m/s, base frame); the legend gives each run's RMSE;
- per run, in ``<label>/``: ``position_error.png``, ``attitude_error.png``, ``velocity_error.png`` (3-sigma
  bands when the estimate carries covariances, e.g. an Odometry topic), ``attitude.png``, ``height.png``.

The errors are the metrics' (``plot_series.compare``: each run paired and aligned on its own, after its time
alignment), so the RMSE in a legend is the table's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from robot_state_estimator.evaluation import plot_series as S
from robot_state_estimator.evaluation import plots
from robot_state_estimator.evaluation.plots import _title, legend_outside, new_figure


def trajectories_figure(labels: Sequence[str], runs: Sequence[S.Comparison], *, title: str = "") -> Figure:
    """Top view (m): the ground truth (of the first run) and every run's aligned estimate (line label = run)."""
    fig, ax = plt.subplots(figsize=(9, 6.5), layout="constrained")
    gt = S.thinned(runs[0].gt)
    ax.plot(gt.p_world_base[:, 0], gt.p_world_base[:, 1], "k-", lw=2.0, alpha=0.6, label="ground truth")
    for k, (label, c) in enumerate(zip(labels, runs)):
        e = S.thinned(c.est)
        ax.plot(e.p_world_base[:, 0], e.p_world_base[:, 1], f"C{k}-", lw=1.0, label=label)
    ax.plot(gt.p_world_base[0, 0], gt.p_world_base[0, 1], "go", label="start")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    fig.suptitle(_title(title, "top view, each estimate 4-DoF aligned"))
    return fig


def errors_figure(labels: Sequence[str], runs: Sequence[S.Comparison], *, t0: float, title: str = "") -> Figure:
    """Error norms over time per run: position (m), rotation (deg), velocity (m/s, when known). Line labels
    ``"<run> (RMSE ...)"``, ``gid`` ``"<run>:position"``, ``":rotation"``, ``":velocity"``."""
    vel = [S.velocity_error(c) for c in runs]
    rows = 3 if any(v is not None for v in vel) else 2
    fig, axes = new_figure(rows, width=11.0, row_height=2.4)
    for k, (label, c, v) in enumerate(zip(labels, runs, vel)):
        parts = [
            ("position", np.linalg.norm(S.position_error(c).error, axis=1), "m"),
            ("rotation", np.degrees(np.linalg.norm(S.attitude_error(c).error, axis=1)), "deg"),
        ]
        if v is not None:
            parts.append(("velocity", np.linalg.norm(v.error, axis=1), "m/s"))
        for ax, (what, e, unit) in zip(axes, parts):
            rmse = float(np.sqrt(np.mean(e * e)))
            (line,) = ax.plot(c.gt.t_s - t0, e, f"C{k}-", lw=0.9, label=f"{label} (RMSE {rmse:.3g} {unit})")
            line.set_gid(f"{label}:{what}")
    names = ("position error [m]", "rotation error [deg]", "velocity error [m/s]")
    for ax, name in zip(axes, names):
        ax.set_ylabel(name)
        ax.set_ylim(bottom=0.0)
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(title, "error norms against the ground truth (4-DoF aligned; velocity in the base frame)"))
    return fig


def _folder_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "run"


def write_comparison_plots(
    folder: str | Path, labels: Sequence[str], runs: Sequence[S.Comparison], *, title: str = ""
) -> list[Path]:
    """Write the figures of the module docstring into ``folder``; returns the files."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    t0 = min(float(c.gt.t_s[0]) for c in runs)
    files = [
        plots.save(trajectories_figure(labels, runs, title=title), folder / "trajectories.png"),
        plots.save(errors_figure(labels, runs, t0=t0, title=title), folder / "errors.png"),
    ]
    used: set[str] = set()
    for label, c in zip(labels, runs):
        name = _folder_name(label)
        while name in used:
            name += "_"
        used.add(name)
        sub = folder / name
        sub.mkdir(exist_ok=True)
        t = _title(title, label)
        figs = {
            "position_error": plots.error_figure(
                S.position_error(c), what="position error", t0=t0, title=t, unobservable=(0, 1)
            ),
            "attitude_error": plots.error_figure(
                S.attitude_error(c),
                what="attitude error",
                t0=t0,
                title=t,
                scale=np.degrees(1.0),
                unit="deg",
                unobservable=(2,),
            ),
            "attitude": plots.attitude_figure(c.est, c.gt, t0=t0, title=t),
            "height": plots.height_figure(c.est, c.gt, t0=t0, title=t),
        }
        v = S.velocity_error(c)
        if v is not None:
            figs["velocity_error"] = plots.error_figure(v, what="velocity error", t0=t0, title=t)
        files += [plots.save(fig, sub / f"{n}.png") for n, fig in figs.items()]
    return files
