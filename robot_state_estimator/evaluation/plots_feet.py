"""Per-foot plots of a replay: contact timeline (estimate against truth), normal forces, NIS of the leg updates.

The series come from ``plot_series.FootSeries`` (the replay log); the truth from ``ground_truth.Contacts`` (the
simulated run's ``/ground_truth/contacts``: flags and the true normal force). Each function returns a matplotlib
Figure; bars and lines carry a ``gid`` ``"<foot>:<series>"`` so tests can find them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from robot_state_estimator.evaluation import plot_series as S
from robot_state_estimator.evaluation.consistency import nees_band
from robot_state_estimator.evaluation.plots import _title, legend_outside, new_figure

#: degrees of freedom of one foot's leg-kinematics innovation (a point foot's velocity, 3-D)
POINT_FOOT_NIS_DOF = 3


def _bars(t_s: np.ndarray, flags: np.ndarray) -> list[tuple[float, float]]:
    """``(start, width)`` in s of the runs of True, each held until the next sample (the last one a median step)."""
    if len(t_s) == 0:
        return []
    dt = float(np.median(np.diff(t_s))) if len(t_s) > 1 else 0.0
    ends = np.append(t_s[1:], t_s[-1] + dt)
    return [(float(t_s[a]), float(ends[b - 1] - t_s[a])) for a, b in S.runs(flags)]


def _shade_contact(ax: Any, t: np.ndarray, in_contact: np.ndarray) -> None:
    """Shade the time spans of estimated contact across the whole height of ``ax``."""
    ax.fill_between(
        t,
        0,
        1,
        where=in_contact,
        step="post",
        transform=ax.get_xaxis_transform(),
        color="C0",
        alpha=0.12,
        lw=0,
        label="estimated contact",
    )


def contacts_figure(feet: S.FootSeries, gt_contacts: Any, *, t0: float, title: str = "") -> Figure:
    """Contact timeline, one row per foot: estimate (upper bar) and ground truth (lower bar) when known, with
    false contacts (estimate in contact, truth not) and missed contacts marked above the bars.

    ``gid``s: ``"<foot>:estimate"``, ``"<foot>:truth"``, ``"<foot>:false_contact"``, ``"<foot>:missed_contact"``.
    """
    n = len(feet.feet)
    fig, axes = new_figure(1, row_height=0.3 + 0.55 * n)
    ax = axes[0]
    t = feet.t_s - t0
    known = gt_contacts is not None and any(f in gt_contacts.feet for f in feet.feet)
    handles = [Patch(color="C0", alpha=0.8, label="estimate")]
    if known:
        handles += [
            Patch(color="0.3", alpha=0.8, label="ground truth"),
            Patch(color="C3", label="false contact"),
            Patch(color="C1", label="missed contact"),
        ]
    for k, foot in enumerate(feet.feet):
        y = n - 1 - k  # first foot on top
        est = feet.contact[:, k]
        # with truth: the estimate above it; without: centred on the foot's row
        bar = ax.broken_barh(_bars(t, est), (y + 0.45, 0.3) if known else (y + 0.3, 0.4), color="C0", alpha=0.8)
        bar.set_gid(f"{foot}:estimate")
        if not known or foot not in gt_contacts.feet:
            continue
        true = gt_contacts.at(feet.t_s, (foot,))[:, 0]
        bar = ax.broken_barh(_bars(t, true), (y + 0.1, 0.3), color="0.3", alpha=0.8)
        bar.set_gid(f"{foot}:truth")
        for key, color in (("false_contact", "C3"), ("missed_contact", "C1")):
            flags = S.contact_mismatch(est, true)[key]
            bar = ax.broken_barh(_bars(t, flags), (y + 0.78, 0.14), color=color)
            bar.set_gid(f"{foot}:{key}")
    ax.set_yticks(np.arange(n) + 0.5)
    ax.set_yticklabels(list(reversed(feet.feet)))
    ax.set_ylim(0, n)
    ax.set_xlim(float(t[0]), float(t[-1]) if len(t) > 1 else float(t[0]) + 1.0)
    ax.set_xlabel("time [s]")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")
    fig.suptitle(_title(title, "contacts by foot" + (" (upper bar: estimate, lower: ground truth)" if known else "")))
    return fig


def foot_forces_figure(feet: S.FootSeries, gt_contacts: Any, *, t0: float, title: str = "") -> Figure:
    """Normal force (N, world z) per foot: estimate, the true force when known, estimated contact shaded.

    ``gid``s: ``"<foot>:force_estimate"``, ``"<foot>:force_true"``.
    """
    feet = S.thinned_feet(feet)
    fig, axes = new_figure(len(feet.feet), row_height=1.6)
    t = feet.t_s - t0
    true_force = getattr(gt_contacts, "normal_force_n", None) if gt_contacts is not None else None
    for k, (ax, foot) in enumerate(zip(axes, feet.feet)):
        _shade_contact(ax, t, feet.contact[:, k])
        if true_force is not None and foot in gt_contacts.feet:
            j = gt_contacts.feet.index(foot)
            idx = S.thin_index(len(gt_contacts.t_s))
            (line,) = ax.plot(  # wide and pale underneath: the estimate stays visible where they agree
                gt_contacts.t_s[idx] - t0,
                true_force[idx, j],
                "k-",
                lw=2.4,
                alpha=0.35,
                drawstyle="steps-post",
                label="ground truth",
            )
            line.set_gid(f"{foot}:force_true")
        (line,) = ax.plot(t, feet.normal_force_n[:, k], "C0-", lw=0.9, label="estimate")
        line.set_gid(f"{foot}:force_estimate")
        ax.set_ylabel(f"{foot}\nf_z [N]")
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(title, "normal force per foot (world z)"))
    return fig


def foot_sensors_figure(
    sensors: S.FootSensorSeries,
    feet: S.FootSeries | None,
    *,
    t0: float,
    thresholds: tuple[float, float] | None = None,
    title: str = "",
) -> Figure:
    """The foot contact sensors' readings per foot (the sensor's unit: N or raw counts) with the contact
    thresholds (``contact.sensor_on_threshold``, ``sensor_off_threshold``) and the estimated contact shaded: what
    to look at when tuning those thresholds.

    ``gid``s: ``"<foot>:sensor"``, ``"<foot>:on_threshold"``, ``"<foot>:off_threshold"``.
    """
    fig, axes = new_figure(len(sensors.feet), row_height=1.6)
    idx = S.thin_index(len(sensors.t_s))
    t = sensors.t_s[idx] - t0
    shown = S.thinned_feet(feet) if feet is not None else None
    for k, (ax, foot) in enumerate(zip(axes, sensors.feet)):
        if shown is not None and foot in shown.feet:
            _shade_contact(ax, shown.t_s - t0, shown.contact[:, shown.feet.index(foot)])
        (line,) = ax.plot(t, sensors.values[idx, k], "C0-", lw=0.9, drawstyle="steps-post", label="sensor")
        line.set_gid(f"{foot}:sensor")
        if thresholds is not None:
            for value, name, style in ((thresholds[0], "on", "--"), (thresholds[1], "off", ":")):
                ref = ax.axhline(value, color="C3", ls=style, lw=1.0, label=f"{name} threshold")
                ref.set_gid(f"{foot}:{name}_threshold")
        ax.set_ylabel(f"{foot}\nsensor")
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(title, "foot sensors (their unit) and contact thresholds"))
    return fig


def nis_figure(
    feet: S.FootSeries, *, t0: float, gate: float | None = None, dof: int = POINT_FOOT_NIS_DOF, title: str = ""
) -> Figure:
    """NIS of each foot's leg update over time (log scale): accepted and gated updates, the chi-square 95 % band
    of one sample with ``dof`` degrees of freedom, and the gate.

    The label of the accepted updates gives their mean (``dof`` for a consistent filter) and the share inside
    the band (95 %). ``gid``s: ``"<foot>:nis_accepted"``, ``"<foot>:nis_gated"``.
    """
    lo, hi = nees_band(dof)
    fig, axes = new_figure(len(feet.feet), row_height=1.6)
    t = feet.t_s - t0
    for k, (ax, foot) in enumerate(zip(axes, feet.feet)):
        nis = feet.nis[:, k]
        ran = np.isfinite(nis) & (nis > 0)
        ok = ran & feet.accepted[:, k]
        bad = ran & ~feet.accepted[:, k]
        if ok.any():
            inside = 100.0 * float(np.mean((nis[ok] >= lo) & (nis[ok] <= hi)))
            label = f"accepted (mean {float(np.mean(nis[ok])):.3g}, {inside:.0f} % in band)"
        else:
            label = "accepted (none)"
        shown = np.flatnonzero(ok)[S.thin_index(int(ok.sum()))]  # gated ones all drawn
        (line,) = ax.plot(t[shown], nis[shown], "C0.", ms=1.5, label=label)
        line.set_gid(f"{foot}:nis_accepted")
        (line,) = ax.plot(t[bad], nis[bad], "C3x", ms=3, label=f"gated ({int(bad.sum())})")
        line.set_gid(f"{foot}:nis_gated")
        ax.axhline(lo, color="k", ls=":", lw=0.8, label=f"chi-square {dof} DoF 95 % band")
        ax.axhline(hi, color="k", ls=":", lw=0.8)
        ax.axhline(float(dof), color="k", ls="-", lw=0.5, alpha=0.5)
        if gate is not None and gate > 0:
            ax.axhline(gate, color="C3", ls="--", lw=0.8, label=f"gate {gate:g}")
        if ran.any():
            ax.set_yscale("log")
        ax.set_ylabel(f"{foot}\nNIS")
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(title, "NIS of the leg-kinematics update per foot"))
    return fig
