"""Structural mutations of real descriptions: ``load_description`` returns a description or raises a clear
``DescriptionError``, nothing else, never hangs.

The bases are the bundled Go1 (``config/robots/go1.urdf.xacro`` expanded once, as URDF text) and the SDFormat
fixtures ``go1.sdf`` and ``solo12.sdf`` (each with an IMU sensor posed through ``<frame>``s). A mutation deletes,
duplicates, moves or renames an element, deletes an attribute, puts a bad value ('', 'nan', 'inf', '-1',
'1e400', 'abc', a 400-digit number, whitespace) in an attribute or a text, points a reference (joint
parent/child, ``attached_to``, ``relative_to``, ``canonical_link``, ``expressed_in``, ``<gazebo reference>``) at a
missing name or at itself, truncates the file, injects a DOCTYPE with entities, or changes the version.

A description that loads must be finite and sane (inertias, joint placements, IMU poses and noise); a refusal
must name something of the file (its line, or an element or name in it) in one line per problem.
"""

from __future__ import annotations

import contextlib
import copy
import math
import re
import signal
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_state_estimator.description import (
    DescriptionError,
    DescriptionWarning,
    ErrorCode,
    RobotDescription,
    load_description,
)
from robot_state_estimator.description.xml_input import XACRO_NS, read_text

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def _go1_urdf_text() -> str:
    text, _ = read_text(REPO / "config" / "robots" / "go1.urdf.xacro")
    # the expansion still declares the xacro namespace, which would send every mutant through xacro again
    return re.sub(r'\s+xmlns:xacro="[^"]*"', "", text)


ET.register_namespace("xacro", XACRO_NS)
#: name -> description text; parsed once per session
BASES: dict[str, str] = {
    "go1_xacro": (REPO / "config" / "robots" / "go1.urdf.xacro").read_text(),
    "go1_urdf": _go1_urdf_text(),
    "go1_sdf": (FIXTURES / "go1.sdf").read_text(),
    "solo12_sdf": (FIXTURES / "solo12.sdf").read_text(),
}
TREES: dict[str, ET.Element] = {name: ET.fromstring(text) for name, text in BASES.items()}

#: values put in place of an attribute or a text
BAD_VALUES = ["", "nan", "inf", "-inf", "-1", "0", "1e400", "1e-400", "abc", "1" * 400, "  \t\n ", "1 2", "-0"]
#: what a reference is renamed to ("{self}" = the element's own name, "{other}" = another name of the file)
REFERENCE_TARGETS = ["missing_frame", "{self}", "{other}", "__model__", "world", "", "a::b"]
#: parts of a description a mutation is aimed at ("" = anywhere)
FOCUS = ["", "", "sensor", "imu", "joint", "frame", "link", "gazebo", "inertial", "pose", "model"]
VERSIONS = ["", "1.0", "1.4", "1.5", "1.6", "1.7", "1.8", "1.12", "2.0", "abc", "1", "1.9.1", " 1.9 ", "1.x", "-1.9"]
#: a DOCTYPE and where its entity is used
DOCTYPES = [
    '<!DOCTYPE r [<!ENTITY e "0.5">]>',
    "<!DOCTYPE r [<!ENTITY e \"<link name='injected'/>\">]>",
    '<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/hostname">]>',
    '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY e "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>',
    '<!DOCTYPE r SYSTEM "http://example.invalid/robot.dtd">',
    '<!DOCTYPE r [<!ENTITY e "&e;">]>',
]
#: SDF elements whose text is a frame name / URDF attributes that name a link
SDF_REFERENCE_TEXTS = ("parent", "child")
SDF_REFERENCE_ATTRIBUTES = ("attached_to", "relative_to", "canonical_link", "expressed_in", "placement_frame")
URDF_REFERENCE_ATTRIBUTES = {("parent", "link"), ("child", "link"), ("gazebo", "reference")}

