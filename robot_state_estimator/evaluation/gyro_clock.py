"""A clock for unstamped motion-capture rows fitted on the gyroscope's rotation, not on the estimate.

Motion capture exported without stamps (the real Go1 trot, ``../shared/data/go1_trot``) is given nominal stamps
spread evenly over the recording; frames were dropped, so the nominal clock is wrong by tens of ms in places, as
large as the filter's attitude error on a trotting robot (10 ms at 20-30 deg/s of roll rate is 0.2-0.3 deg). A
clock fitted on the estimate's attitude would hide the estimate's own errors; this one uses only the gyroscope:

- the gyroscope integrated into a relative attitude ``R_start_imu(t)`` (:func:`integrate_gyro`; midpoint rate
  over each sample interval, exact exponential per step);
- a monotone piecewise-linear clock of the nominal stamps, knots every ``knot_spacing_s`` (``time_warp``'s
  parametrisation, start and rate prior from an offset+rate alignment on the yaw rate);
- residuals: for each pair of rows ``(i, i + lag_rows)`` mapped inside the gyroscope's span, the motion capture's
  rotation between them, ``R_gt_i^T R_gt_j`` (its body frame), against the integrated gyroscope's over the mapped
  interval, ``R(tau_i)^T R(tau_j)``: ``Log`` of the difference, 3 components, over ``sigma_rotation_rad``; soft-L1
  (``time_warp.solve_warp``), with ``time_warp``'s priors on the change of log rate between segments and on each log
  rate's departure from the start's.

Neither the unobservable yaw nor a gyroscope bias matters much: a relative rotation over ``lag_rows`` rows (0.1 s at
63 Hz) carries no yaw offset, and a bias of 0.01 rad/s turns it by 1 mrad. A constant tilt of the motion capture's
body frame against the IMU (1 deg) conjugates it, a second-order effect (1 deg x 3 deg of rotation: 1 mrad).

Pure numpy/scipy. Times float64 s (gyroscope stamps = the estimate's clock; nominal stamps for the ground truth);
angular rates rad/s in the IMU frame, taken as the base frame (an IMU mounted aligned with the base).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.time_alignment import (
    TimeAlignment,
    estimate_time_offset_and_rate,
    yaw_rate_signal,
)
from robot_state_estimator.evaluation.time_warp import WarpProblem, solve_warp, warp_problem
from robot_state_estimator.evaluation.trajectory import Trajectory, yaw_of

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class GyroAttitude:
    """The integrated gyroscope: the IMU's attitude relative to its first sample.

    Attributes:
        t_s: (N,) s, gyroscope stamps, strictly increasing.
        quat_start_imu_xyzw: (N, 4) ``R_start_imu`` at each stamp (``x y z w``; identity at the first).
        step_rotvec: (N-1, 3) rad, the rotation of each interval in the IMU frame at its start (midpoint rate x dt).
    """

    t_s: FloatArray
    quat_start_imu_xyzw: FloatArray
    step_rotvec: FloatArray

    def at(self, t_s: FloatArray) -> Rotation:
        """``R_start_imu`` at the times ``t_s`` (M,) s: the sample before times the fraction of its interval's
        rotation (constant rate inside an interval); clamped to the span's ends."""
        t = np.asarray(t_s, dtype=float)
        k = np.clip(np.searchsorted(self.t_s, t, side="right") - 1, 0, len(self.t_s) - 2)
        dt = self.t_s[k + 1] - self.t_s[k]
        frac = np.clip((t - self.t_s[k]) / dt, 0.0, 1.0)
        return Rotation.from_quat(self.quat_start_imu_xyzw[k]) * Rotation.from_rotvec(
            frac[:, None] * self.step_rotvec[k]
        )


def integrate_gyro(t_s: FloatArray, omega_imu_in_imu: FloatArray) -> GyroAttitude:
    """Integrate angular rates into ``R_start_imu``: ``R_{k+1} = R_k Exp(0.5 (w_k + w_{k+1}) dt_k)``.

    Args:
        t_s: (N,) s, strictly increasing, N >= 2.
        omega_imu_in_imu: (N, 3) rad/s, the gyroscope in the IMU frame.

    Raises:
        MetricsError: fewer than two samples, shapes disagree or stamps not increasing.
    """
    t = np.asarray(t_s, dtype=float)
    w = np.asarray(omega_imu_in_imu, dtype=float)
    if len(t) < 2 or w.shape != (len(t), 3) or np.any(np.diff(t) <= 0):
        raise MetricsError(f"gyroscope: need >= 2 increasing stamps and (N, 3) rates; got {t.shape}, {w.shape}")
    phi = 0.5 * (w[1:] + w[:-1]) * np.diff(t)[:, None]
    steps = Rotation.from_rotvec(phi).as_quat()
    q = np.empty((len(t), 4))
    q[0] = (0.0, 0.0, 0.0, 1.0)
    x, y, z, s = 0.0, 0.0, 0.0, 1.0
    for k, (bx, by, bz, bs) in enumerate(steps):  # Hamilton product q_k * step_k, renormalised
        x, y, z, s = (
            s * bx + x * bs + y * bz - z * by,
            s * by - x * bz + y * bs + z * bx,
            s * bz + x * by - y * bx + z * bs,
            s * bs - x * bx - y * by - z * bz,
        )
        n = math.sqrt(x * x + y * y + z * z + s * s)
        x, y, z, s = x / n, y / n, z / n, s / n
        q[k + 1] = (x, y, z, s)
    return GyroAttitude(t, q, phi)


