"""Compiled IMU steps of the filter: hold a reading, propagate state and covariance, the gap noise, and one whole
IMU sample in one call (``imu_step``). The equations are those of :mod:`robot_state_estimator.estimation.ekf.model`
(the numpy reference: :class:`~robot_state_estimator.estimation.ekf.backends.numpy_backend.NumpyBackend`); the
buffers ``x``, ``P``, ``c`` are laid out as :mod:`robot_state_estimator.estimation.ekf.layout`."""

from __future__ import annotations

import math

import numpy as np

from robot_state_estimator.estimation.ekf.backends.kernels.linalg import (
    _carve,
    _exp3,
    _orthonormalise,
    _skew,
    _symmetrise,
)
from robot_state_estimator.estimation.ekf.backends.kernels.outputs import outputs, state_is_finite
from robot_state_estimator.estimation.ekf.layout import (
    C_BIAS_WALK,
    C_G_WORLD,
    C_P_BASE_IMU,
    C_R_BASE_IMU,
    C_SIGMA_ACCEL,
    C_SIGMA_GYRO,
    CLK_GYRO_STAMP,
    CLK_HAS_GYRO,
    CLK_OMEGA_PREV,
    CLK_STEPS,
    CROSS_COLS,
    CROSS_HELD,
    CROSS_PREV,
    DECLINED,
    IMU_BAD_INPUT,
    IMU_NOT_FINITE,
    IMU_OK,
    LIM_MAX_ACCEL,
    LIM_MAX_DT,
    LIM_MAX_GYRO,
    LIM_USE_ALPHA,
    NORMALISE_EVERY,
    X_ACCEL,
    X_ALPHA,
    X_BA,
    X_BG,
    X_DT_GYRO,
    X_F,
    X_GYRO,
    X_GYRO_CROSS,
    X_LEAD,
    X_OMEGA,
    X_OMEGA_PREV,
    X_P,
    X_R,
    X_V,
)
from robot_state_estimator.estimation.ekf.layout import N_STATES as N
from robot_state_estimator.estimation.jit import kernel


@kernel
def _process_noise_add(P: np.ndarray, c: np.ndarray, M: np.ndarray, dt: float) -> None:
    """P += G Q_c G^T dt on its non-zero blocks (``ekf.model``, "Discretisation"; ``ProcessModel.process_noise``):
    ``Q_vv = Sigma_a + M Sigma_g M^T``, ``Q_v,th = M Sigma_g``, ``Q_th,v = Sigma_g M^T``, ``Q_th,th = Sigma_g``,
    diagonal bias random walks; M (3, 3) = ``[v]x + L``."""
    MS = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            MS[i, j] = (
                M[i, 0] * c[C_SIGMA_GYRO + j] + M[i, 1] * c[C_SIGMA_GYRO + 3 + j] + M[i, 2] * c[C_SIGMA_GYRO + 6 + j]
            )
    for i in range(3):
        for j in range(3):
            sa = c[C_SIGMA_ACCEL + 3 * i + j]
            sg = c[C_SIGMA_GYRO + 3 * i + j]
            q_vv = sa + (MS[i, 0] * M[j, 0] + MS[i, 1] * M[j, 1] + MS[i, 2] * M[j, 2])
            q_th_v = (
                c[C_SIGMA_GYRO + 3 * i] * M[j, 0]
                + c[C_SIGMA_GYRO + 3 * i + 1] * M[j, 1]
                + c[C_SIGMA_GYRO + 3 * i + 2] * M[j, 2]
            )
            P[3 + i, 3 + j] += q_vv * dt
            P[3 + i, 6 + j] += MS[i, j] * dt
            P[6 + i, 3 + j] += q_th_v * dt
            P[6 + i, 6 + j] += sg * dt
    for i in range(6):
        P[9 + i, 9 + i] += c[C_BIAS_WALK + i] * dt


@kernel
def _omega_from_gyro(x: np.ndarray, c: np.ndarray, out: np.ndarray, o: int) -> None:
    """out[o:o+3] = R_base_imu (gyro - b_g), the bias-corrected rate in B (:mod:`...model`, "IMU in the base frame")."""
    g0 = x[X_GYRO] - x[X_BG]
    g1 = x[X_GYRO + 1] - x[X_BG + 1]
    g2 = x[X_GYRO + 2] - x[X_BG + 2]
    for i in range(3):
        out[o + i] = c[C_R_BASE_IMU + 3 * i] * g0 + c[C_R_BASE_IMU + 3 * i + 1] * g1 + c[C_R_BASE_IMU + 3 * i + 2] * g2


