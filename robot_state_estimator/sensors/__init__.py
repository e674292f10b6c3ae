"""IMU measurement and noise models with gz-sensors semantics, and IMU orientation references.

Public names: :class:`ImuModel`, :class:`ImuReading`, :class:`ImuCovariances`, :class:`ImuNoise`,
:class:`AxisNoise`, :func:`orientation_reference`, :func:`orientation_reference_for_spec`, :class:`SensorError`.
"""

from robot_state_estimator.sensors.errors import OrientationReferenceError, SensorError
from robot_state_estimator.sensors.imu_model import ImuCovariances, ImuModel, ImuReading
from robot_state_estimator.sensors.noise import AxisNoise, ImuNoise
from robot_state_estimator.sensors.orientation import orientation_reference, orientation_reference_for_spec

__all__ = [
    "AxisNoise",
    "ImuCovariances",
    "ImuModel",
    "ImuNoise",
    "ImuReading",
    "OrientationReferenceError",
    "SensorError",
    "orientation_reference",
    "orientation_reference_for_spec",
]
