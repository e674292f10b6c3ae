"""Replay of a generated run: reproduces its ground truth, writes the node's outputs; the node's input rules."""

from __future__ import annotations

import argparse
import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pytest

from robot_state_estimator.common.samples import Estimate
from robot_state_estimator.evaluation import ground_truth
from robot_state_estimator.evaluation.trajectory import Trajectory
from robot_state_estimator.io import bags, messages
from robot_state_estimator.tools import evaluate, replay


def _run_replay_cli(argv: list[str]):
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    return replay.run_cli(parser.parse_args(argv))


@pytest.fixture(scope="module")
def replayed(sim_replayed):
    """``(out, result, metrics, run)`` of the session's replay of the simulated run (conftest ``sim_replayed``)."""
    out, result, res, _, run = sim_replayed
    return out, result, res, run


def test_replay_reproduces_the_ground_truth(replayed):
    _, result, res, _ = replayed
    assert res is not None, "the simulated bag's ground truth was not picked up"
    assert res["time_alignment"]["mode"] == "none"
    # bounds of the core's own tests on generated trots with SDF noise (issue 5), with a margin on position
    assert res["velocity"]["norm"]["rmse"] < 0.05
    assert res["ate_4dof"]["trans"]["rmse"] < 0.05
    assert res["ate_4dof"]["rot_deg"]["rmse"] < 1.0
    assert res["contacts"]["all"]["precision"] > 0.98
    assert res["contacts"]["all"]["recall"] > 0.98
    assert result.skipped == {}
    assert result.lost == {} and result.summary()["lost"] == {}  # a complete recording: no stamp gaps
    assert result.resets == 0


def test_replay_writes_the_node_outputs(replayed):
    out, result, _, run = replayed
    topics = bags.bag_topics(out / "odometry")
    assert topics["odometry"] == "nav_msgs/msg/Odometry"
    assert topics["/tf"] == "tf2_msgs/msg/TFMessage"
    assert topics["contact_states"] == "diagnostic_msgs/msg/DiagnosticArray"
    for foot in run.feet:
        assert topics[f"contact_wrench/{foot}"] == "geometry_msgs/msg/WrenchStamped"
    odom = [messages.odometry_arrays_from_msg(m.msg) for m in bags.read_messages(out / "odometry", ["odometry"])]
    assert len(odom) == len(result.log)
    assert [o["stamp_ns"] for o in odom] == result.log.stamp_ns
    np.testing.assert_array_equal(np.array([o["p_world_base"] for o in odom]), np.array(result.log.p))
    assert odom[0]["frame_id"] == "odom" and odom[0]["child_frame_id"] == run.base_link
    # stamps of the outputs are input stamps
    assert set(result.log.stamp_ns) <= set(run.stamps_ns.tolist())
    tum = ground_truth.load_tum(out / "est.tum").trajectory
    assert len(tum) == len(result.log.trajectory())
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["metrics"]["ate_4dof"]["trans"]["rmse"] == pytest.approx(replayed[2]["ate_4dof"]["trans"]["rmse"])
    for name in ("top_view", "height", "velocity", "biases", "contacts"):
        assert (out / "plots" / f"{name}.png").stat().st_size > 10_000


def test_evaluate_command_agrees_with_replay(replayed, sim_run):
    out, _, res, _ = replayed
    run_dir, _ = sim_run
    res2, gt, _ = evaluate.evaluate_files(out / "est.tum", run_dir / "bag")
    assert gt.stamped
    assert res2["ate_4dof"]["trans"]["rmse"] == pytest.approx(res["ate_4dof"]["trans"]["rmse"], rel=1e-3)
    res3, _, _ = evaluate.evaluate_files(out / "odometry", run_dir / "bag")
    assert res3["ate_4dof"]["trans"]["rmse"] == pytest.approx(res["ate_4dof"]["trans"]["rmse"], rel=1e-3)


# --------------------------------------------------------------------------------- the node's input rules
class _FakeEstimator:
    def __init__(self):
        self.calls: list[tuple[str, int]] = []
        self.resets: list[str] = []

    def _estimate(self, stamp):
        z = np.zeros(3)
        return Estimate(stamp, z, np.array([0, 0, 0, 1.0]), z, z, np.eye(6), np.eye(6), z, z)

    def add_imu(self, s):
        self.calls.append(("imu", s.stamp_ns))
        return self._estimate(s.stamp_ns)

    def add_joints(self, s):
        self.calls.append(("joints", s.stamp_ns))
        return None

    def add_foot_forces(self, s):
        self.calls.append(("feet", s.stamp_ns))

    def pop_events(self):
        return []

    def reset(self, reason):
        self.resets.append(reason)