@kernel
def rate_at_state(x: np.ndarray, c: np.ndarray, out: np.ndarray) -> None:
    """out (3,) = the bias-corrected rate at the filter's time, ``R_base_imu (gyro - b_g) - alpha_base_in_base lead``
    (``BaseEkf.omega_base_in_base_at_state``): what the leg, zero-rate and flat-foot measurements predict."""
    _omega_from_gyro(x, c, out, 0)
    lead = x[X_LEAD]
    for a in range(3):
        out[a] -= lead * x[X_ALPHA + a]


@kernel
def set_imu(x: np.ndarray, c: np.ndarray, gyro: np.ndarray, accel: np.ndarray, dt_gyro: float) -> None:
    """Hold an IMU reading (``BaseEkf.set_imu``): gyro (3,) rad/s and accel (3,) m/s^2 in S into x; the
    angular acceleration ``alpha_base_in_base = (omega_base_in_base - omega_base_in_base_prev) / dt_gyro`` (backward
    difference, ``ekf.model`` "IMU in the base frame"), zero when ``dt_gyro <= 0``; ``omega_base_in_base = R_base_imu
    (gyro - b_g)`` becomes the previous rate; ``x[X_DT_GYRO]`` = dt_gyro; in ``x[X_GYRO_CROSS:+90]`` the held
    reading's columns become the previous reading's, and the new reading's are zero (the caller sets
    ``x[X_LEAD]``)."""
    for i in range(3):
        x[X_GYRO + i] = gyro[i]
        x[X_ACCEL + i] = accel[i]
    w = np.empty(3)
    _omega_from_gyro(x, c, w, 0)
    for i in range(3):
        if dt_gyro > 0.0:
            x[X_ALPHA + i] = (w[i] - x[X_OMEGA_PREV + i]) / dt_gyro
        else:
            x[X_ALPHA + i] = 0.0
        x[X_OMEGA_PREV + i] = w[i]
    x[X_DT_GYRO] = max(dt_gyro, 0.0)
    for i in range(N):  # the held reading becomes the previous one; a new sample is independent of the error
        o = X_GYRO_CROSS + CROSS_COLS * i
        for q in range(3):
            x[o + CROSS_PREV + q] = x[o + CROSS_HELD + q]
            x[o + CROSS_HELD + q] = 0.0


@kernel
def propagate(x: np.ndarray, P: np.ndarray, c: np.ndarray, dt: float, normalise: bool) -> None:
    """Propagate x and P over dt (s) with the held reading (``BaseEkf.propagate_to``; ``ekf.model``
    "IMU in the base frame", "Continuous dynamics", "Error dynamics", "Discretisation").

    ``omega_base_in_base``, ``f_base_in_base`` at the base origin (lever arm and angular acceleration); nominal state
    integrated in W (``p += v_base_in_world dt + a_base_in_world dt^2 / 2``, ``v_base_in_world += a_base_in_world dt``,
    ``R = R Exp(omega_base_in_base dt)``, ``v_base_in_base = R^T v_base_in_world``), R re-orthonormalised when
    ``normalise``; ``P = Phi P Phi^T + G Q_c G^T dt`` with ``Phi = I + A dt + (A dt)^2 / 2``, symmetrised;
    ``x[X_LEAD]`` (the time left to the held reading's stamp) less dt, not below 0; the error's covariance with the
    gyro readings' noise carried (:func:`_carry_gyro_cross`).
    """
    _base_motion(x, c)
    M = np.empty((3, 3))
    F = np.empty((9, N))
    _transition(x, c, dt, M, F)  # at the state before the step
    _nominal_step(x, c, dt, normalise)
    _covariance_step(P, c, F, M, dt)
    lead = max(x[X_LEAD] - dt, 0.0)
    x[X_LEAD] = lead
    _carry_gyro_cross(x, F, lead)


@kernel
def _carry_gyro_cross(x: np.ndarray, F: np.ndarray, lead: float) -> None:
    """``C <- Phi C`` = ``C + F C`` for the error's covariance with the gyro readings' noise (``x[X_GYRO_CROSS:+90]``,
    (15, 6); F (9, 15) of :func:`_transition`), the previous reading's columns zeroed when ``lead`` is 0
    (``numpy_backend._carry_gyro_cross``)."""
    nonzero = False
    for i in range(N):
        o = X_GYRO_CROSS + CROSS_COLS * i
        for q in range(CROSS_COLS):
            if lead <= 0.0 and q < CROSS_HELD:
                x[o + q] = 0.0
            elif x[o + q] != 0.0:
                nonzero = True
    if not nonzero:
        return
    T = np.empty((9, CROSS_COLS))
    for i in range(9):
        for q in range(CROSS_COLS):
            t = 0.0
            for k in range(3, N):
                f = F[i, k]
                if f != 0.0:
                    t += f * x[X_GYRO_CROSS + CROSS_COLS * k + q]
            T[i, q] = t
    for i in range(9):
        for q in range(CROSS_COLS):
            x[X_GYRO_CROSS + CROSS_COLS * i + q] += T[i, q]


