"""Orientation reference frames of an IMU (``//imu/orientation_reference_frame`` in SDFormat 1.7+).

:func:`orientation_reference` returns ``R_world_ref``, the rotation of the frame the IMU reports its
orientation in; the reported orientation is then ``R_ref_imu = R_world_ref^T R_world_imu``.

The world frame ``W`` is ENU (REP-103) rotated about z by an optional ``heading_rad`` (the world's
spherical-coordinates heading in Gazebo): ``R_world_ENU = Rz(heading)`` as gz-sim passes it to the sensor.

Semantics (SDFormat ``imu.sdf`` text, and what gz-sensors' ``ImuSensor::SetWorldFrameOrientation`` does):

============  ===============================================  ============================================
localization  this package (``gazebo_compatible=False``)        gz-sensors (``gazebo_compatible=True``)
============  ===============================================  ============================================
ENU           ``Rz(h)``                                         same
NED           ``Rz(h) rpy(pi, 0, pi/2)``                        same
NWU           ``Rz(h) rpy(0, 0, pi/2)``                         same
CUSTOM        ``R_world_parent rpy(custom_rpy)``; parent        ``Rz(h) rpy(custom_rpy)`` when the parent is
              ``world`` -> ``Rz(h)``; ``""`` -> the sensor's    ``world``; otherwise (empty or a link) the
              own frame at the initial configuration (spec:     sensor's initial orientation, custom_rpy
              "use the sensor's own local frame"); a link ->    ignored (gz warns "not supported")
              that link at the initial configuration
GRAV_UP       z = -g/|g|, x = projection of ``grav_dir_x``      not implemented: the sensor's initial
              (in its parent frame, same rules as above) on     orientation
              the plane normal to g, y = z x x
GRAV_DOWN     z = g/|g|, x and y as for GRAV_UP                 not implemented: initial orientation
(absent)      n/a (the spec default is CUSTOM, rpy 0, parent    the sensor's initial orientation (gz-sim
              "": the initial sensor frame, same as gz)         sets it when no reference frame is given)
============  ===============================================  ============================================

Roll-pitch-yaw is fixed-axis X, Y, Z: ``rpy(r, p, y) = Rz(y) Ry(p) Rx(r)`` (SDFormat, REP-103).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.description.types import ImuSpec, Localization
from robot_state_estimator.sensors.errors import OrientationReferenceError

FloatArray = NDArray[np.float64]

#: Gravity in the world frame (m/s^2), REP-103 ENU.
GRAVITY_WORLD: FloatArray = np.array([0.0, 0.0, -9.81])

#: gz-sensors' table, world ENU -> named frame: ``R_ENU_ref`` as fixed-axis roll, pitch, yaw (rad).
ENU_TO_NAMED_RPY: dict[Localization, tuple[float, float, float]] = {
    Localization.ENU: (0.0, 0.0, 0.0),
    Localization.NED: (np.pi, 0.0, np.pi / 2),
    Localization.NWU: (0.0, 0.0, np.pi / 2),
}


def rpy_to_matrix(rpy: Sequence[float]) -> FloatArray:
    """(3, 3) ``Rz(yaw) Ry(pitch) Rx(roll)`` from fixed-axis roll, pitch, yaw (rad)."""
    return np.array(pin.rpy.rpyToMatrix(float(rpy[0]), float(rpy[1]), float(rpy[2])))


def rot_z(angle_rad: float) -> FloatArray:
    """(3, 3) rotation about z by ``angle_rad``."""
    c, s = np.cos(angle_rad), np.sin(angle_rad)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _parent_rotation(
    parent: str,
    *,
    heading_rad: float,
    R_world_sensor_initial: FloatArray | None,
    frame_rotations: Mapping[str, FloatArray] | None,
    what: str,
) -> FloatArray:
    if parent == "world":
        return rot_z(heading_rad)
    if parent == "":
        if R_world_sensor_initial is None:
            raise OrientationReferenceError(f"{what} with an empty parent_frame needs the sensor's initial orientation")
        return np.asarray(R_world_sensor_initial, dtype=float)
    if frame_rotations is None or parent not in frame_rotations:
        known = sorted(frame_rotations or {})
        raise OrientationReferenceError(f"{what} parent_frame {parent!r} is not a known frame; known: {known}")
    return np.asarray(frame_rotations[parent], dtype=float)


def orientation_reference(
    localization: Localization | str,
    *,
    heading_rad: float = 0.0,
    custom_rpy: Sequence[float] = (0.0, 0.0, 0.0),
    custom_rpy_parent_frame: str = "",
    grav_dir_x: Sequence[float] = (1.0, 0.0, 0.0),
    grav_dir_x_parent_frame: str = "",
    R_world_sensor_initial: FloatArray | None = None,
    frame_rotations: Mapping[str, FloatArray] | None = None,
    gravity_world: FloatArray = GRAVITY_WORLD,
    gazebo_compatible: bool = False,
    has_orientation_reference_frame: bool = True,
) -> FloatArray:
    """``R_world_ref``: (3, 3) rotation of the IMU's orientation reference frame in the world ``W``.

    See the module docstring for the table of cases and where gz-sensors differs.

    Args:
        localization: ``Localization`` or its name (``ENU``, ``NED``, ``NWU``, ``CUSTOM``, ``GRAV_UP``,
            ``GRAV_DOWN``).
        heading_rad: world heading, ``R_world_ENU = Rz(heading_rad)`` (rad).
        custom_rpy: CUSTOM rotation of the reference in its parent frame (rad, fixed-axis roll, pitch, yaw).
        custom_rpy_parent_frame: ``"world"``, ``""`` (the sensor frame at the start) or a frame name.
        grav_dir_x: GRAV_* x-axis hint, in ``grav_dir_x_parent_frame`` coordinates.
        grav_dir_x_parent_frame: ``"world"``, ``""`` (the sensor frame at the start) or a frame name.
        R_world_sensor_initial: (3, 3) ``R_W_S`` at the initial configuration; needed for an empty parent
            frame, and in gz-compatible mode for the cases gz-sensors does not implement.
        frame_rotations: frame name -> (3, 3) ``R_world_frame`` at the initial configuration.
        gravity_world: (3,) gravity in W (m/s^2).
        gazebo_compatible: reproduce gz-sensors instead of the SDFormat spec text.
        has_orientation_reference_frame: whether ``<orientation_reference_frame>`` was given at all.

    Returns:
        (3, 3) float64 rotation matrix ``R_world_ref``.

    Raises:
        OrientationReferenceError: unknown localization, a parent frame that cannot be resolved, zero
            gravity, or ``grav_dir_x`` parallel to gravity.
    """
    try:
        loc = Localization(localization)
    except ValueError:
        raise OrientationReferenceError(
            f"unknown localization {localization!r}; expected one of {[m.value for m in Localization]}"
        ) from None

    def initial() -> FloatArray:
        if R_world_sensor_initial is None:
            raise OrientationReferenceError(f"{loc.value} (gz-compatible) needs the sensor's initial orientation")
        return np.asarray(R_world_sensor_initial, dtype=float)

    if gazebo_compatible and not has_orientation_reference_frame:
        return initial()
    if loc in ENU_TO_NAMED_RPY:
        return rot_z(heading_rad) @ rpy_to_matrix(ENU_TO_NAMED_RPY[loc])
    if loc is Localization.CUSTOM:
        if gazebo_compatible:
            if custom_rpy_parent_frame == "world":
                return rot_z(heading_rad) @ rpy_to_matrix(custom_rpy)
            return initial()
        R_world_parent = _parent_rotation(
            custom_rpy_parent_frame,
            heading_rad=heading_rad,
            R_world_sensor_initial=R_world_sensor_initial,
            frame_rotations=frame_rotations,
            what="custom_rpy",
        )
        return R_world_parent @ rpy_to_matrix(custom_rpy)
    if gazebo_compatible:  # GRAV_UP / GRAV_DOWN: not implemented by gz-sensors
        return initial()
    return _gravity_aligned(
        loc,
        gravity_world=gravity_world,
        grav_dir_x=grav_dir_x,
        grav_dir_x_parent_frame=grav_dir_x_parent_frame,
        heading_rad=heading_rad,
        R_world_sensor_initial=R_world_sensor_initial,
        frame_rotations=frame_rotations,
    )


def _gravity_aligned(
    loc: Localization,
    *,
    gravity_world: FloatArray,
    grav_dir_x: Sequence[float],
    grav_dir_x_parent_frame: str,
    heading_rad: float,
    R_world_sensor_initial: FloatArray | None,
    frame_rotations: Mapping[str, FloatArray] | None,
) -> FloatArray:
    """``R_world_ref`` (3, 3) of GRAV_UP / GRAV_DOWN (SDFormat ``imu.sdf``): z against (GRAV_UP) or along
    (GRAV_DOWN) gravity, x the projection of ``grav_dir_x`` (in its parent frame, resolved as for CUSTOM) on the
    plane normal to gravity, y = z x x. Arguments as :func:`orientation_reference`.

    Raises:
        OrientationReferenceError: zero gravity, an unknown parent frame, or ``grav_dir_x`` parallel to gravity
            (or zero).
    """
    g = np.asarray(gravity_world, dtype=float)
    g_norm = float(np.linalg.norm(g))
    if g_norm == 0.0:
        raise OrientationReferenceError(f"{loc.value} needs a non-zero gravity")
    z_axis = -g / g_norm if loc is Localization.GRAV_UP else g / g_norm
    R_world_parent = _parent_rotation(
        grav_dir_x_parent_frame,
        heading_rad=heading_rad,
        R_world_sensor_initial=R_world_sensor_initial,
        frame_rotations=frame_rotations,
        what="grav_dir_x",
    )
    hint = R_world_parent @ np.asarray(grav_dir_x, dtype=float)
    x_axis = hint - (hint @ z_axis) * z_axis
    n = float(np.linalg.norm(x_axis))
    if n < 1e-9 * max(1.0, float(np.linalg.norm(hint))):
        raise OrientationReferenceError(
            f"{loc.value}: grav_dir_x {list(grav_dir_x)} (in {grav_dir_x_parent_frame or 'the sensor frame'}) is "
            "parallel to gravity (or zero); its projection on the horizontal plane is undefined"
        )
    x_axis /= n
    y_axis = np.cross(z_axis, x_axis)
    return np.column_stack([x_axis, y_axis, z_axis])


def orientation_reference_for_spec(
    imu: ImuSpec,
    *,
    heading_rad: float = 0.0,
    R_world_sensor_initial: FloatArray | None = None,
    frame_rotations: Mapping[str, FloatArray] | None = None,
    gravity_world: FloatArray = GRAVITY_WORLD,
    gazebo_compatible: bool = False,
) -> FloatArray:
    """:func:`orientation_reference` with every field taken from an :class:`ImuSpec`."""
    return orientation_reference(
        imu.localization,
        heading_rad=heading_rad,
        custom_rpy=imu.custom_rpy,
        custom_rpy_parent_frame=imu.custom_rpy_parent_frame,
        grav_dir_x=imu.grav_dir_x,
        grav_dir_x_parent_frame=imu.grav_dir_x_parent_frame,
        R_world_sensor_initial=R_world_sensor_initial,
        frame_rotations=frame_rotations,
        gravity_world=gravity_world,
        gazebo_compatible=gazebo_compatible,
        has_orientation_reference_frame=imu.has_orientation_reference_frame,
    )
