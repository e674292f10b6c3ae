"""The error-state EKF of the floating base from an IMU and leg kinematics.

- :mod:`.layout`: the filter's buffers (state, covariance, constants) and the result codes, shared by the filter and
  the backends;
- :mod:`.model`: the process model (state, IMU in the base frame, dynamics, error transition, process noise);
- :mod:`.measurements`: the measurement models (leg odometry, zero rate, flat feet's orientation), the gate and
  what an update exposes;
- :mod:`.pose`: checks of a pose given from outside;
- :mod:`.filter`: :class:`BaseEkf` (state, covariance, propagation, gated updates, outputs);
- :mod:`.backends`: the numerics, the one seam where the numpy reference and the numba kernels are chosen.
"""

from robot_state_estimator.estimation.ekf.filter import BaseEkf
from robot_state_estimator.estimation.ekf.layout import (
    BA_SL,
    BG_SL,
    IMU_BAD_INPUT,
    IMU_NOT_FINITE,
    IMU_OK,
    N_STATES,
    P_SL,
    TH_SL,
    V_SL,
)
from robot_state_estimator.estimation.ekf.measurements import (
    Measurement,
    UpdateResult,
    gated_result,
    leg_results,
    spd_solve,
)
from robot_state_estimator.estimation.ekf.model import ImuNoise, imu_noise_from_spec, rotation_from_gravity
from robot_state_estimator.estimation.ekf.numerics import quat_xyzw_from_matrix
from robot_state_estimator.estimation.ekf.pose import (
    ROTATION_TOLERANCE,
    check_pose,
    check_pose_covariance,
    check_rotation,
    pose_error_covariance,
)

__all__ = [
    "BA_SL",
    "BG_SL",
    "IMU_BAD_INPUT",
    "IMU_NOT_FINITE",
    "IMU_OK",
    "N_STATES",
    "P_SL",
    "ROTATION_TOLERANCE",
    "TH_SL",
    "V_SL",
    "BaseEkf",
    "ImuNoise",
    "Measurement",
    "UpdateResult",
    "check_pose",
    "check_pose_covariance",
    "check_rotation",
    "gated_result",
    "imu_noise_from_spec",
    "leg_results",
    "pose_error_covariance",
    "quat_xyzw_from_matrix",
    "rotation_from_gravity",
    "spd_solve",
]
