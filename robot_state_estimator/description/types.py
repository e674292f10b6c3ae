"""Typed results of description parsing: the IMU and its noise, as SDFormat defines them.

Field names and defaults follow the SDFormat specification (``imu.sdf`` and ``noise.sdf``, versions 1.6
to 1.11) and libsdformat's ``sdf::Imu`` / ``sdf::Noise``. Units are SI: rad/s for the gyroscope,
m/s^2 for the accelerometer, seconds for correlation times, Hz for update rates.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

#: Per link name, its collision spheres: ``(X_link_collision or X_relative_to_collision, radius m, relative_to
#: or None)`` (``collision.collision_spheres``).
CollisionSpheres: TypeAlias = dict[str, list[tuple[pin.SE3, float, str | None]]]


class NoiseType(str, enum.Enum):
    """``//noise/@type`` (libsdformat ``sdf::NoiseType``)."""

    NONE = "none"
    GAUSSIAN = "gaussian"
    GAUSSIAN_QUANTIZED = "gaussian_quantized"


class Localization(str, enum.Enum):
    """``//imu/orientation_reference_frame/localization`` values from the SDFormat spec."""

    CUSTOM = "CUSTOM"
    NED = "NED"
    ENU = "ENU"
    NWU = "NWU"
    GRAV_UP = "GRAV_UP"
    GRAV_DOWN = "GRAV_DOWN"


@dataclass(frozen=True)
class NoiseSpec:
    """Noise of one IMU axis, as ``<noise>`` in SDFormat (``sdf::Noise``).

    All values are per sample, in the unit of the measured quantity (rad/s or m/s^2), and
    ``dynamic_bias_correlation_time`` in seconds. Defaults are the spec's defaults (all zero, type none).
    """

    type: NoiseType = NoiseType.NONE
    mean: float = 0.0
    stddev: float = 0.0
    bias_mean: float = 0.0
    bias_stddev: float = 0.0
    dynamic_bias_stddev: float = 0.0
    dynamic_bias_correlation_time: float = 0.0
    precision: float = 0.0

    @property
    def enabled(self) -> bool:
        """True when the noise type is not ``none``."""
        return self.type is not NoiseType.NONE


def _default_noise3() -> tuple[NoiseSpec, NoiseSpec, NoiseSpec]:
    return (NoiseSpec(), NoiseSpec(), NoiseSpec())


