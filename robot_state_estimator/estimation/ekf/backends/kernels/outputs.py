"""Compiled outputs of the filter: the attitude quaternion, the pose and twist covariances in ROS conventions, the
whole output vector (``common.output_layout``) and the finiteness check (the numpy reference:
:class:`~robot_state_estimator.estimation.ekf.backends.numpy_backend.NumpyBackend`)."""

from __future__ import annotations

import math

import numpy as np

from robot_state_estimator.estimation.ekf.backends.kernels.linalg import _quat_xyzw, _symmetrise
from robot_state_estimator.estimation.ekf.layout import (
    C_LEG_SCALE_VAR,
    C_P_BASE_IMU,
    C_R_BASE_IMU,
    C_RS_SIGMA,
    C_RS_SIGMA_RS,
    C_SIGMA_GYRO_SAMPLE,
    CROSS_COLS,
    CROSS_HELD,
    CROSS_PREV,
    X_BA,
    X_BG,
    X_DT_GYRO,
    X_GYRO_CROSS,
    X_LEAD,
    X_OMEGA,
    X_P,
    X_P_ANCHOR,
    X_R,
    X_V,
)
from robot_state_estimator.estimation.ekf.layout import N_STATES as N
from robot_state_estimator.estimation.jit import kernel


@kernel
def quat_xyzw(x: np.ndarray, out: np.ndarray) -> None:
    """out (4,) = the attitude quaternion ``x y z w`` (``BaseEkf.quat_world_base_xyzw``)."""
    _quat_xyzw(x, out)


@kernel
def pose_covariance(x: np.ndarray, P: np.ndarray, c: np.ndarray, out: np.ndarray) -> None:
    """out (6, 6) = T P_(p,theta) T^T with ``T = diag(I, R)``, symmetrised, plus the legs' scale term
    ``s2 d d^T`` on the position (``d`` the horizontal displacement from ``x[X_P_ANCHOR]``, ``s2 =
    c[C_LEG_SCALE_VAR]``) (``BaseEkf.pose_covariance``: position in W, rotation as small angles about the W axes)."""
    idx = (0, 1, 2, 6, 7, 8)
    R = x[X_R : X_R + 9].reshape((3, 3))
    TX = np.empty((6, 6))
    for a in range(6):
        for b in range(6):
            if a < 3:
                TX[a, b] = P[idx[a], idx[b]]
            else:
                i = a - 3
                TX[a, b] = R[i, 0] * P[6, idx[b]] + R[i, 1] * P[7, idx[b]] + R[i, 2] * P[8, idx[b]]
    for a in range(6):
        for b in range(6):
            if b < 3:
                out[a, b] = TX[a, b]
            else:
                j = b - 3
                out[a, b] = TX[a, 3] * R[j, 0] + TX[a, 4] * R[j, 1] + TX[a, 5] * R[j, 2]
    _symmetrise(out)
    s2 = c[C_LEG_SCALE_VAR]
    if s2 > 0.0:
        dx = x[X_P] - x[X_P_ANCHOR]
        dy = x[X_P + 1] - x[X_P_ANCHOR + 1]
        out[0, 0] += s2 * dx * dx
        out[0, 1] += s2 * dx * dy
        out[1, 0] += s2 * dx * dy
        out[1, 1] += s2 * dy * dy


@kernel
def gyro_noise_shares(x: np.ndarray) -> tuple[float, float, float]:
    """``(lever, weight, held)`` of ``ekf.model.gyro_noise_shares`` from ``x[X_LEAD]`` and ``x[X_DT_GYRO]``."""
    dtg = x[X_DT_GYRO]
    if dtg <= 0.0:
        return 0.0, 1.0, 1.0
    f = min(max(1.0 - x[X_LEAD] / dtg, 0.0), 1.0)
    return 1.0, (1.0 - f) * (1.0 - f) + f * f, f


