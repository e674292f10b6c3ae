"""The process model of the error-state EKF of the floating base: state, IMU in the base frame, dynamics, the error
transition and the process noise.

State (nominal), following mim_estimation's ``BaseEkfWithImuKin`` and Bloesch et al. 2012 ("State estimation
for legged robots: consistent fusion of leg kinematics and IMU", RSS):

- ``p_world_base`` (3,) m: base origin in the world W (``odom``);
- ``v_base_in_base`` (3,) m/s: base origin velocity, in the base frame B;
- ``R_world_base`` (3, 3): base attitude;
- ``accel_bias`` (3,) m/s^2 and ``gyro_bias`` (3,) rad/s: IMU biases, in the IMU frame S.

Error state (15,), order ``[dp_W, dv_B, dtheta, dba_S, dbg_S]`` (:mod:`.layout`), with the attitude perturbed on
the right (local / body frame): ``R = R_hat Exp(dtheta)`` (Solà 2017, "Quaternion kinematics for the error-state
Kalman filter", sec. 5 and 7, local perturbation). Everything else is additive.

IMU in the base frame. The IMU frame S is posed in B by ``X_base_imu = (R_base_imu, r = p_base_imu)``. With gyro
and accelerometer readings ``omega_imu_in_imu``, ``f_imu_in_imu`` (specific force at the IMU origin):

    omega_base_in_base = R_base_imu (omega_imu_in_imu - b_g)
    f_base_in_base     = R_base_imu (f_imu_in_imu - b_a) - alpha_base_in_base x r
                         - omega_base_in_base x (omega_base_in_base x r)      (specific force at the base origin)

(rigid-body acceleration transport; ``alpha_base_in_base`` from the difference of consecutive bias-corrected gyro
readings, a one-sample backward difference). mim's filter ignores the lever arm and the rotation in its
measurement Jacobian; here both enter the process and measurement Jacobians.

Continuous dynamics: ``p_dot = R v``, ``v_dot = f_base_in_base + R^T g - omega x v``, ``R_dot = R [omega]x``,
``b_dot = n_b``. The nominal state is integrated in the world frame with the readings held over the
interval (exact for constant ``a_base_in_world = R f_base_in_base + g`` and ``omega``): ``p += v_base_in_world dt +
a_base_in_world dt^2 / 2``, ``v_base_in_world += a_base_in_world dt``, ``R = R Exp(omega dt)``, ``v_base_in_base = R^T
v_base_in_world``.

Error dynamics ``d(dx)/dt = A dx + G n`` with ``n = [n_a, n_g, n_ba, n_bg]`` (S frame) and
``L = [omega x r]x + [omega]x [r]x`` (derivative of the lever-arm term w.r.t. omega):

    d(dp)     = R dv - R [v]x dtheta
    d(dv)     = -[omega]x dv + [R^T g]x dtheta - R_base_imu dba - ([v]x + L) R_base_imu (dbg + n_g) - R_base_imu n_a
    d(dtheta) = -[omega]x dtheta - R_base_imu (dbg + n_g)
    d(dba)    = n_ba,  d(dbg) = n_bg

Discretisation: ``Phi = I + A dt + (A dt)^2 / 2``, ``Q_d = G Q_c G^T dt`` (first-order Van Loan; Solà 2017
sec. 5.4.3 and appendix on the integration of random noise: a white noise of continuous density
``sigma_c`` integrated over ``dt`` has variance ``sigma_c^2 dt``). SDFormat gives per-sample stddevs
``sigma_d``: the density is ``sigma_c^2 = sigma_d^2 * dt_nominal`` with ``dt_nominal = 1 / update_rate``
(:func:`imu_noise_from_spec`); dt is the actual sample period, so irregular sampling is handled and the
noise is scaled by dt exactly once (mim scales it twice).

Gyro noise in the velocity. ``alpha_base_in_base`` is the difference of consecutive gyro samples, so the lever-arm
term ``-alpha x r`` integrated over the readings telescopes: the velocity state carries ``r x omega_hat``, that is
``[r]x n`` of the latest gyro sample's noise ``n`` (rad/s, B), which the error state does not hold (its ``dv`` has no
memory of one sample's noise). Between two readings (a joint sample applied after the later reading ``k`` is held,
at a fraction ``f = 1 - lead / dt_gyro`` of its interval, ``lead`` the time left to its stamp) the state holds
``[r]x ((1 - f) n_(k-1) + f n_k)``. Two consumers see this noise (:func:`gyro_noise_shares`):

- the published twist (``ProcessModel.twist_noise_at``): ``[r]x Sigma_g [r]x^T`` on the velocity (times
  ``(1 - f)^2 + f^2``), ``f [r]x Sigma_g`` between velocity and angular rate (the published rate holds ``n_k``), and
  the error's covariance with those readings' noise (``C`` below) through ``T C_(dv,dbg) B^T`` and its transpose, ``T =
  diag(I, -R_base_imu)``, ``B = [(1 - f) [r]x, f [r]x; 0, I]``;
- the leg measurement (:mod:`.measurements`), which uses the rate interpolated to the filter's time, ``omega_hat -
  alpha lead``: its innovation's gyro noise is ``[c_i - r]x`` of the interpolated noise, the same sample for every
  stance foot (the feet's noises are correlated, through levers ``c_i - r``): the gyro loading ``[(1 - f) [c_i - r]x,
  f [c_i - r]x]`` of ``[n_(k-1), n_k]``.

Correlated gyro noise. One reading's noise enters every update until the next-but-one reading: joint samples faster
than the IMU, or stamped between two readings, reuse it (with shares ``1 - f`` and ``f``), and so do the zero-rate
and flat-foot updates (the rate at the filter's time too: loading ``[-(1 - f) I, -f I]``). After an update the error
(estimate minus truth, ``e = -dx``) is correlated with that noise, and a later update that takes it as new counts it
twice: with the joints at twice the IMU's rate the gyro bias was over-confident (Monte Carlo NEES 4.11 on 2 DoF, band
0.93-3.47). The filter
keeps ``C = Cov(e, [n_(k-1), n_k])`` (``layout.X_GYRO_CROSS``; 15 x 6, rad/s units per column, noise in B):

- an update with loading G (innovation ``y = H dx + G n + v``): ``U = C G^T``, ``S = H P H^T + R - H U - U^T H^T``,
  ``K = (P H^T - U) S^-1``, ``P`` by the Joseph form with the terms ``(I - K H) U K^T`` and its transpose, ``C <- (I
  - K H) C + K G diag(Sigma_g, Sigma_g)`` (Simon 2006, "Optimal State Estimation", sec. 7.1, a measurement noise
  correlated with the state); its attitude rows reset with P's;
- the propagation: ``C <- Phi C``; a new reading: the held reading's columns become the previous one's, the new
  reading's are zero (its noise is independent of the error so far); once the state reaches the held reading's
  stamp (``lead`` 0) no later update uses the previous reading, and its columns are zeroed. With the joints at the
  IMU's stamps ``C`` is zero at every leg update (a zero-rate or flat-foot update after it in the same step sees the
  leg update's), so the usual path costs a test of 90 zeros.

The readings' noise is considered, not estimated (a Schmidt filter): consistent, a little less informed than one
stacked update (three feet one after the other: P within 0.04 % of the stacked update's, never below it). Left out:
the propagation's own use of the held reading (``dv`` gains ``-M n_k dt``, ``dtheta`` ``-n_k dt``: its covariance
with ``n_k`` is ``|v| dt`` against the leg's lever ``|c_i - r|``, 0.3-0.5 % at 1 m/s, 1 kHz and 0.2-0.3 m, and the
point-foot measurement does not read ``dtheta``). Measured: joints at 2 kHz, IMU at 1 kHz, the gyro bias NEES 1.65
(band 1.18-3.04), ``test/estimation/test_consistency_mc.py``.

Without the angular acceleration (``dt_gyro = 0``) the velocity carries no gyro noise: lever ``c_i`` and the held
rate. Measured on the simulated Go1 trot (docs/uncertainty.md): regressed on ``r x n_k``, the velocity error
(estimate minus truth) has slope 0.82-1.03 per axis (``-`` those with truth minus estimate, as the Monte Carlo
records it).

The measurements (leg odometry, zero rate, flat feet's orientation) are in :mod:`.measurements`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation.ekf.layout import (
    BA_SL,
    BG_SL,
    C_BIAS_WALK,
    C_G_WORLD,
    C_P_BASE_IMU,
    C_R_BASE_IMU,
    C_RS_SIGMA,
    C_RS_SIGMA_RS,
    C_SIGMA_ACCEL,
    C_SIGMA_GYRO,
    C_SIGMA_GYRO_SAMPLE,
    C_SIZE,
    N_STATES,
    P_SL,
    TH_SL,
    V_SL,
)
from robot_state_estimator.estimation.ekf.numerics import _cross, _rot, _sub, cross3, skew
from robot_state_estimator.estimation.settings import EkfSettings

FloatArray = NDArray[np.float64]

_I3 = np.eye(3)
_I15 = np.eye(N_STATES)


@dataclass(frozen=True)
class ImuNoise:
    """Continuous-time IMU noise densities, per axis of the IMU frame S.

    Attributes:
        accel_density: (3,) m/s^2/sqrt(Hz), accelerometer white noise sigma_c.
        gyro_density: (3,) rad/s/sqrt(Hz), gyroscope white noise sigma_c.
        accel_bias_random_walk: (3,) m/s^3/sqrt(Hz).
        gyro_bias_random_walk: (3,) rad/s^2/sqrt(Hz).
        gyro_sample_stddev: (3,) rad/s, per-sample gyroscope stddev (used where a single reading enters a
            measurement: leg velocity, twist covariance, zero-rate update).
        accel_bias_prior_std: (3,) m/s^2, spread of the turn-on accelerometer bias (0 = use settings).
        gyro_bias_prior_std: (3,) rad/s, spread of the turn-on gyroscope bias (0 = use settings).
    """

    accel_density: FloatArray
    gyro_density: FloatArray
    accel_bias_random_walk: FloatArray
    gyro_bias_random_walk: FloatArray
    gyro_sample_stddev: FloatArray
    accel_bias_prior_std: FloatArray
    gyro_bias_prior_std: FloatArray


def imu_noise_from_spec(imu: ImuSpec | None, settings: EkfSettings) -> ImuNoise:
    """IMU noise densities from the description's SDF noise, with settings as fallback and override.

    Per axis, when ``settings.use_description_noise`` and the SDF noise is enabled with ``stddev > 0``:
    ``sigma_c = sigma_d * sqrt(dt_nominal)``, ``dt_nominal = 1 / update_rate`` (``settings.nominal_imu_rate_hz``
    when the update rate is 0). A Gauss-Markov dynamic bias (``dynamic_bias_stddev`` sigma_b, correlation
    time tau) is modelled as a random walk of density ``sigma_b``: gz-sensors (``GaussianNoiseModel``) drives
    the bias with discrete variance ``sigma_b^2 tau / 2 (1 - exp(-2 dt / tau)) ~ sigma_b^2 dt``, so sigma_b is
    the density of the driving white noise (the steady-state stddev is ``sigma_b sqrt(tau / 2)``); the random
    walk matches the short-term growth and is conservative beyond tau. The constant offset gz-sensors adds to
    every sample (``mean``) and the turn-on bias (``bias_mean`` with a random sign, ``bias_stddev``) are what the
    filter's bias state must absorb: a zero-mean prior of stddev ``sqrt(mean^2 + bias_mean^2 + bias_stddev^2)``.
    Other axes use the settings' densities.

    Args:
        imu: the IMU spec (None: settings only).
        settings: filter settings.

    Returns:
        The noise model.
    """
    rate = settings.nominal_imu_rate_hz
    if imu is not None and imu.update_rate > 0.0:
        rate = imu.update_rate
    dt_nominal = 1.0 / rate
    acc_d = np.full(3, settings.accel_noise_density)
    gyr_d = np.full(3, settings.gyro_noise_density)
    acc_rw = np.full(3, settings.accel_bias_random_walk)
    gyr_rw = np.full(3, settings.gyro_bias_random_walk)
    acc_b0 = np.zeros(3)
    gyr_b0 = np.zeros(3)
    if imu is not None and settings.use_description_noise:
        for axis in range(3):
            for spec, dens, rw, b0 in (
                (imu.linear_acceleration_noise[axis], acc_d, acc_rw, acc_b0),
                (imu.angular_velocity_noise[axis], gyr_d, gyr_rw, gyr_b0),
            ):
                if not spec.enabled:
                    continue
                if spec.stddev > 0.0:
                    dens[axis] = spec.stddev * math.sqrt(dt_nominal)
                if spec.dynamic_bias_stddev > 0.0 and spec.dynamic_bias_correlation_time > 0.0:
                    rw[axis] = spec.dynamic_bias_stddev
                b0[axis] = math.sqrt(spec.mean**2 + spec.bias_mean**2 + spec.bias_stddev**2)
    return ImuNoise(
        accel_density=acc_d,
        gyro_density=gyr_d,
        accel_bias_random_walk=acc_rw,
        gyro_bias_random_walk=gyr_rw,
        gyro_sample_stddev=gyr_d / math.sqrt(dt_nominal),
        accel_bias_prior_std=acc_b0,
        gyro_bias_prior_std=gyr_b0,
    )


def rotation_from_gravity(f_base_in_base: FloatArray) -> FloatArray:
    """(3, 3) ``R_world_base`` with yaw 0 from a static specific force (3,) m/s^2 in B (``f_base_in_base = R^T
    (-g_world)``).

    roll = atan2(f_y, f_z), pitch = atan2(-f_x, hypot(f_y, f_z)), ``R = Ry(pitch) Rx(roll)``.
    """
    roll = math.atan2(f_base_in_base[1], f_base_in_base[2])
    pitch = math.atan2(-f_base_in_base[0], math.hypot(f_base_in_base[1], f_base_in_base[2]))
    return np.asarray(pin.rpy.rpyToMatrix(roll, pitch, 0.0))


def gyro_noise_shares(lead_s: float, dt_gyro_s: float) -> tuple[float, float, float]:
    """How the latest gyro samples' noise enters the velocity state (module docstring, "Gyro noise in the velocity").

    Args:
        lead_s: s, time from the filter's time to the held reading's stamp (``layout.X_LEAD``, >= 0).
        dt_gyro_s: s, the held reading's interval for the angular acceleration (``layout.X_DT_GYRO``; <= 0: none).

    Returns:
        ``(lever, weight, held)``: the velocity carries ``lever [r]x`` of the rate at the filter's time (1 with the
        angular acceleration, else 0), whose noise is ``(1 - f) n_prev + f n_held`` with ``f = 1 - lead / dt_gyro``
        clipped to [0, 1] (1 at a reading's stamp): covariance ``weight Sigma_g``, ``weight = (1 - f)^2 + f^2``, and
        ``held = f`` the share of the held reading's noise, ``1 - held`` the previous reading's (without the angular
        acceleration the legs use the held rate: weight 1, held 1).
    """
    if dt_gyro_s <= 0.0:
        return 0.0, 1.0, 1.0
    f = min(max(1.0 - lead_s / dt_gyro_s, 0.0), 1.0)
    return 1.0, share_weight(f), f


def share_weight(held: float) -> float:
    """``(1 - f)^2 + f^2``, ``f = held``: the weight of the per-sample gyro covariance in the noise of the rate
    interpolated between two readings, ``(1 - f) n_prev + f n_held`` (:func:`gyro_noise_shares`)."""
    return (1.0 - held) ** 2 + held * held


class ProcessModel:
    """The constants of the IMU mount and noise, and the process model's matrices (module docstring).

    Args:
        X_base_imu: pose of the IMU frame S in the base frame B (pinocchio SE3, m).
        noise: IMU noise densities (:func:`imu_noise_from_spec`).
        gravity_m_s2: magnitude of gravity (m/s^2).

    Attributes:
        R_base_imu: (3, 3) rotation of S in B. p_base_imu: (3,) m, the lever arm r (S's origin in B).
        g_world: (3,) m/s^2, gravity in W.
        Sigma_accel_c, Sigma_gyro_c: (3, 3) the white-noise densities squared mapped to B (``R Sigma R^T``).
        Sigma_gyro_sample: (3, 3) rad^2/s^2, the per-sample gyroscope covariance in B.
        constants: (:data:`~.layout.C_SIZE`,) the same numbers in the buffer the backends read (:mod:`.layout`).
    """

    def __init__(self, X_base_imu: pin.SE3, noise: ImuNoise, gravity_m_s2: float) -> None:
        self.R_base_imu = np.array(X_base_imu.rotation, dtype=float)
        self.p_base_imu = np.array(X_base_imu.translation, dtype=float)
        self.g_world = np.array([0.0, 0.0, -gravity_m_s2])
        R_base_imu = self.R_base_imu
        self.Sigma_accel_c = R_base_imu @ np.diag(noise.accel_density**2) @ R_base_imu.T
        self.Sigma_gyro_c = R_base_imu @ np.diag(noise.gyro_density**2) @ R_base_imu.T
        self.Sigma_gyro_sample = R_base_imu @ np.diag(noise.gyro_sample_stddev**2) @ R_base_imu.T
        self._p_base_imu_skew = skew(self.p_base_imu)
        self._Sigma_imu_c = np.zeros((6, 6))
        self._Sigma_imu_c[:3, :3] = self.Sigma_accel_c
        self._Sigma_imu_c[3:, 3:] = self.Sigma_gyro_c
        self._Q_bias_c = np.zeros((N_STATES, N_STATES))
        self._Q_bias_c[BA_SL, BA_SL] = np.diag(noise.accel_bias_random_walk**2)
        self._Q_bias_c[BG_SL, BG_SL] = np.diag(noise.gyro_bias_random_walk**2)
        # A and G with their constant blocks; the others are written by each call.
        self._A = np.zeros((N_STATES, N_STATES))
        self._A[V_SL, BA_SL] = -R_base_imu
        self._A[TH_SL, BG_SL] = -R_base_imu
        self._G = np.zeros((N_STATES, 6))
        self._G[V_SL, 0:3] = -_I3
        self._G[TH_SL, 3:6] = -_I3
        #: (6, 6) ``diag(I, -R_base_imu)``: the twist (v_base_in_base, omega_base_in_base) from the (dv, dbg) error
        #: block (the outputs)
        self.twist_transform = np.eye(6)
        self.twist_transform[3:, 3:] = -R_base_imu
        # 3-vectors and 3 x 3s as Python floats (cheaper than numpy calls at this size)
        self.R_base_imu_list = R_base_imu.tolist()
        self.p_base_imu_list = self.p_base_imu.tolist()
        c = self.constants = np.zeros(C_SIZE)
        c[C_R_BASE_IMU : C_R_BASE_IMU + 9] = R_base_imu.ravel()
        c[C_P_BASE_IMU : C_P_BASE_IMU + 3] = self.p_base_imu
        c[C_G_WORLD : C_G_WORLD + 3] = self.g_world
        c[C_SIGMA_ACCEL : C_SIGMA_ACCEL + 9] = self.Sigma_accel_c.ravel()
        c[C_SIGMA_GYRO : C_SIGMA_GYRO + 9] = self.Sigma_gyro_c.ravel()
        c[C_BIAS_WALK : C_BIAS_WALK + 3] = noise.accel_bias_random_walk**2
        c[C_BIAS_WALK + 3 : C_BIAS_WALK + 6] = noise.gyro_bias_random_walk**2
        c[C_SIGMA_GYRO_SAMPLE : C_SIGMA_GYRO_SAMPLE + 9] = self.Sigma_gyro_sample.ravel()
        rs_sigma = self._p_base_imu_skew @ self.Sigma_gyro_sample
        c[C_RS_SIGMA : C_RS_SIGMA + 9] = rs_sigma.ravel()
        c[C_RS_SIGMA_RS : C_RS_SIGMA_RS + 9] = (rs_sigma @ self._p_base_imu_skew.T).ravel()

    def twist_noise_at(self, lever: float, weight: float, cross: float) -> FloatArray:
        """(6, 6) the gyro's per-sample noise on the published twist ``(v_base_in_base, omega_base_in_base)`` (module
        docstring, "Gyro noise in the velocity"; the shares of :func:`gyro_noise_shares`, ``cross = lever held``):
        ``lever weight [r]x Sigma_g [r]x^T`` on the velocity, ``cross [r]x Sigma_g`` between velocity and rate,
        ``Sigma_g`` on the rate."""
        rs = self._p_base_imu_skew
        S = self.Sigma_gyro_sample
        Q = np.zeros((6, 6))
        Q[:3, :3] = (lever * weight) * (rs @ S @ rs.T)
        Q[:3, 3:] = cross * (rs @ S)
        Q[3:, :3] = Q[:3, 3:].T
        Q[3:, 3:] = S
        return Q

    def omega_base_in_base(self, gyro_imu: list[float], gyro_bias: list[float]) -> list[float]:
        """``omega_base_in_base = R_base_imu (omega_imu_in_imu - b_g)`` (rad/s, B) on Python floats."""
        return _rot(self.R_base_imu_list, _sub(gyro_imu, gyro_bias))

    def base_motion(
        self,
        gyro_imu: list[float],
        accel_imu: list[float],
        gyro_bias: list[float],
        accel_bias: list[float],
        alpha_base_in_base: list[float],
    ) -> tuple[list[float], list[float]]:
        """Bias-corrected ``(omega_base_in_base rad/s, f_base_in_base m/s^2 at the base origin)`` in B from a reading in
        S (module docstring, "IMU in the base frame"), on Python floats."""
        R_base_imu = self.R_base_imu_list
        w = _rot(R_base_imu, _sub(gyro_imu, gyro_bias))
        f_imu = _rot(R_base_imu, _sub(accel_imu, accel_bias))
        r = self.p_base_imu_list
        ar = _cross(alpha_base_in_base, r)
        wwr = _cross(w, _cross(w, r))
        return w, [f_imu[0] - ar[0] - wwr[0], f_imu[1] - ar[1] - wwr[1], f_imu[2] - ar[2] - wwr[2]]

    def error_transition(
        self, R_world_base: FloatArray, v_base_in_base: FloatArray, omega_base_in_base: FloatArray, dt: float
    ) -> tuple[FloatArray, FloatArray]:
        """Error-state transition over dt (module docstring, "Error dynamics", "Discretisation").

        Args:
            R_world_base: (3, 3) attitude. v_base_in_base: (3,) m/s in B.
            omega_base_in_base: (3,) rad/s, bias-corrected angular velocity in B.
            dt: s, propagation interval.

        Returns:
            ``Phi`` (15, 15) ``= I + A dt + (A dt)^2 / 2`` and ``M`` (3, 3) ``= [v]x + L``. The constant blocks of A
            (``-R_base_imu`` on the biases) are set at construction.
        """
        R = R_world_base
        w_skew = skew(omega_base_in_base)
        v_skew = skew(v_base_in_base)
        M = v_skew + skew(cross3(omega_base_in_base, self.p_base_imu)) + w_skew @ self._p_base_imu_skew
        A = self._A
        A[P_SL, V_SL] = R
        A[P_SL, TH_SL] = -R @ v_skew
        A[V_SL, V_SL] = -w_skew
        A[V_SL, TH_SL] = skew(R.T @ self.g_world)
        A[V_SL, BG_SL] = -M @ self.R_base_imu
        A[TH_SL, TH_SL] = -w_skew
        Adt = A * dt
        return _I15 + Adt + 0.5 * (Adt @ Adt), M

    def process_noise(self, M: FloatArray) -> FloatArray:
        """(15, 15) ``G Q_c G^T`` (module docstring) for ``M = [v]x + L``; multiply by dt for ``Q_d``.

        The white noises are taken in B (``R_base_imu Sigma R_imu_base``), so G has ``-I`` for the accelerometer on
        the velocity, ``-M`` and ``-I`` for the gyroscope on the velocity and the attitude, ``I`` on the biases.
        """
        G = self._G
        G[V_SL, 3:6] = -M
        return G @ self._Sigma_imu_c @ G.T + self._Q_bias_c
