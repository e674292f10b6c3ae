"""Every number of a URDF that urdfdom parses, checked before pinocchio builds the model.

pinocchio reads a URDF with urdfdom, which refuses the whole model for a malformed number of a ``<joint>``
(``origin``, ``axis``, ``limit``, ``dynamics``, ``calibration``, ``safety_controller``, ``mimic``: pinocchio
then raises "The XML stream does not contain a valid URDF model" without saying why), but only prints to
stderr and goes on for one in a ``<link>`` or a ``<material>``: ``urdf::parseURDF`` ignores ``parseLink``'s
result, so a bad ``<inertial>`` number, a missing ``<mass>``/``<inertia>`` or one of the six inertia
attributes leaves the link with mass 0 (``<mass value="5.2O4">`` on the Go1 trunk: no error, a 5.2 kg
lighter robot), and a bad ``<visual>``/``<collision>`` number drops that element and the rest of the link's
visuals and collisions. We refuse all of them, each as a ``PARAMETER_ERROR`` (``ATTRIBUTE_MISSING`` /
``ELEMENT_MISSING`` for the missing inertial parts) naming the element, attribute, text, file and line.

Source (facts, checked against the installed urdfdom 6.0 through pinocchio): urdfdom ``urdf_parser/src/
link.cpp`` (``parseInertial``, ``parseVisual``, ``parseCollision``, ``parseSphere``/``Box``/``Cylinder``/
``Mesh``, ``parseMaterial``), ``joint.cpp`` (``parseJointDynamics``, ``parseJointLimits``,
``parseJointSafety``, ``parseJointCalibration``, ``parseJointMimic``, the axis), ``pose.cpp`` (``xyz``,
``rpy``), ``model.cpp`` (what is refused and what only logged). The number grammar is
:func:`~.pose.parse_urdf_double`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .errors import ErrorCode, ProblemList, Where
from .pose import SHOWN_CHARS, PoseTextError, parse_urdf_double, parse_urdf_vector
from .xml_input import XmlDocument

#: Optional number attributes of the children of a ``<joint>`` (urdfdom ``joint.cpp``).
JOINT_SCALARS = {
    "limit": ("lower", "upper", "effort", "velocity"),
    "dynamics": ("damping", "friction"),
    "calibration": ("rising", "falling"),
    "safety_controller": ("soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity"),
    "mimic": ("multiplier", "offset"),
}
INERTIA_ATTRIBUTES = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")

#: What urdfdom does with a malformed number of a link / joint (for the messages).
_LINK_CONSEQUENCE = {
    "inertial": "urdfdom would drop the link's <inertial> (mass 0) with only a message on stderr",
    "visual": "urdfdom would drop this <visual> and the link's later visuals and collisions",
    "collision": "urdfdom would drop this <collision> and the link's later ones",
    "material": "urdfdom would drop the material colour",
}
_JOINT_CONSEQUENCE = "urdfdom refuses the whole model"
_GRAMMAR = "a URDF number is a C-locale decimal like -1.5e-3, no spaces after it, no nan/inf"


class _Checker:
    def __init__(self, doc: XmlDocument, problems: ProblemList) -> None:
        self.doc = doc
        self.problems = problems

    def where(self, owner: str, name: str, elem: ET.Element) -> Where:
        return {"element": owner, "name": name, "line": self.doc.line(elem), "file": self.doc.file}

    def scalar(self, elem: ET.Element, attr: str, owner: str, name: str, path: str, consequence: str) -> float | None:
        text = elem.get(attr)
        if text is None:
            return None
        try:
            return parse_urdf_double(text, what=attr)
        except PoseTextError as exc:
            self.bad(elem, attr, text, owner, name, path, str(exc), consequence)
            return None

    def vector(
        self, elem: ET.Element, attr: str, owner: str, name: str, path: str, consequence: str, n: int = 3
    ) -> None:
        text = elem.get(attr)
        if text is None:
            return
        try:
            values = parse_urdf_vector(text, n, what=attr)
        except PoseTextError as exc:
            self.bad(elem, attr, text, owner, name, path, str(exc), consequence)
            return
        if attr == "rgba" and not all(0.0 <= v <= 1.0 for v in values):
            self.bad(elem, attr, text, owner, name, path, "rgba values must be in [0, 1]", consequence)

    def bad(
        self,
        elem: ET.Element,
        attr: str,
        text: str,
        owner: str,
        name: str,
        path: str,
        reason: str,
        consequence: str,
    ) -> None:
        hint = _GRAMMAR + "; " if "not a number" in reason else ""
        # control characters escaped (one line per problem), a long text cut
        cut = repr(text[:SHOWN_CHARS])[1:-1] + (f"... ({len(text)} characters)" if len(text) > SHOWN_CHARS else "")
        self.problems.add(
            ErrorCode.PARAMETER_ERROR,
            f'{owner} {name!r}: <{path} {attr}="{cut}">: {reason} ({hint}{consequence})',
            **self.where(owner, name, elem),
        )

    def origin(self, parent: ET.Element, owner: str, name: str, path: str, consequence: str) -> None:
        o = parent.find("origin")
        if o is not None:
            for attr in ("xyz", "rpy"):
                self.vector(o, attr, owner, name, f"{path}origin", consequence)

    def geometry(self, parent: ET.Element, owner: str, name: str, path: str, consequence: str) -> None:
        g = parent.find("geometry")
        shape = None if g is None else next(iter(g), None)
        if shape is None:
            return
        p = f"{path}geometry><{shape.tag}"
        if shape.tag == "sphere":
            self.scalar(shape, "radius", owner, name, p, consequence)
        elif shape.tag == "cylinder":
            for attr in ("radius", "length"):
                self.scalar(shape, attr, owner, name, p, consequence)
        elif shape.tag == "box":
            self.vector(shape, "size", owner, name, p, consequence)
        elif shape.tag == "mesh":
            self.vector(shape, "scale", owner, name, p, consequence)

    def material(self, mat: ET.Element, owner: str, name: str, path: str) -> None:
        c = mat.find("color")
        if c is not None:
            self.vector(c, "rgba", owner, name, f"{path}material><color", _LINK_CONSEQUENCE["material"], n=4)

    def inertial(self, link: ET.Element, name: str) -> float:
        inertial = link.find("inertial")
        if inertial is None:
            return 0.0
        why = _LINK_CONSEQUENCE["inertial"]
        self.origin(inertial, "link", name, "inertial><", why)
        mass = inertial.find("mass")
        value = 0.0
        if mass is None:
            self.problems.add(
                ErrorCode.ELEMENT_MISSING,
                f"link {name!r}: <inertial> has no <mass> ({why})",
                **self.where("link", name, inertial),
            )
        elif mass.get("value") is None:
            self.problems.add(
                ErrorCode.ATTRIBUTE_MISSING,
                f"link {name!r}: <inertial><mass> has no value attribute ({why})",
                **self.where("link", name, mass),
            )
        else:
            value = self.scalar(mass, "value", "link", name, "inertial><mass", why) or 0.0
            if value < 0.0:
                # urdfdom and pinocchio take it; Gazebo does not (libsdformat's Link::Load after its URDF
                # conversion: "has invalid inertia"), and the foot forces from the gravity torques would be wrong
                self.problems.add(
                    ErrorCode.LINK_INERTIA_INVALID,
                    f"link {name!r} has invalid inertia: <inertial><mass value> {value!r} kg < 0",
                    **self.where("link", name, mass),
                )
        inertia = inertial.find("inertia")
        if inertia is None:
            self.problems.add(
                ErrorCode.ELEMENT_MISSING,
                f"link {name!r}: <inertial> has no <inertia> ({why})",
                **self.where("link", name, inertial),
            )
            return value
        missing = [a for a in INERTIA_ATTRIBUTES if inertia.get(a) is None]
        if missing:
            self.problems.add(
                ErrorCode.ATTRIBUTE_MISSING,
                f"link {name!r}: <inertial><inertia> lacks {', '.join(missing)} (all of "
                f"{', '.join(INERTIA_ATTRIBUTES)} are required; {why})",
                **self.where("link", name, inertia),
            )
        for a in INERTIA_ATTRIBUTES:
            self.scalar(inertia, a, "link", name, "inertial><inertia", why)
        return value


def check_urdf_numbers(doc: XmlDocument, problems: ProblemList) -> dict[str, float]:
    """Check every number urdfdom reads in ``doc`` (a ``<robot>``), adding one problem per bad attribute.

    Args:
        doc: the URDF document.
        problems: collects ``PARAMETER_ERROR`` (malformed number, rgba outside [0, 1]), ``LINK_INERTIA_INVALID``
            (a negative mass), ``ATTRIBUTE_MISSING``
            / ``ELEMENT_MISSING`` (``<inertial>`` without ``<mass value>``, ``<inertia>`` or one of its six
            attributes); the location is the link / joint by name and the line of the offending element.

    Returns:
        link name -> its ``<inertial><mass value>`` in kg (0 without ``<inertial>`` or when malformed), for
        the loader's check of pinocchio's total mass.
    """
    c = _Checker(doc, problems)
    for mat in doc.root.findall("material"):
        c.material(mat, "material", mat.get("name", ""), "")
    masses: dict[str, float] = {}
    for link in doc.root.findall("link"):
        name = link.get("name", "")
        masses[name] = c.inertial(link, name)
        for tag in ("visual", "collision"):
            why = _LINK_CONSEQUENCE[tag]
            for elem in link.findall(tag):
                c.origin(elem, "link", name, f"{tag}><", why)
                c.geometry(elem, "link", name, f"{tag}><", why)
                visual_material = elem.find("material") if tag == "visual" else None
                if visual_material is not None:
                    c.material(visual_material, "link", name, f"{tag}><")
    for joint in doc.root.findall("joint"):
        name = joint.get("name", "")
        c.origin(joint, "joint", name, "", _JOINT_CONSEQUENCE)
        axis = joint.find("axis")
        if axis is not None and joint.get("type") not in ("fixed", "floating"):  # urdfdom reads no axis there
            c.vector(axis, "xyz", "joint", name, "axis", _JOINT_CONSEQUENCE)
        for tag, attrs in JOINT_SCALARS.items():
            child = joint.find(tag)
            if child is not None:
                for attr in attrs:
                    c.scalar(child, attr, "joint", name, tag, _JOINT_CONSEQUENCE)
    return masses