@kernel
def twist_covariance(x: np.ndarray, P: np.ndarray, c: np.ndarray, out: np.ndarray) -> None:
    """out (6, 6) = T P_(v,b_g) T^T + the gyro's per-sample noise on the twist (``ProcessModel.twist_noise_at`` at
    :func:`gyro_noise_shares`: ``lever weight [r]x Sigma_g [r]x^T``, ``cross [r]x Sigma_g``, ``Sigma_g``, ``cross =
    lever held``) + ``T C6 B^T`` and its transpose (C6 the dv and dbg rows of ``x[X_GYRO_CROSS:+90]``, ``B = [lever
    (1 - held) [r]x, lever held [r]x; 0, I]``) with ``T = diag(I, -R_base_imu)``, symmetrised
    (``BaseEkf.twist_covariance``: linear and angular velocity in B)."""
    idx = (3, 4, 5, 12, 13, 14)
    TX = np.empty((6, 6))
    for a in range(6):
        for b in range(6):
            if a < 3:
                TX[a, b] = P[idx[a], idx[b]]
            else:
                i = a - 3
                TX[a, b] = -(
                    c[C_R_BASE_IMU + 3 * i] * P[12, idx[b]]
                    + c[C_R_BASE_IMU + 3 * i + 1] * P[13, idx[b]]
                    + c[C_R_BASE_IMU + 3 * i + 2] * P[14, idx[b]]
                )
    for a in range(6):
        for b in range(6):
            if b < 3:
                out[a, b] = TX[a, b]
            else:
                j = b - 3
                out[a, b] = -(
                    TX[a, 3] * c[C_R_BASE_IMU + 3 * j]
                    + TX[a, 4] * c[C_R_BASE_IMU + 3 * j + 1]
                    + TX[a, 5] * c[C_R_BASE_IMU + 3 * j + 2]
                )
    lever, weight, held = gyro_noise_shares(x)
    cross = lever * held
    vv = lever * weight
    for a in range(3):  # the gyro's noise: constants [r]x Sigma_g [r]x^T, [r]x Sigma_g and Sigma_g (ekf.layout)
        for b in range(3):
            rs_ab = cross * c[C_RS_SIGMA + 3 * a + b]
            out[3 + a, 3 + b] += c[C_SIGMA_GYRO_SAMPLE + 3 * a + b]
            out[a, b] += vv * c[C_RS_SIGMA_RS + 3 * a + b]
            out[a, 3 + b] += rs_ab
            out[3 + b, a] += rs_ab
    # X = T C6 B^T and its transpose, C6 the dv and dbg rows of the error's covariance with [n_prev, n_held]: rows v
    # (C's dv rows) and omega (-R_base_imu C's dbg rows); columns v (lever [r]x ((1 - held) t_prev + held t_held), a
    # row t of T C6) and omega (t_held)
    r0, r1, r2 = c[C_P_BASE_IMU], c[C_P_BASE_IMU + 1], c[C_P_BASE_IMU + 2]
    t = np.empty(CROSS_COLS)
    for a in range(6):
        zero = True
        for q in range(CROSS_COLS):
            if a < 3:
                tq = x[X_GYRO_CROSS + CROSS_COLS * (3 + a) + q]
            else:
                i = 3 * (a - 3)
                tq = -(
                    c[C_R_BASE_IMU + i] * x[X_GYRO_CROSS + CROSS_COLS * 12 + q]
                    + c[C_R_BASE_IMU + i + 1] * x[X_GYRO_CROSS + CROSS_COLS * 13 + q]
                    + c[C_R_BASE_IMU + i + 2] * x[X_GYRO_CROSS + CROSS_COLS * 14 + q]
                )
            t[q] = tq
            if tq != 0.0:
                zero = False
        if zero:
            continue
        s0 = lever * ((1.0 - held) * t[CROSS_PREV] + held * t[CROSS_HELD])
        s1 = lever * ((1.0 - held) * t[CROSS_PREV + 1] + held * t[CROSS_HELD + 1])
        s2 = lever * ((1.0 - held) * t[CROSS_PREV + 2] + held * t[CROSS_HELD + 2])
        row = (r1 * s2 - r2 * s1, r2 * s0 - r0 * s2, r0 * s1 - r1 * s0, t[CROSS_HELD], t[CROSS_HELD + 1],
               t[CROSS_HELD + 2])  # fmt: skip
        for b in range(6):  # X[a, :] and its transpose
            out[a, b] += row[b]
            out[b, a] += row[b]
    _symmetrise(out)


@kernel
def outputs(x: np.ndarray, P: np.ndarray, c: np.ndarray, out: np.ndarray) -> None:
    """out (91,) = ``BaseEkf.output_vector``: p (3), quaternion x y z w (4), v_base_in_base (3), omega_base_in_base (3),
    pose covariance (36), twist covariance (36), accelerometer bias (3), gyroscope bias (3)."""
    q = np.empty(4)
    _quat_xyzw(x, q)
    C = np.empty((6, 6))
    for i in range(3):
        out[i] = x[X_P + i]
        out[7 + i] = x[X_V + i]
        out[10 + i] = x[X_OMEGA + i]
        out[85 + i] = x[X_BA + i]
        out[88 + i] = x[X_BG + i]
    for i in range(4):
        out[3 + i] = q[i]
    pose_covariance(x, P, c, C)
    for a in range(6):
        for b in range(6):
            out[13 + 6 * a + b] = C[a, b]
    twist_covariance(x, P, c, C)
    for a in range(6):
        for b in range(6):
            out[49 + 6 * a + b] = C[a, b]


@kernel
def state_is_finite(x: np.ndarray, P: np.ndarray) -> bool:
    """True when P, R, p, v and the biases hold no NaN/Inf (``BaseEkf.state_is_finite``: one sum)."""
    total = 0.0
    for i in range(N):
        for j in range(N):
            total += P[i, j]
    for i in range(X_OMEGA):
        total += x[i]
    return math.isfinite(total)


@kernel
def finite_outputs(x: np.ndarray, P: np.ndarray, c: np.ndarray, out: np.ndarray) -> bool:
    """:func:`state_is_finite`, then :func:`outputs` into ``out`` (91,) if so (``BaseEkf.finite_output_vector``)."""
    if not state_is_finite(x, P):
        return False
    outputs(x, P, c, out)
    return True