def _driver(**params):
    desc = SimpleNamespace(
        joint_names=("a", "b"), imu=SimpleNamespace(frame_id="imu", link="imu_link", R_base_imu=np.eye(3))
    )
    settings = SimpleNamespace(out_of_order_tolerance_s=0.05, contact=SimpleNamespace(source="auto"))
    est = _FakeEstimator()
    published = []
    driver = replay.ReplayDriver(
        est, desc, settings, {"max_time_gap_s": 0.5, **params}, lambda e, o, c: published.append((e, o))
    )
    return driver, est, published


def _imu(stamp_ns, frame="imu"):
    from robot_state_estimator.common.samples import ImuSample

    return messages.imu_msg(bags.default_types(), ImuSample(stamp_ns, np.zeros(3), np.array([0, 0, 9.81]), None, frame))


def _joints(stamp_ns, names=("a", "b"), effort=None):
    from robot_state_estimator.common.samples import JointSample

    return messages.joint_state_msg(
        bags.default_types(), JointSample(stamp_ns, names, np.zeros(len(names)), None, effort)
    )


def test_driver_skips_bad_inputs_and_resets_like_the_node():
    d, est, published = _driver()
    d.imu(_imu(1_000_000_000))
    d.imu(_imu(1_001_000_000, frame="other"))  # not the IMU's frame
    d.imu(_imu(0))  # zero stamp
    d.joints(_joints(1_001_000_000, names=("a",)))  # missing joint
    d.joints(_joints(1_001_000_000, names=("a", "b", "c")))  # unknown joint
    d.joints(_joints(1_001_000_000))
    d.imu(_imu(1_002_000_000))
    d.imu(_imu(1_900_000_000))  # a gap of 0.898 s > 0.5 s: reset, then processed
    d.imu(_imu(1_800_000_000))  # 0.1 s backwards: passed on (the core resets), not counted as a gap
    d.imu(_imu(1_801_000_000))
    assert d.skipped == {
        "imu_frame_id": 1,
        "stamp_zero": 1,
        "joint_missing_names": 1,
        "joint_unknown_names": 1,
        "stamp_gap": 1,
    }
    assert len(est.resets) == 1
    assert est.calls == [
        ("imu", 1_000_000_000),
        ("joints", 1_001_000_000),
        ("imu", 1_002_000_000),
        ("imu", 1_900_000_000),
        ("imu", 1_800_000_000),
        ("imu", 1_801_000_000),
    ]
    # odometry once per stamp in increasing order: after the stamps went back, nothing until they pass 1.9 s
    # (the fake core reports no reset event)
    assert [(e.stamp_ns, odom) for e, odom in published] == [
        (1_000_000_000, True),
        (1_002_000_000, True),
        (1_900_000_000, True),
        (1_800_000_000, False),
        (1_801_000_000, False),
    ]


def test_node_parameter_names_match_the_node():
    from robot_state_estimator.io.node_params import NODE_PARAMS

    assert replay.NODE_PARAMETER_NAMES == tuple(NODE_PARAMS)
    for key, value in replay.NODE_DEFAULTS.items():
        default = NODE_PARAMS[key].default
        assert (list(default) if isinstance(default, tuple) else default) == value, key


def test_replay_errors_name_the_problem(sim_run, tmp_path):
    run_dir, _ = sim_run
    with pytest.raises(replay.ReplayError, match=r"lacks the input topics /nope \(--imu-topic\)"):
        replay.replay(
            run_dir / "bag",
            description=str(run_dir / "robot_description.urdf"),
            settings=replay.split_config(None)[0],
            options=replay.ReplayOptions(imu_topic="/nope"),
        )
    assert replay.run(argparse.Namespace(input=str(tmp_path / "missing"))) == 2


def test_samples_missing_from_a_recording_are_reported(sim_run, tmp_path, capsys):
    run_dir, _ = sim_run
    msgs = bags.read_messages_in_stamp_order(run_dir / "bag", ["/imu/data", "/joint_states"])
    imu_stamps = sorted({m.log_time_ns for m in msgs if m.topic == "/imu/data"})
    dropped = set(imu_stamps[500:503])  # three IMU samples missing from the recording
    with bags.BagWriter(tmp_path / "bag") as out:
        for m in msgs:
            if not (m.topic == "/imu/data" and m.log_time_ns in dropped):
                out.write(m.topic, m.msg, m.log_time_ns)
    result, _ = _run_replay_cli(
        [str(tmp_path / "bag"), "--description", str(run_dir / "robot_description.urdf"), "--no-ground-truth"]
    )
    assert result.lost == {"imu_lost": 3}
    assert "samples missing from the recording (stamp gaps) {'imu_lost': 3}" in capsys.readouterr().out


def test_an_unknown_bundled_robot_is_an_error_even_with_a_description_next_to_the_bag(sim_run, capsys):
    run_dir, _ = sim_run
    assert (run_dir / "robot_description.urdf").exists()  # would otherwise be used silently
    with pytest.raises(replay.ReplayError, match=r"unknown bundled robot 'go2'.*anymal_c, go1, solo12"):
        _run_replay_cli([str(run_dir / "bag"), "--robot", "go2", "--no-ground-truth"])
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    args = parser.parse_args([str(run_dir / "bag"), "--robot", "go2", "--description", "x.urdf", "--config", "y"])
    assert replay.run(args) == 2
    assert "known: anymal_c, go1, solo12" in capsys.readouterr().err


