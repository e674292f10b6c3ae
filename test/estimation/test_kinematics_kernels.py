"""Compiled kinematics and dynamics (``kinematics_kernels``) equal pinocchio's to 1e-12 on every bundled robot.

Pinocchio is the oracle (issue 18: the compiled kinematics is tested equal to pinocchio's on every bundled robot and
on random configurations). Besides, hand-worked values: a double pendulum leg (foot position, Jacobian, gravity
and inertial torques in closed form) and a URDF whose sole frame is lumped through two fixed joints.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from biped_urdf import biped_urdf
from hypothesis import given
from hypothesis import strategies as st

from robot_state_estimator.common.paths import BUNDLED_ROBOTS, robot_description_path
from robot_state_estimator.common.robots import ROBOT_URDFS, example_robot_urdf
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation.compiled_kinematics import CompiledKinematics, compile_kinematics_kernels
from robot_state_estimator.estimation.errors import ModelError
from robot_state_estimator.estimation.model_constants import (
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    JOINT_REVOLUTE_UNBOUNDED,
    ModelConstants,
    extract_model_constants,
)
from robot_state_estimator.simulation.biped import load_biped

FIXTURES = Path(__file__).resolve().parents[1] / "description" / "fixtures"
TOL = 1e-12

#: An SDF leg with the joint kinds (unaligned revolute, prismatic along an unaligned axis, continuous about x and
#: about y), rotated link poses, off-centre rotated inertials, a fixed joint to a foot link and a ``<frame>`` on it
#: (lumped by the reader into the last moving body). (A continuous joint about an unaligned axis is in the URDF
#: below: the package's SDF reader cannot build one with pinocchio's Python bindings.)
SDF_LEG = """<?xml version="1.0"?>
<sdf version="1.9"><model name="leg_kinds">
  {links}
  <joint name="hip" type="revolute"><parent>base</parent><child>thigh</child>
    <axis><xyz>0 0.6 0.8</xyz><limit><lower>-3</lower><upper>3</upper></limit></axis></joint>
  <joint name="slide" type="prismatic"><parent>thigh</parent><child>shank</child>
    <axis><xyz>0.2 0.3 -0.9</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis></joint>
  <joint name="wheel_x" type="continuous"><parent>shank</parent><child>hub</child><axis><xyz>1 0 0</xyz></axis></joint>
  <joint name="wheel_y" type="continuous"><parent>hub</parent><child>wheel</child><axis><xyz>0 1 0</xyz></axis>
  </joint>
  <joint name="foot_fixed" type="fixed"><parent>wheel</parent><child>foot</child></joint>
  <frame name="contact" attached_to="foot"><pose>0.01 -0.02 -0.03 0 0 0</pose></frame>
