"""Which header.frame_id values denote the IMU frame S (ImuSpec.accepted_frame_ids, imu_frame_mismatch).

Expected values from the descriptions' own text: Go1 (example-robot-data go1.urdf): imu_joint fixes imu_link to
trunk at xyz (-0.01592, -0.06659, -0.00617), rpy 0, trunk is fixed to base at the identity, and the sensor sits
in imu_link with no pose. ANYmal C: imu_link fixed to base at xyz (0.2488, 0.00835, 0.04628), yaw +90 deg
(config/robots/anymal_c.urdf.xacro's header).
"""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.description import DescriptionError, ErrorCode, ImuSpec, load_description


def load(src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_description(src)


def test_go1_imu_link_accepted_base_refused():
    desc = load("config/robots/go1.urdf.xacro")
    imu = desc.imu
    assert imu.link == "base"  # imu_link and trunk are lumped into base
    assert imu.accepted_frame_ids == ("imu_sensor", "go1/base/imu_sensor", "imu_link")
    msg = desc.imu_frame_mismatch("base")
    assert msg == (
        "link 'base' is not the IMU frame S of sensor 'imu_sensor': S is offset by (-0.01592, -0.06659, -0.00617) m "
        "in 'base'"
    )
    # trunk sits at base's origin with its axes: S is offset from it by the same vector
    assert "offset by (-0.01592, -0.06659, -0.00617) m in 'trunk'" in desc.imu_frame_mismatch("trunk")
    assert "moves relative to the IMU's link" in desc.imu_frame_mismatch("FL_calf")
    assert desc.imu_frame_mismatch("imu_link") == "" and desc.imu_frame_mismatch("camera") == ""


def test_anymal_c_base_refused_as_rotated():
    desc = load("config/robots/anymal_c.urdf.xacro")
    assert desc.imu.link == "base" and "base" not in desc.imu.accepted_frame_ids
    assert "imu_link" in desc.imu.accepted_frame_ids
    msg = desc.imu_frame_mismatch("base")
    assert "S is rotated by 90 deg about (0, 0, 1) and offset by (0.2488, 0.00835, 0.04628) m in 'base'" in msg


SDF = """<?xml version="1.0"?>
<sdf version="1.9"><model name="m">
  <link name="body">
    <inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
    <sensor name="imu" type="imu"><pose>0.1 0 0.2 0 0 1.5707963267948966</pose><imu/></sensor>
  </link>
  <frame name="imu_mount" attached_to="body"><pose>0.1 0 0.2 0 0 1.5707963267948966</pose></frame>
  <frame name="imu_mount_in_world" attached_to="body">
    <pose relative_to="__model__">0.1 0 0.2 0 0 1.5707963267948966</pose></frame>
  <frame name="near" attached_to="body"><pose>0.1 0 0.2000001 0 0 1.5707963267948966</pose></frame>
  <frame name="unrotated" attached_to="body"><pose>0.1 0 0.2 0 0 0</pose></frame>
</model></sdf>"""


def test_sdf_frame_coinciding_with_the_sensor_is_accepted():
    desc = load(SDF)
    imu = desc.imu
    # The sensor's frame id is its name; gz-sim's is model/link/sensor. imu_mount: same pose in the same link;
    # imu_mount_in_world: the model frame is the body frame here (canonical link at the identity). The others
    # differ by 1e-7 m and by a 90 deg yaw.
    assert imu.accepted_frame_ids == ("imu", "m/body/imu", "imu_mount", "imu_mount_in_world")
    assert desc.imu_frame_mismatch("unrotated") == (
        "frame 'unrotated' is not the IMU frame S of sensor 'imu': "
        "S is rotated by 90 deg about (0, 0, 1) in 'unrotated'"
    )
    assert "S is offset by (0, 0, -1e-07) m in 'near'" in desc.imu_frame_mismatch("near")
    assert "S is rotated by 90 deg about (0, 0, 1) and offset by (0.1, 0, 0.2) m in 'body'" in (
        desc.imu_frame_mismatch("body")
    )


def test_imu_spec_without_a_frame_graph():
    at_origin = ImuSpec(name="imu", link="imu_link", frame_id="imu")
    assert at_origin.accepted_frame_ids == ("imu", "imu_link")
    offset = ImuSpec(name="imu", link="base", frame_id="imu", pose_in_link=pin.SE3(np.eye(3), np.array([0.1, 0, 0])))
    assert offset.accepted_frame_ids == ("imu",)


def test_imu_noise_problems_listed_with_frame_problems():
    """Two bad attached_to and a negative stddev: one DescriptionError with all three (docs/DESCRIPTION.md: stages)."""
    src = """<sdf version="1.9"><model name="m">
  <link name="body">
    <sensor name="imu" type="imu"><imu><angular_velocity><x><noise type="gaussian"><stddev>-0.1</stddev></noise></x>
    </angular_velocity></imu></sensor>
  </link>
  <frame name="f1" attached_to="nothing"/>
  <frame name="f2" attached_to="nowhere"/>
</model></sdf>"""
    with pytest.raises(DescriptionError) as info:
        load(src)
    assert sorted(info.value.codes) == sorted(
        [ErrorCode.FRAME_ATTACHED_TO_INVALID, ErrorCode.FRAME_ATTACHED_TO_INVALID, ErrorCode.PARAMETER_ERROR]
    )


def test_urdf_gazebo_imu_problems_listed_with_urdf_problems():
    src = """<robot name="r">
  <link name="a"><inertial><mass value="x"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <gazebo reference="a"><sensor name="imu" type="imu"><imu><angular_velocity><x>
    <noise type="gaussian"><stddev>-0.1</stddev></noise></x></angular_velocity></imu></sensor></gazebo>
</robot>"""
    with pytest.raises(DescriptionError) as info:
        load(src)
    assert info.value.codes == [ErrorCode.PARAMETER_ERROR, ErrorCode.PARAMETER_ERROR]
    assert "mass" in info.value.problems[0].message and "stddev" in info.value.problems[1].message


def test_base_frame_names_the_base_link_or_a_coinciding_frame_or_no_frame_of_the_robot():
    """RobotDescription.base_frame_mismatch: the output frames of B (base_frame, tf_child_frame). Go1: trunk is
    fixed to base at the identity; imu_link is at (-0.01592, -0.06659, -0.00617) in it, so base is at minus that
    in imu_link; the feet move. ANYmal C: imu_link at (0.2488, 0.00835, 0.04628), yaw +90 deg in base, so base is
    rotated by -90 deg about z and at R^T (-t) = (-0.00835, 0.2488, -0.04628) in imu_link."""
    go1 = load("config/robots/go1.urdf.xacro")
    for name in ("base", "trunk", "base_link", "", "odom_base"):
        assert go1.base_frame_mismatch(name) == "", name
    assert go1.base_frame_mismatch("imu_link") == (
        "link 'imu_link' is not the base link 'base': the base link is offset by (0.01592, 0.06659, 0.00617) m "
        "in 'imu_link'"
    )
    assert go1.base_frame_mismatch("FL_foot") == (
        "link 'FL_foot' is not the base link 'base': it moves relative to the base link 'base'"
    )
    anymal = load("config/robots/anymal_c.urdf.xacro")
    msg = anymal.base_frame_mismatch("imu_link")
    assert "rotated by 90 deg about (0, -0, -1) and offset by (-0.00835, 0.2488, -0.04628) m in 'imu_link'" in msg
