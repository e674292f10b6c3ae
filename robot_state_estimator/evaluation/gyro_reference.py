"""A motion-capture attitude reference smoothed with the gyroscope, and the reference's own error.

Bar-Shalom's NEES takes the reference as the truth. The real Go1 trot's motion capture is not: compared with the
integrated gyroscope (which is accurate over a fraction of a second), its rotation between two rows disagrees by
0.3-0.4 deg per axis one row apart and by about 0.8-1.2 deg from 0.2 s apart (timing left after the clock fit,
dropped frames, marker noise), i.e. a roll/pitch error of about 0.6-0.8 deg per row, twice the filter's published
stddev (0.31 deg); its yaw errs likewise. Against such a reference the NEES measures the reference. Two remedies,
both without the filter:

- :func:`carried_window_mean`: each row's attitude replaced by the mean of the rows within ``window_s`` around it,
  each carried to the row's time by the gyroscope's rotation between the two times (``R_gt_j R_g(t_j)^T R_g(t_i)``
  with ``R_g = R_start_imu`` of ``gyro_clock.integrate_gyro``; the body frame's rotation, right-multiplied). The
  mean keeps the motion (the gyroscope carries it) and averages the rows' errors; a constant gyroscope bias ``b``
  turns row ``j`` by ``b (t_i - t_j)``, which a window symmetric about ``t_i`` cancels to first order (not at the
  span's ends); a body turning at ``w`` leaves ``|w x b| (t_i - t_j)^2 / 2``, whose mean over the window is
  ``|w| |b| window_s^2 / 24`` (0.4 mrad for 1 rad/s, 0.01 rad/s and 1 s). It is the complementary filter's idea
  (low frequencies from the reference, high ones from the gyroscope) applied to the reference.
- :func:`reference_error`: the rows' error variance and that of the window mean, from the structure function of
  the motion capture against the gyroscope, ``D(l) = Var[Log(dR_gyro^T dR_gt)]`` over row pairs ``l`` apart
  (about its mean, which removes a constant bias's ``b l dt``): for a stationary error of autocovariance ``C``,
  ``D(l) = 2 (C(0) - C(l))``, so ``C(0)`` is half ``D``'s plateau (lags ``plateau_s``, past the error's
  correlation, short enough for the gyroscope's drift) and ``C(l) = C(0) - D(l) / 2`` below it, 0 above; the window
  mean of ``n`` rows has variance ``(1 / n^2) sum_jk C(|j - k|)``. An error the gyroscope makes over the lags
  (noise, scale) counts as the reference's: it errs on the side of a larger reference error.

The roll/pitch (or yaw) NEES against the smoothed reference with the covariance ``P + Sigma_ref`` is then that of
the filter's error alone, if the two errors are independent (the filter never sees the motion capture). Source: the
noisy-reference form of the NEES, ``E[(x_est - x_ref)(...)^T] = P + Sigma_ref``, and the structure function of a
stationary process (Yaglom 1987, structure functions of processes with stationary increments).

Pure numpy/scipy. Times float64 s on the gyroscope's clock (the ground truth with a time alignment applied);
angles rad; the reference's body frame taken as the IMU's (its constant tilt removed first by the caller).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.gyro_clock import GyroAttitude

FloatArray = NDArray[np.float64]


def _check(t_s: FloatArray, R_gt: Rotation, attitude: GyroAttitude) -> FloatArray:
    t = np.asarray(t_s, dtype=float)
    if t.ndim != 1 or len(t) < 2 or len(R_gt) != len(t) or np.any(np.diff(t) <= 0):
        raise MetricsError(f"reference: need >= 2 increasing stamps and one rotation each; got {t.shape}, {len(R_gt)}")
    if t[0] < attitude.t_s[0] or t[-1] > attitude.t_s[-1]:
        raise MetricsError(
            f"reference rows [{t[0]:.3f}, {t[-1]:.3f}] s outside the gyroscope's span "
            f"[{attitude.t_s[0]:.3f}, {attitude.t_s[-1]:.3f}] s"
        )
    return t


def _check_window(window_s: float) -> None:
    if not window_s >= 0.0:  # NaN too
        raise MetricsError(f"window_s must be a number >= 0, got {window_s}")


def carried_window_mean(t_s: FloatArray, R_gt: Rotation, attitude: GyroAttitude, window_s: float) -> Rotation:
    """The reference smoothed with the gyroscope (module docstring).

    Args:
        t_s: (M,) s, the rows' times on the gyroscope's clock, increasing, inside its span.
        R_gt: (M,) ``R_world_body`` of the rows.
        attitude: the integrated gyroscope (``gyro_clock.integrate_gyro``).
        window_s: s, the rows within ``window_s / 2`` of a row are averaged into it (0: ``R_gt`` unchanged).

    Returns:
        (M,) ``R_world_body``: ``R_gt_i Exp(mean_j Log(R_gt_i^T R_gt_j R_g(t_j)^T R_g(t_i)))`` (the rows' differences
        are small, so the mean of rotation vectors about ``R_gt_i`` is the rotations' mean to second order).

    Raises:
        MetricsError: bad shapes, stamps not increasing, rows outside the gyroscope's span, negative window.
    """
    t = _check(t_s, R_gt, attitude)
    _check_window(window_s)
    R_g = attitude.at(t)
    total = np.zeros((len(t), 3))
    count = np.ones(len(t))
    half = 0.5 * window_s
    for lag in range(1, len(t)):
        near = (t[lag:] - t[:-lag]) <= half
        if not np.any(near):
            break
        i = np.flatnonzero(near)
        j = i + lag
        # row j carried to t_i, seen from row i; and row i carried to t_j, seen from row j
        total[i] += (R_gt[i].inv() * R_gt[j] * R_g[j].inv() * R_g[i]).as_rotvec()
        total[j] += (R_gt[j].inv() * R_gt[i] * R_g[i].inv() * R_g[j]).as_rotvec()
        count[i] += 1
        count[j] += 1
    out: Rotation = R_gt * Rotation.from_rotvec(total / count[:, None])
    return out


@dataclass(frozen=True)
class ReferenceError:
    """The reference's own attitude error (per body axis x, y, z: roll, pitch, yaw at small tilt; rad).

    Attributes:
        sigma_row_rad: (3,) stddev of one row's error, ``sqrt(C(0))``.
        sigma_mean_rad: (3,) stddev of the window mean's error (:func:`carried_window_mean`).
        rows_per_window: median rows averaged into a row.
        structure_rad2: (L, 3) ``D(l)`` for row lags ``l = 1..L``.
    """

    sigma_row_rad: FloatArray
    sigma_mean_rad: FloatArray
    rows_per_window: int
    structure_rad2: FloatArray

    @property
    def horizontal_variance_rad2(self) -> float:
        """rad^2, the window mean's variance averaged over x and y: an isotropic covariance ``v I`` for the world
        roll/pitch block, whatever the heading."""
        return float(np.mean(self.sigma_mean_rad[:2] ** 2))

    @property
    def yaw_variance_rad2(self) -> float:
        """rad^2, the window mean's variance about the body's z, standing for the world's (the tilt is a few
        degrees: the axes differ by its cosine)."""
        return float(self.sigma_mean_rad[2] ** 2)


def structure_function(t_s: FloatArray, R_gt: Rotation, attitude: GyroAttitude, max_lag: int) -> FloatArray:
    """``D(l)`` for ``l = 1..max_lag`` rows: the variance (about its mean) of x, y, z of
    ``Log((R_g(t_i)^T R_g(t_j))^T R_gt_i^T R_gt_j)``, ``j = i + l``, in the body frame (module docstring).

    Args:
        t_s, R_gt, attitude: as :func:`carried_window_mean`.
        max_lag: the longest lag, rows (1 <= max_lag < M).

    Returns:
        (max_lag, 3) rad^2, about the body's x (roll), y (pitch) and z (yaw) axes.

    Raises:
        MetricsError: as :func:`carried_window_mean`; ``max_lag`` out of range.
    """
    t = _check(t_s, R_gt, attitude)
    if not 1 <= max_lag < len(t):
        raise MetricsError(f"max_lag must be in [1, {len(t) - 1}], got {max_lag}")
    R_g = attitude.at(t)
    D = np.empty((max_lag, 3))
    for lag in range(1, max_lag + 1):
        d = ((R_g[lag:].inv() * R_g[:-lag]) * (R_gt[:-lag].inv() * R_gt[lag:])).as_rotvec()
        D[lag - 1] = d.var(axis=0)
    return D


def reference_error(
    t_s: FloatArray,
    R_gt: Rotation,
    attitude: GyroAttitude,
    window_s: float,
    *,
    plateau_s: tuple[float, float] = (0.2, 0.5),
) -> ReferenceError:
    """The reference's attitude error per row and after :func:`carried_window_mean` (module docstring).

    Args:
        t_s, R_gt, attitude, window_s: as :func:`carried_window_mean`.
        plateau_s: s, the lags (converted to rows with the median row interval) over which ``D`` is averaged into
            its plateau ``2 C(0)``: past the error's correlation time, short against the gyroscope's drift.

    Returns:
        :class:`ReferenceError` (per body axis x, y, z; the world roll/pitch block takes the mean of the first two
        variances, :attr:`ReferenceError.horizontal_variance_rad2`, though they differ by 2x on the real trot; the yaw
        the third, :attr:`ReferenceError.yaw_variance_rad2`).

    Raises:
        MetricsError: as :func:`carried_window_mean`; a plateau shorter than a row or longer than the rows.
    """
    t = _check(t_s, R_gt, attitude)
    _check_window(window_s)
    dt = float(np.median(np.diff(t)))
    lo, hi = (max(1, round(s / dt)) for s in plateau_s)
    if not lo <= hi < len(t):
        raise MetricsError(f"plateau {plateau_s} s is {lo}-{hi} rows: need 1 <= low <= high < {len(t)} rows")
    D = structure_function(t, R_gt, attitude, hi)
    c0 = 0.5 * D[lo - 1 : hi].mean(axis=0)
    C = np.vstack([c0, np.clip(c0 - 0.5 * D[: lo - 1], 0.0, None)])  # C(0..lo-1); 0 from the plateau on
    half = 0.5 * window_s
    n = int(np.median(np.searchsorted(t, t + half, side="right") - np.searchsorted(t, t - half, side="left")))
    lags = np.arange(min(n, len(C)))
    weight = np.where(lags == 0, 1.0, 2.0 * (1.0 - lags / n))
    var_mean = (weight[:, None] * C[: len(lags)]).sum(axis=0) / n
    return ReferenceError(np.sqrt(c0), np.sqrt(var_mean), n, D)


@dataclass(frozen=True)
class GyroTilt:
    """The motion capture's body frame against the IMU's from their rotations alone (:func:`gyro_tilt`).

    Attributes:
        tilt_rad: (2,) x, y of the tilt, in ``unstamped_nees``'s convention: ``R_gt Exp([-x, -y, 0])`` is the IMU's
            attitude.
        halves_rad: (2, 2) the same fitted on each half of the span (their difference shows the fit's uncertainty).
        gyro_bias_rad_s: (3,) the constant gyroscope bias fitted with it.
    """

    tilt_rad: FloatArray
    halves_rad: FloatArray
    gyro_bias_rad_s: FloatArray

    @property
    def variance_rad2(self) -> float:
        """rad^2 per axis, the whole span's tilt's variance from its halves: ``mean((h1 - h2)^2) / 4`` over x and y
        (two independent halves of variance ``s^2`` each: ``E (h1 - h2)^2 = 2 s^2``, the whole's ``s^2 / 2``); one
        difference per axis, so a rough figure."""
        d = self.halves_rad[0] - self.halves_rad[1]
        return float(np.mean(d**2) / 4.0)


def _bias_jacobians(attitude: GyroAttitude, t_i: FloatArray, t_j: FloatArray) -> FloatArray:
    """(P, 3, 3) ``J`` with ``R_g(t_i)^T R_g(t_j)`` of rates less a bias ``b`` equal to ``(...) Exp(-J b)`` to first
    order: ``J = R_g(t_j)^T (S(t_j) - S(t_i))``, ``S(t) = int_0^t R_g dtau`` (each step's ``b dtau`` carried to the
    interval's end frame)."""
    R = Rotation.from_quat(attitude.quat_start_imu_xyzw).as_matrix()
    dt = np.diff(attitude.t_s)
    S = np.concatenate([np.zeros((1, 3, 3)), np.cumsum(0.5 * (R[1:] + R[:-1]) * dt[:, None, None], axis=0)])
    flat = S.reshape(len(S), 9)

    def at(t: FloatArray) -> FloatArray:
        out: FloatArray = np.column_stack([np.interp(t, attitude.t_s, flat[:, k]) for k in range(9)]).reshape(-1, 3, 3)
        return out

    Rj = attitude.at(t_j).as_matrix()
    J: FloatArray = np.einsum("pji,pjk->pik", Rj, at(t_j) - at(t_i))
    return J


def _fit_tilt(
    t: FloatArray, R_gt: Rotation, attitude: GyroAttitude, lag: int, scale_rad: float
) -> tuple[FloatArray, FloatArray]:
    i = np.arange(len(t) - lag)
    dgt = R_gt[i].inv() * R_gt[i + lag]
    dg = attitude.at(t[i]).inv() * attitude.at(t[i + lag])
    J = _bias_jacobians(attitude, t[i], t[i + lag])

    def residuals(x: FloatArray) -> FloatArray:
        T = Rotation.from_rotvec(x[:3])
        dg_b = dg * Rotation.from_rotvec(-(J @ x[3:]))
        r: FloatArray = (dg_b.inv() * (T.inv() * dgt * T)).as_rotvec().ravel()
        return r

    x = least_squares(residuals, np.zeros(6), loss="soft_l1", f_scale=scale_rad).x
    return -x[:2], x[3:]


def gyro_tilt(
    t_s: FloatArray, R_gt: Rotation, attitude: GyroAttitude, *, lag_s: float = 0.5, scale_rad: float = 0.00873
) -> GyroTilt:
    """The motion capture's constant body-frame tilt against the IMU, without the filter: the rotation ``T``
    (``R_imu = R_gt T``) and a constant gyroscope bias ``b`` that make the motion capture's rotations over
    ``lag_s``, ``T^T (R_gt_i^T R_gt_j) T``, agree with the integrated gyroscope's, ``R_g(t_i)^T R_g(t_j) Exp(-J b)``
    (the hand-eye problem ``A X = X B``; Park and Martin 1994); the bias enters to first order through each
    interval's Jacobian ``J`` (every step's ``b dt`` carried to the interval's end frame, as in IMU preintegration:
    Forster et al. 2017). A tilt shows where the body turns about an axis it does not contain: a yaw turn of
    ``theta`` about the IMU's z is a turn about a tilted axis for the motion capture, off by ``theta x tilt``; at a
    constant yaw rate that looks like a bias, so the span needs turns of changing rate (the real trot's turns and
    straights). Robust least squares (soft-L1, ``scale_rad``, scipy).

    Args:
        t_s, R_gt, attitude: as :func:`carried_window_mean` (the rows of the evaluated span).
        lag_s: s, the compared rotations' span (converted to rows with the median row interval).
        scale_rad: rad, the soft-L1 scale of a residual component.

    Returns:
        :class:`GyroTilt` (the yaw of ``T`` is fitted and not returned: the evaluation fits the world's yaw anyway).

    Raises:
        MetricsError: as :func:`carried_window_mean`; fewer than two lags of rows in each half.
    """
    t = _check(t_s, R_gt, attitude)
    lag = max(1, round(lag_s / float(np.median(np.diff(t)))))
    half = len(t) // 2
    if half < 2 * lag:
        raise MetricsError(f"gyro tilt: {len(t)} rows, fewer than four lags of {lag} rows")
    tilt, bias = _fit_tilt(t, R_gt, attitude, lag, scale_rad)
    halves = np.array(
        [_fit_tilt(t[k], R_gt[k], attitude, lag, scale_rad)[0] for k in (slice(0, half), slice(half, None))]
    )
    return GyroTilt(tilt, halves, bias)
