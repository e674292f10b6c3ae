"""libsdformat frame-semantics cases (reconstructed from its test/integration/frame.cc, model_dom.cc and
the SDFormat 1.7/1.8 pose-frame-semantics proposals). Expected poses are worked out by hand in comments."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.description import DescriptionError, ErrorCode, load_description

PI2 = np.pi / 2


def Rz(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def Ry(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def Rx(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def assert_pose(X: pin.SE3, p, R=None, atol=1e-12) -> None:
    R = np.eye(3) if R is None else R
    np.testing.assert_allclose(X.translation, p, atol=atol)
    np.testing.assert_allclose(X.rotation, R, atol=atol)


def sdf(body: str, version: str = "1.9", attrs: str = "") -> str:
    return f'<sdf version="{version}"><model name="m"{attrs}>{body}</model></sdf>'


def codes(src: str) -> list[ErrorCode]:
    with pytest.raises(DescriptionError) as e:
        load_description(src)
    return e.value.codes


TWO_LINKS = """
<link name="L1"><pose>1 0 0 0 0 0</pose></link>
<link name="L2"><pose>2 0 0 0 0 1.5707963267948966</pose></link>
<joint name="J" type="revolute"><pose>0 1 0 0 0 0</pose><parent>L1</parent><child>L2</child>
  <axis><xyz>0 0 1</xyz></axis></joint>
