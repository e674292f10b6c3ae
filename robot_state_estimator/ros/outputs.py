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

The node publishes these messages with ``Publisher.publish`` (rclpy converts them to their C structs and
the middleware serializes them). The TF goes out as the preallocated ``tf2_msgs/TFMessage`` holding the one
transform (:meth:`OutputMessages.fill_tf_message`) where the node publishes ``/tf`` itself
(``tf_publisher.TfPublisher``); tf2_ros's broadcaster takes the ``TransformStamped``.

``pack_estimate`` (``io/stream.py``, re-exported here) gathers the numbers of an estimate into one float64
buffer, which checks finiteness with a single numpy call and gives the values as Python floats; the stream
returns it with every estimate it lets through.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from robot_state_estimator.common.samples import FootState
from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.io.cdr_encode import (
    DiagnosticArrayEncoder,
    FixedLayout,
    odometry_layout,
    tf_message_layout,
    wrench_stamped_layout,
)
from robot_state_estimator.io.messages import ODOMETRY_FROM_OUTPUT, TRANSFORM_FROM_OUTPUT, MessageTypes
from robot_state_estimator.io.stream import (
    FEET_OFFSET,
    FOOT_STRIDE,
    POSE_COV_OFFSET,
    TWIST_COV_OFFSET,
    V_OFFSET,
    pack_estimate,
)
from robot_state_estimator.ros.qos import output_qos
from robot_state_estimator.ros.rclpy_compat import raw_publish
from robot_state_estimator.ros.tf_publisher import TfPublisher

#: Offsets in the buffer of :func:`pack_estimate` (its layout is defined in ``io/stream.py``).
_PC, _TC, _FEET, _FOOT_STRIDE = POSE_COV_OFFSET, TWIST_COV_OFFSET, FEET_OFFSET, FOOT_STRIDE
_V = V_OFFSET


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
        #: the TF as published on ``/tf`` by ``TfPublisher`` (None without tf2_msgs): holds ``transform``
        self.tf_message = None if t.TFMessage is None else _new(t.TFMessage, transforms=[self.transform])
        self._wrenches: dict[str, Any] = {}
        self._contacts_key: tuple[str, ...] = ()
        self._contacts_stamp = _new(t.Time)
        self.contacts = _new(t.DiagnosticArray, header=_new(t.Header, stamp=self._contacts_stamp, frame_id=""))
        self._contact_values: list[tuple[Any, Any, Any, Any]] = []

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

    def fill_tf_message(self, stamp_ns: int, buf: np.ndarray) -> Any:
        """The ``tf2_msgs/TFMessage`` holding :meth:`fill_transform`'s transform (``TfPublisher.publish``).

        Raises:
            TypeError: tf2_msgs is not installed (``tf_message`` is None).
        """
        if self.tf_message is None:
            raise TypeError("tf2_msgs is not installed: no tf2_msgs/msg/TFMessage to fill")
        self.fill_transform(stamp_ns, buf)
        return self.tf_message

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


#: Indices into a :func:`pack_estimate` buffer of the 85 floats of ``nav_msgs/Odometry`` in its field order and of the
#: TF's 7: the buffer starts with the output vector's first numbers, so ``io.messages``' indices into that vector.
ODOMETRY_FROM_BUF = ODOMETRY_FROM_OUTPUT
TRANSFORM_FROM_BUF = TRANSFORM_FROM_OUTPUT
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_SEC_NSEC = struct.Struct("<iI")
#: s, how often the subscription counts of the outputs published only while subscribed are read again
#: (``get_subscription_count``: 1-2 us each, 6 per joint estimate of a 4-legged robot)
COUNT_REFRESH_S = 0.05


class RawMessage:
    """One output message as CDR bytes, preallocated (``io.cdr_encode.FixedLayout``'s template) and refilled in
    place: the stamp, then the floats taken from a :func:`pack_estimate` buffer.

    Args:
        layout: the message's layout (its frames are fixed).
        index: (n_floats,) indices into the buffer of the message's floats, in its field order.
    """

    def __init__(self, layout: FixedLayout, index: np.ndarray) -> None:
        self._bytes = bytearray(layout.template)
        self._stamp_offset = layout.stamp_offset
        self._values = np.frombuffer(self._bytes, dtype="<f8", count=layout.n_floats, offset=layout.float_offset)
        self._index = np.asarray(index, dtype=np.intp)

    def fill(self, stamp_ns: int, buf: np.ndarray, start: int = 0) -> bytes | None:
        """The message at ``stamp_ns`` with its floats ``buf[start + index]``; None when the stamp's seconds do not
        fit the int32 of ``builtin_interfaces/Time`` (the caller publishes a message object instead)."""
        sec, nanosec = divmod(stamp_ns, NS_PER_S)
        if not _INT32_MIN <= sec <= _INT32_MAX:
            return None
        _SEC_NSEC.pack_into(self._bytes, self._stamp_offset, sec, nanosec)
        buf.take(self._index + start if start else self._index, out=self._values)
        return bytes(self._bytes)