@dataclass(frozen=True)
class RotationClockProblem:
    """The least squares of :func:`fit_gyro_clock` on ``time_warp``'s parameters ``x = (tau_0, rho (K-1,))``.

    Attributes:
        clock: the knots, start and rate priors (``time_warp.WarpProblem``; its yaw residuals are not used).
        attitude: the integrated gyroscope.
        dgt_quat: (M - lag_rows, 4) ``R_gt_i^T R_gt_{i+lag}`` (``x y z w``), the motion capture's body frame.
        lag_rows: rows between the two ends of a compared rotation.
        sigma_rotation_rad: scale of a rotation residual component, rad.
    """

    clock: WarpProblem
    attitude: GyroAttitude
    dgt_quat: FloatArray
    lag_rows: int
    sigma_rotation_rad: float

    @property
    def x0(self) -> FloatArray:
        """The start (the offset+rate alignment's knots)."""
        return self.clock.x0

    @property
    def t_ref(self) -> FloatArray:
        """(N,) s, the gyroscope's stamps."""
        return self.attitude.t_s

    def mapped(self, x: FloatArray) -> FloatArray:
        """(M,) s, the rows' mapped times."""
        return self.clock.mapped(x)

    def inside(self, tau: FloatArray) -> NDArray[np.bool_]:
        """(M,) whether each mapped time lies inside the gyroscope's span."""
        m: NDArray[np.bool_] = (tau >= self.t_ref[0]) & (tau <= self.t_ref[-1])
        return m

    def pairs(self, m: NDArray[np.bool_]) -> NDArray[np.intp]:
        """Indices ``i`` of the pairs ``(i, i + lag_rows)`` whose both rows are in ``m``."""
        lag = self.lag_rows
        return np.flatnonzero(m[:-lag] & m[lag:])

    def rotation_residuals(self, x: FloatArray, m: NDArray[np.bool_]) -> FloatArray:
        """(P, 3) rad, ``Log((R(tau_i)^T R(tau_j))^T R_gt_i^T R_gt_j)`` of the pairs of ``m``."""
        i = self.pairs(m)
        tau = self.mapped(x)
        a = self.attitude.at(tau[i])
        b = self.attitude.at(tau[i + self.lag_rows])
        d: FloatArray = ((b.inv() * a) * Rotation.from_quat(self.dgt_quat[i])).as_rotvec()
        return d

    def jacobian(self, x: FloatArray, m: NDArray[np.bool_], step_s: float = 1e-4) -> FloatArray:
        """(R, K) the Jacobian of :meth:`residuals` by the chain ``d r / d tau`` (central differences of each pair's
        residual in its own two times, ``step_s``), ``d tau / d knots`` (the interpolation weights), ``d knots / d
        x`` (``knots_k = tau_0 + sum_{j<k} exp(rho_j) dkn_j``); the rate terms exactly. Four residual evaluations
        instead of one per parameter."""
        c, lag = self.clock, self.lag_rows
        i = self.pairs(m)
        tau = self.mapped(x)
        G = Rotation.from_quat(self.dgt_quat[i])

        def r(ta: FloatArray, tb: FloatArray) -> FloatArray:
            out: FloatArray = ((self.attitude.at(tb).inv() * self.attitude.at(ta)) * G).as_rotvec()
            return out

        ta, tb = tau[i], tau[i + lag]
        d_ta = (r(ta + step_s, tb) - r(ta - step_s, tb)) / (2 * step_s)  # (P, 3)
        d_tb = (r(ta, tb + step_s) - r(ta, tb - step_s)) / (2 * step_s)
        K = len(c.kn)
        seg = np.clip(np.searchsorted(c.kn, c.t_gt, side="right") - 1, 0, K - 2)
        w = np.clip((c.t_gt - c.kn[seg]) / c.dkn[seg], 0.0, 1.0)
        dtau_dkm = np.zeros((len(c.t_gt), K))
        rows = np.arange(len(c.t_gt))
        dtau_dkm[rows, seg] = 1.0 - w
        dtau_dkm[rows, seg + 1] += w
        dkm_dx = np.zeros((K, K))
        dkm_dx[:, 0] = 1.0
        dkm_dx[1:, 1:] = np.tril(np.ones((K - 1, K - 1))) * (np.exp(x[1:]) * c.dkn)[None, :]
        dtau_dx = dtau_dkm @ dkm_dx  # (M, K)
        J_rot = d_ta[:, :, None] * dtau_dx[i][:, None, :] + d_tb[:, :, None] * dtau_dx[i + lag][:, None, :]
        n = K - 1
        J_change = np.zeros((n - 1, K))
        J_change[:, 1:] = (np.eye(n, k=1) - np.eye(n))[:-1] / c.sigma_rate_change
        J_prior = np.hstack([np.zeros((n, 1)), np.eye(n) / c.sigma_rate_prior])
        return np.vstack([J_rot.reshape(-1, K) / self.sigma_rotation_rad, J_change, J_prior])

    def residuals(self, x: FloatArray, m: NDArray[np.bool_]) -> FloatArray:
        """The scaled residuals: rotations of the pairs of ``m``, change of log rate, departure from the start."""
        rho = x[1:]
        c = self.clock
        return np.concatenate(
            [
                self.rotation_residuals(x, m).ravel() / self.sigma_rotation_rad,
                np.diff(rho) / c.sigma_rate_change,
                (rho - c.rho0) / c.sigma_rate_prior,
            ]
        )


