"""Replay of a simulated Go1 trot with foot wrench sensors (WrenchStamped per foot, in several frames of the
description, seeded noise) and the gait's contact schedule: the contacts and forces against the simulator's ground
truth (its dynamics, not the estimator's model), and bad foot inputs named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robot_state_estimator.estimation import EstimatorSettings
from robot_state_estimator.estimation.settings import ContactSettings
from robot_state_estimator.simulation.bag import write_run_bag
from robot_state_estimator.tools.replay import ReplayError, ReplayOptions, replay

#: the wrench of each foot in another frame: the base (moves with all joints), the calf (fixed to the foot), the
#: thigh (moves with the knee), the foot itself
FRAMES = {"FL_foot": "base", "FR_foot": "FR_calf", "RL_foot": "RL_thigh"}
NOISE_N = 2.0


@pytest.fixture(scope="module")
def foot_bag(sim_run: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    _, run = sim_run
    out = Path(tmp_path_factory.mktemp("feet")) / "go1_trot_feet"
    write_run_bag(
        run, out, foot_wrenches=True, foot_wrench_frames=FRAMES, foot_wrench_noise_n=NOISE_N, contact_schedule=True
    )
    return out, run


def _replay(bag: Path, settings: EstimatorSettings, **opts: Any) -> tuple[Any, list[tuple[int, list[bool], Any]]]:
    feet: list[tuple[int, list[bool], Any]] = []

    def on_estimate(e: Any, odometry: bool, contacts: bool) -> None:
        if contacts:
            feet.append((e.stamp_ns, [f.in_contact for f in e.feet], np.array([f.force_in_world for f in e.feet])))

    result = replay(
        bag / "bag",
        description=str(bag / "robot_description.urdf"),
        settings=settings,
        options=ReplayOptions(progress=False, **opts),
        on_estimate=on_estimate,
    )
    return result, feet


def _truth(run: Any, stamps: list[int]) -> tuple[np.ndarray, np.ndarray]:
    k = np.searchsorted(run.stamps_ns, stamps)
    assert np.array_equal(run.stamps_ns[k], stamps)
    return run.contact[k], run.contact_forces_world[k]


def test_wrench_sensors_in_several_frames_give_the_true_contacts_and_forces(foot_bag: tuple[Path, Any]) -> None:
    bag, run = foot_bag
    result, feet = _replay(bag, EstimatorSettings())
    assert result.events.get("foot_wrench_unknown_frame", 0) == 0 and not result.skipped
    stamps = [s for s, _, _ in feet]
    contact, force = _truth(run, stamps)
    measured = np.array([c for _, c, _ in feet])
    after = np.asarray(stamps) > run.stamps_ns[0] + 1.5e9  # once the filter runs (initialised, trotting)
    agreement = (measured[after] == contact[after]).mean()
    assert agreement > 0.98, agreement
    # the published force is the measured one, moved to the foot and rotated into the world with the filter's
    # attitude: the truth within the sensor noise and the attitude error (a few mrad of 60 N)
    err = np.array([f for _, _, f in feet])[after] - force[after]
    assert np.abs(err).mean() < NOISE_N and np.percentile(np.abs(err), 99) < 4 * NOISE_N + 1.0


def test_the_contact_schedule_decides_and_disagreements_are_counted(foot_bag: tuple[Path, Any]) -> None:
    """contact.source schedule on the gait's schedule: the contacts are the schedule's at every joint step; the
    force (the joint torques here) is compared with it and agrees (the disagreements are counted in the core's tests,
    test_contact_inputs.py)."""
    bag, run = foot_bag
    result, feet = _replay(bag, EstimatorSettings(contact=ContactSettings(source="schedule")), use_foot_wrenches="no")
    stamps = [s for s, _, _ in feet]
    contact, _ = _truth(run, stamps)
    assert np.array_equal(np.array([c for _, c, _ in feet]), contact)
    assert result.events.get("contact_schedule_disagrees", 0) == 0
    assert result.events.get("contact_source_unavailable", 0) == 0
    # even with no tolerance: the simulated torques put every touch-down and lift-off at the schedule's joint sample
    result, _ = _replay(
        bag,
        EstimatorSettings(contact=ContactSettings(source="schedule", schedule_disagreement_s=0.0)),
        use_foot_wrenches="no",
    )
    assert result.events.get("contact_schedule_disagrees", 0) == 0


def test_missing_inputs_are_named(foot_bag: tuple[Path, Any], sim_run: Any) -> None:
    plain, _ = sim_run
    with pytest.raises(ReplayError, match="no contact schedule topic /contact_schedule"):
        _replay(plain, EstimatorSettings(contact=ContactSettings(source="schedule")))
    with pytest.raises(ReplayError, match="lacks the foot wrench topics"):
        _replay(plain, EstimatorSettings(), use_foot_wrenches="yes")
    bag, _ = foot_bag
    with pytest.raises(ReplayError, match="lacks '\\{foot\\}'"):
        _replay(bag, EstimatorSettings(), node_params={"foot_wrench_topics": ["/wrench"]})


def test_biped_ankle_sensors_give_the_true_contacts_and_wrenches(tmp_path: Path) -> None:
    """A simulated Talos walk (flat soles, 6-D ground truth wrenches) with its force/torque sensors where a humanoid
    has them: the left one in the shank link before the ankle roll joint (its transform to the sole changes with
    the ankle angle, so the configuration of each joint sample matters), the right one in the foot link above the
    sole (a constant offset); 5 N of force noise. The contacts and the sole wrenches (force and moment about the
    sole origin) are the simulator's within the noise."""
    from robot_state_estimator.simulation import generator
    from robot_state_estimator.simulation.settings import SimulationSettings

    run = generator.simulate(SimulationSettings(robot="talos", gait="walk", duration_s=3.0, seed=1, noise=True))
    frames = {"left_sole_link": "leg_left_5_link", "right_sole_link": "leg_right_6_link"}
    write_run_bag(run, tmp_path / "talos", foot_wrenches=True, foot_wrench_frames=frames, foot_wrench_noise_n=5.0)
    wrenches: list[Any] = []
    result = replay(
        tmp_path / "talos" / "bag",
        description=str(tmp_path / "talos" / "robot_description.urdf"),
        settings=EstimatorSettings(),
        options=ReplayOptions(progress=False),
        on_estimate=lambda e, o, c: wrenches.append((e.stamp_ns, e.feet)) if c else None,
    )
    assert not result.skipped and "foot_wrench_unknown_frame" not in result.events
    stamps = [s for s, _ in wrenches]
    contact, _ = _truth(run, stamps)
    k = np.searchsorted(run.stamps_ns, stamps)
    after = np.asarray(stamps) > run.stamps_ns[0] + 1e9
    measured = np.array([[f.in_contact for f in feet] for _, feet in wrenches])
    assert (measured[after] == contact[after]).mean() > 0.99
    w = np.array([[f.wrench_in_foot for f in feet] for _, feet in wrenches])[after]
    err = np.abs(w - run.contact_wrenches_in_foot[k][after])
    assert err[..., :3].mean() < 5.0 and err[..., 3:].mean() < 1.0, (err[..., :3].mean(), err[..., 3:].mean())