def test_set_overrides_settings_and_node_parameters():
    settings, params = replay.split_config(None)
    s2, p2 = replay.apply_overrides(settings, params, ["ekf.foot_gate_nis=20", "max_time_gap_s=2", "imu_frame_id=*"])
    assert s2.ekf.foot_gate_nis == 20.0 and settings.ekf.foot_gate_nis != 20.0
    assert p2 == {"max_time_gap_s": 2, "imu_frame_id": "*"}
    with pytest.raises(replay.ReplayError, match="NAME=VALUE"):
        replay.apply_overrides(settings, params, ["nonsense"])


def test_a_non_finite_estimate_is_not_published_and_resets():
    d, est, published = _driver()
    bad = est._estimate(5)
    est.add_imu = lambda s: dataclasses.replace(bad, stamp_ns=s.stamp_ns, v_base_in_base=np.array([0, np.nan, 0]))
    d.imu(_imu(1_000_000_000))
    assert published == []
    assert d.skipped == {"estimate_not_finite": 1}
    assert est.resets == ["the estimate is not finite"]


def test_output_rate_limits_like_the_node():
    d, _, published = _driver(odometry_rate_hz=100.0)
    for k in range(25):  # 1 kHz IMU for 25 ms
        d.imu(_imu(1_000_000_000 + k * 1_000_000))
    # first estimate of each 10 ms period of the stamps
    assert [e.stamp_ns for e, odom in published if odom] == [1_000_000_000, 1_010_000_000, 1_020_000_000]


def test_auto_time_alignment_is_the_standard_one() -> None:
    """Stamped ground truth is used as stamped; unstamped rows get an offset and a rate (the evaluation the Go1
    data set prescribes); the warp is never chosen for the user."""
    traj = Trajectory(np.array([0.0, 1.0]), np.zeros((2, 3)), np.tile([0.0, 0.0, 0.0, 1.0], (2, 1)))
    assert replay.auto_time_alignment(ground_truth.GroundTruth(traj, stamped=True)) == "none"
    assert replay.auto_time_alignment(ground_truth.GroundTruth(traj, stamped=False)) == "offset+rate"


def test_the_settings_line_names_the_settings_and_hints_at_the_robot(sim_run, tmp_path):
    run_dir, _ = sim_run  # simulate's layout: bag/, robot_description.urdf, run.yaml (robot: go1)
    desc = str(run_dir / "robot_description.urdf")
    line = replay.settings_source_line(run_dir / "bag", desc, None)
    assert "settings: the built-in defaults" in line
    assert f"{run_dir / 'run.yaml'} names go1: --robot go1 uses config/go1.yaml" in line
    cfg = replay.resolve_config(None, "go1")
    assert replay.settings_source_line(run_dir / "bag", desc, cfg) == f"description {desc}; settings {cfg}"
    # no run.yaml (not a simulated run): no hint
    (tmp_path / "bag").mkdir()
    assert replay.settings_source_line(tmp_path / "bag", desc, None).endswith("(no --robot or --config)")
    # --config none: the built-in defaults, said so, and no hint towards config/go1.yaml (as go1_nees)
    assert replay.resolve_config("none", "go1") is None and replay.resolve_config("None", None) is None
    asked = replay.settings_source_line(run_dir / "bag", desc, None, defaults_asked=True)
    assert asked == f"description {desc}; settings: the built-in defaults (--config none)"


def test_plot_title_is_the_inputs_stem_or_the_run_folder_of_a_bag_folder(tmp_path) -> None:
    (tmp_path / "walk.mcap").write_bytes(b"")
    (tmp_path / "go1_trot_real" / "bag").mkdir(parents=True)
    (tmp_path / "go1_trot_bag").mkdir()
    assert replay.plot_title(tmp_path / "walk.mcap") == "walk"
    assert replay.plot_title(tmp_path / "go1_trot_real" / "bag") == "go1_trot_real"  # not "bag"
    assert replay.plot_title(tmp_path / "go1_trot_bag") == "go1_trot_bag"


def test_input_topics_are_found_with_or_without_their_leading_slash(sim_run, replayed, tmp_path):
    """rosbag2 records fully qualified names (``/imu/data``): ``--imu-topic imu/data --joints-topic joint_states``
    read them, and the estimate is the default run's, sample for sample."""
    run_dir, _ = sim_run
    _, result, _, _ = replayed
    again, _ = _run_replay_cli(
        [str(run_dir / "bag"), "--robot", "go1", "--imu-topic", "imu/data", "--joints-topic", "joint_states"]
    )
    assert again.skipped == {} and len(again.log) == len(result.log)
    np.testing.assert_array_equal(again.log.trajectory().p_world_base, result.log.trajectory().p_world_base)