def gyro_offset_and_rate(
    t_gyro_s: FloatArray, omega_imu_in_imu: FloatArray, gt: Trajectory, *, rate_hz: float = 100.0, smooth_s: float = 0.1
) -> TimeAlignment:
    """Offset and rate of the nominal ground-truth clock on the yaw rate: the gyroscope's z (resampled at
    ``rate_hz``, moving average of ``smooth_s``) against the ground truth's (``time_alignment.yaw_rate_signal``);
    ``estimate_time_offset_and_rate``'s search (offset within 5 s, rate within 10 %)."""
    t = np.asarray(t_gyro_s, dtype=float)
    te = np.arange(t[0], t[-1], 1.0 / rate_hz)
    se = np.interp(te, t, np.asarray(omega_imu_in_imu, dtype=float)[:, 2])
    w = round(smooth_s * rate_hz)
    if w > 1:
        se = np.convolve(se, np.ones(w) / w, mode="same")
    tg, sg = yaw_rate_signal(gt, rate_hz=rate_hz, smooth_s=smooth_s)
    return estimate_time_offset_and_rate(te, se, tg, sg, step_s=1.0 / rate_hz)


def fit_gyro_clock(
    t_gyro_s: FloatArray,
    omega_imu_in_imu: FloatArray,
    gt: Trajectory,
    initial: TimeAlignment | None = None,
    *,
    knot_spacing_s: float = 0.25,
    lag_rows: int = 6,
    sigma_rotation_rad: float = math.radians(0.5),
    sigma_rate_change: float = 0.02,
    sigma_rate_prior: float = 0.15,
    min_rows: int = 20,
) -> TimeAlignment:
    """The piecewise-linear clock of unstamped ground-truth rows that makes their rotation over ``lag_rows`` rows
    agree with the integrated gyroscope (module docstring).

    Args:
        t_gyro_s: (N,) s, gyroscope stamps (the estimate's clock), strictly increasing.
        omega_imu_in_imu: (N, 3) rad/s, gyroscope (IMU frame aligned with the ground truth's body frame).
        gt: ground truth with nominal stamps (e.g. ``ground_truth.load_unstamped_csv``).
        initial: the start and the rate prior's centre; None: :func:`gyro_offset_and_rate`.
        knot_spacing_s: nominal s between knots.
        lag_rows: rows between the two ends of a compared rotation (>= 1).
        sigma_rotation_rad: scale of a rotation residual component, rad.
        sigma_rate_change, sigma_rate_prior: as ``time_alignment.fit_time_warp``'s.
        min_rows: fewest rows mapped inside the gyroscope's span.

    Returns:
        A :class:`TimeAlignment` with ``knots_s`` (apply it with ``.apply(gt)``); ``cost`` is the mean squared
        rotation residual (rad^2) of the pairs inside the span.

    Raises:
        MetricsError: bad shapes, ``lag_rows`` < 1 or not fewer than the rows, too few rows inside the span.
    """
    if not 1 <= lag_rows < len(gt):
        raise MetricsError(f"lag_rows must be in [1, {len(gt) - 1}], got {lag_rows}")
    attitude = integrate_gyro(t_gyro_s, omega_imu_in_imu)
    if initial is None:
        initial = gyro_offset_and_rate(attitude.t_s, omega_imu_in_imu, gt)
    t0 = float(gt.t_s[0])
    start = initial
    clock = warp_problem(
        attitude.t_s,
        np.concatenate([[0.0], np.cumsum(attitude.step_rotvec[:, 2])]),
        gt.t_s,
        np.unwrap(yaw_of(gt.quat_world_base_xyzw)),
        lambda t: start.map_time(t, t0),
        knot_spacing_s=knot_spacing_s,
        sigma_yaw_rad=sigma_rotation_rad,
        sigma_rate_change=sigma_rate_change,
        sigma_rate_prior=sigma_rate_prior,
    )
    R_gt = gt.rotations
    dgt = (R_gt[:-lag_rows].inv() * R_gt[lag_rows:]).as_quat()
    problem = RotationClockProblem(clock, attitude, dgt, lag_rows, sigma_rotation_rad)
    x, m = solve_warp(problem, min_rows, jac=problem.jacobian)
    r = problem.rotation_residuals(x, m)
    kn, km = clock.kn, clock.knots(x)
    tau = np.interp(gt.t_s, kn, km)
    return TimeAlignment(
        offset_s=float(km[0] - kn[0]),
        scale=float((km[-1] - km[0]) / (kn[-1] - kn[0])),
        cost=float(np.mean(r**2)) if r.size else float("nan"),
        overlap_s=float(tau[m][-1] - tau[m][0]),
        knots_s=(kn, km),
        not_determined=initial.not_determined,
        warp_start=(initial.offset_s, initial.scale),
    )