LOAD_TIMEOUT_S = 20.0


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ``TimeoutError`` in this (main) thread after ``seconds``: a hang fails the test."""

    def on_alarm(signum, frame):
        raise TimeoutError(f"load_description took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ---------------------------------------------------------------------------------------------- the property
def load_or_refuse(text: str) -> RobotDescription | DescriptionError:
    """``load_description(text)``: the description (checked sane) or the ``DescriptionError`` (checked clear).
    Any other exception, or more than ``LOAD_TIMEOUT_S``, propagates and fails the test."""
    with time_limit(LOAD_TIMEOUT_S), warnings.catch_warnings():
        warnings.simplefilter("ignore", DescriptionWarning)
        try:
            desc = load_description(text)
        except DescriptionError as exc:
            assert_clear_error(exc, text)
            return exc
    assert_sane(desc)
    return desc


def assert_clear_error(exc: DescriptionError, text: str) -> None:
    assert exc.problems
    for p in exc.problems:
        msg = str(p)
        assert p.message.strip(), p
        assert "\n" not in msg and "Traceback" not in msg, msg
        assert len(msg) < 1200, f"message too long ({len(msg)} characters): {msg[:300]}..."
        quoted = re.findall(r"'([^']+)'|\"([^\"]+)\"|(xacro:[\w-]+)|\[([^\]]+)\]", p.message)
        located = (
            not text.strip()  # nothing to name: the message says the description is empty
            or p.line is not None
            or (p.name != "" and p.name in text)
            or (p.element != "" and f"<{p.element}" in text)
            or any(q in text for groups in quoted for q in groups if q)  # xacro's messages quote a name
            # xacro gives no location for some of its errors (a self-calling macro, a bad include filename)
            or (p.message.startswith("xacro failed:") and "ros.org/wiki/xacro" in text)
        )
        assert located, f"the problem names nothing of the file: {msg}"


def _finite(a) -> bool:
    return bool(np.all(np.isfinite(np.asarray(a, dtype=float))))


def assert_sane(desc: RobotDescription) -> None:
    """A loaded description has finite numbers everywhere and proper rotations."""
    model = desc.model
    assert model.njoints >= 2 and model.names[1] == "root_joint"
    for inertia in model.inertias:
        assert _finite(inertia.mass) and _finite(inertia.lever) and _finite(inertia.inertia), inertia
    for X in list(model.jointPlacements) + [f.placement for f in model.frames]:
        assert _finite(X.homogeneous)
        np.testing.assert_allclose(X.rotation @ X.rotation.T, np.eye(3), atol=1e-9)
    assert not np.any(np.isnan(model.lowerPositionLimit)) and not np.any(np.isnan(model.upperPositionLimit))
    for imu in desc.imus:
        for X in (imu.pose_in_link, imu.pose_in_base):
            assert _finite(X.homogeneous)
            np.testing.assert_allclose(X.rotation @ X.rotation.T, np.eye(3), atol=1e-9)
        assert math.isfinite(imu.update_rate), imu.update_rate
        assert _finite(imu.custom_rpy) and _finite(imu.grav_dir_x)
        for n in (*imu.angular_velocity_noise, *imu.linear_acceleration_noise):
            values = [
                n.mean,
                n.stddev,
                n.bias_mean,
                n.bias_stddev,
                n.dynamic_bias_stddev,
                n.dynamic_bias_correlation_time,
                n.precision,
            ]
            assert _finite(values), n
            assert n.stddev >= 0 and n.bias_stddev >= 0 and n.dynamic_bias_stddev >= 0, n
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    assert all(_finite(X.homogeneous) for X in data.oMf)


# ---------------------------------------------------------------------------------------------- mutations
def _elements(root: ET.Element) -> list[tuple[ET.Element, ET.Element]]:
    """(parent, child) pairs in document order."""
    return [(parent, child) for parent in root.iter() for child in parent]


def _names(root: ET.Element) -> list[str]:
    return sorted({e.get("name", "") for e in root.iter() if e.get("name")})


def _serialize(root: ET.Element) -> str:
    return ET.tostring(root, encoding="unicode")


class Chooser:
    """The random choices of a mutation, drawn from hypothesis (``data``) or, for exploring, from ``random``."""

    def __init__(self, data: st.DataObject | None = None, rng=None) -> None:
        self.data, self.rng = data, rng

    def pick(self, items, label: str):
        items = list(items)
        if self.data is not None:
            return self.data.draw(st.sampled_from(items), label=label)
        return items[self.rng.randrange(len(items))]

    def integer(self, lo: int, hi: int, label: str) -> int:
        if self.data is not None:
            return self.data.draw(st.integers(lo, hi), label=label)
        return self.rng.randint(lo, hi)


def mutate(data: Chooser, base: str) -> str:
    """One random mutation of ``BASES[base]`` (choices from ``data``), as text."""
    kind = data.pick(
        [
            "delete_element",
            "delete_attribute",
            "bad_attribute",
            "bad_text",
            "duplicate",
            "move",
            "reference",
            "truncate",
            "doctype",
            "version",
        ],
        label="mutation",
    )
    text = BASES[base]
    if kind == "truncate":
        cut = data.integer(0, len(text.encode()) - 1, label="byte")
        return text.encode()[:cut].decode("utf-8", errors="ignore")
    if kind == "doctype":
        doctype = data.pick(DOCTYPES, label="doctype")
        body = re.sub(r"^<\?xml[^>]*\?>", "", text.lstrip())
        # the entity replaces one number of the file
        numbers = list(re.finditer(r"(?<=[\">])-?[0-9][0-9.e-]*(?=[\"< ])", body))
        if numbers:
            m = numbers[data.integer(0, len(numbers) - 1, label="number")]
            body = body[: m.start()] + "&e;" + body[m.end() :]
        return doctype + "\n" + body
    root = copy.deepcopy(TREES[base])
    if kind == "version":
        root.set("version", data.pick(VERSIONS, label="version"))
        return _serialize(root)
    # the element to mutate: anywhere, or inside a part that matters to the estimator (a uniform pick over the
    # Go1 URDF's 1500 elements would seldom reach its IMU)
    focus = data.pick(FOCUS, label="focus")
    pairs = _elements(root)
    if focus:
        inside = {id(e) for top in root.iter(focus) for e in top.iter()}
        pairs = [(p, c) for p, c in pairs if id(c) in inside] or pairs
    if kind == "delete_element":
        parent, child = data.pick(pairs, label="element")
        parent.remove(child)
    elif kind == "delete_attribute":
        with_attrs = [c for _, c in pairs if c.attrib] or [e for e in root.iter() if e.attrib]
        elem = data.pick(with_attrs, label="element")
        del elem.attrib[data.pick(sorted(elem.attrib), label="attribute")]
    elif kind == "bad_attribute":
        with_attrs = [c for _, c in pairs if c.attrib] or [e for e in root.iter() if e.attrib]
        elem = data.pick(with_attrs, label="element")
        attr = data.pick(sorted(elem.attrib), label="attribute")
        elem.set(attr, data.pick(BAD_VALUES, label="value"))
    elif kind == "bad_text":
        with_text = [c for _, c in pairs if len(c) == 0] or [e for e in root.iter() if len(e) == 0]
        elem = data.pick(with_text, label="element")
        elem.text = data.pick(BAD_VALUES, label="value")
    elif kind == "duplicate":
        parent, child = data.pick(pairs, label="element")
        parent.insert(list(parent).index(child) + 1, copy.deepcopy(child))
    elif kind == "move":
        parent, child = data.pick(pairs, label="element")
        inside = set(map(id, child.iter()))
        targets = [e for e in root.iter() if id(e) not in inside and e is not parent] or [root]
        target = data.pick(targets, label="new parent")
        parent.remove(child)
        target.append(child)
    elif kind == "reference":
        sites = _reference_sites(root, base.endswith("sdf"))
        elem, attr = data.pick(sites, label="reference")
        target = data.pick(REFERENCE_TARGETS, label="target")
        own = elem.get("name") or next((p.get("name") for p, c in pairs if c is elem and p.get("name")), "x")
        if target == "{self}":
            target = own
        elif target == "{other}":
            target = data.pick(_names(root), label="other name")
        if attr is None:
            elem.text = target
        else:
            elem.set(attr, target)
    return _serialize(root)


def _reference_sites(root: ET.Element, sdf: bool) -> list[tuple[ET.Element, str | None]]:
    """(element, attribute) pairs holding a reference to a frame / link; attribute None = the text."""
    sites: list[tuple[ET.Element, str | None]] = []
    for e in root.iter():
        if sdf:
            if e.tag in SDF_REFERENCE_TEXTS:
                sites.append((e, None))
            sites += [(e, a) for a in SDF_REFERENCE_ATTRIBUTES if a in e.attrib or e.tag in ("pose", "frame")]
        else:
            sites += [(e, a) for tag, a in URDF_REFERENCE_ATTRIBUTES if e.tag == tag]
    return sites


# ---------------------------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("base", sorted(BASES))
def test_the_bases_load(base):
    desc = load_or_refuse(BASES[base])
    assert isinstance(desc, RobotDescription)
    assert len(desc.imus) == 1


@pytest.mark.parametrize("base", ["go1_sdf", "go1_urdf", "solo12_sdf"])
@settings(max_examples=120)
@given(data=st.data())
def test_a_mutated_description_loads_or_is_refused_clearly(base, data):
    load_or_refuse(mutate(Chooser(data), base))


@settings(max_examples=40)  # xacro takes ~60 ms per run
@given(data=st.data())
def test_a_mutated_xacro_loads_or_is_refused_clearly(data):
    load_or_refuse(mutate(Chooser(data), "go1_xacro"))


# ---------------------------------------------------------------------------------------------- regressions
# Each input below is a mutation the property test found: before the fix it raised another exception or loaded
# a description with non-finite or otherwise wrong numbers.
GO1_SDF = BASES["go1_sdf"]
SOLO12_SDF = BASES["solo12_sdf"]
GO1_URDF = BASES["go1_urdf"]


def refused(text: str) -> DescriptionError:
    result = load_or_refuse(text)
    assert isinstance(result, DescriptionError), "loaded"
    return result


def one_problem(text: str):
    exc = refused(text)
    assert len(exc.problems) == 1, exc.problems
    return exc.problems[0]


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("value", "reason"),
    [("nan", "non-finite"), ("inf", "non-finite"), ("1e400", "out of the range"), ("abc", "is not a number")],
)
def test_a_non_finite_sdf_inertia_is_refused_by_name_not_by_pinocchio(value, reason):
    # was RuntimeError("The 3d inertia should be symmetric.") from pinocchio.Inertia for nan
    p = one_problem(GO1_SDF.replace("<ixx>0.0168128557</ixx>", f"<ixx>{value}</ixx>"))
    assert p.code is ErrorCode.ELEMENT_INVALID
    assert (p.element, p.name, p.line) == ("link", "trunk", line_of(GO1_SDF, '<link name="trunk">'))
    assert "inertia/ixx" in p.message and repr(value) in p.message and reason in p.message


def test_a_negative_sdf_moment_of_inertia_is_link_inertia_invalid():
    # was RuntimeError("The 3d inertia should be positive.") from pinocchio.Inertia
    p = one_problem(GO1_SDF.replace("<ixx>0.0168128557</ixx>", "<ixx>-1</ixx>"))
    assert p.code is ErrorCode.LINK_INERTIA_INVALID and p.name == "trunk"
    assert "not positive semi-definite" in p.message and "eigenvalues -1," in p.message


def test_a_negative_sdf_mass_is_link_inertia_invalid():
    # was loaded: a trunk of -1 kg (libsdformat: "A link named trunk has invalid inertia.")
    p = one_problem(GO1_SDF.replace("<mass>5.204</mass>", "<mass>-1</mass>"))
    assert p.code is ErrorCode.LINK_INERTIA_INVALID and p.name == "trunk"
    assert "mass -1.0 kg < 0" in p.message


@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        ("<mean>0</mean>", "<mean>nan</mean>", "angular_velocity x noise mean 'nan'"),
        ("<stddev>0.00137</stddev>", "<stddev>inf</stddev>", "angular_velocity x noise stddev 'inf'"),
        ("<stddev>0.00137</stddev>", "<stddev>1_0</stddev>", "angular_velocity x noise stddev '1_0'"),
        ("<update_rate>1000</update_rate>", "<update_rate>1e400</update_rate>", "update_rate '1e400'"),
    ],
)
def test_a_non_finite_or_non_c_imu_number_is_refused(old, new, what):
    # were loaded as nan, inf, 10.0 (Python's float reads '1_0') and inf
    p = one_problem(SOLO12_SDF.replace(old, new, 1))
    assert p.code is ErrorCode.ELEMENT_INVALID
    assert (p.element, p.name) == ("sensor", "imu_sensor") and what in p.message


def test_a_non_finite_sdf_joint_limit_is_refused():
    # was loaded with a nan lower limit
    p = one_problem(GO1_SDF.replace("<lower>-0.863</lower>", "<lower>nan</lower>", 1))
    assert (p.code, p.element, p.name) == (ErrorCode.ELEMENT_INVALID, "joint", "FR_hip_joint")
    assert "limit lower 'nan' has a non-finite number" in p.message


@pytest.mark.parametrize(
    "entity", ['<!ENTITY e "9.9">', '<!ENTITY e SYSTEM "file:///etc/hostname">', '<!ENTITY % p "x">']
)
def test_an_entity_declaration_is_refused(entity):
    # expat expanded &e; (a 9.9 kg trunk) or, for a SYSTEM entity, read it as empty (the 1 kg spec default), where
    # libsdformat and urdfdom (tinyxml2) leave '&e;' as written and refuse the number
    body = GO1_SDF.replace('<?xml version="1.0"?>\n', "").replace("<mass>5.204</mass>", "<mass>&e;</mass>")
    p = one_problem(f"<!DOCTYPE sdf [{entity}]>\n{body}")
    assert (p.code, p.line) == (ErrorCode.XML_ERROR, 1)
    assert "declares the entity" in p.message and "tinyxml2" in p.message


def test_a_doctype_without_entities_is_accepted():
    desc = load_or_refuse('<!DOCTYPE sdf SYSTEM "sdf.dtd">\n' + GO1_SDF.replace('<?xml version="1.0"?>\n', ""))
    assert isinstance(desc, RobotDescription) and desc.imu.name == "imu_sensor"


def test_a_long_value_is_cut_in_the_message():
    # a 10000-character value (an expanded entity) was quoted whole: a 10 kB message
    p = one_problem(GO1_SDF.replace("<ixx>0.0168128557</ixx>", f"<ixx>{'a' * 10000}</ixx>"))
    assert len(str(p)) < 300 and "(10000 characters)" in p.message
    p = one_problem(SOLO12_SDF.replace('sdf version="1.8"', f'sdf version="{"9" * 10000}"'))
    assert len(str(p)) < 300 and "(10000 characters)" in p.message


def test_a_urdf_number_of_whitespace_gives_a_one_line_message():
    # the attribute text was written as is, tab and line break included: a message over three lines
    bad = GO1_URDF.replace('<mass value="5.204"/>', '<mass value="  &#9;&#10; "/>')
    p = one_problem(bad)
    assert p.code is ErrorCode.PARAMETER_ERROR and p.name == "trunk"
    assert "\n" not in str(p) and '<inertial><mass value="  \\t\\n ">' in p.message


def test_an_empty_description_says_so():
    # was FILE_READ "no such file: ''"
    for text in ("", " \n\t"):
        p = one_problem(text)
        assert p.code is ErrorCode.XML_ERROR and "the description is empty" in p.message


def test_two_sdf_sensors_of_one_name_on_a_link_are_a_duplicate_name():
    # was loaded with two IMUs called imu_sensor (libsdformat: "Sensor with name[imu_sensor] already exists.")
    sensor = re.search(r'<sensor name="imu_sensor".*?</sensor>', SOLO12_SDF, re.S)
    assert sensor is not None
    p = one_problem(SOLO12_SDF.replace(sensor.group(0), sensor.group(0) * 2))
    assert (p.code, p.element, p.name) == (ErrorCode.DUPLICATE_NAME, "sensor", "imu_sensor")
    assert p.line == line_of(SOLO12_SDF, '<sensor name="imu_sensor"') and "'base_link'" in p.message


def test_two_urdf_gazebo_sensors_of_one_name_on_a_reference_are_a_duplicate_name():
    start = GO1_URDF.index('<gazebo reference="imu_link">')
    block = GO1_URDF[start : GO1_URDF.index("</gazebo>", start) + len("</gazebo>")]
    text = GO1_URDF.replace("</robot>", block + "</robot>")
    p = one_problem(text)
    assert (p.code, p.name) == (ErrorCode.DUPLICATE_NAME, "imu_sensor")
    assert p.line == text[: text.rindex('<sensor name="imu_sensor"')].count("\n") + 1  # the second one


def chain_sdf(n_links: int) -> str:
    """A chain of ``n_links`` links, each posed relative to the previous one and joined to it by a revolute."""
    links = ['<link name="l0"/>'] + [
        f'<link name="l{i}"><pose relative_to="l{i - 1}">0 0 0.01 0 0 0</pose></link>' for i in range(1, n_links)
    ]
    joints = [
        f'<joint name="j{i}" type="revolute"><parent>l{i - 1}</parent><child>l{i}</child></joint>'
        for i in range(1, n_links)
    ]
    return '<sdf version="1.9"><model name="chain">' + "".join(links + joints) + "</model></sdf>"


def test_a_long_chain_of_frames_loads_without_recursion():
    # the pose resolution and the tree walk recursed once per link: RecursionError past ~1000 links (Python's
    # default limit); here the limit is lowered to 250 frames above this one, for a 400-link chain
    import inspect
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 250)
    try:
        desc = load_description(chain_sdf(400))
    finally:
        sys.setrecursionlimit(old)
    assert desc.model.nq == 7 + 399
    # the last link is 399 * 1 cm above the first one at the zero configuration
    np.testing.assert_allclose(desc.resolve_pose("l399", "l0").translation, [0.0, 0.0, 3.99], atol=1e-12)


def test_a_long_relative_to_cycle_is_named():
    text = chain_sdf(400).replace('<link name="l0"/>', '<link name="l0"><pose relative_to="l399"/></link>')
    # was one problem per frame leading into the cycle (799), each listing the 400 frames of the cycle
    p = one_problem(text)
    assert (p.code, p.element, p.name) == (ErrorCode.POSE_RELATIVE_TO_CYCLE, "link", "l0")
    assert (
        p.message
        == "relative_to cycle: l0 -> l399 -> l398 -> l397 -> l396 -> ... (391 more) -> l4 -> l3 -> l2 -> l1 -> l0"
    )


GO1_XACRO = BASES["go1_xacro"]


def test_xacro_of_text_that_is_not_well_formed_gives_the_line():
    # the line was only inside xacro's message ("unclosed token: line 31, column 4"), Problem.line was None
    cut = GO1_XACRO.index("<sensor name=")
    p = one_problem(GO1_XACRO[: cut + 4])
    assert p.code is ErrorCode.XML_ERROR and p.message.startswith("xacro failed:")
    assert p.line == line_of(GO1_XACRO, "<sensor name=")


def test_an_xacro_error_is_one_line():
    # "name 'stddev' is not defined\nwhen evaluating expression 'stddev'" was two lines
    p = one_problem(GO1_XACRO.replace('params="stddev bias_stddev"', 'params="bias_stddev"'))
    assert p.code is ErrorCode.XML_ERROR and "\n" not in str(p)


def test_a_self_calling_xacro_macro_says_so():
    # was "xacro failed: maximum recursion depth exceeded while calling a Python object"
    text = GO1_XACRO.replace(
        "<mean>0.0</mean>", '<mean>0.0</mean><xacro:imu_axis_noise stddev="1" bias_stddev="1"/>', 1
    )
    p = one_problem(text)
    assert p.code is ErrorCode.XML_ERROR and "a macro expands into itself without end" in p.message
