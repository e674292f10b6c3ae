"""Malformed URDF numbers are refused before pinocchio (urdfdom only prints most of them and goes on).

Expected values come from the test inputs themselves (the offending text, its line counted in the string) and
from urdfdom 6.0's behaviour measured through pinocchio on the same inputs (stderr messages, mass 0 links).
"""

from __future__ import annotations

import pinocchio as pin
import pytest

from robot_state_estimator.description import DescriptionError, ErrorCode, load_description
from robot_state_estimator.description.pose import PoseTextError, parse_urdf_double, parse_urdf_vector
from robot_state_estimator.description.xml_input import read_text

INERTIA = 'ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"'


def robot(link_a: str = "", joint: str = "", top: str = "") -> str:
    """Two links a -> b with a revolute joint; ``link_a`` replaces a's body, ``joint`` is appended to j."""
    a = link_a or f'<inertial><mass value="1"/><inertia {INERTIA}/></inertial>'
    return (
        f'<robot name="r">{top}\n'
        f'<link name="a">{a}</link>\n'
        f'<link name="b"><inertial><mass value="2"/><inertia {INERTIA}/></inertial></link>\n'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
        f'{joint or """<origin xyz="0 0 0.1"/><axis xyz="1 0 0"/>"""}'
        '<limit lower="-1" upper="1" effort="10" velocity="5"/></joint>\n'
        "</robot>"
    )


def only_problem(src) -> object:
    with pytest.raises(DescriptionError) as info:
        load_description(src)
    assert len(info.value.problems) == 1, info.value.problems
    return info.value.problems[0]


# urdfdom 6.0 measured: these are what it accepts ...
ACCEPTED = {"1": 1.0, " 1": 1.0, "+1": 1.0, "-1": -1.0, ".5": 0.5, "5.": 5.0, "1e5": 1e5, "1E+05": 1e5, "1.e5": 1e5}
# ... and these it refuses ("is not a float"): trailing space, incomplete exponent, nan/inf, hex, '_', overflow.
REFUSED = ["1 ", "1e", "e5", "nan", "inf", "-inf", "0x10", "1_0", "1,5", "1e400", "", " ", "5.2O4", "1d5"]


@pytest.mark.parametrize(("text", "value"), sorted(ACCEPTED.items()))
def test_urdf_double_accepts_what_urdfdom_accepts(text, value):
    assert parse_urdf_double(text) == value


@pytest.mark.parametrize("text", REFUSED)
def test_urdf_double_refuses_what_urdfdom_refuses(text):
    with pytest.raises(PoseTextError):
        parse_urdf_double(text)


def test_urdf_vector_splits_at_spaces_only():
    assert list(parse_urdf_vector(" 0  1 2 ")) == [0.0, 1.0, 2.0]
    for text in ("0\t1 2", "0,1,2", "0 1", "0 1 2 3", ""):  # urdfdom: "Parser found k elements" / bad component
        with pytest.raises(PoseTextError):
            parse_urdf_vector(text)


@pytest.mark.parametrize("mass", ["abc", "5.2O4", "1 ", "nan"])
def test_single_link_bad_mass_is_refused(mass):
    inertial = f'<inertial>\n<mass value="{mass}"/><inertia {INERTIA}/></inertial>'
    src = f'<robot name="r">\n<link name="a">{inertial}</link>\n</robot>'
    # What pinocchio alone does: the load succeeds with the link's mass 0 (the bug this guards against).
    assert pin.buildModelFromXML(src, pin.JointModelFreeFlyer()).inertias[1].mass == 0.0
    p = only_problem(src)
    assert p.code is ErrorCode.PARAMETER_ERROR
    assert (p.element, p.name, p.line) == ("link", "a", 3)
    assert f'<inertial><mass value="{mass}">' in p.message and "mass 0" in p.message


def test_negative_mass_is_refused_as_gazebo_does():
    inertial = f'<inertial>\n<mass value="-1.5"/><inertia {INERTIA}/></inertial>'
    src = f'<robot name="r">\n<link name="a">{inertial}</link>\n</robot>'
    # What pinocchio alone does: a body of -1.5 kg (libsdformat's Link::Load refuses it: "invalid inertia")
    assert pin.buildModelFromXML(src, pin.JointModelFreeFlyer()).inertias[1].mass == -1.5
    p = only_problem(src)
    assert p.code is ErrorCode.LINK_INERTIA_INVALID
    assert (p.element, p.name, p.line) == ("link", "a", 3)
    assert "-1.5 kg < 0" in p.message


