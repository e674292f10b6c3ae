"""The compiled kernels of BaseEkf (the numba backend) compute what the numpy reference path computes (to 1e-12)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import IMU_MOUNTS, initialize_at_random

from robot_state_estimator.estimation import BaseEkf, EkfSettings, imu_noise_from_spec
from robot_state_estimator.estimation.ekf import N_STATES, Measurement
from robot_state_estimator.estimation.jit import use_kernels

pytestmark = pytest.mark.skipif(not use_kernels(), reason="numba missing or ROBOT_STATE_ESTIMATOR_DISABLE_JIT set")

MOUNTS = IMU_MOUNTS
STATE = ("p_world_base", "v_base_in_base", "R_world_base", "accel_bias", "gyro_bias", "P")
ALL = (*STATE, "omega_base_in_base", "alpha_base_in_base", "f_base_in_base", "_gyro_imu", "_accel_imu")


def pair(seed: int, mount: int, **overrides: object) -> tuple[BaseEkf, BaseEkf]:
    rng = np.random.default_rng(seed)
    settings = dataclasses.replace(EkfSettings(), encoder_velocity_noise=0.3, **overrides)
    a = BaseEkf(MOUNTS[mount], imu_noise_from_spec(None, settings), settings)
    assert a.use_kernels
    initialize_at_random(a, rng)
    gyro0, acc0 = rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0, 0, 9.81]
    gyro1, acc1 = rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0, 0, 9.81]
    b = copy.deepcopy(a)
    b.use_kernels = False
    for ekf in (a, b):
        ekf.set_imu(0, gyro0, acc0)
        ekf.set_imu(1_000_000, gyro1, acc1)
    assert_same(a, b)
    return a, b


def assert_same(a: BaseEkf, b: BaseEkf, names: tuple[str, ...] = ALL, tol: float = 1e-12) -> None:
    assert a.stamp_ns == b.stamp_ns
    for name in names:
        va, vb = getattr(a, name), getattr(b, name)
        np.testing.assert_allclose(va, vb, rtol=tol, atol=tol, err_msg=name)


def assert_same_results(ra: list, rb: list) -> None:
    assert len(ra) == len(rb)
    for x, y in zip(ra, rb):
        assert (x.name, x.accepted, x.reason) == (y.name, y.accepted, y.reason)
        assert x.nis == pytest.approx(y.nis, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(x.innovation, y.innovation, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(x.S, y.S, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
@pytest.mark.parametrize("alpha", [True, False])
def test_propagation_equals_reference(mount: int, alpha: bool) -> None:
    """250 IMU steps with irregular dt (the attitude is re-orthonormalised at step 100 and 200)."""
    a, b = pair(1 + mount, mount, use_angular_acceleration=alpha)
    rng = np.random.default_rng(11)
    stamp = 1_000_000
    for _ in range(250):
        stamp += int(rng.integers(500_000, 2_000_000))
        gyro, acc = rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0, 0, 9.81]
        for ekf in (a, b):
            ekf.set_imu(stamp, gyro, acc)
            assert ekf.propagate_to(stamp) is None
        assert_same(a, b, tol=1e-11)
    assert_same(a, b, names=("alpha_base_in_base", "omega_base_in_base", "f_base_in_base"), tol=1e-12)


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_gap_and_nonpositive_dt_equal_reference(mount: int) -> None:
    a, b = pair(3, mount, max_dt_s=0.05)
    for ekf in (a, b):
        assert ekf.propagate_to(0) == "dt_nonpositive"
        assert ekf.propagate_to(200_000_000) == "dt_too_large"
    assert_same(a, b)
    for ekf in (a, b):  # after a gap: no angular acceleration from the reading before it
        ekf.set_imu(201_000_000, np.array([0.1, 0.2, 0.3]), np.array([0.0, 0.0, 9.81]))
        assert ekf.propagate_to(201_000_000) is None
    assert_same(a, b)
    assert not a.alpha_base_in_base.any()


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
@pytest.mark.parametrize("rolling", [False, True])
@pytest.mark.parametrize("creep", [0.0, 1.3e-2])
def test_leg_update_equals_reference(mount: int, rolling: bool, creep: float) -> None:
    """1 to 4 feet, with and without the encoder term, every subset of feet gated (an outlier foot); without and
    with the contact point's creep on the ground plane (a random attitude: tilted)."""
    rng = np.random.default_rng(20 + mount + 2 * rolling)
    for k in (1, 2, 3, 4):
        for use_J in (False, True):
            for outlier in range(-1, k):
                a, b = pair(int(rng.integers(1 << 30)), mount)
                a.contact_creep_variance = b.contact_creep_variance = creep
                r = rng.normal(size=(k, 3)) * 0.3
                J = rng.normal(size=(k, 3, 12)) * 0.2 if use_J else None
                H_th = rng.normal(size=(k, 3, 3)) * 0.05 if rolling else None
                y = a.v_base_in_base + rng.normal(size=(k, 3)) * 0.05
                if outlier >= 0:
                    y[outlier] += 30.0
                names = [f"f{i}" for i in range(k)]
                ra = a.update_leg_velocities(names, y, r, J, gate_nis=16.0, H_attitude=H_th)
                rb = b.update_leg_velocities(names, y, r, J, gate_nis=16.0, H_attitude=H_th)
                assert_same_results(ra, rb)
                assert [x.accepted for x in ra] == [i != outlier for i in range(k)]
                assert_same(a, b)
                assert a.last_results == ra


