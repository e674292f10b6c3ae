"""Orientation references per localization (gz-sensors table values, SDFormat GRAV_* and CUSTOM semantics)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.description.types import ImuSpec, Localization
from robot_state_estimator.sensors import ImuModel, OrientationReferenceError, orientation_reference
from robot_state_estimator.sensors.orientation import rot_z, rpy_to_matrix

S = np.sqrt(0.5)


def quat_of(R):
    q = pin.Quaternion(np.asarray(R, dtype=float))
    v = np.array([q.x, q.y, q.z, q.w])
    return v if v[3] > 0 or (v[3] == 0 and v[np.nonzero(v)[0][0]] > 0) else -v


def test_named_frames_match_hand_values():
    np.testing.assert_allclose(orientation_reference("ENU"), np.eye(3), atol=1e-15)
    # NED axes in ENU: north = +y, east = +x, down = -z (gz table: rpy(pi, 0, pi/2))
    np.testing.assert_allclose(orientation_reference("NED"), [[0, 1, 0], [1, 0, 0], [0, 0, -1]], atol=1e-15)
    # NWU: north = +y, west = -x, up = +z
    np.testing.assert_allclose(orientation_reference("NWU"), [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(orientation_reference("ENU", heading_rad=0.3), rot_z(0.3), atol=1e-15)
    np.testing.assert_allclose(orientation_reference("NED", heading_rad=0.3), rot_z(0.3) @ orientation_reference("NED"))


@pytest.mark.parametrize(
    ("loc", "quat_xyzw"),
    [
        ("ENU", [0, 0, 0, 1]),
        ("NED", [S, S, 0, 0]),  # 180 deg about (1, 1, 0)/sqrt(2)
        ("NWU", [0, 0, -S, S]),  # Rz(-90 deg)
    ],
)
def test_reported_orientation_of_level_sensor_facing_east(loc, quat_xyzw):
    model = _body()
    imu = ImuModel(ImuSpec(name="i", link="base", frame_id="i", localization=Localization(loc)), model)
    r = imu.ideal(pin.neutral(model), np.zeros(6), np.zeros(6))
    q = np.asarray(r.quat_ref_imu_xyzw)
    assert min(np.linalg.norm(q - quat_xyzw), np.linalg.norm(q + quat_xyzw)) < 1e-12  # q and -q are equal


def test_custom_world_and_initial_sensor_frame():
    np.testing.assert_allclose(
        orientation_reference("CUSTOM", custom_rpy=(0, 0, np.pi / 2), custom_rpy_parent_frame="world"),
        orientation_reference("NWU"),
        atol=1e-15,
    )
    R0 = rpy_to_matrix((0.1, 0.2, 0.3))
    np.testing.assert_allclose(orientation_reference("CUSTOM", R_world_sensor_initial=R0), R0)
    np.testing.assert_allclose(
        orientation_reference("CUSTOM", custom_rpy=(0, 0, 0.5), R_world_sensor_initial=R0), R0 @ rot_z(0.5)
    )
    # gz-sensors ignores custom_rpy unless the parent is "world", and uses the initial orientation
    np.testing.assert_allclose(
        orientation_reference("CUSTOM", custom_rpy=(0, 0, 0.5), R_world_sensor_initial=R0, gazebo_compatible=True), R0
    )
    link = rpy_to_matrix((0, 0, 1.0))
    np.testing.assert_allclose(
        orientation_reference("CUSTOM", custom_rpy_parent_frame="trunk", frame_rotations={"trunk": link}), link
    )
    with pytest.raises(OrientationReferenceError, match="not a known frame"):
        orientation_reference("CUSTOM", custom_rpy_parent_frame="nope", frame_rotations={})


def test_custom_empty_parent_reports_relative_to_initial_orientation():
    model = _body()
    imu = ImuModel(ImuSpec(name="i", link="base", frame_id="i"), model)
    q0 = _q(rpy_to_matrix((0, 0, 1.0)))
    r0 = imu.ideal(q0, np.zeros(6), np.zeros(6))
    np.testing.assert_allclose(quat_of(_R(r0.quat_ref_imu_xyzw)), [0, 0, 0, 1], atol=1e-12)
    r1 = imu.ideal(_q(rpy_to_matrix((0, 0, 1.5))), np.zeros(6), np.zeros(6))
    np.testing.assert_allclose(_R(r1.quat_ref_imu_xyzw), rot_z(0.5), atol=1e-12)


def test_grav_up_and_down():
    up = orientation_reference("GRAV_UP", grav_dir_x=(0, 1, 0), grav_dir_x_parent_frame="world")
    np.testing.assert_allclose(up, orientation_reference("NWU"), atol=1e-15)
    down = orientation_reference("GRAV_DOWN", grav_dir_x=(0, 1, 0), grav_dir_x_parent_frame="world")
    np.testing.assert_allclose(down, orientation_reference("NED"), atol=1e-15)
    # x hint with a vertical component is projected on the horizontal plane
    tilted = orientation_reference("GRAV_UP", grav_dir_x=(1, 0, 5), grav_dir_x_parent_frame="world")
    np.testing.assert_allclose(tilted, np.eye(3), atol=1e-15)
    # empty parent: the hint is in the initial sensor frame (sensor yawed by 90 deg -> its x is north)
    np.testing.assert_allclose(
        orientation_reference("GRAV_UP", R_world_sensor_initial=rot_z(np.pi / 2)),
        orientation_reference("NWU"),
        atol=1e-15,
    )
    with pytest.raises(OrientationReferenceError, match="parallel"):
        orientation_reference("GRAV_DOWN", grav_dir_x=(0, 0, 1), grav_dir_x_parent_frame="world")
    R0 = rpy_to_matrix((0.2, 0.1, 0.0))
    np.testing.assert_allclose(orientation_reference("GRAV_UP", R_world_sensor_initial=R0, gazebo_compatible=True), R0)


def test_gz_without_reference_frame_uses_initial_orientation():
    R0 = rot_z(0.4)
    out = orientation_reference(
        "NED", R_world_sensor_initial=R0, gazebo_compatible=True, has_orientation_reference_frame=False
    )
    np.testing.assert_allclose(out, R0)
    with pytest.raises(OrientationReferenceError, match="unknown localization"):
        orientation_reference("XYZ")


def _body() -> pin.Model:
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    model.appendBodyToJoint(j, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    model.addFrame(pin.Frame("base", j, 0, pin.SE3.Identity(), pin.FrameType.BODY))
    return model


def _q(R):
    quat = pin.Quaternion(R)
    return np.array([0, 0, 0, quat.x, quat.y, quat.z, quat.w])


def _R(quat_xyzw):
    return pin.Quaternion(quat_xyzw[3], *quat_xyzw[:3]).toRotationMatrix()


@pytest.mark.parametrize("gazebo_compatible", [False, True])
def test_custom_rpy_in_world_reports_as_gz_sensors_test(gazebo_compatible):
    # gz-sensors ImuSensor_TEST (CustomRpy): custom_rpy parent_frame="world" (1.570795, 0, 0), sensor at the
    # world origin, ENU world with heading 0 -> reported orientation = Rx(-1.570795)
    model = _body()
    spec = ImuSpec(
        name="i",
        link="base",
        frame_id="i",
        localization=Localization.CUSTOM,
        custom_rpy=(1.570795, 0.0, 0.0),
        custom_rpy_parent_frame="world",
        has_orientation_reference_frame=True,
    )
    imu = ImuModel(spec, model, gazebo_compatible=gazebo_compatible)
    r = imu.ideal(pin.neutral(model), np.zeros(6), np.zeros(6))
    np.testing.assert_allclose(_R(r.quat_ref_imu_xyzw), rpy_to_matrix((-1.570795, 0.0, 0.0)), atol=1e-12)


def test_custom_parent_frame_may_be_the_fully_scoped_link_name():
    # imu.sdf: parent_frame is "any valid fully scoped Gazebo Link name" (model::link) or "world"
    model = _body()
    model.name = "robot"
    spec = ImuSpec(
        name="i",
        link="base",
        frame_id="i",
        custom_rpy=(0.0, 0.0, 0.5),
        custom_rpy_parent_frame="robot::base",
        has_orientation_reference_frame=True,
    )
    q0 = _q(rot_z(1.0))
    R = ImuModel(spec, model).set_reference(q0)
    # R_world_ref = R_world_base(q0) rpy(0, 0, 0.5) = Rz(1.5)
    np.testing.assert_allclose(R, rot_z(1.5), atol=1e-12)
