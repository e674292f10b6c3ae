"""The node's output messages, preallocated once and refilled for every estimate (the hot path).

Building a nested rclpy message from scratch costs tens of microseconds (one Python ``__init__`` per
sub-message, keyword parsing, default values); at 1 kHz that is most of the node's time. ``OutputMessages``
builds each output message once (``odometry``, the TF ``TransformStamped``, one ``WrenchStamped`` per foot
and the ``contact_states`` ``DiagnosticArray``) with ``check_fields=False`` (no per-setter type asserts, which
``ROS_PYTHON_CHECK_FIELDS=1`` would otherwise turn on) and only overwrites the changing fields. That is safe
because ``Publisher.publish`` converts the message to its C struct before returning: a message may be
refilled as soon as it has been published.

Field types are what the C conversion requires (the asserts that would check them are off): Python floats
for ``float64`` fields (from ``ndarray.tolist()``), Python ints for the stamp, ``str``, ``bytes`` of length 1
for the diagnostic level, and 1-D float64 ndarrays for the fixed-size covariances. The layouts are those of
the builders of :mod:`robot_state_estimator.io.messages` (the node's tests compare both).

The node publishes the serialized form instead (``*_cdr`` methods): ``Publisher.publish`` of a Python message
converts it into its C struct (a Python attribute read per field, per nested message) and serializes it,
20-90 us per message here; handing rclpy the CDR bytes skips both (3-10 us). The bytes are built from
templates made once per frame names (the constant strings, their padding, the place of the numbers), the
stamp packed in and the numbers copied from the ``pack_estimate`` buffer in one go; the contact states (whose
strings vary) from pieces cached per foot and state. Plain little-endian CDR (XCDR1, encapsulation ``00 01``),
the format of ROS 2 middlewares; the tests check that rclpy deserializes each to the message the builders of
:mod:`robot_state_estimator.io.messages` make.

``pack_estimate`` (``io/stream.py``, re-exported here) gathers the numbers of an estimate into one float64
buffer, which checks finiteness with a single numpy call and gives the values as Python floats; the stream
returns it with every estimate it lets through.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.estimation.types import FootState
from robot_state_estimator.io.messages import MessageTypes
from robot_state_estimator.io.stream import (
    FEET_OFFSET,
    FOOT_STRIDE,
    POSE_COV_OFFSET,
    TWIST_COV_OFFSET,
    V_OFFSET,
    pack_estimate,
)

#: Offsets in the buffer of :func:`pack_estimate` (its layout is defined in ``io/stream.py``).
_PC, _TC, _FEET, _FOOT_STRIDE = POSE_COV_OFFSET, TWIST_COV_OFFSET, FEET_OFFSET, FOOT_STRIDE
_V = V_OFFSET


#: CDR encapsulation header: plain CDR, little endian.
_ENCAP = b"\x00\x01\x00\x00"
_STAMP = struct.Struct("<iI")
_U32 = struct.Struct("<I")
#: Indices of the odometry's 85 float64 (pose, pose covariance, twist, twist covariance) in the buffer.
_ODOM_INDEX = np.r_[0:_V, _PC:_TC, _V:_PC, _TC:_FEET]


class _Cdr:
    """Builds the body of a CDR message (alignment relative to its start, as after the encapsulation).

    Args:
        offset: the body offset the bytes built here will start at (only its alignment matters).
    """

    def __init__(self, offset: int = 0) -> None:
        self._skip = offset % 8
        self.buf = bytearray(self._skip)

    def align(self, n: int) -> _Cdr:
        self.buf += bytes(-len(self.buf) % n)
        return self

    def u32(self, value: int) -> _Cdr:
        self.align(4)
        self.buf += _U32.pack(value)
        return self

    def string(self, text: str) -> _Cdr:
        data = text.encode()
        self.u32(len(data) + 1)
        self.buf += data + b"\x00"
        return self

    def octet(self, value: bytes) -> _Cdr:
        self.buf += value
        return self

    def bytes(self) -> bytes:
        """The bytes built (without the alignment offset given at construction)."""
        return bytes(self.buf[self._skip :])


def _stamp_bytes(stamp_ns: int) -> bytes:
    return _STAMP.pack(*divmod(stamp_ns, NS_PER_S))


def _new(cls: Any, **fields: Any) -> Any:
    """``cls(**fields)`` with the Python field checks off where the message class supports it."""
    try:
        return cls(check_fields=False, **fields)
    except (AssertionError, TypeError):  # older rosidl without check_fields
        return cls(**fields)


class OutputMessages:
    """Preallocated output messages of the node, refilled in place.

    Args:
        types: rclpy message classes (``message_types.TYPES``).
        odom_frame: ``header.frame_id`` of the odometry and TF parent.
        base_frame: ``child_frame_id`` of the odometry.
        tf_child_frame: child frame of the TF.
        hardware_id: ``hardware_id`` of the contact statuses.
    """

    def __init__(
        self, types: MessageTypes, *, odom_frame: str, base_frame: str, tf_child_frame: str, hardware_id: str = ""
    ) -> None:
        t = types
        self._types = types
        self.hardware_id = hardware_id
        self._odom_stamp = _new(t.Time)
        self.odometry = _new(
            t.Odometry,
            header=_new(t.Header, stamp=self._odom_stamp, frame_id=odom_frame),
            child_frame_id=base_frame,
            pose=_new(
                t.PoseWithCovariance,
                pose=_new(t.Pose, position=_new(t.Point), orientation=_new(t.Quaternion)),
            ),
            twist=_new(t.TwistWithCovariance, twist=_new(t.Twist, linear=_new(t.Vector3), angular=_new(t.Vector3))),
        )
        odom = self.odometry
        self._position = odom.pose.pose.position
        self._orientation = odom.pose.pose.orientation
        self._linear = odom.twist.twist.linear
        self._angular = odom.twist.twist.angular
        self._pose_cov = odom.pose.covariance  # float64[36] ndarrays, refilled in place
        self._twist_cov = odom.twist.covariance
        self._tf_stamp = _new(t.Time)
        self.transform = _new(
            t.TransformStamped,
            header=_new(t.Header, stamp=self._tf_stamp, frame_id=odom_frame),
            child_frame_id=tf_child_frame,
            transform=_new(t.Transform, translation=_new(t.Vector3), rotation=_new(t.Quaternion)),
        )
        self._translation = self.transform.transform.translation
        self._rotation = self.transform.transform.rotation
        self._wrenches: dict[str, Any] = {}
        self._contacts_key: tuple[str, ...] = ()
        self._contacts_stamp = _new(t.Time)
        self.contacts = _new(t.DiagnosticArray, header=_new(t.Header, stamp=self._contacts_stamp, frame_id=""))
        self._contact_values: list[tuple[Any, Any, Any, Any]] = []
        # serialized forms: the bytes after the stamp up to the numbers (header.frame_id, child_frame_id, padding)
        self._odom_cdr = _Cdr(8).string(odom_frame).string(base_frame).align(8).bytes()
        self._tf_head = _ENCAP + _U32.pack(1)
        self._tf_cdr = _Cdr(12).string(odom_frame).string(tf_child_frame).align(8).bytes()
        self._wrench_cdr: dict[str, bytes] = {}
        self._contact_pieces: dict[tuple[Any, ...], bytes] = {}

    # ----------------------------------------------------------------------------------- odometry + TF

    def fill_odometry(self, stamp_ns: int, buf: np.ndarray) -> Any:
        """The odometry message at ``stamp_ns`` from a :func:`pack_estimate` buffer."""
        stamp = self._odom_stamp
        stamp.sec, stamp.nanosec = divmod(stamp_ns, NS_PER_S)
        px, py, pz, qx, qy, qz, qw, vx, vy, vz, wx, wy, wz = buf[:_PC].tolist()
        p, o, v, w = self._position, self._orientation, self._linear, self._angular
        p.x, p.y, p.z = px, py, pz
        o.x, o.y, o.z, o.w = qx, qy, qz, qw
        v.x, v.y, v.z = vx, vy, vz
        w.x, w.y, w.z = wx, wy, wz
        self._pose_cov[:] = buf[_PC:_TC]
        self._twist_cov[:] = buf[_TC:_FEET]
        return self.odometry

    def fill_transform(self, stamp_ns: int, buf: np.ndarray) -> Any:
        """The TF ``odom_frame -> tf_child_frame`` at ``stamp_ns`` from a :func:`pack_estimate` buffer."""
        stamp = self._tf_stamp
        stamp.sec, stamp.nanosec = divmod(stamp_ns, NS_PER_S)
        px, py, pz, qx, qy, qz, qw = buf[:_V].tolist()
        tr, ro = self._translation, self._rotation
        tr.x, tr.y, tr.z = px, py, pz
        ro.x, ro.y, ro.z, ro.w = qx, qy, qz, qw
        return self.transform

    def odometry_cdr(self, stamp_ns: int, buf: np.ndarray) -> bytes:
        """The serialized ``nav_msgs/Odometry`` of :meth:`fill_odometry` (CDR bytes, for ``publish``)."""
        return b"".join((_ENCAP, _stamp_bytes(stamp_ns), self._odom_cdr, buf[_ODOM_INDEX].astype("<f8").tobytes()))

    def tf_cdr(self, stamp_ns: int, buf: np.ndarray) -> bytes:
        """The serialized ``tf2_msgs/TFMessage`` holding the transform of :meth:`fill_transform`."""
        values = buf[:_V].astype("<f8").tobytes()
        return b"".join((self._tf_head, _stamp_bytes(stamp_ns), self._tf_cdr, values))

    # ------------------------------------------------------------------------------ wrenches + contacts

    def _wrench_msg(self, foot: str) -> Any:
        msg = self._wrenches.get(foot)
        if msg is None:
            t = self._types
            msg = self._wrenches[foot] = _new(
                t.WrenchStamped,
                header=_new(t.Header, stamp=_new(t.Time), frame_id=foot),
                wrench=_new(t.Wrench, force=_new(t.Vector3), torque=_new(t.Vector3)),
            )
        return msg

    def fill_wrench(self, stamp_ns: int, foot: str, buf: np.ndarray, index: int) -> Any:
        """The ``WrenchStamped`` of foot number ``index`` (named ``foot``) of a :func:`pack_estimate` buffer."""
        msg = self._wrench_msg(foot)
        stamp = msg.header.stamp
        stamp.sec, stamp.nanosec = divmod(stamp_ns, NS_PER_S)
        start = _FEET + _FOOT_STRIDE * index
        fx, fy, fz, tx, ty, tz = buf[start : start + 6].tolist()
        f, tq = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z = fx, fy, fz
        tq.x, tq.y, tq.z = tx, ty, tz
        return msg

    def wrench_cdr(self, stamp_ns: int, foot: str, buf: np.ndarray, index: int) -> bytes:
        """The serialized ``WrenchStamped`` of :meth:`fill_wrench`."""
        tail = self._wrench_cdr.get(foot)
        if tail is None:
            tail = self._wrench_cdr[foot] = _Cdr(8).string(foot).align(8).bytes()
        start = _FEET + _FOOT_STRIDE * index
        values = buf[start : start + 6].astype("<f8").tobytes()
        return b"".join((_ENCAP, _stamp_bytes(stamp_ns), tail, values))

    def contacts_cdr(self, stamp_ns: int, feet: Sequence[FootState], buf: np.ndarray) -> bytes:
        """The serialized ``contact_states`` array of :meth:`fill_contacts`.

        A foot's status is three pieces: from its level to the key of ``normal_force`` (depends on the foot,
        the contact state and the alignment it starts at), the force text, then ``update_accepted``
        (depends on the acceptance and its alignment); the fixed pieces are built once and cached.
        """
        pieces = self._contact_pieces
        hw = self.hardware_id
        parts = [_ENCAP, _stamp_bytes(stamp_ns)]
        head = pieces.get(("head", len(feet)))
        if head is None:
            head = pieces[("head", len(feet))] = _Cdr(8).string("").u32(len(feet)).bytes()
        parts.append(head)
        pos = 8 + len(head)  # body offset
        for i, foot in enumerate(feet):
            in_contact = bool(foot.in_contact)
            key = (foot.name, hw, in_contact, pos % 4)
            first = pieces.get(key)
            if first is None:
                first = pieces[key] = (
                    _Cdr(pos)
                    .octet(self._types.DiagnosticStatus.OK)
                    .string(foot.name)
                    .string("contact" if in_contact else "no_contact")
                    .string(hw)
                    .u32(3)
                    .string("contact")
                    .string("1" if in_contact else "0")
                    .string("normal_force")
                    .bytes()
                )
            force = f"{buf[_FEET + _FOOT_STRIDE * i + 8]:.3f}".encode()
            pad = -(pos + len(first)) % 4
            force_part = b"\x00" * pad + _U32.pack(len(force) + 1) + force + b"\x00"
            pos += len(first) + len(force_part)
            accepted = bool(foot.update_accepted)
            key = ("accepted", accepted, pos % 4)
            last = pieces.get(key)
            if last is None:
                last = pieces[key] = _Cdr(pos).string("update_accepted").string("1" if accepted else "0").bytes()
            pos += len(last)
            parts += (first, force_part, last)
        return b"".join(parts)

    def _layout_contacts(self, names: tuple[str, ...]) -> None:
        t = self._types
        statuses, values = [], []
        for name in names:
            kvs = [_new(t.KeyValue, key=k, value="") for k in ("contact", "normal_force", "update_accepted")]
            status = _new(
                t.DiagnosticStatus,
                level=t.DiagnosticStatus.OK,
                name=name,
                message="",
                hardware_id=self.hardware_id,
                values=kvs,
            )
            statuses.append(status)
            values.append((status, kvs[0], kvs[1], kvs[2]))
        self.contacts.status = statuses
        self._contact_values = values
        self._contacts_key = names

    def fill_contacts(self, stamp_ns: int, feet: Sequence[FootState], buf: np.ndarray) -> Any:
        """The ``contact_states`` array (layout of :func:`io.messages.contact_states_msg`)."""
        names = tuple(f.name for f in feet)
        if names != self._contacts_key:
            self._layout_contacts(names)
        stamp = self._contacts_stamp
        stamp.sec, stamp.nanosec = divmod(stamp_ns, NS_PER_S)
        for i, (foot, (status, contact, normal_force, accepted)) in enumerate(
            zip(feet, self._contact_values, strict=True)
        ):
            in_contact = bool(foot.in_contact)
            status.message = "contact" if in_contact else "no_contact"
            status.hardware_id = self.hardware_id
            contact.value = "1" if in_contact else "0"
            normal_force.value = f"{buf[_FEET + _FOOT_STRIDE * i + 8]:.3f}"
            accepted.value = "1" if foot.update_accepted else "0"
        return self.contacts


__all__ = ["OutputMessages", "pack_estimate"]
