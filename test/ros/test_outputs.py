"""The node's preallocated output messages equal the shared builders of ``io.messages``, also when refilled."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")

from robot_state_estimator.common.samples import Estimate, FootState
from robot_state_estimator.io import messages
from robot_state_estimator.ros.message_types import TYPES
from robot_state_estimator.ros.outputs import OutputMessages, pack_estimate

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


def _estimate(stamp_ns: int, seed: int) -> Estimate:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(6, 6))
    q = rng.normal(size=4)
    feet = tuple(
        FootState(f, bool(i % 2), rng.normal(size=3) * 50, rng.normal(size=6), bool(i % 3), float(i))
        for i, f in enumerate(FEET)
    )
    return Estimate(
        stamp_ns=stamp_ns,
        p_world_base=rng.normal(size=3),
        quat_world_base_xyzw=q / np.linalg.norm(q),
        v_base_in_base=rng.normal(size=3),
        omega_base_in_base=rng.normal(size=3),
        pose_covariance=a @ a.T,
        twist_covariance=np.asfortranarray(a.T @ a),  # any memory layout
        accel_bias=np.zeros(3),
        gyro_bias=np.zeros(3),
        feet=feet,
    )


@pytest.mark.parametrize("stamp_ns", [1_700_000_000_123_456_789, 999_999_999, 5])
def test_refilled_messages_equal_the_builders(stamp_ns: int) -> None:
    out = OutputMessages(TYPES, odom_frame="odom", base_frame="base", tf_child_frame="base_rse", hardware_id="go1")
    for seed in range(3):  # refilled: nothing of the previous estimate survives
        est = _estimate(stamp_ns + seed, seed)
        buf = pack_estimate(est)
        assert buf is not None
        assert out.fill_odometry(est.stamp_ns, buf) == messages.odometry_msg(
            TYPES, est, odom_frame="odom", base_frame="base"
        )
        assert out.fill_transform(est.stamp_ns, buf) == messages.odom_transform_msg(
            TYPES, est, odom_frame="odom", base_frame="base_rse"
        )
        for i, foot in enumerate(est.feet):
            assert out.fill_wrench(est.stamp_ns, foot.name, buf, i) == messages.foot_wrench_msg(
                TYPES, est.stamp_ns, foot
            )
        assert out.fill_contacts(est.stamp_ns, est.feet, buf) == messages.contact_states_msg(
            TYPES, est.stamp_ns, est.feet, hardware_id="go1"
        )
    imu_only = _estimate(stamp_ns, 7)
    imu_only = Estimate(**{**imu_only.__dict__, "feet": ()})
    assert out.fill_odometry(stamp_ns, pack_estimate(imu_only)) == messages.odometry_msg(
        TYPES, imu_only, odom_frame="odom", base_frame="base"
    )


def test_contact_layout_follows_the_feet() -> None:
    out = OutputMessages(TYPES, odom_frame="odom", base_frame="base", tf_child_frame="base")
    est = _estimate(10, 0)
    two = est.feet[:2]
    buf = pack_estimate(Estimate(**{**est.__dict__, "feet": two}))
    assert out.fill_contacts(10, two, buf) == messages.contact_states_msg(TYPES, 10, two)
    buf = pack_estimate(est)
    assert out.fill_contacts(10, est.feet, buf) == messages.contact_states_msg(TYPES, 10, est.feet)


@pytest.mark.parametrize("field", ["p_world_base", "pose_covariance", "feet"])
def test_a_non_finite_number_is_detected(field: str) -> None:
    est = _estimate(10, 0)
    if field == "feet":
        bad = FootState("FL_foot", True, np.array([0.0, np.inf, 0.0]), np.zeros(6))
        est = Estimate(**{**est.__dict__, "feet": (bad,)})
    else:
        value = np.array(getattr(est, field), dtype=float)
        value.flat[1] = np.nan
        est = Estimate(**{**est.__dict__, field: value})
    assert pack_estimate(est) is None


def _round_trip(msg: object) -> object:
    """``msg`` serialized and deserialized by rclpy: what a subscriber receives of a published message."""
    from rclpy.serialization import deserialize_message, serialize_message

    return deserialize_message(serialize_message(msg), type(msg))


@pytest.mark.parametrize("stamp_ns", [1_700_000_000_123_456_789, 999_999_999, 5])
@pytest.mark.parametrize(
    ("odom_frame", "base_frame", "tf_child", "hardware_id"),
    [("odom", "base", "base_rse", "go1"), ("o", "trunk", "b", ""), ("odom_é", "base_link", "bl", "solo12 v2")],
)
def test_published_outputs_arrive_as_the_builders(
    stamp_ns: int, odom_frame: str, base_frame: str, tf_child: str, hardware_id: str
) -> None:
    """The refilled messages (field checks off) convert and serialize in rclpy to the message the shared
    builders make: any frame names, contact states and force texts, any number of feet, over several
    estimates."""
    out = OutputMessages(
        TYPES, odom_frame=odom_frame, base_frame=base_frame, tf_child_frame=tf_child, hardware_id=hardware_id
    )
    for seed in range(4):
        est = _estimate(stamp_ns + seed, seed)
        if seed == 3:  # other contact states, forces of other text lengths, feet of other name lengths
            feet = tuple(
                FootState(n, i != 1, np.array([0.0, 0.0, 10.0**i]), f.wrench_in_foot, i == 2, f.nis)
                for i, (n, f) in enumerate(zip(("a", "bb_foot", "ccc", "dddd"), est.feet, strict=True))
            )
            est = Estimate(**{**est.__dict__, "feet": feet})
        buf = pack_estimate(est)
        assert buf is not None
        assert _round_trip(out.fill_odometry(est.stamp_ns, buf)) == messages.odometry_msg(
            TYPES, est, odom_frame=odom_frame, base_frame=base_frame
        )
        tf = _round_trip(out.fill_tf_message(est.stamp_ns, buf))
        assert tf == messages.tf_message(
            TYPES, [messages.odom_transform_msg(TYPES, est, odom_frame=odom_frame, base_frame=tf_child)]
        )
        for i, foot in enumerate(est.feet):
            wrench = _round_trip(out.fill_wrench(est.stamp_ns, foot.name, buf, i))
            assert wrench == messages.foot_wrench_msg(TYPES, est.stamp_ns, foot)
        contacts = _round_trip(out.fill_contacts(est.stamp_ns, est.feet, buf))
        assert contacts == messages.contact_states_msg(TYPES, est.stamp_ns, est.feet, hardware_id=hardware_id)
        for n in range(len(est.feet) + 1):  # any number of feet
            assert _round_trip(out.fill_contacts(5, est.feet[:n], buf)) == (
                messages.contact_states_msg(TYPES, 5, est.feet[:n], hardware_id=hardware_id)
            )


@pytest.mark.parametrize("stamp_ns", [1_700_000_000_123_456_789, 999_999_999, 5])
@pytest.mark.parametrize(
    ("odom_frame", "base_frame", "tf_child", "hardware_id"),
    [("odom", "base", "base_rse", "go1"), ("o", "trunk", "b", ""), ("odom_é", "base_link", "bl", "solo12 v2")],
)
def test_raw_outputs_are_the_builders_messages_serialized(
    stamp_ns: int, odom_frame: str, base_frame: str, tf_child: str, hardware_id: str
) -> None:
    """What the node publishes (preallocated CDR bytes, refilled) is byte for byte rosbags' serialization of the shared
    builders' messages (odometry, TF, wrenches, contact states, over several estimates and frame names), and rclpy
    reads it as the builders' rclpy message (rclpy's own serialization leaves its padding bytes unset: not compared
    byte for byte)."""
    from rclpy.serialization import deserialize_message

    from robot_state_estimator.io.bags import default_typestore
    from robot_state_estimator.io.cdr_encode import odometry_layout, tf_message_layout, wrench_stamped_layout
    from robot_state_estimator.ros.outputs import (
        FEET_OFFSET,
        FOOT_STRIDE,
        ODOMETRY_FROM_BUF,
        TRANSFORM_FROM_BUF,
        RawMessage,
        contact_states_bytes,
    )

    ts = default_typestore()
    rb = messages.rosbags_types(ts)

    def check(data: bytes | None, build: Any, typename: str) -> None:
        assert data is not None
        assert data == bytes(ts.serialize_cdr(build(rb), typename))
        expected = build(TYPES)
        assert deserialize_message(data, type(expected)) == expected

    odom = RawMessage(odometry_layout(odom_frame, base_frame), ODOMETRY_FROM_BUF)
    tf = RawMessage(tf_message_layout(odom_frame, tf_child), TRANSFORM_FROM_BUF)
    wrenches = {f: RawMessage(wrench_stamped_layout(f), np.arange(6)) for f in FEET}
    for seed in range(4):
        est = _estimate(stamp_ns + seed, seed)
        buf = pack_estimate(est)
        assert buf is not None
        stamp = est.stamp_ns
        check(
            odom.fill(stamp, buf),
            lambda t: messages.odometry_msg(t, est, odom_frame=odom_frame, base_frame=base_frame),  # noqa: B023
            "nav_msgs/msg/Odometry",
        )
        check(
            tf.fill(stamp, buf),
            lambda t: t.TFMessage(
                transforms=[messages.odom_transform_msg(t, est, odom_frame=odom_frame, base_frame=tf_child)]  # noqa: B023
            ),
            "tf2_msgs/msg/TFMessage",
        )
        for i, foot in enumerate(est.feet):
            check(
                wrenches[foot.name].fill(stamp, buf, FEET_OFFSET + FOOT_STRIDE * i),
                lambda t: messages.foot_wrench_msg(t, stamp, foot),  # noqa: B023
                "geometry_msgs/msg/WrenchStamped",
            )
        check(
            contact_states_bytes(stamp, est.feet, buf, hardware_id),
            lambda t: messages.contact_states_msg(t, stamp, est.feet, hardware_id=hardware_id),  # noqa: B023
            "diagnostic_msgs/msg/DiagnosticArray",
        )
    assert odom.fill(2**31 * 10**9, buf) is None  # beyond the int32 seconds: the node publishes the message object
