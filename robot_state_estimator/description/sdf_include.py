"""SDFormat ``<include>``: the included model's file found (``model://`` / a path; a model folder's
``model.config``) and loaded, and the SDFormat version of a file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from .errors import DescriptionError, ErrorCode, ProblemList, Where
from .pose import parse_bool, shown
from .xml_input import XmlDocument, load_xml, resolve_uri


def version_tuple(text: str | None) -> tuple[int, int]:
    """``"1.9"`` -> (1, 9); unparsable -> (0, 0)."""
    try:
        major, minor = (text or "").strip().split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return (0, 0)


def load_include(
    doc: XmlDocument, inc: ET.Element, problems: ProblemList
) -> tuple[XmlDocument, ET.Element, str, ET.Element | None, str | None] | None:
    """The ``<include>`` ``inc`` of ``doc`` loaded: its document, ``<model>``, name, ``<pose>`` and placement
    frame; None (the problem added to ``problems``) when it cannot be: ``merge="true"``, no ``<uri>``, a file that
    cannot be found or read, no ``<model>`` in it, an SDFormat version outside 1.5-1.11."""
    w: Where = {"element": inc.tag, "name": inc.findtext("name", "") or "", "line": doc.line(inc), "file": doc.file}
    if parse_bool(inc.get("merge"), default=False):
        problems.add(ErrorCode.MERGE_INCLUDE_UNSUPPORTED, '<include merge="true"> is not supported', **w)
        return None
    uri = (inc.findtext("uri") or "").strip()
    if not uri:
        problems.add(ErrorCode.ELEMENT_MISSING, "<include> without <uri>", **w)
        return None
    try:
        base = doc.path.parent if doc.path is not None else None
        path = resolve_uri(uri, base_dir=base, element="include", line=doc.line(inc))
        if path.is_dir():
            path = _model_file_in_dir(path)
        idoc = load_xml(path)
    except DescriptionError as exc:
        problems.extend(exc.problems)
        return None
    model = idoc.root.find("model")
    if model is None:
        problems.add(ErrorCode.ELEMENT_MISSING, f"included {uri!r} has no <model>", **w)
        return None
    iv = version_tuple(idoc.root.get("version"))
    if not (1, 5) <= iv <= (1, 11):
        problems.add(
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
