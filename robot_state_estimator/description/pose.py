"""SDFormat / URDF pose text -> ``pinocchio.SE3``.

Source: SDFormat spec ``pose.sdf`` (1.9+: ``rotation_format`` = ``euler_rpy`` | ``quat_xyzw``, ``degrees``),
libsdformat ``src/Param.cc`` (pose parsing) and ``src/Utils.cc``. Roll-pitch-yaw is fixed-axis X, Y, Z:
``R = Rz(yaw) Ry(pitch) Rx(roll)`` (also URDF's ``rpy``).
"""

from __future__ import annotations

import math
import re
import sys

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray


class PoseTextError(ValueError):
    """Pose text that is not 6 (euler) / 7 (quaternion) finite numbers, or bad attributes."""


#: Longest text quoted whole in a message (a mutated or entity-expanded value can be kilobytes long).
SHOWN_CHARS = 60


def shown(text: str | None, limit: int = SHOWN_CHARS) -> str:
    """``repr(text)``, cut to ``limit`` characters with the total length said, for error messages."""
    if text is None or len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text)} characters)"


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> NDArray[np.float64]:
    """(3, 3) rotation ``Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes X, Y, Z; angles in rad)."""
    return np.asarray(pin.rpy.rpyToMatrix(float(roll), float(pitch), float(yaw)))


#: A number token as libsdformat reads it with ``std::stod`` (C ``strtod``, C locale), whole: ASCII decimal digits
#: with an optional sign, point and exponent. Python's ``float`` also takes ``1_0`` (10) and non-ASCII digits
#: (``\u0661`` = 1), which libsdformat refuses; hex (which ``stod`` reads) is refused here.
_C_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
#: ``strtod`` reads these too; libsdformat then refuses them as not finite
_C_NON_FINITE = re.compile(r"[+-]?(?:inf(?:inity)?|nan)\Z", re.IGNORECASE)
#: whitespace of the C locale (``std::istream >> std::string`` splits there)
_C_SPACE = re.compile(r"[ \t\n\v\f\r]+")


def _numbers(text: str | None, what: str, noun: str = "a list of numbers") -> list[float]:
    """The whitespace-separated numbers of ``text`` as libsdformat reads them (``ParsePoseUsingStringStream``:
    ``std::stod`` per token, finite, not out of range); a token that is not a whole number is refused (where
    ``stod`` would read its leading part: ``1abc`` as 1)."""
    parts = [p for p in _C_SPACE.split(text or "") if p]
    values = []
    for p in parts:
        if _C_NON_FINITE.match(p):
            raise PoseTextError(f"{what} {shown(text)} has a non-finite number")
        if not _C_DECIMAL.match(p):
            raise PoseTextError(f"{what} {shown(text)} is not {noun} ({shown(p)})")
        v = float(p)
        mantissa = p.lower().split("e")[0]
        if not math.isfinite(v) or (abs(v) < sys.float_info.min and any(c in "123456789" for c in mantissa)):
            # std::stod: out_of_range (ERANGE) on overflow and on underflow (a non-zero number read as 0 or subnormal)
            raise PoseTextError(f"{what} {shown(text)} has a number out of the range of a double ({shown(p)})")
        values.append(v)
    return values


def parse_vector3(
    text: str | None, *, what: str = "vector", default: tuple[float, ...] | None = None
) -> NDArray[np.float64]:
    """Parse ``"x y z"`` into a (3,) float64 array (``default`` when the text is empty/None).

    Raises:
        PoseTextError: not exactly 3 finite numbers.
    """
    if (text is None or not text.strip()) and default is not None:
        return np.array(default, dtype=float)
    values = _numbers(text, what)
    if len(values) != 3:
        raise PoseTextError(f"{what} {shown(text)} needs 3 numbers, got {len(values)}")
    return np.array(values, dtype=float)


def parse_sdf_double(text: str | None, *, what: str = "number", default: float | None = None) -> float:
    """One SDFormat ``double`` (an element's text), read as libsdformat's ``std::stod`` reads it, but whole and
    finite: the grammar of :func:`parse_vector3`'s numbers (C decimal, surrounding whitespace trimmed).

    ``std::stod`` would also read ``nan``, ``inf`` and the leading number of ``1abc``; those are refused here,
    as in poses, since a non-finite noise, mass or limit is never what the author meant.

    Args:
        text: the text; empty or None gives ``default``.
        what: names the value in messages.
        default: value for an empty text (None: an empty text is refused).

    Raises:
        PoseTextError: not exactly one finite number.
    """
    if (text is None or not text.strip()) and default is not None:
        return default
    values = _numbers(text, what, "a number")
    if len(values) != 1:
        raise PoseTextError(f"{what} {shown(text)} needs 1 number, got {len(values)}")
    return values[0]


