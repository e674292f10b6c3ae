"""BaseEkf: Jacobians against finite differences on the manifold, Joseph form, gate, NEES under its own noise model
(an implementation check; the consistency test through the simulator is test_consistency_mc.py)."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import AnalyticMotion, boxminus, boxplus, common_gyro_noise, with_cross_blocks
from scipy.stats import chi2

from robot_state_estimator.estimation import BaseEkf, EkfSettings, imu_noise_from_spec, rotation_from_gravity
from robot_state_estimator.estimation.ekf import BG_SL, N_STATES, TH_SL, V_SL
from robot_state_estimator.estimation.ekf.measurements import Measurement
from robot_state_estimator.estimation.ekf.numerics import skew

MOUNTS = {
    "aligned": pin.SE3.Identity(),
    "offset": pin.SE3(np.eye(3), np.array([0.1, -0.05, 0.03])),
    "rotated_offset": pin.SE3(pin.rpy.rpyToMatrix(0.3, -0.4, 1.2), np.array([-0.08, 0.06, 0.02])),
    "upside_down": pin.SE3(pin.rpy.rpyToMatrix(np.pi, 0.0, 0.0), np.array([0.0, 0.0, -0.05])),
}


def make_ekf(X_base_imu: pin.SE3 | None = None, **overrides) -> BaseEkf:
    X_base_imu = pin.SE3.Identity() if X_base_imu is None else X_base_imu
    settings = dataclasses.replace(EkfSettings(), **overrides)
    return BaseEkf(X_base_imu, imu_noise_from_spec(None, settings), settings)


def innovation_jacobian_fd(ekf: BaseEkf, innovation, eps: float = 1e-7) -> np.ndarray:
    """Forward-difference Jacobian on the manifold of ``-innovation(x)`` (the measurement model's H: the
    innovation y - h(x) moves by -H dx), perturbing each error state by ``eps`` with :func:`boxplus`."""
    y0 = innovation(ekf)
    H_fd = np.zeros((len(y0), N_STATES))
    for j in range(N_STATES):
        pert = copy.deepcopy(ekf)
        dx = np.zeros(N_STATES)
        dx[j] = eps
        boxplus(pert, dx)
        H_fd[:, j] = -(innovation(pert) - y0) / eps
    return H_fd


def random_state_ekf(rng: np.random.Generator, X_base_imu: pin.SE3) -> BaseEkf:
    ekf = make_ekf(X_base_imu)
    ekf.initialize(
        0,
        R_world_base=pin.exp3(rng.normal(size=3) * 0.5),
        p_world_base=rng.normal(size=3),
        v_base_in_base=rng.normal(size=3),
        accel_bias=rng.normal(size=3) * 0.1,
        gyro_bias=rng.normal(size=3) * 0.05,
    )
    ekf.set_imu(0, rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0, 0, 9.81])
    return ekf


@pytest.mark.parametrize("mount", list(MOUNTS))
def test_process_jacobian_matches_finite_differences(mount: str) -> None:
    rng = np.random.default_rng(1)
    ekf = random_state_ekf(rng, MOUNTS[mount])
    dt = 1e-3
    Phi, _ = ekf.error_transition(dt)
    nominal = copy.deepcopy(ekf)
    assert nominal.propagate_to(1_000_000) is None
    eps = 1e-6
    Phi_fd = np.zeros((N_STATES, N_STATES))
    for j in range(N_STATES):
        pert = copy.deepcopy(ekf)
        dx = np.zeros(N_STATES)
        dx[j] = eps
        boxplus(pert, dx)
        assert pert.propagate_to(1_000_000) is None
        Phi_fd[:, j] = boxminus(pert, nominal) / eps
    # Phi is the second-order expansion of the continuous dynamics; the nominal integration differs at O(dt^2).
    np.testing.assert_allclose(Phi, Phi_fd, atol=5e-5)


@pytest.mark.parametrize("mount", list(MOUNTS))
def test_leg_measurement_jacobian_matches_finite_differences(mount: str) -> None:
    """The innovation y(x) - v_B(x), with y using the state's gyro bias, moves by -H dx."""
    rng = np.random.default_rng(2)
    ekf = random_state_ekf(rng, MOUNTS[mount])
    r_foot = np.array([0.19, -0.13, -0.28])
    Jqdot = rng.normal(size=3)

    def innovation(e: BaseEkf) -> np.ndarray:
        omega_base, _ = e.base_motion()
        y = -Jqdot - np.cross(omega_base, r_foot)
        return e.leg_velocity_measurement("foot", y, r_foot).innovation

    H = ekf.leg_velocity_measurement("foot", np.zeros(3), r_foot).H
    np.testing.assert_allclose(H, innovation_jacobian_fd(ekf, innovation), atol=1e-6)


