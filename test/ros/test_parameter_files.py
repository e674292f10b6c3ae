"""Parameter files, log levels and parameter queries of the node under a namespace, in-process over real DDS.

- ``config/<robot>.yaml`` are keyed ``/**/robot_state_estimator`` (rcl's wildcard: the node in any namespace),
  so ``--params-file`` applies to ``/go1/robot_state_estimator`` as well; ``load_settings`` reads that key and
  the older plain ``robot_state_estimator``.
- The launch file's ``--log-level <logger>:=<level>`` names the node's logger as rcl does under a namespace
  (``go1.robot_state_estimator``): ``estimator_logger_name`` checked against rclpy's own logger name.
- Every parameter has a value (``foot_frames`` is ``[]``, not unset): a ``GetParameters`` request over the
  node's service answers for all names.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")
from rcl_interfaces.msg import ParameterType  # noqa: E402
from rcl_interfaces.srv import DescribeParameters, GetParameters  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.logging import LoggingSeverity  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from robot_state_estimator.estimation.settings import EkfSettings  # noqa: E402
from robot_state_estimator.estimation.settings_loading import NODE_KEY, NODE_KEYS, load_settings  # noqa: E402
from robot_state_estimator.ros.node import EstimatorNode  # noqa: E402

from .conftest import REPO_ROOT, spin_until  # noqa: E402
from .streams import GO1_FEET  # noqa: E402

pytestmark = pytest.mark.ros

PARAMS_YAML = """\
{key}:
  ros__parameters:
    imu_frame_id: imu_from_file
    odometry_rate_hz: 50.0
    ekf:
      foot_velocity_noise: 0.0625
"""


def _context(env: dict[str, str], args: list[str]) -> Any:
    context = rclpy.Context()
    rclpy.init(context=context, args=["estimator_node", "--ros-args", *args], domain_id=int(env["ROS_DOMAIN_ID"]))
    return context


def _node(env: dict[str, str], namespace: str, args: list[str], **params: Any) -> tuple[Any, EstimatorNode]:
    context = _context(env, args)
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return context, EstimatorNode(context=context, namespace=namespace, parameter_overrides=overrides)


def test_the_bundled_settings_files_use_the_any_namespace_key_and_both_keys_load() -> None:
    import yaml

    assert NODE_KEY == "/**/robot_state_estimator"
    for robot in ("go1", "solo12", "anymal_c"):
        doc = yaml.safe_load((REPO_ROOT / "config" / f"{robot}.yaml").read_text())
        assert list(doc) == [NODE_KEY], robot
    for key in NODE_KEYS:  # the new key and the older root-namespace ones
        settings = load_settings(
            yaml.safe_load(PARAMS_YAML.format(key=key)), ignore=("imu_frame_id", "odometry_rate_hz")
        )
        assert settings.ekf.foot_velocity_noise == 0.0625, key


@pytest.mark.parametrize("namespace", ["/go1", "/a/b", ""])
def test_a_params_file_applies_to_the_node_in_any_namespace(ros_domain_env, tmp_path: Path, namespace: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(PARAMS_YAML.format(key=NODE_KEY))
    context, node = _node(ros_domain_env, namespace, ["--params-file", str(path)])
    try:
        assert node.get_fully_qualified_name() == f"{namespace}/robot_state_estimator"
        assert node.get_parameter("imu_frame_id").value == "imu_from_file"  # a node parameter
        assert node.get_parameter("odometry_rate_hz").value == 50.0
        assert node.get_parameter("ekf.foot_velocity_noise").value == 0.0625  # a setting
        assert node._settings.ekf.foot_velocity_noise == 0.0625
    finally:
        node.destroy_node()
        context.try_shutdown()


def test_the_bundled_go1_file_applies_under_a_namespace(ros_domain_env) -> None:
    # No robot parameter: the settings' defaults are the built-in ones, and only the file, read by rcl, can give
    # config/go1.yaml's values. The expected values are read from the file (they are retuned with the defaults),
    # and at least one of them must differ from the built-in default, or the check would prove nothing.
    go1_yaml = REPO_ROOT / "config" / "go1.yaml"
    ekf_in_file = yaml.safe_load(go1_yaml.read_text())[NODE_KEY]["ros__parameters"]["ekf"]
    defaults = EkfSettings()
    only_from_file = {k for k, v in ekf_in_file.items() if getattr(defaults, k) != v}
    assert "use_description_noise" in only_from_file, only_from_file
    context, node = _node(ros_domain_env, "/go1", ["--params-file", str(go1_yaml)])
    try:
        for name, value in ekf_in_file.items():
            assert node.get_parameter(f"ekf.{name}").value == value, name
    finally:
        node.destroy_node()
        context.try_shutdown()


def _launch_module() -> Any:
    spec = importlib.util.spec_from_file_location("estimator_launch", REPO_ROOT / "launch" / "estimator.launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # no launch/launch_ros import at module level
    return module


def test_launch_logger_name_follows_the_namespace() -> None:
    name = _launch_module().estimator_logger_name
    assert name("") == "robot_state_estimator"
    assert name("/") == "robot_state_estimator"
    assert name("go1") == "go1.robot_state_estimator"
    assert name("/go1") == "go1.robot_state_estimator"
    assert name("/a/b/") == "a.b.robot_state_estimator"


def test_launch_output_rate_arguments_become_node_parameters() -> None:
    rates = _launch_module().output_rate_parameters
    assert rates("", "") == {}  # not set: the node's defaults
    assert rates("100", " ") == {"odometry_rate_hz": 100.0}
    assert rates("", "50.5") == {"contacts_rate_hz": 50.5}
    with pytest.raises(ValueError, match=r"contacts_rate_hz.*'fast'"):
        rates("100", "fast")


@pytest.mark.parametrize("namespace", ["/ll_ns", "/ll_a/ll_b", ""])
def test_the_launch_files_log_level_argument_reaches_the_node(ros_domain_env, namespace: str) -> None:
    """What the launch file passes (``--log-level <estimator_logger_name(ns)>:=debug``) sets the level of the
    node's own logger (rclpy names it; the name is not recomputed here)."""
    logger_name = _launch_module().estimator_logger_name(namespace)
    level = "warn" if namespace == "" else "debug"  # the root logger name is shared with other tests: not debug
    context, node = _node(ros_domain_env, namespace, ["--log-level", f"{logger_name}:={level}"])
    try:
        assert node.get_logger().name == logger_name
        expected = LoggingSeverity.WARN if level == "warn" else LoggingSeverity.DEBUG
        assert node.get_logger().get_effective_level() == expected
    finally:
        rclpy.logging.set_logger_level(logger_name, LoggingSeverity.INFO)
        node.destroy_node()
        context.try_shutdown()


