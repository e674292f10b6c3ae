"""Compiled measurement updates of the filter: the stacked leg-odometry update of the stance feet (with their
measurement terms: ``stance_update``) and the generic gated update, both through the Joseph-form update of
:mod:`.joseph`. The equations are those of :mod:`robot_state_estimator.estimation.ekf.measurements` and
:mod:`.model` (the numpy reference: :class:`~robot_state_estimator.estimation.ekf.backends.numpy_backend.NumpyBackend`).
"""

from __future__ import annotations

import math

import numpy as np

from robot_state_estimator.estimation.ekf.backends.kernels.joseph import (
    _gyro_correlation,
    _stacked_products,
    _update_subset,
)
from robot_state_estimator.estimation.ekf.backends.kernels.legs import leg_velocity_terms
from robot_state_estimator.estimation.ekf.backends.kernels.linalg import (
    _carve,
    _cho_solve,
    _cholesky,
)
from robot_state_estimator.estimation.ekf.backends.kernels.outputs import gyro_noise_shares
from robot_state_estimator.estimation.ekf.backends.kernels.propagation import rate_at_state
from robot_state_estimator.estimation.ekf.layout import (
    C_P_BASE_IMU,
    C_R_BASE_IMU,
    C_SIGMA_GYRO_SAMPLE,
    CROSS_COLS,
    X_R,
    X_V,
)
from robot_state_estimator.estimation.ekf.layout import N_STATES as N
from robot_state_estimator.estimation.jit import kernel


@kernel
def leg_update(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    v_meas: np.ndarray,
    r: np.ndarray,
    J: np.ndarray,
    H_att: np.ndarray,
    use_J: bool,
    use_H_att: bool,
    sf2: float,
    sc2: float,
    se2: float,
    gate: float,
    out: np.ndarray,
) -> int:
    """Stacked leg-odometry update of k stance feet (``BaseEkf.update_leg_velocities``; ``ekf.measurements``,
    "Update" and "Rolling spherical feet").

    Args:
        v_meas: (k, 3) m/s in B, the measured base velocities y_i.
        r: (k, 3) m in B, foot positions r_i (rolling feet: contact points c_i).
        J: (k, 3, n) foot Jacobians in B for the encoder-noise term (used when ``use_J``).
        H_att: (k, 3, 3) attitude blocks of H (used when ``use_H_att``).
        sf2, se2: foot velocity noise (m/s)^2 and encoder velocity noise (rad/s)^2.
        sc2: (m/s)^2, the contact point's creep per sample on the ground plane (``noise_model``, part 1b).
        gate: NIS gate per foot (<= 0: none).
        out: (13 k,) written: innovations (k, 3) ``y_i - v_base_in_base``, the per-foot innovation covariances (k, 3, 3)
            (diagonal blocks of the stacked S) and the NIS (k,).

    ``H_i = [0, I, H_att,i, 0, [r_i]x R_base_imu]``, ``R_ii = sf2 I + sc2 (I - n n^T) + se2 J_i J_i^T`` (``n`` the
    world's up in B, row 2 of ``R_world_base``) plus, for every pair of feet, the common gyro sample's ``R_ij +=
    weight [a_i]x Sigma_g [a_j]x^T`` with ``a_i = r_i - lever p_base_imu`` (:func:`.outputs.gyro_noise_shares`;
    ``ekf.measurements``); each foot is gated on its NIS (3 x 3 adjugate; all ``inf`` when a block is singular),
    the accepted feet are fused in one Joseph-form update (:func:`_joseph`).

    Returns:
        The number of accepted feet, or -1 when the stacked S is not numerically positive definite (nothing
        changed but ``out``).
    """
    k = r.shape[0]
    m = 3 * k
    ws = np.empty(3 * m * N + 2 * m * m + m + CROSS_COLS * m)
    H, o = _carve(ws, 0, m, N)
    Rm, o = _carve(ws, o, m, m)
    HP, o = _carve(ws, o, m, N)
    S, o = _carve(ws, o, m, m)
    ym, o = _carve(ws, o, 1, m)
    y = ym[0]
    GA, o = _carve(ws, o, m, CROSS_COLS)
    U, o = _carve(ws, o, N, m)
    _leg_rows(x, c, v_meas, r, J, H_att, use_J, use_H_att, sf2, sc2, se2, H, Rm, y, GA)
    out[:m] = y
    _stacked_products(P, H, Rm, HP, S)
    has_U = _gyro_correlation(x, H, GA, U, S, Rm)
    _foot_nis(S, y, out)
    no = 12 * k
    rows = np.empty(m, dtype=np.int64)
    n_rows = 0
    for i in range(k):
        nis = out[no + i]
        if math.isfinite(nis) and (gate <= 0.0 or nis <= gate):
            for a in range(3):
                rows[n_rows] = 3 * i + a
                n_rows += 1
    if n_rows == 0:
        return 0
    if not _update_subset(x, P, c, y, H, Rm, HP, S, GA, U, has_U, rows, n_rows):
        return -1
    return n_rows // 3