#: The fits whose departures from :func:`fit_gyro_clock`'s defaults measure how well the gyroscope determines the rows'
#: times (:func:`clock_spread`): half as many knots, half and twice the compared lag (0.05 and 0.19 s at 63 Hz),
#: twice the rotation residual's scale, a rate 2.5 times freer to change. Each is as defensible as the defaults.
CLOCK_VARIANTS: tuple[dict[str, Any], ...] = (
    {"knot_spacing_s": 0.5},
    {"lag_rows": 3},
    {"lag_rows": 12},
    {"sigma_rotation_rad": math.radians(1.0)},
    {"sigma_rate_change": 0.05},
)


@dataclass(frozen=True)
class ClockSpread:
    """How far reasonable clock fits put each ground-truth row (:func:`clock_spread`).

    Attributes:
        sigma_s: (M,) s, per row: the root mean square over the variants of their mapped time less the clock's.
        departures_s: (V, M) s, each variant's mapped time less the clock's, per row.
        variants: the ``fit_gyro_clock`` keywords of each variant.
    """

    sigma_s: FloatArray
    departures_s: FloatArray
    variants: tuple[dict[str, Any], ...]


def clock_spread(
    t_gyro_s: FloatArray,
    omega_imu_in_imu: FloatArray,
    gt: Trajectory,
    clock: TimeAlignment,
    initial: TimeAlignment,
    variants: tuple[dict[str, Any], ...] = CLOCK_VARIANTS,
) -> ClockSpread:
    """The timing uncertainty of a gyro-fitted ``clock``: the same fit (:func:`fit_gyro_clock`, same ``initial``)
    with each of ``variants``' settings, per row the root mean square of their departures from ``clock``.

    Where the gyroscope pins the rows' times (turns, distinct sway) the fits agree to a few ms; on a steady straight
    trot the rotation is nearly periodic and fits with other knots or lags settle up to 0.2 s apart (the real Go1
    trot, 8-9 s and 19 s). Not a posterior: a sensitivity of the fit, from the gyroscope and the motion capture only
    (no estimate), which ``unstamped_nees`` turns into the reference's position error (``sigma_s^2 v v^T``).

    Args:
        t_gyro_s, omega_imu_in_imu, gt: as :func:`fit_gyro_clock`.
        clock: the fitted clock (``fit_gyro_clock(t_gyro_s, omega_imu_in_imu, gt, initial)``).
        initial: the start it was fitted from.
        variants: ``fit_gyro_clock`` keyword sets (at least one).

    Raises:
        MetricsError: no variant; as :func:`fit_gyro_clock`.
    """
    if not variants:
        raise MetricsError("clock_spread: no variant to compare the clock with")
    t0 = float(gt.t_s[0])
    base = clock.map_time(gt.t_s, t0)
    dep = np.array(
        [fit_gyro_clock(t_gyro_s, omega_imu_in_imu, gt, initial, **kw).map_time(gt.t_s, t0) - base for kw in variants]
    )
    return ClockSpread(np.sqrt(np.mean(dep**2, axis=0)), dep, tuple(dict(v) for v in variants))
