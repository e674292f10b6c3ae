"""Bundled robots and example-robot-data: models equal pinocchio's own URDF models; SDF fixtures equal URDF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.common.paths import config_dir, robot_description_path
from robot_state_estimator.common.robots import example_robot_urdf
from robot_state_estimator.description import DescriptionWarning, load_description

FIXTURES = Path(__file__).parent / "fixtures"


def _fk_max_error(m1: pin.Model, m2: pin.Model, names, configs) -> float:
    d1, d2 = m1.createData(), m2.createData()
    err = 0.0
    for q in configs:
        pin.framesForwardKinematics(m1, d1, q)
        pin.framesForwardKinematics(m2, d2, q)
        for n in names:
            X1 = d1.oMf[m1.getFrameId(n, pin.FrameType.BODY)]
            X2 = d2.oMf[m2.getFrameId(n, pin.FrameType.BODY)]
            err = max(err, float(np.abs(X1.homogeneous - X2.homogeneous).max()))
    return err


def _configs(model: pin.Model, n: int = 5, seed: int = 3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = pin.neutral(model)
        q[:3] = rng.normal(size=3)
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
        v = rng.uniform(-1.5, 1.5, size=model.nv)
        v[:6] = 0.0
        out.append(pin.integrate(model, q, v))
    return out


@pytest.mark.parametrize("robot", ["solo12", "go1", "anymal_c", "talos"])
def test_example_robot_data_fk_equals_pinocchio_urdf(robot):
    path = example_robot_urdf(robot)
    if robot == "talos":  # its IMU <gazebo> block has the SDF 1.5 <imu><noise>, which libsdformat 14/15 ignores
        with pytest.warns(DescriptionWarning, match=r"<imu><noise>"):
            desc = load_description(path)
    else:
        desc = load_description(path)
    ref = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert desc.format == "urdf"
    assert desc.model.names[1] == "root_joint"
    assert desc.joint_names == list(ref.names)[2:]
    bodies = [f.name for f in ref.frames if f.type == pin.FrameType.BODY]
    assert _fk_max_error(desc.model, ref, bodies, _configs(ref)) == 0.0


@pytest.mark.parametrize(
    ("robot", "base", "imu_link", "p_base_imu", "R_base_imu"),
    [
        # Go1: imu_link -> trunk (imu_joint origin) -> base (identity): lumped onto base
        ("go1", "base", "base", [-0.01592, -0.06659, -0.00617], np.eye(3)),
        ("solo12", "base_link", "base_link", [0, 0, 0], np.eye(3)),
        # ANYmal C: imu_joint origin xyz (0.2488 0.00835 0.04628), yaw +90 deg
        ("anymal_c", "base", "base", [0.2488, 0.00835, 0.04628], np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])),
    ],
)
def test_bundled_robots(robot, base, imu_link, p_base_imu, R_base_imu):
    path = robot_description_path(robot)
    assert path.parent == config_dir() / "robots"
    desc = load_description(path)
    assert desc.base_link == base and len(desc.joint_names) == 12
    imu = desc.imu
    assert imu.name == "imu_sensor" and imu.frame_id == "imu_sensor" and imu.link == imu_link
    assert desc.model.existFrame(imu.link)
    np.testing.assert_allclose(imu.p_base_imu, p_base_imu, atol=1e-12)
    np.testing.assert_allclose(imu.R_base_imu, R_base_imu, atol=1e-11)
    assert imu.update_rate > 0 and np.all(imu.gyro_stddev() > 0) and np.all(imu.accel_stddev() > 0)
    assert len(desc.foot_frames()) == 4


@pytest.mark.parametrize(("robot", "fixture"), [("go1", "go1.sdf"), ("solo12", "solo12.sdf")])
def test_sdf_fixture_equals_urdf(robot, fixture):
    urdf = load_description(robot_description_path(robot))
    sdf = load_description(FIXTURES / fixture)
    assert sdf.format == "sdf" and sdf.base_link == urdf.base_link
    assert sdf.joint_names == urdf.joint_names and sdf.model.nq == urdf.model.nq
    bodies = [f.name for f in urdf.model.frames if f.type == pin.FrameType.BODY]
    assert _fk_max_error(sdf.model, urdf.model, bodies, _configs(urdf.model, seed=11)) < 1e-12
    # same inertias (lumped fixed children included) per joint
    for i in range(1, urdf.model.njoints):
        a, b = urdf.model.inertias[i], sdf.model.inertias[i]
        assert abs(a.mass - b.mass) < 1e-12
        np.testing.assert_allclose(a.lever, b.lever, atol=1e-12)
        np.testing.assert_allclose(a.inertia, b.inertia, atol=1e-12)
    assert sdf.imu.pose_in_base.isApprox(urdf.imu.pose_in_base, 1e-12)
    assert sdf.imu.gyro_stddev().tolist() == urdf.imu.gyro_stddev().tolist()
    assert sdf.foot_frames() == urdf.foot_frames()


def test_go1_sdf_imu_through_frame():
    sdf = load_description(FIXTURES / "go1.sdf")
    # sensor in link trunk, pose relative_to frame imu_mount (attached to imu_joint = imu_link's frame)
    assert sdf.imu.link == "trunk"
    assert sdf.frame_body("imu_mount") == "imu_link"
    np.testing.assert_allclose(sdf.imu.pose_in_link.translation, [-0.01592, -0.06659, -0.00617], atol=1e-15)


def test_load_from_string_equals_file():
    path = example_robot_urdf("solo12")
    a = load_description(path)
    b = load_description(path.read_text())
    assert a.joint_names == b.joint_names and a.xml == b.xml  # plain URDF: not run through xacro
