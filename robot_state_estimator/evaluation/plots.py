"""PNG plots of a replay (matplotlib, Agg backend: no display needed), the ones an estimation engineer reads first.

With ground truth, the errors are those of the metrics (``plot_series``: the estimate at the ground-truth stamps,
4-DoF aligned onto it, time-aligned as the evaluation was), with 3-sigma bands from the estimate's own covariance
in the same coordinates:

- ``top_view.png``: x-y of the estimate (4-DoF aligned) and the ground truth;
- ``height.png``: z over time, its 3-sigma band drawn but the view set by the curves (z is unobservable, its
  band grows without bound and would flatten them);
- ``position_error.png``, ``attitude_error.png`` (about the world axes), ``velocity_error.png`` (base frame):
  error per axis over time with +-3 sigma;
- ``attitude.png``: roll, pitch, yaw, estimate (3-sigma band) and ground truth;
- ``velocity.png``: base velocity in the base frame, estimate (3-sigma band) and ground truth;
- ``biases.png``: accelerometer and gyroscope biases (IMU frame), against their true values when known (the
  ``run.yaml`` of a simulated run);
- per foot (``plots_feet``): ``contacts.png`` (estimated against true contacts), ``nis.png``, and
  ``foot_forces.png`` when the run estimates forces (from joint torques) or knows the true ones.

Legends sit outside the axes, on the right. Each ``*_figure`` function returns the matplotlib Figure (tests
read its lines); :func:`plot_replay` writes them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from robot_state_estimator.evaluation import plot_series as S
from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.trajectory import Trajectory

DPI = 110
#: a +-3 sigma band wider than this many times the largest error is cut at that width (the error stays readable)
BAND_VIEW_FACTOR = 3.0
AXES = "xyz"


# --------------------------------------------------------------------------------------------- helpers
def new_figure(rows: int, *, width: float = 10.0, row_height: float = 2.2, sharex: bool = True) -> tuple[Figure, Any]:
    """A figure of ``rows`` stacked axes with constrained layout (room for legends outside on the right)."""
    fig, axes = plt.subplots(rows, 1, figsize=(width, 0.8 + row_height * rows), sharex=sharex, layout="constrained")
    return fig, np.atleast_1d(axes)


def legend_outside(ax: Axes, **kwargs: Any) -> None:
    """The axes' legend to the right of it, outside the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small", **kwargs)


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` as PNG and close it."""
    path = Path(path)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _title(title: str, what: str) -> str:
    return f"{title}: {what}" if title else what


def symmetric_view(error: np.ndarray, band: np.ndarray | None) -> tuple[float, bool]:
    """Half-height of a symmetric y view for an error and its +-band: the whole band when it is at most
    ``BAND_VIEW_FACTOR`` times the largest error, else that many times the error (``True``: the band is cut)."""
    e = float(np.nanmax(np.abs(error))) if np.size(error) else 0.0
    b = float(np.nanmax(band)) if band is not None and np.size(band) else 0.0
    e = e if np.isfinite(e) else 0.0
    b = b if np.isfinite(b) else 0.0
    if e <= 1e-12 * max(b, 1.0):  # no error to see: the band
        return (1.05 * b if b > 0 else 1.0), False
    if b <= BAND_VIEW_FACTOR * e:
        return 1.1 * max(e, b), False
    return 1.1 * BAND_VIEW_FACTOR * e, True


def error_figure(
    series: S.ErrorSeries,
    *,
    what: str,
    t0: float,
    title: str = "",
    scale: float = 1.0,
    unit: str | None = None,
    names: Sequence[str] = ("x", "y", "z"),
    unobservable: Sequence[int] = (),
) -> Figure:
    """Error per axis over time with the estimate's +-3 sigma band (``scale`` converts the unit, e.g. rad -> deg).

    Lines: ``error`` per axis (label with its RMSE), band ``+-3 sigma`` (label with the share of samples
    outside it); a band much wider than the error is cut (the label says so). The axes in ``unobservable``
    (position x, y and yaw for IMU + legs) get a note: their sigma grows from 0 at the start, while a
    whole-run alignment spreads the error over the run, so the error need not start inside the band.
    """
    unit = unit or series.unit
    fig, axes = new_figure(3)
    t = series.t_s - t0
    for k, ax in enumerate(axes):
        e = series.error[:, k] * scale
        ax.axhline(0.0, color="0.6", lw=0.6)
        band = None
        if series.sigma is not None:
            band = 3.0 * series.sigma[:, k] * scale
            out = 100.0 * float(np.mean(np.abs(e) > band))
            ax.fill_between(t, -band, band, color="C0", alpha=0.2, lw=0, label=f"+-3 sigma ({out:.1f} % outside)")
        rmse = float(np.sqrt(np.mean(e * e)))
        ax.plot(t, e, "C3-", lw=0.9, label=f"error (RMSE {rmse:.3g} {unit})")
        half, cut = symmetric_view(e, band)
        ax.set_ylim(-half, half)
        if cut and band is not None:
            med, top = float(np.nanmedian(band)), float(np.nanmax(band))
            ax.plot([], [], " ", label=f"band cut: 3 sigma median {med:.3g}, max {top:.3g} {unit}")
        if k in unobservable and band is not None:
            ax.plot(
                [], [], " ", label="unobservable: sigma grows from 0 at the start,\nthe error is aligned over the run"
            )
        ax.set_ylabel(f"{names[k]} [{unit}]")
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(title, f"{what}, estimate - ground truth, {series.frame}"))
    return fig


# --------------------------------------------------------------------------------------------- figures
def top_view_figure(est: Trajectory, gt: Trajectory | None, *, title: str = "") -> Figure:
    """x-y plot (m), the estimate 4-DoF aligned onto the ground truth when there is one."""
    e = S.thinned(_aligned(est, gt))
    gt = S.thinned(gt) if gt is not None else None
    fig, ax = plt.subplots(figsize=(8, 6), layout="constrained")
    if gt is not None:
        ax.plot(gt.p_world_base[:, 0], gt.p_world_base[:, 1], "k-", lw=1.5, label="ground truth")
    label = "estimate" + (" (4-DoF aligned)" if gt is not None else "")
    ax.plot(e.p_world_base[:, 0], e.p_world_base[:, 1], "C0-", lw=1, label=label)
    ax.plot(e.p_world_base[0, 0], e.p_world_base[0, 1], "go", label="start")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    fig.suptitle(_title(title, "top view"))
    return fig


def _aligned(est: Trajectory, gt: Trajectory | None) -> Trajectory:
    if gt is None:
        return est
    try:
        return S.compare(est, gt).est
    except MetricsError:
        return est


def height_figure(est: Trajectory, gt: Trajectory | None, *, t0: float, title: str = "") -> Figure:
    """Base height (m) over time, estimate (aligned as in the top view) and ground truth.

    The estimate's 3-sigma band is drawn, but the view is set by the curves: z is not observable from IMU and
    legs, its sigma grows all run long and would flatten the curves (the label gives its largest value).
    """
    e = S.thinned(_aligned(est, gt))
    gt = S.thinned(gt) if gt is not None else None
    fig, axes = new_figure(1, row_height=3.2)
    ax = axes[0]
    z = e.p_world_base[:, 2]
    curves = [z] + ([gt.p_world_base[:, 2]] if gt is not None else [])
    lo = min(float(np.min(c)) for c in curves)
    hi = max(float(np.max(c)) for c in curves)
    pad = max(0.25 * (hi - lo), 1e-3)
    if e.pose_covariance is not None:
        s = 3.0 * np.sqrt(np.maximum(e.pose_covariance[:, 2, 2], 0.0))
        cut = bool(np.any(z - s < lo - pad) or np.any(z + s > hi + pad))
        label = "estimate +-3 sigma" + (f" (cut: reaches +-{float(np.max(s)):.3g} m)" if cut else "")
        ax.fill_between(e.t_s - t0, z - s, z + s, color="C0", alpha=0.15, lw=0, label=label)
    if gt is not None:
        ax.plot(gt.t_s - t0, gt.p_world_base[:, 2], "k-", lw=1.2, label="ground truth")
    ax.plot(e.t_s - t0, z, "C0-", lw=1, label="estimate" + (" (4-DoF aligned)" if gt is not None else ""))
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("z [m]")
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    fig.suptitle(_title(title, "base height"))
    return fig


def attitude_figure(est: Trajectory, gt: Trajectory | None, *, t0: float, title: str = "") -> Figure:
    """Roll, pitch, yaw (deg) of the estimate (aligned, 3-sigma band) and of the ground truth."""
    e = S.thinned(_aligned(est, gt))
    gt = S.thinned(gt) if gt is not None else None
    g_rpy = S.roll_pitch_yaw(gt) if gt is not None else None
    near = None
    if g_rpy is not None:
        near = float(np.interp(e.t_s[0], gt.t_s, g_rpy[:, 2]))  # type: ignore[union-attr]
    rpy = np.degrees(S.roll_pitch_yaw(e, near=near))
    sig = S.roll_pitch_yaw_sigma(e)
    fig, axes = new_figure(3)
    for k, (ax, name) in enumerate(zip(axes, ("roll", "pitch", "yaw"))):
        if sig is not None:
            s = 3.0 * np.degrees(sig[:, k])
            ax.fill_between(e.t_s - t0, rpy[:, k] - s, rpy[:, k] + s, color="C0", alpha=0.2, lw=0, label="+-3 sigma")
        if gt is not None and g_rpy is not None:
            ax.plot(gt.t_s - t0, np.degrees(g_rpy[:, k]), "k-", lw=1.0, label="ground truth")
        ax.plot(e.t_s - t0, rpy[:, k], "C0-", lw=0.8, label="estimate")
        ax.set_ylabel(f"{name} [deg]")
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    axes[-1].set_xlabel("time [s]")
    frame = "ZYX angles of R_world_base" + (", estimate 4-DoF aligned" if gt is not None else "")
    fig.suptitle(_title(title, f"attitude ({frame})"))
    return fig


def velocity_figure(est: Trajectory, gt: Trajectory | None, *, t0: float, title: str = "") -> Figure:
    """Base linear velocity (m/s) in the base frame, 3-sigma bands from the twist covariance, and the ground
    truth's."""
    est = S.thinned(est)
    gt = S.thinned(gt) if gt is not None else None
    fig, axes = new_figure(3)
    v = est.v_base_in_base
    for k, ax in enumerate(axes):
        if v is not None and est.twist_covariance is not None:
            s = 3.0 * np.sqrt(np.maximum(est.twist_covariance[:, k, k], 0.0))
            ax.fill_between(est.t_s - t0, v[:, k] - s, v[:, k] + s, color="C0", alpha=0.2, lw=0, label="+-3 sigma")
        if gt is not None and gt.v_base_in_base is not None:
            ax.plot(gt.t_s - t0, gt.v_base_in_base[:, k], "k-", lw=1.0, label="ground truth")
        if v is not None:
            ax.plot(est.t_s - t0, v[:, k], "C0-", lw=0.8, label="estimate")
        ax.set_ylabel(f"v_{AXES[k]} [m/s]")
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(title, "base velocity (base frame)"))
    return fig


def biases_figure(est: Trajectory, *, t0: float, truth: S.SimulatedTruth | None = None, title: str = "") -> Figure:
    """Accelerometer (m/s^2) and gyroscope (rad/s) bias estimates, IMU frame; the true values dashed when known."""
    est = S.thinned(est)
    fig, axes = new_figure(2, row_height=2.6)
    parts = (
        (axes[0], "accel_bias", "accelerometer bias [m/s^2]", None if truth is None else truth.accel_bias),
        (axes[1], "gyro_bias", "gyroscope bias [rad/s]", None if truth is None else truth.gyro_bias),
    )
    for ax, key, label, true in parts:
        b = est.extras.get(key)
        if b is not None:
            for k in range(3):
                ax.plot(est.t_s - t0, b[:, k], f"C{k}-", lw=1, label=f"{AXES[k]} estimate")
                if true is not None:
                    ax.axhline(float(true[k]), color=f"C{k}", ls="--", lw=1.2, label=f"{AXES[k]} true")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        legend_outside(ax, ncols=2 if truth is not None else 1)
    axes[-1].set_xlabel("time [s]")
    known = " (dashed: true, simulated)" if truth is not None else ""
    fig.suptitle(_title(title, f"IMU biases, IMU frame{known}"))
    return fig


# --------------------------------------------------------------------------------------------- a replay
def replay_figures(
    result: Any,
    *,
    title: str = "",
    truth: S.SimulatedTruth | None = None,
    nis_gate: float | None = None,
    sensor_thresholds: tuple[float, float] | None = None,
) -> dict[str, Figure]:
    """Every figure of a ``replay.ReplayResult`` by file stem (``result.ground_truth`` time-aligned, as replay
    leaves it).

    Args:
        result: the replay.
        title: prefix of every figure's title.
        truth: what a simulated run knows beyond its topics (true biases), or None.
        nis_gate: the leg update's NIS gate (``ekf.foot_gate_nis``), drawn on ``nis``; None: not drawn.
        sensor_thresholds: the foot sensors' contact on and off thresholds (``contact.sensor_on_threshold``,
            ``sensor_off_threshold``), drawn on ``foot_sensors``; None: not drawn.
    """
    from robot_state_estimator.evaluation import plots_feet

    est = result.log.trajectory()
    gt_all = result.ground_truth
    gt = gt_all.trajectory if gt_all is not None else None
    t0 = float(est.t_s[0])
    figs = {
        "top_view": top_view_figure(est, gt, title=title),
        "height": height_figure(est, gt, t0=t0, title=title),
        "attitude": attitude_figure(est, gt, t0=t0, title=title),
        "velocity": velocity_figure(est, gt, t0=t0, title=title),
        "biases": biases_figure(est, t0=t0, truth=truth, title=title),
    }
    if gt is not None:
        try:
            c = S.compare(est, gt)
        except MetricsError:
            c = None
        if c is not None:
            figs["position_error"] = error_figure(
                S.position_error(c), what="position error", t0=t0, title=title, unobservable=(0, 1)
            )
            figs["attitude_error"] = error_figure(
                S.attitude_error(c),
                what="attitude error",
                t0=t0,
                title=title,
                scale=np.degrees(1.0),
                unit="deg",
                unobservable=(2,),
            )
            v = S.velocity_error(c)
            if v is not None:
                figs["velocity_error"] = error_figure(v, what="velocity error", t0=t0, title=title)
    feet = S.foot_series(result.log)
    if feet is not None:
        gt_contacts = gt_all.contacts if gt_all is not None else None
        figs["contacts"] = plots_feet.contacts_figure(feet, gt_contacts, t0=t0, title=title)
        # contacts from foot sensors or kinematics carry no force estimate (zeros): no figure of zeros
        if np.any(feet.normal_force_n != 0.0) or getattr(gt_contacts, "normal_force_n", None) is not None:
            figs["foot_forces"] = plots_feet.foot_forces_figure(feet, gt_contacts, t0=t0, title=title)
        figs["nis"] = plots_feet.nis_figure(feet, t0=t0, gate=nis_gate, title=title)
    sensors = getattr(result, "foot_sensors", None)
    if sensors is not None:
        figs["foot_sensors"] = plots_feet.foot_sensors_figure(
            sensors, feet, t0=t0, thresholds=sensor_thresholds, title=title
        )
    return figs


def plot_replay(
    result: Any,
    folder: str | Path,
    *,
    title: str = "",
    truth: S.SimulatedTruth | None = None,
    nis_gate: float | None = None,
    sensor_thresholds: tuple[float, float] | None = None,
) -> list[Path]:
    """Write the plots of a ``replay.ReplayResult`` into ``folder`` (:func:`replay_figures`); returns the files."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    figs = replay_figures(result, title=title, truth=truth, nis_gate=nis_gate, sensor_thresholds=sensor_thresholds)
    return [save(fig, folder / f"{name}.png") for name, fig in figs.items()]
