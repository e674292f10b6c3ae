"""IMU parsing: every field, defaults, legacy SDF 1.5 noise, URDF <gazebo> variants, rotated/offset IMUs."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.description import (
    DescriptionError,
    DescriptionWarning,
    ErrorCode,
    Localization,
    NoiseSpec,
    NoiseType,
    load_description,
)

FULL_IMU = """
<sensor name="imu" type="imu">
  <update_rate>400</update_rate>
  <gz_frame_id>imu_optical</gz_frame_id>
  <pose>0.1 0.2 0.3 0 0 1.5707963267948966</pose>
  <imu>
    <orientation_reference_frame>
      <localization>NED</localization>
      <custom_rpy parent_frame="world">0.1 0.2 0.3</custom_rpy>
      <grav_dir_x parent_frame="base">0 1 0</grav_dir_x>
    </orientation_reference_frame>
    <angular_velocity>
      <x><noise type="gaussian"><mean>0.1</mean><stddev>0.2</stddev><bias_mean>0.3</bias_mean>
        <bias_stddev>0.4</bias_stddev><dynamic_bias_stddev>0.5</dynamic_bias_stddev>
        <dynamic_bias_correlation_time>0.6</dynamic_bias_correlation_time><precision>0.7</precision></noise></x>
      <y><noise type="gaussian_quantized"><stddev>0.02</stddev></noise></y>
    </angular_velocity>
    <linear_acceleration>
      <z><noise type="GAUSSIAN"><stddev>0.03</stddev></noise></z>
    </linear_acceleration>
    <enable_orientation>false</enable_orientation>
  </imu>
</sensor>
"""


def sdf_model(sensor: str, version: str = "1.9") -> str:
    return (
        f'<sdf version="{version}"><model name="m"><link name="base">'
        f"<pose>5 5 5 0 0 0</pose>{sensor}</link></model></sdf>"
    )


def test_every_field():
    imu = load_description(sdf_model(FULL_IMU)).imu
    assert imu.name == "imu" and imu.link == "base" and imu.frame_id == "imu_optical"
    assert imu.update_rate == 400.0
    assert imu.localization is Localization.NED and imu.has_orientation_reference_frame
    assert imu.custom_rpy == (0.1, 0.2, 0.3) and imu.custom_rpy_parent_frame == "world"
    assert imu.grav_dir_x == (0.0, 1.0, 0.0) and imu.grav_dir_x_parent_frame == "base"
    assert imu.orientation_enabled is False
    assert imu.angular_velocity_noise[0] == NoiseSpec(NoiseType.GAUSSIAN, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
    assert imu.angular_velocity_noise[1] == NoiseSpec(NoiseType.GAUSSIAN_QUANTIZED, stddev=0.02)
    assert imu.angular_velocity_noise[2] == NoiseSpec()
    assert imu.linear_acceleration_noise[2] == NoiseSpec(NoiseType.GAUSSIAN, stddev=0.03)
    np.testing.assert_allclose(imu.gyro_stddev(), [0.2, 0.02, 0.0])
    np.testing.assert_allclose(imu.accel_stddev(), [0.0, 0.0, 0.03])
    # pose default relative to the parent link (not the model): offset only, link at (5,5,5) irrelevant
    np.testing.assert_allclose(imu.pose_in_link.translation, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(imu.R_base_imu, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)


def test_defaults():
    imu = load_description(sdf_model('<sensor name="s" type="imu"/>')).imu
    assert imu.update_rate == 0.0 and imu.frame_id == "s"
    assert imu.localization is Localization.CUSTOM and not imu.has_orientation_reference_frame
    assert imu.custom_rpy == (0.0, 0.0, 0.0) and imu.grav_dir_x == (1.0, 0.0, 0.0)
    assert imu.orientation_enabled is True
    assert imu.angular_velocity_noise == (NoiseSpec(),) * 3 and imu.linear_acceleration_noise == (NoiseSpec(),) * 3
    assert np.array_equal(imu.pose_in_base.homogeneous, np.eye(4))


LEGACY = """<sensor name="s" type="imu"><imu><noise><type>gaussian</type>
  <rate><mean>0.01</mean><stddev>0.02</stddev><bias_mean>0.03</bias_mean><bias_stddev>0.04</bias_stddev></rate>
  <accel><mean>0.1</mean><stddev>0.2</stddev><bias_mean>0.3</bias_mean><bias_stddev>0.4</bias_stddev></accel>
