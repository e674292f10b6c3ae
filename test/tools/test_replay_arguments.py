"""Replay's option checks that need no input run before the replay; hints name the option to change; a folder
that is no bag says so (the numba compile notice: test/estimation/test_jit_cache.py)."""

from __future__ import annotations

import argparse

import pytest

from robot_state_estimator.io import bags
from robot_state_estimator.tools import cli, replay


def _args(argv):
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    return parser.parse_args(argv)


def _no_replay(*_a, **_k):
    raise AssertionError("replay ran before the options were checked")


def test_output_topics_without_output_is_refused_before_the_replay(sim_run, monkeypatch):
    run_dir, _ = sim_run
    monkeypatch.setattr(replay.cli, "replay", _no_replay)  # what run_cli calls
    with pytest.raises(replay.ReplayError, match="--output-topics chooses what the --output bag gets: pass --output"):
        replay.run_cli(_args([str(run_dir / "bag"), "--robot", "go1", "--output-topics", "odometry"]))


@pytest.mark.parametrize(
    ("span", "match"),
    [(["5", "3"], r"T1 \(3.0\) must be after T0 \(5.0\)"), (["1", "inf"], "must be finite"), (["2", "2"], "after")],
)
def test_a_bad_time_span_is_refused_before_the_replay(sim_run, monkeypatch, span, match):
    run_dir, _ = sim_run
    monkeypatch.setattr(replay.cli, "replay", _no_replay)  # what run_cli calls
    with pytest.raises(replay.ReplayError, match=match):
        replay.run_cli(_args([str(run_dir / "bag"), "--robot", "go1", "--time-span", *span]))


def test_a_missing_input_topic_names_its_option(sim_run):
    run_dir, _ = sim_run
    settings = replay.split_config(None)[0]
    desc = str(run_dir / "robot_description.urdf")
    with pytest.raises(replay.ReplayError, match=r"lacks the input topics /js \(--joints-topic\); it has"):
        replay.replay(
            run_dir / "bag", description=desc, settings=settings, options=replay.ReplayOptions(joints_topic="/js")
        )
    with pytest.raises(replay.ReplayError, match=r"topics /i \(--imu-topic\), /j \(--joints-topic\);"):
        replay.replay(
            run_dir / "bag",
            description=desc,
            settings=settings,
            options=replay.ReplayOptions(imu_topic="/i", joints_topic="/j"),
        )


def test_a_folder_without_metadata_is_not_a_bag(tmp_path, capsys):
    empty = tmp_path / "emptydir"
    empty.mkdir()
    with pytest.raises(
        bags.BagError, match=r"emptydir is a folder without metadata.yaml, not a rosbag2 bag \(an empty"
    ):
        bags.BagReader(empty).__enter__()
    (empty / "run.mcap").write_bytes(b"")
    with pytest.raises(bags.BagError, match=r"it holds run\.mcap: pass that file"):
        bags.bag_topics(empty)
    assert cli.main(["replay", str(tmp_path / "emptydir"), "--robot", "go1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a folder without metadata.yaml" in err[0]


def test_an_output_frame_that_is_another_frame_of_the_robot_is_refused(sim_run) -> None:
    """As the node: base_frame / tf_child_frame may not name a frame of the description other than the base (a
    foot moves relative to it); a name the description does not have renames the base."""
    run_dir, _ = sim_run
    settings = replay.split_config(None)[0]
    desc = str(run_dir / "robot_description.urdf")
    options = replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, "tf_child_frame": "FL_foot"})
    with pytest.raises(
        replay.ReplayError, match=r"^tf_child_frame 'FL_foot': link 'FL_foot' is not the base link 'base': it moves"
    ):
        replay.replay(run_dir / "bag", description=desc, settings=settings, options=options)