</model></sdf>
"""
_SDF_LINKS = (
    ("base", "0 0 0 0 0 0", 5.0),
    ("thigh", "0.1 0.05 -0.05 0.1 0.2 0.3", 1.2),
    ("shank", "0.12 0.02 -0.3 -0.2 0.1 0.4", 0.8),
    ("hub", "0.15 0.03 -0.45 0.3 -0.1 0.2", 0.4),
    ("wheel", "0.16 0.01 -0.5 0 0.2 -0.3", 0.3),
    ("foot", "0.17 0.0 -0.56 0.1 0 0", 0.2),
)


def _sdf_leg() -> str:
    links = "".join(
        f'<link name="{name}"><pose>{pose}</pose><inertial><pose>0.01 -0.02 0.03 0.2 -0.1 0.3</pose>'
        f"<mass>{mass}</mass><inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.04</izz><ixy>0.001</ixy>"
        "<ixz>-0.002</ixz><iyz>0.003</iyz></inertia></inertial></link>"
        for name, pose, mass in _SDF_LINKS
    )
    return SDF_LEG.format(links=links)


def _models() -> dict[str, tuple[pin.Model, tuple[str, ...]]]:
    """Every robot the package bundles or simulates: name -> (model, feet or ())."""
    out: dict[str, tuple[pin.Model, tuple[str, ...]]] = {}
    for robot in ROBOT_URDFS:  # example-robot-data, read by pinocchio itself
        out[f"erd_{robot}"] = (pin.buildModelFromUrdf(str(example_robot_urdf(robot)), pin.JointModelFreeFlyer()), ())
    for robot in BUNDLED_ROBOTS:  # config/robots, through the package's reader
        desc = load_description(str(robot_description_path(robot)))
        out[f"bundled_{robot}"] = (desc.model, desc.foot_frames())
    talos = load_biped("talos")  # the simulator's biped
    out["sim_talos"] = (talos.model, tuple(talos.feet))
    for robot in ("go1", "solo12"):  # SDF descriptions
        desc = load_description(str(FIXTURES / f"{robot}.sdf"))
        out[f"sdf_{robot}"] = (desc.model, desc.foot_frames())
    out["urdf_biped_lumped"] = (load_description(biped_urdf()).model, ("l_sole", "r_sole"))
    out["sdf_leg_kinds"] = (load_description(_sdf_leg()).model, ("contact",))
    return out


#: A URDF chain read by pinocchio's parser: continuous about an unaligned axis, prismatic about an unaligned axis,
#: revolute about -y (unaligned), then a foot through a fixed joint.
URDF_KINDS = """<?xml version="1.0"?>
<robot name="kinds">
  <link name="base"><inertial><mass value="4"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/>
  </inertial></link>
  {links}
  <joint name="spin" type="continuous"><parent link="base"/><child link="a"/>
    <origin xyz="0.1 0.2 -0.1" rpy="0.3 0.1 0.2"/><axis xyz="0.6 0 0.8"/></joint>
  <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0 0.1 -0.2" rpy="-0.2 0.4 0"/>
    <axis xyz="0.48 0.6 0.64"/><limit lower="-0.5" upper="0.5" effort="10" velocity="1"/></joint>
  <joint name="bend" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0.05 0 -0.25" rpy="0 0 0.7"/>
    <axis xyz="0 -1 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="toe_fixed" type="fixed"><parent link="c"/><child link="toe"/><origin xyz="0.01 0.02 -0.2" rpy="0.1 0 0"/>
  </joint>
