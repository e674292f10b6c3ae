"""The one place where ROS messages and core types are converted into each other.

Works for both message implementations this project meets:

- rclpy messages (the node), and
- rosbags message dataclasses (bags read and written offline),

because both have the same field names. Readers are duck-typed (they only read attributes). Builders take a
``types`` namespace holding the message classes to instantiate (:class:`MessageTypes`), filled either from
rclpy (``robot_state_estimator.ros.message_types.rclpy_types()``) or from a rosbags typestore
(:func:`rosbags_types`); they pass every field by keyword, which both accept.

Conventions: REP-103 frames, REP-105 ``odom -> base_link``, REP-145 IMU covariances (element 0 = -1 for a field
that is not reported), nav_msgs/Odometry covariances row-major 6x6 (x, y, z, rot x, rot y, rot z), quaternions
``x y z w`` in messages and in ``*_xyzw`` arrays.
"""

from __future__ import annotations

import array
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation as _Rotation

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
    FootWrenchSample,
    ImuSample,
    JointSample,
)
from robot_state_estimator.common.time import NS_PER_S, ns_to_sec_nanosec, stamp_to_ns

FloatArray = NDArray[np.float64]

#: Message type names used by the project (ROS 2 interface names).
TYPE_NAMES: dict[str, str] = {
    "Time": "builtin_interfaces/msg/Time",
    "Header": "std_msgs/msg/Header",
    "Point": "geometry_msgs/msg/Point",
    "Quaternion": "geometry_msgs/msg/Quaternion",
    "Vector3": "geometry_msgs/msg/Vector3",
    "Pose": "geometry_msgs/msg/Pose",
    "Twist": "geometry_msgs/msg/Twist",
    "PoseWithCovariance": "geometry_msgs/msg/PoseWithCovariance",
    "TwistWithCovariance": "geometry_msgs/msg/TwistWithCovariance",
    "Transform": "geometry_msgs/msg/Transform",
    "TransformStamped": "geometry_msgs/msg/TransformStamped",
    "Wrench": "geometry_msgs/msg/Wrench",
    "WrenchStamped": "geometry_msgs/msg/WrenchStamped",
    "Imu": "sensor_msgs/msg/Imu",
    "JointState": "sensor_msgs/msg/JointState",
    "Odometry": "nav_msgs/msg/Odometry",
    "Clock": "rosgraph_msgs/msg/Clock",
    "TFMessage": "tf2_msgs/msg/TFMessage",
    "KeyValue": "diagnostic_msgs/msg/KeyValue",
    "DiagnosticStatus": "diagnostic_msgs/msg/DiagnosticStatus",
    "DiagnosticArray": "diagnostic_msgs/msg/DiagnosticArray",
}


class MessageError(ValueError):
    """A message cannot be converted: wrong lengths, NaN/Inf, missing fields. The message says which."""


@dataclass(frozen=True)
class MessageTypes:
    """Message classes to build, by short name (see ``TYPE_NAMES``). ``TFMessage`` may be None (not installed)."""

    Time: Any
    Header: Any
    Point: Any
    Quaternion: Any
    Vector3: Any
    Pose: Any
    Twist: Any
    PoseWithCovariance: Any
    TwistWithCovariance: Any
    Transform: Any
    TransformStamped: Any
    Wrench: Any
    WrenchStamped: Any
    Imu: Any
    JointState: Any
    Odometry: Any
    Clock: Any
    TFMessage: Any
    KeyValue: Any
    DiagnosticStatus: Any
    DiagnosticArray: Any


def rosbags_types(typestore: Any) -> MessageTypes:
    """The :class:`MessageTypes` of a rosbags typestore (e.g. ``get_typestore(Stores.ROS2_KILTED)``)."""
    return MessageTypes(**{short: typestore.types[full] for short, full in TYPE_NAMES.items()})


# ----------------------------------------------------------------------------------------------- readers


