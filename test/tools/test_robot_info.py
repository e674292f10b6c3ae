"""``info DESCRIPTION`` (what the estimator uses for a robot), ``--write-config`` (a template that loads as it is),
``simulate --description`` and the README's "Add your robot" commands, end to end on example-robot-data's Go2
(a URDF without an IMU block)."""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.robots import example_robot_data_share
from robot_state_estimator.description import DescriptionWarning, load_description
from robot_state_estimator.estimation import RobotStateEstimator, load_settings
from robot_state_estimator.tools import cli

REPO = Path(__file__).resolve().parents[2]
GO2 = example_robot_data_share() / "robots" / "go2_description" / "urdf" / "go2.urdf"


def _urdf_mass_kg(path: Path) -> float:
    return sum(float(m.get("value")) for m in ET.parse(path).getroot().iter("mass"))


def test_info_reports_what_the_estimator_uses_for_go2(capsys) -> None:
    assert cli.main(["info", str(GO2), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["base_link"] == "base" and r["imu"] is None and "declared_imu.link" in r["imu_problem"]
    assert r["feet"] == ["FL_foot", "FR_foot", "RL_foot", "RR_foot"] and "detected" in r["feet_found_by"]
    assert len(r["joints"]) == 12
    mass = _urdf_mass_kg(GO2)
    assert r["mass_kg"] == pytest.approx(mass, rel=1e-12)
    # default contact thresholds: 0.3 and 0.15 of the weight per foot (weight_relative)
    assert r["contact"]["torque_on_threshold_n"] == pytest.approx(0.3 * mass * 9.81 / 4, rel=1e-9)
    assert r["contact"]["torque_off_threshold_n"] == pytest.approx(0.15 * mass * 9.81 / 4, rel=1e-9)
    assert cli.main(["info", str(GO2)]) == 0
    text = capsys.readouterr().out
    assert "IMU            none usable" in text and f"{0.3 * mass * 9.81 / 4:.1f} N" in text


def test_write_config_loads_as_it_is_and_declares_the_imu_on_the_imu_link(tmp_path, capsys) -> None:
    path = tmp_path / "go2.yaml"
    assert cli.main(["info", str(GO2), "--write-config", str(path)]) == 0
    capsys.readouterr()
    text = path.read_text()
    assert text.count("#") > 20  # commented
    settings = load_settings(path)
    assert settings.declared_imu.link == "imu" and settings.imu_name == "imu"
    assert settings.foot_frames == ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
    est = RobotStateEstimator.from_description(load_description(GO2), settings)
    np.testing.assert_allclose(est.imu.p_base_imu, [-0.02557, 0.0, 0.04232], atol=1e-12)  # imu_joint origin
    assert "imu_noise_assumed" in {e.key for e in est.pop_events()}
    # info with the template: the IMU is now reported with its pose and the noise the filter uses
    assert cli.main(["info", str(GO2), "--config", str(path), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["imu"]["from"] == "settings (declared_imu)" and r["imu"]["link"] == "imu"
    np.testing.assert_allclose(r["imu"]["pose_in_base"]["xyz_m"], [-0.02557, 0.0, 0.04232], atol=1e-12)
    assert r["imu"]["filter_noise"]["gyro_density_rad_s_sqrt_hz"] == [settings.ekf.gyro_noise_density] * 3
    assert {e["key"] for e in r["events"]} >= {"imu_declared", "imu_noise_assumed"}


def test_info_on_a_description_imu_and_on_xml_text(tmp_path, capsys) -> None:
    xml = load_description(robot_description_path("go1")).xml
    assert cli.main(["info", xml, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["imu"]["name"] == "imu_sensor" and r["imu"]["from"] == "description"
    assert r["imu"]["update_rate_hz"] == 1000.0
    path = tmp_path / "go1.yaml"
    assert cli.main(["info", xml, "--write-config", str(path)]) == 0
    assert load_settings(path).imu_name == "imu_sensor" and not load_settings(path).declared_imu.declared


def test_info_takes_a_package_uri(monkeypatch, capsys) -> None:
    from robot_state_estimator.common.robots import example_robot_data_prefix

    prefix = example_robot_data_prefix()
    if prefix is None:
        pytest.skip("example-robot-data has no ament prefix here")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    uri = "package://example-robot-data/robots/go2_description/urdf/go2.urdf"
    assert cli.main(["info", uri, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["name"] == "go2_description" and r["source"] == uri and len(r["joints"]) == 12


def test_info_with_several_imus_lists_them_and_imu_chooses(capsys) -> None:
    xml = load_description(robot_description_path("go1")).xml
    two = xml.replace("</robot>", '<gazebo reference="trunk"><sensor name="imu2" type="imu"/></gazebo></robot>')
    assert cli.main(["info", two]) == 0
    out = capsys.readouterr().out
    assert "none usable" in out and "'imu2' (link 'base'" in out and "--imu NAME" in out
    assert cli.main(["info", two, "--imu", "imu2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["imu"]["name"] == "imu2"
    assert cli.main(["info", two, "--imu", "imu3"]) == 2
    assert "no IMU 'imu3' (did you mean 'imu2'?)" in capsys.readouterr().err


TALOS = example_robot_data_share() / "robots" / "talos_data" / "robots" / "talos_reduced.urdf"


def test_info_on_talos_whose_imu_moves_with_the_torso_reports_the_rest_and_declares_one_on_the_base(
    tmp_path, capsys
) -> None:
    """Talos's only IMU block is on ``imu_link``, fixed to ``torso_2_link`` behind the torso joints: the filter
    cannot use it, and info still reports the robot (feet, flat soles) and writes a template whose declared IMU sits
    on a link rigid with the base (not ``imu_link``, which moves), as for a description without an IMU."""
    assert cli.main(["info", str(TALOS), "--json"]) == 0
    captured = capsys.readouterr()
    r = json.loads(captured.out)
    assert r["imu"] is None and "moves relative to the base link 'base_link'" in r["imu_problem"]
    assert r["feet"] == ["left_sole_link", "right_sole_link"] and r["flat_feet"] == r["feet"]
    assert "base_link" in r["links"] and "imu_link" not in r["links"] and "torso_2_link" not in r["links"]
    # the description's warning is one line naming the command, not Python's file:line and source line
    assert "robot-state-estimator info: warning: sensor 'imu_sensor'" in captured.err
    assert "DescriptionWarning" not in captured.err and "load_description(" not in captured.err
    path = tmp_path / "talos.yaml"
    assert cli.main(["info", str(TALOS), "--write-config", str(path)]) == 0
    settings = load_settings(path)
    assert settings.declared_imu.link == "base_link"
    with pytest.warns(DescriptionWarning, match="imu_sensor"):  # the same warning, from the core API
        desc = load_description(TALOS)
    est = RobotStateEstimator.from_description(desc, settings)
    np.testing.assert_array_equal(est.imu.p_base_imu, np.zeros(3))
    # choosing the moving IMU by name is an error naming the joint
    assert cli.main(["info", str(TALOS), "--imu", "imu_sensor"]) == 2
    assert "(joint 'torso_2_joint')" in capsys.readouterr().err


G1 = example_robot_data_share() / "robots" / "g1_description" / "urdf" / "g1_29dof_rev_1_0.urdf"


def test_feet_that_are_not_detected_are_named_by_the_setting_foot_frames(capsys) -> None:
    """Unitree's G1 names its feet ``*_ankle_roll_link``: nothing is detected, and the error says how to name them
    from the command line (not the Python argument ``names=``) and lists the links at the ends of the chains, of
    which the last link of each leg is the foot; named with --set, info reports them."""
    assert cli.main(["info", str(G1)]) == 2
    err = capsys.readouterr().err
    assert "no foot frames detected in 'g1_29dof_rev_1_0'" in err and "--set 'foot_frames=[A, B]'" in err
    assert "-p foot_frames:=" in err and "left_ankle_roll_link, right_ankle_roll_link" in err
    feet = "foot_frames=[left_ankle_roll_link, right_ankle_roll_link]"
    assert cli.main(["info", str(G1), "--set", feet, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (
        r["feet"] == ["left_ankle_roll_link", "right_ankle_roll_link"] and r["feet_found_by"] == "settings foot_frames"
    )


def test_info_bad_declared_link_is_named(capsys) -> None:
    assert cli.main(["info", str(GO2), "--set", "declared_imu.link=imuu"]) == 2
    assert "declared_imu.link 'imuu' is not a link or frame of robot 'go2_description'" in capsys.readouterr().err


def _readme_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Add your robot", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return [shlex.split(line) for line in block.group(1).splitlines() if line.startswith("robot-state-estimator ")]


def test_the_readme_add_your_robot_commands_run(tmp_path, monkeypatch, capsys) -> None:
    """The README's commands, as written but for a shorter run (3 s instead of 10): a template, a simulated Go2
    trot with the declared IMU, and the estimator on it against its ground truth."""
    monkeypatch.chdir(tmp_path)
    commands = _readme_commands()
    assert [c[1] for c in commands] == ["info", "simulate", "replay"]
    for argv in commands:
        argv = [str(GO2) if a == "$GO2" else a for a in argv[1:]]
        if "--duration" in argv:
            argv[argv.index("--duration") + 1] = "3"
        assert cli.main(argv) == 0, argv
    out = capsys.readouterr().out
    assert yaml.safe_load((tmp_path / "go2.yaml").read_text())  # the template
    ate = re.search(r"ATE 4-DoF % of path\s+([0-9.]+) %", out)
    assert ate is not None and float(ate.group(1)) < 1.0
    assert "event imu_noise_assumed (warn)" in out
    # the template declares no IMU noise: --noise says it adds none to the IMU (the estimator assumes ekf.*)
    assert "note: the IMU 'imu' states no noise" in out


def test_simulate_description_errors_are_named(tmp_path, capsys) -> None:
    argv = ["simulate", "--description", str(GO2), "--output", str(tmp_path / "x"), "--duration", "1"]
    assert cli.main(argv) == 2
    assert "has no IMU sensor" in capsys.readouterr().err
    assert cli.main(["simulate", "--srdf", "a.srdf", "--output", str(tmp_path / "y")]) == 2
    assert "--srdf goes with --description" in capsys.readouterr().err
    assert cli.main(["simulate", "--robot", "go1", "--imu", "imu_snsor", "--output", str(tmp_path / "z")]) == 2
    assert "did you mean 'imu_sensor'" in capsys.readouterr().err


def test_simulate_a_bundled_robot_with_a_declared_imu(tmp_path, capsys) -> None:
    """The Go1 with its IMU replaced by one declared 5 cm above the trunk: the run's IMU is that one."""
    out = tmp_path / "go1"
    argv = ["simulate", "--robot", "go1", "--gait", "stand", "--duration", "0.5", "--output", str(out)]
    argv += ["--set", "declared_imu.link=trunk", "--set", "declared_imu.pose=[0, 0, 0.05, 0, 0, 0]"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    run = yaml.safe_load((out / "run.yaml").read_text())
    assert run["frames"]["imu"] == "declared_imu" and run["frames"]["imu_link"] == "trunk"


@pytest.mark.parametrize("option", [["--imu", "imu"], ["--config", "a.yaml"], ["--set", "contact.source=torque"]])
def test_robot_options_without_a_description_are_an_error(option: list[str], capsys) -> None:
    """Without a DESCRIPTION info prints versions: an option about a robot would be silently ignored."""
    assert cli.main(["info", *option]) == 2
    assert "need a DESCRIPTION" in capsys.readouterr().err


def test_info_says_which_frame_of_a_foot_body_it_kept(capsys) -> None:
    """A biped whose feet each have an ``*_foot`` link and an ``*_sole`` frame 5 cm below it on the same body: info's
    text names the one kept and the one dropped (the core's ``foot_frames_merged``, an info event, was only in the
    JSON)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("biped_urdf", REPO / "test" / "estimation" / "biped_urdf.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert cli.main(["info", module.biped_urdf()]) == 0
    out = capsys.readouterr().out
    assert "feet           2: ['l_sole', 'r_sole']" in out
    assert "l_sole (not l_foot); r_sole (not r_foot)" in out


def test_simulate_the_biped_with_a_declared_imu_or_an_unknown_imu_name(tmp_path, capsys) -> None:
    """--robot talos takes the IMU options as the quadrupeds do (it said 'unknown robot talos' before)."""
    out = tmp_path / "talos"
    argv = ["simulate", "--robot", "talos", "--gait", "stand", "--duration", "0.3", "--output", str(out)]
    declared = ["--set", "declared_imu.link=base_link", "--set", "declared_imu.pose=[0, 0, 0.1, 0, 0, 0]"]
    assert cli.main([*argv, *declared]) == 0
    capsys.readouterr()
    run = yaml.safe_load((out / "run.yaml").read_text())
    assert run["frames"]["imu"] == "declared_imu" and run["frames"]["imu_link"] == "base_link"
    assert cli.main([*argv, "--imu", "imu_sensr", "--overwrite"]) == 2
    assert "has no IMU 'imu_sensr' (did you mean 'imu_sensor'?)" in capsys.readouterr().err


def test_info_of_a_bundled_robot_by_name(capsys) -> None:
    """``info --robot go1`` reports the bundled Go1 with its settings file: config/go1.yaml sets
    ``ekf.use_description_noise: false``, so the gyro bias prior is not the description's (its SDF bias stddev,
    9.7e-6 rad/s, which the description alone gives); a bare ``go1`` that is no file says to use --robot."""
    assert cli.main(["info", "--robot", "go1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["name"] == "go1" and len(report["feet"]) == 4
    assert report["imu"]["filter_noise"]["gyro_bias_prior_std_rad_s"] == [0.0, 0.0, 0.0]
    assert cli.main(["info", str(REPO / "config" / "robots" / "go1.urdf.xacro"), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["imu"]["filter_noise"]["gyro_bias_prior_std_rad_s"] == [9.7e-06, 9.7e-06, 9.7e-06]
    assert cli.main(["info", "go1"]) == 2
    assert "no such file 'go1': for the bundled robot, use --robot go1" in capsys.readouterr().err
    assert cli.main(["info", "--robot", "go2"]) == 2
    assert "error: unknown bundled robot 'go2' (--robot); known: anymal_c, go1, solo12" in capsys.readouterr().err
