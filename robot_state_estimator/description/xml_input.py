"""Reading a description: file or string, xacro expansion, URI resolution, XML with line numbers.

- ``.xacro`` files (or text declaring the xacro namespace) are expanded with the ``xacro`` package (PyPI).
- ``package://pkg/...`` and ``model://model/...`` URIs are resolved with ``resolve-robotics-uri-py``
  (``AMENT_PREFIX_PATH``/share, ``GZ_SIM_RESOURCE_PATH``, ``GAZEBO_MODEL_PATH``, ``SDF_PATH``, ... and
  ``<sys.prefix>/share``).
- The example-robot-data wheel installs an ament prefix under ``<site-packages>/cmeel.prefix``; it is
  appended to ``AMENT_PREFIX_PATH`` while expanding and resolving, so ``$(find example-robot-data)`` and
  ``package://example-robot-data/...`` work here as on a ROS 2 install (where the real ament prefix, being
  earlier in the path, wins).
"""

from __future__ import annotations

import contextlib
import os
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from robot_state_estimator.common.robots import example_robot_data_prefix

from .errors import DescriptionError, ErrorCode, Problem

if TYPE_CHECKING:
    from xml.dom.minidom import Document

_XACRO_LOCK = threading.Lock()  # xacro keeps global state
_ENV_LOCK = threading.RLock()
XACRO_NS = "http://www.ros.org/wiki/xacro"


@dataclass
class XmlDocument:
    """A parsed description.

    Attributes:
        text: the XML text after xacro expansion.
        root: the root element (``xml.etree.ElementTree``; namespaced tags as ``{uri}local``).
        path: the file it came from (None for a string).
        lines: ``id(element) -> 1-based line`` in ``text``.
    """

    text: str
    root: ET.Element
    path: Path | None = None
    lines: dict[int, int] = field(default_factory=dict)

    def line(self, elem: ET.Element | None) -> int | None:
        """1-based line of ``elem`` in ``text`` (None when unknown)."""
        return None if elem is None else self.lines.get(id(elem))

    @property
    def file(self) -> str | None:
        """``str(path)`` or None."""
        return None if self.path is None else str(self.path)


@contextlib.contextmanager
def ament_search_path() -> Iterator[None]:
    """Temporarily append the example-robot-data wheel prefix to ``AMENT_PREFIX_PATH``."""
    prefix = example_robot_data_prefix()
    with _ENV_LOCK:
        old = os.environ.get("AMENT_PREFIX_PATH")
        parts = [p for p in (old or "").split(os.pathsep) if p]
        if prefix is not None and str(prefix) not in parts:
            os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join([*parts, str(prefix)])
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("AMENT_PREFIX_PATH", None)
            else:
                os.environ["AMENT_PREFIX_PATH"] = old


