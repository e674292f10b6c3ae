"""Settings: YAML files of every robot, flat ROS names, unknown keys and bad values rejected by name."""

from __future__ import annotations

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
    assert est.foot_radii.tolist() == [0.0] * 4 and not est._rolling
    est = RobotStateEstimator.from_description(desc, load_settings({"ekf.foot_radius_m": 0.025}))
    assert est.foot_radii.tolist() == [0.025] * 4