class OutputPublishers:
    """The node's output publishers, publishing preallocated CDR bytes (:class:`RawMessage`,
    ``io.cdr_encode``: equal to what rclpy serializes from the message objects of :class:`OutputMessages`, which
    stay for a stamp beyond the int32 seconds and for tf2_ros's broadcaster when its publisher is not reachable).

    The odometry is always published. The TF, the wrenches and the contact states are encoded and published only
    while a subscription is matched (their counts read every ``COUNT_REFRESH_S``): their QoS is volatile, so a
    sample written while no reader is matched reaches no one, now or later; a subscriber that matches receives
    everything published from then on (from the next count at the latest). At 1 kHz that saves the encoding and
    the write of each unsubscribed output.

    Args:
        node: the node that owns the publishers.
        types: rclpy message classes (``message_types.TYPES``).

    Attributes:
        odometry: the ``odometry`` publisher (nav_msgs/Odometry).
        contacts: the ``contact_states`` publisher (diagnostic_msgs/DiagnosticArray).
        wrenches: foot -> its ``contact_wrench/<foot>`` publisher (geometry_msgs/WrenchStamped).
        tf: the TF broadcaster (``tf_publisher.make_transform_broadcaster``), None when there is none.
        publish_tf: whether the TF is published (the ``publish_tf`` parameter).
        messages: the preallocated messages of the current description (None before one is loaded).
    """

    def __init__(self, node: Any, types: MessageTypes) -> None:
        self._node = node
        self._types = types
        self.odometry = node.create_publisher(types.Odometry, "odometry", output_qos())
        self.contacts = node.create_publisher(types.DiagnosticArray, "contact_states", output_qos())
        self.wrenches: dict[str, Any] = {}
        self.tf: Any = None
        self.publish_tf = False
        self.messages: OutputMessages | None = None
        self._odom_publish = self.odometry.publish
        self._contacts_publish = self.contacts.publish
        # the CDR bytes published through the publishers' handles (rclpy_compat.raw_publish: no wrapper per call)
        self._odom_publish_raw = raw_publish(self.odometry)
        self._contacts_publish_raw = raw_publish(self.contacts)
        self._wrench_publish_raw: dict[str, Callable[[bytes], None]] = {}
        self.contacts_count = self.contacts.get_subscription_count
        self._raw_odometry: RawMessage | None = None
        self._raw_tf: RawMessage | None = None
        self._raw_wrenches: dict[str, RawMessage] = {}
        self._contacts_encoder = DiagnosticArrayEncoder()
        self._frames = ("", "", "", "")  # odom_frame, base_frame, tf_child_frame, hardware_id
        # which optional outputs are subscribed, read every COUNT_REFRESH_S (steady clock)
        self._counts_due_ns = 0
        self._tf_subscribed = False
        self._contacts_subscribed = False
        self._wrench_subscribed: dict[str, bool] = {}
        self._any_subscribed = True  # any of the wrenches or the contact states

    def set_frames(self, *, odom_frame: str, base_frame: str, tf_child_frame: str, hardware_id: str) -> None:
        """New preallocated messages with these frames (a description was loaded)."""
        self.messages = OutputMessages(
            self._types,
            odom_frame=odom_frame,
            base_frame=base_frame,
            tf_child_frame=tf_child_frame,
            hardware_id=hardware_id,
        )
        self._frames = (odom_frame, base_frame, tf_child_frame, hardware_id)
        self._raw_odometry = RawMessage(odometry_layout(odom_frame, base_frame), ODOMETRY_FROM_BUF)
        self._raw_tf = RawMessage(tf_message_layout(odom_frame, tf_child_frame), TRANSFORM_FROM_BUF)
        self._raw_wrenches = {}
        self._counts_due_ns = 0

    def wrench_publisher(self, foot: str) -> Any:
        """The ``contact_wrench/<foot>`` publisher, created at the first call."""
        pub = self.wrenches.get(foot)
        if pub is None:
            pub = self.wrenches[foot] = self._node.create_publisher(
                self._types.WrenchStamped, f"contact_wrench/{foot}", output_qos()
            )
            self._counts_due_ns = 0
        return pub

    def _tf_publisher(self) -> Any:
        """The rclpy publisher of ``/tf`` (``TfPublisher`` / tf2_ros broadcaster), None when it cannot be reached."""
        tf = self.tf
        return getattr(tf, "publisher", None) or getattr(tf, "pub_tf", None)

    def tf_count(self) -> int:
        """Subscriptions matched by the ``/tf`` publisher (1 when the broadcaster does not tell)."""
        pub = self._tf_publisher()
        return pub.get_subscription_count() if pub is not None else 1

    def refresh_counts(self) -> None:
        """Read the subscription counts of the TF, the wrenches and the contact states now."""
        self._counts_due_ns = time.monotonic_ns() + int(COUNT_REFRESH_S * 1e9)
        self._tf_subscribed = self.tf is not None and self.tf_count() > 0
        self._contacts_subscribed = self.contacts_count() > 0
        self._wrench_subscribed = {foot: pub.get_subscription_count() > 0 for foot, pub in self.wrenches.items()}
        # nothing to do for the contacts of an estimate while none of them is subscribed (the node makes the
        # publishers of the description's feet when it loads it: a subscriber finds them)
        self._any_subscribed = self._contacts_subscribed or any(self._wrench_subscribed.values())

    def contacts_subscribed(self) -> bool:
        """Whether a wrench or the contact states is subscribed (the counts read again when due): without, an
        estimate's contacts need no per-foot state."""
        if time.monotonic_ns() >= self._counts_due_ns:
            self.refresh_counts()
        return self._any_subscribed

    def publish_odometry(self, stamp_ns: int, buf: np.ndarray) -> None:
        """Publish the odometry at ``stamp_ns`` from a :func:`pack_estimate` buffer, and the TF when it is on and
        subscribed.

        Raises:
            AssertionError: no description loaded yet (:meth:`set_frames` not called).
        """
        raw, msgs = self._raw_odometry, self.messages
        assert raw is not None and msgs is not None  # the node feeds nothing before a description is loaded
        if time.monotonic_ns() >= self._counts_due_ns:
            self.refresh_counts()
        data = raw.fill(stamp_ns, buf)
        if data is None:
            self._odom_publish(msgs.fill_odometry(stamp_ns, buf))
        else:
            self._odom_publish_raw(data)
        if self._tf_subscribed and self.publish_tf:
            self._publish_tf(stamp_ns, buf)

    def _publish_tf(self, stamp_ns: int, buf: np.ndarray) -> None:
        tf, pub, raw, msgs = self.tf, self._tf_publisher(), self._raw_tf, self.messages
        assert raw is not None and msgs is not None
        data = raw.fill(stamp_ns, buf) if pub is not None else None
        if data is not None:
            pub.publish(data)
        elif type(tf) is TfPublisher:
            tf.publish(msgs.fill_tf_message(stamp_ns, buf))
        else:  # tf2_ros's TransformBroadcaster takes messages
            tf.sendTransform(msgs.fill_transform(stamp_ns, buf))

    def publish_contacts(
        self, stamp_ns: int, feet: Sequence[FootState], buf: np.ndarray, *, forces_estimated: bool
    ) -> None:
        """Publish the wrenches (each while subscribed; none without estimated forces: zeros would read as a
        measured force) and the contact states (while subscribed) of an estimate with ``feet``.

        Raises:
            AssertionError: no description loaded yet (:meth:`set_frames` not called).
        """
        msgs = self.messages
        assert msgs is not None
        if not self.contacts_subscribed():  # (the counts also read here: the odometry may be decimated further)
            return
        subscribed = self._wrench_subscribed
        for i, foot in enumerate(feet if forces_estimated else ()):
            name = foot.name
            pub = self.wrenches.get(name) or self.wrench_publisher(name)
            if subscribed.get(name):
                raw = self._raw_wrenches.get(name)
                if raw is None:
                    raw = self._raw_wrenches[name] = RawMessage(wrench_stamped_layout(name), _WRENCH_FROM_BUF)
                data = raw.fill(stamp_ns, buf, FEET_OFFSET + FOOT_STRIDE * i)
                if data is None:
                    pub.publish(msgs.fill_wrench(stamp_ns, name, buf, i))
                else:
                    publish_raw = self._wrench_publish_raw.get(name)
                    if publish_raw is None:
                        publish_raw = self._wrench_publish_raw[name] = raw_publish(pub)
                    publish_raw(data)
        if self._contacts_subscribed:
            data = contact_states_bytes(stamp_ns, feet, buf, self._frames[3], self._contacts_encoder)
            if data is None:
                self._contacts_publish(msgs.fill_contacts(stamp_ns, feet, buf))
            else:
                self._contacts_publish_raw(data)


