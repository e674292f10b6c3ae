"""Importer round trip on a slice of the real Go1 CSV, and ground-truth loaders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_state_estimator import evaluation as M
from robot_state_estimator.common.paths import config_dir
from robot_state_estimator.evaluation import ground_truth
from robot_state_estimator.io import bags, messages
from robot_state_estimator.tools import csv_import

GO1_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "go1_trot"
GO1_CSV = GO1_DIR / "go1.csv"
needs_go1 = pytest.mark.skipif(not GO1_CSV.exists(), reason=f"real Go1 data not found at {GO1_DIR}")


def _mapping() -> csv_import.CsvMapping:
    return csv_import.load_mapping(config_dir() / "import" / "go1_trot.yaml")


@pytest.mark.data
@needs_go1
def test_go1_slice_round_trip(tmp_path):
    mapping = _mapping()
    rows = slice(100, 500)
    summary = csv_import.import_csv(GO1_CSV, mapping, tmp_path / "bag", rows=rows)
    assert summary.rows == 400
    table = csv_import.read_table(GO1_CSV, mapping, rows=rows)
    msgs = bags.read_messages_in_stamp_order(tmp_path / "bag", ["/imu/data", "/joint_states", "/foot_forces"])
    assert len(msgs) == 3 * 400
    imu = [messages.imu_sample_from_msg(m.msg) for m in msgs if m.topic == "/imu/data"]
    joints = [messages.joint_sample_from_msg(m.msg) for m in msgs if m.topic == "/joint_states"]
    feet = [messages.foot_force_sample_from_msg(m.msg) for m in msgs if m.topic == "/foot_forces"]
    stamps = np.array([s.stamp_ns for s in imu])
    np.testing.assert_array_equal(stamps, np.round(table["Time(s)"] * 1e9).astype(np.int64))
    assert [s.stamp_ns for s in joints] == stamps.tolist() == [s.stamp_ns for s in feet]
    np.testing.assert_array_equal(
        [s.angular_velocity for s in imu], np.column_stack([table[c] for c in ("BaseWx", "BaseWy", "BaseWz")])
    )
    np.testing.assert_array_equal(
        [s.linear_acceleration for s in imu], np.column_stack([table[c] for c in ("BaseAx", "BaseAy", "BaseAz")])
    )
    assert all(s.orientation_xyzw is None and s.frame_id == "imu_sensor" for s in imu)
    assert joints[0].names[:3] == ("FR_hip_joint", "FR_thigh_joint", "FR_calf_joint")
    np.testing.assert_array_equal(
        joints[7].position[joints[7].names.index("RL_calf_joint")], table["JointPosRL_calf"][7]
    )
    assert joints[0].velocity is None and joints[0].effort is None
    assert feet[0].feet == ("FR_foot", "FL_foot", "RR_foot", "RL_foot")
    np.testing.assert_array_equal([f.values[1] for f in feet], table["FL_Force"])


def test_mapping_errors_name_the_problem(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("time: {column: t, unit: fortnight}\nimu: {}\njoints: {}\n")
    with pytest.raises(csv_import.CsvImportError, match="fortnight"):
        csv_import.load_mapping(bad)
    table = tmp_path / "t.csv"
    table.write_text("t,wx\n0,1\n")
    with pytest.raises(csv_import.CsvImportError, match="not in the header"):
        csv_import.read_table(table, _mapping())


def test_tum_round_trip(tmp_path):
    t = np.linspace(1.0, 2.0, 11)
    traj = M.Trajectory(t, np.column_stack([t, 2 * t, 0 * t]), np.tile([0, 0, np.sin(0.2), np.cos(0.2)], (11, 1)))
    ground_truth.write_tum(tmp_path / "x.tum", traj)
    back = ground_truth.load_ground_truth(tmp_path / "x.tum").trajectory
    np.testing.assert_allclose(back.t_s, t, atol=1e-9)
    np.testing.assert_allclose(back.p_world_base, traj.p_world_base, atol=1e-8)
    np.testing.assert_allclose(back.quat_world_base_xyzw, traj.quat_world_base_xyzw, atol=1e-8)


@pytest.mark.data
@needs_go1
def test_go1_ground_truth_spread_over_the_recording():
    gt = ground_truth.load_ground_truth(GO1_DIR / "go1_ground_truth.csv", time_span_s=(42.5811, 68.0111))
    assert not gt.stamped
    assert len(gt.trajectory) == 1610
    assert gt.trajectory.t_s[0] == pytest.approx(42.5811) and gt.trajectory.t_s[-1] == pytest.approx(68.0111)
    # one full turn of yaw over the run (README)
    yaw = np.unwrap(M.yaw_of(gt.trajectory.quat_world_base_xyzw))
    assert abs(np.degrees(yaw[-1] - yaw[0])) == pytest.approx(360, abs=30)
    assert M.path_length(gt.trajectory.p_world_base) > 10.0


def test_go1_data_is_found_from_the_cwd_and_the_environment(tmp_path, monkeypatch):
    from robot_state_estimator.tools.demo import find_go1_data

    fake = tmp_path / "shared" / "data" / "go1_trot"
    fake.mkdir(parents=True)
    (fake / "go1.csv").write_text("x\n")
    (fake / "go1_ground_truth.csv").write_text("x\n")
    deep = tmp_path / "work" / "repo" / "sub"
    deep.mkdir(parents=True)
    assert find_go1_data(deep) == fake
    monkeypatch.setenv("RSE_GO1_DATA", str(fake))
    assert find_go1_data() == fake
    monkeypatch.setenv("RSE_GO1_DATA", str(tmp_path / "nowhere"))
    assert find_go1_data() is None


def test_replay_ground_truth_time_span_rules(tmp_path):
    from robot_state_estimator.tools import replay

    bag = tmp_path / "bag"
    bag.mkdir()
    span = (10.0, 20.0)
    # --time-span wins
    assert replay.ground_truth_time_span(bag, span, [5.0, 30.0])[0] == (5.0, 30.0)
    with pytest.raises(replay.ReplayError, match="--time-span"):
        replay.ground_truth_time_span(bag, span, [30.0, 5.0])
    # nothing recorded: the replayed span, with a clear warning
    got, note = replay.ground_truth_time_span(bag, span, None)
    assert got == span and note.startswith("WARNING") and "--time-span" in note
    # import-csv recorded a longer source: the input is a slice, the source span is used
    info = {
        "source": "rec.csv",
        "source_rows": 100,
        "source_span_s": [0.0, 40.0],
        "rows": [25, 50],
        "span_s": [10.0, 20.0],
    }
    csv_import.write_import_source(bag, info)
    assert csv_import.read_import_source(bag) == info
    got, note = replay.ground_truth_time_span(bag, span, None)
    assert got == (0.0, 40.0) and "slice" in note and "WARNING" not in note
    # the whole source: no warning
    csv_import.write_import_source(bag, {**info, "source_span_s": [10.0, 20.0]})
    got, note = replay.ground_truth_time_span(bag, span, None)
    assert got == span and "whole source" in note and "WARNING" not in note


@pytest.mark.data
@needs_go1
def test_replay_of_a_slice_against_unstamped_ground_truth(tmp_path):
    """One replay of rows 0:6000, evaluated as run_cli does (span rule, then the alignment signal) with the span
    recorded by import-csv, with the same span given explicitly, and without import_source.yaml."""
    import shutil

    from robot_state_estimator.evaluation.ground_truth import load_ground_truth
    from robot_state_estimator.tools import replay

    bag = tmp_path / "bag"
    csv_import.import_csv(GO1_CSV, _mapping(), bag, rows=slice(0, 6000))
    info = csv_import.read_import_source(bag)
    assert info["rows"] == [0, 6000] and info["source_rows"] > 6000
    assert info["source_span_s"][0] == info["span_s"][0] and info["source_span_s"][1] > info["span_s"][1] + 10
    settings, params = replay.split_config(replay.resolve_config(None, "go1"))
    result = replay.replay(
        bag,
        description=replay.resolve_description(bag, None, "go1"),
        settings=settings,
        options=replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, **params}, progress=False),
    )

    def evaluate(time_span: list[float] | None = None) -> tuple[dict, str, str]:
        span, note = replay.ground_truth_time_span(bag, result.input_span_s, time_span)
        gt = load_ground_truth(GO1_DIR / "go1_ground_truth.csv", time_span_s=span)
        R = result.description.imu.R_base_imu
        ref, ref_note = replay.alignment_reference(bag, result.input_span_s, R, result.gyro_yaw_rate)
        return replay.evaluate_replay(result, gt, reference_yaw_rate=ref), note, ref_note

    res, note, ref_note = evaluate()  # the span recorded by import-csv, aligned on the whole source
    assert "span of the source recording" in note and "WARNING" not in note
    assert "gyroscope of the whole source recording" in ref_note
    assert res["ate_4dof_pct"] < 2.0  # the full run gives about 0.9 %
    res_explicit, note, _ = evaluate(info["source_span_s"])
    assert "--time-span" in note and res_explicit["ate_4dof_pct"] == pytest.approx(res["ate_4dof_pct"])
    shutil.move(bag / csv_import.IMPORT_SOURCE_FILE, tmp_path / "elsewhere.yaml")
    res_slice, note, ref_note = evaluate()  # not known to be a slice: spread over the slice, with a warning
    assert "WARNING" in note and "--time-span" in note and ref_note == ""
    assert res_slice["ate_4dof_pct"] > 3 * res["ate_4dof_pct"]  # the nonsense the warning is about


def test_import_source_lets_a_slice_read_the_whole_source_gyroscope(tmp_path):
    """import_source.yaml of a slice records the time and gyroscope columns; read_source_gyro reads the whole
    source again with the importer's stamps (hand-made 5-row CSV, ms stamps with an offset)."""
    src = tmp_path / "rec.csv"
    src.write_text(
        "t_ms,wx,wy,wz,ax,ay,az,q1\n"
        + "".join(f"{1000 + 2.5 * k},{0.1 * k},{-0.1 * k},{0.01 * k},0,0,9.81,{0.5 * k}\n" for k in range(5))
    )
    mapping = tmp_path / "m.yaml"
    mapping.write_text(
        "time: {column: t_ms, unit: ms, offset_s: 2.0}\n"
        "imu: {frame_id: imu, angular_velocity: [wx, wy, wz], linear_acceleration: [ax, ay, az]}\n"
        "joints: {position: {j1: q1}}\n"
    )
    csv_import.import_csv(src, csv_import.load_mapping(mapping), tmp_path / "bag", rows=slice(1, 3))
    info = csv_import.read_import_source(tmp_path / "bag")
    assert info["rows"] == [1, 3] and info["source_rows"] == 5
    assert info["source_span_s"] == [3.0, 3.01] and info["span_s"] == [3.0025, 3.005]
    assert info["source_columns"]["angular_velocity"] == ["wx", "wy", "wz"]
    t_s, omega = csv_import.read_source_gyro(info)
    np.testing.assert_allclose(t_s, 3.0 + 0.0025 * np.arange(5), atol=1e-12)
    np.testing.assert_allclose(omega, np.column_stack([0.1, -0.1, 0.01]) * np.arange(5)[:, None], atol=1e-12)
    # an import without source_columns (older) or a moved source: None, the caller falls back
    assert csv_import.read_source_gyro({k: v for k, v in info.items() if k != "source_columns"}) is None
    assert csv_import.read_source_gyro({**info, "source": str(tmp_path / "moved.csv")}) is None
