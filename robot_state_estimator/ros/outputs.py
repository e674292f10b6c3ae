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

from collections.abc import Sequence
from typing import Any

import numpy as np

from robot_state_estimator.common.samples import FootState
from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.io.messages import MessageTypes
from robot_state_estimator.io.stream import (
    FEET_OFFSET,
    FOOT_STRIDE,
    POSE_COV_OFFSET,
    TWIST_COV_OFFSET,
    V_OFFSET,
    pack_estimate,
)
from robot_state_estimator.ros.qos import output_qos
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


class OutputPublishers:
    """The node's output publishers with their preallocated messages (:class:`OutputMessages`).

    The odometry is always published. The TF, the wrenches and the contact states are filled and published only
    while a subscription is matched (``get_subscription_count``, about 1 us): their QoS is volatile, so a sample
    written while no reader is matched reaches no one, now or later; a subscriber that matches receives everything
    published from then on. At 1 kHz that saves the conversion and the write of each unsubscribed output.

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
        self.contacts_count = self.contacts.get_subscription_count

    def set_frames(self, *, odom_frame: str, base_frame: str, tf_child_frame: str, hardware_id: str) -> None:
        """New preallocated messages with these frames (a description was loaded)."""
        self.messages = OutputMessages(
            self._types,
            odom_frame=odom_frame,
            base_frame=base_frame,
            tf_child_frame=tf_child_frame,
            hardware_id=hardware_id,
        )

    def wrench_publisher(self, foot: str) -> Any:
        """The ``contact_wrench/<foot>`` publisher, created at the first call."""
        pub = self.wrenches.get(foot)
        if pub is None:
            pub = self.wrenches[foot] = self._node.create_publisher(
                self._types.WrenchStamped, f"contact_wrench/{foot}", output_qos()
            )
        return pub

    def tf_count(self) -> int:
        """Subscriptions matched by the ``/tf`` publisher (1 when the broadcaster does not tell)."""
        tf = self.tf
        pub = getattr(tf, "publisher", None) or getattr(tf, "pub_tf", None)  # TfPublisher / tf2_ros broadcaster
        return pub.get_subscription_count() if pub is not None else 1

    def publish_odometry(self, stamp_ns: int, buf: np.ndarray) -> None:
        """Publish the odometry at ``stamp_ns`` from a :func:`pack_estimate` buffer, and the TF when it is on and
        subscribed.

        Raises:
            AssertionError: no description loaded yet (:meth:`set_frames` not called).
        """
        msgs = self.messages
        assert msgs is not None  # the node feeds nothing before a description is loaded
        self._odom_publish(msgs.fill_odometry(stamp_ns, buf))
        tf = self.tf
        if tf is not None and self.publish_tf and self.tf_count():
            if type(tf) is TfPublisher:
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
        for i, foot in enumerate(feet if forces_estimated else ()):
            name = foot.name
            pub = self.wrenches.get(name) or self.wrench_publisher(name)
            if pub.get_subscription_count():
                pub.publish(msgs.fill_wrench(stamp_ns, name, buf, i))
        if self.contacts_count():
            self._contacts_publish(msgs.fill_contacts(stamp_ns, feet, buf))


__all__ = ["OutputMessages", "OutputPublishers", "pack_estimate"]
