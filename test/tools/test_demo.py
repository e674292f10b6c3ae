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
    # the figures an estimation engineer reads first (their content: test_plots.py, on the same replay path)
    for name in (
        "top_view",
        "height",
        "attitude",
        "velocity",
        "biases",
        "position_error",
        "attitude_error",
        "velocity_error",
        "contacts",
        "foot_forces",
        "nis",
    ):
        assert (out / "sim_results" / "plots" / f"{name}.png").stat().st_size > 10_000, name
    assert (out / "sim_results" / "estimate.tum").exists()


def test_a_cached_run_without_the_feet_model_is_not_reused(tmp_path):
    """Runs simulated before the simulator rolled spherical feet recorded no feet model (they had point feet):
    the demo must not reuse them; runs that record it are reusable."""
    old = tmp_path / "old.yaml"
    old.write_text("robot: go1\nfoot_radius_m: 0.0\n")
    new = tmp_path / "new.yaml"
    new.write_text("robot: go1\nfeet:\n  model: sphere\n  radii_m: [0.02, 0.02, 0.02, 0.02]\n")
    assert not demo._feet_model_recorded(old)
    assert not demo._feet_model_recorded(tmp_path / "missing.yaml")
    assert demo._feet_model_recorded(new)
