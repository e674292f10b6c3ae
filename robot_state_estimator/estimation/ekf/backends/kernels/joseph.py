"""Compiled Joseph-form update of the filter: the innovation's correlation with the gyro readings' noise, the
update itself with the error injected and the covariance reset, and the update of a subset of a stacked measurement's
rows (the numpy reference: ``numpy_updates.joseph_update``; the equations: :mod:`robot_state_estimator.estimation.ekf.
measurements`, "Update", and :mod:`robot_state_estimator.estimation.ekf.model`, "Correlated gyro noise")."""

from __future__ import annotations

import numpy as np

from robot_state_estimator.estimation.ekf.backends.kernels.linalg import (
    _carve,
    _cho_solve,
    _cholesky,
    _exp3,
    _mm_skip,
    _symmetrise,
    _transpose,
)
from robot_state_estimator.estimation.ekf.backends.kernels.propagation import _omega_from_gyro
from robot_state_estimator.estimation.ekf.layout import (
    C_SIGMA_GYRO_SAMPLE,
    CROSS_COLS,
    CROSS_HELD,
    X_BA,
    X_BG,
    X_GYRO_CROSS,
    X_OMEGA,
    X_P,
    X_R,
    X_V,
)
from robot_state_estimator.estimation.ekf.layout import N_STATES as N
from robot_state_estimator.estimation.jit import kernel


@kernel
def _gyro_correlation(
    x: np.ndarray, H: np.ndarray, G: np.ndarray, U: np.ndarray, S: np.ndarray, Rm: np.ndarray
) -> bool:
    """``U`` (15, m) = ``C G^T``, the error's covariance with the gyro noise of innovations of loading G (m, 6), from
    ``C = x[X_GYRO_CROSS:+90]`` (15, 6), and ``H U + (H U)^T`` taken off both S and the noise Rm (m, m), which the
    Joseph form then uses as ``R - H U - U^T H^T`` (``numpy_updates.gyro_correlation`` and ``innovation_terms``);
    False, with U, S and Rm untouched, when C is zero (the usual case)."""
    nonzero = False
    for i in range(N * CROSS_COLS):
        if x[X_GYRO_CROSS + i] != 0.0:
            nonzero = True
            break
    if not nonzero:
        return False
    m = G.shape[0]
    for i in range(N):
        o = X_GYRO_CROSS + CROSS_COLS * i
        for a in range(m):
            u = 0.0
            for q in range(CROSS_COLS):
                u += x[o + q] * G[a, q]
            U[i, a] = u
    V = np.empty((m, m))
    _mm_skip(H, U, V)
    for a in range(m):
        for b in range(a, m):
            v = V[a, b] + V[b, a]
            S[a, b] -= v
            Rm[a, b] -= v
            if b != a:
                S[b, a] -= v
                Rm[b, a] -= v
    return True


