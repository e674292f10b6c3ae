"""The legs' kinematic scale in the published pose covariance (``ekf.leg_scale_std``, a consider covariance): a
constant relative scale error ``s`` of the leg odometry moves the position by ``s d`` (``d`` the horizontal
displacement since initialisation or ``set_pose``), so the position's covariance gains ``std^2 d d^T``; checked by
hand on both backends, zero at the anchor and after ``set_pose``, and on the geometry of a scaled displacement."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.estimation import BaseEkf, EkfSettings, imu_noise_from_spec

T0 = 1_700_000_000 * 1_000_000_000


def _filter(leg_scale_std: float, kernels: bool) -> BaseEkf:
    settings = EkfSettings(leg_scale_std=leg_scale_std)
    ekf = BaseEkf(pin.SE3.Identity(), imu_noise_from_spec(None, settings), settings)
    if kernels and not ekf.use_kernels:
        pytest.skip("numba is not importable")
    ekf.use_kernels = kernels
    ekf.initialize(T0, R_world_base=pin.rpy.rpyToMatrix(0.1, -0.2, 0.7), p_world_base=np.array([1.0, 2.0, 0.3]))
    return ekf


@pytest.mark.parametrize("kernels", [True, False])
def test_scale_term_by_hand(kernels: bool) -> None:
    """From (1, 2, 0.3) to (4, 6, 0.25): d = (3, 4) m, std 0.02: the position block gains 4e-4 [[9, 12], [12, 16]]
    m^2 (a 5 m walk, 0.1 m stddev along it, none across it or in height); the rest of the pose covariance is the
    filter's. In the output vector too."""
    a, b = _filter(0.02, kernels), _filter(0.0, kernels)
    for ekf in (a, b):
        ekf.p_world_base = np.array([4.0, 6.0, 0.25])
    extra = a.pose_covariance() - b.pose_covariance()
    expected = np.zeros((6, 6))
    expected[:2, :2] = 4e-4 * np.array([[9.0, 12.0], [12.0, 16.0]])
    np.testing.assert_allclose(extra, expected, rtol=0, atol=1e-15)
    d = np.array([3.0, 4.0]) / 5.0  # along the walk: 0.02 * 5 m; across: 0
    assert float(d @ extra[:2, :2] @ d) == pytest.approx(0.1**2)
    assert float(np.array([-d[1], d[0]]) @ extra[:2, :2] @ np.array([-d[1], d[0]])) == pytest.approx(0.0, abs=1e-15)
    out_a, out_b = a.output_vector(), b.output_vector()
    np.testing.assert_allclose((out_a - out_b)[13:49].reshape(6, 6), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("kernels", [True, False])
def test_scale_term_starts_at_the_anchor(kernels: bool) -> None:
    """At initialisation and after ``set_pose`` the displacement is zero: the published covariance is the filter's
    (``set_pose``'s promise: the next published covariance is the one given)."""
    a, b = _filter(0.05, kernels), _filter(0.0, kernels)
    np.testing.assert_array_equal(a.pose_covariance(), b.pose_covariance())
    given = np.diag([0.01, 0.02, 0.03, 1e-4, 2e-4, 3e-4])
    for ekf in (a, b):
        ekf.p_world_base = np.array([10.0, -3.0, 0.3])
        ekf.set_pose(np.array([7.0, 7.0, 0.3]), np.eye(3), given)
    np.testing.assert_allclose(a.pose_covariance(), given, rtol=1e-12, atol=1e-15)
    for ekf in (a, b):
        ekf.p_world_base = np.array([7.0, 9.0, 0.3])  # 2 m along y from the new anchor
    extra = a.pose_covariance() - b.pose_covariance()
    assert extra[1, 1] == pytest.approx((0.05 * 2.0) ** 2)
    assert extra[0, 0] == pytest.approx(0.0, abs=1e-15)


def test_scaled_path_error_is_one_stddev_along_the_displacement() -> None:
    """Geometry, independent of the filter: legs that measure a closed-form path (a quarter circle of 3 m radius then
    a straight 2 m) with a relative scale error s put the end at ``(1 + s)`` times the true displacement from the
    start, whatever the path's shape; with s equal to the stated stddev the error's NEES under the scale term alone
    (on its 1-D range) is 1."""
    s = 0.02
    theta = np.linspace(0.0, np.pi / 2, 200)
    arc = np.stack([3.0 * np.sin(theta), 3.0 - 3.0 * np.cos(theta)], axis=1)
    line = arc[-1] + np.outer(np.linspace(0.0, 2.0, 50), [0.0, 1.0])
    path = np.vstack([arc, line[1:]])
    steps = np.diff(path, axis=0)
    measured_end = path[0] + (1.0 + s) * steps.sum(axis=0)
    error = measured_end - path[-1]
    d = path[-1] - path[0]
    np.testing.assert_allclose(error, s * d, rtol=1e-12)
    cov = s**2 * np.outer(d, d)
    assert float(error @ np.linalg.pinv(cov) @ error) == pytest.approx(1.0, rel=1e-9)
