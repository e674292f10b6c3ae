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
from typing import TypeAlias

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from .errors import ErrorCode, ProblemList, Where
from .frame_graph import MODEL_FRAME, FrameGraph, FrameNode
from .imu import is_imu_sensor
from .pose import PoseTextError, parse_bool, parse_pose, parse_sdf_double, parse_vector3, shown
from .sdf_include import load_include, version_tuple
from .xml_input import XmlDocument

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


@dataclass
class _ModelScope:
    """A model being added (:meth:`_Builder.add_model`): its names and the names its children took so far.

    Attributes:
        doc: the document the model is in.
        version: the SDFormat version of that document.
        name: the model's name; ``scoped``: with its enclosing models' (``a::b``; "" prefix for the top one).
        model_frame: its frame (``__model__`` for the top model, else ``scoped``).
        inner: the prefix of its children's scoped names ("" for the top model, else ``scoped::``).
        where: where the model element is, for its problems.
        seen: child name -> the tag of the child that took it.
    """

    doc: XmlDocument
    version: tuple[int, int]
    name: str
    scoped: str
    model_frame: str
    inner: str
    where: Where
    seen: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The model's name in messages (scoped when nested)."""
        return self.scoped or self.name

    def ref(self, text: str | None) -> str | None:
        """A reference written in this scope (``a::b``, ``__model__``, ``a::__model__``) -> its scoped frame
        name; None for no text."""
        if text is None or not text.strip():
            return None
        t = text.strip()
        if t == MODEL_FRAME:
            return self.model_frame
        if t.endswith("::" + MODEL_FRAME):
            t = t[: -len("::" + MODEL_FRAME)]
        return self.inner + t


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
        name: str = name_override or elem.get("name") or ""
        scoped = prefix + name
        scope = _ModelScope(
            doc=doc,
            version=self.doc_version(doc),
            name=name,
            scoped=scoped,
            model_frame=MODEL_FRAME if is_top else scoped,
            inner="" if is_top else scoped + "::",
            where=self.where(doc, elem, scoped or name),
        )
        if parent_frame is None:  # the top model frame is the root
            self.graph.add(
                FrameNode(MODEL_FRAME, "model", None, pin.SE3.Identity(), element="model", line=doc.line(elem))
            )
        else:
            self.add_nested_model_frame(scope, elem, parent_frame, pose_override, placement_override)
        first_link = ""
        nested_canonicals: list[str] = []
        for child in list(elem):
            tag = child.tag
            if tag == "link":
                full = self.add_link(scope, child, doc_top=doc_top)
                first_link = first_link or full
            elif tag == "frame":
                self.add_frame(scope, child)
            elif tag == "joint":
                jname = child.get("name", "")
                if self.check_name(scope, child, jname):
                    self.add_joint(doc, child, scope.inner + jname, scope.ref)
            elif tag in ("model", "include"):
                canonical = self.add_nested_model(scope, child)
                if canonical:
                    nested_canonicals.append(canonical)
        canonical = self.canonical_link(scope, elem, first_link, nested_canonicals)
        self.graph.nodes[scope.model_frame].attached_to = canonical or None
        if is_top:
            self.check_placement_frame(scope, elem)
        return canonical

    def check_name(self, scope: _ModelScope, child: ET.Element, cname: str) -> bool:
        """Whether ``cname`` can name ``child`` in ``scope`` (noted there when it can); else the problem is added:
        no name (``ATTRIBUTE_MISSING``), a reserved one (``__x__``, or ``::`` from 1.8: ``RESERVED_NAME``), or one
        a sibling has (any kind from 1.7, the same kind before: ``DUPLICATE_NAME``)."""
        w = self.where(scope.doc, child, scope.inner + cname)
        if not cname:
            self.problems.add(ErrorCode.ATTRIBUTE_MISSING, f"<{child.tag}> without a name", **w)
            return False
        if cname.startswith("__") and cname.endswith("__"):
            self.problems.add(ErrorCode.RESERVED_NAME, f"name {cname!r} is reserved (__name__)", **w)
            return False
        if "::" in cname and scope.version >= (1, 8):
            self.problems.add(ErrorCode.RESERVED_NAME, f"name {cname!r}: '::' is reserved in names", **w)
            return False
        kind = child.tag
        seen = scope.seen
        if cname in seen and (scope.version >= (1, 7) or seen[cname] == kind):
            self.problems.add(
                ErrorCode.DUPLICATE_NAME,
                f"{kind} name {cname!r} is already used by a {seen[cname]} in model {scope.label!r}",
                **w,
            )
            return False
        seen[cname] = kind
        return True

    def add_nested_model_frame(
        self,
        scope: _ModelScope,
        elem: ET.Element,
        parent_frame: str,
        pose_override: ET.Element | None,
        placement_override: str | None,
    ) -> None:
        """The frame of a nested model: its ``<pose>`` (an ``<include>``'s when given) relative to
        ``parent_frame``, which the enclosing scope resolved; it places the model's ``placement_frame``."""
        doc, scoped = scope.doc, scope.scoped
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
                placement=(scope.inner + placement.strip()) if placement and placement.strip() else "",
                element="model",
                line=doc.line(elem),
            )
        )
        self.frames.append(scoped)

    def add_link(self, scope: _ModelScope, child: ET.Element, *, doc_top: bool) -> str:
        """A ``<link>`` and its sensors; returns its scoped name, "" when its name is refused."""
        doc = scope.doc
        lname = child.get("name", "")
        if not self.check_name(scope, child, lname):
            return ""
        full = scope.inner + lname
        raw, rel = self.pose_of(doc, child, full)
        self.graph.add(
            FrameNode(full, "link", scope.ref(rel) or scope.model_frame, raw, element="link", line=doc.line(child))
        )
        self.links[full] = SdfLink(full, child.find("inertial"), doc.line(child))
        for s in child.findall("sensor"):
            self.add_sensor(doc, s, full, scope.inner, scope.ref, legacy_noise=doc_top and scope.version < (1, 6))
        return full

    def add_frame(self, scope: _ModelScope, child: ET.Element) -> None:
        """An explicit ``<frame>``: attached to its ``attached_to`` (default the model frame), posed relative to
        its ``relative_to`` (default what it is attached to)."""
        fname = child.get("name", "")
        if not self.check_name(scope, child, fname):
            return
        full = scope.inner + fname
        raw, rel = self.pose_of(scope.doc, child, full)
        attached = scope.ref(child.get("attached_to")) or scope.model_frame
        self.graph.add(
            FrameNode(
                full,
                "frame",
                scope.ref(rel) or attached,
                raw,
                attached_to=attached,
                element="frame",
                line=scope.doc.line(child),
            )
        )
        self.frames.append(full)

    def add_nested_model(self, scope: _ModelScope, child: ET.Element) -> str:
        """A nested ``<model>`` or an ``<include>`` (loaded); returns its canonical link, "" when it has none or
        could not be added."""
        if child.tag == "include":
            loaded = load_include(scope.doc, child, self.problems)
            if loaded is None:
                return ""
            idoc, ielem, iname, ipose, iplacement = loaded
        else:
            idoc, ielem = scope.doc, child
            iname, ipose, iplacement = child.get("name", ""), None, None
        if not self.check_name(scope, child if child.tag == "model" else ielem, iname):
            return ""
        # The nested model's pose is relative to a frame of *this* scope.
        pose_holder = ipose if ipose is not None else ielem.find("pose")
        rel_attr = None if pose_holder is None else pose_holder.get("relative_to")
        return self.add_model(
            idoc,
            ielem,
            scope.inner,
            scope.ref(rel_attr) or scope.model_frame,
            name_override=iname,
            pose_override=ipose,
            placement_override=iplacement,
            doc_top=child.tag == "include",
        )

    def canonical_link(
        self, scope: _ModelScope, elem: ET.Element, first_link: str, nested_canonicals: list[str]
    ) -> str:
        """The model's canonical link: its ``canonical_link`` (a link of it), else its first ``<link>``, else
        its first nested model's canonical link; "" (the problem added) when there is none."""
        explicit = elem.get("canonical_link")
        canonical = ""
        if explicit and explicit.strip():
            c = scope.ref(explicit)
            if c in self.links:
                canonical = c
            else:
                self.problems.add(
                    ErrorCode.MODEL_CANONICAL_LINK_INVALID,
                    f"canonical_link {explicit!r} of model {scope.label!r} is not a link of it",
                    **scope.where,
                )
        else:
            canonical = first_link or (nested_canonicals[0] if nested_canonicals else "")
            if not canonical:
                self.problems.add(ErrorCode.MODEL_WITHOUT_LINK, f"model {scope.label!r} has no link", **scope.where)
        return canonical

    def check_placement_frame(self, scope: _ModelScope, elem: ET.Element) -> None:
        """The top model's ``placement_frame`` must be a frame of it (``MODEL_PLACEMENT_FRAME_INVALID``)."""
        placement = elem.get("placement_frame")
        if placement and placement.strip() and scope.ref(placement) not in self.graph:
            self.problems.add(
                ErrorCode.MODEL_PLACEMENT_FRAME_INVALID,
                f"placement_frame {placement!r} of model {scope.name!r} does not exist",
                **scope.where,
            )

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