def test_go1_trunk_mass_typo_names_file_and_line(tmp_path):
    text, _ = read_text("config/robots/go1.urdf.xacro")
    assert text.count('<mass value="5.204"/>') == 1  # the trunk's mass in example-robot-data's go1.urdf
    bad = text.replace('<mass value="5.204"/>', '<mass value="5.2O4"/>')
    line = bad[: bad.index('value="5.2O4"')].count("\n") + 1
    path = tmp_path / "go1.urdf"
    path.write_text(bad)
    p = only_problem(path)
    assert p.code is ErrorCode.PARAMETER_ERROR
    assert (p.element, p.name, p.line, p.file) == ("link", "trunk", line, str(path.resolve()))
    assert '<inertial><mass value="5.2O4">' in p.message
    assert f"{path.resolve()}:{line}" in str(p)


def test_xacro_input_goes_through_the_check():
    src = (
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><xacro:property name="m" value="1.5x"/>'
        f'<link name="a"><inertial><mass value="${{m}}"/><inertia {INERTIA}/></inertial></link></robot>'
    )
    p = only_problem(src)
    assert p.code is ErrorCode.PARAMETER_ERROR and p.name == "a" and '"1.5x"' in p.message


BAD_CASES = [
    # (link a's body or "", joint body or "", top-level, element, name, attribute text in the message)
    (
        f'<inertial><mass value="1"/><inertia {INERTIA.replace("0.1", "0.1x", 1)}/></inertial>',
        "",
        "",
        "link",
        "a",
        'ixx="0.1x"',
    ),
    (
        f'<inertial><origin xyz="0 0 a"/><mass value="1"/><inertia {INERTIA}/></inertial>',
        "",
        "",
        "link",
        "a",
        'xyz="0 0 a"',
    ),
    (
        f'<inertial><origin rpy="0 0"/><mass value="1"/><inertia {INERTIA}/></inertial>',
        "",
        "",
        "link",
        "a",
        'rpy="0 0"',
    ),
    (
        '<visual><origin xyz="0 0 b"/><geometry><box size="1 1 1"/></geometry></visual>',
        "",
        "",
        "link",
        "a",
        'xyz="0 0 b"',
    ),
    ('<visual><geometry><box size="1 1 x"/></geometry></visual>', "", "", "link", "a", 'size="1 1 x"'),
    (
        '<visual><geometry><box size="1 1 1"/></geometry>'
        '<material name="m"><color rgba="1 0 0 2"/></material></visual>',
        "",
        "",
        "link",
        "a",
        'rgba="1 0 0 2"',
    ),
    (
        '<collision><origin rpy="0 0 O"/><geometry><sphere radius="1"/></geometry></collision>',
        "",
        "",
        "link",
        "a",
        'rpy="0 0 O"',
    ),
    ('<collision><geometry><sphere radius="0.0z"/></geometry></collision>', "", "", "link", "a", 'radius="0.0z"'),
    (
        '<collision><geometry><cylinder radius="1" length="x"/></geometry></collision>',
        "",
        "",
        "link",
        "a",
        'length="x"',
    ),
    (
        '<collision><geometry><mesh filename="m.stl" scale="1 1 x"/></geometry></collision>',
        "",
        "",
        "link",
        "a",
        'scale="1 1 x"',
    ),
    ("", '<origin xyz="0 0 0.1q"/>', "", "joint", "j", 'xyz="0 0 0.1q"'),
    ("", '<origin xyz=""/>', "", "joint", "j", 'xyz=""'),
    ("", '<axis xyz="1 0 O"/>', "", "joint", "j", 'xyz="1 0 O"'),
    ("", '<dynamics damping="0.1x" friction="0"/>', "", "joint", "j", 'damping="0.1x"'),
    ("", '<dynamics friction="abc"/>', "", "joint", "j", 'friction="abc"'),
    ("", '<calibration rising="x"/>', "", "joint", "j", 'rising="x"'),
    ("", '<safety_controller k_velocity="1" soft_lower_limit="a"/>', "", "joint", "j", 'soft_lower_limit="a"'),
    ("", '<mimic joint="j" multiplier="x"/>', "", "joint", "j", 'multiplier="x"'),
    ("", "", '<material name="m"><color rgba="1 0 x 1"/></material>', "material", "m", 'rgba="1 0 x 1"'),
]


