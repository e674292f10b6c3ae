"""The filter's IMU noise densities from the description's SDF noise agree with how the IMU simulator
(gz-sensors semantics) actually generates that noise: measured on simulated samples, not restated formulas."""

from __future__ import annotations

import numpy as np

from robot_state_estimator.description.types import ImuSpec, NoiseSpec, NoiseType
from robot_state_estimator.estimation.ekf import imu_noise_from_spec
from robot_state_estimator.estimation.settings import EkfSettings
from robot_state_estimator.sensors.noise import AxisNoise

RATE_HZ = 500.0


def _spec(noise: NoiseSpec) -> ImuSpec:
    return ImuSpec(
        name="imu",
        link="base",
        frame_id="imu",
        update_rate=RATE_HZ,
        angular_velocity_noise=(noise, noise, noise),
        linear_acceleration_noise=(noise, noise, noise),
    )


def test_white_noise_density_reproduces_the_per_sample_variance() -> None:
    noise = NoiseSpec(type=NoiseType.GAUSSIAN, stddev=0.004)
    model = imu_noise_from_spec(_spec(noise), EkfSettings())
    samples = AxisNoise(noise, np.random.default_rng(1)).apply_series(np.zeros(200_000), np.full(200_000, 1 / RATE_HZ))
    # a white noise of density sigma_c sampled every dt has per-sample variance sigma_c^2 / dt
    np.testing.assert_allclose(model.gyro_density**2 * RATE_HZ, np.var(samples), rtol=0.02)
    np.testing.assert_allclose(model.gyro_sample_stddev, np.std(samples), rtol=0.01)


def test_dynamic_bias_random_walk_matches_the_simulated_bias_growth() -> None:
    """Over times much shorter than the correlation time, the Gauss-Markov bias of the simulator grows like a
    random walk; its increments over 1 s must have the variance the filter assumes (density^2 * 1 s)."""
    noise = NoiseSpec(
        type=NoiseType.GAUSSIAN, stddev=0.0, dynamic_bias_stddev=0.002, dynamic_bias_correlation_time=1000.0
    )
    model = imu_noise_from_spec(_spec(noise), EkfSettings())
    n_runs, n_steps = 400, int(RATE_HZ)  # 1 s each
    increments = []
    for seed in range(n_runs):
        axis = AxisNoise(noise, np.random.default_rng(seed))
        out = axis.apply_series(np.zeros(n_steps), np.full(n_steps, 1 / RATE_HZ))
        increments.append(out[-1] - out[0])
    measured = np.var(increments) / ((n_steps - 1) / RATE_HZ)
    np.testing.assert_allclose(model.gyro_bias_random_walk**2, measured, rtol=0.2)


def test_bias_prior_covers_the_offset_the_simulator_adds() -> None:
    """gz-sensors adds ``mean`` to every sample and a turn-on bias (``bias_mean`` with a random sign, plus
    ``bias_stddev``): over many IMUs (seeds) the RMS of that constant part is what the bias prior must cover."""
    noise = NoiseSpec(type=NoiseType.GAUSSIAN, stddev=0.001, mean=0.05, bias_mean=0.03, bias_stddev=0.02)
    model = imu_noise_from_spec(_spec(noise), EkfSettings())
    offsets = []
    for seed in range(600):
        out = AxisNoise(noise, np.random.default_rng(seed)).apply_series(np.zeros(200), np.full(200, 1 / RATE_HZ))
        offsets.append(np.mean(out))  # the white part averages out (0.001 / sqrt(200))
    np.testing.assert_allclose(model.gyro_bias_prior_std, np.sqrt(np.mean(np.square(offsets))), rtol=0.06)