def contact_states_bytes(
    stamp_ns: int,
    feet: Sequence[FootState],
    buf: np.ndarray,
    hardware_id: str = "",
    encoder: DiagnosticArrayEncoder | None = None,
) -> bytes | None:
    """The contact states of an estimate with ``feet`` as CDR (``io.cdr_encode.DiagnosticArrayEncoder``: keep one per
    stream, ``encoder``; the layout of :meth:`OutputMessages.fill_contacts` and ``io.messages.contact_states_msg``),
    None for a stamp beyond the int32 seconds."""
    statuses = [
        (
            0,  # DiagnosticStatus.OK
            foot.name,
            "contact" if foot.in_contact else "no_contact",
            hardware_id,
            (
                ("contact", "1" if foot.in_contact else "0"),
                ("normal_force", f"{buf[FEET_OFFSET + FOOT_STRIDE * i + 8]:.3f}"),
                ("update_accepted", "1" if foot.update_accepted else "0"),
            ),
        )
        for i, foot in enumerate(feet)
    ]
    try:
        return (encoder or DiagnosticArrayEncoder()).encode(stamp_ns, "", statuses)
    except ValueError:
        return None


#: The wrench of a foot in a :func:`pack_estimate` buffer, from the foot's start: force (3), torque (3).
_WRENCH_FROM_BUF = np.arange(6)


__all__ = [
    "COUNT_REFRESH_S",
    "OutputMessages",
    "OutputPublishers",
    "RawMessage",
    "contact_states_bytes",
    "pack_estimate",
]