def _vec3(msg: Any, what: str) -> np.ndarray:
    arr = np.array((msg.x, msg.y, msg.z), dtype=float)
    if not np.all(np.isfinite(arr)):
        raise MessageError(f"{what} is not finite: {arr.tolist()}")
    return arr


def imu_sample_from_msg(msg: Any) -> ImuSample:
    """``sensor_msgs/Imu`` -> :class:`ImuSample`.

    The orientation is kept only when reported (REP-145: ``orientation_covariance[0] == -1`` means not
    reported; an all-zero quaternion is also treated as not reported).

    Raises:
        MessageError: angular velocity or linear acceleration not finite, or a reported orientation that is not
            a finite non-zero quaternion.
    """
    # The hot path of the node (every IMU message): plain attribute reads and one finiteness test over Python
    # floats; the slow path below builds the error message.
    av = msg.angular_velocity
    la = msg.linear_acceleration
    try:
        vals = (float(av.x), float(av.y), float(av.z), float(la.x), float(la.y), float(la.z))
        finite = all(map(math.isfinite, vals))
    except (TypeError, ValueError):
        finite = False
    if not finite:
        _vec3(av, "angular_velocity")
        _vec3(la, "linear_acceleration")
        raise MessageError(f"angular_velocity or linear_acceleration is not a number: {av}, {la}")
    o = msg.orientation
    quat = (float(o.x), float(o.y), float(o.z), float(o.w))
    stamp = msg.header.stamp
    return imu_sample_from_values(
        int(stamp.sec) * NS_PER_S + int(stamp.nanosec),
        str(msg.header.frame_id),
        vals,
        quat,
        float(msg.orientation_covariance[0]),
    )


def imu_sample_from_values(
    stamp_ns: int,
    frame_id: str,
    vals: tuple[float, ...],
    quat: tuple[float, float, float, float],
    orientation_covariance_0: float,
) -> ImuSample:
    """The :class:`ImuSample` of an Imu's values (:func:`imu_sample_from_msg` and the raw-CDR path of
    ``io.cdr_samples`` share it, so both make the same sample).

    Args:
        stamp_ns: ns, the header stamp.
        frame_id: the header's frame.
        vals: angular velocity (3, rad/s) then linear acceleration (3, m/s^2), finite Python floats.
        quat: the orientation x y z w as reported.
        orientation_covariance_0: element 0 of the orientation covariance (-1: not reported, REP-145).

    Raises:
        MessageError: a reported orientation that is not a finite non-zero quaternion.
    """
    quat_xyzw: np.ndarray | None = None
    if orientation_covariance_0 != -1.0 and any(quat):
        n = math.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3])
        if not math.isfinite(n) or n < 1e-6:
            raise MessageError(f"orientation is not a valid quaternion: {list(quat)}")
        quat_xyzw = np.array(quat, dtype=float) / n
    return ImuSample(
        stamp_ns=stamp_ns,
        angular_velocity=np.array(vals[:3], dtype=float),
        linear_acceleration=np.array(vals[3:], dtype=float),
        orientation_xyzw=quat_xyzw,
        frame_id=frame_id,
    )


def _float_array(values: Any) -> np.ndarray:
    """A float64 copy of a message array (rclpy: ``array.array('d')`` or ndarray; rosbags: ndarray; lists)."""
    if isinstance(values, array.array) and values.typecode == "d":
        return np.frombuffer(values, dtype=np.float64).copy()
    return np.array(values, dtype=float)


def joint_sample_from_msg(msg: Any) -> JointSample:
    """``sensor_msgs/JointState`` -> :class:`JointSample` (names kept; values matched by name downstream).

    Empty ``velocity`` or ``effort`` arrays become None (REP/JointState: empty = not reported).

    Raises:
        MessageError: no names, duplicate names, ``position`` length differing from ``name``, a non-empty
            ``velocity``/``effort`` of another length, or non-finite values.
    """
    names = tuple(map(str, msg.name))
    check_joint_names(names)
    stamp = msg.header.stamp
    return joint_sample_from_arrays(
        int(stamp.sec) * NS_PER_S + int(stamp.nanosec),
        names,
        _float_array(msg.position),
        _float_array(msg.velocity),
        _float_array(msg.effort),
    )