"""


def test_implicit_frames_and_joint_default_relative_to_child():
    d = load_description(sdf(TWO_LINKS))
    # link poses default to __model__
    assert_pose(d.resolve_pose("L1"), [1, 0, 0])
    assert_pose(d.resolve_pose("L2"), [2, 0, 0], Rz(PI2))
    # joint pose is in its child L2: X_M_J = X_M_L2 * (0 1 0) -> 2 + Rz(90)(0,1,0) = (2-1, 0) = (1, 0, 0)
    assert_pose(d.resolve_pose("J"), [1, 0, 0], Rz(PI2))
    # relative to L1 (at x=1): (0, 0, 0) and yaw 90
    assert_pose(d.resolve_pose("J", "L1"), [0, 0, 0], Rz(PI2))
    # L1 in L2: X_L2_L1 = X_M_L2^-1 X_M_L1: p = Rz(-90) (1-2, 0, 0) = (0, 1, 0)
    assert_pose(d.resolve_pose("L1", "L2"), [0, 1, 0], Rz(-PI2))
    assert d.frame_body("J") == "L2"
    assert d.frame_body("__model__") == "L1"  # first link is canonical


def test_resolve_self_is_exact_identity():
    d = load_description(sdf(TWO_LINKS))
    for f in ("L1", "L2", "J", "__model__"):
        X = d.resolve_pose(f, f)
        assert np.array_equal(X.homogeneous, np.eye(4))


def test_frame_attached_to_chain_through_joint_and_frames():
    body = (
        TWO_LINKS
        + """
    <frame name="F1" attached_to="J"><pose>0 0 1 0 0 0</pose></frame>
    <frame name="F2" attached_to="F1"><pose>1 0 0 0 0 0</pose></frame>
    <frame name="F3"><pose relative_to="F2">0 0 0 0 0 0</pose></frame>
    """
    )
    d = load_description(sdf(body))
    # F1 default relative_to = attached_to = J (at (1,0,0), yaw 90): X_M_F1 = (1, 0, 1), yaw 90
    assert_pose(d.resolve_pose("F1"), [1, 0, 1], Rz(PI2))
    # F2 relative to F1: (1,0,0) in F1's axes = (0,1,0) in M -> (1, 1, 1)
    assert_pose(d.resolve_pose("F2"), [1, 1, 1], Rz(PI2))
    assert d.frame_body("F1") == "L2"  # a frame attached to a joint moves with the joint's child
    assert d.frame_body("F2") == "L2"
    # F3 has no attached_to: attached to __model__ -> canonical link L1, though posed relative to F2
    assert d.frame_body("F3") == "L1"
    assert_pose(d.resolve_pose("F3"), [1, 1, 1], Rz(PI2))


def test_attached_to_and_relative_to_are_independent():
    body = TWO_LINKS + '<frame name="F" attached_to="L2"><pose relative_to="L1">0 0 3 0 0 0</pose></frame>'
    d = load_description(sdf(body))
    assert d.frame_body("F") == "L2"
    assert_pose(d.resolve_pose("F"), [1, 0, 3])
    # in L2 (at (2,0,0) yaw 90): p = Rz(-90)(1-2, 0, 3) = (0, 1, 3)
    assert_pose(d.resolve_pose("F", "L2"), [0, 1, 3], Rz(-PI2))


def test_link_relative_to_frame_and_joint_relative_to_model():
    body = """
    <frame name="F"><pose>0 0 1 0 0 1.5707963267948966</pose></frame>
    <link name="A"/>
    <link name="B"><pose relative_to="F">1 0 0 0 0 0</pose></link>
    <joint name="J" type="fixed"><pose relative_to="__model__">0 0 2 0 0 0</pose>
      <parent>A</parent><child>B</child></joint>
    """
    d = load_description(sdf(body))
    # B = F * (1,0,0) = (0,0,1) + Rz(90)(1,0,0) = (0, 1, 1), yaw 90
    assert_pose(d.resolve_pose("B"), [0, 1, 1], Rz(PI2))
    assert_pose(d.resolve_pose("J"), [0, 0, 2])
    # J in B: Rz(-90)((0,0,2)-(0,1,1)) = Rz(-90)(0,-1,1) = (-1, 0, 1)
    assert_pose(d.resolve_pose("J", "B"), [-1, 0, 1], Rz(-PI2))


def test_nested_model_scopes_and_relative_to():
    body = """
    <link name="base"/>
    <model name="arm"><pose>1 0 0 0 0 1.5707963267948966</pose>
      <link name="upper"><pose>0 1 0 0 0 0</pose></link>
      <frame name="tip" attached_to="upper"><pose>0 0 1 0 0 0</pose></frame>
      <model name="hand"><pose relative_to="upper">0 0 2 0 0 0</pose><link name="palm"/></model>
      <joint name="wrist" type="fixed"><parent>upper</parent><child>hand::palm</child></joint>
    </model>
    <joint name="mount" type="fixed"><parent>base</parent><child>arm::upper</child></joint>
    <frame name="at_tip" attached_to="arm::tip"/>
    <frame name="at_palm" attached_to="arm::hand::palm"><pose relative_to="arm">0 0 0 0 0 0</pose></frame>
    """
    d = load_description(sdf(body))
    # arm at (1,0,0) yaw 90; upper (0,1,0) in arm -> (1,0,0)+(-1,0,0) = (0, 0, 0)
    assert_pose(d.resolve_pose("arm"), [1, 0, 0], Rz(PI2))
    assert_pose(d.resolve_pose("arm::upper"), [0, 0, 0], Rz(PI2))
    assert_pose(d.resolve_pose("arm::tip"), [0, 0, 1], Rz(PI2))
    # hand relative to upper: (0,0,2) -> palm at (0,0,2)
    assert_pose(d.resolve_pose("arm::hand::palm"), [0, 0, 2], Rz(PI2))
    # "__model__" inside arm means arm: tip relative to arm: Rz(-90)((0,0,1)-(1,0,0)) = (0, 1, 1)
    assert_pose(d.resolve_pose("arm::tip", "arm"), [0, 1, 1])
    assert_pose(d.resolve_pose("at_tip"), [0, 0, 1], Rz(PI2))
    assert d.frame_body("at_tip") == "arm::upper"
    assert d.frame_body("arm") == "arm::upper"  # nested model frame attached to its first link
    assert d.frame_body("at_palm") == "arm::hand::palm"
    assert_pose(d.resolve_pose("at_palm"), [1, 0, 0], Rz(PI2))
    assert d.model.existFrame("arm::hand::palm") and d.model.existFrame("arm::tip")


def test_scoped_references_reach_down_not_up():
    body = """
    <link name="base"/>
    <model name="arm"><link name="upper"/>
      <frame name="bad" attached_to="base"/>
    </model>
    """
    assert ErrorCode.FRAME_ATTACHED_TO_INVALID in codes(sdf(body))


def test_canonical_link_explicit_first_link_and_nested():
    body = (
        '<link name="A"><pose>1 0 0 0 0 0</pose></link><link name="B"><pose>2 0 0 0 0 0</pose></link>'
        '<joint name="j" type="fixed"><parent>B</parent><child>A</child></joint>'
    )
    d = load_description(sdf(body, attrs=' canonical_link="B"'))
    assert d.frame_body("__model__") == "B" and d.base_link == "B"
    assert d.frame_body("A") == "A"
    # a model without links: canonical = first nested model's canonical link (1.8, scoped)
    body = (
        '<model name="n1"><link name="x"/></model><model name="n2"><link name="y"/></model>'
        '<joint name="j" type="fixed"><parent>n1::x</parent><child>n2::y</child></joint>'
    )
    d = load_description(sdf(body))
    assert d.frame_body("__model__") == "n1::x" and d.base_link == "n1::x"
    # explicit nested canonical link
    body = (
        '<model name="n1"><link name="x"/><link name="z"/>'
        '<joint name="j" type="fixed"><parent>z</parent><child>x</child></joint></model>'
    )
    d = load_description(sdf(body, attrs=' canonical_link="n1::z"'))
    assert d.frame_body("__model__") == "n1::z"
    assert ErrorCode.MODEL_CANONICAL_LINK_INVALID in codes(sdf("<link name='A'/>", attrs=' canonical_link="nope"'))
    assert ErrorCode.MODEL_WITHOUT_LINK in codes(sdf("<frame name='F'/>"))


def test_placement_frame_of_nested_model():
    body = """
    <link name="base"/>
    <model name="n" placement_frame="p"><pose>0 0 1 0 0 0</pose>
      <link name="l"><pose>1 0 0 0 0 0</pose></link>
      <frame name="p" attached_to="l"><pose relative_to="l">0 0 0 0 0 1.5707963267948966</pose></frame>
    </model>
    <joint name="j" type="fixed"><parent>base</parent><child>n::l</child></joint>
    """
    d = load_description(sdf(body), base_link="base")
    # the pose places p: X_M_p = (0,0,1). X_n_p = (1,0,0) yaw 90 -> X_M_n = X_M_p X_n_p^-1:
    # R = Rz(-90), p = (0,0,1) - Rz(-90)(1,0,0) = (0,0,1) - (0,-1,0) = (0, 1, 1)
    assert_pose(d.resolve_pose("n::p"), [0, 0, 1])
    assert_pose(d.resolve_pose("n"), [0, 1, 1], Rz(-PI2))
    # l = X_M_n (1,0,0): p = (0,1,1) + Rz(-90)(1,0,0) = (0,0,1), R = Rz(-90)
    assert_pose(d.resolve_pose("n::l"), [0, 0, 1], Rz(-PI2))
    bad = body.replace('placement_frame="p"', 'placement_frame="q"')
    assert ErrorCode.MODEL_PLACEMENT_FRAME_INVALID in codes(sdf(bad))


def test_pose_formats_quaternion_and_degrees():
    body = """
    <link name="A"><pose rotation_format="quat_xyzw">1 2 3 0 0 0.7071067811865476 0.7071067811865476</pose></link>
    <link name="B"><pose degrees="true">0 0 0 90 0 0</pose></link>
    <link name="C"><pose>0 0 0 0.1 0.2 0.3</pose></link>
    <joint name="j1" type="fixed"><parent>A</parent><child>B</child></joint>
    <joint name="j2" type="fixed"><parent>A</parent><child>C</child></joint>
    """
    d = load_description(sdf(body))
    assert_pose(d.resolve_pose("A"), [1, 2, 3], Rz(PI2))
    assert_pose(d.resolve_pose("B"), [0, 0, 0], Rx(PI2))
    # fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)
    assert_pose(d.resolve_pose("C"), [0, 0, 0], Rz(0.3) @ Ry(0.2) @ Rx(0.1))


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ('<link name="A"/><frame name="F" attached_to="nope"/>', ErrorCode.FRAME_ATTACHED_TO_INVALID),
        ('<link name="A"/><frame name="F" attached_to="F"/>', ErrorCode.FRAME_ATTACHED_TO_CYCLE),
        (
            '<link name="A"/><frame name="F" attached_to="G"/><frame name="G" attached_to="F"/>',
            ErrorCode.FRAME_ATTACHED_TO_CYCLE,
        ),
        ('<link name="A"><pose relative_to="nope"/></link>', ErrorCode.POSE_RELATIVE_TO_INVALID),
        ('<link name="A"><pose relative_to="A"/></link>', ErrorCode.POSE_RELATIVE_TO_CYCLE),
        (
            '<link name="A"><pose relative_to="F"/></link><frame name="F"><pose relative_to="A"/></frame>',
            ErrorCode.POSE_RELATIVE_TO_CYCLE,
        ),
        (
            '<link name="A"/><link name="B"/><joint name="J" type="fixed"><parent>A</parent><child>C</child></joint>',
            ErrorCode.JOINT_CHILD_LINK_INVALID,
        ),
        (
            '<link name="A"/><link name="B"/><joint name="J" type="fixed"><parent>C</parent><child>B</child></joint>',
            ErrorCode.JOINT_PARENT_LINK_INVALID,
        ),
        (
            '<link name="A"/><joint name="J" type="fixed"><parent>A</parent><child>A</child></joint>',
            ErrorCode.JOINT_PARENT_SAME_AS_CHILD,
        ),
        ('<link name="A"/><link name="A"/>', ErrorCode.DUPLICATE_NAME),
        ('<link name="A"/><frame name="A"/>', ErrorCode.DUPLICATE_NAME),
        ('<link name="__A__"/>', ErrorCode.RESERVED_NAME),
        (
            '<link name="A"/><link name="B"/><joint name="J" type="revolute"><parent>A</parent><child>B</child>'
            '<axis><xyz expressed_in="nope">0 0 1</xyz></axis></joint>',
            ErrorCode.JOINT_AXIS_EXPRESSED_IN_INVALID,
        ),
        ('<link name="A"><pose>1 2 3</pose></link>', ErrorCode.ELEMENT_INVALID),
        ('<link name="A"><pose>1 2 3 a b c</pose></link>', ErrorCode.ELEMENT_INVALID),
        (
            '<link name="A"><pose rotation_format="quat_xyzw" degrees="true">0 0 0 0 0 0 1</pose></link>',
            ErrorCode.ELEMENT_INVALID,
        ),
    ],
)
def test_error_codes(body, code):
    assert code in codes(sdf(body))


def test_errors_list_every_problem_with_location():
    body = '<link name="A"/>\n<frame name="F" attached_to="x"/>\n<frame name="G" attached_to="y"/>'
    with pytest.raises(DescriptionError) as e:
        load_description(sdf(body))
    assert e.value.codes == [ErrorCode.FRAME_ATTACHED_TO_INVALID] * 2
    p = e.value.problems[1]
    assert (p.element, p.name, p.line) == ("frame", "G", 3)
    assert "'y'" in str(e.value) and isinstance(e.value, ValueError)


def test_unknown_frame_queries_raise_description_error_not_keyerror():
    d = load_description(sdf(TWO_LINKS))
    with pytest.raises(DescriptionError) as e:
        d.resolve_pose("nope")
    assert e.value.codes == [ErrorCode.POSE_RELATIVE_TO_INVALID]
    with pytest.raises(DescriptionError):
        d.resolve_pose("L1", "nope")
    with pytest.raises(DescriptionError) as e:
        d.frame_body("nope")
    assert e.value.codes == [ErrorCode.FRAME_ATTACHED_TO_INVALID]


def test_axis_expressed_in_and_joint_model():
    body = """
    <link name="A"/><link name="B"><pose>0 0 0 0 0 1.5707963267948966</pose></link>
    <joint name="J" type="revolute"><parent>A</parent><child>B</child>
      <axis><xyz expressed_in="__model__">1 0 0</xyz></axis></joint>
    """
    d = load_description(sdf(body))
    # joint frame = B frame (yaw 90); model x expressed in J is Rz(-90)(1,0,0) = (0,-1,0): unaligned
    j = d.model.joints[d.model.getJointId("J")]
    np.testing.assert_allclose(
        np.asarray(j.extract().axis if hasattr(j.extract(), "axis") else []), [0, -1, 0], atol=1e-12
    )
    # the motion: rotating J by +a turns B about the model's x axis
    q = pin.neutral(d.model)
    q[7] = 0.5
    data = d.model.createData()
    pin.framesForwardKinematics(d.model, data, q)
    R = data.oMf[d.model.getFrameId("B")].rotation
    np.testing.assert_allclose(R, Rx(0.5) @ Rz(PI2), atol=1e-12)


def test_disconnected_link_is_reported():
    # valid SDFormat, but a floating-base pinocchio tree needs every link joined to the base
    assert ErrorCode.ELEMENT_INVALID in codes(sdf('<link name="A"/><link name="B"/>'))


def test_world_with_several_models_and_model_name():
    src = (
        '<sdf version="1.8"><world name="w"><model name="a"><link name="x"/></model>'
        '<model name="b"><link name="y"/></model></world></sdf>'
    )
    assert load_description(src, model_name="b").base_link == "y"
    assert ErrorCode.ELEMENT_INVALID in codes(src)
    with pytest.raises(DescriptionError):
        load_description(src, model_name="c")


def test_continuous_joint_with_an_unaligned_axis():
    """A ``continuous`` joint about an axis off x, y and z (pinocchio's RevoluteUnboundedUnaligned, whose axis
    constructor its Python bindings do not expose): the model loads, the joint takes (cos, sin) and turns its
    child about that axis (Rodrigues: rotating by 0.7 rad about (0, 0.6, 0.8))."""
    body = """
    <link name="A"/><link name="B"/>
    <joint name="J" type="continuous"><parent>A</parent><child>B</child>
      <axis><xyz>0 0.6 0.8</xyz></axis></joint>
    """
    d = load_description(sdf(body))
    jid = d.model.getJointId("J")
    assert d.model.joints[jid].shortname() == "JointModelRevoluteUnboundedUnaligned"
    assert (d.model.joints[jid].nq, d.model.joints[jid].nv) == (2, 1)
    angle, u = 0.7, np.array([0.0, 0.6, 0.8])
    q = pin.neutral(d.model)
    q[7:9] = np.cos(angle), np.sin(angle)
    data = d.model.createData()
    pin.framesForwardKinematics(d.model, data, q)
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    expected = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
    np.testing.assert_allclose(data.oMf[d.model.getFrameId("B")].rotation, expected, atol=1e-12)
