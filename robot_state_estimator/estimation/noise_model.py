"""What the filter assumes about its measurements: the leg-kinematics noise and the IMU process-noise floor.

Leg kinematics (one function, :func:`leg_measurement_covariance`, for the 3-D velocity update and any other
leg update that needs it). Foot i measures the base velocity ``y_i = -(J_c,i qdot) - omega_hat_base_in_base x c_i``
(Bloesch et al., RSS 2012, eq. 9; ``c_i`` the contact point in B, ``J_c,i`` its Jacobian). Its error has three
independent parts:

1. the contact point moving on the ground: (a) white, sample to sample (rolling not captured by the sphere model,
   vibration, ground and link compliance): stddev ``ekf.foot_velocity_noise`` per axis, ``sigma_w^2 I``; (b) creep,
   a slow drift of the contact point over the ground correlated over a stance (the rubber shearing, the foot
   scuffing): density ``ekf.foot_creep_density`` ``q`` (m/sqrt(s)) per ground-plane axis, as the per-sample
   variance ``sigma_q^2 = q^2 / dt`` of its equivalent white noise at the joint period ``dt`` (below,
   :func:`contact_creep_variance`) on the ground plane only, ``sigma_q^2 (I - n n^T)`` with ``n = R_world_base^T
   e_z`` the world's up in B (the ground taken level: a foot creeps along the ground, not into it);
2. the joint velocity's error ``e_qdot`` (stddev ``sigma_qdot`` per joint, independent joints) through the
   Jacobian: ``sigma_qdot^2 J_c J_c^T``. ``sigma_qdot`` is ``ekf.encoder_velocity_noise`` for velocities the
   joint message measures, and for velocities the estimator differentiates (no velocities in the message,
   :mod:`.joint_velocity`) the encoders' position noise through the differentiator,
   :func:`differentiated_velocity_std` of ``ekf.encoder_noise_rad`` (encoder noise, backlash and compliance of
   the transmission: the joint angle at the output is uncertain by that much) and the encoder's quantisation step
   ``ekf.encoder_resolution_rad`` (uniform: variance ``step^2 / 12``);
3. the gyroscope's per-sample noise through the lever arm: ``[c_i]x R_base_imu Sigma_g R_imu_base [c_i]x^T``; with
   the angular acceleration on, the lever is ``c_i - r`` (``r`` the IMU's lever) and one gyro sample is common to
   all stance feet (cross blocks between feet; ``ekf.model``, "Gyro noise in the velocity", and ``ekf.measurements``).

Neglected (second order): the encoder position error moving ``c_i`` and ``J_c,i`` themselves (``omega x dc``:
1 mrad of joint error moves a 0.2 m leg's foot by 0.2 mm, times omega of ~1 rad/s), and the differentiator's lag
in fast swings of a stance leg (a model error that belongs to part 1).

For a backward difference ``(q_k - q_{k-1}) / dt`` followed by the first-order low-pass ``y_k = y_{k-1} +
alpha (x_k - y_{k-1})`` (:mod:`.joint_velocity`), a white position noise of variance ``s^2`` gives the stationary
output variance ``s^2 / dt^2 * alpha^2 * 2 / (2 - alpha)`` (the filter's impulse response applied to the
difference ``n_k - n_{k-1}``: ``alpha^2 sum_k h_k^2`` with ``h_0 = 1``, ``h_k = -alpha (1 - alpha)^(k-1)``;
``2 s^2 / dt^2`` without the low-pass, alpha = 1). The Go1's 400 Hz encoders with the 100 Hz default cutoff give
``sigma_qdot = 293 s``: 0.29 rad/s for ``s = 1 mrad``.

Creep correlated over a stance (part 1b). A contact point that drifts by ``d`` over a stance of duration ``T_s``
(``d`` of stddev ``sigma_d`` per horizontal axis, any time profile inside the stance) is a velocity error ``e(t)``
whose samples are correlated over the whole stance: the mean of the N = ``T_s / dt`` samples a stance gives the
filter is ``d / T_s``, of variance ``sigma_d^2 / T_s^2``, whatever N is; N white samples of variance ``sigma^2``
average to ``sigma^2 / N``. Equal information over the stance (the same variance of the mean, or of the
integrated contact-point displacement, ``sigma^2 dt T_s = sigma_d^2``) gives the equivalent white noise
``sigma^2 = sigma_d^2 / (T_s dt) = q^2 / dt`` with ``q^2 = sigma_d^2 / T_s`` (m^2/s): the spectral density at zero
frequency of the correlated error, the white noise that replaces a correlated one whose correlation time is
short against the filter's averaging time (Maybeck, "Stochastic Models, Estimation and Control" vol. 1, 1979,
sec. 4.11 on the white-noise approximation of a shaping filter; for a first-order Gauss-Markov process of variance
``s^2`` and time constant ``tau`` the same density is ``2 s^2 tau``, Brown and Hwang, "Introduction to Random
Signals and Applied Kalman Filtering", 4th ed. 2012, sec. 2.9). The setting is the density ``q`` and not
``sigma_d``: it holds for any stance duration and gait (``q = sigma_d / sqrt(T_s)``: 2 mm per 0.3 s stance is
3.65 mm/sqrt(s)), and the filter needs only the joint period, measured at initialisation (0.1 m/s white and
3.65 mm/sqrt(s) at 1 kHz: 0.115 m/s per sample on each ground-plane axis, 0.153 m/s with the white part). The
approximation is off for an error whose correlation time is long against the filter's velocity time constant:
there the filter follows the drift instead of averaging it, and over its short window the white equivalent holds
more power than the drift's bounded velocity, so it over-counts (the Monte Carlo of
:mod:`~robot_state_estimator.tools.consistency`, with the simulated feet's honest noise: velocity 0.92 per
horizontal axis; docs/uncertainty.md).

IMU process noise floor. A datasheet's noise density is what the sensor does on a bench. On a walking robot, foot
impacts, motor vibration and the mount's flexibility add broadband acceleration and rate noise the filter must
treat as noise too (issue 15 item 6: on a real humanoid walk the datasheet noise made yaw five times worse than the
raw gyro; on the real Go1 trot the datasheet noise gives 2.0 % ATE, the floor 1.0 %). So the densities the filter
uses are never below ``ekf.accel_noise_floor`` (m/s^2/sqrt(Hz)) and ``ekf.gyro_noise_floor`` (rad/s/sqrt(Hz))
per axis; the defaults, 0.02 and 0.002, are what the real Go1 trot needs (``config/go1.yaml``'s tuned densities,
12-17 times the BMI088 datasheet's 1.7e-3 m/s^2/sqrt(Hz) and 1.2e-4 rad/s/sqrt(Hz)). A description noise more than
:data:`FAR_BELOW` times below the density used is reported (event ``imu_noise_below_floor``, warn) naming both.
0 disables a floor (a simulation whose IMU has exactly the description's noise).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.settings import EkfSettings

if TYPE_CHECKING:  # (ekf imports this module: the leg covariance is written once, here)
    from robot_state_estimator.estimation.ekf import ImuNoise

FloatArray = NDArray[np.float64]

#: a description density this many times below the one the filter uses is reported (``imu_noise_below_floor``)
FAR_BELOW = 3.0


def differentiated_velocity_std(position_std_rad: float, dt_s: float, cutoff_hz: float) -> float:
    """rad/s, stddev of a joint velocity differentiated from positions with white noise (module docstring).

    Args:
        position_std_rad: rad, stddev of the joint position noise.
        dt_s: s, joint sample period (> 0).
        cutoff_hz: Hz, low-pass cutoff of :class:`~.joint_velocity.JointVelocityEstimator` (0: none).
    """
    if dt_s <= 0.0 or not math.isfinite(dt_s):
        raise ValueError(f"dt_s must be finite and > 0, got {dt_s!r}")
    alpha = 1.0 if cutoff_hz <= 0.0 else dt_s / (dt_s + 1.0 / (2.0 * math.pi * cutoff_hz))
    return position_std_rad / dt_s * alpha * math.sqrt(2.0 / (2.0 - alpha))


def joint_velocity_std(settings: EkfSettings, *, measured: bool, dt_s: float | None, cutoff_hz: float) -> float:
    """rad/s, ``sigma_qdot`` of the leg measurement: the measured velocities' ``encoder_velocity_noise``, or the
    encoders' position noise and quantisation through the differentiator (module docstring).

    Args:
        settings: filter settings.
        measured: the joint message carries velocities that are used.
        dt_s: s, joint sample period for differentiated velocities (None: unknown, ``encoder_velocity_noise``).
        cutoff_hz: Hz, the differentiator's low-pass cutoff.
    """
    if measured or dt_s is None:
        return settings.encoder_velocity_noise
    s2 = settings.encoder_noise_rad**2 + settings.encoder_resolution_rad**2 / 12.0
    return differentiated_velocity_std(math.sqrt(s2), dt_s, cutoff_hz)


def contact_creep_variance(settings: EkfSettings, joint_period_s: float | None) -> float:
    """(m/s)^2, per-sample variance ``sigma_q^2 = foot_creep_density^2 / dt`` of the creep's equivalent white noise
    on each ground-plane axis (module docstring, part 1b).

    Args:
        settings: filter settings (``foot_creep_density`` m/sqrt(s)).
        joint_period_s: s, the joint sample period ``dt`` (one leg update per joint sample); None (unknown): 0,
            the creep is left out.

    Raises:
        ValueError: a period that is not finite and > 0.
    """
    q = settings.foot_creep_density
    if q == 0.0 or joint_period_s is None:
        return 0.0
    if joint_period_s <= 0.0 or not math.isfinite(joint_period_s):
        raise ValueError(f"joint_period_s must be finite and > 0, got {joint_period_s!r}")
    return q * q / joint_period_s


def leg_measurement_covariance(
    J_contact: FloatArray,
    c_skew: FloatArray,
    Sigma_gyro_base: FloatArray,
    *,
    foot_velocity_noise: float,
    joint_velocity_noise: float,
    creep_variance: float = 0.0,
    up_in_base: FloatArray | None = None,
) -> FloatArray:
    """(m, m) covariance of one foot's leg-odometry measurement (module docstring, parts 1 to 3).

    Args:
        J_contact: (m, n) rows of the contact Jacobian in B the measurement uses (m = 3: contact point velocity;
            6: with the foot's angular velocity, for a flat-foot update).
        c_skew: (3, 3) ``[c_i]x`` of the contact point in B (the gyro term enters the first three rows).
        Sigma_gyro_base: (3, 3) rad^2/s^2, per-sample gyro covariance in B (``R_base_imu Sigma_g R_imu_base``).
        foot_velocity_noise: m/s, contact-point velocity stddev (part 1; also applied to the angular rows).
        joint_velocity_noise: rad/s, ``sigma_qdot`` (part 2).
        creep_variance: (m/s)^2, ``sigma_q^2`` of :func:`contact_creep_variance` (part 1b), on the ground plane of
            ``up_in_base``.
        up_in_base: (3,) unit, the world's up in B (``R_world_base[2]``); needed when ``creep_variance`` > 0.
    """
    J = np.asarray(J_contact, dtype=float)
    m = J.shape[0]
    R: FloatArray = foot_velocity_noise**2 * np.eye(m) + joint_velocity_noise**2 * (J @ J.T)
    R[:3, :3] += c_skew @ Sigma_gyro_base @ c_skew.T
    if creep_variance > 0.0:
        R[:3, :3] += creep_variance * ground_plane_projector(up_in_base)
    return R


def ground_plane_projector(up_in_base: FloatArray | None) -> FloatArray:
    """(3, 3) ``I - n n^T``: the projector onto the plane normal to the world's up ``n`` (3,), in B (part 1b)."""
    if up_in_base is None:
        raise ValueError("up_in_base is needed for the creep's ground-plane covariance")
    n = np.asarray(up_in_base, dtype=float)
    return np.eye(3) - np.outer(n, n)


def apply_imu_noise_floor(noise: ImuNoise, settings: EkfSettings, imu_name: str) -> tuple[ImuNoise, list[str]]:
    """The densities never below the floors (module docstring); the messages of ``imu_noise_below_floor``.

    Args:
        noise: the densities from the description and settings (:func:`~.ekf.imu_noise_from_spec`).
        settings: filter settings (``accel_noise_floor``, ``gyro_noise_floor``).
        imu_name: the IMU's name, for the messages.

    Returns:
        The noise with the floors applied (``gyro_sample_stddev`` scaled with the gyro density), and one message
        per sensor whose stated density is far below the one used.
    """
    messages = []
    acc = np.maximum(noise.accel_density, settings.accel_noise_floor)
    gyr = np.maximum(noise.gyro_density, settings.gyro_noise_floor)
    for what, stated, used, unit, key in (
        ("accelerometer", noise.accel_density, acc, "m/s^2/sqrt(Hz)", "ekf.accel_noise_floor"),
        ("gyroscope", noise.gyro_density, gyr, "rad/s/sqrt(Hz)", "ekf.gyro_noise_floor"),
    ):
        if float(np.min(stated)) * FAR_BELOW < float(np.max(used)):
            messages.append(
                f"IMU {imu_name!r}: the {what} noise density stated ({float(np.min(stated)):.3g} {unit}) is far "
                f"below what the filter uses ({float(np.max(used)):.3g}, the legged-robot floor {key}): foot "
                "impacts and vibration make a walking robot's IMU noisier than its datasheet"
            )
    scale = np.divide(gyr, noise.gyro_density, out=np.ones(3), where=noise.gyro_density > 0.0)
    return (
        dataclasses.replace(
            noise, accel_density=acc, gyro_density=gyr, gyro_sample_stddev=noise.gyro_sample_stddev * scale
        ),
        messages,
    )
