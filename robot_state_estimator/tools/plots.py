"""PNG plots of a replay (matplotlib, Agg backend: no display needed).

- ``top_view.png``: x-y of the estimate (4-DoF aligned to the ground truth when there is one) and the ground truth;
- ``height.png``: z over time;
- ``velocity.png``: base velocity in the base frame with 3-sigma bands from the twist covariance, and the
  ground truth's;
- ``biases.png``: accelerometer and gyroscope biases (IMU frame);
- ``contacts.png``: estimated contacts per foot over time (ground truth underneath when known).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from robot_state_estimator.tools import metrics


def _aligned(est: metrics.Trajectory, gt: metrics.Trajectory | None) -> metrics.Trajectory:
    if gt is None:
        return est
    try:
        e, g = metrics.associate(est, gt)
    except metrics.MetricsError:
        return est
    return metrics.align_trajectory(e, g, dof="4dof").apply(est)


def plot_replay(result: Any, folder: str | Path, *, title: str = "") -> list[Path]:
    """Write the plots of a ``replay.ReplayResult`` into ``folder``; returns the files written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    est = result.log.trajectory()
    gt = result.ground_truth.trajectory if result.ground_truth is not None else None
    gt_contacts = result.ground_truth.contacts if result.ground_truth is not None else None
    t0 = float(est.t_s[0])
    files = [
        top_view(est, gt, folder / "top_view.png", title=title),
        height(est, gt, folder / "height.png", t0=t0, title=title),
        velocity(est, gt, folder / "velocity.png", t0=t0, title=title),
        biases(est, folder / "biases.png", t0=t0, title=title),
    ]
    if result.log.feet:
        t_c, flags = result.log.contacts_arrays()
        files.append(contacts(t_c, flags, result.log.feet, gt_contacts, folder / "contacts.png", t0=t0, title=title))
    return files


def top_view(est: metrics.Trajectory, gt: metrics.Trajectory | None, path: Path, *, title: str = "") -> Path:
    """x-y plot, estimate 4-DoF-aligned onto the ground truth (m)."""
    e = _aligned(est, gt)
    fig, ax = plt.subplots(figsize=(6, 6))
    if gt is not None:
        ax.plot(gt.p_world_base[:, 0], gt.p_world_base[:, 1], "k-", lw=1.5, label="ground truth")
    ax.plot(
        e.p_world_base[:, 0], e.p_world_base[:, 1], "C0-", lw=1, label="estimate" + (" (4-DoF aligned)" if gt else "")
    )
    ax.plot(e.p_world_base[0, 0], e.p_world_base[0, 1], "go", label="start")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    ax.set_title(f"{title}: top view" if title else "top view")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def height(est: metrics.Trajectory, gt: metrics.Trajectory | None, path: Path, *, t0: float, title: str = "") -> Path:
    """Base height over time (estimate aligned as in the top view), with a 3-sigma band."""
    e = _aligned(est, gt)
    fig, ax = plt.subplots(figsize=(9, 3.5))
    if gt is not None:
        ax.plot(gt.t_s - t0, gt.p_world_base[:, 2], "k-", lw=1.2, label="ground truth")
    ax.plot(e.t_s - t0, e.p_world_base[:, 2], "C0-", lw=1, label="estimate")
    if e.pose_covariance is not None:
        s = 3 * np.sqrt(np.maximum(e.pose_covariance[:, 2, 2], 0))
        ax.fill_between(
            e.t_s - t0, e.p_world_base[:, 2] - s, e.p_world_base[:, 2] + s, color="C0", alpha=0.2, label="3 sigma"
        )
    ax.set_xlabel("time [s]")
    ax.set_ylabel("z [m]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    ax.set_title(f"{title}: base height" if title else "base height")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def velocity(est: metrics.Trajectory, gt: metrics.Trajectory | None, path: Path, *, t0: float, title: str = "") -> Path:
    """Base linear velocity in the base frame (m/s), 3-sigma bands from the twist covariance."""
    fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    v = est.v_base_in_base
    for k, ax in enumerate(axes):
        if gt is not None and gt.v_base_in_base is not None:
            ax.plot(gt.t_s - t0, gt.v_base_in_base[:, k], "k-", lw=1.0, label="ground truth")
        if v is not None:
            ax.plot(est.t_s - t0, v[:, k], "C0-", lw=0.8, label="estimate")
            if est.twist_covariance is not None:
                s = 3 * np.sqrt(np.maximum(est.twist_covariance[:, k, k], 0))
                ax.fill_between(est.t_s - t0, v[:, k] - s, v[:, k] + s, color="C0", alpha=0.2, label="3 sigma")
        ax.set_ylabel(f"v_{'xyz'[k]} [m/s]")
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="upper right")
    axes[-1].set_xlabel("time [s]")
    axes[0].set_title(f"{title}: base velocity (base frame)" if title else "base velocity (base frame)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def biases(est: metrics.Trajectory, path: Path, *, t0: float, title: str = "") -> Path:
    """Accelerometer (m/s^2) and gyroscope (rad/s) bias estimates, IMU frame."""
    fig, axes = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    for ax, key, unit in ((axes[0], "accel_bias", "m/s^2"), (axes[1], "gyro_bias", "rad/s")):
        b = est.extras.get(key)
        if b is not None:
            for k in range(3):
                ax.plot(est.t_s - t0, b[:, k], lw=1, label="xyz"[k])
        ax.set_ylabel(f"{key.replace('_', ' ')} [{unit}]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right")
    axes[-1].set_xlabel("time [s]")
    axes[0].set_title(f"{title}: IMU biases (IMU frame)" if title else "IMU biases (IMU frame)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def contacts(
    t_s: np.ndarray,
    flags: np.ndarray,
    feet: tuple[str, ...],
    gt_contacts: Any,
    path: Path,
    *,
    t0: float,
    title: str = "",
) -> Path:
    """Contact state per foot over time: estimate (filled) and ground truth (line) when known."""
    fig, ax = plt.subplots(figsize=(9, 0.6 + 0.6 * len(feet)))
    for k, foot in enumerate(feet):
        ax.fill_between(t_s - t0, k, k + 0.8 * flags[:, k], step="post", color=f"C{k}", alpha=0.6)
        if gt_contacts is not None and foot in gt_contacts.feet:
            g = gt_contacts.in_contact[:, gt_contacts.feet.index(foot)]
            ax.step(gt_contacts.t_s - t0, k + 0.85 * g, where="post", color="k", lw=0.6)
    ax.set_yticks(np.arange(len(feet)) + 0.4)
    ax.set_yticklabels(feet)
    ax.set_xlabel("time [s]")
    ax.set_title(
        (f"{title}: " if title else "")
        + "contacts (filled: estimate"
        + (", line: ground truth)" if gt_contacts else ")")
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
