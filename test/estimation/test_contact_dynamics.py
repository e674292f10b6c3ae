"""Contact detection keeps swing-leg dynamics out of the decision (issue 16, item 6): with the default full-dynamics
force estimate (``M a + h`` by RNEA with the estimated base motion and joint accelerations, used when the joint
message carries velocities) the torque contacts of simulated trots keep precision and recall at or above 0.95 for
contact thresholds from half to twice the defaults; the gravity-only estimate (``contact.use_full_dynamics: false``)
does not at half the thresholds: swing-leg inertia reads as foot force. The ground truth is the simulator's contacts
(its gait plan), not the filter's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from est_helpers import feed_run

from robot_state_estimator.estimation import ContactSettings, EstimatorSettings, RobotStateEstimator

simulation = pytest.importorskip("robot_state_estimator.simulation")

#: (robot, forward speed m/s; None: the robot's default trot)
TROTS = [("go1", 1.0), ("anymal_c", None), ("solo12", None)]
SCALES = (0.5, 1.0, 2.0)


def precision_recall(robot, run, *, scale: float, full: bool, use_velocity: bool = True) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    defaults = ContactSettings()
    contact = dataclasses.replace(
        defaults,
        on_threshold=defaults.on_threshold * scale,
        off_threshold=defaults.off_threshold * scale,
        use_full_dynamics=full,
    )
    est = RobotStateEstimator(
        robot.model,
        run.imu,
        run.feet,
        EstimatorSettings(contact=contact),
        base_link=run.base_link,
        foot_radii=run.foot_radii,
    )
    out = feed_run(est, run, use_velocity=use_velocity)
    assert est.contact_source == "torque"
    estimated = out["contacts"].astype(bool)
    truth = run.contact[out["joint_gt"]]
    tp = np.sum(estimated & truth)
    return float(tp / estimated.sum()), float(tp / truth.sum())


@pytest.mark.parametrize(("robot_name", "speed"), TROTS)
def test_threshold_sweep_keeps_precision_and_recall(robot_name: str, speed: float | None) -> None:
    robot = simulation.load_sim_robot(robot_name)
    sim = dict(robot=robot_name, gait="trot", duration_s=4.0, seed=1, noise=True, speed_m_s=speed)
    run = simulation.simulate(simulation.SimulationSettings(**sim), robot=robot)
    assert ContactSettings().use_full_dynamics  # the default
    for scale in SCALES:
        precision, recall = precision_recall(robot, run, scale=scale, full=True)
        assert precision >= 0.95 and recall >= 0.95, (robot_name, scale, precision, recall)
    # gravity only: swing-leg inertia gives false contacts at half the thresholds
    precision, _ = precision_recall(robot, run, scale=0.5, full=False)
    assert precision < 0.9, precision


def test_differentiated_velocities_keep_gravity_only() -> None:
    """Without velocities in the joint message the force estimate is ``g(q)`` (the default setting unchanged): the
    same contacts as with the full dynamics switched off."""
    robot = simulation.load_sim_robot("go1")
    sim = dict(robot="go1", gait="trot", duration_s=2.0, seed=2, noise=True, speed_m_s=1.0)
    run = simulation.simulate(simulation.SimulationSettings(**sim), robot=robot)
    full = precision_recall(robot, run, scale=1.0, full=True, use_velocity=False)
    gravity = precision_recall(robot, run, scale=1.0, full=False, use_velocity=False)
    assert full == gravity