@kernel
def _joseph(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    y: np.ndarray,
    H: np.ndarray,
    HP: np.ndarray,
    S: np.ndarray,
    Rm: np.ndarray,
    G: np.ndarray,
    U: np.ndarray,
    has_U: bool,
) -> bool:
    """Joseph-form update and error injection (``numpy_updates.joseph_update``; ``ekf.measurements``, "Update").

    y (m,) innovation, H (m, 15), HP (m, 15) = H P, S (m, m) the innovation covariance (``H P H^T + R - H U - U^T
    H^T``, symmetrised), Rm (m, m) the noise less the same correlation when ``has_U`` (``R - H U - U^T H^T``:
    :func:`_gyro_correlation`), G (m, 6) the rows' load of the gyro readings' noise ``[n_prev, n_held]``,
    U (15, m) = ``C G^T`` when ``has_U`` (:func:`_gyro_correlation`; else zero and not read). ``K = (P H^T - U)
    S^-1`` (Cholesky); the error's covariance with the readings' noise (``x[X_GYRO_CROSS:+90]``, C (15, 6)) becomes
    ``C + K (G diag(Sigma_g, Sigma_g) - H C)``; ``P = (I - K H) P (I - K H)^T + K R K^T + (I - K H) U K^T + K U^T (I
    - K H)^T`` evaluated as ``W = P - K (H P)`` (= ``(I - K H) P``), ``Z = K Rm - W H^T + U``, ``P =
    W + Z K^T + K U^T`` on the upper triangle, mirrored (the same products regrouped; H's zero columns skipped),
    injection of ``dx = K y`` with ``R = R Exp(dtheta)`` and the reset ``G = I - [dtheta / 2]x`` (Solà 2017 sec.
    7.2), P symmetrised, ``omega_base_in_base`` recomputed with the new gyro bias. Returns False, with nothing
    changed, when S is not numerically positive definite (the caller then uses the reference path, which falls back
    to LU).
    """
    m = y.shape[0]
    ws = np.empty(m * m + 2 * m * N + 2 * N * N + 5 * N + 27 + CROSS_COLS * m)
    L, o = _carve(ws, 0, m, m)
    if not _cholesky(S, L):
        return False
    Kt, o = _carve(ws, o, m, N)  # (m, 15) = S^-1 (H P - U^T) = K^T
    Kt[:, :] = HP
    if has_U:
        for a in range(m):
            for j in range(N):
                Kt[a, j] -= U[j, a]
    _cho_solve(L, Kt)
    # C += K (G diag(Sigma_g, Sigma_g) - H C) on all rows; C zero (not has_U) and no load of the previous reading
    # (at a reading's stamp): its columns stay zero and are skipped
    q0 = 0
    if not has_U:
        q0 = CROSS_HELD
        for a in range(m):
            for t in range(3):
                if G[a, t] != 0.0:
                    q0 = 0
    E, o = _carve(ws, o, m, CROSS_COLS)
    for a in range(m):
        for q in range(q0, CROSS_COLS):
            blk = q - q % 3
            b = q % 3
            e = 0.0
            for t in range(3):
                e += G[a, blk + t] * c[C_SIGMA_GYRO_SAMPLE + 3 * t + b]
            if has_U:
                for j in range(N):
                    h = H[a, j]
                    if h != 0.0:
                        e -= h * x[X_GYRO_CROSS + CROSS_COLS * j + q]
            E[a, q] = e
    for i in range(N):
        for q in range(q0, CROSS_COLS):
            acc = 0.0
            for a in range(m):
                acc += Kt[a, i] * E[a, q]
            x[X_GYRO_CROSS + CROSS_COLS * i + q] += acc
    dxm, o = _carve(ws, o, 1, N)
    dx = dxm[0]
    dx[:] = 0.0
    for a in range(m):
        ya = y[a]
        for j in range(N):
            dx[j] += Kt[a, j] * ya
    # H's non-zero columns.
    cols = np.empty(N, dtype=np.int64)
    n_cols = 0
    for j in range(N):
        for a in range(m):
            if H[a, j] != 0.0:
                cols[n_cols] = j
                n_cols += 1
                break
    # W = (I - K H) P = P - K (H P).
    W, o = _carve(ws, o, N, N)
    W[:, :] = P
    for i in range(N):
        for a in range(m):
            k = Kt[a, i]
            for j in range(N):
                W[i, j] -= k * HP[a, j]
    # Zt = (K Rm - W H^T + U)^T (m, 15), Rm already less the correlation (:func:`_gyro_correlation`).
    Zt, o = _carve(ws, o, m, N)
    Zt[:, :] = 0.0
    for a in range(m):
        for b in range(m):
            rab = Rm[a, b]
            if rab != 0.0:
                for i in range(N):
                    Zt[b, i] += Kt[a, i] * rab
    if has_U:
        for b in range(m):
            for i in range(N):
                Zt[b, i] += U[i, b]
    Wt, o = _carve(ws, o, N, N)
    _transpose(W, Wt)
    for b in range(m):
        for q in range(n_cols):
            j = cols[q]
            h = H[b, j]
            for i in range(N):
                Zt[b, i] -= h * Wt[j, i]
    # P = W + Z K^T + K U^T (upper triangle, mirrored).
    for i in range(N):
        for j in range(i, N):
            P[i, j] = W[i, j]
        for b in range(m):
            z = Zt[b, i]
            for j in range(i, N):
                P[i, j] += z * Kt[b, j]
        if has_U:
            for b in range(m):
                kb = Kt[b, i]
                for j in range(i, N):
                    P[i, j] += kb * U[j, b]
        for j in range(i + 1, N):
            P[j, i] = P[i, j]
    _inject(x, P, c, dx)
    return True