def test_zero_rate_jacobian_matches_finite_differences() -> None:
    rng = np.random.default_rng(3)
    ekf = random_state_ekf(rng, MOUNTS["rotated_offset"])
    m0 = ekf.zero_rate_measurement()
    H_fd = innovation_jacobian_fd(ekf, lambda e: e.zero_rate_measurement().innovation)
    np.testing.assert_allclose(H_fd, m0.H, atol=1e-6)


def test_joseph_update_keeps_covariance_spd_and_symmetric() -> None:
    rng = np.random.default_rng(4)
    ekf = random_state_ekf(rng, MOUNTS["rotated_offset"])
    r = np.array([[0.2, 0.1, -0.3], [0.2, -0.1, -0.3], [-0.2, 0.1, -0.3], [-0.2, -0.1, -0.3]])
    for k in range(500):
        assert (
            ekf.propagate(k * 1_000_000 + 1_000_000, rng.normal(size=3), rng.normal(size=3) + np.array([0, 0, 9.81]))
            is None
        )
        ekf.update_leg_velocities(list("abcd"), ekf.v_base_in_base + rng.normal(size=(4, 3)) * 0.01, r, gate_nis=0.0)
        assert np.array_equal(ekf.P, ekf.P.T)
        assert np.linalg.eigvalsh(ekf.P).min() > 0.0
        for C in (ekf.pose_covariance(), ekf.twist_covariance()):
            assert np.array_equal(C, C.T)
            assert np.linalg.eigvalsh(C).min() > 0.0


def test_stacked_update_has_the_common_gyro_samples_correlation() -> None:
    """Three feet in one update == one generic update whose noise holds, between feet, the one gyro sample they all
    see (worked out from the IMU's stated noise: ``common_gyro_noise``). The same feet one after the other, each
    update knowing what the earlier ones took from that sample (the error's covariance with it, the gyro loading of
    each measurement): never more confident than the stacked update (the readings' noise is considered, not
    estimated: a Schmidt filter, conservative by construction) and within 0.1 % of it; taking each foot's sample as
    independent (what the filter did before) is over-confident in some direction."""
    rng = np.random.default_rng(5)
    a = random_state_ekf(rng, MOUNTS["rotated_offset"])
    a.P = a.initial_covariance(a.R_world_base)
    a.set_imu(1_000_000, rng.normal(size=3), [0.0, 0.0, 9.81])  # alpha on: the velocity carries the gyro's noise
    assert a.propagate_to(1_000_000) is None
    b, c, d = copy.deepcopy(a), copy.deepcopy(a), copy.deepcopy(a)
    r = rng.normal(size=(3, 3)) * 0.2
    y = a.v_base_in_base + rng.normal(size=(3, 3)) * 0.05
    a.update_leg_velocities(["f0", "f1", "f2"], y, r, gate_nis=0.0)
    meas = [b.leg_velocity_measurement(f"f{i}", y[i], r[i]) for i in range(3)]
    R = with_cross_blocks([m.R for m in meas], common_gyro_noise(b, r, 0.0, 1e-3))
    b.update([Measurement("feet", np.concatenate([m.innovation for m in meas]), np.vstack([m.H for m in meas]), R)],
             gate_nis=0.0)  # fmt: skip
    np.testing.assert_allclose(a.v_base_in_base, b.v_base_in_base, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.P, b.P, rtol=0, atol=1e-12)
    for i in range(3):
        c.update([c.leg_velocity_measurement(f"f{i}", y[i], r[i])], gate_nis=0.0)
        d._gyro_cross[:] = 0.0  # the sample taken as new at each foot
        d.update([d.leg_velocity_measurement(f"f{i}", y[i], r[i])], gate_nis=0.0)
    # -1e-9: the attitude injected and reset between the sequential updates (second order; -2.8e-11 here, -7e-21
    # with the attitude uncorrelated); taking the samples as independent: -2.2e-5
    assert np.linalg.eigvalsh(c.P - a.P).min() > -1e-9
    assert (np.diag(c.P - a.P) / np.diag(a.P)).max() < 1e-3
    assert np.linalg.eigvalsh(d.P - a.P).min() < -1e-5


