"""``evaluate``: its help names every option; its notes name the span an unstamped ground truth is spread over."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest
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


def _odometry_bag(
    path: Path, t_ns: np.ndarray, yaw: np.ndarray, roll: float, v_in_base: np.ndarray, pose_std: float, twist_std: float
) -> Path:
    """An Odometry bag (topic ``/odom``): a base at the origin with attitude ``Rz(yaw) Rx(roll)``, the base-frame
    velocity ``v_in_base`` and diagonal covariances with the given standard deviations."""
    from robot_state_estimator.io import bags

    types = bags.default_types()
    pose_cov = (np.eye(6) * pose_std**2).ravel()
    twist_cov = (np.eye(6) * twist_std**2).ravel()
    with bags.BagWriter(path) as bag:
        for stamp, y in zip(t_ns, yaw):
            x, yq, z, w = Rotation.from_euler("ZX", [y, roll]).as_quat()
            sec, nanosec = divmod(int(stamp), 10**9)
            msg = types.Odometry(
                header=types.Header(stamp=types.Time(sec=sec, nanosec=nanosec), frame_id="odom"),
                child_frame_id="base",
                pose=types.PoseWithCovariance(
                    pose=types.Pose(
                        position=types.Point(x=0.0, y=0.0, z=0.3), orientation=types.Quaternion(x=x, y=yq, z=z, w=w)
                    ),
                    covariance=pose_cov,
                ),
                twist=types.TwistWithCovariance(
                    twist=types.Twist(
                        linear=types.Vector3(x=v_in_base[0], y=v_in_base[1], z=v_in_base[2]),
                        angular=types.Vector3(x=0.0, y=0.0, z=0.0),
                    ),
                    covariance=twist_cov,
                ),
            )
            bag.write("/odom", msg, int(stamp))
    return path


def test_an_odometry_bag_with_covariances_gets_its_nees_against_stamped_truth(tmp_path):
    """NEES of an estimate bag against a stamped truth bag, worked out by hand: a constant velocity error e with
    standard deviation s gives |e|^2 / s^2; a roll error a with attitude standard deviation r gives a^2 / r^2 for
    the attitude (3 DoF) and for roll/pitch (2 DoF)."""
    t_ns = 1_700_000_000_000_000_000 + np.arange(400) * 10_000_000
    yaw = 0.3 * np.sin(np.arange(400) / 50.0)
    truth = _odometry_bag(tmp_path / "truth", t_ns, yaw, 0.0, np.array([0.5, 0.0, 0.0]), 0.0, 0.0)
    est = _odometry_bag(tmp_path / "est", t_ns, yaw, 0.02, np.array([0.53, -0.04, 0.0]), 0.01, 0.05)
    res, _, _ = evaluate.evaluate_files(est, truth, est_topic="/odom", gt_topic="/odom")
    assert res["time_alignment"]["mode"] == "none"
    nees = res["nees"]
    assert nees["velocity"]["dof"] == 3 and nees["roll_pitch"]["dof"] == 2
    assert nees["velocity"]["mean"] == pytest.approx((0.03**2 + 0.04**2) / 0.05**2, rel=1e-9)
    assert nees["attitude"]["mean"] == pytest.approx(0.02**2 / 0.01**2, rel=1e-6)
    assert nees["roll_pitch"]["mean"] == pytest.approx(0.02**2 / 0.01**2, rel=1e-6)


def test_a_tum_estimate_has_no_nees(tmp_path):
    """Without covariances (TUM) there is nothing to test the error against."""
    t_ns = 1_700_000_000_000_000_000 + np.arange(200) * 10_000_000
    truth = _odometry_bag(tmp_path / "truth", t_ns, np.zeros(200), 0.0, np.array([0.5, 0.0, 0.0]), 0.0, 0.0)
    est = tmp_path / "est.tum"
    t_s = (t_ns // 10**9).astype(float) + (t_ns % 10**9) / 1e9
    np.savetxt(
        est, np.column_stack([t_s, np.zeros((200, 2)), np.full(200, 0.3), np.zeros((200, 3)), np.ones(200)]), fmt="%.6f"
    )
    res, _, _ = evaluate.evaluate_files(est, truth, gt_topic="/odom")
    assert "nees" not in res
