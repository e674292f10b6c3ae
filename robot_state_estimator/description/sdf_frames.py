"""SDFormat ``<model>`` -> :class:`~.frame_graph.FrameGraph` plus the links, joints and sensors in it.

Implements libsdformat's frame semantics (``src/FrameSemantics.cc``, ``src/Model.cc``, ``src/Frame.cc``,
``src/Joint.cc``; SDFormat 1.7 "pose frame semantics" and 1.8 nested-model proposals):

- implicit frames: ``__model__`` (the enclosing model), every link, joint and nested model; explicit
  ``<frame>``s. Sensors are not frames.
- default ``relative_to``: link / nested model -> the enclosing model frame; joint -> its child; frame ->
  its ``attached_to`` when given, else the enclosing model frame; sensor -> its parent link (or joint).
- ``attached_to``: a frame -> ``attached_to`` (default the model frame); a joint -> its child; a model
  frame -> its canonical link (``canonical_link``, may be ``nested::link``; else the first ``<link>``; else
  the first nested model's canonical link).
- ``::`` references reach down into nested models only; ``__model__`` means the scope's own model frame.
- ``placement_frame`` (nested model or ``<include>``): the model's pose places that frame.
- 1.7+: sibling name collisions are ``DUPLICATE_NAME``; names ``__x__`` are reserved; 1.8+: ``::`` in a
  name is reserved.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from .errors import ErrorCode, ProblemList, Where
from .frame_graph import MODEL_FRAME, FrameGraph, FrameNode
from .imu import is_imu_sensor
from .pose import PoseTextError, parse_bool, parse_pose, parse_sdf_double, parse_vector3, shown
from .xml_input import XmlDocument, load_xml, resolve_uri

#: A reference written in a model scope (``a::b``, ``__model__``) -> its scoped frame name (None for no text).
ScopeRef: TypeAlias = Callable[[str | None], str | None]


@dataclass
class SdfLink:
    """A link: scoped name, ``<inertial>`` element (None = spec default), line."""

    name: str
    inertial: ET.Element | None
    line: int | None


@dataclass
class SdfJoint:
    """A joint with its references resolved to scoped names."""

    name: str
    type: str
    parent: str  # scoped, or "world"
    child: str  # scoped
    axis_xyz: NDArray[np.float64]  # (3,) as written
    axis_expressed_in: str  # scoped frame the xyz is expressed in (the joint itself by default)
    limit_lower: float | None
    limit_upper: float | None
    line: int | None


@dataclass
class SdfSensor:
    """A sensor with its pose: ``raw_pose`` relative to ``relative_to`` (scoped)."""

    name: str  # scoped
    elem: ET.Element
    host: str  # scoped link or joint
    relative_to: str
    raw_pose: pin.SE3
    line: int | None
    file: str | None
    legacy_noise: bool = False  # libsdformat's 1.5 -> 1.6 conversion applies to its <imu><noise>
    version: tuple[int, int] = (0, 0)  # SDFormat version of the file it is in


@dataclass
class SdfModelFrames:
    """Result of :func:`build_model_frames`."""

    name: str
    graph: FrameGraph
    canonical_link: str
    links: dict[str, SdfLink] = field(default_factory=dict)
    joints: dict[str, SdfJoint] = field(default_factory=dict)
    sensors: list[SdfSensor] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)  # explicit <frame>s and nested model frames


def version_tuple(text: str | None) -> tuple[int, int]:
    """``"1.9"`` -> (1, 9); unparsable -> (0, 0)."""
    try:
        major, minor = (text or "").strip().split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return (0, 0)


class _Builder:
    def __init__(self, version: tuple[int, int], problems: ProblemList):
        self.version = version
        self.problems = problems
        self.graph = FrameGraph()
        self.out: SdfModelFrames | None = None
        self.links: dict[str, SdfLink] = {}
        self.joints: dict[str, SdfJoint] = {}
        self.sensors: list[SdfSensor] = []
        self.frames: list[str] = []
        self.sensor_names: dict[str, set[str]] = {}  # host link / joint -> names of its sensors

    # ------------------------------------------------------------------ helpers
    def doc_version(self, doc: XmlDocument) -> tuple[int, int]:
        """The SDFormat version of ``doc`` (an included file has its own; libsdformat converts each file
        from its version before merging it)."""
        v = version_tuple(doc.root.get("version")) if doc.root.tag == "sdf" else (0, 0)
        return v if v != (0, 0) else self.version

    def where(self, doc: XmlDocument, elem: ET.Element, name: str) -> Where:
        return {"element": elem.tag, "name": name, "line": doc.line(elem), "file": doc.file}

    def pose_of(self, doc: XmlDocument, elem: ET.Element, name: str) -> tuple[pin.SE3, str | None]:
        p = elem.find("pose")
        if p is None:
            return pin.SE3.Identity(), None
        try:
            X = parse_pose(p.text, rotation_format=p.get("rotation_format"), degrees=p.get("degrees"))
        except PoseTextError as exc:
            self.problems.add(ErrorCode.ELEMENT_INVALID, f"{elem.tag} {name!r}: {exc}", **self.where(doc, p, name))
            X = pin.SE3.Identity()
        return X, (p.get("relative_to") or None)

    # ------------------------------------------------------------------ model
    def add_model(
        self,
        doc: XmlDocument,
        elem: ET.Element,
        prefix: str,
        parent_frame: str | None,
        *,
        name_override: str | None = None,
        pose_override: ET.Element | None = None,
        placement_override: str | None = None,
        doc_top: bool = True,
    ) -> str:
        """Add a model scope; returns its canonical link (scoped) or "" when it has none.

        ``doc_top``: the model is the top model of its file (``//sdf/model`` or ``//sdf/world/model``), which
        is where libsdformat's 1.5 -> 1.6 converter moves a legacy ``<imu><noise>`` (``sdf/1.6/1_5.convert``
        matches ``model/link/sensor/imu`` only)."""
        is_top = parent_frame is None
        dv = self.doc_version(doc)
        name: str = name_override or elem.get("name") or ""
        scoped = prefix + name
        model_frame = MODEL_FRAME if is_top else scoped
        inner = "" if is_top else scoped + "::"

        def ref(text: str | None) -> str | None:
            if text is None or not text.strip():
                return None
            t = text.strip()
            if t == MODEL_FRAME:
                return model_frame
            if t.endswith("::" + MODEL_FRAME):
                t = t[: -len("::" + MODEL_FRAME)]
            return inner + t

        w_model = self.where(doc, elem, scoped or name)
        seen: dict[str, str] = {}

        def check_name(child: ET.Element, cname: str) -> bool:
            w = self.where(doc, child, inner + cname)
            if not cname:
                self.problems.add(ErrorCode.ATTRIBUTE_MISSING, f"<{child.tag}> without a name", **w)
                return False
            if cname.startswith("__") and cname.endswith("__"):
                self.problems.add(ErrorCode.RESERVED_NAME, f"name {cname!r} is reserved (__name__)", **w)
                return False
            if "::" in cname and dv >= (1, 8):
                self.problems.add(ErrorCode.RESERVED_NAME, f"name {cname!r}: '::' is reserved in names", **w)
                return False
            kind = child.tag
            if cname in seen and (dv >= (1, 7) or seen[cname] == kind):
                self.problems.add(
                    ErrorCode.DUPLICATE_NAME,
                    f"{kind} name {cname!r} is already used by a {seen[cname]} in model {scoped or name!r}",
                    **w,
                )
                return False
            seen[cname] = kind
            return True

        # Model frame vertex (nested models only; the top one is the root).
        if is_top:
            self.graph.add(
                FrameNode(MODEL_FRAME, "model", None, pin.SE3.Identity(), element="model", line=doc.line(elem))
            )
        else:
            if pose_override is not None:
                holder = ET.Element("include")
                holder.append(pose_override)
                raw, _ = self.pose_of(doc, holder, scoped)
            else:
                raw, _ = self.pose_of(doc, elem, scoped)
            placement = placement_override if placement_override is not None else elem.get("placement_frame")
            self.graph.add(
                FrameNode(
                    scoped,
                    "model",
                    parent_frame,  # the caller resolved the pose's relative_to in its own scope
                    raw,
                    placement=(inner + placement.strip()) if placement and placement.strip() else "",
                    element="model",
                    line=doc.line(elem),
                )
            )
            self.frames.append(scoped)

        first_link = ""
        nested_canonicals: list[str] = []
        for child in list(elem):
            tag = child.tag
            if tag == "link":
                lname = child.get("name", "")
                if not check_name(child, lname):
                    continue
                full = inner + lname
                raw, rel = self.pose_of(doc, child, full)
                self.graph.add(
                    FrameNode(full, "link", ref(rel) or model_frame, raw, element="link", line=doc.line(child))
                )
                self.links[full] = SdfLink(full, child.find("inertial"), doc.line(child))
                first_link = first_link or full
                for s in child.findall("sensor"):
                    self.add_sensor(doc, s, full, inner, ref, legacy_noise=doc_top and dv < (1, 6))
            elif tag == "frame":
                fname = child.get("name", "")
                if not check_name(child, fname):
                    continue
                full = inner + fname
                raw, rel = self.pose_of(doc, child, full)
                attached = ref(child.get("attached_to")) or model_frame
                self.graph.add(
                    FrameNode(
                        full,
                        "frame",
                        ref(rel) or attached,
                        raw,
                        attached_to=attached,
                        element="frame",
                        line=doc.line(child),
                    )
                )
                self.frames.append(full)
            elif tag == "joint":
                jname = child.get("name", "")
                if not check_name(child, jname):
                    continue
                self.add_joint(doc, child, inner + jname, ref)
            elif tag in ("model", "include"):
                if tag == "include":
                    loaded = self.load_include(doc, child)
                    if loaded is None:
                        continue
                    idoc, ielem, iname, ipose, iplacement = loaded
                else:
                    idoc, ielem = doc, child
                    iname, ipose, iplacement = child.get("name", ""), None, None
                if not check_name(child if tag == "model" else ielem, iname):
                    continue
                # The nested model's pose is relative to a frame of *this* scope.
                pose_holder = ipose if ipose is not None else ielem.find("pose")
                rel_attr = None if pose_holder is None else pose_holder.get("relative_to")
                canonical = self.add_model(
                    idoc,
                    ielem,
                    inner,
                    ref(rel_attr) or model_frame,
                    name_override=iname,
                    pose_override=ipose,
                    placement_override=iplacement,
                    doc_top=tag == "include",
                )
                if canonical:
                    nested_canonicals.append(canonical)
        # canonical link
        explicit = elem.get("canonical_link")
        canonical = ""
        if explicit and explicit.strip():
            c = ref(explicit)
            if c in self.links:
                canonical = c
            else:
                self.problems.add(
                    ErrorCode.MODEL_CANONICAL_LINK_INVALID,
                    f"canonical_link {explicit!r} of model {scoped or name!r} is not a link of it",
                    **w_model,
                )
        else:
            canonical = first_link or (nested_canonicals[0] if nested_canonicals else "")
            if not canonical:
                self.problems.add(ErrorCode.MODEL_WITHOUT_LINK, f"model {scoped or name!r} has no link", **w_model)
        self.graph.nodes[model_frame].attached_to = canonical or None
        if is_top:
            placement = elem.get("placement_frame")
            if placement and placement.strip() and ref(placement) not in self.graph:
                self.problems.add(
                    ErrorCode.MODEL_PLACEMENT_FRAME_INVALID,
                    f"placement_frame {placement!r} of model {name!r} does not exist",
                    **w_model,
                )
        return canonical

    # ------------------------------------------------------------------ joint
    def add_joint(self, doc: XmlDocument, elem: ET.Element, full: str, ref: ScopeRef) -> None:
        w = self.where(doc, elem, full)
        parent_e, child_e = elem.find("parent"), elem.find("child")
        parent_t = (parent_e.text or "").strip() if parent_e is not None else ""
        child_t = (child_e.text or "").strip() if child_e is not None else ""
        if not child_t:
            self.problems.add(ErrorCode.ELEMENT_MISSING, f"joint {full!r} has no <child>", **w)
        if not parent_t:
            self.problems.add(ErrorCode.ELEMENT_MISSING, f"joint {full!r} has no <parent>", **w)
        child = ref(child_t) or ""
        parent = "world" if parent_t == "world" else (ref(parent_t) or "")
        raw, rel = self.pose_of(doc, elem, full)
        self.graph.add(
            FrameNode(full, "joint", ref(rel) or child, raw, attached_to=child, element="joint", line=doc.line(elem))
        )
        axis = elem.find("axis")
        xyz = np.array([0.0, 0.0, 1.0])
        expressed = full
        lower = upper = None
        if axis is not None:
            xyz_e = axis.find("xyz")
            if xyz_e is not None:
                try:
                    xyz = parse_vector3(xyz_e.text, what="axis xyz", default=(0.0, 0.0, 1.0))
                except PoseTextError as exc:
                    self.problems.add(ErrorCode.ELEMENT_INVALID, f"joint {full!r}: {exc}", **w)
                ei = xyz_e.get("expressed_in")
                if ei and ei.strip():
                    expressed = ref(ei) or full
            upmf = axis.find("use_parent_model_frame")
            if upmf is not None and self.doc_version(doc) < (1, 7):  # sdf/1.7/1_6.convert, per file
                try:
                    if parse_bool(upmf.text, default=False):
                        expressed = ref(MODEL_FRAME) or MODEL_FRAME
                except PoseTextError as exc:
                    self.problems.add(ErrorCode.ELEMENT_INVALID, f"joint {full!r}: {exc}", **w)
            lim = axis.find("limit")
            if lim is not None:
                for tag in ("lower", "upper"):
                    e = lim.find(tag)
                    if e is not None and e.text and e.text.strip():
                        try:
                            val = parse_sdf_double(e.text, what=f"limit {tag}")
                        except PoseTextError as exc:
                            self.problems.add(ErrorCode.ELEMENT_INVALID, f"joint {full!r}: {exc}", **w)
                            continue
                        if tag == "lower":
                            lower = val
                        else:
                            upper = val
        if np.linalg.norm(xyz) < 1e-12:
            self.problems.add(ErrorCode.ELEMENT_INVALID, f"joint {full!r}: axis xyz is zero", **w)
            xyz = np.array([0.0, 0.0, 1.0])
        self.joints[full] = SdfJoint(
            full, (elem.get("type") or "").strip(), parent, child, xyz, expressed, lower, upper, doc.line(elem)
        )
        for s in elem.findall("sensor"):
            self.add_sensor(doc, s, full, full.rsplit("::", 1)[0] + "::" if "::" in full else "", ref)

    # ------------------------------------------------------------------ sensor
    def add_sensor(
        self, doc: XmlDocument, elem: ET.Element, host: str, inner: str, ref: ScopeRef, *, legacy_noise: bool = False
    ) -> None:
        for attr in ("name", "type"):  # sensor.sdf: both required (libsdformat ATTRIBUTE_MISSING)
            if not (elem.get(attr) or "").strip():
                self.problems.add(
                    ErrorCode.ATTRIBUTE_MISSING,
                    f"<sensor> in {host!r} has no {attr} attribute (sensor.sdf requires name and type)",
                    **self.where(doc, elem, inner + elem.get("name", "")),
                )
        sname = inner + elem.get("name", "")
        taken = self.sensor_names.setdefault(host, set())
        # libsdformat loadUniqueRepeated<Sensor> refuses a second sensor of one name on a link / joint; checked
        # for IMUs only, the sensors read here (as for URDF, where Talos has two depth cameras of one name)
        if elem.get("name", "").strip() and sname in taken and is_imu_sensor(elem):
            self.problems.add(
                ErrorCode.DUPLICATE_NAME,
                f"sensor with name {shown(elem.get('name'))} already exists in {host!r}",
                **self.where(doc, elem, sname),
            )
            return
        if is_imu_sensor(elem):
            taken.add(sname)
        raw, rel = self.pose_of(doc, elem, sname)
        self.sensors.append(
            SdfSensor(
                sname, elem, host, ref(rel) or host, raw, doc.line(elem), doc.file, legacy_noise, self.doc_version(doc)
            )
        )

    # ------------------------------------------------------------------ include
    def load_include(
        self, doc: XmlDocument, inc: ET.Element
    ) -> tuple[XmlDocument, ET.Element, str, ET.Element | None, str | None] | None:
        """The ``<include>`` ``inc`` loaded: its document, ``<model>``, name, ``<pose>`` and placement frame;
        None (the problem added) when it cannot be."""
        w = self.where(doc, inc, inc.findtext("name", "") or "")
        if parse_bool(inc.get("merge"), default=False):
            self.problems.add(ErrorCode.MERGE_INCLUDE_UNSUPPORTED, '<include merge="true"> is not supported', **w)
            return None
        uri = (inc.findtext("uri") or "").strip()
        if not uri:
            self.problems.add(ErrorCode.ELEMENT_MISSING, "<include> without <uri>", **w)
            return None
        from .errors import DescriptionError

        try:
            base = doc.path.parent if doc.path is not None else None
            path = resolve_uri(uri, base_dir=base, element="include", line=doc.line(inc))
            if path.is_dir():
                path = _model_file_in_dir(path)
            idoc = load_xml(path)
        except DescriptionError as exc:
            self.problems.extend(exc.problems)
            return None
        model = idoc.root.find("model")
        if model is None:
            self.problems.add(ErrorCode.ELEMENT_MISSING, f"included {uri!r} has no <model>", **w)
            return None
        iv = version_tuple(idoc.root.get("version"))
        if not (1, 5) <= iv <= (1, 11):
            self.problems.add(
                ErrorCode.VERSION_DEPRECATED if iv < (1, 5) else ErrorCode.ATTRIBUTE_INVALID,
                f"included {uri!r} ({idoc.file}) is SDFormat {shown(idoc.root.get('version'))}: not supported "
                "(1.5 to 1.11)",
                **w,
            )
            return None
        name = (inc.findtext("name") or "").strip() or model.get("name", "")
        pose = inc.find("pose")
        placement = (inc.findtext("placement_frame") or "").strip() or None
        return idoc, model, name, pose, placement


def _model_file_in_dir(folder: Path) -> Path:
    """The SDF file of a model folder: ``model.config``'s ``<sdf>`` (highest version), else ``model.sdf``."""
    config = folder / "model.config"
    if config.is_file():
        try:
            root = ET.parse(config).getroot()
            best = None
            for e in root.findall("sdf"):
                v = version_tuple(e.get("version"))
                if e.text and (best is None or v > best[0]):
                    best = (v, e.text.strip())
            if best is not None:
                return folder / best[1]
        except ET.ParseError:
            pass
    return folder / "model.sdf"


