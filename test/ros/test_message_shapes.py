"""The message shapes of ``io/message_shapes.py`` fit both message implementations, rclpy's generated classes and
rosbags' dataclasses.

Statically: mypy checks this file (``make typecheck``: pyproject's ``[tool.mypy] files``). ``KILTED`` puts the
classes of rosbags' Kilted store into :class:`MessageTypes`, whose fields are typed by the shapes, so a field
missing from a class or of another type is a type error; rclpy's classes are put there by
``ros.message_types.rclpy_types`` (mypy reads the generated packages: ``follow_untyped_imports``; their fields are
untyped properties, so it checks the names). At run time: each builder's message, built from each namespace, has
every field of its shape with a value of the field's type, recursively (what the static check cannot see of
rclpy's untyped fields: ``array.array`` arrays, a byte level).
"""

from __future__ import annotations

import types as pytypes
import typing
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from rosbags.typesys.stores import ros2_kilted as kilted

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    FootForceSample,
    FootState,
    ImuSample,
    JointSample,
)
from robot_state_estimator.io import message_builders as B
from robot_state_estimator.io import message_shapes as S
from robot_state_estimator.io.bags import default_types
from robot_state_estimator.io.message_types import MessageTypes
from robot_state_estimator.ros.message_types import rclpy_types

#: rosbags' Kilted classes as the builders' namespace: the static check of the shapes against rosbags.
KILTED = MessageTypes(
    Time=kilted.builtin_interfaces__msg__Time,
    Header=kilted.std_msgs__msg__Header,
    Point=kilted.geometry_msgs__msg__Point,
    Quaternion=kilted.geometry_msgs__msg__Quaternion,
    Vector3=kilted.geometry_msgs__msg__Vector3,
    Pose=kilted.geometry_msgs__msg__Pose,
    Twist=kilted.geometry_msgs__msg__Twist,
    PoseWithCovariance=kilted.geometry_msgs__msg__PoseWithCovariance,
    TwistWithCovariance=kilted.geometry_msgs__msg__TwistWithCovariance,
    Transform=kilted.geometry_msgs__msg__Transform,
    TransformStamped=kilted.geometry_msgs__msg__TransformStamped,
    Wrench=kilted.geometry_msgs__msg__Wrench,
    WrenchStamped=kilted.geometry_msgs__msg__WrenchStamped,
    Imu=kilted.sensor_msgs__msg__Imu,
    JointState=kilted.sensor_msgs__msg__JointState,
    Odometry=kilted.nav_msgs__msg__Odometry,
    Clock=kilted.rosgraph_msgs__msg__Clock,
    TFMessage=kilted.tf2_msgs__msg__TFMessage,
    KeyValue=kilted.diagnostic_msgs__msg__KeyValue,
    DiagnosticStatus=kilted.diagnostic_msgs__msg__DiagnosticStatus,
    DiagnosticArray=kilted.diagnostic_msgs__msg__DiagnosticArray,
)

NAMESPACES: dict[str, Callable[[], MessageTypes]] = {
    "rosbags (Kilted classes)": lambda: KILTED,
    "rosbags (io.bags.default_types)": default_types,
    "rclpy": rclpy_types,
}


def _estimate() -> Estimate:
    return Estimate(
        stamp_ns=1_700_000_000_123_456_789,
        p_world_base=np.array([1.0, -2.0, 0.3]),
        quat_world_base_xyzw=np.array([0.0, 0.0, np.sin(0.25), np.cos(0.25)]),
        v_base_in_base=np.array([0.5, 0.0, -0.1]),
        omega_base_in_base=np.array([0.0, 0.1, 0.2]),
        pose_covariance=np.eye(6),
        twist_covariance=np.eye(6) * 0.01,
        accel_bias=np.zeros(3),
        gyro_bias=np.zeros(3),
        feet=(FootState("FL_foot", True, np.array([1.0, 2.0, 80.0]), np.arange(6.0), True, 0.7),),
    )


