"""IMU noise with the semantics of gz-sensors' ``GaussianNoiseModel`` (and the SDFormat ``noise.sdf`` spec).

Per axis (:class:`AxisNoise`), exactly as gz-sensors applies an ``sdf::Noise`` of type ``gaussian`` or
``gaussian_quantized`` (source: gz-sensors ``src/GaussianNoiseModel.cc``, ``Load`` and ``ApplyImpl``;
``src/ImuSensor.cc``, ``Update``):

1. At load, a constant bias ``b`` is drawn once: ``b ~ N(bias_mean, bias_stddev)`` (exactly ``bias_mean``
   when ``bias_stddev`` is 0), then its sign is flipped with probability 0.5 (by convention ``bias_mean``
   is given positive).
2. At each sample, with ``dt`` the time since the previous sample (0 for the first one):

   - white noise ``w ~ N(mean, stddev)``; when ``stddev`` is 0, ``w = mean`` (the mean is still added);
   - when ``dynamic_bias_stddev > 0`` and ``dynamic_bias_correlation_time > 0`` and ``dt > 0``, the bias
     follows a first-order Gauss-Markov process started at the constant bias above:
     ``b <- exp(-dt/tau) b + N(0, sigma_d)``, ``sigma_d^2 = -sigma_b^2 tau/2 expm1(-2 dt/tau)``
     (the exact discretisation of ``db = -b/tau dt + sigma_b dW``, so ``sigma_b`` is a driving-noise
     density and the stationary stddev is ``sigma_b sqrt(tau / 2)``, not ``sigma_b``; gz-sensors cites
     RotorS' IMU plugin and the kalibr "IMU Noise Model" wiki for it);
   - output ``y = x + b + w``;
   - when ``precision`` is non-zero (gz-sensors: ``|precision| > 1e-6``, for both noise types), ``y`` is
     rounded to the nearest multiple of ``precision`` (``round`` half away from zero, as ``std::round``).
     A negative precision is an error in gz-sensors (logged, not applied); here it raises.

An axis with type ``none`` is passed through untouched (gz-sensors creates no noise model for it).

Random numbers come from a seeded :class:`numpy.random.Generator`; the draw order is fixed (bias, sign,
then per sample white noise and dynamic-bias increment), so runs are reproducible, but the values differ
from gz-sensors' own generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.description.types import NoiseSpec, NoiseType
from robot_state_estimator.sensors.errors import SensorError

FloatArray = NDArray[np.float64]

#: gz-sensors treats a precision within this of zero as "no rounding" (``math::equal(p, 0, 1e-6)``).
PRECISION_EPS = 1e-6


@overload
def _round_half_away(x: FloatArray) -> FloatArray: ...
@overload
def _round_half_away(x: float) -> float: ...
def _round_half_away(x: FloatArray | float) -> FloatArray | float:
    """``std::round``: nearest integer, halves away from zero (numpy's ``round`` rounds halves to even)."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


class AxisNoise:
    """Noise of one IMU axis (gz-sensors ``GaussianNoiseModel``; see the module docstring).

    Args:
        spec: the axis' ``<noise>`` (units of the measured quantity: rad/s or m/s^2; seconds).
        rng: seeded generator; the constant bias is drawn from it here.

    Attributes:
        bias: current bias (constant part, plus the Gauss-Markov state when that is enabled).
        initial_bias: the bias drawn at construction (after the random sign flip).

    Raises:
        SensorError: negative ``stddev``, ``bias_stddev``, ``dynamic_bias_*`` or ``precision``.
    """

    def __init__(self, spec: NoiseSpec, rng: np.random.Generator) -> None:
        for name in ("stddev", "bias_stddev", "dynamic_bias_stddev", "dynamic_bias_correlation_time", "precision"):
            if getattr(spec, name) < 0:
                raise SensorError(f"noise {name} must be >= 0, got {getattr(spec, name)}")
        self.spec = spec
        self._rng = rng
        bias = 0.0
        if spec.enabled:
            bias = float(rng.normal(spec.bias_mean, spec.bias_stddev)) if spec.bias_stddev > 0 else spec.bias_mean
            if rng.uniform() < 0.5:
                bias = -bias
        self.initial_bias = bias
        self.bias = bias

    @property
    def enabled(self) -> bool:
        """False for noise type ``none`` (the axis is passed through)."""
        return self.spec.type is not NoiseType.NONE

    @property
    def quantized(self) -> bool:
        """Whether outputs are rounded to ``precision`` (non-zero precision, either gaussian type)."""
        return self.enabled and self.spec.precision > PRECISION_EPS

    @property
    def dynamic(self) -> bool:
        """Whether the Gauss-Markov dynamic bias is active (both of its parameters positive)."""
        return self.enabled and self.spec.dynamic_bias_stddev > 0 and self.spec.dynamic_bias_correlation_time > 0

    def _step_bias(self, dt: float) -> None:
        if self.dynamic and dt > 0:
            sigma_b = self.spec.dynamic_bias_stddev
            tau = self.spec.dynamic_bias_correlation_time
            sigma_d = np.sqrt(-(sigma_b**2) * tau / 2.0 * np.expm1(-2.0 * dt / tau))
            self.bias = float(np.exp(-dt / tau) * self.bias + self._rng.normal(0.0, sigma_d))

    def apply(self, value: float, dt: float) -> float:
        """One noisy sample: ``round_precision(value + bias + white)`` (bias stepped first when dynamic).

        Args:
            value: the ideal value (rad/s or m/s^2).
            dt: time since the previous sample (s); 0 for the first sample (no dynamic-bias step).
        """
        if not self.enabled:
            return float(value)
        s = self.spec
        white = float(self._rng.normal(s.mean, s.stddev)) if s.stddev > 0 else s.mean
        self._step_bias(dt)
        out = value + self.bias + white
        if self.quantized:
            out = float(_round_half_away(out / s.precision) * s.precision)
        return float(out)

    def apply_series(self, values: FloatArray, dts: FloatArray) -> FloatArray:
        """Noisy samples of a whole series (vectorised where the process allows it).

        Args:
            values: (n,) ideal values.
            dts: (n,) time since the previous sample (s); ``dts[0]`` is usually 0.

        Returns:
            (n,) noisy values. Same statistics as calling :meth:`apply` n times (the draw order differs).
        """
        values = np.asarray(values, dtype=float)
        if not self.enabled:
            return values.copy()
        s = self.spec
        n = values.shape[0]
        white = self._rng.normal(s.mean, s.stddev, size=n) if s.stddev > 0 else np.full(n, s.mean)
        if self.dynamic:
            dts = np.asarray(dts, dtype=float)
            tau = s.dynamic_bias_correlation_time
            positive = dts > 0
            phi = np.where(positive, np.exp(-np.where(positive, dts, 0.0) / tau), 1.0)
            sigma_d = np.where(
                positive,
                np.sqrt(np.maximum(-(s.dynamic_bias_stddev**2) * tau / 2.0 * np.expm1(-2.0 * dts / tau), 0.0)),
                0.0,
            )
            increments = self._rng.normal(0.0, 1.0, size=n) * sigma_d
            bias = np.empty(n)
            b = self.bias
            for k in range(n):
                b = phi[k] * b + increments[k]
                bias[k] = b
            self.bias = float(b)
        else:
            bias = np.full(n, self.bias)
        out = values + bias + white
        if self.quantized:
            out = _round_half_away(out / s.precision) * s.precision
        return np.asarray(out, dtype=float)

    def variance(self) -> float:
        """Per-sample white-noise variance ``stddev^2`` (0 for type ``none``), as gz reports in ROS messages."""
        return self.spec.stddev**2 if self.enabled else 0.0


class ImuNoise:
    """The six noise channels of an IMU: gyroscope x, y, z (rad/s) and accelerometer x, y, z (m/s^2).

    Biases are drawn at construction in the order gyro x, y, z, then accel x, y, z.

    Args:
        angular_velocity_noise: 3 ``NoiseSpec`` (x, y, z), rad/s.
        linear_acceleration_noise: 3 ``NoiseSpec`` (x, y, z), m/s^2.
        rng: seeded generator (a new ``default_rng(seed)`` when an int or None is given).
    """

    def __init__(
        self,
        angular_velocity_noise: Sequence[NoiseSpec],
        linear_acceleration_noise: Sequence[NoiseSpec],
        rng: np.random.Generator | int | None = None,
    ) -> None:
        if len(angular_velocity_noise) != 3 or len(linear_acceleration_noise) != 3:
            raise SensorError("IMU noise needs 3 angular velocity and 3 linear acceleration NoiseSpec")
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.gyro = tuple(AxisNoise(s, self.rng) for s in angular_velocity_noise)
        self.accel = tuple(AxisNoise(s, self.rng) for s in linear_acceleration_noise)

    @property
    def gyro_bias(self) -> FloatArray:
        """(3,) current gyroscope bias (rad/s), sensor frame S."""
        return np.array([a.bias for a in self.gyro])

    @property
    def accel_bias(self) -> FloatArray:
        """(3,) current accelerometer bias (m/s^2), sensor frame S."""
        return np.array([a.bias for a in self.accel])

    def apply(self, omega_imu_in_imu: FloatArray, f_imu_in_imu: FloatArray, dt: float) -> tuple[FloatArray, FloatArray]:
        """Noisy ``(omega_imu_in_imu, f_imu_in_imu)`` for one sample (``dt`` in s since the previous sample, 0 for the
        first)."""
        omega = np.array([ax.apply(float(x), dt) for ax, x in zip(self.gyro, omega_imu_in_imu)])
        f = np.array([ax.apply(float(x), dt) for ax, x in zip(self.accel, f_imu_in_imu)])
        return omega, f

    def apply_series(
        self, omega_imu_in_imu: FloatArray, f_imu_in_imu: FloatArray, dts: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Noisy series: ``omega_imu_in_imu`` (n, 3) rad/s and ``f_imu_in_imu`` (n, 3) m/s^2, ``dts`` (n,) s."""
        omega = np.column_stack([ax.apply_series(omega_imu_in_imu[:, i], dts) for i, ax in enumerate(self.gyro)])
        f = np.column_stack([ax.apply_series(f_imu_in_imu[:, i], dts) for i, ax in enumerate(self.accel)])
        return omega, f
