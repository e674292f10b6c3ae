"""rosbags message objects built from bulk-decoded arrays (``io/cdr.py``), for the bag-reading path.

:func:`decode_messages` turns the raw CDR messages of one topic into the same rosbags message dataclasses
``Typestore.deserialize_cdr`` makes, field for field (float64 bit patterns, stamps and strings equal; tested in
``test/io/test_bulk.py``), at a fraction of its cost: the numbers come from one numpy pass per topic
(:func:`io.cdr.decode`), and only the dataclasses are made per message. What reads the messages (``io/stream``,
``io/messages``) therefore sees nothing different. Types other than :data:`io.cdr.BULK_TYPES`, and data that does
not decode, raise :class:`io.cdr.CdrError`: the caller deserializes those with rosbags
(:func:`decode_or_deserialize`).

Differences that do not show in the values: float64 arrays (covariances, JointState sequences) are views into one
array per topic instead of read-only views of each message's bytes, and equal name lists are equal lists, not the
same list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from robot_state_estimator.io import cdr


def _headers(types: Any, h: cdr.Headers) -> list[Any]:
    Time, Header = types["builtin_interfaces/msg/Time"], types["std_msgs/msg/Header"]
    return [
        Header(stamp=Time(sec=s, nanosec=ns), frame_id=f)
        for s, ns, f in zip(h.sec.tolist(), h.nanosec.tolist(), h.frame_id, strict=True)
    ]


def _vectors(types: Any, values: Any) -> list[Any]:
    Vector3 = types["geometry_msgs/msg/Vector3"]
    return [Vector3(x=x, y=y, z=z) for x, y, z in values.tolist()]


def _quaternions(types: Any, values: Any) -> list[Any]:
    Quaternion = types["geometry_msgs/msg/Quaternion"]
    return [Quaternion(x=x, y=y, z=z, w=w) for x, y, z, w in values.tolist()]


def _imu(types: Any, a: cdr.ImuArrays) -> list[Any]:
    Imu = types[cdr.IMU]
    return [
        Imu(
            header=h,
            orientation=q,
            orientation_covariance=oc,
            angular_velocity=w,
            angular_velocity_covariance=wc,
            linear_acceleration=f,
            linear_acceleration_covariance=fc,
        )
        for h, q, oc, w, wc, f, fc in zip(
            _headers(types, a.header),
            _quaternions(types, a.orientation_xyzw),
            a.orientation_covariance,
            _vectors(types, a.angular_velocity),
            a.angular_velocity_covariance,
            _vectors(types, a.linear_acceleration),
            a.linear_acceleration_covariance,
            strict=True,
        )
    ]


def _joint_state(types: Any, a: cdr.JointStateArrays) -> list[Any]:
    JointState = types[cdr.JOINT_STATE]
    rows = [
        [field.values[start:stop] for start, stop in zip(field.offsets[:-1].tolist(), field.offsets[1:].tolist())]
        for field in (a.position, a.velocity, a.effort)
    ]
    return [
        JointState(header=h, name=list(names), position=p, velocity=v, effort=e)
        for h, names, p, v, e in zip(_headers(types, a.header), a.name, *rows, strict=True)
    ]


def _wrench(types: Any, a: cdr.WrenchArrays) -> list[Any]:
    WrenchStamped, Wrench = types[cdr.WRENCH_STAMPED], types["geometry_msgs/msg/Wrench"]
    return [
        WrenchStamped(header=h, wrench=Wrench(force=f, torque=t))
        for h, f, t in zip(_headers(types, a.header), _vectors(types, a.force), _vectors(types, a.torque), strict=True)
    ]


def _odometry(types: Any, a: cdr.OdometryArrays) -> list[Any]:
    Odometry, Point, Pose = types[cdr.ODOMETRY], types["geometry_msgs/msg/Point"], types["geometry_msgs/msg/Pose"]
    PoseCov, Twist = types["geometry_msgs/msg/PoseWithCovariance"], types["geometry_msgs/msg/Twist"]
    TwistCov = types["geometry_msgs/msg/TwistWithCovariance"]
    points = [Point(x=x, y=y, z=z) for x, y, z in a.position.tolist()]
    return [
        Odometry(
            header=h,
            child_frame_id=child,
            pose=PoseCov(pose=Pose(position=p, orientation=q), covariance=pc),
            twist=TwistCov(twist=Twist(linear=v, angular=w), covariance=tc),
        )
        for h, child, p, q, pc, v, w, tc in zip(
            _headers(types, a.header),
            a.child_frame_id,
            points,
            _quaternions(types, a.orientation_xyzw),
            a.pose_covariance,
            _vectors(types, a.linear),
            _vectors(types, a.angular),
            a.twist_covariance,
            strict=True,
        )
    ]


def _clock(types: Any, a: cdr.ClockArrays) -> list[Any]:
    Clock, Time = types[cdr.CLOCK], types["builtin_interfaces/msg/Time"]
    return [Clock(clock=Time(sec=s, nanosec=ns)) for s, ns in zip(a.sec.tolist(), a.nanosec.tolist(), strict=True)]


_BUILDERS: dict[str, Callable[[Any, Any], list[Any]]] = {
    cdr.IMU: _imu,
    cdr.JOINT_STATE: _joint_state,
    cdr.WRENCH_STAMPED: _wrench,
    cdr.ODOMETRY: _odometry,
    cdr.CLOCK: _clock,
}


def messages_from_arrays(typestore: Any, msgtype: str, arrays: cdr.BulkArrays) -> list[Any]:
    """The rosbags messages of already decoded arrays (``cdr.decode(msgtype, raws)``), as :func:`decode_messages`.

    Raises:
        io.cdr.CdrError: ``msgtype`` is not a bulk type.
    """
    builder = _BUILDERS.get(msgtype)
    if builder is None:
        raise cdr.CdrError(f"{msgtype} is not decoded in bulk (types: {', '.join(sorted(cdr.BULK_TYPES))})")
    return builder(typestore.types, arrays)


def decode_messages(typestore: Any, msgtype: str, raws: Sequence[bytes | bytearray | memoryview]) -> list[Any]:
    """The rosbags messages of ``raws`` (one topic's raw CDR messages of type ``msgtype``), decoded in bulk.

    Args:
        typestore: the rosbags ``Typestore`` whose message classes to build (``io.bags.default_typestore()``).
        msgtype: ROS 2 type name, one of :data:`io.cdr.BULK_TYPES`.
        raws: N serialized messages (4-byte encapsulation header included).

    Returns:
        N messages equal to ``typestore.deserialize_cdr(raw, msgtype)`` of each.

    Raises:
        io.cdr.CdrError: another type, or data that does not decode (the message says which and why).
    """
    builder = _BUILDERS.get(msgtype)
    if builder is None:
        raise cdr.CdrError(f"{msgtype} is not decoded in bulk (types: {', '.join(sorted(cdr.BULK_TYPES))})")
    return builder(typestore.types, cdr.decode(msgtype, raws))


def decode_or_deserialize(
    typestore: Any, msgtype: str, raws: Sequence[bytes | bytearray | memoryview]
) -> tuple[list[Any], str]:
    """:func:`decode_messages` for the bulk types, rosbags' ``deserialize_cdr`` for the others and for data the
    bulk decoder refuses.

    Returns:
        (the N messages, "" or why the bulk decoder refused a bulk-type batch: the :class:`io.cdr.CdrError` text,
        for the caller to report once per topic).

    Raises:
        rosbags' ``SerdeError`` (or the error of its generated code): data rosbags cannot deserialize either.
    """
    if msgtype in cdr.BULK_TYPES:
        try:
            return decode_messages(typestore, msgtype, raws), ""
        except cdr.CdrError as exc:
            refused = str(exc)
    else:
        refused = ""
    deserialize = typestore.deserialize_cdr
    return [deserialize(raw, msgtype) for raw in raws], refused
