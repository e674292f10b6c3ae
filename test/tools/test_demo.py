"""The main-job command wires simulate -> replay -> metrics -> plots (reusing a cached simulated run)."""

from __future__ import annotations

import argparse
import json
import shutil

from robot_state_estimator.tools import demo


def test_demo_reuses_a_cached_run_and_reports_metrics(sim_run, tmp_path, capsys):
    run_dir, run = sim_run
    out = tmp_path / "demo"
    cached = out / f"sim_go1_trot_{run.settings.duration_s:g}s_seed{run.settings.seed}"
    shutil.copytree(run_dir, cached)
    args = argparse.Namespace(
        output=str(out),
        duration=run.settings.duration_s,
        seed=run.settings.seed,
        fresh=False,
        no_real=True,
        go1_data=None,
    )
    assert demo.run(args) == 0
    text = capsys.readouterr().out
    assert "reusing the simulated run" in text
    assert "ATE 4-DoF RMSE" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulated"]["metrics"]["ate_4dof"]["trans"]["rmse"] < 0.05
    assert (out / "sim_results" / "plots" / "top_view.png").exists()
    assert (out / "sim_results" / "estimate.tum").exists()
