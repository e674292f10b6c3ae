"""The hot-path formulations equal the straightforward reference formulas (to 1e-12) at random states."""

from __future__ import annotations

import copy
import dataclasses
import itertools

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, GO1_STANDING, IMU_MOUNTS, common_gyro_noise, initialize_at_random, with_cross_blocks

from robot_state_estimator.common.output_layout import OUTPUT_SIZE, OUTPUT_SLICES
from robot_state_estimator.estimation import BaseEkf, ContactForceEstimator, EkfSettings, LegKinematics, skew
from robot_state_estimator.estimation.ekf import (
    BG_SL,
    N_STATES,
    P_SL,
    TH_SL,
    V_SL,
    imu_noise_from_spec,
    quat_xyzw_from_matrix,
)
from robot_state_estimator.estimation.ekf.measurements import Measurement, UpdateResult, gated_result

MOUNTS = IMU_MOUNTS


def random_ekf(rng: np.random.Generator, X_base_imu: pin.SE3) -> BaseEkf:
    settings = dataclasses.replace(EkfSettings(), encoder_velocity_noise=0.3)
    ekf = BaseEkf(X_base_imu, imu_noise_from_spec(None, settings), settings)
    initialize_at_random(ekf, rng)
    ekf.set_imu(0, rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0, 0, 9.81])
    ekf.set_imu(1_000_000, rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0, 0, 9.81])  # alpha != 0
    return ekf


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_propagation_equals_dense_reference(mount: int) -> None:
    rng = np.random.default_rng(mount)
    for _ in range(10):
        ekf = random_ekf(rng, MOUNTS[mount])
        dt_ns = round(1e6 * (1.0 + rng.random()))
        dt = dt_ns * 1e-9
        # Reference: base motion and dense P' = Phi P Phi^T + G Q_c G^T dt, symmetrised.
        R_BS, r = ekf.R_base_imu, ekf.p_base_imu
        w = R_BS @ (ekf._gyro_imu - ekf.gyro_bias)
        f = R_BS @ (ekf._accel_imu - ekf.accel_bias) - np.cross(ekf.alpha_base_in_base, r) - np.cross(w, np.cross(w, r))
        R, v = ekf.R_world_base.copy(), ekf.v_base_in_base.copy()
        A = np.zeros((N_STATES, N_STATES))
        M = skew(v) + skew(np.cross(w, r)) + skew(w) @ skew(r)
        A[P_SL, V_SL] = R
        A[P_SL, TH_SL] = -R @ skew(v)
        A[V_SL, V_SL] = -skew(w)
        A[V_SL, TH_SL] = skew(R.T @ ekf.g_world)
        A[V_SL, 9:12] = -R_BS
        A[V_SL, BG_SL] = -M @ R_BS
        A[TH_SL, TH_SL] = -skew(w)
        A[TH_SL, BG_SL] = -R_BS
        Phi = np.eye(N_STATES) + A * dt + 0.5 * (A * dt) @ (A * dt)
        G = np.zeros((N_STATES, 12))
        G[V_SL, 0:3] = -np.eye(3)
        G[V_SL, 3:6] = -M
        G[TH_SL, 3:6] = -np.eye(3)
        G[9:15, 6:12] = np.eye(6)
        n = ekf.noise
        Qc = np.zeros((12, 12))
        Qc[0:3, 0:3] = R_BS @ np.diag(n.accel_density**2) @ R_BS.T
        Qc[3:6, 3:6] = R_BS @ np.diag(n.gyro_density**2) @ R_BS.T
        Qc[6:12, 6:12] = np.diag(np.r_[n.accel_bias_random_walk**2, n.gyro_bias_random_walk**2])
        P_ref = Phi @ ekf.P @ Phi.T + G @ Qc @ G.T * dt
        P_ref = 0.5 * (P_ref + P_ref.T)
        a_world = R @ f + ekf.g_world
        p_ref = ekf.p_world_base + R @ v * dt + 0.5 * dt * dt * a_world
        R_ref = R @ pin.exp3(w * dt)
        v_ref = R_ref.T @ (R @ v + a_world * dt)
        np.testing.assert_allclose(ekf.error_transition(dt)[0], Phi, rtol=0, atol=1e-12)
        assert ekf.propagate_to(ekf.stamp_ns + dt_ns) is None
        np.testing.assert_allclose(ekf.P, P_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ekf.p_world_base, p_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ekf.v_base_in_base, v_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ekf.R_world_base, R_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ekf.omega_base_in_base, w, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ekf.f_base_in_base, f, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_output_covariances_equal_dense_mapping(mount: int) -> None:
    rng = np.random.default_rng(10 + mount)
    ekf = random_ekf(rng, MOUNTS[mount])
    T = np.zeros((6, N_STATES))
    T[0:3, P_SL] = np.eye(3)
    T[3:6, TH_SL] = ekf.R_world_base
    np.testing.assert_allclose(ekf.pose_covariance(), T @ ekf.P @ T.T, rtol=0, atol=1e-12)
    T = np.zeros((6, N_STATES))
    T[0:3, V_SL] = np.eye(3)
    T[3:6, BG_SL] = -ekf.R_base_imu
    ref = T @ ekf.P @ T.T
    Sg = ekf.R_base_imu @ np.diag(ekf.noise.gyro_sample_stddev**2) @ ekf.R_base_imu.T
    ref[3:, 3:] += Sg
    # the held reading 1 ms ahead of the filter (random_ekf), 1 ms after the previous one: the velocity carries
    # [r]x of the previous sample's noise (f = 0), independent of the published rate's
    rs = skew(ekf.p_base_imu)
    ref[:3, :3] += rs @ Sg @ rs.T
    np.testing.assert_allclose(ekf.twist_covariance(), ref, rtol=0, atol=1e-12)
    # at the held reading's stamp (f = 1) the same sample: the cross term [r]x Sigma_g
    assert ekf.propagate_to(1_000_000) is None
    ref = T @ ekf.P @ T.T
    ref[3:, 3:] += Sg
    ref[:3, :3] += rs @ Sg @ rs.T
    ref[:3, 3:] += rs @ Sg
    ref[3:, :3] += (rs @ Sg).T
    np.testing.assert_allclose(ekf.twist_covariance(), ref, rtol=0, atol=1e-12)
    # half way (f = 1/2): half the velocity's share, half the cross term
    ekf.set_imu(2_000_000, ekf._gyro_imu + 0.1, ekf._accel_imu)
    assert ekf.propagate_to(1_500_000) is None
    ref = T @ ekf.P @ T.T
    ref[3:, 3:] += Sg
    ref[:3, :3] += 0.5 * rs @ Sg @ rs.T
    ref[:3, 3:] += 0.5 * rs @ Sg
    ref[3:, :3] += 0.5 * (rs @ Sg).T
    np.testing.assert_allclose(ekf.twist_covariance(), ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_output_vector_equals_the_output_methods(mount: int) -> None:
    rng = np.random.default_rng(15 + mount)
    ekf = random_ekf(rng, MOUNTS[mount])
    assert ekf.propagate_to(1_000_000) is None
    out = ekf.output_vector()
    assert out.shape == (OUTPUT_SIZE,) and out.dtype == np.float64
    stops = sorted((sl.start, sl.stop) for sl in OUTPUT_SLICES.values())
    assert stops[0][0] == 0 and stops[-1][1] == OUTPUT_SIZE
    assert all(a[1] == b[0] for a, b in itertools.pairwise(stops))  # contiguous, no overlap
    expected = {
        "p_world_base": ekf.p_world_base,
        "quat_world_base_xyzw": ekf.quat_world_base_xyzw(),
        "v_base_in_base": ekf.v_base_in_base,
        "omega_base_in_base": ekf.omega_base_in_base,
        "pose_covariance": ekf.pose_covariance().ravel(),
        "twist_covariance": ekf.twist_covariance().ravel(),
        "accel_bias": ekf.accel_bias,
        "gyro_bias": ekf.gyro_bias,
    }
    assert set(expected) == set(OUTPUT_SLICES)
    for name, value in expected.items():
        np.testing.assert_allclose(out[OUTPUT_SLICES[name]], value, rtol=0, atol=1e-15, err_msg=name)
    out[:] = np.nan  # a new array: the filter is untouched
    assert ekf.state_is_finite() and np.isfinite(ekf.output_vector()).all()


def test_quaternion_equals_pinocchio_on_every_branch() -> None:
    rng = np.random.default_rng(3)
    rotations = [pin.exp3(rng.normal(size=3) * 2.0) for _ in range(200)]
    rotations += [pin.rpy.rpyToMatrix(np.pi, 0, 0), pin.rpy.rpyToMatrix(0, np.pi, 0), pin.rpy.rpyToMatrix(0, 0, np.pi)]
    for R in rotations:
        ref = pin.Quaternion(R).normalized().coeffs()
        np.testing.assert_allclose(quat_xyzw_from_matrix(R.tolist()), ref, rtol=0, atol=1e-12)


def correlated_update(ekf: BaseEkf, meas: list[Measurement], points: np.ndarray, gate: float) -> list[UpdateResult]:
    """The generic reference of a k-foot update: each foot gated on its own NIS, then one measurement of the accepted
    feet whose noise has the common gyro sample's cross blocks (``common_gyro_noise``; ``random_ekf``'s held reading
    is 1 ms ahead of the filter, 1 ms after the previous one)."""
    results = []
    for m in meas:
        S = m.H @ ekf.P @ m.H.T + m.R
        results.append(gated_result(m.name, m.innovation, 0.5 * (S + S.T), gate))
    ok = [i for i, res in enumerate(results) if res.accepted]
    if ok:
        full = common_gyro_noise(ekf, points[ok], 1e-3, 1e-3)
        R = with_cross_blocks([meas[i].R for i in ok], full)
        stacked = Measurement("feet", np.concatenate([meas[i].innovation for i in ok]),
                              np.vstack([meas[i].H for i in ok]), R)  # fmt: skip
        ekf.update([stacked], gate_nis=0.0)
    return results


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
@pytest.mark.parametrize("gate", [0.0, 7.8])
@pytest.mark.parametrize("creep", [0.0, 1.3e-2])
def test_stacked_leg_update_equals_generic_update(mount: int, gate: float, creep: float) -> None:
    """The vectorised k-foot update == the generic per-measurement gate + stacked Joseph update (without and with
    the contact point's creep on the ground plane, at a random attitude)."""
    rng = np.random.default_rng(20 + mount)
    for k in (1, 2, 4):
        a = random_ekf(rng, MOUNTS[mount])
        a.contact_creep_variance = creep
        b = copy.deepcopy(a)
        r = rng.normal(size=(k, 3)) * 0.3
        J = rng.normal(size=(k, 3, 12)) * 0.2
        y = a.v_base_in_base + rng.normal(size=(k, 3)) * 0.3
        names = [f"f{i}" for i in range(k)]
        meas = [a.leg_velocity_measurement(names[i], y[i], r[i], J[i]) for i in range(k)]
        res_a = a.update_leg_velocities(names, y, r, J, gate_nis=gate)
        res_b = correlated_update(b, meas, r, gate)
        for ra, rb in zip(res_a, res_b):
            assert ra.accepted == rb.accepted and ra.name == rb.name
            assert ra.nis == pytest.approx(rb.nis, rel=1e-12, abs=1e-12)
            np.testing.assert_allclose(ra.innovation, rb.innovation, rtol=0, atol=1e-12)
            np.testing.assert_allclose(ra.S, rb.S, rtol=0, atol=1e-12)
        for name in (
            "P",
            "p_world_base",
            "v_base_in_base",
            "R_world_base",
            "accel_bias",
            "gyro_bias",
            "omega_base_in_base",
        ):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("rpy", [(0.0, 0.0, 0.0), (0.2, -0.3, 1.0)])
def test_point_foot_closed_form_equals_generic_solve(go1_model: pin.Model, rpy: tuple[float, float, float]) -> None:
    kin = LegKinematics(go1_model, GO1_FEET, base_link="base")
    fast = ContactForceEstimator(kin)
    generic = ContactForceEstimator(kin)
    generic.point_3x3 = False  # the per-foot least-norm path
    rng = np.random.default_rng(4)
    R = pin.rpy.rpyToMatrix(*rpy)
    for _ in range(20):
        q = GO1_STANDING + rng.normal(size=12) * 0.3
        tau = rng.normal(size=12) * 5.0
        kin.update(q)
        f_fast, w_fast = (x.copy() for x in fast.estimate(q, tau, R))
        f_ref, w_ref = generic.estimate(q, tau, R)
        np.testing.assert_allclose(f_fast, f_ref, rtol=0, atol=1e-12 * (1.0 + np.abs(f_ref).max()))
        np.testing.assert_allclose(w_fast, w_ref, rtol=0, atol=1e-12 * (1.0 + np.abs(w_ref).max()))


@pytest.mark.parametrize("rpy", [(0.0, 0.0, 0.0), (0.2, -0.3, 1.0)])
def test_rolling_contact_terms_equal_reference(go1_model: pin.Model, rpy: tuple[float, float, float]) -> None:
    """The stacked rolling-contact leg odometry == the per-foot reference formula; its J_c is the Jacobian of
    the contact body point (finite differences of the point carried by the foot), H_th = [w_foot]x [d]x."""
    kin = LegKinematics(go1_model, GO1_FEET, base_link="base")
    rng = np.random.default_rng(5)
    R = pin.rpy.rpyToMatrix(*rpy)
    radii_all = np.array([0.02, 0.0, 0.03, 0.015])
    for _ in range(10):
        q = GO1_STANDING + rng.normal(size=12) * 0.3
        qdot = rng.normal(size=12) * 3.0
        omega = rng.normal(size=3)
        kin.update(q)
        idx = np.array([0, 1, 3])
        v, c, Jc, H_th = kin.rolling_contact_terms(idx, qdot, omega, R, radii_all[idx])
        for row, i in enumerate(idx):
            rho = radii_all[i]
            d = -rho * R.T @ np.array([0.0, 0.0, 1.0])
            np.testing.assert_allclose(
                v[row], kin.base_velocity_from_rolling_foot(i, qdot, omega, R, rho), rtol=0, atol=1e-12
            )
            np.testing.assert_allclose(c[row], kin.p_base_foot[i] + d, rtol=0, atol=1e-15)
            w_foot = omega + kin.J6_base_foot[i, 3:] @ qdot
            np.testing.assert_allclose(H_th[row], skew(w_foot) @ skew(d), rtol=0, atol=1e-12)
            # J_c: velocity (base fixed) of the foot-body point at c_i, from a finite step of the joints.
            eps = 1e-7
            p_local = kin.R_base_foot[i].T @ (c[row] - kin.p_base_foot[i])
            kin.update(q + eps * qdot)
            c_next = kin.p_base_foot[i] + kin.R_base_foot[i] @ p_local
            kin.update(q)
            np.testing.assert_allclose(Jc[row] @ qdot, (c_next - c[row]) / eps, rtol=0, atol=2e-6)
        # rho = 0: the point-foot formula exactly
        v0, c0, _, H0 = kin.rolling_contact_terms(idx, qdot, omega, R, np.zeros(3))
        np.testing.assert_array_equal(c0, kin.p_base_foot[idx])
        np.testing.assert_allclose(
            v0, -(kin.J_base_foot[idx] @ qdot) - kin.p_base_foot[idx] @ skew(omega).T, rtol=0, atol=1e-15
        )
        assert not H0.any()


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_stacked_rolling_update_equals_generic_update(mount: int) -> None:
    """update_leg_velocities with H_attitude == the generic update of the per-foot measurements."""
    rng = np.random.default_rng(40 + mount)
    for k in (1, 3):
        a = random_ekf(rng, MOUNTS[mount])
        b = copy.deepcopy(a)
        c = rng.normal(size=(k, 3)) * 0.3
        J = rng.normal(size=(k, 3, 12)) * 0.2
        H_th = rng.normal(size=(k, 3, 3)) * 0.05
        y = a.v_base_in_base + rng.normal(size=(k, 3)) * 0.3
        names = [f"f{i}" for i in range(k)]
        meas = [a.leg_velocity_measurement(names[i], y[i], c[i], J[i], attitude_jacobian=H_th[i]) for i in range(k)]
        res_a = a.update_leg_velocities(names, y, c, J, gate_nis=0.0, H_attitude=H_th)
        res_b = correlated_update(b, meas, c, 0.0)
        for ra, rb in zip(res_a, res_b):
            assert ra.nis == pytest.approx(rb.nis, rel=1e-12, abs=1e-12)
            np.testing.assert_allclose(ra.S, rb.S, rtol=0, atol=1e-12)
        for name in ("P", "p_world_base", "v_base_in_base", "R_world_base", "gyro_bias"):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("use_kernels", [True, False])
def test_twist_covariance_after_a_leg_update_counts_the_shared_gyro_sample(use_kernels: bool) -> None:
    """After a two-foot leg update at a reading's stamp, the published twist covariance is that of the linear-Gaussian
    error worked out in closed form: with the prior error e ~ N(0, P0), the held gyro sample's noise n ~ N(0, Sigma_g)
    and the feet's white noise w, the update leaves ``e+ = (I - K H) e + K (A n + w)`` (``A`` the levers ``[c_i -
    r]x``), and the twist's error is ``T e+ + B n`` (``T``: v and -R_base_imu dbg; ``B = [[r]x; I]``: the velocity
    state carries ``[r]x n``, the published rate ``n``)."""
    rng = np.random.default_rng(31)
    ekf = random_ekf(rng, MOUNTS[-1])
    ekf.use_kernels = use_kernels
    assert ekf.propagate_to(1_000_000) is None  # at the held reading's stamp: f = 1
    P0 = ekf.P.copy()
    R_BS, r = ekf.R_base_imu, ekf.p_base_imu
    Sg = R_BS @ np.diag(ekf.noise.gyro_sample_stddev**2) @ R_BS.T
    c = rng.normal(size=(2, 3)) * 0.3
    sf = ekf.settings.foot_velocity_noise
    H = np.zeros((6, N_STATES))
    A = np.zeros((6, 3))
    for i in range(2):
        H[3 * i : 3 * i + 3, V_SL] = np.eye(3)
        H[3 * i : 3 * i + 3, BG_SL] = skew(c[i]) @ R_BS
        A[3 * i : 3 * i + 3] = skew(c[i] - r)
    W = sf**2 * np.eye(6)
    S = H @ P0 @ H.T + A @ Sg @ A.T + W
    K = P0 @ H.T @ np.linalg.inv(S)
    T = np.zeros((6, N_STATES))
    T[0:3, V_SL] = np.eye(3)
    T[3:6, BG_SL] = -R_BS
    B = np.vstack([skew(r), np.eye(3)])
    M_e, M_n, M_w = T @ (np.eye(N_STATES) - K @ H), T @ K @ A + B, T @ K
    expected = M_e @ P0 @ M_e.T + M_n @ Sg @ M_n.T + M_w @ W @ M_w.T
    ekf.update_leg_velocities(["a", "b"], ekf.v_base_in_base + rng.normal(size=(2, 3)) * 1e-3, c, gate_nis=0.0)
    np.testing.assert_allclose(ekf.twist_covariance(), expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    # a new reading: its noise is independent of the error so far (the cross terms go, [r]x Sigma_g [r]x^T stays)
    ekf.set_imu(2_000_000, ekf._gyro_imu, ekf._accel_imu)
    assert ekf.propagate_to(2_000_000) is None
    P1 = ekf.P
    expected = T @ P1 @ T.T + B @ Sg @ B.T
    np.testing.assert_allclose(ekf.twist_covariance(), expected, rtol=0, atol=1e-12 * np.abs(expected).max())
