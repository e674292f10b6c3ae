"""The numbers the plots draw: errors over time with their 1-sigma, roll/pitch/yaw, contact and NIS series.

Pure numpy/scipy (no matplotlib), so tests check the numbers apart from the drawing. Frames as in
docs/ARCHITECTURE.md; the errors are the metrics' (``metrics.evaluate``): the estimate interpolated at the
ground-truth stamps (``alignment.associate``), 4-DoF aligned onto the ground truth (``alignment.align_trajectory``,
the alignment of the headline ATE), so the position and attitude errors and their sigmas are expressed in the
ground truth's world. The covariances are rotated with the alignment (``Trajectory.transformed``).

Conventions:
    - error = estimate - truth (position, velocity); attitude error ``Log(R_est R_gt^T)``: small angles about
      the world axes, the coordinates of the pose covariance's rotation block (nav_msgs/Odometry, REP-103).
    - roll, pitch, yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (REP-103 fixed axes), yaw unwrapped.
    - sigma: square root of the covariance's diagonal in the error's coordinates (3 sigma is drawn).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.evaluation.alignment import SpatialAlignment, align_trajectory, associate
from robot_state_estimator.evaluation.trajectory import Trajectory, _take

#: samples drawn per curve at most (a figure is about 1000 pixels wide; 20k-sample lines cost seconds to draw)
MAX_POINTS = 5000

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class ErrorSeries:
    """A 3-axis error over time with the estimate's own 1-sigma for it.

    Attributes:
        t_s: (N,) s, the ground truth's (time-aligned) stamps.
        error: (N, 3) estimate - truth, in ``frame``, ``unit``.
        sigma: (N, 3) 1-sigma of the same components from the estimate's covariance, or None (no covariance).
        frame: what the components are expressed in (for axis labels).
        unit: "m", "rad" or "m/s".
    """

    t_s: FloatArray
    error: FloatArray
    sigma: FloatArray | None
    frame: str
    unit: str

    @property
    def rmse(self) -> FloatArray:
        """(3,) per-axis RMSE."""
        rmse: FloatArray = np.sqrt(np.mean(self.error**2, axis=0))
        return rmse

    def outside_3sigma(self) -> FloatArray:
        """(3,) fraction of the samples outside +-3 sigma per axis (NaN without sigma); about 0.3 % when the
        covariance is consistent and the error Gaussian."""
        if self.sigma is None:
            return np.full(3, np.nan)
        fraction: FloatArray = np.mean(np.abs(self.error) > 3.0 * self.sigma, axis=0)
        return fraction


@dataclass(frozen=True)
class Comparison:
    """Estimate and ground truth paired and aligned as the metrics do.

    Attributes:
        est: the whole estimate (every sample), aligned onto the ground truth.
        est_at_gt: the estimate interpolated at ``gt``'s stamps, aligned.
        gt: the ground-truth samples inside the estimate's span (at most 200 Hz, as the metrics).
        alignment: the spatial alignment applied (``dof`` "4dof").
    """

    est: Trajectory
    est_at_gt: Trajectory
    gt: Trajectory
    alignment: SpatialAlignment


def compare(est: Trajectory, gt: Trajectory, *, dof: str = "4dof") -> Comparison:
    """Pair (``alignment.associate``) and align (``alignment.align_trajectory``) ``est`` onto ``gt``.

    ``gt`` must already carry the evaluation's time alignment (``replay.aligned_ground_truth``).

    Raises:
        MetricsError: fewer than two samples overlap.
    """
    e, g = associate(est, gt)
    a = align_trajectory(e, g, dof=dof)
    return Comparison(est=a.apply(est), est_at_gt=a.apply(e), gt=g, alignment=a)


def _dof_name(dof: str) -> str:
    """``"4dof"`` -> ``"4-DoF"`` (as the metrics table names the alignments)."""
    return f"{dof[0]}-DoF" if dof[:1].isdigit() and dof.endswith("dof") else dof


def _diag_sigma(cov: FloatArray | None, block: slice) -> FloatArray | None:
    if cov is None:
        return None
    d = np.diagonal(np.asarray(cov)[:, block, block], axis1=1, axis2=2)
    return np.sqrt(np.maximum(d, 0.0))


def position_error(c: Comparison) -> ErrorSeries:
    """``p_est - p_gt`` (m) in the ground truth's world, with the aligned pose covariance's position sigmas."""
    return ErrorSeries(
        t_s=c.gt.t_s,
        error=c.est_at_gt.p_world_base - c.gt.p_world_base,
        sigma=_diag_sigma(c.est_at_gt.pose_covariance, slice(0, 3)),
        frame=f"world, {_dof_name(c.alignment.dof)} aligned",
        unit="m",
    )


def attitude_error(c: Comparison) -> ErrorSeries:
    """``Log(R_est R_gt^T)`` (rad) about the ground truth's world axes, with the pose covariance's rotation sigmas.

    Its norm is the rotation ATE's angle (``metrics.ate``: the angle of ``R_gt^T R_est`` is the same).
    """
    e = (c.est_at_gt.rotations * c.gt.rotations.inv()).as_rotvec()
    return ErrorSeries(
        t_s=c.gt.t_s,
        error=e,
        sigma=_diag_sigma(c.est_at_gt.pose_covariance, slice(3, 6)),
        frame=f"world axes, {_dof_name(c.alignment.dof)} aligned",
        unit="rad",
    )


def velocity_error(c: Comparison) -> ErrorSeries | None:
    """``v_est - v_gt`` (m/s) in the base frame (no spatial alignment needed), with the twist covariance's
    linear sigmas; None when either has no velocity."""
    if c.est_at_gt.v_base_in_base is None or c.gt.v_base_in_base is None:
        return None
    return ErrorSeries(
        t_s=c.gt.t_s,
        error=c.est_at_gt.v_base_in_base - c.gt.v_base_in_base,
        sigma=_diag_sigma(c.est_at_gt.twist_covariance, slice(0, 3)),
        frame="base frame",
        unit="m/s",
    )


def roll_pitch_yaw(traj: Trajectory, *, near: float | None = None) -> FloatArray:
    """(N, 3) rad, roll, pitch, yaw (``R = Rz(yaw) Ry(pitch) Rx(roll)``), yaw unwrapped.

    Args:
        traj: the trajectory.
        near: a yaw (rad); the unwrapped yaw is shifted by a multiple of 2 pi so that its first value is
            within pi of it (to draw an estimate next to the ground truth).
    """
    zyx = traj.rotations.as_euler("ZYX")
    yaw = np.unwrap(zyx[:, 0])
    if near is not None and len(yaw):
        yaw = yaw + 2.0 * np.pi * np.round((near - yaw[0]) / (2.0 * np.pi))
    return np.column_stack([zyx[:, 2], zyx[:, 1], yaw])


def roll_pitch_yaw_sigma(traj: Trajectory) -> FloatArray | None:
    """(N, 3) rad, 1-sigma of roll, pitch, yaw from the pose covariance's rotation block (world axes).

    A rotation ``delta`` about the world axes changes the ZYX angles by ``E^-1 delta`` with
    ``E = [Rz(yaw) Ry(pitch) e_x, Rz(yaw) e_y, e_z]`` (the angular velocity of Euler-angle rates in the fixed
    frame), so the angles' covariance is ``E^-1 P E^-T``. None without a covariance.
    """
    if traj.pose_covariance is None:
        return None
    zyx = traj.rotations.as_euler("ZYX")
    yaw, pitch = zyx[:, 0], zyx[:, 1]
    cy, sy, cp, sp = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch)
    E = np.zeros((len(yaw), 3, 3))
    E[:, :, 0] = np.column_stack([cy * cp, sy * cp, -sp])  # Rz Ry e_x
    E[:, :, 1] = np.column_stack([-sy, cy, np.zeros_like(cy)])  # Rz e_y
    E[:, 2, 2] = 1.0
    Einv = np.linalg.inv(E)
    P = np.asarray(traj.pose_covariance)[:, 3:, 3:]
    cov = Einv @ P @ np.transpose(Einv, (0, 2, 1))
    return np.sqrt(np.maximum(np.diagonal(cov, axis1=1, axis2=2), 0.0))


def thin_index(n: int, max_points: int = MAX_POINTS) -> NDArray[np.intp]:
    """Indices of every k-th of ``n`` samples (first and last kept) so that at most about ``max_points`` remain;
    all of them when ``n <= max_points``. For drawing only: the metrics use every sample."""
    if n <= max_points:
        return np.arange(n)
    idx = np.arange(0, n, int(np.ceil(n / max_points)))
    return idx if idx[-1] == n - 1 else np.append(idx, n - 1)


def thinned(traj: Trajectory, max_points: int = MAX_POINTS) -> Trajectory:
    """``traj`` with every k-th sample (:func:`thin_index`), for drawing."""
    return traj if len(traj) <= max_points else _take(traj, thin_index(len(traj), max_points))


# ------------------------------------------------------------------------------------------------ feet
@dataclass(frozen=True)
class FootSeries:
    """What the estimator said about each foot over time (``replay.EstimateLog``'s foot columns).

    Attributes:
        feet: foot frame names (F).
        t_s: (M,) s.
        contact: (M, F) bool, estimated contact.
        normal_force_n: (M, F) N, the estimated ground reaction force's world z.
        nis: (M, F) NIS of each foot's leg update (NaN where none ran).
        accepted: (M, F) bool, the update passed the gate.
    """

    feet: tuple[str, ...]
    t_s: FloatArray
    contact: NDArray[np.bool_]
    normal_force_n: FloatArray
    nis: FloatArray
    accepted: NDArray[np.bool_]


def foot_series(log: Any) -> FootSeries | None:
    """:class:`FootSeries` of a ``replay.EstimateLog``; None when no estimate carried feet."""
    if not log.feet or not log.contact_stamp_ns:
        return None
    t_s, contact = log.contacts_arrays()
    n, f = contact.shape
    force = np.asarray(log.force_world, dtype=float).reshape(n, f, 3)
    nis = np.asarray(log.nis, dtype=float).reshape(n, f)
    accepted = np.asarray(log.accepted, dtype=bool).reshape(n, f)
    return FootSeries(tuple(log.feet), t_s, contact, force[:, :, 2], nis, accepted)


@dataclass(frozen=True)
class FootSensorSeries:
    """The foot contact sensors' readings that reached the estimator (``sensor_msgs/JointState`` on ``foot_forces``:
    name = foot frames, effort = force in N or raw counts, e.g. the Go1's pressure sensors).

    Attributes:
        feet: foot frame names (F), in the order of the first sample.
        t_s: (M,) s, the samples' stamps.
        values: (M, F) the readings, in the sensor's unit (that of ``contact.sensor_on_threshold``).
    """

    feet: tuple[str, ...]
    t_s: FloatArray
    values: FloatArray


def thinned_feet(feet: FootSeries, max_points: int = MAX_POINTS) -> FootSeries:
    """``feet`` with every k-th sample (:func:`thin_index`), for drawing."""
    idx = thin_index(len(feet.t_s), max_points)
    if len(idx) == len(feet.t_s):
        return feet
    return FootSeries(
        feet.feet, feet.t_s[idx], feet.contact[idx], feet.normal_force_n[idx], feet.nis[idx], feet.accepted[idx]
    )


def contact_mismatch(est_contact: NDArray[np.bool_], true_contact: NDArray[np.bool_]) -> dict[str, NDArray[np.bool_]]:
    """``{"false_contact": est & ~true, "missed_contact": ~est & true}`` of equal-shaped boolean arrays."""
    e = np.asarray(est_contact, dtype=bool)
    g = np.asarray(true_contact, dtype=bool)
    return {"false_contact": e & ~g, "missed_contact": ~e & g}


def runs(flags: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` index ranges where a (M,) boolean array is True (``stop`` exclusive)."""
    f = np.concatenate([[False], np.asarray(flags, dtype=bool), [False]])
    d = np.diff(f.astype(np.int8))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


# ------------------------------------------------------------------------------------- simulated truth
@dataclass(frozen=True)
class SimulatedTruth:
    """What a simulated run knows beyond its ground-truth topics (``run.yaml`` of ``simulate``).

    Attributes:
        accel_bias: (3,) m/s^2, the accelerometer bias drawn for the run, IMU frame.
        gyro_bias: (3,) rad/s, the gyroscope bias, IMU frame (the initial value when a dynamic bias runs).
        source: the ``run.yaml`` read.
    """

    accel_bias: FloatArray
    gyro_bias: FloatArray
    source: str


def simulated_truth(input_path: str | Path) -> SimulatedTruth | None:
    """The true IMU biases of a run written by ``simulate`` (``DIR/run.yaml`` next to ``DIR/bag``), or None.

    Looked up as replay looks up ``robot_description.urdf``: in the input folder and its parent (or the input
    file's folder and its parent). A ``run.yaml`` without both biases is not a simulated run's: None.
    """
    import yaml

    p = Path(input_path)
    for folder in (p if p.is_dir() else p.parent, p.parent if p.is_dir() else p.parent.parent):
        path = folder / "run.yaml"
        if not path.is_file():
            continue
        try:
            info = yaml.safe_load(path.read_text())
            summary = info["summary"]
            ba = np.asarray(summary["imu_accel_bias_m_s2"], dtype=float)
            bg = np.asarray(summary["imu_gyro_bias_rad_s"], dtype=float)
        except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError):
            return None
        if ba.shape != (3,) or bg.shape != (3,) or not (np.isfinite(ba).all() and np.isfinite(bg).all()):
            return None
        return SimulatedTruth(accel_bias=ba, gyro_bias=bg, source=str(path))
    return None
