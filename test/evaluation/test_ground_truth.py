"""Ground truth read from a bag's Odometry and contact-state topics (evaluation/ground_truth.py)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.evaluation import ground_truth as G
from robot_state_estimator.simulation.bag import TOPIC_CONTACTS, TOPIC_ODOM


def test_bag_ground_truth_is_the_simulated_truth(sim_run) -> None:
    run_dir, run = sim_run
    gt = G.load_ground_truth("bag", input_bag=run_dir / "bag", topic=TOPIC_ODOM, contacts_topic=TOPIC_CONTACTS)
    assert gt.stamped and gt.source.endswith(TOPIC_ODOM)
    # one pose per simulated stamp, in time order, equal to the run's state (double precision through CDR);
    # stamps as float64 seconds near 1.7e9 s resolve 2.4e-7 s
    np.testing.assert_allclose(gt.trajectory.t_s, run.stamps_ns * 1e-9, rtol=0, atol=5e-7)
    assert np.all(np.diff(gt.trajectory.t_s) > 0)
    np.testing.assert_allclose(gt.trajectory.p_world_base, run.q[:, :3], rtol=0, atol=1e-12)
    quat_world_base_xyzw = run.q[:, 3:7] / np.linalg.norm(run.q[:, 3:7], axis=1, keepdims=True)
    np.testing.assert_allclose(gt.trajectory.quat_world_base_xyzw, quat_world_base_xyzw, rtol=0, atol=1e-12)
    np.testing.assert_allclose(gt.trajectory.v_base_in_base, run.v[:, :3], rtol=0, atol=1e-12)
    # contact states at the joint stamps, per foot, as simulated
    contacts = gt.contacts
    assert contacts is not None and contacts.feet == tuple(run.feet)
    np.testing.assert_allclose(contacts.t_s, run.stamps_ns[run.joint_index] * 1e-9, rtol=0, atol=5e-7)
    np.testing.assert_array_equal(contacts.in_contact, run.contact[run.joint_index])


def test_bag_ground_truth_without_the_contacts_topic_has_no_contacts(sim_run) -> None:
    run_dir, _ = sim_run
    gt = G.load_ground_truth("bag", input_bag=run_dir / "bag", topic=TOPIC_ODOM, contacts_topic="/no/such/topic")
    assert gt.contacts is None and len(gt.trajectory.t_s) > 2


def test_a_missing_ground_truth_topic_names_the_topics_there(sim_run) -> None:
    run_dir, _ = sim_run
    with pytest.raises(G.GroundTruthError, match=r"no ground-truth topic /odom_gt.*'/imu/data'"):
        G.load_ground_truth("bag", input_bag=run_dir / "bag", topic="/odom_gt")


def test_a_topic_is_found_with_or_without_its_leading_slash(sim_run) -> None:
    """rosbag2 records fully qualified names (``/odometry``) where a tool may write or be given a relative one
    (``odometry``): the same topic in the root namespace, found either way (``io.bags.find_topic``)."""
    from robot_state_estimator.io.bags import find_topic

    assert TOPIC_ODOM.startswith("/")
    assert find_topic("odometry", {"/odometry": "t"}) == "/odometry"
    assert find_topic("/odometry", ["odometry", "/tf"]) == "odometry"
    assert find_topic("/odometry", {"/odometry": "t", "odometry": "t"}) == "/odometry"  # exact first
    assert find_topic("odom", ["/odometry"]) is None
    run_dir, _ = sim_run
    relative = G.load_ground_truth(
        "bag", input_bag=run_dir / "bag", topic=TOPIC_ODOM[1:], contacts_topic=TOPIC_CONTACTS[1:]
    )
    exact = G.load_ground_truth("bag", input_bag=run_dir / "bag", topic=TOPIC_ODOM, contacts_topic=TOPIC_CONTACTS)
    np.testing.assert_array_equal(relative.trajectory.p_world_base, exact.trajectory.p_world_base)
    assert relative.contacts is not None and exact.contacts is not None
    np.testing.assert_array_equal(relative.contacts.in_contact, exact.contacts.in_contact)


def test_a_path_that_is_no_bag_is_a_ground_truth_error(tmp_path) -> None:
    (tmp_path / "metadata.yaml").write_text("not: a rosbag2 metadata file\n")
    with pytest.raises(G.GroundTruthError):
        G.load_odometry_topic(tmp_path)


def test_tum_stamps_are_written_to_the_microsecond(tmp_path) -> None:
    from robot_state_estimator.evaluation.trajectory import Trajectory

    stamps_ns = np.array([1_700_000_000_100_000_000, 1_700_000_000_102_500_000])
    t_s = (stamps_ns // 1_000_000_000).astype(float) + (stamps_ns % 1_000_000_000).astype(float) / 1e9
    p = np.array([[1.0, 2.0, 0.3], [1.5, -2.25, 0.125]])
    q = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.6, 0.8]])
    G.write_tum(tmp_path / "t.tum", Trajectory(t_s, p, q), header="test")
    rows = [line.split() for line in (tmp_path / "t.tum").read_text().splitlines() if not line.startswith("#")]
    assert [r[0] for r in rows] == ["1700000000.100000", "1700000000.102500"]
    assert [float(v) for v in rows[1][1:]] == [1.5, -2.25, 0.125, 0.0, 0.0, 0.6, 0.8]
    back = G.load_tum(tmp_path / "t.tum")
    np.testing.assert_allclose(back.trajectory.t_s, t_s, rtol=0, atol=1e-6)