def _messages(t: MessageTypes) -> list[tuple[str, object, type]]:
    """(what, message, its shape) for every builder."""
    stamp = 1_700_000_000_000_000_001
    est = _estimate()
    imu = ImuSample(stamp, np.array([0.1, 0.2, 0.3]), np.array([0.0, 0.0, 9.81]), np.array([0, 0, 0, 1.0]), "imu")
    joints = JointSample(stamp, ("a", "b"), np.array([1.0, 2.0]), None, np.array([3.0, 4.0]))
    transform = B.odom_transform_msg(t, est, odom_frame="odom", base_frame="base")
    return [
        ("header", B.header(t, stamp, "odom"), S.HeaderMsg),
        ("imu_msg", B.imu_msg(t, imu), S.ImuMsg),
        ("joint_state_msg", B.joint_state_msg(t, joints), S.JointStateMsg),
        ("foot_force_msg", B.foot_force_msg(t, FootForceSample(stamp, ("FL_foot",), np.array([9.0]))), S.JointStateMsg),
        (
            "contact_schedule_msg",
            B.contact_schedule_msg(t, ContactScheduleSample(stamp, ("FL_foot",), (True,))),
            S.JointStateMsg,
        ),
        ("odometry_msg", B.odometry_msg(t, est, odom_frame="odom", base_frame="base"), S.OdometryMsg),
        ("odom_transform_msg", transform, S.TransformStampedMsg),
        ("tf_message", B.tf_message(t, [transform]), S.TFMessageMsg),
        ("wrench_stamped_msg", B.wrench_stamped_msg(t, stamp, "FL_foot", np.arange(6.0)), S.WrenchStampedMsg),
        ("contact_states_msg", B.contact_states_msg(t, stamp, est.feet), S.DiagnosticArrayMsg),
        ("clock_msg", B.clock_msg(t, stamp), S.ClockMsg),
    ]


def _fields(shape: type) -> dict[str, object]:
    """The fields of a shape (its properties) -> their types."""
    return {
        name: typing.get_type_hints(member.fget)["return"]
        for name, member in vars(shape).items()
        if isinstance(member, property) and member.fget is not None
    }


def _problems(value: object, kind: object, where: str) -> list[str]:
    """Where ``value`` does not fit ``kind`` (a shape, a builtin type, a union, ``Sequence[...]``, an array)."""
    if isinstance(kind, type) and getattr(kind, "_is_protocol", False):
        out = []
        for name, field_kind in _fields(kind).items():
            if not hasattr(value, name):
                out.append(f"{where}.{name}: missing")
            else:
                out += _problems(getattr(value, name), field_kind, f"{where}.{name}")
        return out
    origin = typing.get_origin(kind)
    if origin in (typing.Union, pytypes.UnionType):
        branches = [_problems(value, branch, where) for branch in typing.get_args(kind)]
        return [] if any(not b for b in branches) else [f"{where}: {type(value).__name__} is not {kind}"]
    if origin is np.ndarray:
        ok = isinstance(value, np.ndarray) and value.dtype == np.float64
        return [] if ok else [f"{where}: not a float64 array"]
    if origin is Sequence:
        if not isinstance(value, Sequence) or isinstance(value, str | bytes):
            return [f"{where}: {type(value).__name__} is not a sequence"]
        (item,) = typing.get_args(kind)
        return [p for i, x in enumerate(value) for p in _problems(x, item, f"{where}[{i}]")]
    assert isinstance(kind, type), kind
    return [] if isinstance(value, kind) else [f"{where}: {type(value).__name__} is not {kind.__name__}"]


@pytest.mark.parametrize("namespace", list(NAMESPACES))
def test_every_built_message_fits_its_shape(namespace: str) -> None:
    types = NAMESPACES[namespace]()
    problems = [p for what, msg, shape in _messages(types) for p in _problems(msg, shape, what)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("namespace", list(NAMESPACES))
def test_the_diagnostic_level_ok_is_the_types_own(namespace: str) -> None:
    # DiagnosticStatusClass: the level constant in the field's own type (rclpy: a byte, rosbags: an int)
    types = NAMESPACES[namespace]()
    ok = types.DiagnosticStatus.OK
    assert ok in (0, b"\x00")
    status = B.contact_states_msg(types, 1, _estimate().feet).status[0]
    assert status.level == ok


def test_a_message_missing_a_field_is_found() -> None:
    # the run-time check itself: a stand-in without ``header.frame_id`` and with an int stamp
    class Stamp:
        sec, nanosec = 1, 2.5

    class Header:
        stamp = Stamp()

    problems = _problems(Header(), S.HeaderMsg, "header")
    assert problems == ["header.stamp.nanosec: float is not int", "header.frame_id: missing"]