def test_leg_noise_lever_is_the_contact_point_less_the_imu_lever() -> None:
    """One foot's gyro term: ``[c - r]x Sigma_g [c - r]x^T`` at a reading's stamp with the angular acceleration on
    (the velocity state carries ``[r]x n``), ``[c]x Sigma_g [c]x^T`` without it."""
    rng = np.random.default_rng(8)
    for use_alpha in (True, False):
        ekf = random_state_ekf(rng, MOUNTS["rotated_offset"])
        ekf.settings = dataclasses.replace(ekf.settings, use_angular_acceleration=use_alpha)
        ekf.set_imu(1_000_000, rng.normal(size=3), [0.0, 0.0, 9.81])
        assert ekf.propagate_to(1_000_000) is None
        c = rng.normal(size=3) * 0.3
        m = ekf.leg_velocity_measurement("f", ekf.v_base_in_base, c, foot_velocity_noise=0.0,
                                         encoder_velocity_noise=0.0)  # fmt: skip
        lever = skew(c - ekf.p_base_imu) if use_alpha else skew(c)
        Sg = ekf.R_base_imu @ np.diag(ekf.noise.gyro_sample_stddev**2) @ ekf.R_base_imu.T
        np.testing.assert_allclose(m.R, lever @ Sg @ lever.T, rtol=0, atol=1e-15)


def test_gate_rejects_an_outlier_foot() -> None:
    ekf = make_ekf()
    ekf.initialize(0, R_world_base=np.eye(3), p_world_base=np.zeros(3))
    for k in range(1, 200):
        ekf.propagate(k * 1_000_000, np.zeros(3), np.array([0, 0, 9.81]))
        ekf.update_leg_velocities(list("abcd"), np.zeros((4, 3)), np.full((4, 3), 0.2))
    slip = np.zeros((4, 3))
    slip[2] = [0.6, 0.0, 0.0]  # foot c slides at 0.6 m/s
    res = ekf.update_leg_velocities(list("abcd"), slip, np.full((4, 3), 0.2))
    assert [r.accepted for r in res] == [True, True, False, True]
    assert res[2].reason == "gated" and res[2].nis > ekf.settings.foot_gate_nis
    assert np.linalg.norm(ekf.v_base_in_base) < 1e-3
    assert res[0].S.shape == (3, 3) and res[0].innovation.shape == (3,)


def test_initialisation_from_gravity_and_rotation_from_gravity() -> None:
    R_true = pin.rpy.rpyToMatrix(0.2, -0.3, 0.0)
    f_base = R_true.T @ np.array([0, 0, 9.81])
    np.testing.assert_allclose(rotation_from_gravity(f_base), R_true, atol=1e-12)
    X = MOUNTS["rotated_offset"]
    ekf = make_ekf(X)
    bias = np.array([0.01, -0.02, 0.003])
    ekf.initialize_static(0, accel_imu_mean=X.rotation.T @ f_base, gyro_imu_mean=bias, p_world_base=np.zeros(3))
    np.testing.assert_allclose(ekf.R_world_base, R_true, atol=1e-12)
    np.testing.assert_allclose(ekf.gyro_bias, bias)
    assert np.linalg.eigvalsh(ekf.P).min() > 0.0


@pytest.mark.parametrize("mount", ["aligned", "rotated_offset", "upside_down"])
def test_static_initialisation_correlates_tilt_with_the_accelerometer_bias(mount: str) -> None:
    """A reading levelled with an unknown accelerometer bias b tilts the estimate by exactly what b leans the
    reading: the tilt error found by geometry (the true attitude against the initialised one, for several biases)
    equals the linear predictor of the initial covariance, ``P_theta,b P_b,b^-1 b``, to first order in b / g."""
    X = MOUNTS[mount]
    ekf = make_ekf(X, initial_accel_bias_std=0.2)
    R_true = rotation_from_gravity(pin.rpy.rpyToMatrix(0.1, -0.05, 0.0).T @ np.array([0.0, 0.0, 9.81]))
    for b in (np.array([0.15, -0.25, 0.1]), np.array([0.0, 0.05, 0.0]), np.array([0.05, 0.0, -0.3])):
        f_imu = X.rotation.T @ (R_true.T @ np.array([0.0, 0.0, 9.81])) + b
        ekf.initialize_static(0, accel_imu_mean=f_imu, gyro_imu_mean=np.zeros(3), p_world_base=np.zeros(3))
        dtheta = pin.log3(ekf.R_world_base.T @ R_true)  # R_true = R_hat Exp(dtheta)
        P = ekf.P
        predicted = P[6:9, 9:12] @ np.linalg.solve(P[9:12, 9:12], b)
        u = ekf.R_world_base.T @ np.array([0.0, 0.0, 1.0])
        tilt = dtheta - u * (u @ dtheta)  # the part about the vertical is yaw, which the reading does not set
        np.testing.assert_allclose(predicted - u * (u @ predicted), tilt, atol=3e-3 * np.linalg.norm(tilt) + 1e-6)
        assert np.linalg.eigvalsh(P).min() > 0.0
        # the tilt's marginal stddev covers the bias's share, b / g
        assert np.sqrt(np.linalg.eigvalsh(P[6:9, 6:9]).max()) >= 0.2 / 9.81


