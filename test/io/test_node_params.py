"""The node-parameter table (io/node_params.py): the adapter settings are its rows, values are checked as the
node's descriptors check them."""

from __future__ import annotations

import dataclasses

import pytest

from robot_state_estimator.io.node_params import (
    ADAPTER_PARAMETERS,
    NODE_ONLY_PARAMETERS,
    NODE_PARAMS,
    NON_EMPTY_PARAMETERS,
    REPLAY_PARAMETERS,
    default_value,
    integer_default,
    string_array_default,
    value_problem,
)
from robot_state_estimator.io.stream import DEFAULT_FOOT_WRENCH_TOPICS, AdapterSettings


def test_the_adapter_settings_are_the_rows_marked_adapter_with_their_defaults() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(AdapterSettings)}
    assert (
        tuple(fields)
        == ADAPTER_PARAMETERS
        == ("imu_frame_id", "max_time_gap_s", "odometry_rate_hz", "contacts_rate_hz")
    )
    assert fields == {name: NODE_PARAMS[name].default for name in ADAPTER_PARAMETERS}
    assert DEFAULT_FOOT_WRENCH_TOPICS == string_array_default("foot_wrench_topics") == ("{foot}/wrench",)
    # live adapter parameters are set while the node runs (set_adapter); imu_frame_id is read-only
    assert [name for name in ADAPTER_PARAMETERS if NODE_PARAMS[name].live] == list(ADAPTER_PARAMETERS[1:])


def test_every_row_is_consistent() -> None:
    assert set(REPLAY_PARAMETERS) | set(NODE_ONLY_PARAMETERS) == set(NODE_PARAMS)
    assert NON_EMPTY_PARAMETERS == ("odom_frame",)
    for name, p in NODE_PARAMS.items():
        assert p.text and not p.text.startswith(p.unit + ","), name  # the unit is a field, not in the text
        assert value_problem(name, default_value(name)) == "", name  # every default is a valid value
        if p.range is not None:
            assert p.type in ("integer", "double") and p.range[0] <= p.default <= p.range[1], name  # type: ignore[operator]
        if p.unit:
            assert p.description == f"{p.unit}, {p.text}"
    assert default_value("foot_wrench_topics") == ["{foot}/wrench"]  # as ROS and YAML give a string array


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("max_time_gap_s", 0.0, "max_time_gap_s = 0.0 is outside its range [0.001, 3600]"),
        ("max_time_gap_s", 3600, ""),  # an integer for a double, as YAML writes it
        ("max_time_gap_s", True, "max_time_gap_s must be a number, got True"),
        ("odometry_rate_hz", float("nan"), "odometry_rate_hz must be finite, got nan"),
        ("qos_depth", 10001, "qos_depth = 10001 is outside its range [1, 10000]"),
        ("odom_frame", "", "odom_frame must not be empty"),
        ("base_frame", 3, "base_frame must be a frame name (a string), got 3"),
        ("robot", 3, "robot must be a string, got 3"),
        ("use_foot_forces", "yes", "use_foot_forces must be true or false, got 'yes'"),
        ("foot_wrench_topics", [], "foot_wrench_topics must be a list of topic names, got []"),
        ("foot_wrench_topics", ["a", 1], "foot_wrench_topics must be a list of topic names, got ['a', 1]"),
        ("imu_frame_id", "*", ""),
    ],
)
def test_value_problems_name_the_parameter_and_the_rule(name: str, value: object, problem: str) -> None:
    assert value_problem(name, value) == problem


def test_an_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        value_problem("qos_dpth", 5)
    with pytest.raises(TypeError, match="not a string array"):
        string_array_default("qos_depth")
    with pytest.raises(TypeError, match="not an integer"):
        integer_default("max_time_gap_s")
    assert integer_default("qos_depth") == 50