def check_joint_names(names: tuple[str, ...]) -> None:
    """Refuse a JointState's names: none, or one twice.

    Raises:
        MessageError: no names, or duplicate names (the message names them).
    """
    if not names:
        raise MessageError("JointState has no joint names")
    if len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise MessageError(f"JointState has duplicate joint names: {dup}")


def joint_sample_from_arrays(
    stamp_ns: int, names: tuple[str, ...], position: np.ndarray, velocity: np.ndarray, effort: np.ndarray
) -> JointSample:
    """The :class:`JointSample` of a JointState's values, its names checked by :func:`check_joint_names`
    (:func:`joint_sample_from_msg` and the raw-CDR path of ``io.cdr_samples`` share it).

    Args:
        stamp_ns: ns, the header stamp.
        names: the joint names.
        position, velocity, effort: (n,), (n,) or (0,), (n,) or (0,) float64 arrays the sample takes over (not
            copied); an empty velocity or effort is not reported (None).

    Raises:
        MessageError: lengths that do not match the names, or non-finite values (the message names the joints).
    """
    n = len(names)
    if position.shape != (n,):
        raise MessageError(f"JointState has {n} names but {position.size} positions")
    for field_name, values in (("velocity", velocity), ("effort", effort)):
        if values.size and values.shape != (n,):
            raise MessageError(f"JointState has {n} names but {values.size} {field_name} values")
    if not np.isfinite(np.concatenate((position, velocity, effort))).all():
        for field_name, values in (("position", position), ("velocity", velocity), ("effort", effort)):
            if not np.isfinite(values).all():
                bad = [names[i] for i in np.flatnonzero(~np.isfinite(values))]
                raise MessageError(f"JointState {field_name} is not finite for joints {bad}")
    return JointSample(
        stamp_ns=stamp_ns,
        names=names,
        position=position,
        velocity=velocity if velocity.size else None,
        effort=effort if effort.size else None,
    )


def foot_force_sample_from_msg(msg: Any) -> FootForceSample:
    """Foot sensors carried as ``sensor_msgs/JointState`` (``name`` = foot frames, ``effort`` = force or count).

    This is the layout of ``/foot_forces`` written by ``robot-state-estimator import-csv``.

    Raises:
        MessageError: no names, duplicate names (two values for one foot), ``effort`` length differing from
            ``name``, or non-finite values.
    """
    names = tuple(str(n) for n in msg.name)
    values = np.asarray(msg.effort, dtype=float)
    if not names or values.shape != (len(names),):
        raise MessageError(f"foot forces: {len(names)} names but {values.size} effort values")
    if len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise MessageError(f"foot forces have duplicate foot names: {dup}")
    if not np.all(np.isfinite(values)):
        bad = [names[i] for i in np.flatnonzero(~np.isfinite(values))]
        raise MessageError(f"foot forces are not finite for feet {bad}")
    return FootForceSample(stamp_ns=stamp_to_ns(msg.header.stamp), feet=names, values=values)


def foot_wrench_sample_from_msg(msg: Any, foot: str) -> FootWrenchSample:
    """``geometry_msgs/WrenchStamped`` of foot ``foot`` (the topic tells which foot) -> :class:`FootWrenchSample`:
    force and torque in ``header.frame_id`` (checked against the description by the core).

    Raises:
        MessageError: a non-finite force or torque (the message names the foot and the field).
    """
    w = msg.wrench
    values = np.array((w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z), dtype=float)
    if not np.isfinite(values).all():
        raise MessageError(f"foot wrench of {foot} is not finite: {values.tolist()}")
    return FootWrenchSample(
        stamp_ns=stamp_to_ns(msg.header.stamp), foot=foot, frame_id=str(msg.header.frame_id), wrench=values
    )


