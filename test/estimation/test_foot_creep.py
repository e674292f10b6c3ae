"""The contact point's creep correlated over a stance (issue 16 item 3, ``ekf.foot_creep_density``): its
equivalent white noise per joint sample (``noise_model.contact_creep_variance``), checked by hand and against a
seeded simulation of the correlated error and the least-squares average of a stance's samples; on the ground plane
only (checked in the world frame at a tilted attitude); chosen at initialisation at the joint period; the same on
the compiled and the reference path."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import (
    BaseEkf,
    EkfSettings,
    EstimatorSettings,
    RobotStateEstimator,
    imu_noise_from_spec,
)
from robot_state_estimator.estimation.jit import DISABLE_ENV, use_kernels
from robot_state_estimator.estimation.noise_model import contact_creep_variance
from robot_state_estimator.tools.consistency import creep_density_of_slips

T0 = 1_700_000_000 * 1_000_000_000


def test_contact_creep_variance_by_hand() -> None:
    """2 mm per 0.3 s stance: q = 0.002 / sqrt(0.3) = 3.6515e-3 m/sqrt(s); at 1 kHz q^2 / dt = 1.3333e-2
    (m/s)^2 (0.1155 m/s per sample), at 400 Hz 5.3333e-3 (m/s)^2. Density 0 or an unknown period: 0."""
    q = creep_density_of_slips(0.002, 0.3)
    assert q == pytest.approx(3.6515e-3, rel=1e-4)
    s = EkfSettings(foot_velocity_noise=0.1, foot_creep_density=q)
    assert contact_creep_variance(s, 1e-3) == pytest.approx(1.33333e-2, rel=1e-5)
    assert contact_creep_variance(s, 2.5e-3) == pytest.approx(5.33333e-3, rel=1e-5)
    assert contact_creep_variance(s, None) == 0.0
    assert contact_creep_variance(EkfSettings(foot_velocity_noise=0.1), 1e-3) == 0.0
    with pytest.raises(ValueError, match="joint_period_s"):
        contact_creep_variance(s, 0.0)
    with pytest.raises(Exception, match="foot_creep_density"):
        EkfSettings(foot_creep_density=-1e-3)


def _smoothstep_slip_velocity(d: np.ndarray, stance_s: float, dt: float) -> np.ndarray:
    """(M, N) m/s: per stance (rows) a contact point moving by ``d`` (M,) with a smoothstep over the middle half of
    the stance (the simulator's profile), sampled at the middle of each joint period."""
    t = (np.arange(round(stance_s / dt)) + 0.5) * dt
    T = 0.5 * stance_s
    u = np.clip((t - 0.25 * stance_s) / T, 0.0, 1.0)
    profile = 6.0 * u * (1.0 - u) / T  # d/dt of 3u^2 - 2u^3
    return d[:, None] * profile[None, :]


@pytest.mark.parametrize("rate_hz", [1000.0, 400.0])
def test_equivalent_white_noise_has_the_stance_mean_of_the_correlated_slip(rate_hz: float) -> None:
    """Seeded: 20000 stances of 0.3 s, each slipping by N(0, 2 mm) over its middle half. The least-squares
    velocity of a stance (the mean of its N samples) errs by d / T_s whatever N; N white samples of the equivalent
    per-sample variance give a mean of variance sigma_c^2 / N. Both agree to the sampling error (1 % stddev at
    20000 stances; 5 % allowed) at 1 kHz and 400 Hz: the density does not depend on the rate."""
    rng = np.random.default_rng(7)
    sigma_d, stance_s, dt = 0.002, 0.3, 1.0 / rate_hz
    d = rng.normal(0.0, sigma_d, 20000)
    e = _smoothstep_slip_velocity(d, stance_s, dt)
    n = e.shape[1]
    assert e.sum(axis=1) * dt == pytest.approx(d, rel=1e-3)  # the profile moves the foot by d
    var_of_mean = float(np.var(e.mean(axis=1)))
    settings = EkfSettings(foot_creep_density=creep_density_of_slips(sigma_d, stance_s))
    assert var_of_mean == pytest.approx(contact_creep_variance(settings, dt) / n, rel=0.05)
    assert var_of_mean == pytest.approx((sigma_d / stance_s) ** 2, rel=0.05)
    # the white contact noise alone averages away as 1 / sqrt(N) (0.1 m/s: 5.8 mm/s at 1 kHz, 9.1 at 400 Hz over
    # a stance), the slip's stance mean does not (6.7 mm/s at any rate)
    assert math.sqrt(0.01 / n) == pytest.approx(0.1 / math.sqrt(stance_s * rate_hz))


def _go1(settings: EstimatorSettings) -> RobotStateEstimator:
    return RobotStateEstimator.from_description(load_description(robot_description_path("go1")), settings)


def test_creep_is_chosen_at_initialisation_at_the_joint_period() -> None:
    """A standing Go1 at 400 Hz (joint velocities in the message) with foot_creep_density 3.6515e-3 m/sqrt(s):
    the leg update's creep variance is 5.3333e-3 (m/s)^2 (by hand above), named in ``initialized``; the white
    contact noise and the user's settings are untouched and a reset chooses again."""
    q_creep = creep_density_of_slips(0.002, 0.3)
    est = _go1(EstimatorSettings(ekf=EkfSettings(foot_creep_density=q_creep)))
    q = np.tile([0.0, 0.8, -1.5], 4)
    for k in range(200):
        stamp = T0 + k * 2_500_000
        est.add_joints(JointSample(stamp, est.joint_names, q, velocity=np.zeros(12)))
        est.add_imu(ImuSample(stamp, np.zeros(3), np.array([0.0, 0.0, 9.81])))
    assert est.initialized
    init = [e for e in est.pop_events() if e.key == "initialized"]
    assert len(init) == 1 and "ekf.foot_creep_density" in init[0].message and "2.50 ms" in init[0].message
    assert "creep 0.073 m/s per sample on the ground plane" in init[0].message  # sqrt(5.3333e-3)
    assert est.ekf.contact_creep_variance == pytest.approx(5.33333e-3, rel=1e-5)
    assert est.ekf.settings.foot_velocity_noise == 0.1
    assert est.ekf.settings.encoder_velocity_noise == 0.05
    assert est.settings.ekf.foot_velocity_noise == 0.1
    est.reset("test")
    assert est.ekf.settings is est.settings.ekf
    assert est.ekf.contact_creep_variance == 0.0


def test_creep_covariance_lies_on_the_ground_plane_at_a_tilted_attitude() -> None:
    """One foot at the base origin (no gyro lever arm, no encoder term), a nearly certain state (P = 1e-12 I): the
    innovation covariance is the measurement noise. Expressed in the world frame, ``R_world_base S R_world_base^T``
    is the white part on every axis plus the creep on x and y only: ``sf^2 I + sc2 diag(1, 1, 0)`` (a foot creeps
    along level ground, never into it), at roll 0.4, pitch -0.3, yaw 1.1 rad; the compiled and the reference
    backends agree."""
    settings = EkfSettings(foot_velocity_noise=0.05)
    R_world_base = pin.rpy.rpyToMatrix(0.4, -0.3, 1.1)
    sc2 = 1.3e-2
    expected_world = 0.05**2 * np.eye(3) + sc2 * np.diag([1.0, 1.0, 0.0])
    for kernels in (True, False):
        ekf = BaseEkf(pin.SE3.Identity(), imu_noise_from_spec(None, settings), settings)
        if kernels and not ekf.use_kernels:
            continue
        ekf.use_kernels = kernels
        ekf.R_world_base = R_world_base
        ekf.P = 1e-12 * np.eye(15)
        ekf.contact_creep_variance = sc2
        (res,) = ekf.update_leg_velocities(["foot"], np.zeros((1, 3)), np.zeros((1, 3)), None, gate_nis=0.0)
        S_world = R_world_base @ res.S @ R_world_base.T
        np.testing.assert_allclose(S_world, expected_world, rtol=0, atol=1e-10)


def test_compiled_and_reference_paths_give_the_same_estimates_with_creep(monkeypatch: pytest.MonkeyPatch) -> None:
    """A noisy Go1 trot with 2 mm slips per stance, the creep on: the compiled joint step and the numpy reference
    take the same creep variance and give the same estimate at every sample (1e-9 relative); the creep changes
    the estimate's velocity covariance against a run without it."""
    pytest.importorskip("numba", reason="numba is not installed: only the reference path exists")
    simulation = pytest.importorskip("robot_state_estimator.simulation")
    robot = simulation.load_sim_robot("go1")
    sim = dict(robot="go1", gait="trot", duration_s=1.5, settle_s=0.5, ramp_s=0.3, seed=3, noise=True)
    run = simulation.simulate(simulation.SimulationSettings(**sim, stance_slip_m=0.002), robot=robot)

    def make(kernels: bool, creep: float) -> RobotStateEstimator:
        if kernels:
            monkeypatch.delenv(DISABLE_ENV, raising=False)
        else:
            monkeypatch.setenv(DISABLE_ENV, "1")
        assert use_kernels() == kernels
        settings = EstimatorSettings(ekf=EkfSettings(foot_creep_density=creep))
        est = RobotStateEstimator(robot.model, run.imu, run.feet, settings, base_link=run.base_link,
                                  foot_radii=run.foot_radii)  # fmt: skip
        monkeypatch.delenv(DISABLE_ENV, raising=False)
        return est

    q_creep = creep_density_of_slips(0.002, 0.3)
    ests = [make(True, q_creep), make(False, q_creep), make(True, 0.0)]
    names = tuple(run.joint_names)
    last = []
    n = min(len(run.imu_index), len(run.joint_index))
    for k in range(n):
        joints = JointSample(int(run.stamps_ns[run.joint_index[k]]), names, run.joint_position[k],
                             run.joint_velocity[k], run.joint_effort[k])  # fmt: skip
        imu = ImuSample(int(run.stamps_ns[run.imu_index[k]]), run.imu_omega[k], run.imu_f[k])
        out = []
        for est in ests:
            est.add_joints(joints)
            e = est.add_imu(imu)
            out.append(None if e is None else e.output_vector())
        assert (out[0] is None) == (out[1] is None), k
        if out[0] is not None:
            np.testing.assert_allclose(out[0], out[1], rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(out[1]).max())))
            last = out
    assert ests[0].initialized and ests[1].initialized
    expected = contact_creep_variance(dataclasses.replace(EkfSettings(), foot_creep_density=q_creep), 1e-3)
    for est in ests[:2]:
        assert est.ekf.contact_creep_variance == pytest.approx(expected, rel=2e-3)
    assert ests[2].ekf.contact_creep_variance == 0.0
    assert not np.allclose(last[0], last[2])
