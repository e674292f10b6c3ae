"""The slip report (issue 16.4, robot_state_estimator.estimation.slip): a simulated Go1 trot whose front-left foot
slides 12 cm in one stance is reported for that foot only, once; a clean trot is not."""

from __future__ import annotations

import dataclasses

import pytest
from est_helpers import feed_run

from robot_state_estimator.estimation import ContactSettings, EstimatorSettings, RobotStateEstimator, SettingsError
from robot_state_estimator.estimation.settings import EkfSettings
from robot_state_estimator.estimation.slip import SLIP_NIS_THRESHOLD, SlipDetector

simulation = pytest.importorskip("robot_state_estimator.simulation")

TROT = dict(robot="go1", gait="trot", duration_s=3.0, settle_s=0.5, ramp_s=0.5, seed=3, noise=True)
MS = 1_000_000


@pytest.fixture(scope="module")
def go1_sim():
    return simulation.load_sim_robot("go1")


def _slip_events(robot, **sim) -> tuple[list[int], list[str], object]:
    run = simulation.simulate(simulation.SimulationSettings(**TROT, **sim), robot=robot)
    settings = EstimatorSettings(contact=dataclasses.replace(ContactSettings(), source="torque"))
    est = RobotStateEstimator(robot.model, run.imu, run.feet, settings, base_link=run.base_link,
                              foot_radii=run.foot_radii)  # fmt: skip
    feed_run(est, run)
    return est.slip.episodes, [e.message for e in est.pop_events() if e.key == "foot_slipping"], run


def test_a_sliding_foot_is_reported_and_the_others_are_not(go1_sim) -> None:
    # the simulator's feet are at rest in stance except FL_foot, which slides 12 cm over 0.3 s (quintic profile:
    # 0.4 m/s mean, 0.75 m/s peak) from t = 2 s: physics the filter does not model, not draws from its noise model.
    # (8 cm over 0.3 s keeps the NIS high for 50 ms of 0.2 s: below the default fraction 0.5, not reported.)
    slip = simulation.SlipEvent(foot="FL_foot", start_s=2.0, duration_s=0.3, displacement_m=(0.12, 0.0))
    episodes, messages, run = _slip_events(go1_sim, slip=slip)
    assert run.slipping[:, 0].sum() > 200 and not run.slipping[:, 1:].any()  # the truth: FL slides, > 0.2 s
    assert episodes == [1, 0, 0, 0]
    assert len(messages) == 1 and messages[0].startswith("foot FL_foot slipping")


def test_a_clean_trot_is_not_reported(go1_sim) -> None:
    episodes, messages, _ = _slip_events(go1_sim)
    assert episodes == [0, 0, 0, 0] and messages == []


def test_the_rule_window_fraction_and_episodes() -> None:
    """The rule on NIS series made by hand: 500 Hz, 0.2 s window, 25 %: 25 high updates (50 ms) report, 20 do
    not; one report per episode; leaving contact ends it."""
    assert SLIP_NIS_THRESHOLD == pytest.approx(11.345, abs=1e-3)  # chi-square 99 %, 3 DoF
    det = SlipDetector(["a", "b"], 0.2, 0.25)
    t = 0
    reports = []

    def step(stance, nis):
        nonlocal t
        t += 2 * MS
        reports.append(det.update(t, stance, nis))

    for k in range(100):  # b high on 20 of every 100 updates (40 ms of each 200 ms): never reported
        step([0, 1], [1.0, 30.0 if k < 20 else 1.0])
    assert det.episodes == [0, 0] and not any(reports)
    for _ in range(100):  # a high for 200 ms: reported once, after 50 ms
        step([0, 1], [30.0, 1.0])
    assert det.episodes == [1, 0] and det.slipping == ("a",)
    assert sum(1 for r in reports if r) == 1
    step([1], [1.0])  # a lifts off: the episode ends
    assert det.slipping == ()
    for _ in range(30):  # a new contact, high again: a second episode
        step([0, 1], [30.0, 1.0])
    assert det.episodes == [2, 0]
    det.clear()
    assert det.slipping == () and det.episodes == [2, 0]


def test_the_settings_are_checked() -> None:
    with pytest.raises(SettingsError, match="slip_nis_fraction"):
        EkfSettings(slip_nis_fraction=0.0)
    with pytest.raises(SettingsError, match="slip_nis_window_s"):
        EkfSettings(slip_nis_window_s=-1.0)
    assert SlipDetector(["a"], 0.0, 0.25).update(1, [0], [100.0]) is None  # window 0: disabled