@kernel
def _leg_rows(
    x: np.ndarray,
    c: np.ndarray,
    v_meas: np.ndarray,
    r: np.ndarray,
    J: np.ndarray,
    H_att: np.ndarray,
    use_J: bool,
    use_H_att: bool,
    sf2: float,
    sc2: float,
    se2: float,
    H: np.ndarray,
    Rm: np.ndarray,
    y: np.ndarray,
    GA: np.ndarray,
) -> None:
    """The stacked leg measurements of :func:`leg_update` (arguments as there): H (3 k, 15), the noise Rm (3 k, 3 k),
    the innovations y (3 k,) and the rows' load of the gyro readings' noise GA (3 k, 6), ``[(1 - held) [a_i]x, held
    [a_i]x]``, written whole."""
    k = r.shape[0]
    H[:, :] = 0.0
    Rm[:, :] = 0.0
    rs = np.zeros((3, 3))  # [r_i]x
    B = np.empty((3, 3))  # [r_i]x R_base_imu
    Rc = np.empty((3, 3))  # sf2 I + sc2 (I - n n^T), the same for every foot
    lever, weight, held = gyro_noise_shares(x)
    As = np.zeros((k, 3, 3))  # [a_i]x, a_i = r_i - lever p_base_imu
    AS = np.empty((k, 3, 3))  # weight [a_i]x Sigma_g
    for i in range(k):
        a0 = r[i, 0] - lever * c[C_P_BASE_IMU]
        a1 = r[i, 1] - lever * c[C_P_BASE_IMU + 1]
        a2 = r[i, 2] - lever * c[C_P_BASE_IMU + 2]
        As[i, 0, 1] = -a2
        As[i, 0, 2] = a1
        As[i, 1, 0] = a2
        As[i, 1, 2] = -a0
        As[i, 2, 0] = -a1
        As[i, 2, 1] = a0
        for a in range(3):
            for b in range(3):
                GA[3 * i + a, b] = (1.0 - held) * As[i, a, b]
                GA[3 * i + a, 3 + b] = held * As[i, a, b]
                AS[i, a, b] = weight * (
                    As[i, a, 0] * c[C_SIGMA_GYRO_SAMPLE + b]
                    + As[i, a, 1] * c[C_SIGMA_GYRO_SAMPLE + 3 + b]
                    + As[i, a, 2] * c[C_SIGMA_GYRO_SAMPLE + 6 + b]
                )
    for i in range(k):  # the common gyro sample: every pair of feet
        for j in range(k):
            for a in range(3):
                for b in range(3):
                    Rm[3 * i + a, 3 * j + b] = (
                        AS[i, a, 0] * As[j, b, 0] + AS[i, a, 1] * As[j, b, 1] + AS[i, a, 2] * As[j, b, 2]
                    )
    for a in range(3):
        for b in range(3):
            Rc[a, b] = (sf2 + sc2 if a == b else 0.0) - sc2 * x[X_R + 6 + a] * x[X_R + 6 + b]
    for i in range(k):
        ri0 = r[i, 0]
        ri1 = r[i, 1]
        ri2 = r[i, 2]
        rs[0, 1] = -ri2
        rs[0, 2] = ri1
        rs[1, 0] = ri2
        rs[1, 2] = -ri0
        rs[2, 0] = -ri1
        rs[2, 1] = ri0
        for a in range(3):
            for b in range(3):
                B[a, b] = (
                    rs[a, 0] * c[C_R_BASE_IMU + b]
                    + rs[a, 1] * c[C_R_BASE_IMU + 3 + b]
                    + rs[a, 2] * c[C_R_BASE_IMU + 6 + b]
                )
        for a in range(3):
            row = 3 * i + a
            H[row, 3 + a] = 1.0
            for b in range(3):
                H[row, 12 + b] = B[a, b]
                if use_H_att:
                    H[row, 6 + b] = H_att[i, a, b]
                Rab = Rc[a, b]
                if use_J:
                    jj = 0.0
                    for q in range(J.shape[2]):
                        jj += J[i, a, q] * J[i, b, q]
                    Rab += se2 * jj
                Rm[row, 3 * i + b] += Rab
            y[row] = v_meas[i, a] - x[X_V + a]


