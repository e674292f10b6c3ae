"""Checks and conversions of a pose given to the filter from outside (``set_pose``): a rotation matrix, a ROS pose
covariance, and its conversion to the filter's error coordinates."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.ekf.numerics import _orthonormalise

FloatArray = NDArray[np.float64]

_I3 = np.eye(3)


#: tolerance of :func:`check_rotation` on ``max |R^T R - I|`` (a rotation read from float64 numbers is within 1e-12)
ROTATION_TOLERANCE = 1e-6


def check_rotation(R: FloatArray, what: str = "R_world_base") -> FloatArray:
    """``R`` as a (3, 3) float64 rotation matrix, re-orthonormalised to rounding.

    Args:
        R: (3, 3) array-like, a rotation matrix: finite, ``max |R^T R - I| <= ROTATION_TOLERANCE`` and
            ``det R > 0``.
        what: its name in the error messages.

    Returns:
        (3, 3) float64, the nearest rotation (through a normalised quaternion).

    Raises:
        ValueError: wrong shape, a NaN/Inf, not orthonormal, or a reflection (``det < 0``); the message says which.
    """
    R = np.asarray(R, dtype=float)
    if R.shape != (3, 3):
        raise ValueError(f"{what} must be a (3, 3) rotation matrix, got shape {R.shape}")
    if not np.isfinite(R).all():
        raise ValueError(f"{what} is not finite: {R.tolist()}")
    err = float(np.abs(R.T @ R - _I3).max())
    det = float(np.linalg.det(R))
    if err > ROTATION_TOLERANCE or det <= 0.0:
        raise ValueError(
            f"{what} is not a rotation: max |R^T R - I| = {err:.3g} (tolerance {ROTATION_TOLERANCE:g}), det = {det:.6g}"
        )
    return _orthonormalise(R)


def pose_error_covariance(pose_covariance: FloatArray, R_world_base: FloatArray) -> FloatArray:
    """The (6, 6) covariance of the filter's pose error ``[dp_W, dtheta_B]`` from a ROS pose covariance: the exact
    inverse of :meth:`~.filter.BaseEkf.pose_covariance`.

    ROS (``geometry_msgs/PoseWithCovariance``, REP-103) orders the pose covariance ``x, y, z, rot x, rot y, rot z``,
    the rotation a small angle about the fixed (world, ``odom``) axes: ``R = Exp(dphi_W) R_hat``. The filter
    perturbs the attitude on the right, in the base frame: ``R = R_hat Exp(dtheta_B)`` (:mod:`.model`; Solà 2017,
    "Quaternion kinematics for the error-state Kalman filter", local and global perturbations), and
    ``R Exp(dtheta) = Exp(R dtheta) R`` (the adjoint of SO(3)), so ``dphi_W = R dtheta_B``. The published
    covariance is ``C = T P T^T`` with ``T = diag(I, R)``; here ``P = T^-1 C T^-T``, ``T^-1 = diag(I, R^T)``:
    ``P_pp = C_pp``, ``P_p,theta = C_p,rot R``, ``P_theta,theta = R^T C_rot,rot R``.

    Args:
        pose_covariance: (6, 6) m^2 / m rad / rad^2, ROS order, position in W, rotation about the W axes.
        R_world_base: (3, 3) attitude at which the covariance is given.

    Returns:
        (6, 6) float64, order ``[dp_W (m), dtheta_B (rad)]``, symmetric.
    """
    T_inv = np.eye(6)
    T_inv[3:6, 3:6] = np.asarray(R_world_base, dtype=float).T
    P: FloatArray = T_inv @ np.asarray(pose_covariance, dtype=float) @ T_inv.T
    return 0.5 * (P + P.T)


def check_pose_covariance(pose_covariance: FloatArray) -> FloatArray:
    """A ROS pose covariance as a (6, 6) float64 symmetric positive semi-definite matrix.

    Args:
        pose_covariance: (6, 6) or (36,) row-major (``geometry_msgs/PoseWithCovariance.covariance``), ROS order
            ``x, y, z, rot x, rot y, rot z`` (m^2, m rad, rad^2).

    Returns:
        (6, 6) float64, symmetrised (``(C + C^T) / 2``).

    Raises:
        ValueError: wrong size, a NaN/Inf, not symmetric (relative 1e-9), or an eigenvalue below
            ``-1e-10 max |C|`` (not positive semi-definite); the message says which.
    """
    C: FloatArray = np.asarray(pose_covariance, dtype=float)
    if C.shape == (36,):
        C = C.reshape(6, 6)
    if C.shape != (6, 6):
        raise ValueError(f"pose_covariance must be (6, 6) or (36,) row-major, got shape {C.shape}")
    if not np.isfinite(C).all():
        raise ValueError("pose_covariance is not finite (NaN/Inf)")
    scale = max(float(np.abs(C).max()), 1e-300)
    asym = float(np.abs(C - C.T).max())
    if asym > 1e-9 * scale:
        raise ValueError(f"pose_covariance is not symmetric: max |C - C^T| = {asym:.3g}")
    C = 0.5 * (C + C.T)
    lowest = float(np.linalg.eigvalsh(C).min())
    if lowest < -1e-10 * scale:
        raise ValueError(f"pose_covariance is not positive semi-definite: smallest eigenvalue {lowest:.3g}")
    return C


def check_pose(
    p_world_base: FloatArray, R_world_base: FloatArray, pose_covariance: FloatArray | None = None
) -> tuple[FloatArray, FloatArray, FloatArray | None]:
    """The arguments of :meth:`~.filter.BaseEkf.set_pose`, checked: ``(p (3,) m, R (3, 3) rotation, C (6, 6) or None)``.

    Raises:
        ValueError: ``p_world_base`` not (3,) or not finite, ``R_world_base`` not a rotation
            (:func:`check_rotation`), ``pose_covariance`` not symmetric positive semi-definite
            (:func:`check_pose_covariance`); the message names the problem.
    """
    p = np.asarray(p_world_base, dtype=float)
    if p.shape != (3,):
        raise ValueError(f"p_world_base must have shape (3,), got {p.shape}")
    if not np.isfinite(p).all():
        raise ValueError(f"p_world_base is not finite: {p.tolist()}")
    R = check_rotation(R_world_base)
    C = None if pose_covariance is None else check_pose_covariance(pose_covariance)
    return p, R, C