</robot>
"""


def _urdf_kinds() -> str:
    links = "".join(
        f'<link name="{name}"><inertial><origin xyz="0.02 -0.01 -0.05" rpy="0.1 0.2 0.3"/><mass value="{mass}"/>'
        '<inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.003" izz="0.04"/></inertial></link>'
        for name, mass in (("a", 1.1), ("b", 0.9), ("c", 0.6), ("toe", 0.1))
    )
    return URDF_KINDS.format(links=links)


MODELS = _models()
MODELS["urdf_kinds"] = (load_description(_urdf_kinds()).model, ("toe",))


def _moving_frames(model: pin.Model) -> list[int]:
    """Ids of every frame that moves with the robot (all but the universe's)."""
    return [i for i, f in enumerate(model.frames) if f.parentJoint > 0]


def _random_q_joints(c: ModelConstants, rng: np.random.Generator) -> np.ndarray:
    q = np.zeros(c.nq_joints)
    for j in range(2, c.njoints):
        i = c.joint_q_index[j]
        if c.joint_kind[j] == JOINT_PRISMATIC:
            q[i] = rng.uniform(-0.4, 0.4)
        elif c.joint_kind[j] == JOINT_REVOLUTE_UNBOUNDED:
            angle = rng.uniform(-math.pi, math.pi)
            q[i], q[i + 1] = math.cos(angle), math.sin(angle)
        else:
            q[i] = rng.uniform(-math.pi, math.pi)
    return q


def _assert_close(got: np.ndarray, ref: np.ndarray, what: str) -> None:
    """|got - ref| <= 1e-12 max(1, |ref|max): absolute for values up to 1, relative to the largest above."""
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    err = float(np.abs(np.asarray(got) - np.asarray(ref)).max(initial=0.0))
    assert err <= TOL * scale, f"{what}: max error {err:.3g} > {TOL:g} x {scale:.3g}"


def _check_against_pinocchio(
    model: pin.Model, frames: list[int], q_joints: np.ndarray, rng: np.random.Generator, where: str
) -> None:
    """Every kernel output at ``q_joints`` against pinocchio (random gravity direction, velocities, accelerations)."""
    c = extract_model_constants(model, frames)
    ck = CompiledKinematics(c)
    ck.update(q_joints)
    model = pin.Model(model)
    data = model.createData()
    q = pin.neutral(model)
    q[:7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    q[7:] = q_joints
    pin.computeJointJacobians(model, data, q)
    for k, fid in enumerate(frames):
        name = f"{where} frame {model.frames[fid].name}"
        _assert_close(ck.X_base_frame[k], pin.updateFramePlacement(model, data, fid).homogeneous, f"{name} placement")
        J_ref = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, 6:]
        _assert_close(ck.J_base_frame[k], J_ref, f"{name} Jacobian")
    J_com = pin.jacobianCenterOfMass(model, data, q)
    _assert_close(ck.com, data.com[0], f"{where} centre of mass")
    _assert_close(ck.J_com, J_com[:, 6:], f"{where} centre-of-mass Jacobian")
    assert ck.total_mass == pytest.approx(pin.computeTotalMass(model), rel=1e-14)
    g_base = rng.normal(size=3)
    g_base *= 9.81 / np.linalg.norm(g_base)
    model.gravity = pin.Motion(g_base, np.zeros(3))
    _assert_close(ck.gravity_torques(g_base), pin.computeGeneralizedGravity(model, data, q)[6:], f"{where} g(q)")
    v = np.concatenate([rng.normal(size=6), rng.normal(scale=3.0, size=model.nv - 6)])
    a = np.concatenate([rng.normal(scale=5.0, size=6), rng.normal(scale=20.0, size=model.nv - 6)])
    _assert_close(ck.rnea(v, a, g_base), pin.rnea(model, data, q, v, a), f"{where} rnea")
    zero = np.zeros(model.nv)
    _assert_close(ck.rnea(zero, zero, g_base), pin.rnea(model, data, q, zero, zero), f"{where} rnea at rest")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_equal_to_pinocchio_at_neutral_and_random_configurations(name: str) -> None:
    model, feet = MODELS[name]
    frames = _moving_frames(model)
    rng = np.random.default_rng(18)
    c = extract_model_constants(model, frames)
    configs = [np.array(pin.neutral(model)[7:])] + [_random_q_joints(c, rng) for _ in range(6)]
    for i, q_joints in enumerate(configs):
        _check_against_pinocchio(model, frames, q_joints, rng, f"{name} config {i}")
    if feet:  # the estimator's feet by name, in its order
        feet_ids = [model.getFrameId(f) for f in feet]
        _check_against_pinocchio(model, feet_ids, configs[-1], rng, f"{name} feet")
        assert extract_model_constants(model, feet).frame_ids == tuple(feet_ids)


_GO1 = MODELS["bundled_go1"][0]
_ANYMAL = MODELS["bundled_anymal_c"][0]  # unaligned revolute axes
_LEG = MODELS["sdf_leg_kinds"][0]  # prismatic and continuous joints

_angles = st.floats(-math.pi, math.pi, allow_nan=False)
_rates = st.floats(-30.0, 30.0, allow_nan=False)


@given(
    robot=st.sampled_from(["go1", "anymal_c"]),
    q=st.lists(_angles, min_size=12, max_size=12),
    seed=st.integers(0, 2**32 - 1),
)
def test_equal_to_pinocchio_property(robot: str, q: list[float], seed: int) -> None:
    model = _GO1 if robot == "go1" else _ANYMAL
    _check_against_pinocchio(model, _moving_frames(model), np.array(q), np.random.default_rng(seed), robot)


@given(angles=st.lists(_angles, min_size=4, max_size=4), slide=st.floats(-0.5, 0.5), seed=st.integers(0, 2**32 - 1))
def test_all_joint_kinds_property(angles: list[float], slide: float, seed: int) -> None:
    """The SDF leg: q = [hip, slide, cos/sin wheel_x, cos/sin wheel_y] (continuous joints: 2 entries); the URDF
    chain: q = [cos/sin spin, slide, bend]."""
    a = angles
    q = np.array([a[0], slide, math.cos(a[1]), math.sin(a[1]), math.cos(a[2]), math.sin(a[2])])
    rng = np.random.default_rng(seed)
    _check_against_pinocchio(_LEG, _moving_frames(_LEG), q, rng, "SDF leg")
    q = np.array([math.cos(a[3]), math.sin(a[3]), slide, a[0]])
    model = MODELS["urdf_kinds"][0]
    _check_against_pinocchio(model, _moving_frames(model), q, rng, "URDF chain")


def test_sdf_joint_kinds_extracted() -> None:
    c = extract_model_constants(_LEG, ["contact"])
    kinds = dict(zip(c.joint_names[2:], c.joint_kind[2:].tolist()))
    assert kinds == {
        "hip": JOINT_REVOLUTE,
        "slide": JOINT_PRISMATIC,
        "wheel_x": JOINT_REVOLUTE_UNBOUNDED,
        "wheel_y": JOINT_REVOLUTE_UNBOUNDED,
    }
    assert c.joint_axis_index[2:].tolist() == [-1, -1, 0, 1]
    assert c.nq_joints == 6 and c.nv_joints == 4
    assert c.joint_q_index[2:].tolist() == [0, 1, 2, 4]
    assert c.joint_v_index[2:].tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(c.joint_axis[2], [0.0, 0.6, 0.8], atol=1e-15)
    np.testing.assert_allclose(c.joint_axis[3], np.array([0.2, 0.3, -0.9]) / math.sqrt(0.94), atol=1e-15)
    # the foot link is lumped into the last moving body: its 0.2 kg are on wheel_y
    assert c.body_mass[5] == pytest.approx(0.5)
    assert c.frame_joint.tolist() == [5]
    assert c.total_mass == pytest.approx(5.0 + 1.2 + 0.8 + 0.4 + 0.3 + 0.2)
    u = extract_model_constants(MODELS["urdf_kinds"][0], ["toe"])
    assert u.joint_kind[2:].tolist() == [JOINT_REVOLUTE_UNBOUNDED, JOINT_PRISMATIC, JOINT_REVOLUTE]
    assert u.joint_axis_index[2:].tolist() == [-1, -1, -1]
    np.testing.assert_allclose(u.joint_axis[2:], [[0.6, 0.0, 0.8], [0.48, 0.6, 0.64], [0.0, -1.0, 0.0]], atol=1e-15)
    assert u.body_mass[4] == pytest.approx(0.7)  # the toe lumped onto "bend"


def test_lumped_sole_frame_hand_worked() -> None:
    """The biped URDF: each sole hangs below the ankle-roll link through two fixed joints (foot 3 cm below, sole
    (2 cm, 0, -5 cm) below that). At zero joint angles the sole is the sum of the offsets; masses lump."""
    model = MODELS["urdf_biped_lumped"][0]
    c = extract_model_constants(model, ["l_sole", "r_sole"])
    ck = CompiledKinematics(c)
    ck.update(np.zeros(12))
    z = -0.05 - 0.02 - 0.02 - 0.35 - 0.35 - 0.02 - 0.03 - 0.05
    np.testing.assert_allclose(ck.X_base_frame[:, :3, 3], [[0.02, 0.1, z], [0.02, -0.1, z]], atol=1e-15)
    np.testing.assert_array_equal(ck.X_base_frame[:, :3, :3], np.tile(np.eye(3), (2, 1, 1)))
    assert [c.joint_names[j] for j in c.frame_joint] == ["l_ankle_roll", "r_ankle_roll"]
    ankle = c.joint_names.index("l_ankle_roll")
    assert c.body_mass[ankle] == pytest.approx(1.5)  # the 1 kg link and the 0.5 kg foot; the sole has no mass
    assert c.total_mass == pytest.approx(10.0 + 2 * 6.5)
    # the ankle roll (x axis) at the sole's height: it moves the sole along -y per rad... by the lever arm
    lever = z - (-0.05 - 0.02 - 0.02 - 0.35 - 0.35 - 0.02)  # sole below the ankle-roll axis
    col = c.joint_v_index[ankle]
    np.testing.assert_allclose(ck.J_base_frame[0, :, col], [0.0, -lever, 0.0, 1.0, 0.0, 0.0], atol=1e-15)


_PENDULUM = """<?xml version="1.0"?>
<robot name="pendulum">
  <link name="base"><inertial><mass value="3"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
  </inertial></link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="thigh"/><origin xyz="0.1 0.05 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <link name="thigh"><inertial><origin xyz="0 0 -{l1}"/><mass value="{m1}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <joint name="knee" type="revolute"><parent link="thigh"/><child link="shank"/><origin xyz="0 0 -{l1}"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <link name="shank"><inertial><origin xyz="0 0 -{l2}"/><mass value="{m2}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <joint name="foot_joint" type="fixed"><parent link="shank"/><child link="foot"/><origin xyz="0 0 -{l2}"/></joint>
  <link name="foot"/>
</robot>
"""


def test_double_pendulum_leg_hand_worked() -> None:
    """A leg of two point masses at the link ends (thigh l1, m1; shank l2, m2) swinging about y, base at rest:
    closed-form foot position and Jacobian, and the double pendulum's equation of motion (angles from the
    downward vertical; Spong, Hutchinson and Vidyasagar, "Robot Modeling and Control", 2006, sec. 7.3)."""
    l1, l2, m1, m2, g0 = 0.3, 0.25, 1.5, 0.7, 9.81
    model = pin.buildModelFromXML(_PENDULUM.format(l1=l1, l2=l2, m1=m1, m2=m2), pin.JointModelFreeFlyer())
    ck = CompiledKinematics(extract_model_constants(model, ["foot"]))
    q1, q2, qd1, qd2, qdd1, qdd2 = 0.4, -0.9, 1.3, -2.1, 4.0, -3.0
    ck.update(np.array([q1, q2]))
    s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
    # R_y(q) (0, 0, -l) = (-l sin q, 0, -l cos q)
    np.testing.assert_allclose(
        ck.X_base_frame[0, :3, 3], [0.1 - l1 * s1 - l2 * s12, 0.05, -l1 * c1 - l2 * c12], atol=1e-15
    )
    J_lin = [[-l1 * c1 - l2 * c12, -l2 * c12], [0.0, 0.0], [l1 * s1 + l2 * s12, l2 * s12]]
    np.testing.assert_allclose(ck.J_base_frame[0, :3], J_lin, atol=1e-15)
    np.testing.assert_allclose(ck.J_base_frame[0, 3:], [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]], atol=1e-15)
    g_base = np.array([0.0, 0.0, -g0])
    tau_g = [g0 * (m1 * l1 * s1 + m2 * (l1 * s1 + l2 * s12)), g0 * m2 * l2 * s12]
    np.testing.assert_allclose(ck.gravity_torques(g_base), tau_g, atol=1e-13)
    c2, s2 = math.cos(q2), math.sin(q2)
    M = np.array(
        [
            [m1 * l1**2 + m2 * (l1**2 + l2**2 + 2 * l1 * l2 * c2), m2 * (l2**2 + l1 * l2 * c2)],
            [m2 * (l2**2 + l1 * l2 * c2), m2 * l2**2],
        ]
    )
    h = m2 * l1 * l2 * s2 * np.array([-(2 * qd1 * qd2 + qd2**2), qd1**2])
    v = np.array([0, 0, 0, 0, 0, 0, qd1, qd2], dtype=float)
    a = np.array([0, 0, 0, 0, 0, 0, qdd1, qdd2], dtype=float)
    tau = ck.rnea(v, a, g_base)
    np.testing.assert_allclose(tau[6:], M @ [qdd1, qdd2] + h + tau_g, atol=1e-12)
    # at rest the base holds the weight: force -M g, moment -M c x g about the base origin (Newton-Euler)
    mass = 3.0 + m1 + m2
    rest = ck.rnea(np.zeros(8), np.zeros(8), g_base)
    np.testing.assert_allclose(rest[:3], -mass * g_base, atol=1e-13)
    np.testing.assert_allclose(rest[3:6], -mass * np.cross(ck.com, g_base), atol=1e-13)


