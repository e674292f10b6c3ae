"""The plain functions of launch/estimator.launch.py (no launch install needed): unknown arguments, the bundled
robot of a description's model, the URDF handed to robot_state_publisher."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARE = str(REPO_ROOT)  # the share layout: config/robots/<robot>.urdf.xacro


def _launch_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("estimator_launch", REPO_ROOT / "launch" / "estimator.launch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unknown_arguments_are_named_with_the_closest_declared_ones() -> None:
    launch = _launch_module()
    declared = [name for name, _, _ in launch.ARGUMENTS]
    assert launch.unknown_arguments(declared) == ""
    message = launch.unknown_arguments(["robot", "odometry_rate", "paramsfile", "zzz"])
    assert "'odometry_rate' (did you mean 'odometry_rate_hz'" in message
    assert "'paramsfile' (did you mean 'params_file'" in message
    assert "'zzz'" in message and "'robot'" not in message.split(";")[0]


@pytest.mark.parametrize("robot", ["go1", "solo12", "anymal_c"])
def test_each_bundled_description_is_recognised_by_its_model_name(robot: str) -> None:
    launch = _launch_module()
    path = REPO_ROOT / "config" / "robots" / launch.BUNDLED[robot]
    assert launch.robot_of_model(launch._model_name(str(path)), SHARE) == robot
    assert launch.robot_of_model("my_robot", SHARE) == ""
    assert launch.robot_of_model(None, SHARE) == ""


def test_robot_state_publisher_gets_the_xacro_expanded_as_the_node_expands_it(monkeypatch, tmp_path) -> None:
    """The bundled Go1 includes $(find example-robot-data): the launch file's expansion resolves it without
    AMENT_PREFIX_PATH (xacro alone raised PackageNotFoundError), and gives the node's URDF."""
    from robot_state_estimator.description import load_description

    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    launch = _launch_module()
    path = REPO_ROOT / "config" / "robots" / "go1.urdf.xacro"
    xml = launch._urdf_xml(str(path))
    from_launch = load_description(xml)
    from_node = load_description(str(path))
    assert from_launch.model.name == from_node.model.name
    assert list(from_launch.model.names) == list(from_node.model.names)
    sdf = tmp_path / "robot.sdf"
    sdf.write_text('<sdf version="1.9"><model name="my_robot"><link name="base"/></model></sdf>')
    assert launch._model_name(str(sdf)) == "my_robot"
