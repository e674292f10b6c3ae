"""Compiled kernel of the flat feet's orientation update (numba, see :mod:`.jit`).

The equations are those of :mod:`robot_state_estimator.estimation.flat_feet` (the math reference; the numpy
reference is ``NumpyBackend.rotation_update``); the state buffers are those of
:mod:`robot_state_estimator.estimation.ekf.layout`. Checked equal to the reference to 1e-12 in
``test/estimation/test_flat_feet.py``.
"""

from __future__ import annotations

import numpy as np

from robot_state_estimator.estimation.ekf.backends.kernels.outputs import gyro_noise_shares
from robot_state_estimator.estimation.ekf.backends.kernels.propagation import rate_at_state
from robot_state_estimator.estimation.ekf.backends.kernels.update import update
from robot_state_estimator.estimation.ekf.layout import (
    C_R_BASE_IMU,
    C_SIGMA_GYRO_SAMPLE,
    CROSS_COLS,
    CROSS_HELD,
    CROSS_PREV,
)
from robot_state_estimator.estimation.ekf.layout import N_STATES as N
from robot_state_estimator.estimation.jit import kernel

#: first column of the gyro bias in the error state ``[dp_W, dv_B, dtheta_B, dba_S, dbg_S]``
E_BG = 12


@kernel
def rotation_update(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    feet: np.ndarray,
    qdot: np.ndarray,
    J6: np.ndarray,
    sr2: float,
    se2: float,
    gate: float,
    out: np.ndarray,
) -> int:
    """The orientation update of the flat stance feet ``feet`` (``NumpyBackend.rotation_update``):
    ``y_i = -J_ang,i qdot - omega_hat``, ``omega_hat`` the rate at the filter's time (``omega_base_in_base - alpha
    lead``), ``H_i = [0, 0, 0, 0, -R_base_imu]``, ``R_i = sr2 I + se2 J_ang,i J_ang,i^T + weight Sigma_g`` (B) and
    ``R_ij = weight Sigma_g`` between feet (the same readings' noise, gyro loading ``[-(1 - f) I, -f I]``;
    ``(lever, weight, f)`` of :func:`.outputs.gyro_noise_shares`), each gated on its NIS, the accepted ones fused in
    one Joseph-form update (:func:`.update.update`).

    Args:
        feet: (k,) int64 foot indices into J6. qdot: (nj,) rad/s. J6: (n, 6, nj) foot Jacobians in B.
        sr2: (rad/s)^2, foot angular velocity noise squared. se2: (rad/s)^2, joint velocity noise squared (0: no
            encoder term). gate: NIS gate per foot (<= 0: none).
        out: (13 k,) written: the innovations (k, 3), their covariances (k, 3, 3), the NIS (k,).

    Returns:
        The number of accepted feet, or -1 when an innovation covariance is not numerically positive definite
        (nothing changed: the caller uses the reference path).
    """
    k = feet.shape[0]
    nj = qdot.shape[0]
    m = 3 * k
    y = np.empty(m)
    H = np.zeros((m, N))
    Rm = np.zeros((m, m))
    G = np.zeros((m, CROSS_COLS))  # every foot measures the rate at the filter's time: -((1 - f) n_prev + f n_held)
    sizes = np.empty(k, dtype=np.int64)
    _, weight, held = gyro_noise_shares(x)
    omega = np.empty(3)
    rate_at_state(x, c, omega)
    for j in range(k):
        i = feet[j]
        sizes[j] = 3
        for a in range(3):
            z = 0.0
            for q in range(nj):
                z -= J6[i, 3 + a, q] * qdot[q]
            y[3 * j + a] = z - omega[a]
            G[3 * j + a, CROSS_PREV + a] = -(1.0 - held)
            G[3 * j + a, CROSS_HELD + a] = -held
            for b in range(3):
                H[3 * j + a, E_BG + b] = -c[C_R_BASE_IMU + 3 * a + b]
                r = weight * c[C_SIGMA_GYRO_SAMPLE + 3 * a + b]
                if a == b:
                    r += sr2
                if se2 > 0.0:
                    s = 0.0
                    for q in range(nj):
                        s += J6[i, 3 + a, q] * J6[i, 3 + b, q]
                    r += se2 * s
                Rm[3 * j + a, 3 * j + b] = r
                for t in range(k):  # the same reading's noise in every foot's innovation
                    if t != j:
                        Rm[3 * j + a, 3 * t + b] = weight * c[C_SIGMA_GYRO_SAMPLE + 3 * a + b]
    res = np.empty(10 * k)
    n_acc = update(x, P, c, y, H, Rm, G, sizes, gate, res)
    if n_acc < 0:
        return -1
    for a in range(m):
        out[a] = y[a]
    for a in range(10 * k):
        out[m + a] = res[a]
    return n_acc