#: The contact-schedule message: ``sensor_msgs/JointState`` with ``name`` = foot frames and ``position`` = 1.0
#: (stance) or 0.0 (swing), one per name (README, "Contact schedule").
SCHEDULE_TYPE = "JointState"


def contact_schedule_from_msg(msg: Any) -> ContactScheduleSample:
    """A contact schedule as ``sensor_msgs/JointState`` (``name`` = feet, ``position`` = 1.0 stance / 0.0 swing)
    -> :class:`ContactScheduleSample` (names checked against the robot's feet by the core).

    Raises:
        MessageError: no names, ``position`` of another length than ``name``, or a value that is not 0 or 1
            (the message names the feet).
    """
    names = tuple(map(str, msg.name))
    values = _float_array(msg.position)
    if not names or values.shape != (len(names),):
        raise MessageError(f"contact schedule: {len(names)} names but {values.size} position values")
    bad = np.flatnonzero((values != 0.0) & (values != 1.0)).tolist()
    if bad:
        raise MessageError(
            "contact schedule values must be 1 (stance) or 0 (swing): "
            + ", ".join(f"{names[i]} has {float(values[i])!r}" for i in bad)
        )
    return ContactScheduleSample(
        stamp_ns=stamp_to_ns(msg.header.stamp), feet=names, in_contact=tuple((values == 1.0).tolist())
    )


def odometry_arrays_from_msg(msg: Any) -> dict[str, Any]:
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


def pose_arrays_from_msg(pose: Any) -> tuple[FloatArray, FloatArray]:
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


# ---------------------------------------------------------------------------------------------- builders


def header(types: MessageTypes, stamp_ns: int, frame_id: str) -> Any:
    """``std_msgs/Header`` with the stamp split exactly into ``sec``/``nanosec``."""
    sec, nanosec = ns_to_sec_nanosec(stamp_ns)
    return types.Header(stamp=types.Time(sec=sec, nanosec=nanosec), frame_id=frame_id)


def _vector3(types: MessageTypes, v: Sequence[float] | FloatArray) -> Any:
    return types.Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _quaternion(types: MessageTypes, q_xyzw: Sequence[float] | FloatArray) -> Any:
    return types.Quaternion(x=float(q_xyzw[0]), y=float(q_xyzw[1]), z=float(q_xyzw[2]), w=float(q_xyzw[3]))


def _cov(values: np.ndarray, size: int) -> np.ndarray:
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
) -> Any:
    """:class:`ImuSample` -> ``sensor_msgs/Imu``.

    Covariances are (3, 3) or (9,) row-major; None gives all zeros ("unknown", REP-145). When the sample has no
    orientation, the orientation covariance element 0 is set to -1 ("not reported", REP-145).
    """
    zeros = np.zeros(9)
    if sample.orientation_xyzw is None:
        q = (0.0, 0.0, 0.0, 1.0)
        ocov = zeros.copy()
        ocov[0] = -1.0
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


def joint_state_msg(types: MessageTypes, sample: JointSample, *, frame_id: str = "") -> Any:
    """:class:`JointSample` -> ``sensor_msgs/JointState`` (None velocity/effort become empty arrays)."""
    empty = np.zeros(0, dtype=np.float64)
    return types.JointState(
        header=header(types, sample.stamp_ns, frame_id),
        name=list(sample.names),
        position=np.asarray(sample.position, dtype=np.float64),
        velocity=empty if sample.velocity is None else np.asarray(sample.velocity, dtype=np.float64),
        effort=empty if sample.effort is None else np.asarray(sample.effort, dtype=np.float64),
    )


def foot_force_msg(types: MessageTypes, sample: FootForceSample, *, frame_id: str = "") -> Any:
    """:class:`FootForceSample` -> ``sensor_msgs/JointState`` (``name`` = feet, ``effort`` = values)."""
    empty = np.zeros(0, dtype=np.float64)
    return types.JointState(
        header=header(types, sample.stamp_ns, frame_id),
        name=list(sample.feet),
        position=empty,
        velocity=empty,
        effort=np.asarray(sample.values, dtype=np.float64),
    )


