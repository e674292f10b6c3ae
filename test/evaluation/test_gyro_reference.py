"""The motion capture smoothed with the gyroscope and its own error (``evaluation.gyro_reference``) on generated
data: the attitude ``R(t) = Rz(c t) Rx(a sin(w t))`` in closed form, whose body rate is exactly
``(a w cos(w t), c sin(phi), c cos(phi))`` with ``phi = a sin(w t)`` (``Rx(phi)^T z``; not from the code under test),
a 400 Hz gyroscope with 1 mrad/s noise, and motion-capture rows at 60 Hz whose body-frame errors are a Gaussian AR(1)
of known stddev and correlation (seeded): its structure function, per-row variance and the variance of an n-row
mean have closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.gyro_clock import integrate_gyro
from robot_state_estimator.evaluation.gyro_reference import (
    carried_window_mean,
    gyro_tilt,
    reference_error,
    structure_function,
)
from robot_state_estimator.evaluation.unstamped_nees import smoothed_roll_pitch, smoothed_yaw

YAW_RATE, ROLL_AMP, W_GAIT = 0.5, 0.05, 2 * math.pi * 2.0
SIGMA_ROW, PHI = math.radians(0.6), 0.7  # the reference's error: stddev per axis, AR(1) coefficient per row
ROW_HZ = 60.0


def yaw_and_rate(t: np.ndarray, turning: bool) -> tuple[np.ndarray, np.ndarray]:
    """A constant turn at YAW_RATE, or (``turning``) turns back and forth, 1.5 sin(0.3 t) rad."""
    if turning:
        return 1.5 * np.sin(0.3 * t), 0.45 * np.cos(0.3 * t)
    return YAW_RATE * t, np.full_like(t, YAW_RATE)


def truth(t: np.ndarray, turning: bool = False) -> Rotation:
    yaw = yaw_and_rate(t, turning)[0]
    return Rotation.from_euler("z", yaw[:, None]) * Rotation.from_euler("x", (ROLL_AMP * np.sin(W_GAIT * t))[:, None])


def body_rate(t: np.ndarray, turning: bool = False) -> np.ndarray:
    phi = ROLL_AMP * np.sin(W_GAIT * t)
    yaw_rate = yaw_and_rate(t, turning)[1]
    return np.column_stack([ROLL_AMP * W_GAIT * np.cos(W_GAIT * t), yaw_rate * np.sin(phi), yaw_rate * np.cos(phi)])


def gyro(duration_s: float, bias: np.ndarray | None = None, seed: int = 1, turning: bool = False):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration_s, 1 / 400)
    w = body_rate(t, turning) + rng.normal(0.0, 1e-3, (len(t), 3)) + (0.0 if bias is None else bias)
    return integrate_gyro(t, w)


def ar1(n: int, seed: int) -> np.ndarray:
    """(n, 3) stationary AR(1) rows: stddev SIGMA_ROW, coefficient PHI."""
    rng = np.random.default_rng(seed)
    e = np.empty((n, 3))
    e[0] = rng.normal(0.0, SIGMA_ROW, 3)
    drive = rng.normal(0.0, SIGMA_ROW * math.sqrt(1 - PHI**2), (n, 3))
    for k in range(1, n):
        e[k] = PHI * e[k - 1] + drive[k]
    return e


def ar1_mean_variance(n: int) -> float:
    """Variance of the mean of n consecutive AR(1) rows: (sigma^2 / n) (1 + 2 sum_l (1 - l/n) phi^l)."""
    lags = np.arange(1, n)
    return SIGMA_ROW**2 / n * (1 + 2 * np.sum((1 - lags / n) * PHI**lags))


def angle(R: Rotation) -> np.ndarray:
    return np.linalg.norm(R.as_rotvec(), axis=1)


def test_noiseless_rows_come_back_unchanged() -> None:
    att = gyro(10.0)
    t = np.arange(1.0, 9.0, 1 / ROW_HZ)
    R = carried_window_mean(t, truth(t), att, 1.0)
    # the gyroscope's noise carried over <= 0.5 s: 1e-3 rad/s x 2.5 ms x sqrt(200 steps) = 3.5e-5 rad
    assert np.max(angle(R * truth(t).inv())) < 1e-4


def test_a_constant_gyro_bias_cancels_in_a_symmetric_window() -> None:
    bias = np.array([0.01, -0.01, 0.0])  # rad/s: carried 0.5 s one way it would turn a row by 5 mrad
    att = gyro(10.0, bias)
    t = np.arange(1.0, 9.0, 1 / ROW_HZ)
    err = angle(carried_window_mean(t, truth(t), att, 1.0) * truth(t).inv())
    interior = (t > 1.6) & (t < 8.4)
    # the first order b (t_i - t_j) cancels; the body's turning at YAW_RATE leaves the second order
    # |w x b| (t_i - t_j)^2 / 2, whose mean over a +-0.5 s window is |w| |b| / 24 = 0.29 mrad
    second_order = YAW_RATE * np.linalg.norm(bias) / 24
    assert np.max(err[interior]) < 1.3 * second_order
    one_sided = np.linalg.norm(bias) * 0.25  # the mean of b (t_j - t_i) over 0.5 s on one side
    assert np.max(err[interior]) < 0.15 * one_sided
    assert np.max(err[~interior]) > 0.5 * one_sided  # at the span's ends the window is one-sided: the bias shows


def test_the_reference_error_matches_the_ar1_closed_forms() -> None:
    att = gyro(70.0)
    t = np.arange(1.0, 69.0, 1 / ROW_HZ)
    e = ar1(len(t), seed=5)
    R_gt = truth(t) * Rotation.from_rotvec(e)
    D = structure_function(t, R_gt, att, 30)
    for lag in (1, 3, 10, 30):
        expected = 2 * SIGMA_ROW**2 * (1 - PHI**lag)
        np.testing.assert_allclose(D[lag - 1], expected, rtol=0.12)
    ref = reference_error(t, R_gt, att, 1.0)
    np.testing.assert_allclose(ref.sigma_row_rad, SIGMA_ROW, rtol=0.08)
    n = ref.rows_per_window
    assert n in (60, 61)  # +-0.5 s at 60 Hz
    # per axis x, y, z: 68 s hold about 68 independent 1 s means, so a stddev estimated from them errs by about
    # sqrt(1 / (2 * 68)) = 8.6 %; two of those allowed
    assert ref.sigma_mean_rad.shape == (3,)
    np.testing.assert_allclose(ref.sigma_mean_rad, math.sqrt(ar1_mean_variance(n)), rtol=0.18)
    # and the smoothed rows' actual error (against the truth) is what the estimate says
    smoothed = carried_window_mean(t, R_gt, att, 1.0)
    interior = (t > 1.6) & (t < 68.4)
    actual = (truth(t[interior]).inv() * smoothed[interior]).as_rotvec()[:, :2]
    np.testing.assert_allclose(actual.std(axis=0), math.sqrt(ar1_mean_variance(n)), rtol=0.15)
    assert math.sqrt(ar1_mean_variance(n)) < 0.3 * SIGMA_ROW  # the window removes most of the rows' error


def test_nees_with_the_reference_error_is_the_estimates_own() -> None:
    """An estimate with white roll/pitch errors of known covariance P (world axes): against the raw reference its
    NEES is inflated by the reference's error; against the smoothed one with P + Sigma_ref it is 2."""
    att = gyro(70.0)
    t = np.arange(1.0, 69.0, 1 / ROW_HZ)
    R_true = truth(t)
    R_gt = R_true * Rotation.from_rotvec(ar1(len(t), seed=7))
    rng = np.random.default_rng(9)
    sigma_est = math.radians(0.3)
    e_est = np.column_stack([rng.normal(0.0, sigma_est, (len(t), 2)), np.zeros(len(t))])
    R_est = Rotation.from_rotvec(-e_est) * R_true  # Log(R_true R_est^T) = e_est about the world axes
    P = np.broadcast_to(np.eye(2) * sigma_est**2, (len(t), 2, 2)).copy()
    raw = smoothed_roll_pitch(t, R_gt, R_est, P, att, 0.0)
    assert raw.per_row == pytest.approx(2 * (1 + SIGMA_ROW**2 / sigma_est**2), rel=0.12)  # 2 (1 + 4)
    assert raw.with_reference == pytest.approx(2.0, rel=0.12)  # a window of 0: the rows' own error, C(0)
    s = smoothed_roll_pitch(t, R_gt, R_est, P, att, 1.0)
    assert s.per_row > 2.2  # the smoothed reference's error still shows against P alone
    assert s.with_reference == pytest.approx(2.0, rel=0.12)


