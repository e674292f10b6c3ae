"""The gyroscope-fitted clock of unstamped motion capture (``evaluation.gyro_clock``) on generated data: a trot-like
attitude in closed form (roll, pitch, yaw as Z-Y-X Euler angles), its body rates from the Euler-rate relation (not
from the code under test), motion-capture frames at 60 Hz on a clock 0.3 % slow with single dropped frames and bursts
of 4-10 (seeded), spread evenly over the recording's span as the Go1 loader does."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation import Trajectory
from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.gyro_clock import (
    RotationClockProblem,
    clock_spread,
    fit_gyro_clock,
    gyro_offset_and_rate,
    integrate_gyro,
)
from robot_state_estimator.evaluation.time_warp import warp_problem

F_GAIT_HZ = 2.1
DURATION_S = 9.0


def euler_and_rates(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) roll, pitch, yaw (rad) and their rates (rad/s): a 2.1 Hz gait sway and two quarter turns."""
    w = 2 * np.pi * F_GAIT_HZ
    u1, u2 = np.clip((t - 2.5) / 1.5, 0, 1), np.clip((t - 5.5) / 1.5, 0, 1)
    ang = np.column_stack(
        [
            0.04 * np.sin(w * t) + 0.01 * np.sin(2 * np.pi * 0.37 * t),
            0.035 * np.sin(w * t + 1.0) + 0.015 * np.sin(2 * np.pi * 0.23 * t),
            np.pi / 2 * (3 * u1**2 - 2 * u1**3 + 3 * u2**2 - 2 * u2**3) + 0.03 * np.sin(w * t + 2.0),
        ]
    )
    rate = np.column_stack(
        [
            0.04 * w * np.cos(w * t) + 0.01 * 2 * np.pi * 0.37 * np.cos(2 * np.pi * 0.37 * t),
            0.035 * w * np.cos(w * t + 1.0) + 0.015 * 2 * np.pi * 0.23 * np.cos(2 * np.pi * 0.23 * t),
            np.pi / 2 * (6 * u1 * (1 - u1) + 6 * u2 * (1 - u2)) / 1.5 + 0.03 * w * np.cos(w * t + 2.0),
        ]
    )
    return ang, rate


def body_rates(t: np.ndarray) -> np.ndarray:
    """(N, 3) rad/s in the body frame for R = Rz(yaw) Ry(pitch) Rx(roll) (the Z-Y-X Euler kinematics)."""
    (phi, th, _), (dphi, dth, dpsi) = euler_and_rates(t)[0].T, euler_and_rates(t)[1].T
    return np.column_stack(
        [
            dphi - np.sin(th) * dpsi,
            np.cos(phi) * dth + np.sin(phi) * np.cos(th) * dpsi,
            -np.sin(phi) * dth + np.cos(phi) * np.cos(th) * dpsi,
        ]
    )


def attitude(t: np.ndarray) -> Rotation:
    ang = euler_and_rates(t)[0]
    return Rotation.from_euler("ZYX", ang[:, ::-1])


@pytest.fixture(scope="module")
def recording() -> tuple[np.ndarray, np.ndarray, Trajectory, np.ndarray]:
    """Gyroscope (400 Hz, 1 mrad/s noise), the motion capture with nominal stamps, and its rows' true times."""
    rng = np.random.default_rng(3)
    t_gyro = np.arange(0.0, DURATION_S, 1 / 400)
    gyro = body_rates(t_gyro) + rng.normal(0.0, 1e-3, (len(t_gyro), 3))
    n = np.arange(int((DURATION_S - 0.6) * 60 / 1.003))
    t_true = 0.3 + n / 60 * 1.003
    keep = rng.random(len(n)) > 0.04
    for start in rng.integers(0, len(n) - 10, 3):
        keep[start : start + rng.integers(4, 11)] = False
    t_true = t_true[keep]
    R = attitude(t_true) * Rotation.from_rotvec(rng.normal(0.0, math.radians(0.02), (len(t_true), 3)))
    t_nominal = np.linspace(t_gyro[0], t_gyro[-1], len(t_true))
    return t_gyro, gyro, Trajectory(t_nominal, np.zeros((len(t_true), 3)), R.as_quat()), t_true


def test_integrated_gyro_is_the_rotation_about_a_fixed_axis() -> None:
    """A constant rate about z: R(t) = Rz(w t) at the samples and in between (0.35 rad/s, 1/3 of an interval)."""
    t = np.arange(0.0, 2.0, 0.01)
    att = integrate_gyro(t, np.tile([0.0, 0.0, 0.35], (len(t), 1)))
    yaw = Rotation.from_quat(att.quat_start_imu_xyzw).as_euler("ZYX")[:, 0]
    np.testing.assert_allclose(np.unwrap(yaw), 0.35 * t, atol=1e-12)
    t_mid = t[:-1] + 0.01 / 3
    np.testing.assert_allclose(att.at(t_mid).as_rotvec()[:, 2], 0.35 * t_mid, atol=1e-12)


def test_integrated_gyro_follows_the_closed_form_attitude(recording) -> None:
    t_gyro, _, _, _ = recording
    att = integrate_gyro(t_gyro, body_rates(t_gyro))
    R_true = attitude(t_gyro[:1]).inv() * attitude(t_gyro)
    err = (R_true.inv() * Rotation.from_quat(att.quat_start_imu_xyzw)).magnitude()
    assert err.max() < 1e-4  # 9 s at 400 Hz, midpoint rule


