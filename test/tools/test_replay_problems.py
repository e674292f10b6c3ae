"""Replay never finishes quietly on a run that lost an input: every skip cause and warning event is printed with
its count and first message, a stream mostly skipped gets a WARNING, no joint sample at all is an error; node
parameters of --set and --config are checked against the node's ranges (one line, exit code 2 from the CLI)."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from robot_state_estimator.common.samples import FootForceSample, JointSample
from robot_state_estimator.io import bags, messages
from robot_state_estimator.tools import cli, replay

GO1_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


def _run_replay_cli(argv: list[str]):
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    return replay.run_cli(parser.parse_args(argv))


#: a foot-sensor reading of a loaded foot: above config/go1.yaml's contact.sensor_on_threshold (60 counts), so
#: the filter, which waits for a loaded foot before it initialises (ekf.init_wait_for_loaded_feet), starts
FOOT_SENSOR_LOADED = 100.0


def _rewrite(run_dir, out_dir, *, drop_joint=None, every=1, feet=None):
    """Copy the simulated bag; drop ``drop_joint`` from every ``every``-th joint message (k % every == 0);
    with ``feet``, add a foot-force message (those names, ``FOOT_SENSOR_LOADED`` each) per joint message. Returns
    the number of joint messages and of changed joint messages."""
    types = bags.default_types()
    msgs = bags.read_messages_in_stamp_order(run_dir / "bag", ["/imu/data", "/joint_states"])
    n_joint = n_changed = 0
    with bags.BagWriter(out_dir) as out:
        for m in msgs:
            msg = m.msg
            if m.topic == "/joint_states":
                s = messages.joint_sample_from_msg(msg)
                if drop_joint is not None and n_joint % every == 0:
                    keep = [i for i, n in enumerate(s.names) if n != drop_joint]
                    s = JointSample(
                        s.stamp_ns,
                        tuple(s.names[i] for i in keep),
                        s.position[keep],
                        None if s.velocity is None else s.velocity[keep],
                        None if s.effort is None else s.effort[keep],
                    )
                    msg = messages.joint_state_msg(types, s)
                    n_changed += 1
                n_joint += 1
                if feet is not None:
                    ff = FootForceSample(s.stamp_ns, feet, np.full(len(feet), FOOT_SENSOR_LOADED))
                    out.write("/foot_forces", messages.foot_force_msg(types, ff), m.log_time_ns)
            out.write(m.topic, msg, m.log_time_ns)
    return n_joint, n_changed


def test_a_joint_missing_from_every_sample_is_an_error_naming_it(sim_run, tmp_path):
    run_dir, _ = sim_run
    n_joint, n_changed = _rewrite(run_dir, tmp_path / "bag", drop_joint="RL_calf_joint")
    assert n_changed == n_joint > 0
    with pytest.raises(replay.ReplayError) as info:
        _run_replay_cli([str(tmp_path / "bag"), "--robot", "go1", "--no-ground-truth"])
    text = str(info.value)
    assert f"all {n_joint} skipped" in text
    assert "joint_missing_names" in text and "missing joints ['RL_calf_joint']" in text


def test_a_mostly_skipped_joint_stream_is_warned_about_with_its_first_message(sim_run, tmp_path, capsys):
    run_dir, _ = sim_run
    # two of every three joint messages (k % 3 != 2) lack FR_hip_joint: more than half skipped, not all
    types = bags.default_types()
    msgs = bags.read_messages_in_stamp_order(run_dir / "bag", ["/imu/data", "/joint_states"])
    k = dropped = 0
    with bags.BagWriter(tmp_path / "bag") as out:
        for m in msgs:
            msg = m.msg
            if m.topic == "/joint_states":
                if k % 3 != 2:
                    s = messages.joint_sample_from_msg(msg)
                    keep = [i for i, n in enumerate(s.names) if n != "FR_hip_joint"]
                    s = JointSample(s.stamp_ns, tuple(s.names[i] for i in keep), s.position[keep], None, None)
                    msg = messages.joint_state_msg(types, s)
                    dropped += 1
                k += 1
            out.write(m.topic, msg, m.log_time_ns)
    n_joint = k
    assert dropped == n_joint - n_joint // 3 and 2 * dropped > n_joint
    _run_replay_cli(
        [str(tmp_path / "bag"), "--robot", "go1", "--no-ground-truth", "--json", str(tmp_path / "run.json")]
    )
    out = capsys.readouterr().out
    assert (
        f"skipped joint_missing_names: {dropped}, first: joint sample skipped: missing joints ['FR_hip_joint']" in out
    )
    assert f"WARNING: {dropped} of {n_joint} joint-state messages skipped" in out
    assert "IMU messages skipped" not in out
    doc = json.loads((tmp_path / "run.json").read_text())
    assert (
        doc["run"]["first_messages"]["joint_missing_names"] == "joint sample skipped: missing joints ['FR_hip_joint']"
    )
    assert doc["run"]["streams"]["joints"] == {"received": n_joint, "skipped": dropped}


def test_an_unknown_foot_is_on_the_summary_output_and_in_the_json(sim_run, tmp_path, capsys):
    run_dir, _ = sim_run
    feet = ("FL_foot", "FR_fot", "RL_foot", "RR_foot")  # FR_foot misspelt
    n_joint, _ = _rewrite(run_dir, tmp_path / "bag", feet=feet)
    _run_replay_cli([str(tmp_path / "bag"), "--robot", "go1", "--no-ground-truth", "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    # one foot-force message per joint message, every one dropped by the core
    assert f"event unknown_foot (warn): {n_joint}, first: unknown foot name(s) ['FR_fot']; skipped" in out
    assert f"WARNING: {n_joint} of {n_joint} foot-force messages skipped" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["run"]["events"]["unknown_foot"] == n_joint
    assert doc["run"]["first_messages"]["unknown_foot"] == "unknown foot name(s) ['FR_fot']; skipped"


def test_correct_feet_give_no_warning(sim_run, tmp_path, capsys):
    run_dir, _ = sim_run
    _rewrite(run_dir, tmp_path / "bag", feet=GO1_FEET)
    result, _ = _run_replay_cli([str(tmp_path / "bag"), "--robot", "go1", "--no-ground-truth"])
    out = capsys.readouterr().out
    assert "WARNING" not in out and "unknown_foot" not in out
    assert result.stream_counts["foot_forces"][1] == 0


# ---------------------------------------------------------------------------------------- node parameters
@pytest.mark.parametrize(
    ("item", "match"),
    [
        ("max_time_gap_s=0", r"max_time_gap_s = 0 is outside its range \[0.001, 3600\]"),
        ("max_time_gap_s=4000", r"outside its range \[0.001, 3600\]"),
        ("max_time_gap_s=abc", "max_time_gap_s must be a number, got 'abc'"),
        ("max_time_gap_s=.nan", "max_time_gap_s must be finite"),
        ("odometry_rate_hz=-1", r"odometry_rate_hz = -1 is outside its range \[0, 10000\]"),
        ("contacts_rate_hz=true", "contacts_rate_hz must be a number, got True"),
        ("odom_frame=", "odom_frame must not be empty"),
        ("use_foot_forces=maybe", "use_foot_forces must be true or false"),
        ("qos_depth=5", "qos_depth: a parameter of the node only"),
        ("diagnostics_period_s=1", "diagnostics_period_s: a parameter of the node only"),
        ("description_file=x.urdf", r"description_file: .*use --description"),
    ],
)
def test_set_refuses_bad_node_parameters(item, match):
    settings, params = replay.split_config(None)
    with pytest.raises(replay.ReplayError, match=match):
        replay.apply_overrides(settings, params, [item])


def test_set_accepts_node_parameters_at_the_ends_of_their_ranges():
    settings, params = replay.split_config(None)
    _, p = replay.apply_overrides(
        settings, params, ["max_time_gap_s=0.001", "odometry_rate_hz=10000", "contacts_rate_hz=0", "base_frame="]
    )
    assert p == {"max_time_gap_s": 0.001, "odometry_rate_hz": 10000, "contacts_rate_hz": 0, "base_frame": ""}


def test_a_settings_file_with_a_bad_node_parameter_is_refused(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("/**/robot_state_estimator:\n  ros__parameters:\n    max_time_gap_s: 0.0\n")
    with pytest.raises(replay.ReplayError, match=r"c.yaml: max_time_gap_s = 0.0 is outside"):
        replay.split_config(path)


def test_the_cli_reports_a_bad_set_value_in_one_line_with_exit_code_2(sim_run, capsys):
    run_dir, _ = sim_run
    rc = cli.main(["replay", str(run_dir / "bag"), "--robot", "go1", "--set", "max_time_gap_s=abc"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip().splitlines() == [
        "robot-state-estimator replay: error: --set max_time_gap_s: max_time_gap_s must be a number, got 'abc'"
    ]


def test_replay_checks_the_node_parameters_of_the_one_table():
    """Replay's node options are the table's (io/node_params.py): what it uses with the node's defaults, the rest
    refused with what to use instead; a value is checked against the table's range (README's numbers)."""
    from robot_state_estimator.io.node_params import NODE_PARAMS

    assert set(replay.NODE_ONLY_PARAMETERS) | set(replay.NODE_DEFAULTS) == set(NODE_PARAMS)
    assert not set(replay.NODE_ONLY_PARAMETERS) & set(replay.NODE_DEFAULTS)
    assert replay.NODE_DEFAULTS["max_time_gap_s"] == 0.5 and replay.NODE_DEFAULTS["foot_wrench_topics"] == [
        "{foot}/wrench"
    ]
    assert NODE_PARAMS["max_time_gap_s"].range == (0.001, 3600.0)
    replay.check_node_params({"max_time_gap_s": 0.001, "contacts_rate_hz": 10000}, "test")
    with pytest.raises(replay.ReplayError, match=r"test: contacts_rate_hz = 10001 is outside its range \[0, 10000\]"):
        replay.check_node_params({"contacts_rate_hz": 10001}, "test")