def contact_schedule_msg(types: MessageTypes, sample: ContactScheduleSample) -> Any:
    """:class:`ContactScheduleSample` -> ``sensor_msgs/JointState`` (``name`` = feet, ``position`` = 1.0 / 0.0)."""
    empty = np.zeros(0, dtype=np.float64)
    return types.JointState(
        header=header(types, sample.stamp_ns, ""),
        name=list(sample.feet),
        position=np.array([1.0 if c else 0.0 for c in sample.in_contact], dtype=np.float64),
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


def odometry_msg(types: MessageTypes, estimate: Estimate, *, odom_frame: str, base_frame: str) -> Any:
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
) -> Any:
    """``geometry_msgs/TransformStamped`` of ``child_frame`` in ``parent_frame`` (X_parent_child)."""
    return types.TransformStamped(
        header=header(types, stamp_ns, parent_frame),
        child_frame_id=child_frame,
        transform=types.Transform(translation=_vector3(types, translation), rotation=_quaternion(types, quat_xyzw)),
    )


def odom_transform_msg(types: MessageTypes, estimate: Estimate, *, odom_frame: str, base_frame: str) -> Any:
    """The TF ``odom_frame -> base_frame`` of an :class:`Estimate` (``TransformStamped``)."""
    return transform_stamped_msg(
        types, estimate.stamp_ns, odom_frame, base_frame, estimate.p_world_base, estimate.quat_world_base_xyzw
    )


def tf_message(types: MessageTypes, transforms: Sequence[Any]) -> Any:
    """``tf2_msgs/TFMessage`` holding ``transforms``.

    Raises:
        MessageError: ``types.TFMessage`` is None (tf2_msgs not installed).
    """
    if types.TFMessage is None:
        raise MessageError("tf2_msgs is not installed: cannot build tf2_msgs/msg/TFMessage")
    return types.TFMessage(transforms=list(transforms))


def wrench_stamped_msg(types: MessageTypes, stamp_ns: int, frame_id: str, wrench: Sequence[float] | FloatArray) -> Any:
    """``geometry_msgs/WrenchStamped`` from a (6,) [force N, torque N m] in ``frame_id``."""
    return types.WrenchStamped(
        header=header(types, stamp_ns, frame_id),
        wrench=types.Wrench(force=_vector3(types, wrench[:3]), torque=_vector3(types, wrench[3:6])),
    )


def foot_wrench_msg(types: MessageTypes, stamp_ns: int, foot: FootState) -> Any:
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


def contact_states_msg(types: MessageTypes, stamp_ns: int, feet: Sequence[FootState], *, hardware_id: str = "") -> Any:
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


def contact_states_from_msg(msg: Any) -> tuple[int, dict[str, bool]]:
    """Inverse of :func:`contact_states_msg`: ``(stamp_ns, {foot: in_contact})``."""
    states = {}
    for status in msg.status:
        values = {kv.key: kv.value for kv in status.values}
        states[str(status.name)] = values.get("contact", "0") == "1"
    return stamp_to_ns(msg.header.stamp), states


def contact_normal_forces_from_msg(msg: Any) -> dict[str, float]:
    """The ``normal_force`` values (N, world z) of a :func:`contact_states_msg`: ``{foot: force}`` for the
    statuses that carry a number (others left out)."""
    forces = {}
    for status in msg.status:
        for kv in status.values:
            if kv.key == "normal_force":
                try:
                    forces[str(status.name)] = float(kv.value)
                except ValueError:
                    pass
    return forces


def clock_msg(types: MessageTypes, stamp_ns: int) -> Any:
    """``rosgraph_msgs/Clock`` at ``stamp_ns``."""
    sec, nanosec = ns_to_sec_nanosec(stamp_ns)
    return types.Clock(clock=types.Time(sec=sec, nanosec=nanosec))