def resolve_uri(uri: str, *, base_dir: Path | None = None, element: str = "", line: int | None = None) -> Path:
    """Resolve ``package://``, ``model://``, ``file://`` or a (relative) path to an existing file/dir.

    Args:
        uri: the URI or path text.
        base_dir: folder relative paths are taken from (the including file's folder).
        element: tag that held the URI (for the error).
        line: its line (for the error).

    Returns:
        Absolute path.

    Raises:
        DescriptionError: ``URI_LOOKUP`` naming the URI when nothing matches.
    """
    import warnings

    from resolve_robotics_uri_py import resolve_robotics_uri

    text = uri.strip()
    if "://" not in text:
        p = Path(text)
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        if p.exists():
            return p.resolve()
        raise DescriptionError(Problem(ErrorCode.URI_LOOKUP, f"cannot find {uri!r}", element, line=line))
    extra = [str(base_dir)] if base_dir is not None else None
    with ament_search_path(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if text.startswith(("package://", "model://")):
                # directories (model://name) are valid too: look for the folder itself.
                _scheme, rest = text.split("://", 1)
                found = _find_dir_or_file(rest, extra)
                if found is not None:
                    return found
            return Path(resolve_robotics_uri(text, package_dirs=extra)).resolve()
        except (FileNotFoundError, ValueError) as exc:
            raise DescriptionError(
                Problem(
                    ErrorCode.URI_LOOKUP,
                    f"cannot resolve URI {uri!r} (searched AMENT_PREFIX_PATH/share, GZ_SIM_RESOURCE_PATH, "
                    f"GAZEBO_MODEL_PATH, SDF_PATH, ROS_PACKAGE_PATH and <sys.prefix>/share)",
                    element,
                    line=line,
                )
            ) from exc


def _find_dir_or_file(rest: str, extra: list[str] | None) -> Path | None:
    from resolve_robotics_uri_py.resolve_robotics_uri_py import get_default_search_paths

    roots: list[Path] = list(get_default_search_paths())  # untyped package (no py.typed): annotated here
    roots += [Path(e) for e in extra or []]
    for root in roots:
        cand = root / rest
        if cand.exists():
            return cand.resolve()
    return None


#: Longest source string still taken as a file path or URI (longer ones are description text).
_MAX_PATH_CHARS = 4096


def _looks_like_xml(text: str) -> bool:
    """Whether ``text`` is description text rather than a path or URI: it starts with ``<`` (after a byte order
    mark and whitespace), or holds what no path does (``<``, a line break) or is longer than any path."""
    return text.lstrip("\ufeff \t\r\n").startswith("<") or "<" in text or "\n" in text or len(text) > _MAX_PATH_CHARS


def _shown(source: str, limit: int = 80) -> str:
    """``source`` for an error message: quoted, cut to ``limit`` characters (a description can be 50 kB)."""
    return repr(source if len(source) <= limit else source[:limit] + "...")


def _without_leading_declaration(text: str) -> str:
    """``text`` with an XML declaration that follows leading whitespace blanked out (same lines and columns).

    expat, as the XML spec, refuses a declaration that is not at the very start ("XML or text declaration not
    at start of entity"), while tinyxml2, which libsdformat and urdfdom use, skips leading whitespace first: a
    ``robot_description`` parameter written as a YAML block often starts with a line break. The text is passed
    to expat as UTF-8, so the declaration's encoding is not needed.
    """
    body = text.lstrip("\ufeff")
    head = len(body) - len(body.lstrip())
    if head and body.startswith("<?xml", head):
        end = body.find("?>", head)
        if end > 0:
            blank = "".join(c if c == "\n" else " " for c in body[head : end + 2])
            return body[:head] + blank + body[end + 2 :]
    return text


def read_text(source: str | os.PathLike[str]) -> tuple[str, Path | None]:
    """The XML text of ``source`` (xacro expanded) and the file it came from.

    Args:
        source: a path, a ``package://``/``model://``/``file://`` URI, or XML text.

    Raises:
        DescriptionError: ``FILE_READ`` (missing/unreadable file), ``URI_LOOKUP``, ``XML_ERROR`` (xacro).
    """
    path: Path | None = None
    if not isinstance(source, os.PathLike) and not str(source).strip("\ufeff \t\r\n"):
        raise DescriptionError(
            Problem(
                ErrorCode.XML_ERROR,
                f"the description is empty ({_shown(str(source))}): pass the XML, a file path or a package:// URI",
            )
        )
    if isinstance(source, os.PathLike) or not _looks_like_xml(str(source)):
        text_src = str(source).strip()
        if "://" in text_src:
            path = resolve_uri(text_src)
        else:
            path = Path(text_src).expanduser()
        try:
            is_file = path.is_file()
        except OSError:  # e.g. a name too long for the file system
            is_file = False
        if not is_file:
            raise DescriptionError(Problem(ErrorCode.FILE_READ, f"no such file: {_shown(str(source))}"))
        try:
            text = path.read_text(encoding="utf-8-sig")  # a byte order mark is not part of the text
        except (OSError, UnicodeDecodeError) as exc:
            raise DescriptionError(Problem(ErrorCode.FILE_READ, f"cannot read {path}: {exc}")) from exc
        path = path.resolve()
    else:
        text = str(source)
        if not text.lstrip("\ufeff \t\r\n").startswith("<"):
            raise DescriptionError(
                Problem(
                    ErrorCode.XML_ERROR,
                    f"description text does not start with an XML element ('<'): {_shown(text)}; "
                    "pass the XML itself, a file path or a package:// URI",
                )
            )
    if (path is not None and path.suffix == ".xacro") or "ros.org/wiki/xacro" in text:
        text = expand_xacro(text, path)
    return text, path


def expand_xacro(text: str, path: Path | None) -> str:
    """Run xacro on a file (``path``) or on text; ``$(find pkg)`` uses the ament index.

    Raises:
        DescriptionError: ``URI_LOOKUP`` for an unknown package, ``XML_ERROR`` for anything else xacro
            reports (the message carries xacro's).
    """
    import xacro

    with _XACRO_LOCK, ament_search_path():
        try:
            doc: Document  # what xacro returns (an untyped package: annotated here)
            if path is not None:
                doc = xacro.process_file(str(path))
            else:
                doc = xacro.parse(text)
                xacro.init_stacks(None)
                xacro.process_doc(doc)
            return doc.toprettyxml(indent="  ")
        except Exception as exc:  # xacro raises many types (XacroException, ExpatError, NameError...)
            msg = " ".join((str(exc) or type(exc).__name__).split())  # one line (xacro's can span several)
            if isinstance(exc, RecursionError):  # a macro that calls itself, directly or not
                msg = f"a macro expands into itself without end ({msg})"
            if len(msg) > 500:
                msg = msg[:500] + f"... ({len(msg)} characters)"
            not_found = "PackageNotFound" in type(exc).__name__ or "PackageNotFoundError" in msg
            code = ErrorCode.URI_LOOKUP if not_found else ErrorCode.XML_ERROR
            line = getattr(exc, "lineno", None)  # expat's, for XML that is not well-formed
            raise DescriptionError(
                Problem(
                    code,
                    f"xacro failed: {msg}",
                    line=line if isinstance(line, int) else None,
                    file=str(path) if path else None,
                )
            ) from exc


class _EntityDeclared(Exception):
    """Raised from expat's entity declaration handler to stop the parse (see :func:`parse_xml`)."""

    def __init__(self, name: str, line: int) -> None:
        super().__init__(name)
        self.name, self.line = name, line


def _qualify(name: str) -> str:
    # expat with namespace_separator "}" gives "uri}local"; ElementTree spells it "{uri}local".
    return "{" + name if "}" in name else name


def parse_xml(text: str, path: Path | None = None) -> XmlDocument:
    """Parse XML text keeping each element's line number.

    A DOCTYPE is accepted, but not one that declares entities (``<!ENTITY e "0.5">``): expat would expand
    ``&e;`` while tinyxml2, which libsdformat, urdfdom and so pinocchio read XML with, leaves it as written,
    so the same file would mean two things (and a ``SYSTEM`` entity would silently read as empty).

    Raises:
        DescriptionError: ``XML_ERROR`` with expat's message and line, or naming a declared entity.
    """
    from xml.parsers import expat

    lines: dict[int, int] = {}
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate(namespace_separator="}")

    def start(tag: str, attrs: dict[str, str]) -> None:
        elem = builder.start(_qualify(tag), {_qualify(k): v for k, v in attrs.items()})
        lines[id(elem)] = parser.CurrentLineNumber

    def entity_declared(name: str, is_parameter: bool, *_: object) -> None:
        raise _EntityDeclared(("%" if is_parameter else "") + name, parser.CurrentLineNumber)

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: builder.end(_qualify(tag))
    parser.CharacterDataHandler = builder.data
    parser.EntityDeclHandler = entity_declared
    try:
        parser.Parse(_without_leading_declaration(text).encode("utf-8") if isinstance(text, str) else text, True)
        root = builder.close()
    except _EntityDeclared as exc:
        raise DescriptionError(
            Problem(
                ErrorCode.XML_ERROR,
                f"the DOCTYPE declares the entity {exc.name!r}: entity declarations are not supported, as libsdformat "
                "and urdfdom read XML with tinyxml2, which does not expand them (they would read "
                f"'&{exc.name.lstrip('%')};' as written); write the values themselves, or use xacro properties",
                line=exc.line,
                file=str(path) if path else None,
            )
        ) from None
    except expat.ExpatError as exc:
        raise DescriptionError(
            Problem(
                ErrorCode.XML_ERROR,
                f"not well-formed XML: {expat.ErrorString(exc.code)}",
                line=exc.lineno,
                file=str(path) if path else None,
            )
        ) from exc
    return XmlDocument(text=text, root=root, path=path, lines=lines)


def load_xml(source: str | os.PathLike[str]) -> XmlDocument:
    """``read_text`` then ``parse_xml``."""
    text, path = read_text(source)
    return parse_xml(text, path)