def _call(executor: Any, client: Any, request: Any) -> Any:
    assert client.wait_for_service(timeout_sec=10)
    future = client.call_async(request)
    assert spin_until(executor, future.done, timeout_s=10)
    return future.result()


def test_get_parameters_answers_for_every_parameter_including_foot_frames(ros_domain_env) -> None:
    context, node = _node(ros_domain_env, "/pq", [], robot="go1")
    probe = rclpy.create_node("param_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(probe)
    try:
        names = [n for n in node._parameters if n != "use_sim_time"]
        assert "foot_frames" in names and len(names) > 60
        client = probe.create_client(GetParameters, "/pq/robot_state_estimator/get_parameters")
        values = _call(executor, client, GetParameters.Request(names=names)).values
        assert len(values) == len(names)  # before: none at all, for an unset foot_frames in the request
        by_name = dict(zip(names, values, strict=True))
        assert by_name["foot_frames"].type == ParameterType.PARAMETER_STRING_ARRAY
        assert list(by_name["foot_frames"].string_array_value) == []
        assert by_name["robot"].string_value == "go1"
        assert list(by_name["ekf.initial_position"].double_array_value) == [0.0, 0.0, 0.0]
        assert all(v.type != ParameterType.PARAMETER_NOT_SET for v in values)
        describe = probe.create_client(DescribeParameters, "/pq/robot_state_estimator/describe_parameters")
        (desc,) = _call(executor, describe, DescribeParameters.Request(names=["foot_frames"])).descriptors
        assert desc.type == ParameterType.PARAMETER_STRING_ARRAY and desc.read_only
        # [] = the description's feet: a wrench publisher per Go1 foot
        assert sorted(node._outputs.wrenches) == sorted(GO1_FEET)
        assert not node.set_parameters([Parameter("foot_frames", value=["FL_foot"])])[0].successful  # read-only
    finally:
        executor.shutdown()
        probe.destroy_node()
        node.destroy_node()
        context.try_shutdown()


def test_foot_frames_given_on_the_command_line_is_kept(ros_domain_env) -> None:
    context, node = _node(
        ros_domain_env, "/pf", ["-p", "foot_frames:=[FL_foot, FR_foot, RL_foot, RR_foot]"], robot="go1"
    )
    try:
        assert node.get_parameter("foot_frames").value == list(GO1_FEET)
        assert node._settings.foot_frames == GO1_FEET
    finally:
        node.destroy_node()
        context.try_shutdown()


def test_a_bad_value_in_config_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    """The settings file's error starts with its path (the node's FATAL line shows it), as replay's does."""
    from robot_state_estimator.estimation.errors import SettingsError
    from robot_state_estimator.ros.parameters import base_settings

    bad = tmp_path / "bad.yaml"
    bad.write_text("/**/robot_state_estimator:\n  ros__parameters:\n    ekf.foot_gate_nis: -1.0\n")
    with pytest.raises(SettingsError) as info:
        base_settings("go1", str(bad))
    assert str(info.value).startswith(f"{bad}: ") and "ekf.foot_gate_nis" in str(info.value)


def test_a_misspelt_name_in_a_config_file_gets_the_close_names(tmp_path: Path) -> None:
    """As ``--set`` and the node's overrides do: the unknown name, the known ones closest to it, then the list."""
    from robot_state_estimator.estimation.errors import SettingsError
    from robot_state_estimator.estimation.settings_loading import load_settings

    bad = tmp_path / "bad.yaml"
    bad.write_text("ekf:\n  foot_velocity_nosie: 0.1\n")
    with pytest.raises(SettingsError, match=r"unknown setting\(s\) ekf\.foot_velocity_nosie \(did you mean "
                       r"'ekf\.foot_velocity_noise'.*\?\); known: "):  # fmt: skip
        load_settings(bad)
