"""SDFormat / URDF pose text -> ``pinocchio.SE3``.

Source: SDFormat spec ``pose.sdf`` (1.9+: ``rotation_format`` = ``euler_rpy`` | ``quat_xyzw``, ``degrees``),
libsdformat ``src/Param.cc`` (pose parsing) and ``src/Utils.cc``. Roll-pitch-yaw is fixed-axis X, Y, Z:
``R = Rz(yaw) Ry(pitch) Rx(roll)`` (also URDF's ``rpy``).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin


class PoseTextError(ValueError):
    """Pose text that is not 6 (euler) / 7 (quaternion) finite numbers, or bad attributes."""


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """(3, 3) rotation ``Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes X, Y, Z; angles in rad)."""
    return np.asarray(pin.rpy.rpyToMatrix(float(roll), float(pitch), float(yaw)))


def _numbers(text: str | None, what: str) -> list[float]:
    parts = (text or "").split()
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise PoseTextError(f"{what} {text!r} is not a list of numbers") from None
    if not all(math.isfinite(v) for v in values):
        raise PoseTextError(f"{what} {text!r} has a non-finite number")
    return values


def parse_vector3(text: str | None, *, what: str = "vector", default: tuple[float, ...] | None = None):
    """Parse ``"x y z"`` into a (3,) float64 array (``default`` when the text is empty/None).

    Raises:
        PoseTextError: not exactly 3 finite numbers.
    """
    if (text is None or not text.strip()) and default is not None:
        return np.array(default, dtype=float)
    values = _numbers(text, what)
    if len(values) != 3:
        raise PoseTextError(f"{what} {text!r} needs 3 numbers, got {len(values)}")
    return np.array(values, dtype=float)


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
            raise PoseTextError(f"pose {text!r} needs 6 numbers (x y z roll pitch yaw), got {len(values)}")
        angles = np.radians(values[3:]) if deg else np.array(values[3:])
        return pin.SE3(rpy_to_matrix(*angles), np.array(values[:3]))
    if fmt == "quat_xyzw":
        if deg:
            raise PoseTextError('degrees="true" is only allowed with rotation_format="euler_rpy"')
        if len(values) != 7:
            raise PoseTextError(f"pose {text!r} needs 7 numbers (x y z qx qy qz qw), got {len(values)}")
        q = np.array(values[3:])
        norm = np.linalg.norm(q)
        if norm < 1e-12:
            raise PoseTextError(f"pose {text!r} has a zero quaternion")
        quat = pin.Quaternion(q[3] / norm, q[0] / norm, q[1] / norm, q[2] / norm)  # (w, x, y, z)
        return pin.SE3(quat.matrix(), np.array(values[:3]))
    raise PoseTextError(f"unknown rotation_format {fmt!r} (expected euler_rpy or quat_xyzw)")


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
    raise PoseTextError(f"{what} {text!r} is not a boolean (true/false/1/0)")


def urdf_origin(xyz: str | None, rpy: str | None) -> pin.SE3:
    """URDF ``<origin xyz rpy>`` -> SE3 (missing attributes are zeros).

    Raises:
        PoseTextError: not 3 numbers.
    """
    p = parse_vector3(xyz, what="origin xyz", default=(0.0, 0.0, 0.0))
    a = parse_vector3(rpy, what="origin rpy", default=(0.0, 0.0, 0.0))
    return pin.SE3(rpy_to_matrix(*a), p)