def test_leg_update_inputs_in_other_layouts() -> None:
    """Flat, non-contiguous, integer and read-only inputs give the numbers of contiguous float64 ones."""
    a, b = pair(5, 1)
    rng = np.random.default_rng(5)
    r = rng.normal(size=(3, 3)) * 0.3
    y = a.v_base_in_base + rng.normal(size=(3, 3)) * 0.05
    J = rng.normal(size=(3, 3, 12))
    ra = a.update_leg_velocities(["a", "b", "c"], y.ravel(), np.asfortranarray(r), J[:, :, ::2], gate_nis=0.0)
    rb = b.update_leg_velocities(["a", "b", "c"], y, r, np.ascontiguousarray(J[:, :, ::2]), gate_nis=0.0)
    assert_same_results(ra, rb)
    assert_same(a, b)
    g = np.array([0.1, -0.2, 0.3])
    g.flags.writeable = False
    a.set_imu(2_000_000, g, [0, 0, 10])
    b.set_imu(2_000_000, g.copy(), np.array([0.0, 0.0, 10.0]))
    assert_same(a, b)


def test_no_feet() -> None:
    a, b = pair(6, 0)
    assert a.update_leg_velocities([], np.zeros((0, 3)), np.zeros((0, 3))) == []
    assert b.update_leg_velocities([], np.zeros((0, 3)), np.zeros((0, 3))) == []
    assert_same(a, b)


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_generic_and_zero_rate_updates_equal_reference(mount: int) -> None:
    rng = np.random.default_rng(30 + mount)
    a, b = pair(31 + mount, mount)
    for ekf in (a, b):
        res = ekf.update([ekf.zero_rate_measurement()], gate_nis=0.0)
    assert_same_results(a.last_results, res)
    assert_same(a, b)
    # Several measurements of different sizes, one gated.
    H1 = rng.normal(size=(2, N_STATES))
    H2 = rng.normal(size=(3, N_STATES))
    R1 = np.diag([0.1, 0.2])
    R2 = np.eye(3) * 0.05
    meas = [
        Measurement("m1", rng.normal(size=2) * 0.1, H1, R1),
        Measurement("m2", rng.normal(size=3) * 100.0, H2, R2),
        Measurement("m3", rng.normal(size=3) * 0.1, H2[::-1].copy(), R2),
    ]
    ra = a.update(meas, gate_nis=20.0)
    rb = b.update(meas, gate_nis=20.0)
    assert_same_results(ra, rb)
    assert [x.accepted for x in ra] == [True, False, True]
    assert_same(a, b)


