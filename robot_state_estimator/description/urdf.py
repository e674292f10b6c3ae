"""URDF -> frames, pinocchio model and IMUs (from ``<gazebo reference>`` sensors).

The pinocchio model comes from pinocchio's own URDF parser (``buildModelFromXML`` with a free-flyer
``root_joint``). The frames follow libsdformat's URDF -> SDFormat conversion (``src/parser_urdf.cc``): the
model frame is the root link's frame; a joint's pose is its ``<origin>`` relative to its parent link; a
link's frame is its parent joint's frame.

IMU sensors are read from ``<gazebo reference="link_or_joint">`` blocks (``<sensor type="imu">``, any case, or
the old ``<sensor:imu>``). libsdformat lumps links connected by fixed joints into their parent
(``ReduceFixedJoints``, deepest first) unless the joint is marked ``<preserveFixedJoint>`` or
``<disableFixedJointLumping>`` (``true``/``yes`` in any case or ``1``, text or ``value`` attribute): a sensor
on a lumped link moves to the parent link and its pose becomes ``joint_origin * sensor_pose`` once per lumped
level (``ReduceSDFExtensionElementTransformReduction``), unless the sensor pose has ``relative_to``, which is
kept (lumped links and joints survive as frames). ``ImuSpec.link`` is therefore the link that carries the
sensor after lumping; ``pose_in_base`` does not depend on lumping. A :class:`~.errors.DescriptionWarning`
flags what libsdformat 14/15 reads otherwise (a lumped sensor pose in degrees or quat_xyzw, a sensor on a
lumped fixed joint, ``<sensor:imu>``, the SDF 1.5 ``<imu><noise>``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import pinocchio as pin

from .errors import DescriptionError, ErrorCode, Problem, ProblemList, Where
from .frame_graph import MODEL_FRAME, FrameGraph, FrameNode
from .imu import ImuFields, default_frame_id, gz_frame_id, is_imu_sensor, parse_imu_fields
from .imu_frames import accepted_imu_frame_ids
from .pose import PoseTextError, parse_pose, urdf_origin
from .types import ImuSpec
from .urdf_numbers import check_urdf_numbers
from .xml_input import XmlDocument


@dataclass
class UrdfJoint:
    """A URDF joint (names, type, ``X_parent_joint`` origin)."""

    name: str
    type: str
    parent: str
    child: str
    origin: pin.SE3
    line: int | None


@dataclass
class UrdfResult:
    """What the URDF reader produced."""

    name: str
    graph: FrameGraph
    model: pin.Model
    root_link: str
    imus: list[ImuSpec]


def _where(doc: XmlDocument, elem: ET.Element | None, name: str = "") -> Where:
    return {
        "element": "" if elem is None else elem.tag,
        "name": name,
        "line": doc.line(elem),
        "file": doc.file,
    }


def read_urdf(doc: XmlDocument, *, base_link: str | None = None) -> UrdfResult:
    """Read a URDF document.

    Args:
        doc: parsed XML whose root is ``<robot>``.
        base_link: the floating base; must be the root link (pinocchio's free-flyer sits there).

    Raises:
        DescriptionError: missing/duplicate names (``DUPLICATE_NAME``), joints naming unknown links
            (``JOINT_PARENT_LINK_INVALID`` / ``JOINT_CHILD_LINK_INVALID``), not exactly one root link
            (``MODEL_CANONICAL_LINK_INVALID``), bad origins (``ELEMENT_INVALID``), a ``base_link`` that is
            not the root (``MODEL_CANONICAL_LINK_INVALID``), sensor problems, or pinocchio refusing the URDF
            (``PARSING_ERROR``).
    """
    root = doc.root
    problems = ProblemList()
    name = root.get("name", "")
    links = _read_links(doc, problems)
    joints = _read_joints(doc, links, problems)
    link_masses = check_urdf_numbers(doc, problems)
    gazebo_imus = _parse_gazebo_imu_fields(doc, links, joints, problems)
    problems.raise_if_any()

    root_link = _root_link(doc, links, joints, problems, base_link=base_link)
    parent_joint_of = {j.child: j for j in joints.values()}
    # URDF keeps link and joint names apart; a joint named like a link (ANYmal C's LF_HAA) is a frame
    # under the key "joint:<name>" so that the link keeps the plain name.
    jkey = {j.name: (f"joint:{j.name}" if j.name in links else j.name) for j in joints.values()}
    graph = _frame_graph(doc, links, joints, root_link, parent_joint_of, jkey)
    problems.extend(graph.validate())
    problems.raise_if_any()

    try:
        model = pin.buildModelFromXML(doc.text, pin.JointModelFreeFlyer())
    except Exception as exc:  # pinocchio raises ValueError/RuntimeError with urdfdom's message
        raise DescriptionError(
            _problem(ErrorCode.PARSING_ERROR, f"pinocchio cannot build the URDF model: {exc}", doc, root, name)
        ) from exc
    model.name = name
    _check_total_mass(model, link_masses, doc, root, name)

    imus = _read_gazebo_imus(
        doc, graph, model, gazebo_imus, set(links), joints, jkey, parent_joint_of, root_link, problems
    )
    problems.raise_if_any()
    return UrdfResult(name=name, graph=graph, model=model, root_link=root_link, imus=imus)


def _read_links(doc: XmlDocument, problems: ProblemList) -> dict[str, ET.Element]:
    """Link name -> its ``<link>`` (the last one of a name); a link without a name or defined twice is a
    problem (``ATTRIBUTE_MISSING``, ``DUPLICATE_NAME``)."""
    links: dict[str, ET.Element] = {}
    for elem in doc.root.findall("link"):
        lname = elem.get("name")
        if not lname:
            problems.add(ErrorCode.ATTRIBUTE_MISSING, "link without a name", **_where(doc, elem))
            continue
        if lname in links:
            problems.add(ErrorCode.DUPLICATE_NAME, f"link {lname!r} defined twice", **_where(doc, elem, lname))
        links[lname] = elem
    return links


def _read_joints(doc: XmlDocument, links: dict[str, ET.Element], problems: ProblemList) -> dict[str, UrdfJoint]:
    """Joint name -> :class:`UrdfJoint` (``origin``: ``X_parent_joint``, m; identity when absent or unreadable,
    which :func:`check_urdf_numbers` reports); names missing or twice, links not found and a joint between a
    link and itself are problems."""
    joints: dict[str, UrdfJoint] = {}
    for elem in doc.root.findall("joint"):
        jname = elem.get("name", "")
        w = _where(doc, elem, jname)
        if not jname:
            problems.add(ErrorCode.ATTRIBUTE_MISSING, "joint without a name", **w)
            continue
        if jname in joints:
            problems.add(ErrorCode.DUPLICATE_NAME, f"joint {jname!r} defined twice", **w)
        parent = elem.find("parent")
        child = elem.find("child")
        pname = "" if parent is None else parent.get("link", "")
        cname = "" if child is None else child.get("link", "")
        if pname not in links:
            problems.add(ErrorCode.JOINT_PARENT_LINK_INVALID, f"joint {jname!r}: parent link {pname!r} not found", **w)
        if cname not in links:
            problems.add(ErrorCode.JOINT_CHILD_LINK_INVALID, f"joint {jname!r}: child link {cname!r} not found", **w)
        if pname and pname == cname:
            problems.add(ErrorCode.JOINT_PARENT_SAME_AS_CHILD, f"joint {jname!r}: parent and child are {pname!r}", **w)
        origin_elem = elem.find("origin")
        try:
            origin = (
                pin.SE3.Identity()
                if origin_elem is None
                else urdf_origin(origin_elem.get("xyz"), origin_elem.get("rpy"))
            )
        except PoseTextError:  # reported by check_urdf_numbers
            origin = pin.SE3.Identity()
        joints[jname] = UrdfJoint(jname, elem.get("type", ""), pname, cname, origin, doc.line(elem))
    return joints


def _root_link(
    doc: XmlDocument,
    links: dict[str, ET.Element],
    joints: dict[str, UrdfJoint],
    problems: ProblemList,
    *,
    base_link: str | None,
) -> str:
    """The one link that is no joint's child, which ``base_link`` (when given) must be.

    Raises:
        DescriptionError: ``MODEL_CANONICAL_LINK_INVALID``: no link, several roots, or another ``base_link``.
    """
    root, name = doc.root, doc.root.get("name", "")
    children = {j.child for j in joints.values()}
    roots = [n for n in links if n not in children]
    if len(roots) != 1:
        problems.add(
            ErrorCode.MODEL_CANONICAL_LINK_INVALID,
            f"URDF needs exactly one root link, found {roots}"
            if links
            else "URDF has no <link> (an empty <robot>: was the file generated from a xacro that failed?)",
            **_where(doc, root, name),
        )
        problems.raise_if_any()
    root_link = roots[0]
    if base_link is not None and base_link != root_link:
        msg = f"base_link {base_link!r} must be the URDF root link {root_link!r} (pinocchio puts the free-flyer there)"
        if base_link not in links:
            msg += f"; {base_link!r} is not a link"
        raise DescriptionError(_problem(ErrorCode.MODEL_CANONICAL_LINK_INVALID, msg, doc, root, name))
    return root_link


def _frame_graph(
    doc: XmlDocument,
    links: dict[str, ET.Element],
    joints: dict[str, UrdfJoint],
    root_link: str,
    parent_joint_of: dict[str, UrdfJoint],
    jkey: dict[str, str],
) -> FrameGraph:
    """The frames as libsdformat's URDF conversion makes them (not validated): the model frame attached to the
    root link; each joint at its origin in its parent link, attached to its child; each link at its parent
    joint (the root link at the model frame). ``jkey``: joint name -> its frame's name."""
    graph = FrameGraph(file=doc.file)
    graph.add(FrameNode(MODEL_FRAME, "model", None, pin.SE3.Identity(), attached_to=root_link, element="robot"))
    for lname, elem in links.items():
        pj = parent_joint_of.get(lname)
        graph.add(
            FrameNode(
                lname,
                "link",
                MODEL_FRAME if pj is None else jkey[pj.name],
                pin.SE3.Identity(),
                element="link",
                line=doc.line(elem),
            )
        )
    for j in joints.values():
        graph.add(
            FrameNode(jkey[j.name], "joint", j.parent, j.origin, attached_to=j.child, element="joint", line=j.line)
        )
    return graph


def _check_total_mass(
    model: pin.Model, link_masses: dict[str, float], doc: XmlDocument, root: ET.Element, name: str
) -> None:
    """A backstop behind :func:`check_urdf_numbers`: pinocchio's bodies weigh what the ``<inertial>`` masses
    sum to (fixed-joint lumping keeps mass), else urdfdom dropped an inertial it could not read (it only says
    so on stderr).

    Raises:
        DescriptionError: ``PARSING_ERROR`` with both totals (kg).
    """
    total_urdf = sum(link_masses.values())
    total_model = sum(float(inertia.mass) for inertia in model.inertias)
    if abs(total_model - total_urdf) > 1e-9 * max(1.0, abs(total_urdf)):
        msg = (
            f"pinocchio's model of the URDF weighs {total_model!r} kg but its <inertial> masses sum to "
            f"{total_urdf!r} kg: urdfdom dropped an <inertial> it could not read (see its messages on stderr)"
        )
        raise DescriptionError(_problem(ErrorCode.PARSING_ERROR, msg, doc, root, name))


def _problem(code: ErrorCode, msg: str, doc: XmlDocument, elem: ET.Element | None, name: str = "") -> Problem:
    return Problem(code, msg, **_where(doc, elem, name))


def _gazebo_flag(elem: ET.Element) -> bool:
    """A boolean of a ``<gazebo>`` extension as libsdformat's URDF parser reads it (``parser_urdf.cc``,
    ``GetKeyValueAsString``): the ``value`` attribute, else the text, trimmed; true when it is ``true`` or
    ``yes`` (any case) or ``1``, false for anything else."""
    text = elem.get("value")
    if text is None:
        text = elem.text or ""
    text = text.strip()
    return text.lower() in ("true", "yes") or text == "1"


def _preserved_fixed_joints(doc: XmlDocument) -> set[str]:
    keep: set[str] = set()
    for g in doc.root.findall("gazebo"):
        ref = g.get("reference")
        if not ref:
            continue
        for e in g:
            if e.tag in ("preserveFixedJoint", "disableFixedJointLumping") and _gazebo_flag(e):
                keep.add(ref)
    return keep


def _warn_gazebo_ignores(sensor: ET.Element, sname: str, where: Where) -> None:
    """Warn about IMU syntax we read but libsdformat 14/15 ignores in a URDF ``<gazebo>`` block (its URDF
    conversion emits SDFormat 1.11, which has neither ``<sensor:imu>`` nor the 1.5 ``<imu><noise>``)."""
    from .errors import warn

    loc = f" ({where['file']}:{where['line']})" if where.get("file") else f" (line {where['line']})"
    if sensor.tag != "sensor":
        warn(
            f"sensor {sname!r}: <sensor:imu> (Gazebo 1.x syntax) is read as an IMU here, but libsdformat does not "
            f'know it, so Gazebo has no such IMU: write <sensor name="..." type="imu">{loc}'
        )
    imu = sensor.find("imu") if sensor.tag == "sensor" else sensor
    if (
        imu is not None
        and imu.find("noise") is not None
        and imu.find("angular_velocity") is None
        and imu.find("linear_acceleration") is None
    ):
        warn(
            f"sensor {sname!r}: the SDFormat 1.5 <imu><noise> block is applied to every axis here, but "
            "libsdformat reads a URDF <gazebo> block as SDFormat 1.11 and ignores it, so Gazebo adds no noise: "
            f"write <angular_velocity>/<linear_acceleration> <x><noise type=...> per axis{loc}"
        )


def _warn_lumped_pose_format(pose_elem: ET.Element, sname: str, ref: str, where: Where) -> None:
    """Warn when libsdformat would misread the ``<pose>`` of a sensor it moves by fixed-joint lumping.

    libsdformat (``parser_urdf.cc``, ``ReduceSDFExtensionElementTransformReduction``) re-reads the text of
    such a pose as six numbers ``x y z roll pitch yaw`` in radians, whatever its ``degrees`` and
    ``rotation_format`` attributes say, and writes the composed pose back without them. We follow the
    attributes (what the author wrote); a Gazebo simulation of this URDF mounts the IMU otherwise.
    """
    from .errors import warn
    from .pose import parse_bool

    fmt = (pose_elem.get("rotation_format") or "euler_rpy").strip()
    degrees = parse_bool(pose_elem.get("degrees"), default=False, what="degrees")
    if fmt == "euler_rpy" and not degrees:
        return
    attr = 'degrees="true"' if degrees else f'rotation_format="{fmt}"'
    loc = f" ({where['file']}:{where['line']})" if where.get("file") else f" (line {where['line']})"
    warn(
        f"sensor {sname!r} on <gazebo reference={ref!r}>: its <pose {attr}> is read as written here, but "
        "libsdformat's URDF conversion lumps the fixed joint and re-reads this pose as x y z roll pitch yaw "
        "in radians, ignoring the attribute, so Gazebo mounts the IMU differently; write the pose in radians "
        f"(euler_rpy) or give it relative_to to have both agree{loc}"
    )


@dataclass
class _GazeboImu:
    """An IMU ``<sensor>`` of a ``<gazebo reference>`` block, read in the first stage (no frames needed)."""

    sensor: ET.Element
    name: str
    ref: str
    fields: ImuFields
    raw: pin.SE3
    pose_elem: ET.Element | None
    relative_to: str | None
    where: Where


def _parse_gazebo_imu_fields(
    doc: XmlDocument, links: dict[str, ET.Element], joints: dict[str, UrdfJoint], problems: ProblemList
) -> list[_GazeboImu]:
    """The IMU sensors of the ``<gazebo>`` blocks with their fields and raw poses; their problems (names,
    references, noise, numbers, pose text) go to ``problems``, in the same stage as the URDF's own."""
    out: list[_GazeboImu] = []
    taken: set[tuple[str | None, str]] = set()  # (reference, sensor name)
    for g in doc.root.findall("gazebo"):
        ref = g.get("reference")
        for e in g.findall("sensor"):  # sensor.sdf: name and type required (libsdformat ATTRIBUTE_MISSING)
            sensor_name = (e.get("name") or "").strip()
            if sensor_name and (ref, sensor_name) in taken and is_imu_sensor(e):
                # the blocks of one reference end up in one link, where libsdformat's loadUniqueRepeated<Sensor>
                # refuses a second sensor of that name; checked for IMUs only, the sensors read here (Talos has
                # two depth cameras of one name, which Gazebo reports and we ignore)
                problems.add(
                    ErrorCode.DUPLICATE_NAME,
                    f"sensor with name {sensor_name!r} already exists in <gazebo reference={ref!r}>",
                    **_where(doc, e, sensor_name),
                )
            taken.add((ref, sensor_name))
            for attr in ("name", "type"):
                if not (e.get(attr) or "").strip():
                    problems.add(
                        ErrorCode.ATTRIBUTE_MISSING,
                        f"<sensor> in <gazebo reference={ref!r}> has no {attr} attribute (sensor.sdf requires "
                        "name and type)",
                        **_where(doc, e, e.get("name", "")),
                    )
        sensors = [e for e in g if is_imu_sensor(e)]
        if not sensors:
            continue
        if not ref:
            for s in sensors:
                problems.add(
                    ErrorCode.ELEMENT_INVALID,
                    "IMU sensor in a <gazebo> block without reference (a sensor needs a link)",
                    **_where(doc, s, s.get("name", "")),
                )
            continue
        if ref not in links and ref not in joints:
            problems.add(
                ErrorCode.ELEMENT_INVALID,
                f'<gazebo reference="{ref}"> holds an IMU but there is no link or joint of that name',
                **_where(doc, g, ref),
            )
            continue
        for s in sensors:
            sname = s.get("name", "") or "imu"
            w = _where(doc, s, sname)
            fields = parse_imu_fields(s, problems, w, legacy_noise=True)
            _warn_gazebo_ignores(s, sname, w)
            pose_elem = s.find("pose")
            try:
                raw = (
                    pin.SE3.Identity()
                    if pose_elem is None
                    else parse_pose(
                        pose_elem.text,
                        rotation_format=pose_elem.get("rotation_format"),
                        degrees=pose_elem.get("degrees"),
                    )
                )
            except PoseTextError as exc:
                problems.add(ErrorCode.ELEMENT_INVALID, f"sensor {sname!r}: {exc}", **w)
                continue
            relative_to = None if pose_elem is None else (pose_elem.get("relative_to") or None)
            out.append(_GazeboImu(s, sname, ref, fields, raw, pose_elem, relative_to, w))
    return out


def _read_gazebo_imus(
    doc: XmlDocument,
    graph: FrameGraph,
    model: pin.Model,
    found: list[_GazeboImu],
    links: set[str],
    joints: dict[str, UrdfJoint],
    jkey: dict[str, str],
    parent_joint_of: dict[str, UrdfJoint],
    root_link: str,
    problems: ProblemList,
) -> list[ImuSpec]:
    preserved = _preserved_fixed_joints(doc)
    imus: list[ImuSpec] = []
    for gi in found:
        s, sname, ref, raw, pose_elem, relative_to, w = (
            gi.sensor,
            gi.name,
            gi.ref,
            gi.raw,
            gi.pose_elem,
            gi.relative_to,
            gi.where,
        )
        if relative_to is not None and relative_to not in graph:
            problems.add(
                ErrorCode.POSE_RELATIVE_TO_INVALID,
                f"sensor {sname!r}: relative_to frame {relative_to!r} does not exist",
                **w,
            )
            continue
        # Host link and pose in it, before lumping.
        if ref not in links:
            link = joints[ref].child
            X_link_host = graph.resolve_pose(jkey[ref], link)
            j = joints[ref]
            if j.type == "fixed" and j.name not in preserved and j.parent != "world":
                from .errors import warn

                warn(
                    f"sensor {sname!r} is in <gazebo reference={ref!r}>, a fixed joint that libsdformat lumps "
                    "away, dropping the sensor (Gazebo has no such IMU); it is kept here on the child link "
                    f"{link!r}: reference that link, or preserve the joint ({doc.file or 'line'}:{w['line']})"
                )
        else:
            link, X_link_host = ref, pin.SE3.Identity()
        pose_in_link = X_link_host * raw
        # Fixed-joint lumping, deepest first: each level composes the joint origin.
        lumped = False
        while True:
            pj = parent_joint_of.get(link)
            if pj is None or pj.type != "fixed" or pj.name in preserved or pj.parent == "world":
                break
            pose_in_link = pj.origin * pose_in_link
            link = pj.parent
            lumped = True
        if lumped and pose_elem is not None and relative_to is None:
            _warn_lumped_pose_format(pose_elem, sname, ref, w)
        if relative_to is not None:
            pose_in_link = graph.resolve_pose(relative_to, link) * raw
        pose_in_base = graph.resolve_pose(link, root_link) * pose_in_link
        frame_id = gi.fields.frame_id or default_frame_id(sname)
        gz_id = gz_frame_id(s, doc.root.get("name", ""), link if ref in links else ref)
        imus.append(
            gi.fields.imu_spec(
                name=sname,
                link=link,
                frame_id=frame_id,
                gz_frame_id=gz_id,
                pose_in_link=pose_in_link,
                pose_in_base=pose_in_base,
                accepted_frame_ids=accepted_imu_frame_ids(graph, model, link, pose_in_link, (frame_id, gz_id)),
            )
        )
    return imus