@pytest.mark.parametrize("zaru", [False, True])
def test_static_robot_converges_roll_pitch_and_learns_gyro_bias(zaru: bool) -> None:
    """Start 3 deg off in roll and pitch with zero gyro bias; the static legs pin v = 0 and gravity fixes the tilt."""
    rng = np.random.default_rng(6)
    ekf = make_ekf(
        MOUNTS["rotated_offset"], initial_roll_pitch_std=0.1, initial_gyro_bias_std=0.02, static_bias_lock=zaru
    )
    X = MOUNTS["rotated_offset"]
    R_true = pin.rpy.rpyToMatrix(0.1, -0.05, 0.0)
    bias_true = np.array([0.004, -0.006, 0.003])
    motion = AnalyticMotion(rpy0=np.array([0.1, -0.05, 0.0]))
    ekf.initialize(0, R_world_base=pin.rpy.rpyToMatrix(0.15, -0.1, 0.0), p_world_base=np.zeros(3))
    sigma_g, sigma_a = 2e-4, 2e-3
    r = np.array([[0.2, 0.1, -0.3], [0.2, -0.1, -0.3], [-0.2, 0.1, -0.3], [-0.2, -0.1, -0.3]])
    for k in range(1, 4001):
        gyro, acc = motion.imu(0.0, X)
        gyro = gyro + bias_true + rng.normal(size=3) * sigma_g
        acc = acc + rng.normal(size=3) * sigma_a
        assert ekf.propagate(k * 1_000_000, gyro, acc) is None
        if k % 2 == 0:
            omega_base, _ = ekf.base_motion()
            y = -np.cross(omega_base, r)
            ekf.update_leg_velocities(list("abcd"), y, r)
            if zaru:
                ekf.update([ekf.zero_rate_measurement()], gate_nis=0.0)
    rpy_err = pin.log3(R_true.T @ ekf.R_world_base)
    assert np.abs(rpy_err[:2]).max() < np.deg2rad(0.1)
    assert np.linalg.norm(ekf.v_base_in_base) < 1e-3
    # Gravity makes the bias observable on the axes orthogonal to it; ZARU on all three.
    bias_base_true = X.rotation @ bias_true
    bias_base_est = X.rotation @ ekf.gyro_bias
    g_dir = R_true.T @ np.array([0, 0, 1.0])
    horiz_err = (bias_base_est - bias_base_true) - g_dir * (g_dir @ (bias_base_est - bias_base_true))
    assert np.linalg.norm(horiz_err) < 5e-4
    if zaru:
        np.testing.assert_allclose(ekf.gyro_bias, bias_true, atol=5e-4)


def test_rotated_and_offset_imu_gives_the_same_estimate() -> None:
    """Exact readings of a moving base from an aligned and from a rotated, offset IMU: same base estimate."""
    motion = AnalyticMotion(
        amp_p=np.array([0.3, 0.2, 0.05]),
        w_p=np.array([2.0, 3.0, 5.0]),
        amp_rpy=np.array([0.2, 0.15, 0.8]),
        w_rpy=np.array([4.0, 3.0, 1.5]),
    )
    results = []
    for mount in ("aligned", "rotated_offset", "upside_down"):
        X = MOUNTS[mount]
        ekf = make_ekf(X)
        ekf.initialize(0, R_world_base=motion.R(0.0), p_world_base=motion.p(0.0), v_base_in_base=motion.v_base(0.0))
        gyro, acc = motion.imu(0.0, X)
        ekf.set_imu(0, gyro, acc)
        for k in range(1, 2001):
            t = k * 1e-3
            gyro, acc = motion.imu(t, X)
            assert ekf.propagate(k * 1_000_000, gyro, acc) is None
            if k % 2 == 0:
                ekf.update_leg_velocities(["a"], motion.v_base(t)[None, :], np.array([[0.2, 0.1, -0.3]]))
        results.append(ekf)
        np.testing.assert_allclose(ekf.v_base_in_base, motion.v_base(2.0), atol=0.01)
        assert np.linalg.norm(pin.log3(motion.R(2.0).T @ ekf.R_world_base)) < 2e-3
    ref = results[0]
    for other in results[1:]:
        np.testing.assert_allclose(other.v_base_in_base, ref.v_base_in_base, atol=2e-3)
        np.testing.assert_allclose(other.p_world_base, ref.p_world_base, atol=2e-3)
        assert np.linalg.norm(pin.log3(ref.R_world_base.T @ other.R_world_base)) < 1e-3