@dataclass(frozen=True)
class ImuSpec:
    """An IMU sensor found in the robot description.

    Attributes:
        name: sensor name (``//sensor/@name``; scoped ``a::b`` for nested models).
        link: name of the link the sensor is attached to (after URDF fixed-joint lumping, the link that
            carries it; always a body of the pinocchio model or a frame on one).
        frame_id: the frame name expected in ``sensor_msgs/Imu.header.frame_id``: the sensor's
            ``<gz_frame_id>``, ``<frame_id>`` or ``<ignition_frame_id>`` when given (else a plugin's
            ``<frame_name>``/``<frameName>``), else the (scoped) sensor name with ``::`` replaced by ``/``.
        pose_in_link: ``X_link_imu``, the sensor frame S in the link frame (pinocchio SE3, m).
        pose_in_base: ``X_base_imu``, the sensor frame S in the base link frame B (pinocchio SE3, m).
        update_rate: ``//sensor/update_rate`` in Hz (0 = as fast as possible, the spec default).
        localization: orientation reference (spec default CUSTOM).
        custom_rpy: ``//orientation_reference_frame/custom_rpy`` (rad, fixed-axis roll, pitch, yaw).
        custom_rpy_parent_frame: its ``parent_frame`` attribute ("" when absent).
        grav_dir_x: ``//orientation_reference_frame/grav_dir_x`` (spec default (1, 0, 0)).
        grav_dir_x_parent_frame: its ``parent_frame`` attribute ("" when absent).
        has_orientation_reference_frame: whether ``<orientation_reference_frame>`` was present at all
            (gz-sensors only applies the localization table when it is).
        orientation_enabled: ``//imu/enable_orientation`` (spec default true).
        angular_velocity_noise: x, y, z gyroscope noise (rad/s).
        linear_acceleration_noise: x, y, z accelerometer noise (m/s^2).
        gz_frame_id: the ``header.frame_id`` gz-sim publishes for this IMU through ``ros_gz_bridge``: the
            sensor's ``<gz_frame_id>`` (or ``<ignition_frame_id>``), else gz-sim's sensor name
            ``model::link::sensor`` (the host link after URDF lumping, or the host joint; nested models
            scoped), with ``::`` replaced by ``/`` as the bridge does ("" when unknown).
        accepted_frame_ids: the ``header.frame_id`` values that denote S (see ``description.imu_frames``):
            ``frame_id``, ``gz_frame_id``, then every link or SDF ``<frame>`` of the description rigidly
            attached to S whose pose equals S within 1e-9 (URDF links lumped by fixed joints included, e.g.
            the Go1's ``imu_link``; ``link`` itself only when ``pose_in_link`` is the identity). The loaders
            fill it from the frame graph; left empty, it is ``frame_id``, ``gz_frame_id`` and ``link`` when
            ``pose_in_link`` is the identity.
        source: where the IMU comes from: ``"description"`` (a ``<sensor>`` of the description) or
            ``"settings"`` (declared by the estimator settings ``declared_imu.*`` for a description without one:
            see ``description.declared_imu``).
    """

    name: str
    link: str
    frame_id: str
    pose_in_link: pin.SE3 = field(default_factory=pin.SE3.Identity)
    pose_in_base: pin.SE3 = field(default_factory=pin.SE3.Identity)
    update_rate: float = 0.0
    localization: Localization = Localization.CUSTOM
    custom_rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    custom_rpy_parent_frame: str = ""
    grav_dir_x: tuple[float, float, float] = (1.0, 0.0, 0.0)
    grav_dir_x_parent_frame: str = ""
    has_orientation_reference_frame: bool = False
    orientation_enabled: bool = True
    angular_velocity_noise: tuple[NoiseSpec, NoiseSpec, NoiseSpec] = field(default_factory=_default_noise3)
    linear_acceleration_noise: tuple[NoiseSpec, NoiseSpec, NoiseSpec] = field(default_factory=_default_noise3)
    gz_frame_id: str = ""
    accepted_frame_ids: tuple[str, ...] = ()
    source: str = "description"

    def __post_init__(self) -> None:
        if not self.accepted_frame_ids:
            from .imu_frames import is_identity

            own = [self.frame_id, self.gz_frame_id] + ([self.link] if is_identity(self.pose_in_link) else [])
            object.__setattr__(self, "accepted_frame_ids", tuple(dict.fromkeys(n for n in own if n)))

    @property
    def R_base_imu(self) -> NDArray[np.float64]:
        """(3, 3) rotation of the IMU frame S in the base frame B."""
        return np.array(self.pose_in_base.rotation, dtype=float)

    @property
    def p_base_imu(self) -> NDArray[np.float64]:
        """(3,) position of the IMU origin in the base frame B (m)."""
        return np.array(self.pose_in_base.translation, dtype=float)

    def gyro_stddev(self) -> NDArray[np.float64]:
        """(3,) white-noise stddev per gyroscope axis (rad/s per sample); 0 for axes with noise ``none``."""
        return np.array([n.stddev if n.enabled else 0.0 for n in self.angular_velocity_noise])

    def accel_stddev(self) -> NDArray[np.float64]:
        """(3,) white-noise stddev per accelerometer axis (m/s^2 per sample); 0 for axes with noise ``none``."""
        return np.array([n.stddev if n.enabled else 0.0 for n in self.linear_acceleration_noise])
