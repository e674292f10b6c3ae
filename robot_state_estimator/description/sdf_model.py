"""SDFormat document -> pinocchio model, IMUs and frames.

The kinematic tree is built from the base link (default: the model's canonical link) depth first, the
children of a link in joint-name order, as pinocchio's URDF parser does (urdfdom keeps joints in a
``std::map``), so that an SDF model and the URDF of the same robot get the same ``q`` layout.

- revolute / continuous / prismatic joints: pinocchio ``R{X,Y,Z}`` / ``RUB{X,Y,Z}`` / ``P{X,Y,Z}`` when the
  axis (normalised, in the joint frame) is +x, +y or +z, else the ``...Unaligned`` joint (same choice as
  pinocchio's URDF parser). Fixed joints become ``FIXED_JOINT`` frames, links ``BODY`` frames, ``<frame>``s
  and nested models ``OP_FRAME``s. Joints whose parent is ``world`` are left out (the base floats).
- axis: ``//axis/xyz`` expressed in ``@expressed_in`` (default the joint frame; SDF 1.6
  ``use_parent_model_frame`` = the model frame), as libsdformat ``JointAxis::ResolveXyz``.
- inertials: ``//inertial/pose`` in the link frame, mass and inertia about the CoM in that pose's axes;
  spec defaults (mass 1 kg, inertia identity) when absent. Inertias of links on fixed joints are lumped
  into the moving body, as pinocchio's URDF parser does.

Sources: SDFormat ``joint.sdf``, ``link.sdf``, ``inertial.sdf``; libsdformat ``src/Joint.cc``,
``src/JointAxis.cc``, ``src/Link.cc``; pinocchio ``parsers/urdf/model.hxx``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from .errors import DescriptionError, ErrorCode, Problem, ProblemList, Where, warn
from .frame_graph import FrameGraph
from .imu import default_frame_id, gz_frame_id, is_imu_sensor, parse_imu_fields
from .imu_frames import accepted_imu_frame_ids
from .pose import PoseTextError, parse_pose, parse_sdf_double, shown
from .sdf_frames import SdfModelFrames, build_model_frames
from .sdf_include import version_tuple
from .types import ImuSpec
from .xml_input import XmlDocument

SUPPORTED_VERSIONS = [(1, v) for v in range(5, 12)]


@dataclass
class SdfResult:
    """What :func:`read_sdf` produced."""

    name: str
    graph: FrameGraph
    model: pin.Model
    base_link: str
    imus: list[ImuSpec]


def _pick_model(doc: XmlDocument, model_name: str | None) -> ET.Element:
    root = doc.root
    candidates = list(root.findall("model"))
    for world in root.findall("world"):
        candidates += world.findall("model")
    if not candidates:
        raise DescriptionError(
            Problem(ErrorCode.ELEMENT_MISSING, "no <model> in the SDF (or in its <world>)", "sdf", file=doc.file)
        )
    names = [m.get("name", "") for m in candidates]
    if model_name is not None:
        for m in candidates:
            if m.get("name") == model_name:
                return m
        raise DescriptionError(
            Problem(ErrorCode.ELEMENT_MISSING, f"no model {model_name!r}; models: {names}", "sdf", file=doc.file)
        )
    if len(candidates) > 1:
        raise DescriptionError(
            Problem(ErrorCode.ELEMENT_INVALID, f"several models {names}: pass model_name", "sdf", file=doc.file)
        )
    return candidates[0]


def _inertia(link_inertial: ET.Element | None, problems: ProblemList, where: Where) -> pin.Inertia:
    """Spatial inertia of a link in its own frame (spec defaults: mass 1, I = identity, CoM at origin)."""
    if link_inertial is None:
        return pin.Inertia(1.0, np.zeros(3), np.eye(3))

    def num(path: str, default: float) -> float:
        t = link_inertial.findtext(path)
        try:
            return parse_sdf_double(t, what=f"inertial {path}", default=default)
        except PoseTextError as exc:
            problems.add(ErrorCode.ELEMENT_INVALID, str(exc), **where)
            return default

    mass = num("mass", 1.0)
    I_com = np.array(
        [
            [num("inertia/ixx", 1.0), num("inertia/ixy", 0.0), num("inertia/ixz", 0.0)],
            [num("inertia/ixy", 0.0), num("inertia/iyy", 1.0), num("inertia/iyz", 0.0)],
            [num("inertia/ixz", 0.0), num("inertia/iyz", 0.0), num("inertia/izz", 1.0)],
        ]
    )
    p = link_inertial.find("pose")
    X = pin.SE3.Identity()
    if p is not None:
        try:
            X = parse_pose(p.text, rotation_format=p.get("rotation_format"), degrees=p.get("degrees"))
        except PoseTextError as exc:
            problems.add(ErrorCode.ELEMENT_INVALID, f"inertial pose: {exc}", **where)
    R = X.rotation
    # libsdformat Link::Load: a mass matrix gz-math calls invalid is LINK_INERTIA_INVALID ("A link named ... has
    # invalid inertia"); a negative mass or a moment matrix that is not positive semi-definite is one.
    eig = np.linalg.eigvalsh(I_com)
    wrong = []
    if mass < 0.0:
        wrong.append(f"mass {mass!r} kg < 0")
    if eig[0] < -1e-12 * max(1.0, float(np.max(np.abs(eig)))):
        values = ", ".join(f"{v:.6g}" for v in eig)
        wrong.append(f"the moments of inertia are not positive semi-definite (eigenvalues {values} kg m^2)")
    if wrong:
        problems.add(
            ErrorCode.LINK_INERTIA_INVALID,
            f"link {where.get('name', '')!r} has invalid inertia: {' and '.join(wrong)}",
            **where,
        )
        return pin.Inertia(1.0, np.zeros(3), np.eye(3))
    try:
        return pin.Inertia(mass, X.translation.copy(), R @ I_com @ R.T)
    except (RuntimeError, ValueError) as exc:  # pinocchio's own checks of the 3d inertia
        problems.add(
            ErrorCode.LINK_INERTIA_INVALID,
            f"link {where.get('name', '')!r} has invalid inertia: pinocchio refuses it ({exc})",
            **where,
        )
        return pin.Inertia(1.0, np.zeros(3), np.eye(3))


def _unbounded_unaligned(axis: NDArray[np.float64]) -> pin.JointModel:
    """pinocchio's ``JointModelRevoluteUnboundedUnaligned`` about ``axis`` ((3,) unit vector, joint frame).

    pinocchio 4.1's Python bindings construct that joint without an axis only (its axis constructor is not
    exposed), so it is taken from pinocchio's own URDF parser, which builds the same joint in C++ for a
    ``continuous`` URDF joint with that axis (numbers written with all their digits).
    """
    xyz = " ".join(repr(float(a)) for a in axis)
    urdf = (
        '<robot name="axis"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
        f'<parent link="a"/><child link="b"/><axis xyz="{xyz}"/></joint></robot>'
    )
    return pin.buildModelFromXML(urdf).joints[1]


def _joint_model(jtype: str, axis: NDArray[np.float64]) -> pin.JointModel:
    unit = {0: "X", 1: "Y", 2: "Z"}
    aligned = None
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1.0
        if np.allclose(axis, e, atol=1e-12, rtol=0):
            aligned = unit[i]
    if jtype == "revolute":
        return getattr(pin, f"JointModelR{aligned}")() if aligned else pin.JointModelRevoluteUnaligned(axis)
    if jtype == "continuous":
        return getattr(pin, f"JointModelRUB{aligned}")() if aligned else _unbounded_unaligned(axis)
    if jtype == "prismatic":
        return getattr(pin, f"JointModelP{aligned}")() if aligned else pin.JointModelPrismaticUnaligned(axis)
    raise ValueError(jtype)


class _PinocchioTree:
    """The pinocchio model of :func:`build_pinocchio_model` as it grows from the base link.

    Attributes:
        model: the model: a free-flyer ``root_joint`` and the base's body so far.
        support: link -> (pinocchio joint id it moves with, graph frame coinciding with that joint's frame,
            pinocchio frame id of the link's parent frame), for every link added.
        limits: (joint id, lower, upper) of the bounded joints (SDF ``//limit``, m or rad; None = not given).
    """

    def __init__(self, frames: SdfModelFrames, base: str, problems: ProblemList, file: str | None) -> None:
        self.frames = frames
        self.graph = frames.graph
        self.problems = problems
        self.file = file
        self.model = pin.Model()
        self.model.name = frames.name
        root_id = self.model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
        root_frame = self.model.addJointFrame(root_id, 0)
        self.support: dict[str, tuple[int, str, int]] = {base: (root_id, base, root_frame)}
        self.limits: list[tuple[int, float | None, float | None]] = []
        self.add_body(base, root_id, base, root_frame)

    def add_body(self, link: str, jid: int, jframe: str, parent_frame: int) -> None:
        """The inertia of ``link`` appended to joint ``jid`` and its BODY frame, at its pose in the graph frame
        ``jframe`` of that joint."""
        placement = self.graph.resolve_pose(link, jframe)
        where = Where(element="link", name=link, line=self.frames.links[link].line, file=self.file)
        self.model.appendBodyToJoint(jid, _inertia(self.frames.links[link].inertial, self.problems, where), placement)
        self.model.addBodyFrame(link, jid, placement, parent_frame)

    def add_joint(self, jname: str, link: str) -> str | None:
        """Joint ``jname`` of the added ``link`` with its child link's body: a FIXED_JOINT frame, or a revolute,
        continuous or prismatic joint (its axis in the joint frame, normalised); returns the child link, None
        (the problem added) when the child is connected already or the type is not supported."""
        g, model = self.graph, self.model
        jid_p, jframe_p, fid_p = self.support[link]
        j = self.frames.joints[jname]
        child = g.frame_body(j.child)
        where = Where(element="joint", name=jname, line=j.line, file=self.file)
        if child in self.support:
            self.problems.add(
                ErrorCode.JOINT_CHILD_LINK_INVALID,
                f"joint {jname!r}: child link {child!r} already connected (kinematic loop or the base as a "
                "child); the tree must start at the base link",
                **where,
            )
            return None
        X_p_j = g.resolve_pose(jname, jframe_p)
        if j.type == "fixed":
            fid = model.addFrame(pin.Frame(jname, jid_p, fid_p, X_p_j, pin.FrameType.FIXED_JOINT))
            self.support[child] = (jid_p, jframe_p, fid)
            self.add_body(child, jid_p, jframe_p, fid)
        elif j.type in ("revolute", "continuous", "prismatic"):
            axis = g.resolve_pose(j.axis_expressed_in, jname).rotation @ j.axis_xyz
            axis = axis / np.linalg.norm(axis)
            jid = model.addJoint(jid_p, _joint_model(j.type, axis), X_p_j, jname)
            fid = model.addJointFrame(jid, fid_p)
            self.support[child] = (jid, jname, fid)
            self.add_body(child, jid, jname, fid)
            if j.type != "continuous":
                self.limits.append((jid, j.limit_lower, j.limit_upper))
        else:
            self.problems.add(
                ErrorCode.ELEMENT_INVALID,
                f"joint {jname!r}: type {j.type!r} is not supported (revolute, continuous, prismatic, fixed)",
                **where,
            )
            return None
        return child

    def check_connected(self, base: str) -> None:
        """Every link must be reached from ``base`` by joints (``ELEMENT_INVALID`` for each one that is not)."""
        for link in self.frames.links:
            if link not in self.support:
                self.problems.add(
                    ErrorCode.ELEMENT_INVALID,
                    f"link {link!r} is not connected to the base link {base!r} by joints",
                    element="link",
                    name=link,
                    line=self.frames.links[link].line,
                    file=self.file,
                )

    def add_op_frames(self) -> None:
        """The ``<frame>``s and nested model frames as OP_FRAMEs on the bodies they are attached to."""
        g = self.graph
        for fname in self.frames.frames:
            body = g.frame_body(fname)
            jid, jframe, fid = self.support[body]
            self.model.addFrame(pin.Frame(fname, jid, fid, g.resolve_pose(fname, jframe), pin.FrameType.OP_FRAME))

    def apply_limits(self) -> None:
        """The joints' ``//limit`` lower / upper (those given) into the model's position limits."""
        model = self.model
        lower = model.lowerPositionLimit.copy()
        upper = model.upperPositionLimit.copy()
        for jid, lo, hi in self.limits:
            idx = model.joints[jid].idx_q
            if lo is not None:
                lower[idx] = lo
            if hi is not None:
                upper[idx] = hi
        model.lowerPositionLimit = lower
        model.upperPositionLimit = upper


def _joint_children(frames: SdfModelFrames) -> dict[str, list[str]]:
    """Link -> the joints whose parent frame is on it, in name order (joints to ``world`` left out)."""
    children: dict[str, list[str]] = {}
    for j in frames.joints.values():
        if j.parent == "world":
            continue
        children.setdefault(frames.graph.frame_body(j.parent), []).append(j.name)
    for lst in children.values():
        lst.sort()
    return children


def build_pinocchio_model(frames: SdfModelFrames, base: str, problems: ProblemList, file: str | None) -> pin.Model:
    """The pinocchio model of ``frames`` with a free-flyer ``root_joint`` at link ``base`` (see module doc)."""
    tree = _PinocchioTree(frames, base, problems, file)
    children = _joint_children(frames)
    # Depth first from the base, children in joint-name order (an explicit stack: a chain of thousands of links
    # would exceed Python's recursion limit).
    pending = [iter(children.get(base, []))]
    at = [base]
    while pending:
        jname = next(pending[-1], None)
        if jname is None:
            pending.pop()
            at.pop()
            continue
        child = tree.add_joint(jname, at[-1])
        if child is None:
            continue
        pending.append(iter(children.get(child, [])))
        at.append(child)
    tree.check_connected(base)
    if problems:
        return tree.model
    tree.add_op_frames()
    tree.apply_limits()
    return tree.model


def _has_legacy_noise(sensor: ET.Element) -> bool:
    imu = sensor.find("imu")
    return (
        imu is not None
        and imu.find("noise") is not None
        and imu.find("angular_velocity") is None
        and imu.find("linear_acceleration") is None
    )


def read_sdf(doc: XmlDocument, *, model_name: str | None = None, base_link: str | None = None) -> SdfResult:
    """Read an SDFormat document.

    Raises:
        DescriptionError: every problem found (frame semantics, joints, sensors, unsupported version).
    """
    vtext = doc.root.get("version")
    version = version_tuple(vtext)
    if version not in SUPPORTED_VERSIONS:
        code = ErrorCode.VERSION_DEPRECATED if version < (1, 5) else ErrorCode.ATTRIBUTE_INVALID
        raise DescriptionError(
            Problem(
                code,
                f"SDFormat version {shown(vtext)} is not supported (1.5 to 1.11)",
                "sdf",
                line=doc.line(doc.root),
                file=doc.file,
            )
        )
    model_elem = _pick_model(doc, model_name)
    frames, problems = build_model_frames(doc, model_elem, version)
    # The IMU fields (noise, numbers, orientation reference) need no frames: their problems are listed with
    # the frame problems, in one DescriptionError.
    imu_sensors = [s for s in frames.sensors if is_imu_sensor(s.elem)]
    imu_fields = []
    for s in imu_sensors:
        where = Where(element="sensor", name=s.name, line=s.line, file=s.file)
        imu_fields.append(parse_imu_fields(s.elem, problems, where, legacy_noise=s.legacy_noise))
        if s.version < (1, 6) and not s.legacy_noise and _has_legacy_noise(s.elem):
            warn(
                f"sensor {s.name!r}: its SDFormat 1.5 <imu><noise> is ignored, as libsdformat's 1.5 -> 1.6 "
                "conversion (sdf/1.6/1_5.convert) only moves it for sensors of links of the file's top model, "
                f"not of joints or nested models: write per-axis <noise type=...> ({s.file or 'line'}:{s.line})"
            )
    problems.raise_if_any()
    g = frames.graph
    base = base_link if base_link is not None else frames.canonical_link
    if base not in frames.links:
        raise DescriptionError(
            Problem(
                ErrorCode.MODEL_CANONICAL_LINK_INVALID,
                f"base link {base!r} is not a link of model {frames.name!r}",
                "model",
                frames.name,
                doc.line(model_elem),
                doc.file,
            )
        )
    model = build_pinocchio_model(frames, base, problems, doc.file)
    imus: list[ImuSpec] = []
    for s, fields in zip(imu_sensors, imu_fields, strict=True):
        link = g.frame_body(s.host)
        pose_in_link = g.resolve_pose(s.relative_to, link) * s.raw_pose
        frame_id = fields.frame_id or default_frame_id(s.name)
        gz_id = gz_frame_id(s.elem, frames.name, s.host)
        imus.append(
            fields.imu_spec(
                name=s.name,
                link=link,
                frame_id=frame_id,
                gz_frame_id=gz_id,
                pose_in_link=pose_in_link,
                pose_in_base=g.resolve_pose(link, base) * pose_in_link,
                accepted_frame_ids=accepted_imu_frame_ids(g, model, link, pose_in_link, (frame_id, gz_id)),
            )
        )
    problems.raise_if_any()
    return SdfResult(name=frames.name, graph=g, model=model, base_link=base, imus=imus)