def test_dt_guards() -> None:
    ekf = make_ekf(max_dt_s=0.05)
    ekf.initialize(1_000_000_000, R_world_base=np.eye(3), p_world_base=np.zeros(3))
    P0 = ekf.P.copy()
    assert ekf.propagate(1_000_000_000, np.zeros(3), np.array([0, 0, 9.81])) == "dt_nonpositive"
    assert ekf.propagate(999_000_000, np.zeros(3), np.array([0, 0, 9.81])) == "dt_nonpositive"
    np.testing.assert_array_equal(ekf.P, P0)
    assert ekf.propagate(2_000_000_000, np.zeros(3), np.array([0, 0, 9.81])) == "dt_too_large"
    assert ekf.stamp_ns == 2_000_000_000  # re-anchored
    assert np.trace(ekf.P) > np.trace(P0)
    np.testing.assert_array_equal(ekf.v_base_in_base, np.zeros(3))
    assert ekf.propagate(2_001_000_000, np.zeros(3), np.array([0, 0, 9.81])) is None


@pytest.mark.parametrize("compiled", [False, True])
def test_gap_carries_the_position_and_grows_the_covariance_as_the_motion_does(compiled: bool) -> None:
    """A 0.2 s IMU gap (over max_dt_s) of a base at 1 m/s heading 90 deg: the position moves by R v T = (0, 0.2, 0) m,
    and the covariance becomes that of the true pose's deviation, drawn (200,000 seeded samples, no filter model):
    the initial errors (position, base-frame velocity, attitude about the body axes, right perturbation) plus an
    unknown constant acceleration a (gap_accel_std 3 m/s^2, base frame) and rate w (gap_rate_std 0.5 rad/s) over the
    gap, propagated by the exact kinematics: p' = p + R Exp(dtheta) ((v + dv) T + a T^2 / 2), v' = v + dv + a T,
    R' = R Exp(dtheta) Exp(w T). The IMU's white noise and bias walks are set negligible."""
    quiet = {"accel_noise_density": 1e-9, "gyro_noise_density": 1e-9, "accel_noise_floor": 0.0}
    quiet |= {"gyro_noise_floor": 0.0, "accel_bias_random_walk": 0.0, "gyro_bias_random_walk": 0.0}
    ekf = make_ekf(max_dt_s=0.05, **quiet)
    ekf.use_kernels = compiled
    R = pin.rpy.rpyToMatrix(0.0, 0.0, np.pi / 2)
    v = np.array([1.0, 0.0, 0.0])
    ekf.initialize(1_000_000_000, R_world_base=R, p_world_base=np.zeros(3), v_base_in_base=v)
    rng = np.random.default_rng(7)
    A = rng.normal(size=(15, 15)) * 0.2
    sd = np.repeat([0.01, 0.02, 0.01, 1e-3, 1e-3], 3)  # m, m/s, rad, m/s^2, rad/s
    P0 = (A @ A.T + np.eye(15)) * np.outer(sd, sd)  # correlated
    ekf.P = P0
    T = 0.2
    assert ekf.propagate(1_000_000_000 + round(T * 1e9), np.zeros(3), np.array([0, 0, 9.81])) == "dt_too_large"
    np.testing.assert_allclose(ekf.p_world_base, [0.0, T, 0.0], atol=1e-12)
    np.testing.assert_allclose(ekf.R_world_base, R, atol=1e-12)
    np.testing.assert_allclose(ekf.v_base_in_base, v, atol=1e-12)
    n = 200_000
    dx = rng.multivariate_normal(np.zeros(15), P0, size=n)
    a = rng.normal(0.0, 3.0, (n, 3))
    w = rng.normal(0.0, 0.5, (n, 3))
    dth = dx[:, 6:9]
    R_true = np.array([R @ pin.exp3(t) for t in dth])
    p_true = dx[:, :3] + np.einsum("nij,nj->ni", R_true, (v + dx[:, 3:6]) * T + a * T**2 / 2)
    v_true = v + dx[:, 3:6] + a * T
    th_true = np.array([pin.log3(R.T @ Rt @ pin.exp3(wi * T)) for Rt, wi in zip(R_true, w)])
    err = np.hstack([p_true - ekf.p_world_base, v_true - v, th_true, dx[:, 9:]])
    P_mc = np.cov(err.T)
    scale = np.sqrt(np.outer(np.diag(P_mc), np.diag(P_mc)))
    worst = np.max(np.abs(ekf.P - P_mc) / scale)
    print(
        f"\nposition stddev {np.sqrt(np.diag(P_mc)[:3])} m (before the gap {np.sqrt(np.diag(P0)[:3])}); worst {worst}"
    )
    assert worst < 0.02  # correlation-scaled: the sampling error is about 1 / sqrt(n), 0.2 %
    # a gap that kept the covariance's position rows (the nominal state not carried) would publish the stddev from
    # before the gap, about 1.2 cm, where the pose's deviation is 5-6 cm along the direction of travel
    assert np.sqrt(P_mc[1, 1]) > 3 * np.sqrt(P0[1, 1])