def test_singular_innovation_covariance_falls_back_to_the_reference() -> None:
    """S = 0: the kernel refuses, the reference path reports "singular" and changes nothing."""
    a, b = pair(7, 0)
    before = copy.deepcopy(a)
    m = Measurement("zero", np.ones(3), np.zeros((3, N_STATES)), np.zeros((3, 3)))
    ra = a.update([m], gate_nis=0.0)
    rb = b.update([m], gate_nis=0.0)
    assert ra[0].reason == rb[0].reason == "singular"
    assert_same(a, before)
    assert_same(a, b)
    # A NaN innovation: that foot is not accepted (its NIS is NaN), the others are fused.
    y = a.v_base_in_base + np.array([[0.01, 0.0, 0.0], [np.nan, 0.0, 0.0], [0.0, 0.01, 0.0]])
    r = np.array([[0.2, 0.1, -0.3], [0.2, -0.1, -0.3], [-0.2, 0.1, -0.3]])
    ra = a.update_leg_velocities(["a", "b", "c"], y, r)
    rb = b.update_leg_velocities(["a", "b", "c"], y, r)
    assert [x.accepted for x in ra] == [x.accepted for x in rb] == [True, False, True]
    assert np.isnan(ra[1].nis) and np.isnan(rb[1].nis)
    assert_same(a, b)


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_outputs_equal_reference(mount: int) -> None:
    rng = np.random.default_rng(40 + mount)
    for _ in range(20):
        a, b = pair(int(rng.integers(1 << 30)), mount)
        for ekf in (a, b):
            ekf.propagate_to(2_000_000)
        np.testing.assert_allclose(a.quat_world_base_xyzw(), b.quat_world_base_xyzw(), rtol=0, atol=1e-15)
        np.testing.assert_allclose(a.pose_covariance(), b.pose_covariance(), rtol=0, atol=1e-15)
        np.testing.assert_allclose(a.twist_covariance(), b.twist_covariance(), rtol=0, atol=1e-15)
        np.testing.assert_allclose(a.output_vector(), b.output_vector(), rtol=0, atol=1e-15)
        assert np.array_equal(a.pose_covariance(), a.pose_covariance().T)
        assert a.state_is_finite() and b.state_is_finite()
    for name, index in (("P", (3, 4)), ("R_world_base", (1, 2)), ("gyro_bias", 2), ("p_world_base", 0)):
        for value in (np.nan, np.inf):
            a, b = pair(8, mount)
            for ekf in (a, b):
                getattr(ekf, name)[index] = value
            assert not a.state_is_finite() and not b.state_is_finite()


def test_quaternion_branches_equal_reference() -> None:
    a, b = pair(9, 0)
    rotations = [pin.rpy.rpyToMatrix(np.pi, 0, 0), pin.rpy.rpyToMatrix(0, np.pi, 0), pin.rpy.rpyToMatrix(0, 0, np.pi)]
    rotations += [pin.exp3(v) for v in np.random.default_rng(9).normal(size=(50, 3)) * 2.0]
    for R in rotations:
        a.R_world_base = R
        b.R_world_base = R
        np.testing.assert_allclose(a.quat_world_base_xyzw(), b.quat_world_base_xyzw(), rtol=0, atol=1e-15)