</noise></imu></sensor>"""


def test_legacy_sdf_1_5_noise_applied_per_axis():
    imu = load_description(sdf_model(LEGACY, version="1.5")).imu
    assert imu.angular_velocity_noise == (NoiseSpec(NoiseType.GAUSSIAN, 0.01, 0.02, 0.03, 0.04),) * 3
    assert imu.linear_acceleration_noise == (NoiseSpec(NoiseType.GAUSSIAN, 0.1, 0.2, 0.3, 0.4),) * 3


def test_legacy_noise_ignored_from_1_6():
    imu = load_description(sdf_model(LEGACY, version="1.6")).imu
    assert imu.angular_velocity_noise == (NoiseSpec(),) * 3


def test_joint_hosted_sensor_is_relative_to_joint_and_on_child():
    src = """<sdf version="1.9"><model name="m"><link name="A"/>
      <link name="B"><pose>1 0 0 0 0 0</pose></link>
      <joint name="J" type="revolute"><pose>0 0 1 0 0 0</pose><parent>A</parent><child>B</child>
        <sensor name="s" type="imu"><pose>0 2 0 0 0 0</pose></sensor></joint></model></sdf>"""
    imu = load_description(src).imu
    # J at B*(0,0,1) = (1,0,1); sensor (0,2,0) in J -> (1,2,1) in model; in B: (0,2,1)
    assert imu.link == "B"
    np.testing.assert_allclose(imu.pose_in_link.translation, [0, 2, 1])
    np.testing.assert_allclose(imu.pose_in_base.translation, [1, 2, 1])


URDF_CHAIN = """<robot name="r">
  <link name="base"/><link name="mid"/><link name="imu_link"/><link name="leg"/>
  <joint name="j1" type="fixed"><parent link="base"/><child link="mid"/>
    <origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/></joint>
  <joint name="j2" type="fixed"><parent link="mid"/><child link="imu_link"/>
    <origin xyz="0 1 0" rpy="3.141592653589793 0 0"/></joint>
  <joint name="knee" type="revolute"><parent link="base"/><child link="leg"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  {gazebo}