def test_covariance_frame_mapping_round_trip() -> None:
    """Right perturbation -> world small angles: R Exp(dtheta) = Exp(R dtheta) R, so cov_W = R P R^T."""
    rng = np.random.default_rng(7)
    ekf = random_state_ekf(rng, MOUNTS["rotated_offset"])
    R = ekf.R_world_base
    for _ in range(5):
        dtheta = rng.normal(size=3) * 0.1
        np.testing.assert_allclose(R @ pin.exp3(dtheta), pin.exp3(R @ dtheta) @ R, atol=1e-12)
    C = ekf.pose_covariance()
    np.testing.assert_allclose(C[3:, 3:], R @ ekf.P[TH_SL, TH_SL] @ R.T, atol=1e-15)
    np.testing.assert_allclose(C[:3, :3], ekf.P[0:3, 0:3])
    T = ekf.twist_covariance()
    np.testing.assert_allclose(T[:3, :3], ekf.P[V_SL, V_SL])
    R_BS = MOUNTS["rotated_offset"].rotation
    np.testing.assert_allclose(T[3:, 3:] - ekf._Sigma_g_sample, R_BS @ ekf.P[BG_SL, BG_SL] @ R_BS.T, atol=1e-15)


def test_imu_base_transport_round_trip() -> None:
    """Readings generated at a rotated, offset IMU and mapped back to the base give the base's motion."""
    motion = AnalyticMotion(
        amp_rpy=np.array([0.3, 0.2, 0.5]), w_rpy=np.array([3.0, 2.0, 1.0]), amp_p=np.array([0.2, 0, 0])
    )
    X = MOUNTS["rotated_offset"]
    ekf = make_ekf(X, use_angular_acceleration=True)
    ekf.initialize(0, R_world_base=np.eye(3), p_world_base=np.zeros(3))
    t, h = 0.7, 1e-4
    g0, a0 = motion.imu(t - h, X)
    ekf.set_imu(int((t - h) * 1e9), g0, a0)
    g1, a1 = motion.imu(t, X)
    ekf.set_imu(int(t * 1e9), g1, a1)
    omega_base, f_base = ekf.base_motion()
    np.testing.assert_allclose(omega_base, motion.omega_base(t), atol=1e-12)
    f_true = motion.R(t).T @ (motion.a_world(t) - np.array([0, 0, -9.81]))
    np.testing.assert_allclose(f_base, f_true, atol=1e-3)  # alpha from a backward difference over h


