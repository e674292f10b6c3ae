"""Where the node's description comes from (ros/description_source.py; no rclpy needed): the parameter, the file,
the bundled robot, else the topic; an empty robot_description that was given is an error, not a wait."""

from __future__ import annotations

import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.ros.description_source import description_source, robot_mismatch_warning

EMPTY = {"robot_description": "", "description_file": "", "robot": "", "config_file": ""}


def test_the_sources_in_order() -> None:
    xml = "<robot name='r'/>"
    assert description_source({**EMPTY, "robot_description": xml, "robot": "go1"}, None) == xml
    assert description_source({**EMPTY, "description_file": "/x.urdf", "robot": "go1"}, None) == "/x.urdf"
    assert description_source({**EMPTY, "robot": "go1"}, None) == str(robot_description_path("go1"))
    assert description_source(EMPTY, None) is None  # the topic
    assert description_source(EMPTY, {"qos_depth": 5}) is None


def test_an_empty_robot_description_that_was_given_is_an_error() -> None:
    with pytest.raises(ValueError, match="robot_description parameter is given but empty"):
        description_source({**EMPTY, "robot_description": "  "}, {"robot_description": ""})
    # with another source it is not used
    assert description_source({**EMPTY, "robot": "go1"}, {"robot_description": ""}) is not None


def test_robot_settings_for_another_model_are_named() -> None:
    class Desc:
        name = "stick"

    params = {**EMPTY, "robot": "go1", "description_file": "/stick.urdf"}
    text = robot_mismatch_warning(params, Desc(), "config/go1.yaml")
    assert text.startswith("[robot_mismatch] the settings of robot 'go1' (config/go1.yaml)") and "'stick'" in text
    assert robot_mismatch_warning({**params, "config_file": "/mine.yaml"}, Desc(), "x") == ""
    assert robot_mismatch_warning({**EMPTY, "robot": "go1"}, Desc(), "x") == ""  # the bundled description itself
