"""``robot-state-estimator consistency``: the Monte Carlo from the command line, its JSON and its exit code."""

from __future__ import annotations

import json

from robot_state_estimator.tools import cli

BLOCKS = {"velocity", "height", "roll_pitch", "gyro_bias_xy", "accel_bias_xy", "accel_bias_z", "position_xy", "yaw"}


def test_one_short_run_at_400_hz_writes_its_blocks(tmp_path, capsys) -> None:
    out = tmp_path / "mc.json"
    code = cli.main(["consistency", "--runs", "1", "--duration", "2.5", "--imu-rate", "400", "--joint-rate", "400",
                     "--json", str(out)])  # fmt: skip
    doc = json.loads(out.read_text())
    assert doc["settings"]["imu_rate_hz"] == doc["settings"]["joint_rate_hz"] == 400.0
    assert doc["settings"]["n_runs"] == 1 and set(doc["blocks"]) == BLOCKS
    printed = capsys.readouterr().out
    assert "1 Go1 trots of 2.5 s with a real robot's errors (IMU 400 Hz, joints 400 Hz)" in printed
    assert all(line in printed for line in doc["summary"])
    over = [k for k, b in doc["blocks"].items() if k != "height" and b["time_average"] > b["band95_time_average"][1]]
    under = [k for k, b in doc["blocks"].items() if k != "height" and b["time_average"] < b["band95_time_average"][0]]
    assert (doc["verdict"]["over_confident"], doc["verdict"]["conservative"]) == (over, under)
    assert code == doc["verdict"]["exit_status"] == (1 if over else 0)
    assert "unobservable, the filter's stddev first -> last: x mm" in printed and "verdict: " in printed


def test_runs_that_end_before_the_evaluation_are_refused(capsys) -> None:
    assert cli.main(["consistency", "--runs", "2", "--duration", "1.0"]) == 2
    assert "--duration > 1.5 s" in capsys.readouterr().err