@kernel
def _inject(x: np.ndarray, P: np.ndarray, c: np.ndarray, dx: np.ndarray) -> None:
    """Inject the error ``dx`` (15,) into the nominal state (``R = R Exp(dtheta)``, the rest additive), reset the
    covariances of the attitude error (P's, and with the gyro noise, ``x[X_GYRO_CROSS:+90]``) with ``G = I - [dtheta /
    2]x`` (Solà 2017 sec. 7.2), symmetrise P and recompute
    ``omega_base_in_base`` with the new gyro bias."""
    for i in range(3):
        x[X_P + i] = x[X_P + i] + dx[i]
        x[X_V + i] = x[X_V + i] + dx[3 + i]
        x[X_BA + i] = x[X_BA + i] + dx[9 + i]
        x[X_BG + i] = x[X_BG + i] + dx[12 + i]
    ws = np.empty(2 * 9 + 9 + 3 * N)
    E, o = _carve(ws, 0, 3, 3)
    _exp3(dx[6], dx[7], dx[8], E)
    R = x[X_R : X_R + 9].reshape((3, 3))
    Rn, o = _carve(ws, o, 3, 3)
    for i in range(3):
        for j in range(3):
            Rn[i, j] = R[i, 0] * E[0, j] + R[i, 1] * E[1, j] + R[i, 2] * E[2, j]
    for i in range(3):
        for j in range(3):
            R[i, j] = Rn[i, j]
    h0 = 0.5 * dx[6]
    h1 = 0.5 * dx[7]
    h2 = 0.5 * dx[8]
    G, o = _carve(ws, o, 3, 3)  # I - [dtheta / 2]x
    G[0, 0] = 1.0
    G[0, 1] = h2
    G[0, 2] = -h1
    G[1, 0] = -h2
    G[1, 1] = 1.0
    G[1, 2] = h0
    G[2, 0] = h1
    G[2, 1] = -h0
    G[2, 2] = 1.0
    T, o = _carve(ws, o, 3, N)
    for i in range(3):
        for j in range(N):
            T[i, j] = G[i, 0] * P[6, j] + G[i, 1] * P[7, j] + G[i, 2] * P[8, j]
    for i in range(3):
        for j in range(N):
            P[6 + i, j] = T[i, j]
    for i in range(N):
        p6 = P[i, 6]
        p7 = P[i, 7]
        p8 = P[i, 8]
        for j in range(3):
            P[i, 6 + j] = p6 * G[j, 0] + p7 * G[j, 1] + p8 * G[j, 2]
    o6 = X_GYRO_CROSS + CROSS_COLS * 6  # the attitude rows of the error's covariance with the gyro noise
    for q in range(CROSS_COLS):
        c6 = x[o6 + q]
        c7 = x[o6 + CROSS_COLS + q]
        c8 = x[o6 + 2 * CROSS_COLS + q]
        for i in range(3):
            x[o6 + CROSS_COLS * i + q] = G[i, 0] * c6 + G[i, 1] * c7 + G[i, 2] * c8
    _symmetrise(P)
    _omega_from_gyro(x, c, x, X_OMEGA)


@kernel
def _stacked_products(P: np.ndarray, H: np.ndarray, Rm: np.ndarray, HP: np.ndarray, S: np.ndarray) -> None:
    """HP (m, 15) = H P and S (m, m) = H P H^T + R, symmetrised."""
    m = H.shape[0]
    _mm_skip(H, P, HP)
    PHt = np.empty((N, m))
    _transpose(HP, PHt)
    _mm_skip(H, PHt, S)
    for a in range(m):
        for b in range(m):
            S[a, b] += Rm[a, b]
    _symmetrise(S)


@kernel
def _update_subset(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    y: np.ndarray,
    H: np.ndarray,
    Rm: np.ndarray,
    HP: np.ndarray,
    S: np.ndarray,
    G: np.ndarray,
    U: np.ndarray,
    has_U: bool,
    rows: np.ndarray,
    n_rows: int,
) -> bool:
    """:func:`_joseph` with the rows ``rows[:n_rows]`` of the stacked measurement (all when ``n_rows == m``)."""
    m = y.shape[0]
    if n_rows == m:
        return _joseph(x, P, c, y, H, HP, S, Rm, G, U, has_U)
    ys = np.empty(n_rows)
    Hs = np.empty((n_rows, N))
    HPs = np.empty((n_rows, N))
    Ss = np.empty((n_rows, n_rows))
    Rs = np.empty((n_rows, n_rows))
    Gs = np.empty((n_rows, CROSS_COLS))
    Us = np.empty((N, n_rows))
    for a in range(n_rows):
        ra = rows[a]
        ys[a] = y[ra]
        for j in range(N):
            Hs[a, j] = H[ra, j]
            HPs[a, j] = HP[ra, j]
            if has_U:
                Us[j, a] = U[j, ra]
        for b in range(n_rows):
            Ss[a, b] = S[ra, rows[b]]
            Rs[a, b] = Rm[ra, rows[b]]
        for b in range(CROSS_COLS):
            Gs[a, b] = G[ra, b]
    return _joseph(x, P, c, ys, Hs, HPs, Ss, Rs, Gs, Us, has_U)
