"""Choosing the IMU (``imu_name``) and declaring one by settings (``declared_imu.*``): the core path.

Geometry is checked against pinocchio's forward kinematics and scipy's rotations (independent of the frame
graph the description code uses), noise against the numbers given, and a declared IMU end to end on a generated
run against the same run with the description's own IMU block.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import feed_run
from scipy.spatial.transform import Rotation

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.robots import example_robot_data_share
from robot_state_estimator.description import DescriptionError, ErrorCode, load_description
from robot_state_estimator.estimation import EstimatorSettings, RobotStateEstimator, load_settings
from robot_state_estimator.estimation.ekf import imu_noise_from_spec
from robot_state_estimator.estimation.errors import SettingsError
from robot_state_estimator.estimation.imu_setup import apply_imu_settings

GO2 = "go2_description/urdf/go2.urdf"


@pytest.fixture(scope="module")
def go2():
    return load_description(example_robot_data_share() / "robots" / GO2)


@pytest.fixture(scope="module")
def go1_two_imus():
    """The bundled Go1 with a second IMU ``imu2`` on ``trunk``, offset and yawed 90 deg in it."""
    xml = load_description(robot_description_path("go1")).xml
    block = (
        '<gazebo reference="trunk"><sensor name="imu2" type="imu"><update_rate>500</update_rate>'
        "<pose>0.1 0.02 -0.03 0 0 1.5707963267948966</pose></sensor></gazebo>"
    )
    return load_description(xml.replace("</robot>", block + "</robot>"))


def _frame_in_base(desc, frame: str) -> pin.SE3:
    """``X_base_frame`` from pinocchio's forward kinematics at the neutral configuration (base at identity)."""
    model = desc.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    return data.oMf[model.getFrameId(desc.base_link)].actInv(data.oMf[model.getFrameId(frame)])


def test_several_imus_error_lists_them_and_says_how_to_choose(go1_two_imus) -> None:
    with pytest.raises(DescriptionError) as e:
        RobotStateEstimator.from_description(go1_two_imus)
    text = str(e.value)
    assert e.value.codes == [ErrorCode.ELEMENT_INVALID]
    assert "'imu_sensor' (link 'base'" in text and "'imu2' (link 'base'" in text  # both lumped into base
    assert "frame_id 'imu2'" in text
    for how in ("imu_name:=NAME", "--imu NAME", "settings key imu_name"):
        assert how in text


def test_imu_name_chooses_and_the_pose_is_the_chosen_one(go1_two_imus) -> None:
    est = RobotStateEstimator.from_description(go1_two_imus, EstimatorSettings(imu_name="imu2"))
    assert est.imu.name == "imu2"
    expected = _frame_in_base(go1_two_imus, "trunk") * pin.SE3(
        Rotation.from_euler("z", math.pi / 2).as_matrix(), np.array([0.1, 0.02, -0.03])
    )
    np.testing.assert_allclose(est.imu.pose_in_base.homogeneous, expected.homogeneous, atol=1e-12)
    np.testing.assert_allclose(est.ekf.R_base_imu, expected.rotation, atol=1e-12)
    np.testing.assert_allclose(est.ekf.p_base_imu, expected.translation, atol=1e-12)
    other = RobotStateEstimator.from_description(go1_two_imus, EstimatorSettings(imu_name="imu_sensor"))
    np.testing.assert_allclose(
        other.imu.pose_in_base.homogeneous, _frame_in_base(go1_two_imus, "imu_link").homogeneous, atol=1e-12
    )


def test_unknown_imu_name_is_named_with_did_you_mean(go1_two_imus) -> None:
    with pytest.raises(DescriptionError) as e:
        RobotStateEstimator.from_description(go1_two_imus, EstimatorSettings(imu_name="imu_sensr"))
    text = str(e.value)
    assert e.value.codes == [ErrorCode.SENSOR_NOT_FOUND]
    assert "no IMU 'imu_sensr'" in text and "did you mean 'imu_sensor'" in text and "'imu2'" in text


def test_declared_imu_pose_follows_sdf_pose_semantics(go2) -> None:
    pose = [0.01, -0.02, 0.03, 0.1, -0.2, 0.3]
    settings = load_settings({"declared_imu": {"link": "imu", "pose": pose, "update_rate_hz": 500.0}})
    est = RobotStateEstimator.from_description(go2, settings)
    # fixed-axis X, Y, Z (SDFormat euler_rpy): scipy's lower-case "xyz" is extrinsic = Rz(yaw) Ry(pitch) Rx(roll)
    X_link_imu = pin.SE3(Rotation.from_euler("xyz", pose[3:]).as_matrix(), np.array(pose[:3]))
    expected = _frame_in_base(go2, "imu") * X_link_imu
    np.testing.assert_allclose(est.imu.pose_in_base.homogeneous, expected.homogeneous, atol=1e-12)
    # the Go2's imu_joint origin, read off the URDF text: the imu link is offset, not rotated, in base
    np.testing.assert_allclose(_frame_in_base(go2, "imu").translation, [-0.02557, 0.0, 0.04232], atol=1e-12)
    assert est.imu.source == "settings" and est.imu.name == "declared_imu"
    assert est.imu.frame_id == "declared_imu"  # S is not the imu link itself (non-zero pose)
    assert "imu" not in est.imu.accepted_frame_ids


