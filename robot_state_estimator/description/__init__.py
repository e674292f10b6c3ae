"""Robot descriptions (SDFormat 1.6-1.11, URDF, xacro) -> IMU spec, frames and a pinocchio model.

Plain Python, no ROS. Behaves like libsdformat (``sdf::Root``, ``sdf::Model``, ``sdf::Frame``,
``sdf::SemanticPose``, ``sdf::Imu``, ``sdf::Noise``) for the subset a floating-base estimator needs.

Example:
    >>> desc = load_description("config/robots/go1.urdf.xacro")  # doctest: +SKIP
    >>> desc.imu.pose_in_base, desc.foot_frames()                 # doctest: +SKIP
"""

from .errors import DescriptionError, DescriptionWarning, ErrorCode, Problem
from .feet import FootFrameChoice
from .loader import load_description
from .robot import RobotDescription
from .types import ImuSpec, Localization, NoiseSpec, NoiseType

__all__ = [
    "DescriptionError",
    "DescriptionWarning",
    "ErrorCode",
    "FootFrameChoice",
    "ImuSpec",
    "Localization",
    "NoiseSpec",
    "NoiseType",
    "Problem",
    "RobotDescription",
    "load_description",
]