def test_yaw_nees_with_the_reference_error_is_the_estimates_own() -> None:
    """An estimate with a white yaw error of known variance P and a constant heading offset (removed with the start,
    0.5 s of rows): against the smoothed reference with ``P + 2 Sigma_ref`` (the row's reference error and the
    start's mean of it) the NEES averages 1 over runs. One run's figure carries one draw of the start's reference
    error, a constant over the run: with P = (0.3 deg)^2 and the smoothed reference's 0.19 deg it is
    ``(P + S + a^2) / (P + 2 S)``, ``a^2 ~ S chi2(1)``, stddev 0.31 per run; 12 runs: 0.09, 0.25 allowed."""
    att = gyro(70.0)
    t = np.arange(1.0, 69.0, 1 / ROW_HZ)
    R_true = truth(t)
    sigma_est = math.radians(0.3)
    P = np.full(len(t), sigma_est**2)
    start = t <= t[0] + 0.5
    raw, with_ref = [], []
    for seed in range(12):
        R_gt = R_true * Rotation.from_rotvec(ar1(len(t), seed=100 + seed))
        yaw_error = np.random.default_rng(200 + seed).normal(0.0, sigma_est, len(t)) + 0.05
        R_est = Rotation.from_rotvec(np.column_stack([np.zeros((len(t), 2)), -yaw_error])) * R_true
        s = smoothed_yaw(t, R_gt, R_est, P, att, 1.0, start)
        raw.append(s.per_row)
        with_ref.append(s.with_reference)
        assert s.reference.sigma_mean_rad.shape == (3,)
    assert float(np.mean(with_ref)) == pytest.approx(1.0, abs=0.25)
    assert float(np.mean(raw)) > 1.3  # the smoothed reference's error still shows against P alone