def test_declared_imu_at_a_link_takes_its_name_as_frame_id(go2) -> None:
    settings = load_settings({"imu_name": "bmi088", "declared_imu": {"link": "imu"}})
    desc = apply_imu_settings(go2, settings)
    assert desc.imu.name == "bmi088" and desc.imu.frame_id == "imu" and desc.imu.accepted_frame_ids == ("imu",)
    assert apply_imu_settings(desc, settings).imus == desc.imus  # idempotent


def test_declared_noise_reaches_the_filter_as_given(go2) -> None:
    d = dict(
        link="imu",
        update_rate_hz=500.0,
        gyro_noise_density_rad_s_sqrt_hz=2.4e-4,
        accel_noise_density_m_s2_sqrt_hz=1.7e-3,
        gyro_bias_instability_rad_s=1e-4,
        accel_bias_instability_m_s2=0.02,
        gyro_bias_random_walk_rad_s2_sqrt_hz=3e-5,
        accel_bias_random_walk_m_s3_sqrt_hz=4e-4,
    )
    settings = load_settings({"declared_imu": d})
    est = RobotStateEstimator.from_description(go2, settings)
    noise = imu_noise_from_spec(est.imu, settings.ekf)
    np.testing.assert_allclose(noise.gyro_density, 2.4e-4, rtol=1e-12)
    np.testing.assert_allclose(noise.accel_density, 1.7e-3, rtol=1e-12)
    np.testing.assert_allclose(noise.gyro_bias_random_walk, 3e-5, rtol=1e-12)
    np.testing.assert_allclose(noise.accel_bias_random_walk, 4e-4, rtol=1e-12)
    np.testing.assert_allclose(noise.gyro_bias_prior_std, 1e-4, rtol=1e-12)
    np.testing.assert_allclose(noise.accel_bias_prior_std, 0.02, rtol=1e-12)
    # a white noise of density sigma_c sampled at 500 Hz has a per-sample stddev sigma_c * sqrt(500)
    assert est.imu.angular_velocity_noise[0].stddev == pytest.approx(2.4e-4 * math.sqrt(500.0), rel=1e-12)
    events = {e.key: e for e in est.pop_events()}
    assert events["imu_declared"].level == "info" and "'imu'" in events["imu_declared"].message
    assert "imu_noise_assumed" not in events


def test_declared_imu_without_noise_warns_that_noise_is_assumed(go2) -> None:
    settings = load_settings({"declared_imu": {"link": "imu", "gyro_noise_density_rad_s_sqrt_hz": 1e-3}})
    est = RobotStateEstimator.from_description(go2, settings)
    events = {e.key: e for e in est.pop_events()}
    assumed = events["imu_noise_assumed"]
    assert assumed.level == "warn"
    assert "accel_noise_density_m_s2_sqrt_hz not given: ekf.accel_noise_density = 0.02 assumed" in assumed.message
    assert "gyro_noise_density_rad_s_sqrt_hz" not in assumed.message
    noise = imu_noise_from_spec(est.imu, settings.ekf)
    np.testing.assert_allclose(noise.accel_density, settings.ekf.accel_noise_density)  # the fallback, as said
    np.testing.assert_allclose(noise.gyro_density, 1e-3, rtol=1e-12)


def test_declared_imu_replaces_the_description_imu_with_a_warning() -> None:
    go1 = load_description(robot_description_path("go1"))
    settings = load_settings({"declared_imu": {"link": "trunk", "pose": [0, 0, 0.05, 0, 0, 0]}})
    est = RobotStateEstimator.from_description(go1, settings)
    assert est.imu.source == "settings"
    np.testing.assert_allclose(est.imu.p_base_imu, _frame_in_base(go1, "trunk").translation + np.array([0, 0, 0.05]))
    replaces = {e.key: e for e in est.pop_events()}["imu_declared_replaces"]
    assert replaces.level == "warn" and "'imu_sensor'" in replaces.message


def test_declared_imu_on_a_missing_link_is_named(go2) -> None:
    settings = load_settings({"declared_imu": {"link": "imu_lnk"}})
    with pytest.raises(DescriptionError) as e:
        RobotStateEstimator.from_description(go2, settings)
    assert e.value.codes == [ErrorCode.FRAME_ATTACHED_TO_INVALID]
    assert "declared_imu.link 'imu_lnk' is not a link or frame" in str(e.value)
    assert "did you mean 'imu'" in str(e.value)


