"""``tools.go1_nees``'s re-anchored run: from ``--after`` the height and position NEES compare the error since then
with a covariance since then (a second estimator that calls ``set_pose`` with its own pose at that moment).

The real-data test runs both estimators over the first 7.5 s of ../shared/data/go1_trot (re-anchor at 7 s); the
whole tool (its clock fit, 40-90 s) is not run here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_state_estimator.common.paths import config_dir
from robot_state_estimator.common.samples import Estimate
from robot_state_estimator.estimation import EstimatorSettings, load_settings
from robot_state_estimator.tools import go1_nees
from robot_state_estimator.tools.replay import ReplayError

#: s from the recording's first stamp: the re-anchor moment and the end of the slice
REANCHOR_S, END_S = 7.0, 7.5


def _estimate_with(pose_covariance: np.ndarray) -> Estimate:
    z = np.zeros(3)
    return Estimate(0, z, np.array([0.0, 0.0, 0.0, 1.0]), z, z, pose_covariance, np.eye(6), z, z)


def test_reanchor_covariance_keeps_roll_pitch_and_restarts_position_and_yaw() -> None:
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    P = A @ A.T  # dense: every cross term non-zero
    ekf = load_settings({"ekf.initial_position_std": 0.002, "ekf.initial_yaw_std": 0.003}).ekf
    C = go1_nees.reanchor_covariance(_estimate_with(P), ekf)
    expected = np.zeros((6, 6))
    expected[:3, :3] = np.eye(3) * 4e-6
    expected[3:5, 3:5] = P[3:5, 3:5]
    expected[5, 5] = 9e-6
    np.testing.assert_array_equal(C, expected)


def test_after_span_takes_roll_pitch_and_yaw_from_the_run_from_initialisation() -> None:
    first = {
        "yaw_deg": -3.0,
        "tilt_deg": np.zeros(2),
        "blocks": {"roll_pitch": 1, "yaw": 8, "height": 2, "position": 3},
        "smoothed_roll_pitch": 7,
        "timing": 10,
    }
    again = {
        "yaw_deg": -3.5,
        "tilt_deg": np.ones(2),
        "blocks": {"roll_pitch": 4, "yaw": 9, "height": 5, "position": 6},
        "timing": 11,
    }
    out = go1_nees.after_span(first, again)
    assert out["blocks"] == {"roll_pitch": 1, "yaw": 8, "height": 5, "position": 6}
    assert out["smoothed_roll_pitch"] == 7  # roll/pitch against the smoothed reference: the first run's too
    assert out["yaw_deg"] == -3.0 and out["reanchored_yaw_deg"] == -3.5
    assert out["tilt_deg"] is first["tilt_deg"]
    assert out["timing"] == 11  # height and position counting the clock's error: the re-anchored run's


def test_set_overrides_reach_the_settings_of_the_file() -> None:
    config = str(config_dir() / "go1.yaml")
    s = go1_nees.estimator_settings(config, ["ekf.foot_velocity_noise=0.07", "contact.source=kinematic"])
    assert s.ekf.foot_velocity_noise == 0.07  # go1.yaml has 0.1
    assert s.contact.source == "kinematic"  # go1.yaml has auto
    assert s.ekf.accel_noise_density == 0.02 and s.contact.sensor_on_threshold == 60.0  # the file's, kept
    assert go1_nees.estimator_settings(config) == load_settings(config)
    assert go1_nees.estimator_settings("none") == EstimatorSettings()


@pytest.mark.parametrize(
    ("item", "named"),
    [
        ("ekf.foot_velocity_nosie=0.1", "--set ekf.foot_velocity_nosie: no setting or node parameter has this name"),
        ("ekf.foot_velocity_noise", "--set expects NAME=VALUE, got 'ekf.foot_velocity_noise'"),
        ("max_time_gap_s=2", "--set max_time_gap_s: a node parameter"),
    ],
)
def test_bad_set_items_are_refused_by_name(item: str, named: str) -> None:
    with pytest.raises(ReplayError) as info:
        go1_nees.estimator_settings("none", [item])
    assert named in str(info.value)


def test_misspelt_set_ends_the_command_line_with_the_close_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "go1.csv").write_text("", encoding="utf-8")  # refused before it is read
    argv = ["--data", str(tmp_path), "--config", "none", "--set", "ekf.foot_velocity_nosie=0.1"]
    assert go1_nees.main(argv) == 2
    err = capsys.readouterr().err
    assert "--set ekf.foot_velocity_nosie: no setting or node parameter has this name" in err
    assert "did you mean 'ekf.foot_velocity_noise'" in err


@pytest.mark.data
@pytest.mark.slow
def test_reanchored_run_restarts_the_position_covariance(go1_trot_dir: Path, tmp_path: Path) -> None:
    lines = (go1_trot_dir / "go1.csv").read_text(encoding="utf-8").splitlines()
    t0 = float(lines[1].split(",", 1)[0])
    kept = [line for line in lines[1:] if float(line.split(",", 1)[0]) <= t0 + END_S]
    (tmp_path / "go1.csv").write_text("\n".join([lines[0], *kept]) + "\n", encoding="utf-8")
    config = str(config_dir() / "go1.yaml")
    first, again, _, _ = go1_nees.run(tmp_path, config, go1_nees.estimator_settings(config), reanchor_s=REANCHOR_S)
    assert again is not None
    P_first, P_again = np.asarray(first.pose_covariance), np.asarray(again.pose_covariance)
    np.testing.assert_array_equal(again.t_s, first.t_s)
    i = int(np.searchsorted(first.t_s, t0 + REANCHOR_S))  # the first IMU sample at or after 7 s
    assert first.t_s[i - 1] < t0 + REANCHOR_S <= first.t_s[i]
    # Before: the same estimator on the same samples.
    np.testing.assert_array_equal(again.p_world_base[:i], first.p_world_base[:i])
    np.testing.assert_array_equal(P_again[:i], P_first[:i])
    # At the re-anchor: its own pose, position and yaw variance (1 mm, 1 mrad)^2 as at initialisation, roll/pitch
    # as published (go1.yaml keeps the defaults' initial_position_std and initial_yaw_std), no cross terms.
    np.testing.assert_array_equal(again.p_world_base[i], first.p_world_base[i])
    np.testing.assert_allclose(again.quat_world_base_xyzw[i], first.quat_world_base_xyzw[i], atol=1e-12)
    P1, P2 = P_first[i], P_again[i]
    expected = np.zeros((6, 6))
    expected[[0, 1, 2, 5], [0, 1, 2, 5]] = 1e-6
    expected[3:5, 3:5] = P1[3:5, 3:5]
    np.testing.assert_allclose(P2, expected, rtol=1e-9, atol=1e-15)
    assert P1[0, 0] > 1e-3  # since initialisation: 5 cm
    # At the end: the legs' scale term of each run, s^2 |d|^2 (go1.yaml's leg_scale_std s, 3.6 %; d on the ground
    # plane from initialisation or the re-anchor), is a lower bound of its horizontal variance; the re-anchored run's
    # whole horizontal variance is below the first run's scale term alone (0.5 s of trot against 7 s).
    s2 = go1_nees.estimator_settings(config).ekf.leg_scale_std ** 2
    assert s2 > 0.0
    d1 = (first.p_world_base[-1] - first.p_world_base[0])[:2]
    d2 = (again.p_world_base[-1] - again.p_world_base[i])[:2]
    var1, var2 = (float(np.trace(P[-1][:2, :2])) for P in (P_first, P_again))
    assert var1 >= s2 * float(d1 @ d1) and var2 >= s2 * float(d2 @ d2)
    assert var2 < s2 * float(d1 @ d1)
