"""The measurement models of the filter and what an update exposes: leg odometry, the zero-rate pseudo-measurement,
the flat feet's orientation; the chi-square gate.

Leg odometry (per foot in stance, Bloesch 2012 eq. 9): the leg-odometry velocity ``y_i = -(J_i qdot) -
omega_hat_base_in_base x r_i`` measures ``v_base_in_base``; since ``omega_base_in_base = omega_hat_base_in_base -
R_base_imu (dbg + n_g)``, ``y_i = v_base_in_base + [r_i]x R_base_imu (dbg + n_g) + noise``, so ``H_i = [0, I, 0, 0,
[r_i]x R_base_imu]`` and the measurement noise is ``sigma_foot^2 I + sigma_enc^2 J_i J_i^T + [r_i]x R_base_imu Sigma_g
R_imu_base [r_i]x^T`` (:func:`~robot_state_estimator.estimation.noise_model.leg_measurement_covariance`, whose docstring
gives the sources; the batched numpy reference and the kernels compute the same sum, tested to 1e-12). The gyro
term's lever is ``c_i - r`` rather than ``c_i`` with the angular acceleration on (``r`` the IMU's position in B,
``c_i`` the contact point, ``r_i`` for point feet): the velocity state carries ``[r]x`` of the same gyro sample's
noise (:mod:`.model`, "Gyro noise in the velocity"), and that one sample is common to every stance foot, so the
stacked noise has the cross blocks ``[c_i - r]x Sigma_g,B [c_j - r]x^T`` (``Sigma_g,B = R_base_imu Sigma_g
R_imu_base``, rad^2/s^2 in B; measured on the
simulated Go1 trot: diagonal feet's leg errors correlate 0.36-0.59 in x, y and -0.92 in z). The leg measurement takes
the rate at the filter's time (``BaseEkf.omega_base_in_base_at_state``), interpolated between the two readings
around a joint sample's stamp, so its noise is the velocity's.

Rolling spherical feet (radius rho_i; :mod:`robot_state_estimator.estimation.kinematics`): the body point at
rest is the contact point ``c_i = r_i + d_i``, ``d_i = -rho_i R^T e_z``, and
``y_i = -(J_c,i qdot) - omega_hat_base_in_base x c_i`` with ``J_c,i = J_lin,i - [d_i]x J_ang,i``. Writing
``y_i = -J_lin qdot - omega_hat x r_i - omega_foot x d_i`` (``omega_foot = omega_base_in_base + J_ang qdot``, the foot's
angular velocity in B), two state errors enter through the estimated quantities: the gyro bias as above with
``c_i`` in place of ``r_i``, and the attitude through ``d_i``: with ``R = R_hat Exp(dtheta)``,
``d_true = -rho (I - [dtheta]x) R_hat^T e_z = d_hat + [d_hat]x dtheta``, so
``y_i - v_base_in_base = -omega_foot x (d_hat - d_true) = [omega_foot]x [d_hat]x dtheta``. Hence
``H_i = [0, I, [omega_foot]x [d_i]x, 0, [c_i]x R_base_imu]``, and the noise uses ``c_i`` and ``J_c,i``. rho = 0
gives the point-foot measurement above (the attitude block vanishes). The estimator's leg update leaves the attitude
block out (``H_attitude`` None): evaluated at the measured ``omega_foot`` it holds the gyro sample's noise that the
innovation holds too, and their product biases the attitude correction (on the simulated Go1 trot with the feet's
honest noise, a steady roll drift of 41-66 mrad in 8 s); the term it drops is ``|omega_foot| rho |dtheta|``, about
0.2 mm/s for a 2 rad/s foot, a 2 cm sphere and 5 mrad of attitude error, under the feet's own noise.

Zero rate (robot static): ``0 = R_base_imu (omega_imu_in_imu - b_g - n_g)``. Flat feet's orientation:
:mod:`robot_state_estimator.estimation.flat_feet` (:func:`rotation_measurement`).

Update. Each measurement is gated on its prior NIS (chi-square, 3 DoF for a foot), then the accepted ones are fused
in one stacked update with the Joseph form ``P = (I - K H) P (I - K H)^T + K R K^T`` (Bucy and Joseph 1968,
"Filtering for stochastic processes with applications to guidance"), symmetrised. The gyro readings' noise in an
innovation (its ``gyro_loading`` G) may already be in the error, from an earlier update that used the same reading:
with ``U = C G^T`` (``C`` the error's covariance with that noise, :mod:`.model` "Correlated gyro noise") the
innovation covariance is ``S = H P H^T + R - H U - U^T H^T``, the gain ``K = (P H^T - U) S^-1`` and the Joseph form
gains ``(I - K H) U K^T`` and its transpose (Simon 2006, "Optimal State Estimation", sec. 7.1, a measurement noise
correlated with the state); ``C`` becomes ``(I - K H) C + K G diag(Sigma_g, Sigma_g)``. The error is injected and the
covariance reset with ``G = I - [dtheta / 2]x`` on the attitude block (Solà 2017 sec. 7.2). Each update returns
what it computed (filterpy style): :class:`UpdateResult`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

try:  # LAPACK's Cholesky solve without numpy.linalg's per-call overhead (a few us on 12 x 12)
    from scipy.linalg.lapack import dposv as _dposv
except ImportError:  # pragma: no cover - scipy is optional
    _dposv = None

from robot_state_estimator.estimation.ekf.layout import BG_SL, N_STATES, TH_SL, V_SL
from robot_state_estimator.estimation.ekf.model import share_weight
from robot_state_estimator.estimation.ekf.numerics import skew
from robot_state_estimator.estimation.noise_model import leg_measurement_covariance

FloatArray = NDArray[np.float64]

_I3 = np.eye(3)
#: (3, 6) the gyro loading of a measurement of the held reading's rate (zero rate, flat feet at a reading's stamp):
#: ``y = ... - n_held`` (:func:`rate_loading` at ``held`` 1)
HELD_RATE_LOADING = np.hstack([np.zeros((3, 3)), -_I3])
HELD_RATE_LOADING.flags.writeable = False


def rate_loading(held: float) -> tuple[FloatArray, float]:
    """``(G (3, 6), weight)`` of a measurement of the rate at the filter's time (zero rate, flat feet), whose noise is
    ``-((1 - f) n_prev + f n_held)``, ``f = held`` (``model.gyro_noise_shares``): ``G = [-(1 - f) I, -f I]`` and the
    weight ``(1 - f)^2 + f^2`` of the per-sample covariance in R (``model.share_weight``)."""
    if held == 1.0:
        return HELD_RATE_LOADING, 1.0
    return np.hstack([-(1.0 - held) * _I3, -held * _I3]), share_weight(held)


_tuple_new = tuple.__new__


class UpdateResult(NamedTuple):
    """What one measurement update computed (filterpy-style exposure, for diagnostics and logs).

    A NamedTuple (immutable, cheap to create on the 1 kHz path).

    Attributes:
        name: what was measured (foot frame name, ``"zero_rate"``).
        innovation: (m,) measurement minus prediction (m/s for feet, rad/s for the zero-rate update).
        S: (m, m) innovation covariance ``H P H^T + R``.
        nis: normalised innovation squared ``y^T S^-1 y`` (chi-square with m DoF when consistent).
        accepted: whether it passed the gate and was fused.
        reason: ``"ok"``, ``"gated"`` (NIS above the gate) or ``"singular"``.
    """

    name: str
    innovation: FloatArray
    S: FloatArray
    nis: float
    accepted: bool
    reason: str = "ok"


@dataclass(frozen=True)
class Measurement:
    """A linear(ised) measurement for :meth:`~.filter.BaseEkf.update`.

    Attributes:
        name: label reported in the :class:`UpdateResult`.
        innovation: (m,) ``z - h(x_hat)``.
        H: (m, 15) Jacobian of h w.r.t. the error state.
        R: (m, m) measurement noise covariance (the gyro readings' share included).
        gyro_loading: (m, 6) how the innovation loads the noise of the previous and of the held gyro reading
            (``[n_prev, n_held]`` rad/s in B, ``layout.X_GYRO_CROSS``): ``y = H dx + gyro_loading n + ...``, its share
            ``gyro_loading diag(Sigma_g, Sigma_g) gyro_loading^T`` already in R; None: none (:mod:`.model`,
            "Correlated gyro noise").
    """

    name: str
    innovation: FloatArray
    H: FloatArray
    R: FloatArray
    gyro_loading: FloatArray | None = None


def leg_results(names: Sequence[str], out: FloatArray, gate: float, start: int = 0) -> list[UpdateResult]:
    """One :class:`UpdateResult` per foot of a stacked leg update from the backend's output, ``out[start:start +
    13 k]``: innovations (k, 3) m/s, innovation covariances (k, 3, 3), NIS (k,); a foot is accepted when its NIS is
    finite and within ``gate`` (<= 0: no gate). The arrays are views of ``out``."""
    k = len(names)
    o = start
    ys = out[o : o + 3 * k].reshape(k, 3)
    Ss = out[o + 3 * k : o + 12 * k].reshape(k, 3, 3)
    results = []
    for i, nis in enumerate(out[o + 12 * k : o + 13 * k].tolist()):
        ok = math.isfinite(nis) and (gate <= 0.0 or nis <= gate)
        # tuple.__new__: the NamedTuple without its Python-level __new__
        results.append(_tuple_new(UpdateResult, (names[i], ys[i], Ss[i], nis, ok, "ok" if ok else "gated")))
    return results


def gated_result(name: str, innovation: FloatArray, S: FloatArray, gate: float) -> UpdateResult:
    """The chi-square gate of one measurement: NIS ``y^T S^-1 y`` and whether it passes ``gate`` (<= 0: no gate).

    Args:
        name: the measurement's name (a foot).
        innovation: (m,) innovation ``y``.
        S: (m, m) its covariance (symmetric).
        gate: NIS threshold (chi-square quantile); <= 0 accepts every finite NIS.

    Returns:
        The :class:`UpdateResult`; status ``"singular"`` (NIS inf, refused) when S cannot be solved.
    """
    try:
        nis = float(innovation @ spd_solve(S, innovation))
    except np.linalg.LinAlgError:
        return UpdateResult(name, innovation, S, math.inf, False, "singular")
    ok = math.isfinite(nis) and (gate <= 0.0 or nis <= gate)
    return UpdateResult(name, innovation, S, nis, ok, "ok" if ok else "gated")


def spd_solve(S: FloatArray, B: FloatArray) -> FloatArray:
    """``S^-1 B`` for a symmetric positive definite S (m, m) and B (m,) or (m, n): Cholesky (LAPACK ``posv``),
    falling back to LU when S is not numerically positive definite.

    Raises:
        numpy.linalg.LinAlgError: S is singular.
    """
    if _dposv is not None:
        _, x, info = _dposv(S, B)
        if info == 0:
            return np.asarray(x)
    return np.asarray(np.linalg.solve(S, B))


def leg_velocity_measurement(
    name: str,
    v_base_measured: FloatArray,
    v_base_in_base: FloatArray,
    p_base_foot: FloatArray,
    J_base_foot: FloatArray | None,
    *,
    R_base_imu: FloatArray,
    Sigma_gyro_sample: FloatArray,
    foot_velocity_noise: float,
    encoder_velocity_noise: float,
    attitude_jacobian: FloatArray | None = None,
    creep_variance: float = 0.0,
    up_in_base: FloatArray | None = None,
    gyro_lever_base: FloatArray | None = None,
    gyro_held: float = 1.0,
) -> Measurement:
    """The leg-odometry measurement of one stance foot (module docstring).

    Args:
        name: foot name.
        v_base_measured: (3,) m/s in B, ``-(J qdot) - omega_hat_base_in_base x r`` with the filter's angular velocity.
        v_base_in_base: (3,) m/s, the filter's velocity (the prediction).
        p_base_foot: (3,) m, foot position r in B (rolling feet: the contact body point c).
        J_base_foot: (3, n) foot Jacobian in B, for the encoder-noise term (omitted when None; rolling feet:
            ``J_c``).
        R_base_imu: (3, 3) the IMU's rotation in B. Sigma_gyro_sample: (3, 3) per-sample gyro covariance in B.
        foot_velocity_noise: m/s. encoder_velocity_noise: rad/s.
        attitude_jacobian: (3, 3) the attitude block of H, ``[omega_foot]x [d]x`` for rolling feet (zero when None:
            point feet).
        creep_variance: (m/s)^2, the contact point's creep per sample on the ground plane, and up_in_base (3,)
            the world's up in B (``noise_model.leg_measurement_covariance``).
        gyro_lever_base: (3,) m in B, the point whose ``[.]x`` of the gyro noise the velocity state carries (the
            IMU's lever ``r`` times ``lever`` of ``model.gyro_noise_shares``; None: the origin); the gyro term's lever
            is ``c - gyro_lever_base``. gyro_held: the held reading's share ``f`` of the interpolated rate's noise
            (``held`` there; the previous reading's is ``1 - f``).

    Returns:
        The measurement (innovation, H (3, 15), R (3, 3) with the gyro's ``((1 - f)^2 + f^2) [a]x Sigma_g [a]x^T``,
        gyro_loading ``[(1 - f) [a]x, f [a]x]``, ``a = c - gyro_lever_base``).
    """
    r_skew = skew(p_base_foot)
    a = np.asarray(p_base_foot, dtype=float)
    if gyro_lever_base is not None:
        a = a - np.asarray(gyro_lever_base, dtype=float)
    H = np.zeros((3, N_STATES))
    H[:, V_SL] = _I3
    H[:, BG_SL] = r_skew @ R_base_imu
    if attitude_jacobian is not None:
        H[:, TH_SL] = attitude_jacobian
    a_skew = skew(a)
    J = np.zeros((3, 0)) if J_base_foot is None else J_base_foot
    R = leg_measurement_covariance(
        J,
        a_skew,
        share_weight(gyro_held) * np.asarray(Sigma_gyro_sample),
        foot_velocity_noise=foot_velocity_noise,
        joint_velocity_noise=encoder_velocity_noise,
        creep_variance=creep_variance,
        up_in_base=up_in_base,
    )
    loading = np.hstack([(1.0 - gyro_held) * a_skew, gyro_held * a_skew])
    return Measurement(name, np.asarray(v_base_measured, dtype=float) - v_base_in_base, H, R, loading)


def zero_rate_measurement(
    omega_hat: FloatArray,
    *,
    R_base_imu: FloatArray,
    Sigma_gyro_sample: FloatArray,
    zero_rate_noise: float,
    gyro_held: float = 1.0,
) -> Measurement:
    """The zero angular rate pseudo-measurement (robot static): ``0 = R_base_imu (omega_imu_in_imu - b_g - n_g)``.

    Args:
        omega_hat: (3,) rad/s, the predicted rate ``R_base_imu (omega_imu_in_imu - b_g_hat)`` in B at the filter's
            time (interpolated between two readings: ``BaseEkf.omega_base_in_base_at_state``).
        R_base_imu: (3, 3). Sigma_gyro_sample: (3, 3) per-sample gyro covariance in B.
        zero_rate_noise: rad/s, the stddev of the robot's remaining rate.
        gyro_held: the held reading's share of the rate's noise (:func:`rate_loading`).
    """
    H = np.zeros((3, N_STATES))
    H[:, BG_SL] = -R_base_imu
    G, weight = rate_loading(gyro_held)
    R = zero_rate_noise**2 * _I3 + weight * Sigma_gyro_sample
    return Measurement("zero_rate", -omega_hat, H, R, G)


def rotation_measurement(
    name: str,
    J_ang: FloatArray,
    qdot_joints: FloatArray,
    omega_base_in_base: FloatArray,
    *,
    R_base_imu: FloatArray,
    Sigma_gyro_sample: FloatArray,
    rotation_noise: float,
    encoder_noise: float,
    gyro_held: float = 1.0,
) -> Measurement:
    """The orientation measurement of one flat stance foot (:mod:`robot_state_estimator.estimation.flat_feet`):
    ``z = -J_ang qdot = omega_base_in_base``, ``H = [0, 0, 0, 0, -R_base_imu]``,
    ``R = sigma_rot^2 I + weight Sigma_g + sigma_enc^2 J_ang J_ang^T`` (``weight`` of :func:`rate_loading`).

    Args:
        name: the foot. J_ang: (3, nj) angular rows of the foot Jacobian in B. qdot_joints: (nj,) rad/s.
        omega_base_in_base: (3,) rad/s, the filter's angular velocity at its time (the prediction; interpolated
            between two readings: ``BaseEkf.omega_base_in_base_at_state``).
        R_base_imu: (3, 3). Sigma_gyro_sample: (3, 3) per-sample gyro covariance in B.
        rotation_noise: rad/s, ``sigma_rot``. encoder_noise: rad/s, ``sigma_enc`` (0 = no encoder term).
        gyro_held: the held reading's share of the rate's noise (:func:`rate_loading`).

    Returns:
        The measurement: innovation (3,) rad/s in B, H (3, 15), R (3, 3), gyro loading (3, 6).
    """
    H = np.zeros((3, N_STATES))
    H[:, BG_SL] = -R_base_imu
    G, weight = rate_loading(gyro_held)
    R = rotation_noise**2 * np.eye(3) + weight * Sigma_gyro_sample
    if encoder_noise > 0.0:
        R = R + encoder_noise**2 * (J_ang @ J_ang.T)
    return Measurement(name, -(J_ang @ qdot_joints) - omega_base_in_base, H, R, G)
