"""The numpy reference of the filter's measurement update: the innovation's correlation with the gyro readings'
noise, the Joseph-form update with the error injected and the covariance reset, and the stacking of independent
measurements (the equations: :mod:`..measurements`, "Update", and :mod:`..model`, "Correlated gyro noise"; the
compiled counterpart: ``kernels/joseph.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.estimation.ekf.layout import BA_SL, BG_SL, N_STATES, P_SL, TH_SL, V_SL
from robot_state_estimator.estimation.ekf.measurements import Measurement, spd_solve
from robot_state_estimator.estimation.ekf.numerics import _block_diag, skew

if TYPE_CHECKING:
    from robot_state_estimator.estimation.ekf.filter import BaseEkf

FloatArray = NDArray[np.float64]

_I3 = np.eye(3)


def gyro_correlation(ekf: BaseEkf, H: FloatArray, G: FloatArray | None) -> FloatArray | None:
    """``U = C G^T`` (15, m): the covariance of the error (estimate minus truth) with the gyro noise of an innovation
    of loading G (m, 6) (``Measurement.gyro_loading``), from ``C`` (``layout.X_GYRO_CROSS``); None when G is None or
    C is zero (the usual case: no update since the IMU step). :mod:`..measurements`, "Update"."""
    if G is None:
        return None
    C = ekf._gyro_cross
    if not C.any():
        return None
    U: FloatArray = C @ G.T
    return U


def innovation_terms(ekf: BaseEkf, H: FloatArray, R: FloatArray, U: FloatArray | None) -> tuple[FloatArray, FloatArray]:
    """``(P H^T (15, m), S (m, m))`` of a measurement with Jacobian H (m, 15) and noise R (m, m): ``S = H P H^T + R - H
    U - U^T H^T`` symmetrised (U of :func:`gyro_correlation`, None: zero)."""
    PHt = ekf.P @ H.T
    S = H @ PHt
    S += R
    if U is not None:
        V = H @ U
        S -= V
        S -= V.T
    S += S.T
    S *= 0.5
    return PHt, S


def joseph_update(
    ekf: BaseEkf,
    y: FloatArray,
    H: FloatArray,
    R: FloatArray,
    *,
    PHt: FloatArray | None = None,
    S: FloatArray | None = None,
    G: FloatArray | None = None,
    U: FloatArray | None = None,
) -> None:
    """Joseph-form update of ``ekf`` with innovation y (m,), Jacobian H (m, 15), noise R (m, m) and gyro loading G
    (m, 6) (None: none), then the error injected and its covariance reset (:mod:`..measurements`, "Update").

    ``P H^T`` and S (:func:`innovation_terms`) may be passed when already computed at the current P, with U
    (:func:`gyro_correlation`, the same G). ``K = (P H^T - U) S^-1``, ``P = (I - K H) P (I - K H)^T + K R K^T +
    (I - K H) U K^T + its transpose``, and the error's covariance with the gyro readings' noise ``C <- (I - K H) C + K
    G diag(Sigma_g, Sigma_g)`` (``layout.X_GYRO_CROSS``), its attitude rows reset with P's."""
    if PHt is None or S is None:
        U = gyro_correlation(ekf, H, G)
        PHt, S = innovation_terms(ekf, H, R, U)
    P = ekf.P
    K = spd_solve(S, (PHt if U is None else PHt - U).T).T  # (15, m) = (P H^T - U) S^-1 (S symmetric)
    dx = K @ y
    IKH = K @ H
    IKH *= -1.0
    IKH.ravel()[:: N_STATES + 1] += 1.0  # I - K H
    C = ekf._gyro_cross
    C_new = IKH @ C
    if G is not None:
        Sg = ekf.model.Sigma_gyro_sample
        KG = K @ G
        C_new[:, :3] += KG[:, :3] @ Sg
        C_new[:, 3:] += KG[:, 3:] @ Sg
    P = IKH @ P @ IKH.T
    P += (K @ R) @ K.T
    if U is not None:
        X = IKH @ U @ K.T
        P += X
        P += X.T
    # Inject the error and reset its covariance (Solà 2017 sec. 7.2).
    ekf.p_world_base = ekf.p_world_base + dx[P_SL]
    ekf.v_base_in_base = ekf.v_base_in_base + dx[V_SL]
    dtheta = dx[TH_SL]
    ekf.R_world_base = ekf.R_world_base @ np.asarray(pin.exp3(dtheta))
    ekf.accel_bias = ekf.accel_bias + dx[BA_SL]
    ekf.gyro_bias = ekf.gyro_bias + dx[BG_SL]
    Gr = _I3 - skew(0.5 * dtheta)
    P[TH_SL, :] = Gr @ P[TH_SL, :]
    P[:, TH_SL] = P[:, TH_SL] @ Gr.T
    C_new[TH_SL, :] = Gr @ C_new[TH_SL, :]
    ekf._gyro_cross = C_new
    P += P.T
    P *= 0.5
    ekf.P = P
    ekf.omega_base_in_base = np.array(ekf.model.omega_base_in_base(ekf._gyro_imu.tolist(), ekf.gyro_bias.tolist()))


def stack_measurements(
    measurements: Sequence[Measurement], Sigma_gyro_sample: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
    """``(y (m,), H (m, 15), R (m, m), G (m, 6) or None)`` of measurements stacked: R block-diagonal but for the gyro
    readings' noise they share, ``G_i diag(Sigma_g, Sigma_g) G_j^T`` between measurements i and j (``Sigma_gyro_sample``
    (3, 3) rad^2/s^2 in B); G zero for those without a gyro loading, None when none has one."""
    if len(measurements) == 1:
        m0 = measurements[0]
        return m0.innovation, m0.H, m0.R, m0.gyro_loading
    y = np.concatenate([m.innovation for m in measurements])
    H = np.vstack([m.H for m in measurements])
    R = _block_diag([m.R for m in measurements])
    if all(m.gyro_loading is None for m in measurements):
        return y, H, R, None
    G = np.vstack([np.zeros((len(m.innovation), 6)) if m.gyro_loading is None else m.gyro_loading
                   for m in measurements])  # fmt: skip
    GS = np.hstack([G[:, :3] @ Sigma_gyro_sample, G[:, 3:] @ Sigma_gyro_sample])
    shared = GS @ G.T
    o = 0
    for m in measurements:  # each block's own share is in its R already
        n = len(m.innovation)
        shared[o : o + n, o : o + n] = 0.0
        o += n
    R += shared
    return y, H, R, G