@kernel
def _base_motion(x: np.ndarray, c: np.ndarray) -> None:
    """``x[X_OMEGA:+3]`` = ``omega_base_in_base`` and ``x[X_F:+3]`` = ``f_base_in_base``, the specific force at the base
    origin (lever arm and angular acceleration), from the held reading (``ekf.model``, "IMU in the base frame")."""
    _omega_from_gyro(x, c, x, X_OMEGA)
    w0 = x[X_OMEGA]
    w1 = x[X_OMEGA + 1]
    w2 = x[X_OMEGA + 2]
    a0 = x[X_ACCEL] - x[X_BA]
    a1 = x[X_ACCEL + 1] - x[X_BA + 1]
    a2 = x[X_ACCEL + 2] - x[X_BA + 2]
    r0 = c[C_P_BASE_IMU]
    r1 = c[C_P_BASE_IMU + 1]
    r2 = c[C_P_BASE_IMU + 2]
    al0 = x[X_ALPHA]
    al1 = x[X_ALPHA + 1]
    al2 = x[X_ALPHA + 2]
    wr0 = w1 * r2 - w2 * r1
    wr1 = w2 * r0 - w0 * r2
    wr2 = w0 * r1 - w1 * r0
    ar = (al1 * r2 - al2 * r1, al2 * r0 - al0 * r2, al0 * r1 - al1 * r0)
    wwr = (w1 * wr2 - w2 * wr1, w2 * wr0 - w0 * wr2, w0 * wr1 - w1 * wr0)
    for i in range(3):
        fi = c[C_R_BASE_IMU + 3 * i] * a0 + c[C_R_BASE_IMU + 3 * i + 1] * a1 + c[C_R_BASE_IMU + 3 * i + 2] * a2
        x[X_F + i] = fi - ar[i] - wwr[i]


@kernel
def _transition(x: np.ndarray, c: np.ndarray, dt: float, M: np.ndarray, F: np.ndarray) -> None:
    """The error-state transition over dt (``ProcessModel.error_transition``): M (3, 3) = ``[v]x + [omega x r]x +
    [omega]x [r]x`` and F (9, 15) = ``Phi - I`` = ``A dt + (A dt)^2 / 2`` (its rows 9-14 are zero)."""
    w0 = x[X_OMEGA]
    w1 = x[X_OMEGA + 1]
    w2 = x[X_OMEGA + 2]
    r0 = c[C_P_BASE_IMU]
    r1 = c[C_P_BASE_IMU + 1]
    r2 = c[C_P_BASE_IMU + 2]
    wr0 = w1 * r2 - w2 * r1
    wr1 = w2 * r0 - w0 * r2
    wr2 = w0 * r1 - w1 * r0
    R = x[X_R : X_R + 9].reshape((3, 3))
    v0 = x[X_V]
    v1 = x[X_V + 1]
    v2 = x[X_V + 2]
    M[0, 0] = -(w1 * r1) - w2 * r2
    M[0, 1] = -v2 - wr2 + w1 * r0
    M[0, 2] = v1 + wr1 + w2 * r0
    M[1, 0] = v2 + wr2 + w0 * r1
    M[1, 1] = -(w0 * r0) - w2 * r2
    M[1, 2] = -v0 - wr0 + w2 * r1
    M[2, 0] = -v1 - wr1 + w0 * r2
    M[2, 1] = v0 + wr0 + w1 * r2
    M[2, 2] = -(w0 * r0) - w1 * r1
    ws = np.empty(N * N + 3 + 3 * 9)
    Ad, o = _carve(ws, 0, N, N)
    Ad[:, :] = 0.0
    Rtgm, o = _carve(ws, o, 1, 3)
    Rtg = Rtgm[0]
    for i in range(3):
        Rtg[i] = R[0, i] * c[C_G_WORLD] + R[1, i] * c[C_G_WORLD + 1] + R[2, i] * c[C_G_WORLD + 2]
    vs, o = _carve(ws, o, 3, 3)  # [v]x
    wsk, o = _carve(ws, o, 3, 3)  # [omega]x
    gs, o = _carve(ws, o, 3, 3)  # [R^T g]x
    _skew(v0, v1, v2, vs)
    _skew(w0, w1, w2, wsk)
    _skew(Rtg[0], Rtg[1], Rtg[2], gs)
    for i in range(3):
        for j in range(3):
            Ad[i, 3 + j] = R[i, j] * dt
            Ad[i, 6 + j] = -(R[i, 0] * vs[0, j] + R[i, 1] * vs[1, j] + R[i, 2] * vs[2, j]) * dt
            Ad[3 + i, 3 + j] = -wsk[i, j] * dt
            Ad[3 + i, 6 + j] = gs[i, j] * dt
            Ad[3 + i, 9 + j] = -c[C_R_BASE_IMU + 3 * i + j] * dt
            MR = M[i, 0] * c[C_R_BASE_IMU + j] + M[i, 1] * c[C_R_BASE_IMU + 3 + j] + M[i, 2] * c[C_R_BASE_IMU + 6 + j]
            Ad[3 + i, 12 + j] = -MR * dt
            Ad[6 + i, 6 + j] = -wsk[i, j] * dt
            Ad[6 + i, 12 + j] = -c[C_R_BASE_IMU + 3 * i + j] * dt
    # F = Phi - I = A dt + (A dt)^2 / 2. Only rows 0-8 are non-zero; A dt's rows 3-5 are non-zero on the columns
    # 3-14, rows 6-8 on 6-8 and 12-14, and rows 0-5 (6-8) of A dt have their non-zero columns among 3-8 (6-8).
    F[:, :] = 0.0
    for i in range(9):
        k0 = 6 if i >= 6 else 3
        for k in range(k0, 9):
            a = Ad[i, k]
            if k < 6:
                for j in range(3, N):
                    F[i, j] += a * Ad[k, j]
            else:
                for j in range(6, 9):
                    F[i, j] += a * Ad[k, j]
                for j in range(12, N):
                    F[i, j] += a * Ad[k, j]
        for j in range(N):
            F[i, j] = Ad[i, j] + 0.5 * F[i, j]