@pytest.mark.parametrize(("link_a", "joint", "top", "element", "name", "text"), BAD_CASES)
def test_every_urdfdom_number_is_checked(link_a, joint, top, element, name, text):
    p = only_problem(robot(link_a, joint, top))
    assert p.code is ErrorCode.PARAMETER_ERROR
    assert (p.element, p.name) == (element, name) and text in p.message, p.message


def test_limit_numbers_are_checked():
    src = robot().replace('effort="10"', 'effort="1O"').replace('lower="-1"', 'lower="-1a"')
    with pytest.raises(DescriptionError) as info:
        load_description(src)
    assert info.value.codes == [ErrorCode.PARAMETER_ERROR, ErrorCode.PARAMETER_ERROR]
    assert 'lower="-1a"' in info.value.problems[0].message and 'effort="1O"' in info.value.problems[1].message
    assert all(p.line == 4 for p in info.value.problems)  # the <joint> line of robot()


@pytest.mark.parametrize(
    ("inertial", "code", "text"),
    [
        (f"<inertia {INERTIA}/>", ErrorCode.ELEMENT_MISSING, "no <mass>"),
        (f"<mass/><inertia {INERTIA}/>", ErrorCode.ATTRIBUTE_MISSING, "no value attribute"),
        ('<mass value="1"/>', ErrorCode.ELEMENT_MISSING, "no <inertia>"),
        ('<mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0"/>', ErrorCode.ATTRIBUTE_MISSING, "izz"),
    ],
)
def test_incomplete_inertial_is_refused(inertial, code, text):
    # urdfdom drops such an <inertial> with a message on stderr: mass 0 (measured: "Inertial element must have
    # a mass element", "inertia element missing izz attribute").
    p = only_problem(robot(f"<inertial>{inertial}</inertial>"))
    assert p.code is code and p.name == "a" and text in p.message


def test_all_number_problems_are_listed_together():
    src = robot(
        f'<inertial><mass value="x"/><inertia {INERTIA}/></inertial>', '<origin xyz="0 0 q"/><axis xyz="1 0 0"/>'
    ).replace('<link name="b">', '<link name="b"><visual><geometry><sphere radius="r"/></geometry></visual>')
    with pytest.raises(DescriptionError) as info:
        load_description(src)
    assert info.value.codes == [ErrorCode.PARAMETER_ERROR] * 3
    assert [p.name for p in info.value.problems] == ["a", "b", "j"]


def test_good_numbers_load_with_their_values():
    src = robot(
        f'<inertial><origin xyz=" 0 0  0.5 "/><mass value="+2.5e0"/><inertia {INERTIA}/></inertial>',
        '<origin xyz=".1 0 5." rpy="0 0 0"/><axis xyz="0 0 1"/><dynamics damping="0.25"/>',
    )
    desc = load_description(src)
    assert desc.model.inertias[1].mass == 2.5 and list(desc.model.inertias[1].lever) == [0.0, 0.0, 0.5]
    assert list(desc.model.jointPlacements[2].translation) == [0.1, 0.0, 5.0]


def test_total_mass_backstop_catches_a_dropped_inertial():
    # A literal tab inside an attribute: the XML parser here normalises it to a space ("0 0 0" is fine), urdfdom
    # (tinyxml2) keeps it and cannot read "0\t0" (measured), so it drops the <inertial>: pinocchio's model is
    # 1 kg lighter than the <inertial> masses (1 + 2 kg), which the loader refuses.
    src = robot(f'<inertial><origin xyz="0\t0 0"/><mass value="1"/><inertia {INERTIA}/></inertial>')
    p = only_problem(src)
    assert p.code is ErrorCode.PARSING_ERROR
    assert "weighs 2.0 kg" in p.message and "sum to 3.0 kg" in p.message


def test_axis_of_a_fixed_joint_is_not_read():
    # urdfdom reads <axis> only for joints that are not fixed or floating (measured: a fixed joint with
    # <axis xyz="1 0 O"> loads), so it is not checked there.
    src = robot().replace('type="revolute"', 'type="fixed"').replace('<axis xyz="1 0 0"/>', '<axis xyz="1 0 O"/>')
    assert load_description(src).model.nq == 7
