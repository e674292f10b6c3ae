"""Small compiled helpers of the filter kernels (numba, :mod:`robot_state_estimator.estimation.jit`; LLVM inlines
them into their callers): pinocchio's ``exp3``, the quaternion of a rotation, products that skip exact zeros,
Cholesky factorisation and solve, scratch views of one work array."""

from __future__ import annotations

import math

import numpy as np

from robot_state_estimator.estimation.ekf.layout import (
    X_R,
    X_SIZE,
)
from robot_state_estimator.estimation.jit import kernel

# pinocchio's exp3 switches to its Taylor expansion below eps^(1/4) (TaylorSeriesExpansion::precision<3>).
_EPS = 2.220446049250313e-16
_TAYLOR3 = _EPS**0.25


@kernel
def _exp3(v0: float, v1: float, v2: float, E: np.ndarray) -> None:
    """E (3, 3) = Exp(v), rotation vector v (rad): pinocchio's ``exp3`` (Rodrigues with its Taylor branch)."""
    t2 = v0 * v0 + v1 * v1 + v2 * v2 + _EPS * _EPS
    t = math.sqrt(t2)
    st = math.sin(t)
    ct = math.cos(t)
    if t > _TAYLOR3:
        a2 = (1.0 - ct) / t2
        a1 = st / t
    else:
        a2 = 0.5 - t2 / 24.0
        a1 = 1.0 - t2 / 6.0
        ct = 1.0 - t2 / 2.0
    v = (v0, v1, v2)
    for i in range(3):
        ai = a2 * v[i]
        for j in range(3):
            E[i, j] = ai * v[j]
    E[0, 1] -= a1 * v2
    E[1, 0] += a1 * v2
    E[0, 2] += a1 * v1
    E[2, 0] -= a1 * v1
    E[1, 2] -= a1 * v0
    E[2, 1] += a1 * v0
    for i in range(3):
        E[i, i] += ct


@kernel
def _quat_xyzw(x: np.ndarray, q: np.ndarray) -> None:
    """q (4,) = normalised quaternion ``x y z w`` of ``R = x[X_R:X_R+9]`` (Eigen's algorithm, as
    ``ekf.quat_xyzw_from_matrix``)."""
    r = x[X_R : X_R + 9]
    t = r[0] + r[4] + r[8]
    if t > 0.0:
        t = math.sqrt(t + 1.0)
        w = 0.5 * t
        t = 0.5 / t
        q[0] = (r[7] - r[5]) * t
        q[1] = (r[2] - r[6]) * t
        q[2] = (r[3] - r[1]) * t
        q[3] = w
    else:
        i = 0
        if r[4] > r[0]:
            i = 1
        if r[8] > r[4 * i]:
            i = 2
        j = (i + 1) % 3
        k = (j + 1) % 3
        t = math.sqrt(r[4 * i] - r[4 * j] - r[4 * k] + 1.0)
        q[i] = 0.5 * t
        t = 0.5 / t
        q[3] = (r[3 * k + j] - r[3 * j + k]) * t
        q[j] = (r[3 * j + i] + r[3 * i + j]) * t
        q[k] = (r[3 * k + i] + r[3 * i + k]) * t
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for a in range(4):
        q[a] = q[a] / n


@kernel
def _orthonormalise(R: np.ndarray) -> None:
    """R (3, 3) in place -> the rotation of its normalised quaternion (``pin.Quaternion(R).normalized().matrix()``)."""
    x = np.empty(X_SIZE)
    for a in range(3):
        for b in range(3):
            x[X_R + 3 * a + b] = R[a, b]
    q = np.empty(4)
    _quat_xyzw(x, q)
    tx = 2.0 * q[0]
    ty = 2.0 * q[1]
    tz = 2.0 * q[2]
    twx = tx * q[3]
    twy = ty * q[3]
    twz = tz * q[3]
    txx = tx * q[0]
    txy = ty * q[0]
    txz = tz * q[0]
    tyy = ty * q[1]
    tyz = tz * q[1]
    tzz = tz * q[2]
    R[0, 0] = 1.0 - (tyy + tzz)
    R[0, 1] = txy - twz
    R[0, 2] = txz + twy
    R[1, 0] = txy + twz
    R[1, 1] = 1.0 - (txx + tzz)
    R[1, 2] = tyz - twx
    R[2, 0] = txz - twy
    R[2, 1] = tyz + twx
    R[2, 2] = 1.0 - (txx + tyy)


@kernel
def _mm_skip(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    """out (n, p) = A (n, m) @ B (m, p), skipping the exact zeros of A; rows accumulated in k order."""
    n, m = A.shape
    p = B.shape[1]
    for i in range(n):
        for j in range(p):
            out[i, j] = 0.0
        for k in range(m):
            a = A[i, k]
            if a != 0.0:
                for j in range(p):
                    out[i, j] += a * B[k, j]


@kernel
def _transpose(A: np.ndarray, out: np.ndarray) -> None:
    """out (m, n) = A (n, m)^T."""
    n, m = A.shape
    for i in range(n):
        for j in range(m):
            out[j, i] = A[i, j]


@kernel
def _carve(ws: np.ndarray, o: int, r: int, c: int) -> tuple[np.ndarray, int]:
    """A (r, c) view of ``ws[o:o + r c]`` and the next offset (one allocation per kernel call instead of one per
    scratch array)."""
    return ws[o : o + r * c].reshape((r, c)), o + r * c


@kernel
def _skew(a0: float, a1: float, a2: float, out: np.ndarray) -> None:
    """out (3, 3) = [a]x."""
    out[0, 0] = 0.0
    out[0, 1] = -a2
    out[0, 2] = a1
    out[1, 0] = a2
    out[1, 1] = 0.0
    out[1, 2] = -a0
    out[2, 0] = -a1
    out[2, 1] = a0
    out[2, 2] = 0.0


@kernel
def _symmetrise(P: np.ndarray) -> None:
    """P = (P + P^T) / 2 in place, exactly symmetric (as numpy's ``P += P.T; P *= 0.5``)."""
    n = P.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            s = (P[i, j] + P[j, i]) * 0.5
            P[i, j] = s
            P[j, i] = s


@kernel
def _cholesky(S: np.ndarray, L: np.ndarray) -> bool:
    """Lower Cholesky factor L (m, m) of a symmetric S (reads the lower triangle); False when S is not
    numerically positive definite (LAPACK ``potrf``'s test: a non-positive or NaN pivot)."""
    m = S.shape[0]
    for j in range(m):
        s = S[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, m):
            s = S[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / d
        for i in range(j):
            L[i, j] = 0.0
    return True


@kernel
def _cho_solve(L: np.ndarray, B: np.ndarray) -> None:
    """B (m, p) <- S^-1 B in place for ``S = L L^T`` (forward then backward substitution, row-vectorised)."""
    m, p = B.shape
    for i in range(m):
        for k in range(i):
            a = L[i, k]
            for j in range(p):
                B[i, j] -= a * B[k, j]
        d = L[i, i]
        for j in range(p):
            B[i, j] /= d
    for i in range(m - 1, -1, -1):
        for k in range(i + 1, m):
            a = L[k, i]
            for j in range(p):
                B[i, j] -= a * B[k, j]
        d = L[i, i]
        for j in range(p):
            B[i, j] /= d