def test_state_attributes_are_live_views_that_accept_assignment() -> None:
    """What other code does with the attributes reaches the kernels; copies and pickles are independent."""
    a, b = pair(10, 1)
    for ekf in (a, b):
        ekf.p_world_base[2] = 0.42
        ekf.v_base_in_base = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]).mean(axis=0)
        ekf.R_world_base = np.asfortranarray(pin.rpy.rpyToMatrix(0.1, 0.2, 0.3))
        ekf.omega_base_in_base = np.array([0.0, 0.0, 1.0])
        ekf.gyro_bias = [0.01, 0.0, 0.0]
        ekf.propagate_to(3_000_000)
    assert_same(a, b)
    c = copy.deepcopy(a)
    d = pickle.loads(pickle.dumps(a))
    for other in (c, d):
        assert other.use_kernels
        assert_same(other, a)
        other.p_world_base[0] = 123.0
        other.propagate_to(4_000_000)
        assert a.p_world_base[0] != 123.0 and a.stamp_ns == 3_000_000
        assert other._x[0] == other.p_world_base[0]  # the views follow the copied buffer
    snapshot = a.P.copy()
    live = a.P
    a.propagate_to(4_000_000)
    assert live is a.P and not np.array_equal(live, snapshot)


def test_one_compiled_specialisation_per_kernel() -> None:
    """Every path (inputs in other layouts are normalised by the wrappers) uses the one compiled specialisation
    of each kernel for writable inputs (a read-only input array may add a second one)."""
    from numba import types

    from robot_state_estimator.estimation.ekf.backends import numba_backend

    a, _ = pair(12, 1)
    J = np.ones((1, 3, 12))
    a.update_leg_velocities(["a"], np.zeros((1, 3)), np.ones((1, 3)) * 0.2, J, H_attitude=np.eye(3)[None])
    a.update_leg_velocities(["a"], [0.0, 0.0, 0.0], np.ones((3, 1)) * 0.2, J[:, :, ::2])
    a.update([a.zero_rate_measurement()])
    a.propagate_to(10**9)
    a.output_vector()
    for fn, sig in numba_backend.SIGNATURES.items():
        writable = [s for s in fn.signatures if all(t.mutable for t in s if isinstance(t, types.Array))]
        assert writable == [sig.args], (fn, fn.signatures)


@pytest.mark.parametrize("mount", range(len(MOUNTS)))
def test_updates_between_readings_equal_reference(mount: int) -> None:
    """Joint samples at twice the IMU's rate: two leg updates per reading, the first halfway (the rate interpolated
    between two readings), so the updates meet the error's covariance with the readings' noise that the earlier ones
    left (``layout.X_GYRO_CROSS``), also through a generic update with a gyro loading (zero rate) and the outputs."""
    a, b = pair(40 + mount, mount)
    rng = np.random.default_rng(41)
    stamp = 1_000_000
    for step in range(12):
        gyro, acc = rng.normal(size=3) * 2.0, rng.normal(size=3) * 3.0 + [0, 0, 9.81]
        r = rng.normal(size=(3, 3)) * 0.3
        J = rng.normal(size=(3, 3, 12)) * 0.2
        for ekf in (a, b):
            ekf.set_imu(stamp + 1_000_000, gyro, acc)
        for t in (stamp + 500_000, stamp + 1_000_000):
            y = a.v_base_in_base + rng.normal(size=(3, 3)) * 0.05
            for ekf in (a, b):
                assert ekf.propagate_to(t) is None
            assert_same(a, b, names=(*ALL, "_gyro_cross"))
            ra = a.update_leg_velocities(["f0", "f1", "f2"], y, r, J, gate_nis=0.0)
            rb = b.update_leg_velocities(["f0", "f1", "f2"], y, r, J, gate_nis=0.0)
            assert_same_results(ra, rb)
            assert_same(a, b, names=(*ALL, "_gyro_cross"))
            np.testing.assert_allclose(a.output_vector(), b.output_vector(), rtol=1e-12, atol=1e-12)
        if step % 4 == 3:
            assert_same_results(a.update([a.zero_rate_measurement()], gate_nis=0.0),
                                b.update([b.zero_rate_measurement()], gate_nis=0.0))  # fmt: skip
            assert_same(a, b, names=(*ALL, "_gyro_cross"))
        stamp += 1_000_000
    assert np.abs(a._gyro_cross).max() > 0.0