def build_model_frames(
    doc: XmlDocument, model: ET.Element, version: tuple[int, int]
) -> tuple[SdfModelFrames, ProblemList]:
    """Frames, links, joints and sensors of a top-level ``<model>``.

    Returns:
        The frames and the problems found (not raised, so the caller can add its own).
    """
    problems = ProblemList()
    b = _Builder(version, problems)
    b.graph.file = doc.file
    canonical = b.add_model(doc, model, "", None)
    # Joint parent/child names must exist (libsdformat Joint.cc / FrameSemantics.cc).
    for j in b.joints.values():
        node = b.graph.nodes[j.name]
        w = Where(element="joint", name=j.name, line=j.line, file=doc.file)
        if j.child and (j.child not in b.graph or j.child == "world"):
            problems.add(ErrorCode.JOINT_CHILD_LINK_INVALID, f"joint {j.name!r}: child {j.child!r} does not exist", **w)
            node.attached_to = None
        if j.parent and j.parent != "world" and j.parent not in b.graph:
            problems.add(
                ErrorCode.JOINT_PARENT_LINK_INVALID, f"joint {j.name!r}: parent {j.parent!r} does not exist", **w
            )
        if j.axis_expressed_in not in b.graph:
            problems.add(
                ErrorCode.JOINT_AXIS_EXPRESSED_IN_INVALID,
                f"joint {j.name!r}: axis expressed_in frame {j.axis_expressed_in!r} does not exist",
                **w,
            )
    for s in b.sensors:
        if s.relative_to not in b.graph:
            problems.add(
                ErrorCode.POSE_RELATIVE_TO_INVALID,
                f"sensor {s.name!r}: relative_to frame {s.relative_to!r} does not exist",
                element="sensor",
                name=s.name,
                line=s.line,
                file=s.file,
            )
    if not problems:
        problems.extend(b.graph.validate())
    if not problems:
        for j in b.joints.values():
            if j.parent == "world":
                continue
            pb, cb = b.graph.frame_body(j.parent), b.graph.frame_body(j.child)
            if pb == cb:
                problems.add(
                    ErrorCode.JOINT_PARENT_SAME_AS_CHILD,
                    f"joint {j.name!r}: parent {j.parent!r} and child {j.child!r} are both on link {pb!r}",
                    element="joint",
                    name=j.name,
                    line=j.line,
                    file=doc.file,
                )
    out = SdfModelFrames(
        name=model.get("name", ""),
        graph=b.graph,
        canonical_link=canonical,
        links=b.links,
        joints=b.joints,
        sensors=b.sensors,
        frames=b.frames,
    )
    return out, problems