def test_the_tilt_comes_back_from_the_rotations_alone() -> None:
    """Rows of a body frame tilted by (0.8, -0.5) deg against the IMU (``R_gt = R_imu Exp(tilt)``), without and with
    the AR(1) error, and a gyroscope with a constant bias: the fit returns the tilt and the bias. The
    body turns back and forth: at a constant yaw rate ``w`` a tilt's effect, ``tilt x w dt``, is a constant bias's."""
    tilt = np.radians([0.8, -0.5])
    bias = np.array([0.004, -0.003, 0.002])  # rad/s
    att = gyro(40.0, bias, turning=True)
    t = np.arange(1.0, 39.0, 1 / ROW_HZ)
    R_tilted = truth(t, turning=True) * Rotation.from_rotvec([tilt[0], tilt[1], 0.0])
    exact = gyro_tilt(t, R_tilted, att)  # the gyroscope's own noise only
    np.testing.assert_allclose(exact.tilt_rad, tilt, atol=math.radians(0.01))
    np.testing.assert_allclose(exact.gyro_bias_rad_s, bias, atol=2e-5)
    assert math.sqrt(exact.variance_rad2) < math.radians(0.01)  # the halves agree
    # with the rows' 0.6 deg AR(1) error: a turn of up to 0.45 rad/s over 0.5 s shows a 0.01 rad tilt as 2 mrad
    fit = gyro_tilt(t, R_tilted * Rotation.from_rotvec(ar1(len(t), seed=3)), att)
    np.testing.assert_allclose(fit.tilt_rad, tilt, atol=math.radians(0.2))
    np.testing.assert_allclose(fit.halves_rad, [tilt, tilt], atol=math.radians(0.3))
    np.testing.assert_allclose(fit.gyro_bias_rad_s, bias, atol=5e-4)


def test_bad_input_is_named() -> None:
    att = gyro(5.0)
    t = np.arange(1.0, 4.0, 1 / ROW_HZ)
    with pytest.raises(MetricsError, match="outside the gyroscope's span"):
        carried_window_mean(t + 3.0, truth(t), att, 1.0)
    with pytest.raises(MetricsError, match="increasing"):
        carried_window_mean(t[::-1], truth(t), att, 1.0)
    with pytest.raises(MetricsError, match="window_s"):
        carried_window_mean(t, truth(t), att, -1.0)
    with pytest.raises(MetricsError, match="window_s"):
        reference_error(t, truth(t), att, float("nan"))
    with pytest.raises(MetricsError, match="plateau"):
        reference_error(t, truth(t), att, 1.0, plateau_s=(0.5, 10.0))
    with pytest.raises(MetricsError, match="no anchor row"):
        smoothed_yaw(t, truth(t), truth(t), np.ones(len(t)), att, 1.0, np.zeros(len(t), dtype=bool))
