"""The kinematic contact fallback (no joint efforts, no foot sensors): foot heights above the lowest foot and foot
speeds relative to it (``contact.kinematic_*``), and the ``contacts_from_kinematics`` event."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from est_helpers import feed_run

from robot_state_estimator.estimation import ContactSettings, RobotStateEstimator, load_settings
from robot_state_estimator.estimation.contact import (
    ContactDetector,
    kinematic_contact_score,
    kinematic_foot_speed,
)
from robot_state_estimator.estimation.settings import SettingsError

simulation = pytest.importorskip("robot_state_estimator.simulation")

#: Go1 trot (step height 6 cm: about half of each swing is less than 3 cm above the stance feet)
TROT = dict(robot="go1", gait="trot", duration_s=4.0, settle_s=0.5, ramp_s=0.5, seed=3, noise=True)
#: the Go1's settings (config/go1.yaml): the leg noise of the real robot, so the chi-square gate lets swing feet at
#: up to ~0.4 m/s through; with it the height-only fallback went wrong (docs/ESTIMATOR.md, "Kinematic contacts")
GO1_SETTINGS = load_settings(Path(__file__).resolve().parents[2] / "config" / "go1.yaml")
HEIGHT_ONLY = dict(kinematic_on_speed_m_s=1e6, kinematic_off_speed_m_s=1e6)


def test_score_is_the_two_condition_hysteresis() -> None:
    th = dict(on_height_m=0.02, off_height_m=0.03, on_speed_m_s=0.2, off_speed_m_s=0.3)
    h = np.array([0.0, 0.0, 0.025, 0.04, 0.01, 0.0])
    s = np.array([0.0, 0.25, 0.1, 0.0, 0.5, 0.1])
    # x = max((h - 0.02) / 0.01, (s - 0.2) / 0.1)
    expected = [max(-2.0, -2.0), max(-2.0, 0.5), max(0.5, -1.0), max(2.0, -2.0), max(-1.0, 3.0), max(-2.0, -1.0)]
    np.testing.assert_allclose(kinematic_contact_score(h, s, **th), expected, atol=1e-12)
    # without speeds the height alone decides
    np.testing.assert_allclose(kinematic_contact_score(h, None, **th), (h - 0.02) / 0.01, atol=1e-12)
    # on the detector (on 0, off -1): low and still -> contact; low but fast -> lift-off; in between -> held
    det = ContactDetector(2, on_threshold=0.0, off_threshold=-1.0)
    step = [
        (np.array([0.0, 0.0]), np.array([0.0, 0.0]), [True, True]),  # both standing
        (np.array([0.0, 0.01]), np.array([0.0, 0.25]), [True, True]),  # foot 1 slowly moving: held
        (np.array([0.0, 0.01]), np.array([0.0, 0.35]), [True, False]),  # fast while low: lift-off
        (np.array([0.0, 0.01]), np.array([0.0, 0.25]), [True, False]),  # slowing: held off
        (np.array([0.0, 0.001]), np.array([0.0, 0.1]), [True, True]),  # low and still: touch-down
    ]
    for k, (hk, sk, want) in enumerate(step):
        assert det.update(k, -kinematic_contact_score(hk, sk, **th)).tolist() == want, k


def test_foot_speed_is_relative_to_the_lowest_foot() -> None:
    y = np.array([[0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.1, 0.0, 0.3], [0.5, 0.4, 0.0]])
    clearance = np.array([0.01, 0.0, 0.02, 0.005])
    np.testing.assert_allclose(kinematic_foot_speed(y, clearance), [0.0, 0.0, 0.5, 0.4], atol=1e-12)


def test_speed_thresholds_are_checked() -> None:
    with pytest.raises(SettingsError, match="kinematic_off_speed_m_s"):
        ContactSettings(kinematic_on_speed_m_s=0.3, kinematic_off_speed_m_s=0.2)
    with pytest.raises(SettingsError, match="kinematic_on_speed_m_s"):
        ContactSettings(kinematic_on_speed_m_s=-0.1)


@pytest.fixture(scope="module")
def go1_sim():
    return simulation.load_sim_robot("go1")


@pytest.fixture(scope="module")
def trot_run(go1_sim):
    return simulation.simulate(simulation.SimulationSettings(**TROT), robot=go1_sim)


def _run_without_efforts(robot, run, **contact) -> tuple[dict, RobotStateEstimator]:
    settings = dataclasses.replace(GO1_SETTINGS, contact=dataclasses.replace(GO1_SETTINGS.contact, **contact))
    est = RobotStateEstimator(
        robot.model, run.imu, run.feet, settings, base_link=run.base_link, foot_radii=run.foot_radii
    )
    return feed_run(est, run, use_effort=False), est


def _errors(out: dict, run) -> tuple[float, float, float]:
    """Velocity RMSE (m/s, base frame), contact precision and recall against the run's ground truth."""
    err = out["v"] - run.v[out["imu_gt"], :3]
    est = out["contacts"].astype(bool)
    gt = run.contact[out["joint_gt"]]
    tp = np.sum(est & gt)
    return float(np.sqrt(np.mean(np.sum(err**2, axis=1)))), tp / est.sum(), tp / gt.sum()


def test_trot_without_efforts(go1_sim, trot_run) -> None:
    """Without efforts the contacts come from the feet's heights and speeds: precision well above the height-only
    fallback's, the velocity error a third of it (config/go1.yaml, 4 s, SDF noise; docs/ESTIMATOR.md, "Kinematic
    contacts")."""
    out, est = _run_without_efforts(go1_sim, trot_run)
    assert est.contact_source == "kinematic"
    events = [(e.key, e.level) for e in est.pop_events() if e.key == "contacts_from_kinematics"]
    assert events == [("contacts_from_kinematics", "warn")]  # once, not per sample
    v_rmse, precision, recall = _errors(out, trot_run)
    out_h, _ = _run_without_efforts(go1_sim, trot_run, **HEIGHT_ONLY)
    v_rmse_h, precision_h, recall_h = _errors(out_h, trot_run)
    print(f"\nkinematic: v RMSE {v_rmse:.4f} m/s, P/R {precision:.3f}/{recall:.3f}; height only: "
          f"{v_rmse_h:.4f} m/s, {precision_h:.3f}/{recall_h:.3f}")  # fmt: skip
    assert np.isfinite(out["p"]).all()
    assert v_rmse < V_RMSE_BOUND
    assert precision > PRECISION_BOUND and recall > RECALL_BOUND
    # the height alone takes low swing feet for stance feet
    assert precision_h < precision and v_rmse_h > v_rmse


def test_no_event_with_efforts(go1_sim, trot_run) -> None:
    settings = GO1_SETTINGS
    est = RobotStateEstimator(
        go1_sim.model, trot_run.imu, trot_run.feet, settings, base_link=trot_run.base_link,
        foot_radii=trot_run.foot_radii,
    )  # fmt: skip
    feed_run(est, trot_run, use_effort=True)
    assert est.contact_source == "torque"
    assert "contacts_from_kinematics" not in {e.key for e in est.pop_events()}


#: measured: velocity RMSE 0.0063 m/s, precision 0.927, recall 1.000 (height only: 0.0183 m/s, 0.790, 1.000)
V_RMSE_BOUND = 0.01
PRECISION_BOUND = 0.9
RECALL_BOUND = 0.98