def test_unsupported_joint_refused_by_name() -> None:
    model = pin.Model()
    root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    model.appendBodyToJoint(root, pin.Inertia.Random(), pin.SE3.Identity())
    ball = model.addJoint(root, pin.JointModelSpherical(), pin.SE3.Random(), "shoulder_ball")
    model.appendBodyToJoint(ball, pin.Inertia.Random(), pin.SE3.Identity())
    with pytest.raises(ModelError, match=r"joint 'shoulder_ball' is a JointModelSpherical"):
        extract_model_constants(model, [])
    planar = _PENDULUM.format(l1=0.3, l2=0.2, m1=1, m2=1).replace('"knee" type="revolute"', '"knee" type="planar"')
    with pytest.raises(ModelError, match=r"joint 'knee' is a JointModelPlanar"):
        extract_model_constants(pin.buildModelFromXML(planar, pin.JointModelFreeFlyer()), ["foot"])


def test_bad_models_and_frames_refused() -> None:
    xml = _PENDULUM.format(l1=0.3, l2=0.2, m1=1, m2=1)
    with pytest.raises(ModelError, match="free-flyer root joint"):
        extract_model_constants(pin.buildModelFromXML(xml), ["foot"])
    model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    with pytest.raises(ModelError, match="'toe' is not a frame"):
        extract_model_constants(model, ["toe"])
    with pytest.raises(ModelError, match="'universe' is fixed to the universe"):
        extract_model_constants(model, [0])
    with pytest.raises(ModelError, match="out of range"):
        extract_model_constants(model, [len(model.frames)])
    with pytest.raises(ModelError, match="'LF_HAA' is ambiguous"):
        extract_model_constants(MODELS["erd_anymal_c"][0], ["LF_HAA"])  # joint and body frames of one name


def test_constants_are_read_only_and_inputs_checked() -> None:
    c = extract_model_constants(_GO1, ["FL_foot"])
    with pytest.raises(ValueError, match="read-only"):
        c.X_parent_joint[2, 0, 3] = 1.0
    ck = CompiledKinematics(c)
    with pytest.raises(ValueError, match=r"q_joints must be .* \(12,\)"):
        ck.update(np.zeros(11))
    with pytest.raises(ValueError, match="C-contiguous float64"):
        ck.update(np.zeros(12, dtype=np.float32))


def test_compile_for_precompile() -> None:
    """``precompile``'s call: every kernel compiled and run once with the bundled Go1's feet."""
    model, feet = MODELS["bundled_go1"]
    ck = compile_kinematics_kernels(model, feet)
    assert ck.X_base_frame.shape == (4, 4, 4) and ck.J_base_frame.shape == (4, 6, 12) and ck.J_com.shape == (3, 12)
    assert ck.constants.frame_names == tuple(feet)
    assert ck.tau.shape == (18,) and ck.tau_gravity.shape == (12,)
