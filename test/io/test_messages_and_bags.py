"""Message conversions and bag I/O: values survive a write/read round trip through a real mcap bag, and bad
messages are refused with a reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_state_estimator.common.samples import Estimate, FootState, ImuSample, JointSample
from robot_state_estimator.io import messages as M
from robot_state_estimator.io.bags import BagError, BagWriter, default_types, read_messages_in_stamp_order


def _estimate(stamp_ns: int) -> Estimate:
    pose_cov = np.diag([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    pose_cov[0, 1] = pose_cov[1, 0] = 0.5
    return Estimate(
        stamp_ns=stamp_ns,
        p_world_base=np.array([1.0, -2.0, 0.3]),
        quat_world_base_xyzw=np.array([0.0, 0.0, np.sin(0.25), np.cos(0.25)]),
        v_base_in_base=np.array([0.5, 0.0, -0.1]),
        omega_base_in_base=np.array([0.0, 0.1, 0.2]),
        pose_covariance=pose_cov,
        twist_covariance=np.eye(6) * 0.01,
        accel_bias=np.zeros(3),
        gyro_bias=np.zeros(3),
        feet=(FootState("FL_foot", True, np.array([1.0, 2.0, 80.0]), np.arange(6.0), True, 0.7),),
    )


def test_round_trip_through_an_mcap_bag(tmp_path: Path) -> None:
    T = default_types()
    imu = ImuSample(2_000_000_001, np.array([0.1, 0.2, 0.3]), np.array([0.0, 0.0, 9.81]), None, "imu_link")
    joints = JointSample(2_000_000_000, ("b", "a"), np.array([1.0, 2.0]), None, np.array([3.0, 4.0]))
    est = _estimate(2_000_000_002)
    with BagWriter(tmp_path / "bag") as bag:
        bag.write("/imu/data", M.imu_msg(T, imu), imu.stamp_ns)
        bag.write("/joint_states", M.joint_state_msg(T, joints), joints.stamp_ns)
        bag.write("/odometry", M.odometry_msg(T, est, odom_frame="odom", base_frame="base"), est.stamp_ns)
        bag.write("/contacts", M.contact_states_msg(T, est.stamp_ns, est.feet), est.stamp_ns)
    msgs = read_messages_in_stamp_order(tmp_path / "bag", ["/imu/data", "/joint_states", "/odometry", "/contacts"])
    assert [m.topic for m in msgs] == ["/joint_states", "/imu/data", "/odometry", "/contacts"]
    j = M.joint_sample_from_msg(msgs[0].msg)
    assert j.names == ("b", "a") and j.velocity is None and np.array_equal(j.effort, [3.0, 4.0])
    i = M.imu_sample_from_msg(msgs[1].msg)
    assert i.stamp_ns == 2_000_000_001 and i.orientation_xyzw is None and i.frame_id == "imu_link"
    assert msgs[1].msg.orientation_covariance[0] == -1.0  # REP-145: orientation not reported
    o = M.odometry_arrays_from_msg(msgs[2].msg)
    assert (o["frame_id"], o["child_frame_id"]) == ("odom", "base")
    np.testing.assert_array_equal(o["pose_covariance"], est.pose_covariance)
    np.testing.assert_array_equal(o["quat_world_base_xyzw"], est.quat_world_base_xyzw)
    assert M.contact_states_from_msg(msgs[3].msg) == (est.stamp_ns, {"FL_foot": True})


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("position", [1.0], "2 names but 1 positions"),
        ("velocity", [1.0, 2.0, 3.0], "3 velocity"),
        ("effort", [np.nan, 1.0], "not finite for joints ['a']"),
        ("name", ["a", "a"], "duplicate joint names"),
    ],
)
def test_bad_joint_states_are_refused_with_the_reason(field: str, value: list, reason: str) -> None:
    T = default_types()
    msg = M.joint_state_msg(T, JointSample(0, ("a", "b"), np.array([1.0, 2.0]), None, np.array([0.0, 1.0])))
    setattr(msg, field, value if field == "name" else np.asarray(value, dtype=float))
    with pytest.raises(M.MessageError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        M.joint_sample_from_msg(msg)


def test_nan_imu_is_refused() -> None:
    T = default_types()
    msg = M.imu_msg(T, ImuSample(0, np.array([np.nan, 0.0, 0.0]), np.zeros(3)))
    with pytest.raises(M.MessageError, match="angular_velocity is not finite"):
        M.imu_sample_from_msg(msg)


def test_writer_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "bag").mkdir()
    with pytest.raises(BagError, match="already exists"):
        BagWriter(tmp_path / "bag")
