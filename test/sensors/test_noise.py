"""gz-sensors noise semantics (GaussianNoiseModel): bias, sign flip, white noise, Gauss-Markov, precision."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.description.types import NoiseSpec, NoiseType
from robot_state_estimator.sensors.errors import SensorError
from robot_state_estimator.sensors.noise import AxisNoise, ImuNoise

G = NoiseType.GAUSSIAN


def test_none_type_passes_through_even_with_parameters():
    ax = AxisNoise(NoiseSpec(type=NoiseType.NONE, mean=1.0, stddev=1.0, bias_mean=2.0), np.random.default_rng(0))
    assert ax.apply(0.5, 0.001) == 0.5
    np.testing.assert_array_equal(ax.apply_series(np.arange(3.0), np.full(3, 1e-3)), np.arange(3.0))


def test_mean_is_added_when_stddev_is_zero():
    ax = AxisNoise(NoiseSpec(type=G, mean=0.25), np.random.default_rng(1))
    assert ax.bias == 0.0
    assert ax.apply(1.0, 0.0) == 1.25
    np.testing.assert_array_equal(ax.apply_series(np.zeros(4), np.zeros(4)), np.full(4, 0.25))


def test_bias_without_stddev_is_bias_mean_with_random_sign():
    signs = []
    for seed in range(2000):
        ax = AxisNoise(NoiseSpec(type=G, bias_mean=0.1), np.random.default_rng(seed))
        assert abs(ax.bias) == 0.1
        signs.append(np.sign(ax.bias))
    flip_rate = np.mean(np.array(signs) < 0)
    assert abs(flip_rate - 0.5) < 0.05  # binomial stddev 0.011


def test_bias_drawn_once_from_normal_with_sign_flip():
    biases = np.array(
        [
            AxisNoise(NoiseSpec(type=G, bias_mean=1.0, bias_stddev=0.1), np.random.default_rng(s)).bias
            for s in range(4000)
        ]
    )
    assert np.all((np.abs(biases) > 0.5) & (np.abs(biases) < 1.5))
    assert abs(np.mean(np.abs(biases)) - 1.0) < 0.01
    assert abs(np.std(np.abs(biases)) - 0.1) < 0.01
    ax = AxisNoise(NoiseSpec(type=G, bias_mean=1.0, bias_stddev=0.1), np.random.default_rng(3))
    b = ax.bias
    ax.apply_series(np.zeros(100), np.full(100, 1e-3))
    assert ax.bias == b  # constant without a dynamic bias


def test_white_noise_statistics():
    ax = AxisNoise(NoiseSpec(type=G, mean=0.05, stddev=0.2, bias_mean=0.3), np.random.default_rng(7))
    out = ax.apply_series(np.full(200_000, 1.0), np.full(200_000, 1e-3))
    assert abs(out.mean() - (1.0 + ax.bias + 0.05)) < 3 * 0.2 / np.sqrt(200_000) * 2
    assert abs(out.std() - 0.2) < 0.002
    single = np.array([ax.apply(1.0, 1e-3) for _ in range(20_000)])
    assert abs(single.std() - 0.2) < 0.005


def test_gauss_markov_dynamic_bias():
    sigma_b, tau, dt = 0.1, 0.05, 1e-3
    ax = AxisNoise(
        NoiseSpec(type=G, dynamic_bias_stddev=sigma_b, dynamic_bias_correlation_time=tau), np.random.default_rng(11)
    )
    out = ax.apply_series(np.zeros(300_000), np.full(300_000, dt))[2000:]  # stddev 0: output = bias
    stationary = sigma_b * np.sqrt(tau / 2)  # db = -b/tau dt + sigma_b dW (gz-sensors / RotorS)
    assert abs(out.std() - stationary) < 0.1 * stationary
    x = out - out.mean()
    lag1 = np.dot(x[:-1], x[1:]) / np.dot(x, x)
    lag50 = np.dot(x[:-50], x[50:]) / np.dot(x, x)
    assert abs(lag1 - np.exp(-dt / tau)) < 0.005
    assert abs(lag50 - np.exp(-50 * dt / tau)) < 0.08


def test_dynamic_bias_needs_positive_dt_and_both_parameters():
    spec = NoiseSpec(type=G, bias_mean=0.2, dynamic_bias_stddev=0.1, dynamic_bias_correlation_time=1.0)
    ax = AxisNoise(spec, np.random.default_rng(0))
    b0 = ax.bias
    ax.apply_series(np.zeros(10), np.zeros(10))
    assert ax.bias == b0  # dt = 0: no step
    ax.apply(0.0, 0.01)
    assert ax.bias != b0
    no_tau = AxisNoise(NoiseSpec(type=G, dynamic_bias_stddev=0.1), np.random.default_rng(0))
    assert not no_tau.dynamic


@pytest.mark.parametrize("noise_type", [NoiseType.GAUSSIAN, NoiseType.GAUSSIAN_QUANTIZED])
def test_precision_rounds_for_both_gaussian_types(noise_type):
    ax = AxisNoise(NoiseSpec(type=noise_type, stddev=0.3, precision=0.05), np.random.default_rng(2))
    out = ax.apply_series(np.linspace(-1, 1, 1000), np.full(1000, 1e-3))
    np.testing.assert_allclose(out / 0.05, np.round(out / 0.05), atol=1e-9)
    assert len(np.unique(np.round(out / 0.05))) > 10
    one = ax.apply(0.0, 0.0)
    assert abs(one / 0.05 - round(one / 0.05)) < 1e-9


def test_tiny_precision_is_not_applied_and_halves_round_away_from_zero():
    ax = AxisNoise(NoiseSpec(type=G, precision=1e-7), np.random.default_rng(0))
    assert ax.apply(0.123456789, 0.0) == 0.123456789
    q = AxisNoise(NoiseSpec(type=G, precision=1.0), np.random.default_rng(0))
    assert q.apply(2.5, 0.0) == 3.0 and q.apply(-2.5, 0.0) == -3.0  # std::round, not banker's rounding


def test_negative_parameters_raise():
    with pytest.raises(SensorError, match="stddev"):
        AxisNoise(NoiseSpec(type=G, stddev=-1.0), np.random.default_rng(0))
    with pytest.raises(SensorError, match="precision"):
        AxisNoise(NoiseSpec(type=G, precision=-0.1), np.random.default_rng(0))


def test_imu_noise_is_seeded_and_per_axis():
    g = NoiseSpec(type=G, stddev=0.01, bias_stddev=0.001)
    a = NoiseSpec(type=G, stddev=0.1)
    n1 = ImuNoise((g, g, g), (a, a, NoiseSpec()), 42)
    n2 = ImuNoise((g, g, g), (a, a, NoiseSpec()), 42)
    np.testing.assert_array_equal(n1.gyro_bias, n2.gyro_bias)
    w1, f1 = n1.apply(np.zeros(3), np.array([0.0, 0.0, 9.81]), 0.001)
    w2, f2 = n2.apply(np.zeros(3), np.array([0.0, 0.0, 9.81]), 0.001)
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(f1, f2)
    assert f1[2] == 9.81  # z axis has noise type none
    with pytest.raises(SensorError):
        ImuNoise((g, g), (a, a, a))