def test_declared_imu_on_a_leg_is_refused(go2) -> None:
    from robot_state_estimator.estimation.errors import ModelError

    with pytest.raises(ModelError, match="moves relative to the base"):
        RobotStateEstimator.from_description(go2, load_settings({"declared_imu": {"link": "FL_calf"}}))


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"gyro_noise_density_rad_s_sqrt_hz": -1e-3}, r"declared_imu.gyro_noise_density_rad_s_sqrt_hz .*>= 0"),
        ({"accel_bias_instability_m_s2": float("nan")}, r"declared_imu.accel_bias_instability_m_s2 must be finite"),
        ({"update_rate_hz": float("inf")}, r"declared_imu.update_rate_hz must be finite"),
        ({"update_rate_hz": -100.0}, r"declared_imu.update_rate_hz .*>= 0"),
        ({"pose": [0, 0, float("nan"), 0, 0, 0]}, r"declared_imu.pose must be 6 finite numbers"),
        ({"pose": [0, 0, 0.1]}, r"declared_imu.pose must be 6 finite numbers"),
        ({"gyro_noise": 1.0}, r"unknown setting\(s\) declared_imu.gyro_noise"),
    ],
)
def test_bad_declared_values_are_named(values: dict, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load_settings({"declared_imu": {"link": "imu", **values}})


def test_declared_imu_end_to_end_equals_the_description_imu() -> None:
    """A Go1 run generated with its description's IMU, estimated once with that IMU block and once with the
    block removed and the same IMU declared by settings (link, rate, noise densities = stddev / sqrt(rate)):
    the same estimates, and both close to the ground truth."""
    simulation = pytest.importorskip("robot_state_estimator.simulation")
    run = simulation.simulate(
        simulation.SimulationSettings(robot="go1", gait="trot", duration_s=2.5, settle_s=0.5, ramp_s=0.5, seed=4)
    )
    with_block = load_description(run.description_xml)
    without = re.sub(r"<gazebo reference=\"imu_link\">.*?</gazebo>", "", run.description_xml, flags=re.S)
    bare = load_description(without)
    assert bare.imus == []
    spec = with_block.imu
    rate = spec.update_rate
    gyro, acc = spec.angular_velocity_noise[0], spec.linear_acceleration_noise[0]
    declared = {
        "link": "imu_link",
        "frame_id": spec.frame_id,
        "update_rate_hz": rate,
        "gyro_noise_density_rad_s_sqrt_hz": gyro.stddev / math.sqrt(rate),
        "accel_noise_density_m_s2_sqrt_hz": acc.stddev / math.sqrt(rate),
        "gyro_bias_instability_rad_s": gyro.bias_stddev,
        "accel_bias_instability_m_s2": acc.bias_stddev,
    }
    base = EstimatorSettings()
    settings = dataclasses.replace(
        base, imu_name=spec.name, declared_imu=load_settings({"declared_imu": declared}).declared_imu
    )
    ref = feed_run(RobotStateEstimator.from_description(with_block, base), run)
    est = RobotStateEstimator.from_description(bare, settings)
    np.testing.assert_allclose(est.imu.pose_in_base.homogeneous, spec.pose_in_base.homogeneous, atol=1e-12)
    out = feed_run(est, run)
    assert len(out["v"]) == len(ref["v"]) > 1000
    np.testing.assert_allclose(out["v"], ref["v"], atol=1e-9)
    np.testing.assert_allclose(out["p"], ref["p"], atol=1e-9)
    err = out["v"] - run.v[out["imu_gt"], :3]
    assert float(np.sqrt(np.mean(np.sum(err**2, axis=1)))) < 0.05


def test_declared_imu_on_an_sdf_frame_composes_the_frame_pose() -> None:
    """S declared at (0.05, 0, 0) in a <frame> yawed 90 deg at (0.1, 0, 0.2) in the base: S sits at (0.1, 0.05, 0.2)
    in the base (the frame's x axis is the base's y axis), yawed 90 deg; it moves with the base link."""
    sdf = (
        '<sdf version="1.9"><model name="m"><link name="base"><pose>5 5 5 0 0 0</pose></link>'
        '<frame name="imu_mount" attached_to="base"><pose relative_to="base">0.1 0 0.2 0 0 1.5707963267948966</pose>'
        "</frame></model></sdf>"
    )
    desc = load_description(sdf)
    settings = load_settings({"declared_imu": {"link": "imu_mount", "pose": [0.05, 0, 0, 0, 0, 0]}})
    imu = apply_imu_settings(desc, settings).imu
    assert imu.link == "base" and imu.frame_id == "declared_imu"
    np.testing.assert_allclose(imu.p_base_imu, [0.1, 0.05, 0.2], atol=1e-12)
    np.testing.assert_allclose(imu.R_base_imu, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)
    at_frame = apply_imu_settings(desc, load_settings({"declared_imu": {"link": "imu_mount"}})).imu
    assert at_frame.frame_id == "imu_mount" and "imu_mount" in at_frame.accepted_frame_ids
