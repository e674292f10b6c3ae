"""Flat feet: one detected frame per rigid body, and the orientation half of the 6-D stance update
(``estimation/flat_feet.py``): kernel equal to the numpy reference, H against finite differences on the manifold,
and the physics: a held foot orientation fixes the yaw-rate bias, so yaw stops drifting in stance."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from biped_urdf import biped_urdf
from est_helpers import IMU_MOUNTS, boxplus, feed_run, initialize_at_random

from robot_state_estimator.common.robots import example_robot_urdf
from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import BaseEkf, EkfSettings, EstimatorSettings, RobotStateEstimator
from robot_state_estimator.estimation.ekf import imu_noise_from_spec
from robot_state_estimator.estimation.ekf.backends import NUMPY_BACKEND
from robot_state_estimator.estimation.flat_feet import (
    flat_feet_mask,
    rotation_measurement,
    rotation_update,
)
from robot_state_estimator.estimation.jit import use_kernels


@pytest.fixture(scope="module")
def biped():
    return load_description(biped_urdf(imu_rpy="0.1 -0.2 0.3", imu_xyz="0.05 -0.02 0.1"))


def test_detection_keeps_the_sole_of_each_rigid_body(biped) -> None:
    """``l_foot`` and ``l_sole`` are one body (a fixed joint): the sole, 5 cm lower, is kept, the other named."""
    choice = biped.foot_frame_choice()
    assert choice.frames == ("l_sole", "r_sole") == biped.foot_frames()
    assert choice.dropped == {"l_sole": ("l_foot",), "r_sole": ("r_foot",)}
    est = RobotStateEstimator.from_description(biped)
    events = [e for e in est.pop_events() if e.key == "foot_frames_merged"]
    assert len(events) == 1 and events[0].level == "info"
    assert "l_sole (not l_foot)" in events[0].message and "r_sole (not r_foot)" in events[0].message
    # explicit feet: no detection, no event
    est = RobotStateEstimator.from_description(biped, EstimatorSettings(foot_frames=("l_foot", "r_foot")))
    assert est.foot_frames == ("l_foot", "r_foot")
    assert not [e for e in est.pop_events() if e.key == "foot_frames_merged"]


@pytest.mark.parametrize("robot", ["go1", "solo12", "anymal_c", "talos"])
def test_detection_of_the_bundled_robots_is_one_frame_per_leg(robot: str) -> None:
    desc = load_description(str(example_robot_urdf(robot)))
    choice = desc.foot_frame_choice()
    joints = {desc.model.frames[desc.model.getFrameId(f)].parentJoint for f in choice.frames}
    assert len(joints) == len(choice.frames) == (2 if robot == "talos" else 4)
    assert not choice.dropped


def test_flat_feet_mask_rules() -> None:
    names, radii = ("l_sole", "r_sole_link", "FL_foot"), np.array([0.0, 0.0, 0.0])
    assert flat_feet_mask("auto", names, radii, False).tolist() == [True, True, False]
    assert flat_feet_mask("auto", names, np.array([0.02, 0.0, 0.0]), False).tolist() == [False, True, False]
    assert flat_feet_mask("auto", names, radii, True).all()
    assert flat_feet_mask("all", names, radii, False).all()
    assert not flat_feet_mask("none", names, radii, True).any()
    with pytest.raises(ValueError, match="flat_foot_update"):
        flat_feet_mask("sometimes", names, radii, False)


def _random_ekf(rng: np.random.Generator, mount: pin.SE3) -> BaseEkf:
    settings = EkfSettings()
    ekf = BaseEkf(mount, imu_noise_from_spec(None, settings), settings)
    initialize_at_random(ekf, rng)
    ekf.set_imu(0, rng.normal(size=3), rng.normal(size=3) + np.array([0.0, 0.0, 9.81]))
    ekf.set_imu(1_000_000, rng.normal(size=3), rng.normal(size=3) + np.array([0.0, 0.0, 9.81]))
    ekf.propagate_to(1_000_000)
    return ekf


@pytest.mark.skipif(not use_kernels(), reason="numba kernels disabled or not installed")
@pytest.mark.parametrize("mount", range(len(IMU_MOUNTS)))
def test_kernel_equals_reference(mount: int) -> None:
    rng = np.random.default_rng(10 + mount)
    nj = 12
    for trial in range(20):
        ekf = _random_ekf(rng, IMU_MOUNTS[mount])
        J6 = rng.normal(size=(3, 6, nj))
        qdot = rng.normal(size=nj) * 0.5
        feet = np.array([[0], [1, 2], [0, 1, 2]][trial % 3], dtype=np.int64)
        names = [f"f{i}" for i in feet]
        # gate: none, everything passes, some gated (between the two smallest NIS)
        gate = [0.0, 1e9, 0.0][trial % 3]
        ref, ker = copy.deepcopy(ekf), copy.deepcopy(ekf)
        ref.use_kernels = False
        ker.use_kernels = True
        if trial % 6 == 5:
            probe = NUMPY_BACKEND.rotation_update(copy.deepcopy(ref), names, feet, qdot, J6, 0.05, 0.05, 0.0)
            nis = sorted(r.nis for r in probe)
            gate = 0.5 * (nis[0] + nis[1])
        r_ref = NUMPY_BACKEND.rotation_update(ref, names, feet, qdot, J6, 0.05, 0.05, gate)
        r_ker = rotation_update(ker, names, feet, qdot, J6, 0.05, 0.05, gate)
        assert [r.accepted for r in r_ref] == [r.accepted for r in r_ker]
        for a, b in zip(r_ref, r_ker):
            np.testing.assert_allclose(a.innovation, b.innovation, rtol=0, atol=1e-12)
            np.testing.assert_allclose(a.S, b.S, rtol=0, atol=1e-12)
            assert abs(a.nis - b.nis) <= 1e-9 * max(1.0, a.nis)
        np.testing.assert_allclose(ker._x, ref._x, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ker._P, ref._P, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mount", range(len(IMU_MOUNTS)))
def test_jacobian_matches_finite_differences_on_the_manifold(mount: int) -> None:
    """``y(x (+) dx) - y(x) = -H dx`` for each error coordinate (the prediction ``omega_hat_B`` from the filter's
    own ``base_motion`` at the perturbed state)."""
    rng = np.random.default_rng(20 + mount)
    nj = 6
    for _ in range(5):
        ekf = _random_ekf(rng, IMU_MOUNTS[mount])
        ekf.use_kernels = False
        J_ang = rng.normal(size=(3, nj))
        qdot = rng.normal(size=nj)
        m0 = rotation_measurement(ekf, "f", J_ang, qdot, 0.05, 0.05)
        eps = 1e-6
        H_fd = np.empty((3, 15))
        for j in range(15):
            e = copy.deepcopy(ekf)
            dx = np.zeros(15)
            dx[j] = eps
            boxplus(e, dx)
            e.omega_base_in_base = e.base_motion()[0]
            H_fd[:, j] = -(rotation_measurement(e, "f", J_ang, qdot, 0.05, 0.05).innovation - m0.innovation) / eps
        np.testing.assert_allclose(H_fd, m0.H, rtol=0, atol=1e-7)


def _standing_run(flat_foot_update: str, gyro_bias_z: float, seconds: float = 8.0) -> tuple[RobotStateEstimator, list]:
    """The biped standing still (ground truth: constant pose, yaw 0) with a constant gyro z bias and white noise,
    the filter initialised at the true state but a zero bias; returns the estimator and (t, yaw, bias z)."""
    desc = load_description(biped_urdf())
    # (the synthetic IMU below is a bench IMU, not a legged robot's: no noise floor; the leg noise as written)
    es = dataclasses.replace(
        EkfSettings(),
        flat_foot_update=flat_foot_update,
        accel_noise_floor=0.0,
        gyro_noise_floor=0.0,
        foot_velocity_noise=0.05,
    )
    settings = EstimatorSettings(ekf=es)
    est = RobotStateEstimator.from_description(desc, settings)
    model = desc.model
    q = pin.neutral(model)
    q[7:] = np.tile([0.0, 0.0, -0.3, 0.6, -0.3, 0.0], 2)  # knees bent: feet below the hips, off the base axis
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    q[2] = -data.oMf[model.getFrameId("l_sole")].translation[2]
    est.initialize_state(0, q)
    rng = np.random.default_rng(3)
    names = tuple(desc.joint_names)
    # efforts holding the robot up: the gravity torques with the weight shared by the two soles (torque contacts)
    g = pin.computeGeneralizedGravity(model, data, q)
    pin.computeJointJacobians(model, data, q)
    J = [pin.getFrameJacobian(model, data, model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED) for f in ("l_sole", "r_sole")]
    Jc = np.vstack([j[:3] for j in J])  # (6, nv)
    f = np.linalg.lstsq(Jc[:, :6].T, g[:6], rcond=None)[0]
    tau = g[6:] - Jc[:, 6:].T @ f
    trace = []
    for k in range(1, int(seconds * 1000) + 1):
        stamp = k * 1_000_000
        gyro = np.array([0.0, 0.0, gyro_bias_z]) + rng.normal(0.0, 1e-3, 3)
        accel = np.array([0.0, 0.0, 9.81]) + rng.normal(0.0, 0.02, 3)
        est.add_imu(ImuSample(stamp, gyro, accel))
        if k % 2 == 0:
            est.add_joints(JointSample(stamp, names, q[7:].copy(), np.zeros(model.nv - 6), tau.copy()))
            ekf = est.ekf
            yaw = float(np.arctan2(ekf.R_world_base[1, 0], ekf.R_world_base[0, 0]))
            trace.append((stamp * 1e-9, yaw, float((ekf.R_base_imu @ ekf.gyro_bias)[2])))
    return est, trace


def test_held_foot_orientation_fixes_the_yaw_rate_bias() -> None:
    """Physics: both feet flat on the ground and still, so the base cannot turn about the vertical; a 0.01 rad/s
    gyro z bias integrates into yaw unless the filter learns it. The 3-D update sees it only through the feet's
    lateral offsets (lever arm 0.1 m against 0.05 m/s of foot noise), the 6-D update directly."""
    bias = 0.01
    est6, t6 = _standing_run("all", bias)
    est3, t3 = _standing_run("none", bias)
    assert est6.flat_feet.any() and not est3.flat_feet.any()
    assert [r.accepted for r in est6.last_rotation_results] == [True, True]
    yaw6, yaw3 = abs(t6[-1][1]), abs(t3[-1][1])
    bz6, bz3 = t6[-1][2], t3[-1][2]
    # 6-D: bias learnt within 5 % after 8 s (the filter's own bias stddev is 0.8e-3 rad/s: the random walk), yaw
    # held within a few mrad (the transient while the bias is learnt; measured 1.9 mrad)
    assert abs(bz6 - bias) < 5e-4, bz6
    assert yaw6 < 3e-3, yaw6
    # 3-D: the bias is learnt far more slowly (measured 0.0031 rad/s after 8 s), and yaw drifts (55 mrad)
    assert abs(bz3 - bias) > 5 * abs(bz6 - bias)
    assert yaw3 > 5 * yaw6, (yaw3, yaw6)
    # and the 6-D yaw stops drifting once the bias is known: the last 4 s move it by < 0.5 mrad
    half = [y for t, y, _ in t6 if t >= 4.0]
    assert max(half) - min(half) < 5e-4


@pytest.fixture(scope="module")
def talos_walk():
    from robot_state_estimator.simulation import SimulationSettings, simulate

    return simulate(SimulationSettings(robot="talos", gait="walk", duration_s=5.0, settle_s=1.0, ramp_s=0.5))


def test_simulated_biped_walk_yaw_with_6d_against_3d(talos_walk) -> None:
    """End to end on the simulated Talos walk (flat soles, ``simulation/biped.py``): a 0.01 rad/s gyro z bias
    appears after the static initialisation (which cannot see it); the ground-truth yaw is the simulator's. With
    the 6-D stance update the bias is learnt and the final yaw error stays a fraction of the 3-D update's."""
    run = talos_walk
    desc = load_description(run.description_xml)
    t_imu = (run.stamps_ns[run.imu_index] - run.stamps_ns[0]) * 1e-9

    def imu(k: int) -> tuple[np.ndarray, np.ndarray]:
        return run.imu_omega[k] + (t_imu[k] > 1.2) * np.array([0.0, 0.0, 0.01]), run.imu_f[k]

    yaw_err, bias_z = {}, {}
    for mode in ("auto", "none"):
        est = RobotStateEstimator.from_description(desc, EstimatorSettings(ekf=EkfSettings(flat_foot_update=mode)))
        assert est.flat_feet.tolist() == ([True, True] if mode == "auto" else [False, False])
        out = feed_run(est, run, imu_transform=imu)
        q_gt = run.q[out["imu_gt"][-1]]
        R_gt = pin.Quaternion(q_gt[6], q_gt[3], q_gt[4], q_gt[5]).matrix()
        R_est = est.ekf.R_world_base
        yaw_err[mode] = abs(float(pin.rpy.matrixToRpy(R_gt.T @ R_est)[2]))
        bias_z[mode] = float((est.ekf.R_base_imu @ est.ekf.gyro_bias)[2])
    assert abs(bias_z["auto"] - 0.01) < 2e-3, bias_z
    assert yaw_err["auto"] < 0.3 * yaw_err["none"], yaw_err
