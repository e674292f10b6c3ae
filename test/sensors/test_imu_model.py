"""Analytic IMU readings: spinning with an off-axis IMU, free fall, tilted, upside-down and rotated mounts."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.common.robots import example_robot_urdf
from robot_state_estimator.description.types import ImuSpec, NoiseSpec, NoiseType
from robot_state_estimator.sensors import ImuModel, SensorError
from robot_state_estimator.sensors.orientation import rpy_to_matrix

G = 9.81


def floating_body() -> pin.Model:
    """A single rigid body on a free-flyer, with a body frame ``base``."""
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    model.appendBodyToJoint(j, pin.Inertia.FromBox(2.0, 0.4, 0.2, 0.1), pin.SE3.Identity())
    model.addFrame(pin.Frame("base", j, 0, pin.SE3.Identity(), pin.FrameType.BODY))
    return model


def state(R_world_base=None, p=None, v_base_in_base=None, omega_base_in_base=None, a_lin=None, a_ang=None):
    """pinocchio (q, v, a) of the floating body; None means zero (identity for the rotation)."""
    z = np.zeros(3)
    R_world_base = np.eye(3) if R_world_base is None else R_world_base
    p, v_base_in_base, omega_base_in_base, a_lin, a_ang = (
        z if x is None else x for x in (p, v_base_in_base, omega_base_in_base, a_lin, a_ang)
    )
    quat = pin.Quaternion(np.asarray(R_world_base, dtype=float))
    q = np.concatenate([p, [quat.x, quat.y, quat.z, quat.w]])
    return q, np.concatenate([v_base_in_base, omega_base_in_base]), np.concatenate([a_lin, a_ang])


def imu_at(pose: pin.SE3, **kw) -> ImuModel:
    return ImuModel(ImuSpec(name="imu", link="base", frame_id="imu", pose_in_link=pose, **kw), floating_body())


def test_level_at_rest_reads_plus_g_on_z():
    r = imu_at(pin.SE3.Identity()).ideal(*state())
    np.testing.assert_allclose(r.f_imu_in_imu, [0, 0, G], atol=1e-12)
    np.testing.assert_allclose(r.omega_imu_in_imu, 0, atol=1e-12)


@pytest.mark.parametrize("yaw", [0.0, 0.7, 2.0])
def test_spinning_body_with_off_axis_imu_reads_centripetal(yaw):
    w, r = 3.0, 0.1  # rad/s, m: IMU 10 cm along base x, spinning about the vertical axis at the base origin
    imu = imu_at(pin.SE3(np.eye(3), np.array([r, 0.0, 0.0])))
    reading = imu.ideal(*state(R_world_base=rpy_to_matrix((0, 0, yaw)), omega_base_in_base=np.array([0, 0, w])))
    # classical acceleration of a point on a circle: -w^2 r towards the axis (= -x in S), by hand 0.9 m/s^2
    np.testing.assert_allclose(reading.f_imu_in_imu, [-(w**2) * r, 0.0, G], atol=1e-12)
    np.testing.assert_allclose(reading.omega_imu_in_imu, [0, 0, w], atol=1e-12)


def test_free_fall_reads_zero_for_any_attitude_and_spin():
    R = rpy_to_matrix((0.3, -0.2, 1.0))
    imu = imu_at(pin.SE3(rpy_to_matrix((0.1, 0.2, 0.3)), np.array([0.05, -0.02, 0.03])))
    # base origin falls (a_base_in_world = g) and the body does not rotate: every point falls with g
    v_base_in_base = np.array([0.4, -0.1, 0.2])
    q, v, a = state(R_world_base=R, v_base_in_base=v_base_in_base, a_lin=R.T @ np.array([0, 0, -G]))
    np.testing.assert_allclose(imu.ideal(q, v, a).f_imu_in_imu, 0.0, atol=1e-12)


def test_tilted_static_reads_gravity_rotated():
    theta = np.pi / 6  # pitch 30 deg: f_imu_in_imu = R^T (0, 0, g) = g (-sin, 0, cos) = (-4.905, 0, 8.4957)
    r = imu_at(pin.SE3.Identity()).ideal(*state(R_world_base=rpy_to_matrix((0, theta, 0))))
    np.testing.assert_allclose(r.f_imu_in_imu, [-4.905, 0.0, 8.495709211], atol=1e-8)


def test_upside_down_mount():
    imu = imu_at(pin.SE3(rpy_to_matrix((np.pi, 0, 0)), np.zeros(3)))
    r = imu.ideal(*state(omega_base_in_base=np.array([0.0, 0.0, 0.5])))
    np.testing.assert_allclose(r.f_imu_in_imu, [0, 0, -G], atol=1e-12)
    np.testing.assert_allclose(r.omega_imu_in_imu, [0, 0, -0.5], atol=1e-12)


def test_yaw_90_mount_while_accelerating_forward():
    imu = imu_at(pin.SE3(rpy_to_matrix((0, 0, np.pi / 2)), np.zeros(3)))
    r = imu.ideal(*state(a_lin=np.array([2.0, 0.0, 0.0]), omega_base_in_base=np.array([0.3, 0.0, 0.0])))
    # base +x is sensor -y: f_imu_in_imu = Rz(90)^T (2, 0, g) = (0, -2, g); omega (0.3, 0, 0)_B -> (0, -0.3, 0)_S
    np.testing.assert_allclose(r.f_imu_in_imu, [0.0, -2.0, G], atol=1e-12)
    np.testing.assert_allclose(r.omega_imu_in_imu, [0.0, -0.3, 0.0], atol=1e-12)


def test_go1_imu_link_on_lumped_fixed_joints_matches_base_at_rest():
    model = pin.buildModelFromUrdf(str(example_robot_urdf("go1")), pin.JointModelFreeFlyer())
    imu = ImuModel(ImuSpec(name="imu", link="imu_link", frame_id="imu"), model)
    q = pin.neutral(model)
    r = imu.ideal(q, np.zeros(model.nv), np.zeros(model.nv))
    np.testing.assert_allclose(r.f_imu_in_imu, [0, 0, G], atol=1e-12)
    with pytest.raises(SensorError, match="not a frame"):
        ImuModel(ImuSpec(name="imu", link="nope", frame_id="imu"), model)


def test_measure_adds_noise_and_covariances_follow_rep145():
    g = NoiseSpec(type=NoiseType.GAUSSIAN, stddev=0.01)
    a = NoiseSpec(type=NoiseType.GAUSSIAN, stddev=0.1, bias_mean=0.5)
    imu = ImuModel(
        ImuSpec(
            name="imu",
            link="base",
            frame_id="imu",
            angular_velocity_noise=(g, g, g),
            linear_acceleration_noise=(a, a, NoiseSpec()),
            orientation_enabled=False,
        ),
        floating_body(),
        rng=5,
    )
    r = imu.measure(*state(), dt=0.0)
    assert r.quat_ref_imu_xyzw is None
    assert r.f_imu_in_imu[2] == G and abs(abs(r.f_imu_in_imu[0]) - 0.5) < 0.5
    cov = imu.covariances()
    assert cov.orientation[0] == -1.0
    np.testing.assert_allclose(cov.angular_velocity.reshape(3, 3), np.diag([1e-4] * 3))
    np.testing.assert_allclose(cov.linear_acceleration.reshape(3, 3), np.diag([1e-2, 1e-2, 0.0]))
    assert not imu_at(pin.SE3.Identity()).covariances().orientation.any()
