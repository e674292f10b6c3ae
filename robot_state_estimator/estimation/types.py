"""Inputs and outputs of the estimation core: plain, typed, ROS-free.

These are the only types that cross the boundary between the core and its adapters (the ROS node, the
offline replay, the simulator). Time is integer nanoseconds (``stamp_ns``); arrays are float64 numpy.
Conversions from and to ROS messages live in ``robot_state_estimator.io.messages`` (shared by the node and the
offline tools, which read the same field names from rclpy and rosbags messages).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class ImuSample:
    """One IMU reading, as ``sensor_msgs/Imu`` carries it.

    Attributes:
        stamp_ns: measurement time (ns).
        angular_velocity: (3,) rad/s, gyroscope in the IMU frame S.
        linear_acceleration: (3,) m/s^2, accelerometer (specific force) in S; +9.81 on z when level at rest.
        orientation_xyzw: (4,) quaternion ``x y z w`` of S in the IMU's orientation reference, or None when
            not reported (REP-145: covariance element 0 = -1).
        frame_id: ``header.frame_id`` ("" when unknown).
    """

    stamp_ns: int
    angular_velocity: FloatArray
    linear_acceleration: FloatArray
    orientation_xyzw: FloatArray | None = None
    frame_id: str = ""


@dataclass(frozen=True)
class JointSample:
    """One ``sensor_msgs/JointState``: values matched by name, never by index.

    Attributes:
        stamp_ns: measurement time (ns).
        names: joint names, in the message's order.
        position: (n,) rad or m.
        velocity: (n,) rad/s or m/s, or None when the message has none (estimated by the core).
        effort: (n,) N m or N, or None when the message has none (torque-based contact detection off).
    """

    stamp_ns: int
    names: tuple[str, ...]
    position: FloatArray
    velocity: FloatArray | None = None
    effort: FloatArray | None = None


@dataclass(frozen=True)
class FootForceSample:
    """Foot contact sensor readings (forces in N or raw pressure counts), matched by foot frame name.

    Attributes:
        stamp_ns: measurement time (ns).
        feet: foot frame names.
        values: (n,) normal force or raw count per foot (units set by the contact detector settings).
    """

    stamp_ns: int
    feet: tuple[str, ...]
    values: FloatArray


@dataclass(frozen=True)
class FootState:
    """Per-foot result of one joint-state step.

    Attributes:
        name: foot frame name.
        in_contact: debounced contact state.
        force_in_world: (3,) N, ground reaction force on the foot, world axes (``LOCAL_WORLD_ALIGNED``);
            NaN-free zeros when unknown.
        wrench_in_foot: (6,) [force N, torque N m] expressed in the foot frame (what RViz draws at the foot).
        update_accepted: whether this foot's kinematic update passed the gate (False when not in contact).
        nis: normalised innovation squared of its update (NaN when no update ran).
    """

    name: str
    in_contact: bool
    force_in_world: FloatArray
    wrench_in_foot: FloatArray
    update_accepted: bool = False
    nis: float = float("nan")


@dataclass(frozen=True)
class Estimate:
    """The base state at ``stamp_ns``, in ROS conventions (REP-103/105, nav_msgs/Odometry).

    Attributes:
        stamp_ns: the stamp of the measurement that produced it (ns).
        p_world_base: (3,) m, base position in ``odom``.
        quat_world_base_xyzw: (4,) orientation of the base in ``odom``, ``x y z w``.
        v_base_in_base: (3,) m/s, base linear velocity in the base frame (Odometry twist, child frame).
        omega_base_in_base: (3,) rad/s, base angular velocity in the base frame (bias corrected).
        pose_covariance: (6, 6) row-major order x, y, z, rot x, rot y, rot z; position in ``odom``,
            rotation as small fixed-axis angles about the ``odom`` axes.
        twist_covariance: (6, 6) linear then angular velocity, both in the base frame.
        accel_bias: (3,) m/s^2 in the IMU frame S.
        gyro_bias: (3,) rad/s in S.
        feet: per-foot states (empty on IMU-only steps).
        status: short machine-readable status ("ok", "initializing", ...).
    """

    stamp_ns: int
    p_world_base: FloatArray
    quat_world_base_xyzw: FloatArray
    v_base_in_base: FloatArray
    omega_base_in_base: FloatArray
    pose_covariance: FloatArray
    twist_covariance: FloatArray
    accel_bias: FloatArray
    gyro_bias: FloatArray
    feet: tuple[FootState, ...] = field(default_factory=tuple)
    status: str = "ok"


@dataclass(frozen=True)
class Event:
    """Something the adapter should report (log once per second per ``key``, count in diagnostics).

    Attributes:
        key: stable machine-readable cause, e.g. ``"imu_nan"``, ``"stamp_backwards"``, ``"unknown_joint"``.
        message: human-readable reason naming what is wrong.
        level: "info", "warn" or "error".
    """

    key: str
    message: str
    level: str = "warn"
