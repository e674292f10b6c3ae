"""ROS messages -> core samples and plain arrays, for rclpy and rosbags messages alike.

Both message implementations have the same field names, so the readers are duck-typed (they only read attributes);
their parameters are typed by the message shapes of ``io.message_shapes``, which both meet.
The input readers (``*_from_msg`` of ``sensor_msgs/Imu``, ``sensor_msgs/JointState``, foot sensors,
``geometry_msgs/WrenchStamped``, contact schedules) take the values out of the message and hand them to the rules in
``io.sample_rules``, which check and convert them (the same rules the node's raw path and replay's bulk path use),
raising :class:`io.sample_rules.MessageError` with the cause key. The others read outputs back (odometry, the
contact states) and ``set_pose``'s pose.
"""

from __future__ import annotations

import array
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation as _Rotation

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    FootForceSample,
    FootWrenchSample,
    ImuSample,
    JointSample,
)
from robot_state_estimator.common.time import stamp_to_ns
from robot_state_estimator.io.message_shapes import (
    DiagnosticArrayMsg,
    FloatValues,
    ImuMsg,
    JointStateMsg,
    OdometryMsg,
    PoseMsg,
    Vector3Msg,
    WrenchStampedMsg,
)
from robot_state_estimator.io.sample_rules import (
    IMU_BAD_MESSAGE,
    IMU_NOT_FINITE,
    MessageError,
    check_joint_names,
    contact_schedule_from_values,
    foot_force_sample_from_values,
    foot_wrench_sample_from_values,
    imu_sample_from_values,
    joint_sample_from_arrays,
)

FloatArray = NDArray[np.float64]


def _vec3(msg: Vector3Msg, what: str) -> FloatArray:
    arr = np.array((msg.x, msg.y, msg.z), dtype=float)
    if not np.all(np.isfinite(arr)):
        raise MessageError(f"{what} is not finite: {arr.tolist()}", IMU_NOT_FINITE)
    return arr


def _float_array(values: FloatValues) -> FloatArray:
    """A float64 copy of a message array (rclpy: ``array.array('d')`` or ndarray; rosbags: ndarray; lists)."""
    if isinstance(values, array.array) and values.typecode == "d":
        return np.frombuffer(values, dtype=np.float64).copy()
    return np.array(values, dtype=float)


def imu_sample_from_msg(msg: ImuMsg) -> ImuSample:
    """``sensor_msgs/Imu`` -> :class:`ImuSample` (``io.sample_rules.imu_sample_from_values``).

    The orientation is kept only when reported (REP-145: ``orientation_covariance[0] == -1`` means not
    reported; an all-zero quaternion is also treated as not reported).

    Raises:
        MessageError: angular velocity or linear acceleration not finite or not numbers, or a reported orientation
            that is not a finite non-zero quaternion.
    """
    # plain attribute reads; the values are checked by the rule
    av = msg.angular_velocity
    la = msg.linear_acceleration
    try:
        w: tuple[float, ...] | None = (float(av.x), float(av.y), float(av.z))
        f = (float(la.x), float(la.y), float(la.z))
    except (TypeError, ValueError):
        w = None
    if w is None:  # fields that are not numbers: name the one numpy cannot read either, if any
        _vec3(av, "angular_velocity")
        _vec3(la, "linear_acceleration")
        raise MessageError(f"angular_velocity or linear_acceleration is not a number: {av}, {la}", IMU_BAD_MESSAGE)
    o = msg.orientation
    return imu_sample_from_values(
        stamp_to_ns(msg.header.stamp),
        str(msg.header.frame_id),
        w,
        f,
        (float(o.x), float(o.y), float(o.z), float(o.w)),
        float(msg.orientation_covariance[0]),
    )


def joint_sample_from_msg(msg: JointStateMsg) -> JointSample:
    """``sensor_msgs/JointState`` -> :class:`JointSample` (names kept; values matched by name downstream;
    ``io.sample_rules.check_joint_names``, ``joint_sample_from_arrays``).

    Empty ``velocity`` or ``effort`` arrays become None (REP/JointState: empty = not reported).

    Raises:
        MessageError: no names, duplicate names, ``position`` length differing from ``name``, a non-empty
            ``velocity``/``effort`` of another length, or non-finite values.
    """
    names = tuple(map(str, msg.name))
    check_joint_names(names)
    return joint_sample_from_arrays(
        stamp_to_ns(msg.header.stamp),
        names,
        _float_array(msg.position),
        _float_array(msg.velocity),
        _float_array(msg.effort),
    )


def foot_force_sample_from_msg(msg: JointStateMsg) -> FootForceSample:
    """Foot sensors carried as ``sensor_msgs/JointState`` (``name`` = foot frames, ``effort`` = force or count;
    ``io.sample_rules.foot_force_sample_from_values``).

    This is the layout of ``/foot_forces`` written by ``robot-state-estimator import-csv``.

    Raises:
        MessageError: no names, duplicate names (two values for one foot), ``effort`` length differing from
            ``name``, or non-finite values.
    """
    names = tuple(str(n) for n in msg.name)
    values = np.asarray(msg.effort, dtype=float)
    return foot_force_sample_from_values(stamp_to_ns(msg.header.stamp), names, values)


