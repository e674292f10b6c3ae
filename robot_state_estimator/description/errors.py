"""Errors of the description sub-package, coded with libsdformat's ``sdf::ErrorCode`` names.

Every problem found while reading a description is collected as a :class:`Problem` (code, message and
where it is); :class:`DescriptionError` carries all of them, so a user sees every broken frame at once,
as ``sdf::Root::Load`` returns its ``sdf::Errors`` list.

Source: libsdformat ``include/sdf/Error.hh`` (enum ``ErrorCode``; ``NONE = 0`` and the order of the codes
up to ``USD_FAILED_PRIM_API_APPLY`` follow it; codes of later libsdformat versions are appended by name,
their numeric values here are not libsdformat's).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11; only for the checker (ROS 2 Humble runs 3.10)


class ErrorCode(enum.IntEnum):
    """libsdformat ``sdf::ErrorCode`` names (see the module docstring for the numbering)."""

    NONE = 0
    FILE_READ = enum.auto()
    DUPLICATE_NAME = enum.auto()
    RESERVED_NAME = enum.auto()
    ATTRIBUTE_MISSING = enum.auto()
    ATTRIBUTE_INVALID = enum.auto()
    ATTRIBUTE_DEPRECATED = enum.auto()
    ATTRIBUTE_INCORRECT_TYPE = enum.auto()
    ELEMENT_MISSING = enum.auto()
    ELEMENT_INVALID = enum.auto()
    ELEMENT_DEPRECATED = enum.auto()
    ELEMENT_INCORRECT_TYPE = enum.auto()
    URI_INVALID = enum.auto()
    URI_LOOKUP = enum.auto()
    DIRECTORY_NONEXISTANT = enum.auto()
    MODEL_CANONICAL_LINK_INVALID = enum.auto()
    MODEL_WITHOUT_LINK = enum.auto()
    NESTED_MODELS_UNSUPPORTED = enum.auto()
    LINK_INERTIA_INVALID = enum.auto()
    JOINT_CHILD_LINK_INVALID = enum.auto()
    JOINT_PARENT_LINK_INVALID = enum.auto()
    JOINT_PARENT_SAME_AS_CHILD = enum.auto()
    FRAME_ATTACHED_TO_INVALID = enum.auto()
    FRAME_ATTACHED_TO_CYCLE = enum.auto()
    FRAME_ATTACHED_TO_GRAPH_ERROR = enum.auto()
    POSE_RELATIVE_TO_INVALID = enum.auto()
    POSE_RELATIVE_TO_CYCLE = enum.auto()
    POSE_RELATIVE_TO_GRAPH_ERROR = enum.auto()
    STRING_READ = enum.auto()
    MODEL_PLACEMENT_FRAME_INVALID = enum.auto()
    VERSION_DEPRECATED = enum.auto()
    MERGE_INCLUDE_UNSUPPORTED = enum.auto()
    USD_SDF_TO_USD_PARSING_ERROR = enum.auto()
    USD_INVALID_PRIM_PATH = enum.auto()
    USD_FAILED_PRIM_API_APPLY = enum.auto()
    # Later libsdformat codes (names only).
    JOINT_AXIS_EXPRESSED_IN_INVALID = enum.auto()
    JOINT_AXIS_MIMIC_INVALID = enum.auto()
    CONVERSION_ERROR = enum.auto()
    PARSING_ERROR = enum.auto()
    XML_ERROR = enum.auto()
    PARAMETER_ERROR = enum.auto()
    # Not in libsdformat: the description has no (or not exactly one) IMU where one was asked for.
    SENSOR_NOT_FOUND = enum.auto()


@dataclass(frozen=True)
class Problem:
    """One problem in a description.

    Attributes:
        code: libsdformat error code name.
        message: what is wrong, naming the offending frame/element.
        element: XML tag of the element concerned (``"frame"``, ``"joint"``, ...), "" when unknown.
        name: ``name`` attribute (scoped ``a::b`` in nested models) of that element, "" when unknown.
        line: 1-based line in the (expanded) XML text, None when unknown.
        file: file the description came from, None for strings.
    """

    code: ErrorCode
    message: str
    element: str = ""
    name: str = ""
    line: int | None = None
    file: str | None = None

    def __str__(self) -> str:
        where = []
        if self.element:
            where.append(f"<{self.element}{' name=' + repr(self.name) if self.name else ''}>")
        if self.file:
            where.append(self.file + (f":{self.line}" if self.line is not None else ""))
        elif self.line is not None:
            where.append(f"line {self.line}")
        suffix = f" ({', '.join(where)})" if where else ""
        return f"[{self.code.name}] {self.message}{suffix}"


class Where(TypedDict, total=False):
    """Where a problem is: the keyword arguments of :class:`Problem` after ``code`` and ``message`` (same
    meanings); the readers build one per element and pass it on as ``**where``."""

    element: str
    name: str
    line: int | None
    file: str | None


class DescriptionWarning(UserWarning):
    """A description that loads, but that libsdformat / Gazebo would read differently from us (the message
    says how and what to write instead)."""


def warn(message: str) -> None:
    """Issue a :class:`DescriptionWarning` attributed to the first caller outside this sub-package."""
    import os
    import sys
    import types
    import warnings

    here = os.path.dirname(os.path.abspath(__file__))
    level = 2
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    warnings.warn(DescriptionWarning(message), stacklevel=level)


class DescriptionError(ValueError):
    """A robot description could not be read; ``problems`` lists every problem found.

    Attributes:
        problems: the problems, in the order they were found (earlier ones may explain later ones).
    """

    def __init__(self, problems: Iterable[Problem] | Problem):
        if isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        if not self.problems:
            raise ValueError("DescriptionError needs at least one problem")
        lines = [str(p) for p in self.problems]
        text = lines[0] if len(lines) == 1 else f"{len(lines)} problems:\n  " + "\n  ".join(lines)
        super().__init__(text)

    @property
    def codes(self) -> list[ErrorCode]:
        """The codes of ``problems``, in order."""
        return [p.code for p in self.problems]


class ProblemList(list[Problem]):
    """A list of problems that can be raised as one :class:`DescriptionError`."""

    def add(self, code: ErrorCode, message: str, **where: Unpack[Where]) -> None:
        """Append a problem (keyword arguments as in :class:`Problem`)."""
        self.append(Problem(code, message, **where))

    def raise_if_any(self) -> None:
        """Raise :class:`DescriptionError` with all problems, if there is any.

        Raises:
            DescriptionError: the list is not empty.
        """
        if self:
            raise DescriptionError(list(self))
