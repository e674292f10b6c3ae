"""Issue 19 item 5: every ``--help`` gives real defaults (never Python's ``None``, no empty ``(default: )``), the
flags name their default, ``replay --set`` with a misspelt name gets a "did you mean" from the rule the node uses for
its parameter overrides (``common/names.py``)."""

from __future__ import annotations

import argparse
import importlib
import re

import pytest

from robot_state_estimator.common.names import close_names, did_you_mean
from robot_state_estimator.simulation.robots import BIPEDS, ROBOTS
from robot_state_estimator.tools import replay
from robot_state_estimator.tools.cli import SUBCOMMANDS, _DefaultsHelpFormatter


def _help(command: str) -> str:
    module = importlib.import_module(SUBCOMMANDS[command][0])
    parser = argparse.ArgumentParser(prog=command, formatter_class=_DefaultsHelpFormatter)
    module.add_arguments(parser)
    return re.sub(r"\s+", " ", parser.format_help())  # argparse wraps lines: compare words


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_help_texts_give_real_defaults(command: str) -> None:
    text = _help(command)
    assert not re.search(r"\bNone\b", text), text
    assert "(default: )" not in text and "(default: [])" not in text and "(default: ())" not in text, text


def test_simulate_help_names_the_noise_default_and_the_speeds_per_robot() -> None:
    text = _help("simulate")
    assert "--noise, --no-noise IMU (SDF) + encoder/torque noise (default: --no-noise)" in text
    for name, info in [*ROBOTS.items(), *BIPEDS.items()]:
        assert f"{name} {info.gait.trot_speed_m_s:g}/{info.gait.walk_speed_m_s:g}" in text
    assert "go1 0.4/0.2" in text  # the Go1 trots at 0.4 m/s by default (README, simulate)


def test_replay_help_says_where_the_settings_and_the_outputs_come_from() -> None:
    text = _help("replay")
    assert "default: config/<robot>.yaml with --robot, else the built-in defaults" in text
    assert "default: all four; needs --output" in text
    assert "--use-foot-wrenches" in text and "(default: auto)" in text


def test_did_you_mean_is_one_rule() -> None:
    assert close_names("qos_dpth", ["qos_depth", "odom_frame"]) == ["qos_depth"]
    assert did_you_mean(["a"]) == " (did you mean 'a'?)"
    assert did_you_mean(["a", "b", "c"]) == " (did you mean 'a', 'b' or 'c'?)"
    assert did_you_mean([]) == ""


@pytest.mark.parametrize(
    ("item", "suggestion"),
    [
        ("ekf.foot_gate_nsi=20", "'ekf.foot_gate_nis'"),
        ("max_time_gap=1.0", "'max_time_gap_s'"),
        ("contact.on_treshold=0.4", "'contact.on_threshold'"),
    ],
)
def test_replay_set_with_a_misspelt_name_suggests_the_close_names(item: str, suggestion: str) -> None:
    settings, params = replay.split_config(None)
    with pytest.raises(replay.ReplayError, match=rf"--set {item.split('=')[0]}: no setting or node parameter") as info:
        replay.apply_overrides(settings, params, [item])
    assert f"(did you mean {suggestion}" in str(info.value)


def test_replay_set_still_takes_groups_settings_and_node_parameters() -> None:
    settings, params = replay.split_config(None)
    s2, p2 = replay.apply_overrides(settings, params, ["ekf.foot_gate_nis=20", "max_time_gap_s=2", "contact={}"])
    assert s2.ekf.foot_gate_nis == 20 and p2["max_time_gap_s"] == 2
