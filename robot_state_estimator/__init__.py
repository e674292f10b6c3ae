"""robot_state_estimator: floating-base state estimation for legged robots (IMU + leg kinematics EKF).

Sub-packages, in the direction data flows:

- ``description``: SDFormat / URDF parsing into an IMU spec, frames and a pinocchio model.
- ``sensors``: the IMU measurement and noise model (gz-sensors semantics).
- ``simulation``: legged-motion data with exact ground truth (dynamics exact with 3-4 feet in stance).
- ``estimation``: the base EKF, contact forces and contact detection, the estimator pipeline.
- ``ros``: the ROS 2 node (script ``ros.entry``), a thin adapter over ``estimation`` (the only place importing rclpy).
- ``tools``: offline replay, evaluation, importers, benchmarks and the command line.

Nothing outside ``ros`` imports rclpy or ROS message packages.
"""

__version__ = "0.1.0"