def _nees_runs(n_runs: int, n_steps: int, dt_ns: int) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo: truth = a base moving analytically, IMU with white noise and constant random biases,
    leg velocity measurements with the filter's noise; returns NEES of velocity+attitude (6 DoF) per run and
    step, and of the full 9-DoF velocity/attitude/gyro-bias subset."""
    settings = dataclasses.replace(
        EkfSettings(),
        accel_noise_density=0.02,
        gyro_noise_density=0.002,
        foot_velocity_noise=0.05,
        encoder_velocity_noise=0.0,
        initial_velocity_std=0.05,
        initial_roll_pitch_std=0.02,
        initial_yaw_std=0.02,
        initial_gyro_bias_std=0.005,
        initial_accel_bias_std=0.05,
        accel_bias_random_walk=1e-4,
        gyro_bias_random_walk=1e-5,
    )
    X = MOUNTS["rotated_offset"]
    noise = imu_noise_from_spec(None, settings)
    dt = dt_ns * 1e-9
    motion = AnalyticMotion(
        amp_p=np.array([0.2, 0.1, 0.02]),
        w_p=np.array([2.0, 3.0, 6.0]),
        amp_rpy=np.array([0.1, 0.1, 0.4]),
        w_rpy=np.array([5.0, 4.0, 1.0]),
    )
    r = np.array([[0.2, 0.1, -0.3], [-0.2, -0.1, -0.3]])
    out = np.zeros((n_runs, n_steps))
    for run in range(n_runs):
        rng = np.random.default_rng(100 + run)
        ekf = BaseEkf(X, noise, settings)
        P0 = ekf.initial_covariance(motion.R(0.0))
        x0 = rng.multivariate_normal(np.zeros(N_STATES), P0)
        ekf.initialize(
            0, R_world_base=motion.R(0.0), p_world_base=motion.p(0.0), v_base_in_base=motion.v_base(0.0), P=P0
        )
        boxplus(ekf, x0)  # estimate = truth (+) error drawn from P0; the true biases are 0
        ba = bg = np.zeros(3)
        for k in range(1, n_steps + 1):
            t = k * dt
            gyro, acc = motion.imu(t, X)
            gyro = gyro + bg + rng.normal(size=3) * noise.gyro_density / np.sqrt(dt)
            acc = acc + ba + rng.normal(size=3) * noise.accel_density / np.sqrt(dt)
            ekf.propagate(k * dt_ns, gyro, acc)
            omega_true = motion.omega_base(t)
            omega_hat, _ = ekf.base_motion()
            v_true = motion.v_base(t)
            # y = -(J qdot) - omega_hat x r with J qdot = -v - omega x r (foot still) + noise
            y = v_true + np.cross(omega_true - omega_hat, r) + rng.normal(size=(2, 3)) * settings.foot_velocity_noise
            ekf.update_leg_velocities(["a", "b"], y, r, gate_nis=0.0)
            e = np.concatenate([v_true - ekf.v_base_in_base, pin.log3(ekf.R_world_base.T @ motion.R(t))])
            idx = np.r_[3:9]
            out[run, k - 1] = e @ np.linalg.solve(ekf.P[np.ix_(idx, idx)], e)
    return out


def test_implementation_matches_its_own_noise_model_nees() -> None:
    """An implementation check, not a consistency test of the product: the data come from the filter's own
    model (white IMU noise of the densities it assumes, leg velocities with exactly its measurement noise), so a
    correct propagation and update must give NEES inside the band by construction; a wrong Jacobian, discretisation
    or Joseph form would not. Whether the filter's noise says what a robot does is measured through the simulator,
    never through this model: ``test/estimation/test_consistency_mc.py`` and ``tools/consistency.py``."""
    n_runs, n_steps = 24, 160
    nees = _nees_runs(n_runs, n_steps, dt_ns=5_000_000)
    avg = nees.mean(axis=0)  # average over runs, per step
    lo, hi = chi2.ppf([0.025, 0.975], 6 * n_runs) / n_runs
    inside = np.mean((avg >= lo) & (avg <= hi))
    assert inside > 0.85, f"only {inside:.0%} of the steps inside [{lo:.2f}, {hi:.2f}]; mean {avg.mean():.2f}"
    lo_all, hi_all = chi2.ppf([0.025, 0.975], 6 * n_runs * n_steps) / (n_runs * n_steps)
    # Time-averaged NEES: 6 expected; allow the band of the (correlated) per-step average.
    assert lo <= avg.mean() <= hi, (avg.mean(), lo_all, hi_all)


@pytest.mark.parametrize("mount", list(MOUNTS))
def test_rolling_foot_measurement_jacobian_matches_finite_differences(mount: str) -> None:
    """Rolling sphere: y(x) = -(J_lin qdot + (J_ang qdot) x d(R)) - omega(b_g) x (r + d(R)), d = -rho R^T e_z;
    the innovation y(x) - v_B(x) moves by -H dx, H with the attitude block [omega_foot]x [d]x."""
    from robot_state_estimator.estimation.kinematics import skew

    rng = np.random.default_rng(12)
    ekf = random_state_ekf(rng, MOUNTS[mount])
    r_foot = np.array([0.19, -0.13, -0.28])
    v_rel, w_rel = rng.normal(size=3), rng.normal(size=3) * 3.0
    rho = 0.02

    def measured(e: BaseEkf) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        omega_base, _ = e.base_motion()
        d = -rho * e.R_world_base.T @ np.array([0.0, 0.0, 1.0])
        y = -(v_rel + np.cross(w_rel, d)) - np.cross(omega_base, r_foot + d)
        return y, r_foot + d, skew(omega_base + w_rel) @ skew(d)

    def innovation(e: BaseEkf) -> np.ndarray:
        y, c, H_th = measured(e)
        return e.leg_velocity_measurement("foot", y, c, attitude_jacobian=H_th).innovation

    _, c0, H_th0 = measured(ekf)
    H = ekf.leg_velocity_measurement("foot", np.zeros(3), c0, attitude_jacobian=H_th0).H
    assert np.abs(H[:, TH_SL]).max() > 1e-3  # the attitude block is there
    np.testing.assert_allclose(H, innovation_jacobian_fd(ekf, innovation), atol=1e-6)


def test_gyro_noise_shares_by_hand() -> None:
    """f = 1 - lead / dt_gyro: the rate at the filter's time is (1 - f) n_prev + f n_held, of variance (1 - f)^2 + f^2;
    without the angular acceleration the legs use the held rate and the velocity carries none of it."""
    from robot_state_estimator.estimation.ekf.model import gyro_noise_shares

    assert gyro_noise_shares(0.0, 1e-3) == (1.0, 1.0, 1.0)
    assert gyro_noise_shares(0.25e-3, 1e-3) == pytest.approx((1.0, 0.25**2 + 0.75**2, 0.75))
    assert gyro_noise_shares(0.5e-3, 1e-3) == pytest.approx((1.0, 0.5, 0.5))
    assert gyro_noise_shares(3e-3, 1e-3) == (1.0, 1.0, 0.0)  # a gap: the previous sample's alone
    assert gyro_noise_shares(0.5e-3, 0.0) == (0.0, 1.0, 1.0)


def test_leg_rate_is_interpolated_to_the_filter_time() -> None:
    """A joint sample a quarter of the way between two readings sees the bias-corrected rate interpolated there, the
    rate whose lever-arm term the velocity has integrated (``R_base_imu (gyro - b_g)`` of each reading)."""
    rng = np.random.default_rng(12)
    ekf = random_state_ekf(rng, MOUNTS["rotated_offset"])
    g0 = ekf._gyro_imu.copy()
    g1 = g0 + rng.normal(size=3)
    ekf.set_imu(4_000_000, g1, [0.0, 0.0, 9.81])
    assert ekf.propagate_to(1_000_000) is None
    w0, w1 = (ekf.R_base_imu @ (g - ekf.gyro_bias) for g in (g0, g1))
    np.testing.assert_allclose(ekf.omega_base_in_base_at_state, 0.75 * w0 + 0.25 * w1, rtol=0, atol=1e-12)
    assert ekf.propagate_to(4_000_000) is None
    np.testing.assert_allclose(ekf.omega_base_in_base_at_state, w1, rtol=0, atol=1e-15)


def test_the_rate_at_the_filters_time_right_after_a_newer_reading_is_the_previous_readings() -> None:
    """A joint sample at the filter's time applied after the next reading is held (its stamp not after the filter's):
    the interpolation's share of the new reading is 0, so the rate is the previous reading's, ``R_base_imu (gyro_k -
    b_g)``. (It was ``2 omega_k - omega_(k+1)``: the stored rate, not yet the new reading's, less the whole step.)"""
    rng = np.random.default_rng(8)
    ekf = random_state_ekf(rng, MOUNTS["rotated_offset"])
    gyro_k, gyro_next = rng.normal(size=3), rng.normal(size=3)
    ekf.set_imu(1_000_000, gyro_k, [0.0, 0.0, 9.81])
    assert ekf.propagate_to(1_000_000) is None
    ekf.set_imu(2_000_000, gyro_next, [0.0, 0.0, 9.81])
    assert ekf.gyro_noise_shares()[2] == 0.0
    np.testing.assert_allclose(ekf.omega_base_in_base_at_state, ekf.R_base_imu @ (gyro_k - ekf.gyro_bias), atol=1e-14)
    z = ekf.zero_rate_measurement()
    np.testing.assert_allclose(z.innovation, -ekf.R_base_imu @ (gyro_k - ekf.gyro_bias), atol=1e-14)
    np.testing.assert_array_equal(z.gyro_loading, np.hstack([-np.eye(3), np.zeros((3, 3))]))
