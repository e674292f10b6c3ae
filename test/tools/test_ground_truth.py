"""Ground truth read from a bag's Odometry and contact-state topics (tools/ground_truth.py)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.simulation.bag import TOPIC_CONTACTS, TOPIC_ODOM
from robot_state_estimator.tools import ground_truth as G


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


def test_a_path_that_is_no_bag_is_a_ground_truth_error(tmp_path) -> None:
    (tmp_path / "metadata.yaml").write_text("not: a rosbag2 metadata file\n")
    with pytest.raises(G.GroundTruthError):
        G.load_odometry_topic(tmp_path)
