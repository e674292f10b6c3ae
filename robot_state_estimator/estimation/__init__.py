"""Estimation core: base EKF (IMU + leg kinematics), contact forces and detection, the estimator.

Plain Python + numpy + pinocchio (numba for the compiled numerics, optional); nothing here imports ROS. The main
entry point is :class:`RobotStateEstimator` (:mod:`.pipeline`, a façade over :mod:`.imu_frontend` and
:mod:`.leg_odometry`); the filter is :mod:`.ekf`, its numerics :mod:`.ekf.backends`. See ``docs/ARCHITECTURE.md``
for the contract with the node and replay and the data flow inside this package.
"""

from robot_state_estimator.estimation.contact import (
    ContactDetector,
    ContactForceEstimator,
    kinematic_clearance,
)
from robot_state_estimator.estimation.ekf import (
    BaseEkf,
    ImuNoise,
    Measurement,
    UpdateResult,
    imu_noise_from_spec,
    rotation_from_gravity,
)
from robot_state_estimator.estimation.errors import EstimationError, ModelError, SettingsError
from robot_state_estimator.estimation.joint_velocity import JointVelocityEstimator
from robot_state_estimator.estimation.kinematics import LegKinematics, skew
from robot_state_estimator.estimation.pipeline import RobotStateEstimator
from robot_state_estimator.estimation.settings import (
    ContactSettings,
    DeclaredImuSettings,
    EkfSettings,
    EstimatorSettings,
    JointVelocitySettings,
)
from robot_state_estimator.estimation.settings_loading import flatten_settings, load_settings, settings_from_flat

__all__ = [
    "BaseEkf",
    "ContactDetector",
    "ContactForceEstimator",
    "ContactSettings",
    "DeclaredImuSettings",
    "EkfSettings",
    "EstimationError",
    "EstimatorSettings",
    "ImuNoise",
    "JointVelocityEstimator",
    "JointVelocitySettings",
    "LegKinematics",
    "Measurement",
    "ModelError",
    "RobotStateEstimator",
    "SettingsError",
    "UpdateResult",
    "flatten_settings",
    "imu_noise_from_spec",
    "kinematic_clearance",
    "load_settings",
    "rotation_from_gravity",
    "settings_from_flat",
    "skew",
]
