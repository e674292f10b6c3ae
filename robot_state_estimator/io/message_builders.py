"""Core types -> ROS messages: the builders of the messages the project writes (the simulator's bags, the node's
outputs, the message path's tests), for rclpy and rosbags messages alike.

Each builder takes a ``types`` namespace holding the message classes to instantiate (``io.message_types``:
:class:`MessageTypes`, filled from rclpy by ``ros.message_types`` or from a rosbags typestore by
``rosbags_types``) and passes every field by keyword, which both accept.

Conventions: REP-103 frames, REP-105 ``odom -> base_link``, REP-145 IMU covariances (element 0 = -1 for a field
that is not reported), nav_msgs/Odometry covariances row-major 6x6 (x, y, z, rot x, rot y, rot z), quaternions
``x y z w`` in messages and in ``*_xyzw`` arrays. The float order of the odometry and TF messages in the estimate's
output vector (:data:`ODOMETRY_FROM_OUTPUT`, :data:`TRANSFORM_FROM_OUTPUT`) and the contact states' statuses as
plain values (:func:`contact_status_fields`) are written here once for the builders and ``io.cdr_encode``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.output_layout import (
    OMEGA_BASE_IN_BASE,
    P_WORLD_BASE,
    POSE_COVARIANCE,
    QUAT_WORLD_BASE_XYZW,
    TWIST_COVARIANCE,
    V_BASE_IN_BASE,
)
from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    FootForceSample,
    FootState,
    ImuSample,
    JointSample,
)
from robot_state_estimator.common.time import ns_to_sec_nanosec
from robot_state_estimator.io.message_shapes import (
    ClockMsg,
    DiagnosticArrayMsg,
    HeaderMsg,
    ImuMsg,
    JointStateMsg,
    OdometryMsg,
    QuaternionMsg,
    TFMessageMsg,
    TransformStampedMsg,
    Vector3Msg,
    WrenchStampedMsg,
)
from robot_state_estimator.io.message_types import MessageTypes
from robot_state_estimator.io.sample_rules import NOT_REPORTED, STANCE, SWING, MessageError

FloatArray = NDArray[np.float64]


def header(types: MessageTypes, stamp_ns: int, frame_id: str) -> HeaderMsg:
    """``std_msgs/Header`` with the stamp split exactly into ``sec``/``nanosec``."""
    sec, nanosec = ns_to_sec_nanosec(stamp_ns)
    return types.Header(stamp=types.Time(sec=sec, nanosec=nanosec), frame_id=frame_id)


def _vector3(types: MessageTypes, v: Sequence[float] | FloatArray) -> Vector3Msg:
    return types.Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _quaternion(types: MessageTypes, q_xyzw: Sequence[float] | FloatArray) -> QuaternionMsg:
    return types.Quaternion(x=float(q_xyzw[0]), y=float(q_xyzw[1]), z=float(q_xyzw[2]), w=float(q_xyzw[3]))


def _cov(values: FloatArray, size: int) -> FloatArray:
    arr = np.ascontiguousarray(values, dtype=np.float64).reshape(size)
    return arr


def imu_msg(
    types: MessageTypes,
    sample: ImuSample,
    *,
    frame_id: str | None = None,
    orientation_covariance: np.ndarray | None = None,
    angular_velocity_covariance: np.ndarray | None = None,
    linear_acceleration_covariance: np.ndarray | None = None,
) -> ImuMsg:
    """:class:`ImuSample` -> ``sensor_msgs/Imu``.

    Covariances are (3, 3) or (9,) row-major; None gives all zeros ("unknown", REP-145). When the sample has no
    orientation, the orientation covariance element 0 is set to -1 ("not reported", REP-145).
    """
    zeros = np.zeros(9)
    if sample.orientation_xyzw is None:
        q = (0.0, 0.0, 0.0, 1.0)
        ocov = zeros.copy()
        ocov[0] = NOT_REPORTED
    else:
        q = tuple(sample.orientation_xyzw)
        ocov = zeros if orientation_covariance is None else _cov(orientation_covariance, 9)
    return types.Imu(
        header=header(types, sample.stamp_ns, sample.frame_id if frame_id is None else frame_id),
        orientation=_quaternion(types, q),
        orientation_covariance=ocov,
        angular_velocity=_vector3(types, sample.angular_velocity),
        angular_velocity_covariance=zeros
        if angular_velocity_covariance is None
        else _cov(angular_velocity_covariance, 9),
        linear_acceleration=_vector3(types, sample.linear_acceleration),
        linear_acceleration_covariance=zeros
        if linear_acceleration_covariance is None
        else _cov(linear_acceleration_covariance, 9),
    )


def joint_state_msg(types: MessageTypes, sample: JointSample, *, frame_id: str = "") -> JointStateMsg:
    """:class:`JointSample` -> ``sensor_msgs/JointState`` (None velocity/effort become empty arrays)."""
    empty = np.zeros(0, dtype=np.float64)
    return types.JointState(
        header=header(types, sample.stamp_ns, frame_id),
        name=list(sample.names),
        position=np.asarray(sample.position, dtype=np.float64),
        velocity=empty if sample.velocity is None else np.asarray(sample.velocity, dtype=np.float64),
        effort=empty if sample.effort is None else np.asarray(sample.effort, dtype=np.float64),
    )


def foot_force_msg(types: MessageTypes, sample: FootForceSample, *, frame_id: str = "") -> JointStateMsg:
    """:class:`FootForceSample` -> ``sensor_msgs/JointState`` (``name`` = feet, ``effort`` = values)."""
    empty = np.zeros(0, dtype=np.float64)
    return types.JointState(
        header=header(types, sample.stamp_ns, frame_id),
        name=list(sample.feet),
        position=empty,
        velocity=empty,
        effort=np.asarray(sample.values, dtype=np.float64),
    )


def contact_schedule_msg(types: MessageTypes, sample: ContactScheduleSample) -> JointStateMsg:
    """:class:`ContactScheduleSample` -> ``sensor_msgs/JointState`` (``name`` = feet, ``position`` = 1.0 / 0.0)."""
    empty = np.zeros(0, dtype=np.float64)
    return types.JointState(
        header=header(types, sample.stamp_ns, ""),
        name=list(sample.feet),
        position=np.array([STANCE if c else SWING for c in sample.in_contact], dtype=np.float64),
        velocity=empty,
        effort=empty,
    )


#: Indices into the estimate's (91,) output vector (``common.output_layout``) of the 85 numbers of
#: ``nav_msgs/Odometry`` in its field order: position, orientation, pose covariance, linear velocity, angular velocity,
#: twist covariance (``io.cdr_encode.odometry_layout``'s floats).
ODOMETRY_FROM_OUTPUT: NDArray[np.intp] = np.r_[
    P_WORLD_BASE, QUAT_WORLD_BASE_XYZW, POSE_COVARIANCE, V_BASE_IN_BASE, OMEGA_BASE_IN_BASE, TWIST_COVARIANCE
]
#: The same for the TF ``odom -> base`` (``io.cdr_encode.tf_message_layout``'s floats): position, orientation.
TRANSFORM_FROM_OUTPUT: NDArray[np.intp] = np.r_[P_WORLD_BASE, QUAT_WORLD_BASE_XYZW]


def odometry_msg(types: MessageTypes, estimate: Estimate, *, odom_frame: str, base_frame: str) -> OdometryMsg:
    """:class:`Estimate` -> ``nav_msgs/Odometry``: pose in ``odom_frame``, twist in ``base_frame`` (the child)."""
    p = estimate.p_world_base
    return types.Odometry(
        header=header(types, estimate.stamp_ns, odom_frame),
        child_frame_id=base_frame,
        pose=types.PoseWithCovariance(
            pose=types.Pose(
                position=types.Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                orientation=_quaternion(types, estimate.quat_world_base_xyzw),
            ),
            covariance=_cov(estimate.pose_covariance, 36),
        ),
        twist=types.TwistWithCovariance(
            twist=types.Twist(
                linear=_vector3(types, estimate.v_base_in_base),
                angular=_vector3(types, estimate.omega_base_in_base),
            ),
            covariance=_cov(estimate.twist_covariance, 36),
        ),
    )


def transform_stamped_msg(
    types: MessageTypes,
    stamp_ns: int,
    parent_frame: str,
    child_frame: str,
    translation: Sequence[float] | FloatArray,
    quat_xyzw: Sequence[float] | FloatArray,
) -> TransformStampedMsg:
    """``geometry_msgs/TransformStamped`` of ``child_frame`` in ``parent_frame`` (X_parent_child)."""
    return types.TransformStamped(
        header=header(types, stamp_ns, parent_frame),
        child_frame_id=child_frame,
        transform=types.Transform(translation=_vector3(types, translation), rotation=_quaternion(types, quat_xyzw)),
    )


def odom_transform_msg(
    types: MessageTypes, estimate: Estimate, *, odom_frame: str, base_frame: str
) -> TransformStampedMsg:
    """The TF ``odom_frame -> base_frame`` of an :class:`Estimate` (``TransformStamped``)."""
    return transform_stamped_msg(
        types, estimate.stamp_ns, odom_frame, base_frame, estimate.p_world_base, estimate.quat_world_base_xyzw
    )


def tf_message(types: MessageTypes, transforms: Sequence[TransformStampedMsg]) -> TFMessageMsg:
    """``tf2_msgs/TFMessage`` holding ``transforms``.

    Raises:
        MessageError: ``types.TFMessage`` is None (tf2_msgs not installed).
    """
    if types.TFMessage is None:
        raise MessageError("tf2_msgs is not installed: cannot build tf2_msgs/msg/TFMessage")
    return types.TFMessage(transforms=list(transforms))


def wrench_stamped_msg(
    types: MessageTypes, stamp_ns: int, frame_id: str, wrench: Sequence[float] | FloatArray
) -> WrenchStampedMsg:
    """``geometry_msgs/WrenchStamped`` from a (6,) [force N, torque N m] in ``frame_id``."""
    return types.WrenchStamped(
        header=header(types, stamp_ns, frame_id),
        wrench=types.Wrench(force=_vector3(types, wrench[:3]), torque=_vector3(types, wrench[3:6])),
    )


def foot_wrench_msg(types: MessageTypes, stamp_ns: int, foot: FootState) -> WrenchStampedMsg:
    """Per-foot ``WrenchStamped`` expressed in the foot frame (so RViz draws the arrow at the foot)."""
    return wrench_stamped_msg(types, stamp_ns, foot.name, foot.wrench_in_foot)


def contact_status_fields(
    feet: Sequence[FootState], *, hardware_id: str = ""
) -> list[tuple[int, str, str, str, tuple[tuple[str, str], ...]]]:
    """The statuses of the contact states message, as plain values: per foot ``(level, name, message, hardware_id,
    ((key, value), ...))`` (the layout :func:`contact_states_msg` documents; ``io.cdr_encode.encode_diagnostic_array``
    encodes them without message objects)."""
    return [
        (
            0,  # diagnostic_msgs/DiagnosticStatus.OK
            foot.name,
            "contact" if foot.in_contact else "no_contact",
            hardware_id,
            (
                ("contact", "1" if foot.in_contact else "0"),
                ("normal_force", f"{float(foot.force_in_world[2]):.3f}"),
                ("update_accepted", "1" if foot.update_accepted else "0"),
            ),
        )
        for foot in feet
    ]


def contact_states_msg(
    types: MessageTypes, stamp_ns: int, feet: Sequence[FootState], *, hardware_id: str = ""
) -> DiagnosticArrayMsg:
    """Contact states as ``diagnostic_msgs/DiagnosticArray`` (stamped, one status per foot).

    Layout (documented in README): ``status[i].name`` = foot frame, ``message`` = ``"contact"`` or
    ``"no_contact"``, ``values`` = ``contact`` ("1"/"0"), ``normal_force`` (N, world z, 3 decimals),
    ``update_accepted`` ("1"/"0"); level OK (:func:`contact_status_fields`).
    """
    statuses = [
        types.DiagnosticStatus(
            level=types.DiagnosticStatus.OK,  # the fields' level 0, as the message type spells it (rclpy: a byte)
            name=name,
            message=message,
            hardware_id=hw,
            values=[types.KeyValue(key=key, value=value) for key, value in values],
        )
        for _level, name, message, hw, values in contact_status_fields(feet, hardware_id=hardware_id)
    ]
    return types.DiagnosticArray(header=header(types, stamp_ns, ""), status=statuses)


def clock_msg(types: MessageTypes, stamp_ns: int) -> ClockMsg:
    """``rosgraph_msgs/Clock`` at ``stamp_ns``."""
    sec, nanosec = ns_to_sec_nanosec(stamp_ns)
    return types.Clock(clock=types.Time(sec=sec, nanosec=nanosec))


__all__ = [
    "ODOMETRY_FROM_OUTPUT",
    "TRANSFORM_FROM_OUTPUT",
    "clock_msg",
    "contact_schedule_msg",
    "contact_states_msg",
    "contact_status_fields",
    "foot_force_msg",
    "foot_wrench_msg",
    "header",
    "imu_msg",
    "joint_state_msg",
    "odom_transform_msg",
    "odometry_msg",
    "tf_message",
    "transform_stamped_msg",
    "wrench_stamped_msg",
]
