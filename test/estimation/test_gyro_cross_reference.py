"""The filter's error covariance and its covariance with the gyro readings' noise (``layout.X_GYRO_CROSS``) against a
reference that keeps every reading's noise: the covariance of ``[e; n_1 .. n_J]`` (``e`` the error, estimate minus
truth; ``n_j`` each IMU reading's gyro noise in B), propagated with the filter's transition and process noise and
updated with the consider gain computed from that covariance alone (Schmidt: the noise is not estimated). Readings
with 0 to 3 joint samples at random times between them, stacked leg updates of 1 to 4 feet, zero-rate updates, the
flat feet's rotation update of two feet, and generic stacked updates mixing two measurements of the held rate with
one that loads no gyro noise. Innovations are zero, so
nothing is injected and the covariances are those of a linear system: the filter's P and C must equal the
reference's (C only for the readings the filter keeps: the previous reading's columns are dropped once the state has
reached the held reading's stamp, when no later update can use them)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from est_helpers import IMU_MOUNTS, initialize_at_random

from robot_state_estimator.estimation import BaseEkf, EkfSettings, flat_feet, imu_noise_from_spec
from robot_state_estimator.estimation.ekf import N_STATES, Measurement
from robot_state_estimator.estimation.ekf.layout import BG_SL, X_LEAD
from robot_state_estimator.estimation.ekf.measurements import HELD_RATE_LOADING
from robot_state_estimator.estimation.jit import use_kernels

N = N_STATES


class ReadingsReference:
    """The covariance of ``[e; n_1 .. n_J]``, one 3-block per IMU reading so far."""

    def __init__(self, P: np.ndarray, Sigma_g: np.ndarray) -> None:
        self.S = P.copy()
        self.blocks: list[int] = []
        self.Sigma_g = Sigma_g

    def reading(self) -> None:
        n = self.S.shape[0]
        S = np.zeros((n + 3, n + 3))
        S[:n, :n] = self.S
        S[n:, n:] = self.Sigma_g
        self.S = S
        self.blocks.append(n)

    def propagate(self, Phi: np.ndarray, Q: np.ndarray) -> None:
        A = np.eye(self.S.shape[0])
        A[:N, :N] = Phi
        self.S = A @ self.S @ A.T
        self.S[:N, :N] += Q

    def update(self, H: np.ndarray, G: np.ndarray | None, R_own: np.ndarray) -> None:
        """``y = H dx + G [n_prev; n_held] + v`` (``dx = -e``), ``v`` of covariance ``R_own`` (R less the gyro's)."""
        n, m = self.S.shape[0], H.shape[0]
        Hz = np.zeros((m, n))
        Hz[:, :N] = -H
        if G is not None:
            if len(self.blocks) >= 2:
                Hz[:, self.blocks[-2] : self.blocks[-2] + 3] += G[:, :3]
            Hz[:, self.blocks[-1] : self.blocks[-1] + 3] += G[:, 3:]
        S = Hz @ self.S @ Hz.T + R_own
        K = -(self.S[:N, :] @ Hz.T) @ np.linalg.inv(S)  # e+ = e + K y; the noise rows not updated
        A = np.eye(n)
        A[:N, :] += K @ Hz
        KK = np.zeros((n, m))
        KK[:N] = K
        self.S = A @ self.S @ A.T + KK @ R_own @ KK.T
        self.S = 0.5 * (self.S + self.S.T)

    def cross(self) -> np.ndarray:
        out = np.zeros((N, 6))
        if len(self.blocks) >= 2:
            out[:, :3] = self.S[:N, self.blocks[-2] : self.blocks[-2] + 3]
        out[:, 3:] = self.S[:N, self.blocks[-1] : self.blocks[-1] + 3]
        return out


def own_noise(ms: list[Measurement], Sigma_g: np.ndarray) -> np.ndarray:
    """Block-diagonal R of measurements less their gyro share ``G diag(Sigma_g, Sigma_g) G^T``."""
    Snn = np.kron(np.eye(2), Sigma_g)
    sizes = [len(m.innovation) for m in ms]
    out = np.zeros((sum(sizes), sum(sizes)))
    o = 0
    for m, k in zip(ms, sizes):
        R = m.R.copy()
        if m.gyro_loading is not None:
            R -= m.gyro_loading @ Snn @ m.gyro_loading.T
        out[o : o + k, o : o + k] = R
        o += k
    return out


@pytest.mark.parametrize("kernels", [False, True])
@pytest.mark.parametrize("mount", [0, 1])
def test_covariances_equal_the_reference_that_keeps_every_reading(kernels: bool, mount: int) -> None:
    if kernels and not use_kernels():
        pytest.skip("numba missing or ROBOT_STATE_ESTIMATOR_DISABLE_JIT set")
    rng = np.random.default_rng(7)
    settings = dataclasses.replace(EkfSettings(), encoder_velocity_noise=0.3)
    ekf = BaseEkf(IMU_MOUNTS[mount], imu_noise_from_spec(None, settings), settings)
    initialize_at_random(ekf, rng)
    ekf.use_kernels = kernels
    Sg = ekf.model.Sigma_gyro_sample
    ref = ReadingsReference(ekf.P, Sg)
    t = 0
    worst_P = worst_C = largest_C = 0.0
    for k in range(1, 41):
        tk = k * 1_000_000
        ekf.set_imu(tk, rng.normal(size=3), rng.normal(size=3) * 2.0 + [0.0, 0.0, 9.81])
        ref.reading()
        times = sorted({int(s) for s in rng.integers(t + 1, tk + 1, size=int(rng.integers(0, 4)))} | {tk})
        for tj in times:
            dt = (tj - ekf.stamp_ns) * 1e-9
            if dt > 0.0:
                Phi, M = ekf.error_transition(dt)
                Q = ekf.model.process_noise(M) * dt
                assert ekf.propagate_to(tj) is None
                ref.propagate(Phi, Q)
            kind = int(rng.integers(0, 6))
            if tj != tk or kind == 0:  # the legs: 1-4 feet, zero innovations
                n_feet = int(rng.integers(1, 5))
                r = rng.normal(size=(n_feet, 3)) * 0.3
                J = rng.normal(size=(n_feet, 3, 12)) * 0.2
                ms = [
                    ekf.leg_velocity_measurement(f"f{i}", ekf.v_base_in_base.copy(), r[i], J[i]) for i in range(n_feet)
                ]
                ekf.update_leg_velocities([m.name for m in ms], np.tile(ekf.v_base_in_base, (n_feet, 1)), r, J,
                                          gate_nis=0.0)  # fmt: skip
                ref.update(np.vstack([m.H for m in ms]), np.vstack([m.gyro_loading for m in ms]), own_noise(ms, Sg))
            if kind == 1:  # zero rate
                z = ekf.zero_rate_measurement()
                z = Measurement("zero_rate", np.zeros(3), z.H, z.R, z.gyro_loading)
                ekf.update([z], gate_nis=0.0)
                ref.update(z.H, z.gyro_loading, own_noise([z], Sg))
            if kind == 2:  # two flat feet and a measurement without gyro noise, stacked
                Hr = np.zeros((3, N))
                Hr[:, BG_SL] = -ekf.R_base_imu
                a = Measurement("a", np.zeros(3), Hr, 1e-4 * np.eye(3) + Sg, HELD_RATE_LOADING)
                b = Measurement("b", np.zeros(3), Hr, 2e-4 * np.eye(3) + Sg, HELD_RATE_LOADING)
                p = Measurement("p", np.zeros(2), rng.normal(size=(2, N)), 0.1 * np.eye(2))
                ms = [a, p, b]
                ekf.update(ms, gate_nis=0.0)
                G = np.vstack([HELD_RATE_LOADING, np.zeros((2, 6)), HELD_RATE_LOADING])
                ref.update(np.vstack([m.H for m in ms]), G, own_noise(ms, Sg))
            if kind == 3:  # two flat feet through the backend's rotation update, the rate at the filter's time
                J6 = rng.normal(size=(2, 6, 12)) * 0.3
                J_ang = np.vstack([J6[0, 3:], J6[1, 3:]])
                qdot = np.linalg.lstsq(J_ang, -np.tile(ekf.omega_base_in_base_at_state, 2), rcond=None)[0]
                ms = [flat_feet.rotation_measurement(ekf, f"flat{i}", J6[i, 3:], qdot, 0.01, 0.3) for i in range(2)]
                np.testing.assert_allclose(np.concatenate([m.innovation for m in ms]), 0.0, atol=1e-12)
                flat_feet.rotation_update(ekf, ["flat0", "flat1"], np.array([0, 1]), qdot, J6, 0.01, 0.3, 0.0)
                G = np.vstack([m.gyro_loading for m in ms])
                ref.update(np.vstack([m.H for m in ms]), G, own_noise(ms, Sg))
            P_ref = ref.S[:N, :N]
            worst_P = max(worst_P, np.abs(ekf.P - P_ref).max() / np.abs(P_ref).max())
            C_ref = ref.cross()
            if float(ekf._x[X_LEAD]) <= 0.0:
                C_ref[:, :3] = 0.0  # dropped by design
            largest_C = max(largest_C, np.abs(C_ref).max())
            worst_C = max(worst_C, np.abs(ekf._gyro_cross - C_ref).max() / max(np.abs(C_ref).max(), 1e-30))
        t = tk
    assert largest_C > 0.0
    assert worst_P < 1e-11, worst_P
    assert worst_C < 1e-9, worst_C
