"""Replay with the IMU chosen (``--imu``) or declared by settings (``declared_imu.*``), end to end on the
session's simulated Go1 trot: a declared IMU equal to the description's gives the same trajectory."""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml

from robot_state_estimator.description import load_description
from robot_state_estimator.tools import cli


def _bare_description(run_dir: Path, tmp_path: Path) -> Path:
    xml = (run_dir / "robot_description.urdf").read_text()
    bare = re.sub(r"<gazebo reference=\"imu_link\">.*?</gazebo>", "", xml, flags=re.S)
    assert bare != xml
    path = tmp_path / "no_imu.urdf"
    path.write_text(bare)
    return path


def _declared_config(run_dir: Path, tmp_path: Path) -> Path:
    spec = load_description(run_dir / "robot_description.urdf").imu
    rate = spec.update_rate
    gyro, acc = spec.angular_velocity_noise[0], spec.linear_acceleration_noise[0]
    params = {
        "imu_name": spec.name,
        "declared_imu": {
            "link": "imu_link",
            "frame_id": spec.frame_id,  # what the bag's IMU messages carry (imu_sensor)
            "update_rate_hz": rate,
            "gyro_noise_density_rad_s_sqrt_hz": gyro.stddev / math.sqrt(rate),
            "accel_noise_density_m_s2_sqrt_hz": acc.stddev / math.sqrt(rate),
            "gyro_bias_instability_rad_s": gyro.bias_stddev,
            "accel_bias_instability_m_s2": acc.bias_stddev,
        },
    }
    path = tmp_path / "declared.yaml"
    path.write_text(yaml.safe_dump({"/**/robot_state_estimator": {"ros__parameters": params}}))
    return path


def test_replay_with_a_declared_imu_equals_the_description_imu(sim_run, tmp_path, capsys) -> None:
    run_dir, _run = sim_run
    bag = str(run_dir / "bag")
    ref_tum, tum = tmp_path / "ref.tum", tmp_path / "declared.tum"
    assert cli.main(["replay", bag, "--no-ground-truth", "--tum", str(ref_tum)]) == 0
    bare = _bare_description(run_dir, tmp_path)
    config = _declared_config(run_dir, tmp_path)
    argv = ["replay", bag, "--description", str(bare), "--config", str(config), "--no-ground-truth"]
    assert cli.main([*argv, "--tum", str(tum)]) == 0
    out = capsys.readouterr().out
    assert "event imu_noise_assumed (warn)" in out  # the random walks were not declared: defaults assumed
    assert tum.read_text().splitlines()[1:] == ref_tum.read_text().splitlines()[1:]  # same estimates (header apart)
    assert len(tum.read_text().splitlines()) > 1000


def test_replay_without_the_declaration_names_the_fix(sim_run, tmp_path, capsys) -> None:
    run_dir, _run = sim_run
    bare = _bare_description(run_dir, tmp_path)
    assert cli.main(["replay", str(run_dir / "bag"), "--description", str(bare), "--no-ground-truth"]) == 2
    err = capsys.readouterr().err
    assert "has no IMU sensor" in err and "declared_imu.link" in err
    argv = ["replay", str(run_dir / "bag"), "--description", str(bare), "--no-ground-truth"]
    assert cli.main([*argv, "--set", "declared_imu.link=imu_lnk"]) == 2
    assert "declared_imu.link 'imu_lnk' is not a link or frame" in capsys.readouterr().err
    assert cli.main([*argv, "--set", "declared_imu.link=imu_link", "--set", "declared_imu.update_rate_hz=-1"]) == 2
    assert "declared_imu.update_rate_hz must be finite and >= 0" in capsys.readouterr().err


def test_replay_imu_option_chooses_among_several(sim_run, tmp_path, capsys) -> None:
    run_dir, _run = sim_run
    xml = (run_dir / "robot_description.urdf").read_text()
    second = '<gazebo reference="trunk"><sensor name="imu2" type="imu"><pose>0 0 0.05 0 0 0</pose></sensor></gazebo>'
    two = tmp_path / "two_imus.urdf"
    two.write_text(xml.replace("</robot>", second + "</robot>"))
    argv = ["replay", str(run_dir / "bag"), "--description", str(two), "--no-ground-truth"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "has 2 IMUs" in err and "--imu NAME" in err
    assert cli.main([*argv, "--imu", "imu_sensr"]) == 2
    assert "did you mean 'imu_sensor'" in capsys.readouterr().err
    tum = tmp_path / "chosen.tum"
    assert cli.main([*argv, "--imu", "imu_sensor", "--tum", str(tum)]) == 0
    assert len(tum.read_text().splitlines()) > 1000
