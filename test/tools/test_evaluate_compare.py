"""``evaluate EST1 EST2 ... GT``: several runs in one table, one JSON and one set of figures (as evo_ape with several
files), with the numbers of known perturbations of a simulated run's ground truth."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from robot_state_estimator.evaluation import comparison, plot_series, plots_compare
from robot_state_estimator.evaluation.ground_truth import load_odometry_topic
from robot_state_estimator.tools import evaluate, replay

Z_RATE = 0.002  # m/s, the z error ramp of the perturbed run


def _args(argv):
    parser = argparse.ArgumentParser()
    evaluate.add_arguments(parser)
    return parser.parse_args(argv)


def _table_row(text: str, name: str) -> list[str]:
    (line,) = [x for x in text.splitlines() if x.strip().startswith(name)]
    return line.strip()[len(name) :].split()


@pytest.fixture(scope="module")
def runs(sim_run, tmp_path_factory):
    """The simulated run's bag (its ground-truth topic as an estimate: zero error) and a TUM of the ground truth
    with a z error growing at Z_RATE (the 4-DoF alignment removes its mean, nothing else: z only shifts)."""
    run_dir, _run = sim_run
    tmp = tmp_path_factory.mktemp("compare")
    gt = load_odometry_topic(run_dir / "bag").trajectory
    z_err = Z_RATE * (gt.t_s - gt.t_s[0])
    p = gt.p_world_base + np.column_stack([np.zeros_like(z_err), np.zeros_like(z_err), z_err])
    tum = tmp / "drifting.tum"
    np.savetxt(tum, np.column_stack([gt.t_s, p, gt.quat_world_base_xyzw]), fmt="%.9f")
    return run_dir, tmp, tum


def test_several_estimates_make_one_table_one_json_and_one_figure(runs, capsys):
    run_dir, tmp, tum = runs
    bag = run_dir / "bag"
    args = _args(
        [
            str(bag),
            str(tum),
            str(bag),
            "--est-topic",
            "/ground_truth/odom",
            "--labels",
            "truth",
            "drifting",
            "--plots",
            str(tmp / "plots"),
            "--json",
            str(tmp / "cmp.json"),
        ]
    )
    assert evaluate.run(args) == 0
    out = capsys.readouterr().out
    header = next(x for x in out.splitlines() if x.strip().startswith("metric")).split()
    assert header == ["metric", "truth", "drifting"]
    ate = _table_row(out, "ATE 4-DoF RMSE [m]")
    assert float(ate[0]) == 0.0
    duration = float(_table_row(out, "duration [s]")[1])
    # RMS of a centred ramp over the run: rate * T / sqrt(12)
    assert float(ate[1]) == pytest.approx(Z_RATE * duration / math.sqrt(12), abs=1e-4)
    # the bag has velocities, the TUM file none
    assert _table_row(out, "velocity RMSE, base frame [m/s]") == ["0.0000", comparison.NA]
    doc = json.loads((tmp / "cmp.json").read_text())
    assert [r["label"] for r in doc["runs"]] == ["truth", "drifting"]
    m = doc["runs"][1]["metrics"]
    n = m["n_pairs"]  # RMS of a centred ramp sampled evenly n times over T: rate T sqrt((n + 1) / (12 (n - 1)))
    assert m["ate_4dof"]["trans"]["rmse"] == pytest.approx(
        Z_RATE * m["duration_s"] * math.sqrt((n + 1) / (12 * (n - 1))), rel=1e-6
    )
    for name in ("trajectories.png", "errors.png", "truth/position_error.png", "drifting/attitude_error.png"):
        assert (tmp / "plots" / name).stat().st_size > 10_000, name
    assert (tmp / "plots" / "truth" / "velocity_error.png").exists()
    assert not (tmp / "plots" / "drifting" / "velocity_error.png").exists()  # no velocity in a TUM file


def test_the_comparison_figure_draws_each_runs_error(runs):
    run_dir, _, tum = runs
    bag = run_dir / "bag"
    evaluated = [
        evaluate.evaluate_files(bag, bag, est_topic="/ground_truth/odom"),
        evaluate.evaluate_files(tum, bag),
    ]
    comps = [plot_series.compare(est, replay.aligned_ground_truth(gt, res).trajectory) for res, gt, est in evaluated]
    fig = plots_compare.errors_figure(["truth", "drifting"], comps, t0=0.0)
    lines = {line.get_gid(): line for ax in fig.axes for line in ax.get_lines()}
    assert set(lines) == {
        "truth:position",
        "truth:rotation",
        "truth:velocity",
        "drifting:position",
        "drifting:rotation",
    }
    np.testing.assert_allclose(lines["truth:position"].get_ydata(), 0.0, atol=1e-9)
    t = lines["drifting:position"].get_xdata()
    z = Z_RATE * (t - t[0])
    np.testing.assert_allclose(lines["drifting:position"].get_ydata(), np.abs(z - z.mean()), atol=2e-5)
    # the legend's RMSE is the table's ATE
    res = evaluated[1][0]
    assert f"RMSE {res['ate_4dof']['trans']['rmse']:.3g} m" in lines["drifting:position"].get_label()
    fig.savefig("/dev/null")


def test_labels_default_to_distinct_file_names(tmp_path):
    assert comparison.run_labels(["a/est.tum", "b/other.tum"]) == ["est", "other"]
    assert comparison.run_labels(["a/est.tum", "b/est.tum"]) == ["a/est", "b/est"]
    with pytest.raises(ValueError, match="2 labels for 3 estimates"):
        comparison.run_labels(["x", "y", "z"], ["a", "b"])


def test_a_wrong_number_of_labels_is_one_error_line(runs, capsys):
    run_dir, _, tum = runs
    assert evaluate.run(_args([str(tum), str(tum), str(run_dir / "bag"), "--labels", "one"])) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["robot-state-estimator evaluate: error: --labels gives 1 labels for 2 estimates"]


def test_plots_into_an_input_are_refused(runs, capsys):
    run_dir, _, tum = runs
    bag = run_dir / "bag"
    assert evaluate.run(_args([str(tum), str(bag), "--plots", str(bag)])) == 2
    err = capsys.readouterr().err
    assert f"--plots {bag} would write into the ground truth {bag}: choose another folder" in err


def test_one_estimate_keeps_the_single_run_table(runs, capsys):
    run_dir, _, tum = runs
    assert evaluate.run(_args([str(tum), str(run_dir / "bag")])) == 0
    out = capsys.readouterr().out
    assert f"{tum} against" in out and "ATE 4-DoF RMSE" in out and "metric" not in out.split("\n")[1]


def test_caveats_follow_the_table_once_for_the_runs_sharing_them():
    """A ground truth without stamps makes short-range RPE meaningless (``metrics.metric_caveats``): said once."""
    rpe = {"delta": 1.0, "unit": "s", "trans": {"n": 10, "rmse": 0.1}, "rot_deg": {"rmse": 1.0}}
    base = {"time_alignment": {"mode": "offset+rate"}, "duration_s": 20.0, "path_length_m": 10.0, "rpe": [rpe]}
    short = {**base, "path_length_m": 0.5}
    text = comparison.format_comparison(["a", "b"], [base, short])
    lines = [x.strip() for x in text.splitlines() if "caveat" in x]
    assert len([x for x in lines if x.startswith("caveat (all runs) RPE 1 s: not meaningful")]) == 1, lines
    assert any(x.startswith("caveat (b) ATE 4-DoF % of path: not meaningful") for x in lines), lines
    assert not any(x.startswith("caveat (a) ATE") for x in lines)


def test_nees_rows_follow_the_parts_the_runs_have():
    a = {"nees": {"velocity": {"mean": 2.5, "dof": 3}, "roll_pitch": {"mean": 1.9, "dof": 2}}}
    b = {"nees": {"velocity": {"mean": 3.5, "dof": 3}}}
    rows = dict(comparison.comparison_rows([a, b]))
    assert rows["NEES velocity (3 DoF, mean)"] == ["2.50", "3.50"]
    assert rows["NEES roll/pitch (2 DoF, mean)"] == ["1.90", comparison.NA]