</robot>"""


def test_urdf_lumping_composes_joint_origins():
    sensor = '<sensor name="s" type="imu"><pose>0 0 0.5 0 0 0</pose></sensor>'
    d = load_description(URDF_CHAIN.format(gazebo=f'<gazebo reference="imu_link">{sensor}</gazebo>'))
    imu = d.imu
    # lumped twice: imu_link -> mid -> base; X = j1 * j2 * (0,0,0.5)
    # j2*(0,0,.5): Rx(pi)(0,0,.5) + (0,1,0) = (0,1,-0.5); j1: Rz(90)(0,1,-0.5) + (1,0,0) = (0,0,-0.5)
    assert imu.link == "base"
    np.testing.assert_allclose(imu.pose_in_link.translation, [0, 0, -0.5], atol=1e-15)
    R = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]) @ np.diag([1.0, -1.0, -1.0])
    np.testing.assert_allclose(imu.R_base_imu, R, atol=1e-15)
    assert d.model.existFrame(imu.link) and d.model.existFrame("imu_link")


def test_urdf_relative_to_is_kept_and_preserved_joint_stops_lumping():
    sensor = '<sensor name="s" type="imu"><pose relative_to="imu_link">0 0 0.5 0 0 0</pose></sensor>'
    d = load_description(URDF_CHAIN.format(gazebo=f'<gazebo reference="mid">{sensor}</gazebo>'))
    np.testing.assert_allclose(d.imu.pose_in_base.translation, [0, 0, -0.5], atol=1e-15)
    g = (
        '<gazebo reference="j1"><preserveFixedJoint>true</preserveFixedJoint></gazebo>'
        '<gazebo reference="imu_link"><sensor name="s" type="imu"/></gazebo>'
    )
    imu = load_description(URDF_CHAIN.format(gazebo=g)).imu
    assert imu.link == "mid"  # lumped once only (into mid), j1 kept
    np.testing.assert_allclose(imu.pose_in_link.translation, [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(imu.pose_in_base.translation, [0, 0, 0], atol=1e-15)


def test_urdf_plugin_frame_names():
    # Gazebo Classic's IMU plugins (ROS 2 <frame_name>, ROS 1 <frameName>) name the messages' frame_id
    one = (
        '<gazebo reference="imu_link"><sensor name="s" type="imu">'
        '<plugin name="p" filename="libgazebo_ros_imu_sensor.so"><frame_name>imu_optical</frame_name></plugin>'
        "</sensor></gazebo>"
    )
    assert load_description(URDF_CHAIN.format(gazebo=one)).imu.frame_id == "imu_optical"
    # two plugins naming different frames: the last is taken, with a warning naming both
    two = one.replace(
        "</sensor>",
        '<plugin name="q" filename="libgazebo_ros_imu.so"><frameName>imu_link</frameName></plugin></sensor>',
    )
    with pytest.warns(DescriptionWarning, match=r"name different frames \['imu_optical', 'imu_link'\]"):
        assert load_description(URDF_CHAIN.format(gazebo=two)).imu.frame_id == "imu_link"
    # the sensor's own <frame_id> decides, with no warning
    chosen = two.replace('type="imu">', 'type="imu"><frame_id>imu_optical</frame_id>')
    assert load_description(URDF_CHAIN.format(gazebo=chosen)).imu.frame_id == "imu_optical"


def test_urdf_old_sensor_namespace_form_and_legacy_noise():
    g = (
        '<gazebo reference="base"><sensor:imu name="old"><update_rate>100</update_rate>'
        "<noise><type>gaussian</type><rate><stddev>0.5</stddev></rate></noise></sensor:imu></gazebo>"
    )
    src = URDF_CHAIN.format(gazebo=g).replace(
        '<robot name="r">',
        '<robot name="r" xmlns:sensor="http://playerstage.sourceforge.net/gazebo/xmlschema/#sensor">',
    )
    with pytest.warns(DescriptionWarning) as rec:
        imu = load_description(src).imu
    assert imu.name == "old" and imu.update_rate == 100.0
    np.testing.assert_allclose(imu.gyro_stddev(), [0.5] * 3)
    # libsdformat 14/15 knows neither (its URDF conversion emits SDFormat 1.11): both are flagged
    messages = [str(r.message) for r in rec]
    assert any("<sensor:imu>" in m for m in messages) and any("<imu><noise>" in m for m in messages)


def test_rotated_upside_down_imu_in_sdf():
    sensor = '<sensor name="s" type="imu"><pose degrees="true">0.1 0 -0.05 180 0 90</pose></sensor>'
    imu = load_description(sdf_model(sensor)).imu
    # R = Rz(90) Rx(180): x_S -> y_B, y_S -> x_B, z_S -> -z_B
    np.testing.assert_allclose(imu.R_base_imu, [[0, 1, 0], [1, 0, 0], [0, 0, -1]], atol=1e-15)
    np.testing.assert_allclose(imu.p_base_imu, [0.1, 0, -0.05])


def test_no_imu_and_two_imus():
    d = load_description(sdf_model(""))
    with pytest.raises(DescriptionError) as e:
        _ = d.imu
    assert e.value.codes == [ErrorCode.SENSOR_NOT_FOUND]
    two = '<sensor name="a" type="imu"/><sensor name="b" type="imu"/><sensor name="c" type="camera"/>'
    d = load_description(sdf_model(two))
    assert [i.name for i in d.imus] == ["a", "b"]
    with pytest.raises(DescriptionError, match=r"'a' \(link 'base'.*'b' \(link 'base'.*imu_name.*--imu NAME"):
        _ = d.imu
    assert d.imu_by_name("b").name == "b"


@pytest.mark.parametrize(
    "sensor",
    [
        '<sensor name="s" type="imu"><imu><angular_velocity><x><noise type="pink"/></x>'
        "</angular_velocity></imu></sensor>",
        '<sensor name="s" type="imu"><update_rate>fast</update_rate></sensor>',
        '<sensor name="s" type="imu"><imu><orientation_reference_frame><localization>XYZ</localization>'
        "</orientation_reference_frame></imu></sensor>",
        '<sensor name="s" type="imu"><pose relative_to="nowhere"/></sensor>',
    ],
)
def test_bad_imu_fields(sensor):
    with pytest.raises(DescriptionError):
        load_description(sdf_model(sensor))


# --- libsdformat rules checked against its source (parser_urdf.cc, noise.sdf, parser.cc) -----------------


@pytest.mark.parametrize(
    "flag",
    [
        "<preserveFixedJoint>yes</preserveFixedJoint>",  # libsdformat: "true"/"yes" any case, or "1"
        "<disableFixedJointLumping> True </disableFixedJointLumping>",
        '<preserveFixedJoint value="1"/>',  # GetKeyValueAsString: the value attribute first
    ],
)
def test_urdf_lumping_flags_read_as_libsdformat(flag):
    g = f'<gazebo reference="j1">{flag}</gazebo><gazebo reference="imu_link"><sensor name="s" type="imu"/></gazebo>'
    imu = load_description(URDF_CHAIN.format(gazebo=g)).imu
    # j1 kept: imu_link lumped into mid only, at j2's origin (0, 1, 0); in base: Rz(90)(0,1,0) + (1,0,0) = 0
    assert imu.link == "mid"
    np.testing.assert_allclose(imu.pose_in_link.translation, [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(imu.pose_in_base.translation, [0, 0, 0], atol=1e-15)


def test_urdf_lumping_flag_other_text_is_false():
    g = (
        '<gazebo reference="j1"><preserveFixedJoint>on</preserveFixedJoint></gazebo>'
        '<gazebo reference="imu_link"><sensor name="s" type="imu"/></gazebo>'
    )
    assert load_description(URDF_CHAIN.format(gazebo=g)).imu.link == "base"


@pytest.mark.parametrize("fmt", ["sdf", "urdf"])
def test_noise_without_type_attribute_is_an_error(fmt):
    # noise.sdf: //noise/@type is required; libsdformat refuses the file (ATTRIBUTE_MISSING) instead of
    # dropping the noise, so the numbers written here must not be silently ignored
    sensor = (
        '<sensor name="s" type="imu"><imu><angular_velocity><y><noise><type>gaussian</type>'
        "<stddev>0.01</stddev></noise></y></angular_velocity></imu></sensor>"
    )
    src = sdf_model(sensor) if fmt == "sdf" else URDF_CHAIN.format(gazebo=f'<gazebo reference="base">{sensor}</gazebo>')
    with pytest.raises(DescriptionError) as e:
        load_description(src)
    assert e.value.codes == [ErrorCode.ATTRIBUTE_MISSING]
    assert "angular_velocity y noise" in str(e.value) and '<noise type="gaussian">' in str(e.value)


@pytest.mark.parametrize("field", ["stddev", "bias_stddev", "dynamic_bias_stddev"])
def test_negative_noise_stddevs_are_errors(field):
    # noise.sdf gives these min="0.0"; libsdformat's Param validation refuses a smaller value
    sensor = (
        f'<sensor name="s" type="imu"><imu><linear_acceleration><z><noise type="gaussian"><{field}>-0.5</{field}>'
        "</noise></z></linear_acceleration></imu></sensor>"
    )
    with pytest.raises(DescriptionError) as e:
        load_description(sdf_model(sensor))
    assert e.value.codes == [ErrorCode.PARAMETER_ERROR]
    assert f"linear_acceleration z noise <{field}> is -0.5" in str(e.value)
    # negative mean and bias_mean are allowed (no min in noise.sdf)
    ok = sensor.replace(field, "mean")
    assert load_description(sdf_model(ok)).imu.linear_acceleration_noise[2].mean == -0.5


def test_negative_legacy_noise_stddev_is_an_error():
    legacy = LEGACY.replace("<stddev>0.2</stddev>", "<stddev>-0.2</stddev>")
    with pytest.raises(DescriptionError) as e:
        load_description(sdf_model(legacy, version="1.5"))
    assert e.value.codes == [ErrorCode.PARAMETER_ERROR] and "accel" in str(e.value)


def test_urdf_lumped_pose_in_degrees_warns_and_follows_the_attribute():
    sensor = '<sensor name="s" type="imu"><pose degrees="true">0 0 0.5 0 0 90</pose></sensor>'
    with pytest.warns(DescriptionWarning, match="radians"):
        imu = load_description(URDF_CHAIN.format(gazebo=f'<gazebo reference="imu_link">{sensor}</gazebo>')).imu
    # j1 * j2 * pose: translation as in test_urdf_lumping_composes_joint_origins (0, 0, -0.5);
    # rotation Rz(90) Rx(180) Rz(90) = diag(1, -1, -1)
    assert imu.link == "base"
    np.testing.assert_allclose(imu.pose_in_link.translation, [0, 0, -0.5], atol=1e-15)
    np.testing.assert_allclose(imu.R_base_imu, np.diag([1.0, -1.0, -1.0]), atol=1e-15)


@pytest.mark.parametrize(
    ("reference", "pose"),
    [
        ("base", '<pose degrees="true">0 0 0 0 0 90</pose>'),  # not lumped: libsdformat keeps the attribute
        ("imu_link", "<pose>0 0 0 0 0 1.5</pose>"),  # radians: read the same
        ("imu_link", '<pose relative_to="mid" degrees="true">0 0 0 0 0 90</pose>'),  # relative_to: kept
    ],
)
def test_urdf_pose_formats_libsdformat_reads_alike_do_not_warn(reference, pose):
    import warnings

    g = f'<gazebo reference="{reference}"><sensor name="s" type="imu">{pose}</sensor></gazebo>'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_description(URDF_CHAIN.format(gazebo=g))


@pytest.mark.parametrize("fmt", ["sdf", "urdf"])
@pytest.mark.parametrize(("sensor", "missing"), [('<sensor type="imu"/>', "name"), ('<sensor name="s"/>', "type")])
def test_sensor_name_and_type_are_required(fmt, sensor, missing):
    # sensor.sdf: name and type are required attributes (libsdformat ATTRIBUTE_MISSING), for any sensor
    src = sdf_model(sensor) if fmt == "sdf" else URDF_CHAIN.format(gazebo=f'<gazebo reference="mid">{sensor}</gazebo>')
    with pytest.raises(DescriptionError) as e:
        load_description(src)
    assert e.value.codes == [ErrorCode.ATTRIBUTE_MISSING] and f"no {missing} attribute" in str(e.value)
    assert e.value.problems[0].line is not None


def test_sensor_type_in_other_case_warns():
    # libsdformat's sdf::Sensor compares the type exactly: "IMU" is an invalid type there
    with pytest.warns(DescriptionWarning, match='write type="imu"') as rec:
        imu = load_description(sdf_model('<sensor name="s" type="IMU"/>')).imu
    assert imu.name == "s" and rec[0].filename == __file__  # attributed to the caller of load_description


def test_localization_in_lower_case_warns_and_is_read_upper():
    # gz-sensors compares "ENU"/"NED"/"NWU"/"CUSTOM" exactly; anything else keeps the initial orientation
    sensor = (
        '<sensor name="s" type="imu"><imu><orientation_reference_frame><localization>ned</localization>'
        "</orientation_reference_frame></imu></sensor>"
    )
    with pytest.warns(DescriptionWarning, match="upper case"):
        imu = load_description(sdf_model(sensor)).imu
    assert imu.localization is Localization.NED


def test_gz_frame_id_is_what_gz_sim_and_ros_gz_bridge_publish():
    # gz-sim names a sensor by its scoped name without the world (model::link::sensor), gz-sensors stamps
    # messages with it unless <gz_frame_id> is given, ros_gz_bridge turns "::" into "/"
    assert load_description(sdf_model('<sensor name="imu" type="imu"/>')).imu.gz_frame_id == "m/base/imu"
    nested = (
        '<sdf version="1.9"><model name="m"><link name="base"/>'
        '<model name="arm"><link name="l"><sensor name="s" type="imu"/></link></model>'
        '<joint name="j" type="fixed"><parent>base</parent><child>arm::l</child></joint></model></sdf>'
    )
    imu = load_description(nested).imu
    assert (imu.name, imu.frame_id, imu.gz_frame_id) == ("arm::s", "arm/s", "m/arm/l/s")
    given = '<sensor name="imu" type="imu"><gz_frame_id>robot::imu_frame</gz_frame_id></sensor>'
    imu = load_description(sdf_model(given)).imu
    assert imu.frame_id == "robot::imu_frame" and imu.gz_frame_id == "robot/imu_frame"


def test_gz_frame_id_of_joint_and_lumped_urdf_sensors():
    src = """<sdf version="1.9"><model name="m"><link name="A"/><link name="B"/>
      <joint name="J" type="revolute"><parent>A</parent><child>B</child>
        <sensor name="s" type="imu"/></joint></model></sdf>"""
    assert load_description(src).imu.gz_frame_id == "m/J/s"
    # URDF: the sensor moves to the link it is lumped into (libsdformat), the model is the robot
    g = '<gazebo reference="imu_link"><sensor name="s" type="imu"/></gazebo>'
    assert load_description(URDF_CHAIN.format(gazebo=g)).imu.gz_frame_id == "r/base/s"
    g = '<gazebo reference="knee"><sensor name="s" type="imu"/></gazebo>'
    assert load_description(URDF_CHAIN.format(gazebo=g)).imu.gz_frame_id == "r/knee/s"


# --- each included file keeps its own SDFormat version (libsdformat converts it before merging) ----------


def _write_include(tmp_path, version: str, body: str):
    (tmp_path / "part.sdf").write_text(f'<sdf version="{version}"><model name="part">{body}</model></sdf>')
    top = tmp_path / "top.sdf"
    top.write_text(
        '<sdf version="1.9"><model name="robot"><link name="base"/>'
        "<include><uri>part.sdf</uri></include>"
        '<joint name="mount" type="fixed"><parent>base</parent><child>part::A</child></joint></model></sdf>'
    )
    return top


def test_included_sdf_1_6_use_parent_model_frame_is_honoured(tmp_path):
    # sdf/1.7/1_6.convert turns use_parent_model_frame=true into xyz/@expressed_in="__model__" for that file
    body = (
        '<link name="A"/><link name="B"><pose>0 0 0 0 0 1.5707963267948966</pose></link>'
        '<joint name="J" type="revolute"><parent>A</parent><child>B</child>'
        "<axis><xyz>1 0 0</xyz><use_parent_model_frame>true</use_parent_model_frame></axis></joint>"
    )
    d = load_description(_write_include(tmp_path, "1.6", body))
    q = pin.neutral(d.model)
    q[d.model.joints[d.model.getJointId("part::J")].idx_q] = 0.5
    data = d.model.createData()
    pin.framesForwardKinematics(d.model, data, q)
    # B turns about the model's x axis: R = Rx(0.5) Rz(90 deg) (the joint frame's x would give Rz(90) Rx(0.5))
    c, s = np.cos(0.5), np.sin(0.5)
    Rx = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    Rz = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(data.oMf[d.model.getFrameId("part::B")].rotation, Rx @ Rz, atol=1e-12)


def test_included_sdf_1_5_legacy_imu_noise_is_converted(tmp_path):
    body = f'<link name="A">{LEGACY}</link>'
    imu = load_description(_write_include(tmp_path, "1.5", body)).imu
    assert imu.angular_velocity_noise == (NoiseSpec(NoiseType.GAUSSIAN, 0.01, 0.02, 0.03, 0.04),) * 3
    assert imu.linear_acceleration_noise == (NoiseSpec(NoiseType.GAUSSIAN, 0.1, 0.2, 0.3, 0.4),) * 3


def test_included_sdf_1_4_is_refused(tmp_path):
    with pytest.raises(DescriptionError) as e:
        load_description(_write_include(tmp_path, "1.4", '<link name="A"/>'))
    assert e.value.codes[0] is ErrorCode.VERSION_DEPRECATED and "part.sdf" in str(e.value)


@pytest.mark.parametrize("where", ["nested model", "joint"])
def test_sdf_1_5_legacy_noise_outside_top_model_links_is_not_converted(where):
    # sdf/1.6/1_5.convert matches (world/)model/link/sensor/imu only: elsewhere the <noise> is dropped
    if where == "nested model":
        body = (
            f'<link name="base"/><model name="n"><link name="L">{LEGACY}</link></model>'
            '<joint name="j" type="fixed"><parent>base</parent><child>n::L</child></joint>'
        )
    else:
        body = (
            '<link name="base"/><link name="B"/>'
            f'<joint name="j" type="revolute"><parent>base</parent><child>B</child>{LEGACY}</joint>'
        )
    with pytest.warns(DescriptionWarning, match="1_5.convert"):
        imu = load_description(f'<sdf version="1.5"><model name="m">{body}</model></sdf>').imu
    assert imu.angular_velocity_noise == (NoiseSpec(),) * 3 and imu.linear_acceleration_noise == (NoiseSpec(),) * 3


def test_urdf_sensor_on_a_lumped_fixed_joint_warns_and_is_kept_on_the_child():
    # parser_urdf.cc inserts <gazebo reference="joint"> blocks only into joints it keeps: a lumped fixed
    # joint's sensor is dropped there; we keep it on the joint's child (pose = the joint frame = child frame)
    g = '<gazebo reference="j2"><sensor name="s" type="imu"/></gazebo>'
    with pytest.warns(DescriptionWarning, match="lumps away"):
        imu = load_description(URDF_CHAIN.format(gazebo=g)).imu
    # imu_link lumped into base: j1 * j2 translation = Rz(90)(0,1,0) + (1,0,0) = (0,0,0)
    assert imu.link == "base"
    np.testing.assert_allclose(imu.pose_in_base.translation, [0, 0, 0], atol=1e-15)
