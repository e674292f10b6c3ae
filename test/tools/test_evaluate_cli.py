"""``evaluate``: its help names every option; its notes name the span an unstamped ground truth is spread over."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from robot_state_estimator.tools import evaluate


def test_every_option_has_a_help_text():
    parser = argparse.ArgumentParser()
    evaluate.add_arguments(parser)
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"{action.option_strings} has no help"
    assert "ground-truth nav_msgs/Odometry topic" in parser.format_help()


def _write_run(tmp_path: Path) -> tuple[Path, Path]:
    """A 20 s estimate (TUM, stamps 100.0 .. 119.99 s) with turns, and its ground truth as an unstamped CSV."""
    t = 100.0 + np.arange(0.0, 20.0, 0.01)
    yaw = 0.8 * np.sin(2 * np.pi * (t - 100.0) / 6.0)
    p = np.column_stack([np.cumsum(0.005 * np.cos(yaw)), np.cumsum(0.005 * np.sin(yaw)), np.full_like(t, 0.3)])
    q = Rotation.from_euler("z", yaw[:, None]).as_quat()
    est = tmp_path / "est.tum"
    np.savetxt(est, np.column_stack([t, p, q]), fmt="%.6f")
    gt = tmp_path / "mocap.csv"
    rows = np.column_stack([np.arange(len(t)), p, q])
    np.savetxt(gt, rows, fmt="%.6f", delimiter=",", header="seq,x,y,z,qx,qy,qz,qw", comments="")
    return est, gt


def test_without_input_the_note_names_the_estimates_span(tmp_path):
    est, gt = _write_run(tmp_path)
    notes: list[str] = []
    res, _, _ = evaluate.evaluate_files(est, gt, notes=notes)
    span_notes = [n for n in notes if "spread over" in n]
    assert len(span_notes) == 1, notes
    assert "the estimate's span (no --input) 100.000 .. 119.990 s" in span_notes[0]
    assert "replayed" not in span_notes[0]
    # the ground truth is the estimate itself: offset 0, rate 1
    assert abs(res["time_alignment"]["offset_s"]) < 0.02 and abs(res["time_alignment"]["scale"] - 1.0) < 1e-3
