"""NEES against motion capture in another world frame (``evaluation.unstamped_nees``): hand-worked values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter1d
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation import Trajectory, rot_z
from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.unstamped_nees import (
    nearest_samples,
    reference_velocity,
    start_anchored_yaw_alignment,
    timing_nees,
    unstamped_nees,
    window_means,
)

YAW = 0.3
TRANS = np.array([1.0, -2.0, 0.5])


def test_window_means_by_hand() -> None:
    """Windows [0, 1) and [1, 2): mean errors 2 and 2, mean variances 2 and 4."""
    t = np.array([0.0, 0.5, 1.0, 1.5])
    e = np.array([[1.0], [3.0], [2.0], [2.0]])
    P = np.array([1.0, 3.0, 4.0, 4.0]).reshape(4, 1, 1)
    t_mid, e_w, P_w = window_means(t, e, P, 1.0)
    np.testing.assert_allclose(t_mid, [0.25, 1.25])
    np.testing.assert_allclose(e_w[:, 0], [2.0, 2.0])
    np.testing.assert_allclose(P_w[:, 0, 0], [2.0, 4.0])


def test_nearest_samples() -> None:
    traj = Trajectory(np.array([0.0, 1.0, 2.0]), np.zeros((3, 3)), np.tile([0, 0, 0, 1.0], (3, 1)))
    np.testing.assert_array_equal(nearest_samples(traj, np.array([-1.0, 0.4, 0.5, 0.6, 1.9, 5.0])), [0, 0, 0, 1, 2, 2])


def test_start_anchored_alignment_recovers_yaw_and_translation() -> None:
    p_est = np.random.default_rng(0).normal(size=(50, 3))
    p_gt = p_est @ rot_z(YAW).T + TRANS
    yaw, t = start_anchored_yaw_alignment(p_est, p_gt, np.arange(50) < 5)
    assert yaw == pytest.approx(YAW, abs=1e-12)
    np.testing.assert_allclose(t, TRANS, atol=1e-12)


def run(tilt_body: np.ndarray, tilt_world: np.ndarray, remove_tilt: bool, yaw_rate: float = 0.0) -> dict:
    """An estimate (5 rows, 0.5 s apart) and its ground truth: the estimate's world turned by YAW and moved by TRANS,
    a height error of 0.01 m/s from the first row, the attitude tilted in the world (``tilt_world``, rad) and the
    body (``tilt_body``), a heading error growing at ``yaw_rate`` (rad/s) from the first row; covariance diag(1e-4
    m^2 x 3, 1e-4, 1e-4, 1e-2 rad^2)."""
    t = np.arange(5) * 0.5
    p_est = np.column_stack([np.cos(t), np.sin(2 * t), 0.3 + 0.0 * t])
    R_est = Rotation.from_euler("ZX", np.column_stack([0.1 * t, 0.05 * np.sin(t)]))
    P = np.tile(np.diag([1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-2]), (5, 1, 1))
    est = Trajectory(t, p_est, R_est.as_quat(), pose_covariance=P)
    p_gt = p_est @ rot_z(YAW).T + TRANS + np.column_stack([0 * t, 0 * t, 0.01 * t])
    R_drift = Rotation.from_rotvec(np.column_stack([0 * t, 0 * t, yaw_rate * t]))
    R_gt = (
        R_drift
        * Rotation.from_rotvec(tilt_world)
        * Rotation.from_matrix(rot_z(YAW))
        * R_est
        * Rotation.from_rotvec(tilt_body)
    )
    gt = Trajectory(t, p_gt, R_gt.as_quat())
    return unstamped_nees(est, gt, start_s=0.0, window_s=1.0, anchor_s=0.0, remove_tilt=remove_tilt)


def test_blocks_by_hand() -> None:
    """Height errors 0.01 t at t = 0, 0.5, 1, 1.5, 2 over a variance of 1e-4: NEES t^2, mean 1.5 (position the same:
    x, y exact); roll/pitch (0.01, -0.02) rad in the world over 1e-4 each: 1 + 4 = 5 at every row. 1 s windows
    {0, 0.5}, {1, 1.5}, {2}."""
    res = run(np.zeros(3), np.array([0.01, -0.02, 0.0]), remove_tilt=False)
    b = res["blocks"]
    assert res["yaw_deg"] == pytest.approx(np.degrees(YAW), abs=1e-9)
    assert b["height"].per_row == pytest.approx(1.5, rel=1e-9)
    assert b["position"].per_row == pytest.approx(1.5, rel=1e-9)
    assert b["roll_pitch"].per_row == pytest.approx(5.0, rel=1e-6)
    # window means of the height error: 0.0025, 0.0125 and 0.02 m over 1e-4: 0.0625, 1.5625, 4 -> mean 1.875
    assert b["height"].windowed == pytest.approx((0.0625 + 1.5625 + 4.0) / 3, rel=1e-9)
    assert b["roll_pitch"].windowed == pytest.approx(5.0, rel=1e-6)
    assert (b["height"].n_rows, b["height"].n_windows) == (5, 3)


def test_yaw_is_measured_from_the_start() -> None:
    """A heading error growing at 0.01 rad/s on top of a constant one (0.2 rad about the world's z, removed with the
    start): errors 0.01 t at t = 0, 0.5, 1, 1.5, 2 over 1e-2 rad^2, NEES 0.01 t^2, mean 0.015; 1 s windows:
    mean errors 0.0025, 0.0125, 0.02 -> (6.25e-6 + 1.5625e-4 + 4e-4) / 1e-2 / 3. The positions, and so the world
    yaw fitted on them, are unchanged."""
    res = run(np.zeros(3), np.array([0.0, 0.0, 0.2]), remove_tilt=False, yaw_rate=0.01)
    b = res["blocks"]
    assert res["yaw_deg"] == pytest.approx(np.degrees(YAW), abs=1e-9)
    assert b["yaw"].dof == 1
    assert b["yaw"].per_row == pytest.approx(0.015, rel=1e-6)
    assert b["yaw"].windowed == pytest.approx((6.25e-6 + 1.5625e-4 + 4e-4) / 1e-2 / 3, rel=1e-6)
    assert b["roll_pitch"].per_row == pytest.approx(0.0, abs=1e-9)
    assert run(np.zeros(3), np.zeros(3), remove_tilt=False)["blocks"]["yaw"].per_row == pytest.approx(0.0, abs=1e-20)


def test_constant_body_tilt_is_removed() -> None:
    """A constant body-frame tilt of the ground truth is a calibration: found and removed, no roll/pitch error left."""
    res = run(np.array([0.01, -0.02, 0.0]), np.zeros(3), remove_tilt=True)
    np.testing.assert_allclose(res["tilt_deg"], np.degrees([0.01, -0.02]), atol=1e-9)
    assert res["blocks"]["roll_pitch"].per_row == pytest.approx(0.0, abs=1e-12)


def test_no_covariance_is_refused() -> None:
    traj = Trajectory(np.array([0.0, 1.0]), np.zeros((2, 3)), np.tile([0, 0, 0, 1.0], (2, 1)))
    with pytest.raises(MetricsError, match="covariance"):
        unstamped_nees(traj, traj, start_s=0.0)


def test_reference_velocity_of_a_straight_line_on_uneven_rows() -> None:
    """p = (1, -2, 0.5) m/s t on rows 10-30 ms apart: every difference is the velocity, at the ends too."""
    t = np.cumsum(np.random.default_rng(4).uniform(0.01, 0.03, 200))
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(reference_velocity(t, t[:, None] * v), np.tile(v, (200, 1)), rtol=1e-9)


def test_reference_velocity_of_a_parabola_is_the_centred_difference() -> None:
    """p = t^2 on rows 20 ms apart (y: 0): the rows within 0.1 s centred on a row are 2 either side, so the
    difference is exact at inner rows, 2 t; the first and last rows take the one-sided difference over the rows
    within 0.05 s (t_0 + t_2 at the first: 0.04 m/s at t = 0)."""
    t = np.arange(0.0, 1.0, 0.02)
    v = reference_velocity(t, np.column_stack([t**2, 0 * t, 0 * t]))
    np.testing.assert_allclose(v[2:-2, 0], 2 * t[2:-2], atol=1e-12)
    assert v[0, 0] == pytest.approx(t[0] + t[2]) and v[-1, 0] == pytest.approx(t[-3] + t[-1])
    np.testing.assert_array_equal(v[:, 1:], 0.0)
    with pytest.raises(MetricsError, match="strictly increasing"):
        reference_velocity(np.array([0.0, 0.1, 0.1]), np.zeros((3, 3)))


def test_timing_nees_by_hand() -> None:
    """Two rows, the anchor the first: it moves at (1, 0, 0) m/s with timing stddev 0.1 s, the second at (0, 1, 0)
    with 0.2 s; P 0.01 m^2 per axis. Row 0 (error 0): x variance 0.01 + 0.01 (its own) + 0.01 (the anchor's mean),
    NEES 0. Row 1, error (0.1, 0.2, 0) m: x 0.01 + 0.01 (the anchor) -> 0.01 / 0.02, y 0.01 + 0.04 -> 0.04 / 0.05:
    NEES 1.3; the mean 0.65. Height: row 1's z error 0, so 0."""
    t = np.array([0.0, 1.0])
    errors = np.array([[0.0] * 6, [0.1, 0.2, 0.0, 0.0, 0.0, 0.0]])
    P = np.tile(np.eye(6) * 0.01, (2, 1, 1))
    v = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    res = timing_nees(t, errors, P, v, np.array([0.1, 0.2]), np.array([True, False]), 1.0)
    assert res.blocks["position"].per_row == pytest.approx(0.65, rel=1e-12)
    assert res.blocks["height"].per_row == pytest.approx(0.0, abs=1e-15)
    assert res.anchor_offset_m == pytest.approx(0.1)
    with pytest.raises(MetricsError, match="anchor"):
        timing_nees(t, errors, P, v, np.array([0.1, 0.2]), np.array([False, False]), 1.0)


def test_timing_error_counted_makes_a_late_reference_consistent() -> None:
    """Motion capture rows stamped with an error dt of stddev sigma_t (40 ms, smooth over 0.25 s, seeded) of a robot
    that stands for 1 s (the anchor's rows), then walks at 0.8 m/s (reached over 1 s) along a line turning at
    10 deg/s, against an estimate whose position errs by its own covariance (1 cm per axis): each row is v dt off
    along the velocity. Without the timing error the position NEES is about 3 + (0.8 x 0.04 / 0.01)^2 = 13.2 on
    average; counting ``sigma_t^2 v v^T`` about 3 (3 DoF). Measured over 8 seeds: 12.0-14.2 and 3.00-3.64, mean 3.18
    (single runs' 95 % bands about 2.7-3.3: one seed of 8 above; the anchor's mean position carries the estimate's
    noise into every row, and ``time_average_band`` takes one effective sample size for a white and a slow part)."""
    sigma_t, sigma_p, speed, rate = 0.04, 0.01, 0.8, np.radians(10.0)
    t_fine = np.arange(-1.0, 31.0, 1e-3)
    v_fine = speed * np.clip(t_fine - 1.0, 0.0, 1.0)
    heading_fine = rate * np.concatenate([[0.0], np.cumsum(v_fine[:-1] > 0) * 1e-3])
    step = (v_fine * np.array([np.cos(heading_fine), np.sin(heading_fine)])).T[:-1] * 1e-3  # forward Euler, 1 ms
    xy = np.concatenate([[[0.0, 0.0]], np.cumsum(step, axis=0)])

    def pose(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = np.column_stack([np.interp(t, t_fine, xy[:, 0]), np.interp(t, t_fine, xy[:, 1]), 0.3 + 0 * t])
        return p, Rotation.from_euler("z", np.interp(t, t_fine, heading_fine)[:, None]).as_quat()

    t_true = np.arange(0.0, 30.0, 1 / 60)
    t_est = np.arange(-0.5, 30.5, 1 / 400)
    P = np.tile(np.diag([sigma_p**2] * 3 + [1e-4] * 3), (len(t_est), 1, 1))
    values = []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        dt = gaussian_filter1d(rng.normal(0.0, 1.0, len(t_true)), 15)  # a clock error smooth over 0.25 s
        dt *= sigma_t / np.std(dt)
        gt = Trajectory(t_true + dt, *pose(t_true))
        p_est, q_est = pose(t_est)
        est = Trajectory(t_est, p_est + rng.normal(0.0, sigma_p, (len(t_est), 3)), q_est, pose_covariance=P)
        sigma_rows = np.full(len(gt.t_s), sigma_t)
        res = unstamped_nees(est, gt, start_s=0.0, remove_tilt=False, timing_sigma_s=sigma_rows)
        plain, counted = res["blocks"]["position"], res["timing"].blocks["position"]
        print(f"\nseed {seed}: position NEES {plain.per_row:.2f}, counting the timing {counted.per_row:.2f}")
        assert 9.0 < plain.per_row < 18.0
        assert res["timing"].sigma_median_s == pytest.approx(sigma_t)
        values.append(counted.per_row)
    print(f"mean over the seeds {np.mean(values):.3f}")
    assert 2.85 < np.mean(values) < 3.3
    with pytest.raises(MetricsError, match="one per ground-truth row"):
        unstamped_nees(est, gt, start_s=0.0, timing_sigma_s=sigma_rows[:-1])