@kernel
def _nominal_step(x: np.ndarray, c: np.ndarray, dt: float, normalise: bool) -> None:
    """The nominal state over dt, integrated in W with the held ``omega_base_in_base`` and ``f_base_in_base``
    (``ekf.model``, "Continuous dynamics"); R re-orthonormalised when ``normalise``."""
    R = x[X_R : X_R + 9].reshape((3, 3))
    v0 = x[X_V]
    v1 = x[X_V + 1]
    v2 = x[X_V + 2]
    f0 = x[X_F]
    f1 = x[X_F + 1]
    f2 = x[X_F + 2]
    ws = np.empty(6 + 2 * 9)
    awvw, o = _carve(ws, 0, 2, 3)
    aw = awvw[0]
    vw = awvw[1]
    h = 0.5 * dt * dt
    for i in range(3):
        aw[i] = (R[i, 0] * f0 + R[i, 1] * f1 + R[i, 2] * f2) + c[C_G_WORLD + i]
        vw[i] = R[i, 0] * v0 + R[i, 1] * v1 + R[i, 2] * v2
        x[X_P + i] = x[X_P + i] + vw[i] * dt + h * aw[i]
        vw[i] = vw[i] + aw[i] * dt
    E, o = _carve(ws, o, 3, 3)
    _exp3(x[X_OMEGA] * dt, x[X_OMEGA + 1] * dt, x[X_OMEGA + 2] * dt, E)
    Rn, o = _carve(ws, o, 3, 3)
    for i in range(3):
        for j in range(3):
            Rn[i, j] = R[i, 0] * E[0, j] + R[i, 1] * E[1, j] + R[i, 2] * E[2, j]
    if normalise:
        _orthonormalise(Rn)
    for i in range(3):
        for j in range(3):
            R[i, j] = Rn[i, j]
    for i in range(3):
        x[X_V + i] = R[0, i] * vw[0] + R[1, i] * vw[1] + R[2, i] * vw[2]