@kernel
def _foot_nis(S: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """Per foot of a stacked leg measurement, its innovation covariance (the 3 x 3 diagonal block of S) into
    ``out[3 k:12 k]`` and its NIS ``y_i^T S_ii^-1 y_i`` by the adjugate of the symmetric block (as
    ``numerics._nis3``) into ``out[12 k:13 k]``; all ``inf`` when a block is singular."""
    k = y.shape[0] // 3
    so = 3 * k
    no = 12 * k
    singular = False
    for i in range(k):
        o = 3 * i
        for a in range(3):
            for b in range(3):
                out[so + 9 * i + 3 * a + b] = S[o + a, o + b]
        sa = S[o, o]
        sb = S[o, o + 1]
        sc = S[o, o + 2]
        se = S[o + 1, o + 1]
        sf = S[o + 1, o + 2]
        si = S[o + 2, o + 2]
        c0 = se * si - sf * sf
        c1 = sc * sf - sb * si
        c2 = sb * sf - sc * se
        det = sa * c0 + sb * c1 + sc * c2
        if det == 0.0:
            singular = True
        yx = y[o]
        yy = y[o + 1]
        yz = y[o + 2]
        q = (
            c0 * yx * yx
            + (sa * si - sc * sc) * yy * yy
            + (sa * se - sb * sb) * yz * yz
            + 2.0 * (c1 * yx * yy + c2 * yx * yz + (sb * sc - sa * sf) * yy * yz)
        )
        out[no + i] = q / det if det != 0.0 else math.inf
    if singular:
        for i in range(k):
            out[no + i] = math.inf


@kernel
def stance_update(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    contacts: np.ndarray,
    qdot: np.ndarray,
    radii: np.ndarray,
    p_base_foot: np.ndarray,
    J6: np.ndarray,
    rolling: bool,
    use_J: bool,
    sf2: float,
    sc2: float,
    se2: float,
    gate: float,
    out: np.ndarray,
) -> int:
    """The leg-odometry update of the feet in contact (``BaseEkf.update_stance_feet``):
    :func:`.legs.leg_velocity_terms` of those feet at the rate interpolated to the filter's time
    (``BaseEkf.omega_base_in_base_at_state``) and the attitude (module docstring of ``kinematics``), then
    :func:`leg_update` with their contact points and Jacobians ``J_c``, without the attitude blocks
    (``ekf.measurements``, "Rolling spherical feet").

    Args:
        contacts: (n,) bool, the k feet in contact. qdot: (nj,) rad/s. radii: (n,) m (zeros: point feet, where
            the contact point is the foot point and ``J_c = J_lin`` exactly). p_base_foot: (n, 3) m in B.
        J6: (n, 6, nj) foot Jacobians in B. rolling: rolling feet (the radii
            then place the contact points; the update is the same).
        use_J, sf2, sc2, se2, gate: as for :func:`leg_update`. out: (13 k,) written as by :func:`leg_update`.

    Returns:
        As :func:`leg_update` (0 without a foot in contact).
    """
    n = contacts.shape[0]
    k = 0
    for i in range(n):
        if contacts[i]:
            k += 1
    if k == 0:
        return 0
    nj = qdot.shape[0]
    idx = np.empty(k, dtype=np.intp)
    rad = np.empty(k)
    m = 0
    for i in range(n):
        if contacts[i]:
            idx[m] = i
            rad[m] = radii[i]
            m += 1
    R = x[X_R : X_R + 9].reshape((3, 3))
    omega = np.empty(3)
    rate_at_state(x, c, omega)
    v = np.empty((k, 3))
    cp = np.empty((k, 3))
    Jc = np.empty((k, 3, nj))
    H_att = np.empty((k, 3, 3))
    leg_velocity_terms(idx, qdot, omega, R, rad, p_base_foot, J6, v, cp, Jc, H_att)
    # the attitude block left out (ekf.measurements, "Rolling spherical feet")
    return leg_update(x, P, c, v, cp, Jc, H_att, use_J, False, sf2, sc2, se2, gate, out)


@kernel
def update(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    y: np.ndarray,
    H: np.ndarray,
    Rm: np.ndarray,
    G: np.ndarray,
    sizes: np.ndarray,
    gate: float,
    out: np.ndarray,
) -> int:
    """Gate n stacked measurements on their NIS, then fuse the accepted ones in one Joseph-form update
    (``BaseEkf.update``).

    Args:
        y: (m,) stacked innovations; H: (m, 15); Rm: (m, m) noise (block-diagonal but for the gyro readings' noise the
            measurements share, ``numpy_updates.stack_measurements``); G: (m, 6) their gyro loadings
            (``Measurement.gyro_loading``, zeros for none); sizes: (n,) int64 rows per measurement.
        gate: NIS gate per measurement (<= 0: none).
        out: (sum m_i^2 + n,) written: the innovation covariances S_i row-major one after the other, then the NIS.

    Returns:
        The number of accepted measurements, or -1 when an S (a block or the accepted stack) is not numerically
        positive definite (nothing changed but ``out``; the caller uses the reference path).
    """
    m = y.shape[0]
    n = sizes.shape[0]
    HP = np.empty((m, N))
    S = np.empty((m, m))
    _stacked_products(P, H, Rm, HP, S)
    U = np.empty((N, m))
    Rw = Rm.copy()  # the caller's noise stays as given
    has_U = _gyro_correlation(x, H, G, U, S, Rw)
    rows = np.empty(m, dtype=np.int64)
    n_rows = 0
    n_acc = 0
    o = 0
    so = 0
    for i in range(n):
        mi = sizes[i]
        Si = np.empty((mi, mi))
        for a in range(mi):
            for b in range(mi):
                Si[a, b] = S[o + a, o + b]
                out[so + a * mi + b] = Si[a, b]
        L = np.empty((mi, mi))
        if not _cholesky(Si, L):
            return -1
        z = np.empty((mi, 1))
        for a in range(mi):
            z[a, 0] = y[o + a]
        _cho_solve(L, z)
        nis = 0.0
        for a in range(mi):
            nis += y[o + a] * z[a, 0]
        out[-n + i] = nis
        if math.isfinite(nis) and (gate <= 0.0 or nis <= gate):
            for a in range(mi):
                rows[n_rows] = o + a
                n_rows += 1
            n_acc += 1
        o += mi
        so += mi * mi
    if n_rows == 0:
        return 0
    if not _update_subset(x, P, c, y, H, Rw, HP, S, G, U, has_U, rows, n_rows):
        return -1
    return n_acc
