"""Unstamped motion capture on a slice of the real Go1 trot (../shared/data/go1_trot): the slice is time-aligned
as the whole recording is, and ``evaluate`` gives replay's metrics.

One import and one replay of a 10 s slice (rows 4000:8000, 52.6 .. 62.6 s: mid-trot, two turns) serve every
test; the whole recording's alignment needs only its gyroscope and the motion capture (no second replay).
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

from robot_state_estimator import evaluation as M
from robot_state_estimator.common.paths import config_dir
from robot_state_estimator.evaluation.ground_truth import load_unstamped_csv
from robot_state_estimator.tools import csv_import, evaluate, replay

ROWS = slice(4000, 8000)

pytestmark = [pytest.mark.data, pytest.mark.slow]


@pytest.fixture(scope="module")
def sliced(go1_trot_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """``(folder, ReplayResult, metrics, stdout)`` of ``replay`` on the imported slice against the mocap CSV."""
    tmp = tmp_path_factory.mktemp("go1_slice")
    mapping = csv_import.load_mapping(config_dir() / "import" / "go1_trot.yaml")
    csv_import.import_csv(go1_trot_dir / "go1.csv", mapping, tmp / "bag", rows=ROWS)
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    argv = [str(tmp / "bag"), "--robot", "go1", "--ground-truth", str(go1_trot_dir / "go1_ground_truth.csv")]
    argv += ["--no-progress", "--tum", str(tmp / "est.tum"), "--output", str(tmp / "out"), "--time-align", "warp"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result, res = replay.run_cli(parser.parse_args(argv))
    return tmp, result, res, out.getvalue()


@pytest.fixture(scope="module")
def whole(sliced, go1_trot_dir: Path) -> tuple[M.TimeAlignment, M.Trajectory]:
    """The warp the whole run finds (the whole CSV's gyroscope z in the base frame against the mocap spread over
    the recording) and the mocap with its nominal stamps."""
    R_base_imu = np.asarray(sliced[1].description.imu.R_base_imu)
    info = {
        "source": str(go1_trot_dir / "go1.csv"),
        "source_columns": {"time": "Time(s)", "time_scale_ns": 1e9, "angular_velocity": ["BaseWx", "BaseWy", "BaseWz"]},
    }
    t_s, omega = csv_import.read_source_gyro(info)
    z = np.array([float(R_base_imu[2] @ w) for w in omega])
    gt = load_unstamped_csv(go1_trot_dir / "go1_ground_truth.csv", t_s[0], t_s[-1]).trajectory
    return M.align_time(None, gt, warp=True, reference_yaw_rate=(t_s, z)), gt


def test_a_slice_is_time_aligned_as_the_whole_recording(sliced, whole):
    _, result, res, out = sliced
    assert "span of the source recording" in out and "gyroscope of the whole source recording" in out
    whole, gt = whole
    ta = res["time_alignment"]
    assert ta["mode"] == "warp" and ta["signal"] == "gyro z (base frame)"
    np.testing.assert_allclose(ta["knots_s"][1], whole.knots_s[1], rtol=0, atol=1e-9)
    # so the slice's metrics are the whole run's restricted to the slice (its estimate against the same stamps)
    again = M.evaluate(result.log.trajectory(), whole.apply(gt), time_alignment="none")
    assert res["ate_4dof"]["trans"]["rmse"] == pytest.approx(again["ate_4dof"]["trans"]["rmse"], rel=1e-9)
    assert res["ate_4dof_pct"] < 1.3  # the whole run: 0.89 %


def test_the_slice_alone_finds_nearly_the_same_clock(sliced, whole):
    """Without the source recording (a bag not imported here), the warp fitted on the slice's own gyroscope
    maps the motion capture within tens of ms of the whole recording's inside the slice."""
    _, result, res, _ = sliced
    whole, gt = whole
    from robot_state_estimator.evaluation.ground_truth import GroundTruth

    unstamped = GroundTruth(gt, stamped=False)
    own = replay.evaluate_replay(result, unstamped, time_alignment="warp")
    t_own = M.TimeAlignment.from_dict(own["time_alignment"]).map_time(gt.t_s, gt.t_s[0])
    t_whole = whole.map_time(gt.t_s, gt.t_s[0])
    t0, t1 = result.input_span_s
    inside = (t_whole > t0 + 1.0) & (t_whole < t1 - 1.0)
    print(
        f"slice alone: clock within {1e3 * np.abs(t_own - t_whole)[inside].max():.0f} ms of the whole recording's; "
        f"ATE {own['ate_4dof']['trans']['rmse']:.4f} m vs {res['ate_4dof']['trans']['rmse']:.4f} m"
    )
    assert np.abs(t_own - t_whole)[inside].max() < 0.06
    assert own["ate_4dof"]["trans"]["rmse"] == pytest.approx(res["ate_4dof"]["trans"]["rmse"], rel=0.15)


def test_evaluate_agrees_with_replay_on_the_slice(sliced, go1_trot_dir):
    tmp, result, res, _ = sliced
    gt_csv = go1_trot_dir / "go1_ground_truth.csv"
    notes: list[str] = []
    res2, _, _ = evaluate.evaluate_files(
        tmp / "est.tum",
        gt_csv,
        input_bag=tmp / "bag",
        R_base_imu=result.description.imu.R_base_imu,
        notes=notes,
        time_alignment="warp",
    )
    assert any("span of the source recording" in n for n in notes)
    assert res2["ate_4dof"]["trans"]["rmse"] == pytest.approx(res["ate_4dof"]["trans"]["rmse"], rel=1e-6)
    # replay's output bag carries import_source.yaml: the same span without --input (aligned on the estimate)
    assert (tmp / "out" / csv_import.IMPORT_SOURCE_FILE).is_file()
    notes = []
    res3, _, _ = evaluate.evaluate_files(tmp / "out", gt_csv, notes=notes, time_alignment="warp")
    assert any("span of the source recording" in n for n in notes) and not any("WARNING" in n for n in notes)
    assert res3["time_alignment"]["signal"] == "estimate yaw rate"
    print(f"evaluate on the estimate's yaw: ATE {res3['ate_4dof']['trans']['rmse']:.4f} m")
    assert res3["ate_4dof"]["trans"]["rmse"] == pytest.approx(res["ate_4dof"]["trans"]["rmse"], rel=0.15)
