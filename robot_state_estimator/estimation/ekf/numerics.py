"""Small numerics of :class:`~robot_state_estimator.estimation.ekf.BaseEkf`'s numpy reference path and of its
argument handling: 3-vectors and 3 x 3 matrices on Python floats (cheaper than numpy calls at this size), the
quaternion of a rotation matrix, per-foot NIS of 3 x 3 blocks, and the array normalisation of the kernel calls.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def skew(v: FloatArray) -> FloatArray:
    """(3, 3) cross-product matrix ``[v]x`` with ``[v]x w = v x w`` for a (3,) vector."""
    x, y, z = v.tolist()
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def cross3(a: FloatArray, b: FloatArray) -> FloatArray:
    """(3,) cross product ``a x b`` of two (3,) vectors (``np.cross`` costs ~15x more on 3-vectors)."""
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


# [r]x flattened row-major = r @ _SKEW_BASIS.
_SKEW_BASIS = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0],
        [0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    ]
)


def _nis3(S: list[list[list[float]]], y: list[list[float]]) -> list[float]:
    """Per block ``y_i^T S_i^-1 y_i`` for 3 x 3 blocks by the adjugate (S_i symmetric); all ``inf`` when any
    block is singular (as a failed solve of the block-diagonal system)."""
    out = []
    for (a, b, c), (_, e, f), (_, _, i), (x, yy, z) in ((Si[0], Si[1], Si[2], yi) for Si, yi in zip(S, y)):
        c0 = e * i - f * f
        c1 = c * f - b * i
        c2 = b * f - c * e
        det = a * c0 + b * c1 + c * c2
        if det == 0.0:
            return [math.inf] * len(S)
        # adj(S) for symmetric S: [[c0, c1, c2], [c1, a i - c c, b c - a f], [c2, b c - a f, a e - b b]].
        q = (
            c0 * x * x
            + (a * i - c * c) * yy * yy
            + (a * e - b * b) * z * z
            + 2.0 * (c1 * x * yy + c2 * x * z + (b * c - a * f) * yy * z)
        )
        out.append(q / det)
    return out


def quat_xyzw_from_matrix(R: list[list[float]]) -> list[float]:
    """Normalised quaternion ``x y z w`` of a rotation matrix (nested lists): Eigen's algorithm (the one behind
    ``pin.Quaternion(R)``, Shepperd's method with the same branch and sign choices) on Python floats."""
    t = R[0][0] + R[1][1] + R[2][2]
    if t > 0.0:
        t = math.sqrt(t + 1.0)
        w = 0.5 * t
        t = 0.5 / t
        q = [(R[2][1] - R[1][2]) * t, (R[0][2] - R[2][0]) * t, (R[1][0] - R[0][1]) * t, w]
    else:
        i = 0
        if R[1][1] > R[0][0]:
            i = 1
        if R[2][2] > R[i][i]:
            i = 2
        j = (i + 1) % 3
        k = (j + 1) % 3
        t = math.sqrt(R[i][i] - R[j][j] - R[k][k] + 1.0)
        q = [0.0, 0.0, 0.0, 0.0]
        q[i] = 0.5 * t
        t = 0.5 / t
        q[3] = (R[k][j] - R[j][k]) * t
        q[j] = (R[j][i] + R[i][j]) * t
        q[k] = (R[k][i] + R[i][k]) * t
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return [q[0] / n, q[1] / n, q[2] / n, q[3] / n]


def _sub(a: list[float], b: list[float]) -> list[float]:
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def _cross(a: list[float], b: list[float]) -> list[float]:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _rot(R: list[list[float]], x: list[float]) -> list[float]:
    """``R x`` on Python floats."""
    return [R[0][0] * x[0] + R[0][1] * x[1] + R[0][2] * x[2],
            R[1][0] * x[0] + R[1][1] * x[1] + R[1][2] * x[2],
            R[2][0] * x[0] + R[2][1] * x[1] + R[2][2] * x[2]]  # fmt: skip


def _rot_t(R: list[list[float]], x: list[float]) -> list[float]:
    """``R^T x`` on Python floats."""
    return [R[0][0] * x[0] + R[1][0] * x[1] + R[2][0] * x[2],
            R[0][1] * x[0] + R[1][1] * x[1] + R[2][1] * x[2],
            R[0][2] * x[0] + R[1][2] * x[1] + R[2][2] * x[2]]  # fmt: skip


def _orthonormalise(R: FloatArray) -> FloatArray:
    """Nearest rotation matrix (through a normalised quaternion)."""
    return np.asarray(pin.Quaternion(R).normalized().matrix())


def _block_diag(blocks: list[FloatArray]) -> FloatArray:
    n = sum(b.shape[0] for b in blocks)
    out = np.zeros((n, n))
    i = 0
    for b in blocks:
        k = b.shape[0]
        out[i : i + k, i : i + k] = b
        i += k
    return out


def _vec(a: FloatArray, n: int) -> FloatArray:
    """``a`` as a C-contiguous float64 (n,) array (no copy when it already is one)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape != (n,):
        a = np.ascontiguousarray(a.reshape(n))
    return a


def _mat(a: FloatArray, shape: tuple[int, ...]) -> FloatArray:
    """``a`` as a C-contiguous float64 array of ``shape`` (no copy when it already is one)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape != shape:
        a = np.ascontiguousarray(a.reshape(shape))
    return a


def _mat3(a: FloatArray | None, k: int) -> FloatArray:
    """``a`` as a C-contiguous float64 (k, 3, n) array."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 3 or a.shape[0] != k or a.shape[1] != 3:
        a = np.ascontiguousarray(a.reshape(k, 3, -1))
    return a