def test_fitted_clock_recovers_the_dropped_frames(recording) -> None:
    """Offset+rate on the yaw rate leaves 62 ms RMS (the drops; 16 % of the rows within 10 ms); the gyro-fitted clock
    15 ms RMS, median 3.7 ms, 80 % of the rows within 10 ms: what a piecewise-linear clock with knots every 0.25 s
    can follow (a burst of 10 dropped frames is a 167 ms step, spread over its segment's 15 rows)."""
    t_gyro, gyro, gt, t_true = recording
    start = gyro_offset_and_rate(t_gyro, gyro, gt)
    fit = fit_gyro_clock(t_gyro, gyro, gt, start)
    err_start = start.map_time(gt.t_s, gt.t_s[0]) - t_true
    err_fit = fit.map_time(gt.t_s, gt.t_s[0]) - t_true
    rms = lambda e: float(np.sqrt(np.mean(e**2)))  # noqa: E731
    print(
        f"\nclock error RMS: offset+rate {1e3 * rms(err_start):.1f} ms, gyro fit {1e3 * rms(err_fit):.1f} ms; median "
        f"{1e3 * np.median(np.abs(err_fit)):.1f} ms, within 10 ms {np.mean(np.abs(err_fit) < 0.01):.2f} (start "
        f"{np.mean(np.abs(err_start) < 0.01):.2f})"
    )
    assert rms(err_start) > 0.04
    assert rms(err_fit) < 0.02
    assert np.median(np.abs(err_fit)) < 0.005
    assert np.mean(np.abs(err_fit) < 0.01) > 0.75
    assert fit.knots_s is not None and np.all(np.diff(fit.knots_s[1]) > 0)  # monotone


def test_jacobian_matches_finite_differences(recording) -> None:
    t_gyro, gyro, gt, _ = recording
    att = integrate_gyro(t_gyro, gyro)
    start = gyro_offset_and_rate(t_gyro, gyro, gt)
    t0 = float(gt.t_s[0])
    clock = warp_problem(
        att.t_s,
        np.zeros(len(att.t_s)),
        gt.t_s,
        np.zeros(len(gt)),
        lambda t: start.map_time(t, t0),
        knot_spacing_s=0.25,
        sigma_yaw_rad=0.01,
        sigma_rate_change=0.02,
        sigma_rate_prior=0.15,
    )
    R = gt.rotations
    problem = RotationClockProblem(clock, att, (R[:-6].inv() * R[6:]).as_quat(), 6, math.radians(0.5))
    x = problem.x0 + np.random.default_rng(1).normal(0.0, 0.01, len(problem.x0))
    m = problem.inside(problem.mapped(problem.x0))
    J = problem.jacobian(x, m)
    h = 1e-6
    J_num = np.column_stack(
        [(problem.residuals(x + d, m) - problem.residuals(x - d, m)) / (2 * h) for d in np.eye(len(x)) * h]
    )
    assert np.linalg.norm(J - J_num) < 0.01 * np.linalg.norm(J_num)


def test_bad_lag_is_refused(recording) -> None:
    t_gyro, gyro, gt, _ = recording
    with pytest.raises(MetricsError, match="lag_rows"):
        fit_gyro_clock(t_gyro, gyro, gt, lag_rows=0)


def test_clock_spread_grows_where_the_clock_errs(recording) -> None:
    """The spread of clock fits with other knots, lags and scales against the fitted clock's true error (the rows'
    true times): rows the clock puts more than 20 ms off spread about 4 times more than rows within 5 ms (measured
    8.8 / 5.2 / 1.9 ms medians for > 20 ms, 5-20 ms, < 5 ms), and the spread understates the error (RMS 8.8 against
    15 ms): a sensitivity of the fit, not its posterior (docs/uncertainty.md)."""
    t_gyro, gyro, gt, t_true = recording
    start = gyro_offset_and_rate(t_gyro, gyro, gt)
    fit = fit_gyro_clock(t_gyro, gyro, gt, start)
    spread = clock_spread(t_gyro, gyro, gt, fit, start)
    err = np.abs(fit.map_time(gt.t_s, gt.t_s[0]) - t_true)
    s = spread.sigma_s
    assert s.shape == gt.t_s.shape and spread.departures_s.shape == (len(spread.variants), len(gt))
    near, far = err < 0.005, err > 0.02
    assert near.sum() > 100 and far.sum() > 20
    assert np.median(s[far]) > 3 * np.median(s[near])
    assert np.sqrt(np.mean(s**2)) < np.sqrt(np.mean(err**2))


def test_clock_spread_of_the_same_fit_is_zero(recording) -> None:
    """A variant with the clock's own settings is the same deterministic fit: no spread."""
    t_gyro, gyro, gt, _ = recording
    start = gyro_offset_and_rate(t_gyro, gyro, gt)
    fit = fit_gyro_clock(t_gyro, gyro, gt, start)
    assert np.all(clock_spread(t_gyro, gyro, gt, fit, start, variants=({},)).sigma_s == 0.0)
    with pytest.raises(MetricsError, match="no variant"):
        clock_spread(t_gyro, gyro, gt, fit, start, variants=())
