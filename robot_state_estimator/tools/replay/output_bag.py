"""The output bag: the node's output messages for each estimate, written into an mcap bag (the node's topics and
layouts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from robot_state_estimator.common.output_layout import (
    POSE_COVARIANCE,
    TWIST_COVARIANCE,
)
from robot_state_estimator.common.samples import Estimate
from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.tools.replay.errors import ReplayError
from robot_state_estimator.tools.replay.options import DEFAULT_OUTPUT_COMPRESSION, OUTPUT_GROUPS


class OutputBag:
    """Writes the node's outputs for each estimate into an mcap bag (same topics and layouts as the node).

    Each output message is built once, by the builders of ``io.messages`` for the first estimate that needs it,
    and then refilled in place with the numbers of each later estimate (rosbags serializes it at once, in
    :meth:`write`); the contact states are built again when the feet change.

    Args:
        path: the bag directory to create (must not exist).
        odom_frame: odometry and TF parent frame.
        base_frame: odometry child frame.
        tf_child_frame: TF child frame ("" = ``base_frame``).
        groups: which of ``OUTPUT_GROUPS`` to write (default: all).
        compression: chunk compression, ``"zstd"`` or ``"none"`` (``io.bags.BagWriter``).

    Raises:
        ReplayError: an unknown group; ``io.bags.BagError``: the path exists or a bad compression.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        odom_frame: str,
        base_frame: str,
        tf_child_frame: str,
        groups: tuple[str, ...] | list[str] = OUTPUT_GROUPS,
        compression: str = DEFAULT_OUTPUT_COMPRESSION,
    ) -> None:
        from robot_state_estimator.io import bags, messages

        unknown = sorted(set(groups) - set(OUTPUT_GROUPS))
        if unknown:
            raise ReplayError(f"unknown output topics {unknown}; choose from {list(OUTPUT_GROUPS)}")
        self._m = messages
        self.types = bags.default_types()
        self.groups = tuple(g for g in OUTPUT_GROUPS if g in groups)
        self._odometry = "odometry" in self.groups
        self._tf = "tf" in self.groups and self.types.TFMessage is not None
        self._wrenches = "wrenches" in self.groups
        self._contacts = "contacts" in self.groups
        self.bag = bags.BagWriter(path, compression=compression)
        self.bag.open()
        self.odom_frame = odom_frame
        self.base_frame = base_frame
        self.tf_child = tf_child_frame or base_frame
        self._odom_msg: Any = None
        self._tf_msg: Any = None
        self._wrench_msgs: dict[str, tuple[str, Any]] = {}
        self._contacts_msg: Any = None
        self._contacts_names: tuple[str, ...] = ()

    def write(self, e: Estimate, odometry: bool = True, contacts: bool = True, forces: bool = True) -> None:
        """Write the messages the node publishes for ``e`` (odometry and /tf when ``odometry``; wrenches and
        contact states when ``contacts`` and it has feet, the wrenches only with ``forces``: the foot forces
        were estimated, ``EstimatorStream.forces_estimated``), those of the chosen groups, at ``e.stamp_ns``."""
        s = e.stamp_ns
        write = self.bag.write
        if odometry and (self._odometry or self._tf):
            if self._odometry:
                write("odometry", self._fill_odometry(e), s)
            if self._tf:
                write("/tf", self._fill_tf(e), s)
        if contacts and (self._wrenches or self._contacts):
            feet = e.feet
            if not feet:
                return
            if self._wrenches and forces:
                for foot in feet:
                    topic, msg = self._fill_wrench(s, foot)
                    write(topic, msg, s)
            if self._contacts:
                write("contact_states", self._fill_contacts(s, feet), s)

    # --------------------------------------------------------------------- messages refilled in place
    # Each refill sets every field the builder (io.messages) fills from the estimate, to the same values: floats
    # from the same arrays, the stamp split by divmod as in ns_to_sec_nanosec (test_replay checks each output
    # message against the builder's).

    def _fill_odometry(self, e: Estimate) -> Any:
        msg = self._odom_msg
        if msg is None:
            msg = self._odom_msg = self._m.odometry_msg(
                self.types, e, odom_frame=self.odom_frame, base_frame=self.base_frame
            )
            return msg
        v = e.output_vector()
        px, py, pz, qx, qy, qz, qw, vx, vy, vz, wx, wy, wz = v[:13].tolist()
        stamp = msg.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(e.stamp_ns), NS_PER_S)
        pose, twist = msg.pose, msg.twist
        position, orientation = pose.pose.position, pose.pose.orientation
        position.x, position.y, position.z = px, py, pz
        orientation.x, orientation.y, orientation.z, orientation.w = qx, qy, qz, qw
        linear, angular = twist.twist.linear, twist.twist.angular
        linear.x, linear.y, linear.z = vx, vy, vz
        angular.x, angular.y, angular.z = wx, wy, wz
        pose.covariance = np.ascontiguousarray(v[POSE_COVARIANCE], dtype=np.float64)
        twist.covariance = np.ascontiguousarray(v[TWIST_COVARIANCE], dtype=np.float64)
        return msg

    def _fill_tf(self, e: Estimate) -> Any:
        msg = self._tf_msg
        if msg is None:
            m, t = self._m, self.types
            tf = m.odom_transform_msg(t, e, odom_frame=self.odom_frame, base_frame=self.tf_child)
            msg = self._tf_msg = m.tf_message(t, [tf])
            return msg
        px, py, pz, qx, qy, qz, qw = e.output_vector()[:7].tolist()
        tf = msg.transforms[0]
        stamp = tf.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(e.stamp_ns), NS_PER_S)
        tr, ro = tf.transform.translation, tf.transform.rotation
        tr.x, tr.y, tr.z = px, py, pz
        ro.x, ro.y, ro.z, ro.w = qx, qy, qz, qw
        return msg

    def _fill_wrench(self, stamp_ns: int, foot: Any) -> tuple[str, Any]:
        entry = self._wrench_msgs.get(foot.name)
        if entry is None:
            entry = self._wrench_msgs[foot.name] = (
                f"contact_wrench/{foot.name}",
                self._m.foot_wrench_msg(self.types, stamp_ns, foot),
            )
            return entry
        msg = entry[1]
        fx, fy, fz, tx, ty, tz = np.asarray(foot.wrench_in_foot, dtype=np.float64)[:6].tolist()
        stamp = msg.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(stamp_ns), NS_PER_S)
        force, torque = msg.wrench.force, msg.wrench.torque
        force.x, force.y, force.z = fx, fy, fz
        torque.x, torque.y, torque.z = tx, ty, tz
        return entry

    def _fill_contacts(self, stamp_ns: int, feet: tuple[Any, ...]) -> Any:
        names = tuple(f.name for f in feet)
        if self._contacts_msg is None or names != self._contacts_names:
            self._contacts_msg = self._m.contact_states_msg(self.types, stamp_ns, feet)
            self._contacts_names = names
            return self._contacts_msg
        msg = self._contacts_msg
        stamp = msg.header.stamp
        stamp.sec, stamp.nanosec = divmod(int(stamp_ns), NS_PER_S)
        for foot, status in zip(feet, msg.status, strict=True):
            contact, normal_force, accepted = status.values
            in_contact = foot.in_contact
            status.message = "contact" if in_contact else "no_contact"
            contact.value = "1" if in_contact else "0"
            normal_force.value = f"{float(foot.force_in_world[2]):.3f}"
            accepted.value = "1" if foot.update_accepted else "0"
        return msg

    def close(self) -> None:
        """Finish the bag."""
        self.bag.close()