def foot_wrench_sample_from_msg(msg: WrenchStampedMsg, foot: str) -> FootWrenchSample:
    """``geometry_msgs/WrenchStamped`` of foot ``foot`` (the topic tells which foot) -> :class:`FootWrenchSample`:
    force and torque in ``header.frame_id`` (checked against the description by the core;
    ``io.sample_rules.foot_wrench_sample_from_values``).

    Raises:
        MessageError: a non-finite force or torque (the message names the foot and the field).
    """
    w = msg.wrench
    values = np.array((w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z), dtype=float)
    return foot_wrench_sample_from_values(stamp_to_ns(msg.header.stamp), foot, str(msg.header.frame_id), values)


#: The contact-schedule message: ``sensor_msgs/JointState`` with ``name`` = foot frames and ``position`` = 1.0
#: (stance) or 0.0 (swing), one per name (README, "Contact schedule").
SCHEDULE_TYPE = "JointState"


def contact_schedule_from_msg(msg: JointStateMsg) -> ContactScheduleSample:
    """A contact schedule as ``sensor_msgs/JointState`` (``name`` = feet, ``position`` = 1.0 stance / 0.0 swing)
    -> :class:`ContactScheduleSample` (names checked against the robot's feet by the core;
    ``io.sample_rules.contact_schedule_from_values``).

    Raises:
        MessageError: no names, ``position`` of another length than ``name``, or a value that is not 0 or 1
            (the message names the feet).
    """
    names = tuple(map(str, msg.name))
    return contact_schedule_from_values(stamp_to_ns(msg.header.stamp), names, _float_array(msg.position))


def odometry_arrays_from_msg(msg: OdometryMsg) -> dict[str, Any]:
    """``nav_msgs/Odometry`` -> dict of arrays (``stamp_ns``, ``p_world_base``, ``quat_world_base_xyzw``,
    ``v_base_in_base``, ``omega_base_in_base``, ``pose_covariance`` (6, 6), ``twist_covariance`` (6, 6),
    ``frame_id``, ``child_frame_id``). Used for ground truth and for comparing outputs."""
    p = msg.pose.pose.position
    o = msg.pose.pose.orientation
    t = msg.twist.twist
    return {
        "stamp_ns": stamp_to_ns(msg.header.stamp),
        "frame_id": str(msg.header.frame_id),
        "child_frame_id": str(msg.child_frame_id),
        "p_world_base": np.array((p.x, p.y, p.z), dtype=float),
        "quat_world_base_xyzw": np.array((o.x, o.y, o.z, o.w), dtype=float),
        "v_base_in_base": np.array((t.linear.x, t.linear.y, t.linear.z), dtype=float),
        "omega_base_in_base": np.array((t.angular.x, t.angular.y, t.angular.z), dtype=float),
        "pose_covariance": np.asarray(msg.pose.covariance, dtype=float).reshape(6, 6),
        "twist_covariance": np.asarray(msg.twist.covariance, dtype=float).reshape(6, 6),
    }


#: A pose (``set_pose``) quaternion whose norm differs from 1 by more than this is refused (smaller differences:
#: normalised).
QUATERNION_NORM_TOLERANCE = 1e-3


def pose_arrays_from_msg(pose: PoseMsg) -> tuple[FloatArray, FloatArray]:
    """``geometry_msgs/Pose`` -> ``(p (3,) m, R (3, 3) rotation matrix)``, float64, in the frame of the message
    (``set_pose``: ``p_world_base``, ``R_world_base``); the quaternion (x y z w) is normalised.

    Raises:
        ValueError: a non-finite position or orientation, or an orientation whose norm is not 1 within
            ``QUATERNION_NORM_TOLERANCE`` (e.g. all zeros); the message names the field.
    """
    pos, o = pose.position, pose.orientation
    p = np.array((pos.x, pos.y, pos.z), dtype=float)
    if not np.isfinite(p).all():
        raise ValueError(f"pose.pose.position is not finite: {p.tolist()}")
    quat_xyzw = np.array((o.x, o.y, o.z, o.w), dtype=float)
    if not np.isfinite(quat_xyzw).all():
        raise ValueError(f"pose.pose.orientation is not finite: {quat_xyzw.tolist()}")
    norm = float(np.linalg.norm(quat_xyzw))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise ValueError(
            f"pose.pose.orientation (x y z w) {quat_xyzw.tolist()} is not a unit quaternion: norm {norm:.6g}"
        )
    return p, _Rotation.from_quat(quat_xyzw / norm).as_matrix()


def contact_states_from_msg(msg: DiagnosticArrayMsg) -> tuple[int, dict[str, bool]]:
    """Inverse of ``io.message_builders.contact_states_msg``: ``(stamp_ns, {foot: in_contact})``."""
    states = {}
    for status in msg.status:
        values = {kv.key: kv.value for kv in status.values}
        states[str(status.name)] = values.get("contact", "0") == "1"
    return stamp_to_ns(msg.header.stamp), states


def contact_normal_forces_from_msg(msg: DiagnosticArrayMsg) -> dict[str, float]:
    """The ``normal_force`` values (N, world z) of a ``io.message_builders.contact_states_msg``: ``{foot: force}``
    for the statuses that carry a number (others left out)."""
    forces = {}
    for status in msg.status:
        for kv in status.values:
            if kv.key == "normal_force":
                try:
                    forces[str(status.name)] = float(kv.value)
                except ValueError:
                    pass
    return forces


__all__ = [
    "QUATERNION_NORM_TOLERANCE",
    "SCHEDULE_TYPE",
    "contact_normal_forces_from_msg",
    "contact_schedule_from_msg",
    "contact_states_from_msg",
    "foot_force_sample_from_msg",
    "foot_wrench_sample_from_msg",
    "imu_sample_from_msg",
    "joint_sample_from_msg",
    "odometry_arrays_from_msg",
    "pose_arrays_from_msg",
]
