"""NEES against motion capture in another world frame (``evaluation.unstamped_nees``): hand-worked values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robot_state_estimator.evaluation import Trajectory, rot_z
from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.unstamped_nees import (
    nearest_samples,
    start_anchored_yaw_alignment,
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