def parse_pose(text: str | None, *, rotation_format: str | None = None, degrees: str | None = None) -> pin.SE3:
    """Parse the text of an SDFormat ``<pose>``.

    Args:
        text: ``"x y z roll pitch yaw"`` (m, rad; deg with ``degrees="true"``) or, with
            ``rotation_format="quat_xyzw"``, ``"x y z qx qy qz qw"`` (normalised here, as libsdformat
            does). Empty or None = identity.
        rotation_format: the ``rotation_format`` attribute (None = ``euler_rpy``).
        degrees: the ``degrees`` attribute text (``"true"``/``"1"``/``"false"``/``"0"``; None = false).

    Returns:
        The pose ``X_R_E`` (pinocchio SE3) of the element E in the frame R its pose is relative to.

    Raises:
        PoseTextError: wrong count of numbers, non-numbers, unknown ``rotation_format``, ``degrees="true"``
            with ``quat_xyzw``, a zero quaternion, or a bad boolean.
    """
    fmt = (rotation_format or "euler_rpy").strip()
    deg = parse_bool(degrees, default=False, what="degrees")
    if text is None or not text.strip():
        return pin.SE3.Identity()
    values = _numbers(text, "pose")
    if fmt == "euler_rpy":
        if len(values) != 6:
            raise PoseTextError(f"pose {shown(text)} needs 6 numbers (x y z roll pitch yaw), got {len(values)}")
        angles = np.radians(values[3:]) if deg else np.array(values[3:])
        return pin.SE3(rpy_to_matrix(*angles), np.array(values[:3]))
    if fmt == "quat_xyzw":
        if deg:
            raise PoseTextError('degrees="true" is only allowed with rotation_format="euler_rpy"')
        if len(values) != 7:
            raise PoseTextError(f"pose {shown(text)} needs 7 numbers (x y z qx qy qz qw), got {len(values)}")
        q = np.array(values[3:])
        norm = np.linalg.norm(q)
        if norm < 1e-12:
            raise PoseTextError(f"pose {shown(text)} has a zero quaternion")
        quat = pin.Quaternion(q[3] / norm, q[0] / norm, q[1] / norm, q[2] / norm)  # (w, x, y, z)
        return pin.SE3(quat.matrix(), np.array(values[:3]))
    raise PoseTextError(f"unknown rotation_format {shown(fmt)} (expected euler_rpy or quat_xyzw)")


def parse_bool(text: str | None, *, default: bool, what: str = "boolean") -> bool:
    """SDFormat boolean text (``true``/``false``/``1``/``0``, case-insensitive, trimmed).

    Raises:
        PoseTextError: any other text.
    """
    if text is None or not text.strip():
        return default
    t = text.strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise PoseTextError(f"{what} {shown(text)} is not a boolean (true/false/1/0)")


#: A number as urdfdom (``urdf::strToDouble``, ``std::istream >> double`` in the C locale, the whole text
#: consumed) accepts it: optional leading C whitespace, a sign, decimal digits with an optional point and an
#: optional exponent. No trailing whitespace, no ``nan``/``inf``, no hex, no ``_``; checked with urdfdom 6.0
#: (pinocchio's cmeel wheel) on ``<mass value>``: ``" 1"`` and ``"1e5"`` load, ``"1 "``, ``"1e"``, ``"nan"``,
#: ``"inf"``, ``"0x10"``, ``"1_0"`` and ``"1e400"`` (overflow) are refused.
_URDF_DOUBLE = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def parse_urdf_double(text: str | None, *, what: str = "number") -> float:
    """One URDF number, with urdfdom's grammar (``_URDF_DOUBLE``).

    Raises:
        PoseTextError: ``text`` is None, not such a number, or overflows a double.
    """
    if text is None or not _URDF_DOUBLE.match(text):
        raise PoseTextError(f"{what} {shown(text)} is not a number")
    value = float(text)
    if not math.isfinite(value):
        raise PoseTextError(f"{what} {shown(text)} overflows a double")
    return value


def parse_urdf_vector(
    text: str | None, n: int = 3, *, what: str = "vector", counts: tuple[int, ...] = ()
) -> NDArray[np.float64]:
    """A URDF vector attribute as urdfdom reads it (``urdf::Vector3::init``, ``urdf::Color::init``): split at
    spaces only (a tab between two numbers is refused), empty pieces dropped, each piece a
    :func:`parse_urdf_double`; exactly ``n`` numbers (or one of ``counts`` when given).

    Returns:
        (k,) float64 array.

    Raises:
        PoseTextError: a piece that is not a number, or the wrong count (also for an empty text).
    """
    pieces = [p for p in (text or "").split(" ") if p]
    values = [parse_urdf_double(p, what=f"{what} component") for p in pieces]
    allowed = counts or (n,)
    if len(values) not in allowed:
        raise PoseTextError(f"{what} {shown(text)} needs {n} numbers, got {len(values)}")
    return np.array(values, dtype=float)


def urdf_origin(xyz: str | None, rpy: str | None) -> pin.SE3:
    """URDF ``<origin xyz rpy>`` -> SE3 (an absent attribute is zeros; an empty one is refused, as urdfdom).

    Raises:
        PoseTextError: not 3 numbers in urdfdom's grammar (:func:`parse_urdf_vector`).
    """
    p = np.zeros(3) if xyz is None else parse_urdf_vector(xyz, what="xyz")
    a = np.zeros(3) if rpy is None else parse_urdf_vector(rpy, what="rpy")
    return pin.SE3(rpy_to_matrix(*a), p)
