"""Settings: YAML files of every robot, flat ROS names, unknown keys and bad values rejected by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from robot_state_estimator.estimation import (
    EstimatorSettings,
    SettingsError,
    flatten_settings,
    load_settings,
    settings_from_flat,
)

CONFIG = Path(__file__).resolve().parents[2] / "config"


@pytest.mark.parametrize("robot", ["go1", "solo12", "anymal_c"])
def test_robot_yaml_files_load(robot: str) -> None:
    s = load_settings(CONFIG / f"{robot}.yaml")
    assert isinstance(s, EstimatorSettings)


def test_go1_defaults_use_the_foot_sensor_thresholds() -> None:
    s = load_settings(CONFIG / "go1.yaml")
    assert (s.contact.sensor_on_threshold, s.contact.sensor_off_threshold) == (60.0, 30.0)


def test_shapes_of_input() -> None:
    nested = {"ekf": {"foot_velocity_noise": 0.2}, "contact": {"source": "kinematic"}}
    a = load_settings({"robot_state_estimator": {"ros__parameters": nested}})
    b = load_settings({"ros__parameters": nested})
    c = load_settings({"ekf.foot_velocity_noise": 0.2, "contact.source": "kinematic"})
    assert a == b == c
    assert a.ekf.foot_velocity_noise == 0.2 and a.contact.source == "kinematic"
    assert load_settings(None) == EstimatorSettings()


def test_flat_round_trip_and_base() -> None:
    s = load_settings(CONFIG / "go1.yaml")
    flat = flatten_settings(s)
    assert "ekf.accel_noise_density" in flat and "max_measurement_delay_s" in flat
    assert settings_from_flat(flat) == s
    t = settings_from_flat({"ekf.gyro_noise_density": 0.01}, base=s)
    assert t.ekf.gyro_noise_density == 0.01 and t.contact == s.contact
    # ints are accepted for floats; lists become tuples
    u = settings_from_flat({"ekf.max_dt_s": 1, "ekf.initial_position": [0, 0, 1]})
    assert u.ekf.max_dt_s == 1.0 and u.ekf.initial_position == (0, 0, 1)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"ekf.accel_noise_densty": 1.0}, "ekf.accel_noise_densty"),
        ({"bogus": 1}, "bogus"),
        ({"ekf": {"gate": 1}}, "ekf.gate"),
        ({"ekf.accel_noise_density": -1.0}, "ekf.accel_noise_density"),
        ({"ekf.accel_noise_density": "high"}, "must be a number"),
        ({"ekf.static_bias_lock": 1}, "must be a bool"),
        ({"contact.source": "magic"}, "contact.source"),
        ({"contact.on_threshold": 10.0, "contact.off_threshold": 20.0}, "off_threshold"),
        ({"ekf.initial_position": [0, 0]}, "initial_position"),
        ({"ekf.init_timeout_s": -1.0}, "ekf.init_timeout_s"),
        ({"ekf.init_moving_roll_pitch_std": 0.0}, "ekf.init_moving_roll_pitch_std"),
        ({"robot_state_estimator": {"x": 1}}, "ros__parameters"),
    ],
)
def test_bad_settings_are_rejected_by_name(data: dict, match: str) -> None:
    with pytest.raises(SettingsError, match=match):
        load_settings(data)


def test_node_parameters_can_be_ignored(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("robot_state_estimator:\n  ros__parameters:\n    odom_frame: odom\n    ekf:\n      max_dt_s: 0.1\n")
    with pytest.raises(SettingsError, match="odom_frame"):
        load_settings(path)
    assert load_settings(path, ignore=("odom_frame",)).ekf.max_dt_s == 0.1
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [")
    with pytest.raises(SettingsError, match="cannot read"):
        load_settings(bad)


def test_foot_radius_setting_null_number_and_description() -> None:
    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation import RobotStateEstimator, load_settings

    assert load_settings({}).ekf.foot_radius_m < 0.0  # default: from the description
    assert load_settings({"ekf": {"foot_radius_m": None}}).ekf.foot_radius_m < 0.0  # YAML null: the same
    assert load_settings({"ekf.foot_radius_m": 0}).ekf.foot_radius_m == 0.0
    desc = load_description(robot_description_path("go1"))
    est = RobotStateEstimator.from_description(desc, load_settings({}))
    assert est.foot_radii.tolist() == [0.02] * 4
    est = RobotStateEstimator.from_description(desc, load_settings({"ekf.foot_radius_m": 0.0}))
    assert est.foot_radii.tolist() == [0.0] * 4 and not est.legs.rolling
    est = RobotStateEstimator.from_description(desc, load_settings({"ekf.foot_radius_m": 0.025}))
    assert est.foot_radii.tolist() == [0.025] * 4


# --- numbers without a dot (YAML 1.2 / rcl floats, PyYAML strings), non-finite values, a group given a value ---


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2e-2", 0.02), ("1e3", 1000.0), ("1.5E+2", 150.0), ("-.5e1", -5.0), (" 3e0 ", 3.0)],
)
def test_float_settings_accept_exponent_numbers_that_pyyaml_reads_as_strings(text: str, expected: float) -> None:
    assert settings_from_flat({"ekf.initial_position": [text, 0.0, 0.0]}).ekf.initial_position == (expected, 0.0, 0.0)
    if expected > 0:
        assert settings_from_flat({"ekf.accel_noise_density": text}).ekf.accel_noise_density == expected


def test_exponent_numbers_in_a_parameter_file(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("/**/robot_state_estimator:\n  ros__parameters:\n    ekf:\n      accel_noise_density: 2e-2\n")
    assert load_settings(path).ekf.accel_noise_density == 0.02
    path.write_text("ekf.gyro_noise_density: 1e3\n")  # flat names, as --config files may hold them
    assert load_settings(path).ekf.gyro_noise_density == 1000.0


@pytest.mark.parametrize("text", ["abc", "1_000", "0x10", "1e", "nan", "inf", "e3"])
def test_strings_that_are_not_decimal_numbers_stay_refused(text: str) -> None:
    with pytest.raises(SettingsError, match=r"ekf\.accel_noise_density must be a number"):
        settings_from_flat({"ekf.accel_noise_density": text})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("key", ["contact.on_threshold", "ekf.accel_noise_density", "ekf.foot_radius_m"])
def test_non_finite_values_are_refused_by_name(key: str, value: float) -> None:
    with pytest.raises(SettingsError, match="^" + re.escape(key) + " must be finite, got"):
        settings_from_flat({key: value})


def test_yaml_nan_in_a_file_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("contact:\n  on_threshold: .nan\n")
    with pytest.raises(SettingsError, match=r"contact\.on_threshold must be finite, got nan"):
        load_settings(path)


def test_a_group_given_a_value_names_the_group() -> None:
    with pytest.raises(SettingsError, match=r"^ekf must be a mapping of settings \(set its members, e\.g\. ekf\."):
        settings_from_flat({"ekf": 3})


@pytest.mark.ros
def test_rcl_reads_exponent_numbers_as_doubles_like_load_settings(tmp_path: Path, ros_env: dict[str, str]) -> None:
    """What the node gets from ``--params-file`` (rcl's YAML parser) for ``2e-2``: the double 0.02, the value
    load_settings reads from the same file."""
    rclpy = pytest.importorskip("rclpy")
    from rcl_interfaces.msg import ParameterType

    path = tmp_path / "params.yaml"
    path.write_text(
        "/**/robot_state_estimator:\n  ros__parameters:\n    ekf.accel_noise_density: 2e-2\n"
        "    ekf.gyro_noise_density: 1e3\n"
    )
    context = rclpy.Context()
    rclpy.init(args=["x", "--ros-args", "--params-file", str(path)], context=context)
    try:
        node = rclpy.create_node(
            "robot_state_estimator", context=context, automatically_declare_parameters_from_overrides=True
        )
        a = node.get_parameter("ekf.accel_noise_density")
        g = node.get_parameter("ekf.gyro_noise_density")
        assert (a.type_.value, a.value) == (ParameterType.PARAMETER_DOUBLE, 0.02)
        assert (g.type_.value, g.value) == (ParameterType.PARAMETER_DOUBLE, 1000.0)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    s = load_settings(path)
    assert (s.ekf.accel_noise_density, s.ekf.gyro_noise_density) == (0.02, 1000.0)


def test_replay_set_overrides_take_exponent_numbers_and_refuse_nan() -> None:
    from robot_state_estimator.tools.replay import apply_overrides

    s, _ = apply_overrides(EstimatorSettings(), {}, ["ekf.accel_noise_density=2e-2", "ekf.gyro_noise_density=1e3"])
    assert (s.ekf.accel_noise_density, s.ekf.gyro_noise_density) == (0.02, 1000.0)
    with pytest.raises(SettingsError, match=r"^contact\.on_threshold must be finite, got nan"):
        apply_overrides(EstimatorSettings(), {}, ["contact.on_threshold=.nan"])