@kernel
def _covariance_step(P: np.ndarray, c: np.ndarray, F: np.ndarray, M: np.ndarray, dt: float) -> None:
    """``P = Phi P Phi^T + G Q_c G^T dt`` with ``Phi = I + F`` (:func:`_transition`), symmetrised: ``T = Phi P = P +
    F P`` (rows 9-14: P's), then ``Phi P Phi^T = T + T F^T`` on the upper triangle (columns 9-14: T's), mirrored. F's
    non-zero columns: 3-14 (rows 0-5), 6-8 and 12-14 (rows 6-8)."""
    T = np.empty((9, N))
    for i in range(9):
        for j in range(N):
            T[i, j] = P[i, j]
        for k in range(3, N):
            f = F[i, k]
            if f != 0.0:
                for j in range(N):
                    T[i, j] += f * P[k, j]
    for i in range(9):
        for j in range(i, 9):
            s = T[i, j]
            if j < 6:
                for k in range(3, N):
                    s += T[i, k] * F[j, k]
            else:
                for k in range(6, 9):
                    s += T[i, k] * F[j, k]
                for k in range(12, N):
                    s += T[i, k] * F[j, k]
            P[i, j] = s
            P[j, i] = s
        for j in range(9, N):
            P[i, j] = T[i, j]
            P[j, i] = T[i, j]
    _process_noise_add(P, c, M, dt)
    _symmetrise(P)


@kernel
def imu_reading_step(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    gyro: np.ndarray,
    accel: np.ndarray,
    max_gyro: float,
    max_accel: float,
    dt_gyro: float,
    dt: float,
    normalise: bool,
    out: np.ndarray,
) -> int:
    """A reading's check, :func:`set_imu`, :func:`propagate` over dt, :func:`state_is_finite` and :func:`outputs`
    (:func:`imu_step` after its bookkeeping).

    Returns:
        :data:`IMU_BAD_INPUT` (nothing changed) when a component of gyro (3,) rad/s or accel (3,) m/s^2 is not
        finite or beyond ``max_gyro`` / ``max_accel`` (the pipeline's ``imu_nan`` / ``imu_out_of_range``);
        :data:`IMU_NOT_FINITE` when the propagated state is not finite (``out`` untouched); else :data:`IMU_OK`
        with ``out`` (91,) written.
    """
    for i in range(3):
        g = gyro[i]
        a = accel[i]
        if not (math.isfinite(g) and math.isfinite(a)) or abs(g) > max_gyro or abs(a) > max_accel:
            return IMU_BAD_INPUT
    set_imu(x, c, gyro, accel, dt_gyro)
    x[X_LEAD] = dt  # as BaseEkf.set_imu: the reading is dt ahead (propagate brings it to 0)
    propagate(x, P, c, dt, normalise)
    if not state_is_finite(x, P):
        return IMU_NOT_FINITE
    outputs(x, P, c, out)
    return IMU_OK


@kernel
def imu_step(
    x: np.ndarray,
    P: np.ndarray,
    c: np.ndarray,
    clock: np.ndarray,
    limits: np.ndarray,
    t_ns: int,
    stamp_ns: int,
    gyro: np.ndarray,
    accel: np.ndarray,
    out: np.ndarray,
) -> int:
    """One IMU sample in one call (``BaseEkf.imu_step``): from the filter time ``t_ns`` to ``stamp_ns`` when that is
    the usual step, with the bookkeeping of ``BaseEkf.set_imu`` and ``propagate_to`` (the angular acceleration's
    interval, the re-orthonormalisation count) on ``clock``, then :func:`imu_reading_step`.

    The state arguments first (the filter's buffers, ``clock`` (:data:`CLOCK_SIZE`,) int64 and ``limits``
    (:data:`LIMITS_SIZE`,): ``ekf.layout``), then the sample's (the caller binds the state once).

    Returns:
        :data:`DECLINED` (nothing changed) when ``stamp_ns`` is not within ``(t_ns, t_ns + max_dt_s]``; else
        :func:`imu_reading_step`'s result, the bookkeeping updated unless it is :data:`IMU_BAD_INPUT`.
    """
    dt = (stamp_ns - t_ns) * 1e-9
    if not 0.0 < dt <= limits[LIM_MAX_DT]:
        return DECLINED
    dt_gyro = 0.0  # as BaseEkf.set_imu
    previous = clock[CLK_GYRO_STAMP]
    if limits[LIM_USE_ALPHA] != 0.0 and clock[CLK_OMEGA_PREV] != 0 and clock[CLK_HAS_GYRO] != 0 and stamp_ns > previous:
        dt_gyro = (stamp_ns - previous) * 1e-9
    steps = clock[CLK_STEPS] + 1  # as BaseEkf.propagate_to
    normalise = steps >= NORMALISE_EVERY
    code = imu_reading_step(x, P, c, gyro, accel, limits[LIM_MAX_GYRO], limits[LIM_MAX_ACCEL], dt_gyro, dt, normalise,
                            out)  # fmt: skip
    if code != IMU_BAD_INPUT:
        clock[CLK_STEPS] = 0 if normalise else steps
        clock[CLK_OMEGA_PREV] = 1
        clock[CLK_GYRO_STAMP] = stamp_ns
        clock[CLK_HAS_GYRO] = 1
    return code
