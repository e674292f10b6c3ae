"""Inputs as users have them (xacro, package:// and model:// URIs, <include>) and malformed input."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot_state_estimator.common.paths import BUNDLED_ROBOTS, config_dir, robot_description_path
from robot_state_estimator.description import DescriptionError, ErrorCode, load_description


def _codes(src) -> list[ErrorCode]:
    with pytest.raises(DescriptionError) as e:
        load_description(src)
    return e.value.codes


def test_paths():
    assert (config_dir() / "robots").is_dir()
    for robot in BUNDLED_ROBOTS:
        assert robot_description_path(robot).is_file()
    with pytest.raises(KeyError, match="known"):
        robot_description_path("nope")


def test_package_uri_to_example_robot_data():
    d = load_description("package://example-robot-data/robots/solo_description/robots/solo12.urdf")
    assert d.name == "solo" and len(d.joint_names) == 12


def test_xacro_string_with_find():
    src = (
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="go1">'
        '<xacro:include filename="$(find example-robot-data)/robots/go1_description/urdf/go1.urdf"/>'
        '<xacro:property name="rate" value="${250*2}"/>'
        '<gazebo reference="imu_link"><sensor name="i" type="imu"><update_rate>${rate}</update_rate></sensor>'
        "</gazebo></robot>"
    )
    d = load_description(src)
    assert d.imu.update_rate == 500.0 and d.imu.link == "base"


def test_model_uri_include(tmp_path: Path, monkeypatch):
    model_dir = tmp_path / "models" / "sensor_box"
    model_dir.mkdir(parents=True)
    (model_dir / "model.config").write_text(
        '<?xml version="1.0"?><model><name>sensor_box</name><sdf version="1.9">box.sdf</sdf></model>'
    )
    (model_dir / "box.sdf").write_text(
        '<sdf version="1.9"><model name="box"><link name="shell"><pose>0 0 0.1 0 0 0</pose>'
        '<sensor name="imu" type="imu"/></link></model></sdf>'
    )
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "models"))
    src = (
        '<sdf version="1.9"><model name="robot"><link name="base"/>'
        "<include><uri>model://sensor_box</uri><name>box1</name><pose>1 0 0 0 0 0</pose></include>"
        '<joint name="mount" type="fixed"><parent>base</parent><child>box1::shell</child></joint>'
        "</model></sdf>"
    )
    d = load_description(src)
    # include pose places box1 at (1,0,0); shell (0,0,0.1) inside; sensor default relative to shell
    assert d.imu.name == "box1::imu" and d.imu.frame_id == "box1/imu" and d.imu.link == "box1::shell"
    assert d.imu.pose_in_base.translation.tolist() == [1.0, 0.0, 0.1]
    bad = src.replace("model://sensor_box", "model://missing_box")
    with pytest.raises(DescriptionError, match="model://missing_box") as e:
        load_description(bad)
    assert ErrorCode.URI_LOOKUP in e.value.codes


@pytest.mark.parametrize(
    ("src", "code"),
    [
        ("this is not xml", ErrorCode.FILE_READ),  # not XML text and no such file
        ("<robot name='r'><link name='a'></robot>", ErrorCode.XML_ERROR),
        ("<mujoco/>", ErrorCode.ELEMENT_INCORRECT_TYPE),
        ("<sdf version='1.9'/>", ErrorCode.ELEMENT_MISSING),
        ("<sdf version='0.9'><model name='m'><link name='a'/></model></sdf>", ErrorCode.VERSION_DEPRECATED),
        ("package://no_such_package/robot.urdf", ErrorCode.URI_LOOKUP),
        ("<robot name='r'/>", ErrorCode.MODEL_CANONICAL_LINK_INVALID),
        (
            "<robot name='r'><link name='a'/><joint name='j' type='fixed'><parent link='a'/>"
            "<child link='b'/></joint></robot>",
            ErrorCode.JOINT_CHILD_LINK_INVALID,
        ),
        ("<robot name='r'><link name='a'/><link name='a'/></robot>", ErrorCode.DUPLICATE_NAME),
        (
            "<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='fixed'><parent link='a'/>"
            "<child link='b'/><origin xyz='1 2'/></joint></robot>",
            ErrorCode.PARAMETER_ERROR,  # a malformed URDF number (urdf_numbers)
        ),
        (
            "<robot name='r'><link name='a'/><gazebo reference='ghost'><sensor name='s' type='imu'/></gazebo></robot>",
            ErrorCode.ELEMENT_INVALID,
        ),
        (
            "<robot name='r'><link name='a'/><gazebo reference='a'><sensor name='s' type='imu'>"
            "<pose relative_to='ghost'/></sensor></gazebo></robot>",
            ErrorCode.POSE_RELATIVE_TO_INVALID,
        ),
        (
            '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
            '<xacro:include filename="$(find no_such_pkg)/x.urdf"/></robot>',
            ErrorCode.URI_LOOKUP,
        ),
    ],
)
def test_malformed(src, code):
    assert code in _codes(src)


def test_missing_file(tmp_path: Path):
    assert _codes(tmp_path / "nope.urdf") == [ErrorCode.FILE_READ]


def test_xml_error_has_line(tmp_path: Path):
    f = tmp_path / "bad.sdf"
    f.write_text('<sdf version="1.9">\n<model name="m">\n<link name="a">\n</model>\n</sdf>\n')
    with pytest.raises(DescriptionError) as e:
        load_description(f)
    p = e.value.problems[0]
    assert p.code is ErrorCode.XML_ERROR and p.line == 4 and p.file == str(f)


def test_base_link_option():
    src = (
        "<robot name='r'><link name='a'/><link name='b'/><joint name='j' type='fixed'><parent link='a'/>"
        "<child link='b'/></joint></robot>"
    )
    assert load_description(src, base_link="a").base_link == "a"
    assert ErrorCode.MODEL_CANONICAL_LINK_INVALID in _codes_kw(src, base_link="b")


def _codes_kw(src, **kw):
    with pytest.raises(DescriptionError) as e:
        load_description(src, **kw)
    return e.value.codes


def test_foot_frames_given_and_unknown():
    d = load_description(robot_description_path("go1"))
    assert d.foot_frames(["FL_foot", "RR_foot"]) == ("FL_foot", "RR_foot")
    with pytest.raises(DescriptionError, match="nope"):
        d.foot_frames(["FL_foot", "nope"])


def test_an_empty_urdf_says_it_has_no_link_and_a_cycle_names_no_root():
    with pytest.raises(DescriptionError, match=r"URDF has no <link>"):
        load_description("<robot name='r'/>")
    cycle = (
        "<robot name='r'><link name='a'/><link name='b'/>"
        "<joint name='ab' type='fixed'><parent link='a'/><child link='b'/></joint>"
        "<joint name='ba' type='fixed'><parent link='b'/><child link='a'/></joint></robot>"
    )
    with pytest.raises(DescriptionError, match=r"exactly one root link, found \[\]"):
        load_description(cycle)


def _go1_urdf_text() -> str:
    from robot_state_estimator.description import load_description as _load

    return _load(str(robot_description_path("go1"))).xml


def test_description_text_that_is_not_xml_is_an_xml_error_not_a_missing_file():
    for text in ("this is <not xml", "robot\nwithout elements"):
        with pytest.raises(DescriptionError, match="does not start with an XML element") as e:
            load_description(text)
        assert e.value.codes == [ErrorCode.XML_ERROR]


def test_a_long_source_is_cut_in_the_message():
    with pytest.raises(DescriptionError) as e:
        load_description("x" * 300)  # no '<': a path, too long for the file system (was a raw OSError)
    assert e.value.codes == [ErrorCode.FILE_READ] and len(str(e.value)) < 300
    with pytest.raises(DescriptionError) as e:
        load_description("x" * 60_000)  # longer than any path: description text, and not XML
    assert e.value.codes == [ErrorCode.XML_ERROR] and len(str(e.value)) < 300


def test_a_byte_order_mark_and_leading_lines_before_the_declaration_are_accepted(tmp_path: Path):
    # tinyxml2 (libsdformat, urdfdom) skips leading whitespace before <?xml ...?>; expat alone refuses it
    xml = _go1_urdf_text()
    assert xml.startswith("<?xml")
    reference = load_description(xml)
    for text in ("\ufeff" + xml, "\n\n  " + xml, "\ufeff\n" + xml):
        d = load_description(text)
        assert d.model.nq == reference.model.nq and d.imu.frame_id == reference.imu.frame_id
    f = tmp_path / "bom.urdf"
    f.write_text("\ufeff" + xml, encoding="utf-8")
    assert load_description(str(f)).model.nq == reference.model.nq
    # the blanked declaration keeps the line numbers: an error on the 3rd line is reported there
    bad = "\n<?xml version='1.0'?>\n<robot name='r'><link name='a'>\n</robot>"
    with pytest.raises(DescriptionError) as e:
        load_description(bad)
    assert e.value.problems[0].code is ErrorCode.XML_ERROR and e.value.problems[0].line == 4
