"""The real Go1 trot (../shared/data/go1_trot, Cerberus 2.0 via SEROW): foot sensors as contact source,
joint velocities by finite differences, IMU aligned with the base (lever arm of the URDF's ``imu_link``).

Evaluation: time alignment (offset and rate, the ground truth has no stamps) and a 4-DoF (yaw +
translation) alignment with ``robot_state_estimator.evaluation`` when present, else a rough fallback
(ground-truth rows spread evenly over the recording, closed-form yaw + translation fit).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.samples import FootForceSample, ImuSample, JointSample
from robot_state_estimator.description import load_description
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation import EstimatorSettings, RobotStateEstimator, load_settings

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "go1_trot"
LEGS = ("FR", "FL", "RR", "RL")
FEET = tuple(f"{leg}_foot" for leg in LEGS)
JOINTS = tuple(f"{leg}_{j}_joint" for leg in LEGS for j in ("hip", "thigh", "calf"))

#: Bounds asserted, with a margin over what config/go1.yaml achieves with rolling spherical feet (radius 0.02 m
#: from the description: ATE 0.12 m = 0.96 % of the path, final error 0.13 m after the 4-DoF alignment; with
#: point feet it was 0.18 m = 1.40 % and 0.08 m); mim_estimation's prototype gets 1.34 m = 10.7 %.
ATE_PCT_BOUND = 1.3
FINAL_ERROR_BOUND_M = 0.25

pytestmark = [
    pytest.mark.data,
    pytest.mark.slow,
    pytest.mark.skipif(not (DATA / "go1.csv").is_file(), reason=f"real Go1 data not found at {DATA}"),
]


def load_csv() -> tuple[np.ndarray, dict[str, int]]:
    with open(DATA / "go1.csv", encoding="utf-8") as fh:
        header = fh.readline().strip().split(",")
    return np.loadtxt(DATA / "go1.csv", delimiter=",", skiprows=1), {h: i for i, h in enumerate(header)}


def run_estimator(
    go1_model: pin.Model, *, defaults: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, RobotStateEstimator, float]:
    """The whole recording; ``defaults``: the built-in settings and the bundled description (its IMU states the
    BMI088 datasheet noise), as a user without a config file gets them."""
    data, col = load_csv()
    desc = load_description(robot_description_path("go1"))
    if defaults:
        est = RobotStateEstimator.from_description(desc, EstimatorSettings())
    else:
        X_base_imu = go1_model.frames[go1_model.getFrameId("imu_link")].placement  # trunk = base here
        imu = ImuSpec(name="imu", link="imu_link", frame_id="imu_link", pose_in_base=X_base_imu, update_rate=400.0)
        settings = load_settings(REPO / "config" / "go1.yaml")
        # foot radii as from_description gives them (go1.yaml: foot_radius_m < 0 = from the description)
        radii = [desc.foot_radius(f) for f in FEET]
        assert radii == [0.02] * 4
        est = RobotStateEstimator(go1_model, imu, FEET, settings, base_link="base", foot_radii=radii)
    jcols = [col[f"JointPos{leg}_{j}"] for leg in LEGS for j in ("hip", "thigh", "calf")]
    fcols = [col[f"{leg}_Force"] for leg in LEGS]
    gcols = [col[c] for c in ("BaseWx", "BaseWy", "BaseWz")]
    acols = [col[c] for c in ("BaseAx", "BaseAy", "BaseAz")]
    t_out, p_out, q_out = [], [], []
    t0 = time.process_time()
    for row in data:
        stamp = round(row[0] * 1e9)
        est.add_foot_forces(FootForceSample(stamp, FEET, row[fcols]))
        est.add_joints(JointSample(stamp, JOINTS, row[jcols]))  # no velocities: finite differences
        e = est.add_imu(ImuSample(stamp, row[gcols], row[acols]))
        if e is not None:
            t_out.append(row[0])
            p_out.append(e.p_world_base)
            q_out.append(e.quat_world_base_xyzw)
    us_per_step = (time.process_time() - t0) / len(data) * 1e6
    return np.array(t_out), np.array(p_out), np.array(q_out), est, us_per_step


def evaluate(t: np.ndarray, p: np.ndarray, quat: np.ndarray, t_span: tuple[float, float]) -> dict[str, float]:
    try:
        from robot_state_estimator.evaluation import Trajectory
        from robot_state_estimator.evaluation import evaluate as evaluate_metrics
        from robot_state_estimator.evaluation.ground_truth import load_unstamped_csv
    except ImportError:
        return rough_evaluate(t, p, t_span)
    gt = load_unstamped_csv(DATA / "go1_ground_truth.csv", *t_span)
    res = evaluate_metrics(Trajectory(t, p, quat), gt.trajectory, time_alignment="offset+rate")
    return {
        "ate_m": res["ate_4dof"]["trans"]["rmse"],
        "ate_pct": res["ate_4dof_pct"],
        "final_m": res["final_error_4dof_m"],
        "path_m": res["path_length_m"],
        "z_rmse_m": res["ate_4dof"]["rmse_xyz"][2],
        "drift_pct": res["drift"]["final_drift_pct"],
    }


def rough_evaluate(t: np.ndarray, p: np.ndarray, t_span: tuple[float, float]) -> dict[str, float]:
    gt = np.loadtxt(DATA / "go1_ground_truth.csv", delimiter=",", skiprows=1)[:, 1:4]
    t_gt = np.linspace(*t_span, len(gt))
    est = np.stack([np.interp(t_gt, t, p[:, i]) for i in range(3)], axis=1)
    mu_e, mu_g = est.mean(0), gt.mean(0)
    a, b = est[:, :2] - mu_e[:2], gt[:, :2] - mu_g[:2]
    yaw = np.arctan2(np.sum(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]), np.sum(a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]))
    Rz = pin.rpy.rpyToMatrix(0, 0, yaw)
    aligned = (est - mu_e) @ Rz.T + mu_g
    err = np.linalg.norm(aligned - gt, axis=1)
    path = float(np.sum(np.linalg.norm(np.diff(gt, axis=0), axis=1)))
    ate = float(np.sqrt(np.mean(err**2)))
    return {
        "ate_m": ate,
        "ate_pct": 100 * ate / path,
        "final_m": float(err[-1]),
        "path_m": path,
        "z_rmse_m": float("nan"),
    }


def test_go1_real_trot(go1_model: pin.Model) -> None:
    t, p, quat, est, us_per_step = run_estimator(go1_model)
    assert np.isfinite(p).all() and np.isfinite(quat).all()
    assert est.last_estimate is not None
    for C in (est.last_estimate.pose_covariance, est.last_estimate.twist_covariance):
        assert np.linalg.eigvalsh(C).min() > 0.0
    events = {e.key for e in est.pop_events()}
    assert events <= {"initialized", "foot_gated"}, events
    res = evaluate(t, p, quat, (t[0] - 0.0, t[-1]))
    print(
        f"\nGo1 real trot: ATE {res['ate_m']:.3f} m = {res['ate_pct']:.2f} % of {res['path_m']:.1f} m, "
        f"final error {res['final_m']:.3f} m, origin-aligned final drift {res['drift_pct']:.2f} % of the path, "
        f"z RMSE {res['z_rmse_m']:.3f} m, {us_per_step:.0f} us/sample (CPU)"
    )
    assert res["ate_pct"] < ATE_PCT_BOUND
    assert res["final_m"] < FINAL_ERROR_BOUND_M


def test_go1_real_trot_with_the_built_in_defaults(go1_model: pin.Model) -> None:
    """Issue 15.6: no config file, the description's datasheet IMU noise: the legged-robot noise floor and the leg
    noise model keep the real trot at or below its 1.0 % ATE (measured 0.84 %; before the floor 1.98 %)."""
    t, p, quat, est, _ = run_estimator(go1_model, defaults=True)
    keys = {e.key for e in est.pop_events()}
    assert "imu_noise_below_floor" in keys  # the datasheet noise is named as far below what the filter uses
    res = evaluate(t, p, quat, (t[0], t[-1]))
    print(f"\nGo1 real trot, built-in defaults: ATE {res['ate_m']:.3f} m = {res['ate_pct']:.2f} %")
    assert res["ate_pct"] <= 1.0


#: The slice that starts mid-trot (as ``import-csv --rows 5000:`` gives it): 12.5 s into the recording.
SLICE_START_ROW = 5000


def run_rows(go1_model: pin.Model, data: np.ndarray, col: dict[str, int]) -> tuple[dict, RobotStateEstimator]:
    """Feed rows like :func:`run_estimator`; returns {stamp_ns: (v_B, roll-pitch)} and the estimator."""
    X_base_imu = go1_model.frames[go1_model.getFrameId("imu_link")].placement
    imu = ImuSpec(name="imu", link="imu_link", frame_id="imu_link", pose_in_base=X_base_imu, update_rate=400.0)
    settings = load_settings(REPO / "config" / "go1.yaml")
    est = RobotStateEstimator(go1_model, imu, FEET, settings, base_link="base", foot_radii=[0.02] * 4)
    jcols = [col[f"JointPos{leg}_{j}"] for leg in LEGS for j in ("hip", "thigh", "calf")]
    fcols = [col[f"{leg}_Force"] for leg in LEGS]
    gcols = [col[c] for c in ("BaseWx", "BaseWy", "BaseWz")]
    acols = [col[c] for c in ("BaseAx", "BaseAy", "BaseAz")]
    out = {}
    for row in data:
        stamp = round(row[0] * 1e9)
        est.add_foot_forces(FootForceSample(stamp, FEET, row[fcols]))
        est.add_joints(JointSample(stamp, JOINTS, row[jcols]))
        e = est.add_imu(ImuSample(stamp, row[gcols], row[acols]))
        if e is not None:
            q = e.quat_world_base_xyzw
            rpy = pin.rpy.matrixToRpy(pin.Quaternion(q[3], q[0], q[1], q[2]).matrix())
            out[stamp] = (e.v_base_in_base.copy(), rpy[:2])
    return out, est


def test_go1_real_slice_started_mid_trot(go1_model: pin.Model, go1_trot_dir: Path) -> None:
    """Rows 5000: of the recording start mid-trot (never static): the estimator initialises from the moving
    window after ekf.init_timeout_s (1 s) and then agrees with the run that saw the whole recording (reference:
    its base-frame velocity and roll/pitch, which do not depend on the unobservable yaw/position offsets).

    Achieved: first estimate 1.002 s into the slice; from 1.5 s in, velocity difference RMS 0.036 m/s
    (max 0.043 per axis) in 1.5-2 s, 0.031 m/s in 2-3 s, below 0.015 m/s after 3 s; roll/pitch within 0.037 rad.
    In the first 0.5 s after initialisation the filter is still converging (pitch up to ~0.2 rad off).
    """
    data, col = load_csv()
    full, _ = run_rows(go1_model, data, col)
    part, est = run_rows(go1_model, data[SLICE_START_ROW:], col)
    keys = {e.key for e in est.pop_events()}
    assert keys <= {"initialized_moving", "foot_gated"} and "initialized_moving" in keys, keys
    t0 = data[SLICE_START_ROW, 0]
    stamps = np.array(sorted(part))
    t = stamps * 1e-9 - t0
    assert 1.0 <= t[0] < 1.05
    later = stamps[t >= 1.5]
    dv = np.array([part[k][0] - full[k][0] for k in later])
    drp = np.array([part[k][1] - full[k][1] for k in later])
    assert np.sqrt(np.mean(np.sum(dv**2, axis=1))) < 0.06
    assert np.abs(dv).max() < 0.1
    assert np.abs(drp).max() < 0.07
