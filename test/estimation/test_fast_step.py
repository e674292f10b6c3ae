"""The usual samples' fast path (issue 18: fewer Python layers around the compiled steps) keeps the rules of the
reference path where it folds one into a compiled step, and hands over the same outputs:

- the IMU step's bookkeeping (the filter's interval, the angular acceleration's interval, the re-orthonormalisation
  count: ``BaseEkf.set_imu`` / ``propagate_to``) and the joint velocity's regular step
  (``JointVelocityEstimator.step_coefficients`` / ``stepped``), run in the compiled steps, give the reference's
  estimates and state over irregular stamps (gaps, repeats, steps back);
- the joint step's report of a stance foot above the slip threshold is the slip report's own test
  (``SlipDetector.update``), so a sliding foot is reported the same on both paths;
- an estimate over the joint step's buffer is an ordinary estimate (its vector, its per-foot numbers, the packed
  buffer of ``io.stream.pack_estimate``), worked out here from its fields.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from est_helpers import feed_run

from robot_state_estimator.common.output_layout import OUTPUT_SIZE, PUBLISHED_SIZE
from robot_state_estimator.common.samples import Estimate, ImuSample, JointSample
from robot_state_estimator.estimation import ContactSettings, EstimatorSettings, RobotStateEstimator
from robot_state_estimator.estimation.ekf import layout
from robot_state_estimator.estimation.jit import DISABLE_ENV, use_kernels
from robot_state_estimator.estimation.leg_odometry import FeetOfJointStep
from robot_state_estimator.io.stream import pack_estimate

pytest.importorskip("numba", reason="numba is not installed: only the reference paths exist")
simulation = pytest.importorskip("robot_state_estimator.simulation")

MS = 1_000_000


def build(monkeypatch: pytest.MonkeyPatch, kernels: bool, make):  # type: ignore[no-untyped-def]
    """``make()`` with the kernels on or off (objects read the switch when built)."""
    if kernels:
        monkeypatch.delenv(DISABLE_ENV, raising=False)
    else:
        monkeypatch.setenv(DISABLE_ENV, "1")
    assert use_kernels() == kernels
    obj = make()
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    return obj


def close(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, float(np.nanmax(np.abs(b)))))


@pytest.fixture(scope="module")
def go1_sim():
    return simulation.load_sim_robot("go1")


def _estimator(robot, run, **contact) -> RobotStateEstimator:  # type: ignore[no-untyped-def]
    settings = EstimatorSettings(contact=dataclasses.replace(ContactSettings(), **contact))
    return RobotStateEstimator(robot.model, run.imu, run.feet, settings, base_link=run.base_link,
                               foot_radii=run.foot_radii)  # fmt: skip


def test_irregular_stamps_give_the_references_estimates_and_state(go1_sim, monkeypatch) -> None:
    """A noisy trot with irregular stamps: IMU periods of 1-3 ms, a gap above ``ekf.max_dt_s``, joint samples
    without velocities (the estimator differentiates the positions) whose periods vary, a gap above the joint
    velocity's ``max_dt_s``, repeated and slightly older stamps. Both paths give the same events, estimates and
    filter bookkeeping at every sample, and the compiled steps took most samples."""
    sim = dict(robot="go1", gait="trot", duration_s=1.2, settle_s=0.3, ramp_s=0.3, seed=11, noise=True)
    run = simulation.simulate(simulation.SimulationSettings(**sim), robot=go1_sim)
    ests = [build(monkeypatch, k, lambda: _estimator(go1_sim, run)) for k in (True, False)]
    names = tuple(run.joint_names)
    rng = np.random.default_rng(4)
    imu_stamp, joint_stamp = 0, 0
    fast_steps = 0
    keys: set[str] = set()
    n = min(len(run.imu_index), len(run.joint_index))
    for k in range(n):
        imu_stamp += int(rng.choice([1, 2, 3])) * MS
        if k in (n // 2, 3 * n // 4):  # gaps above ekf.max_dt_s (50 ms), the second above joint_velocity.max_dt_s
            imu_stamp += 60 * MS if k == n // 2 else 150 * MS
        back = k % 97 == 50  # a joint sample slightly older than the last one (refused)
        joint_stamp = joint_stamp - MS // 4 if back else imu_stamp - int(rng.choice([0, MS // 2]))
        joints = JointSample(joint_stamp, names, run.joint_position[k], None, run.joint_effort[k])
        imu = ImuSample(imu_stamp, run.imu_omega[k], run.imu_f[k])
        got = []
        for est in ests:
            a = est.add_imu(imu)
            b = est.add_joints(joints)
            if k % 53 == 7:  # the same joint sample again: a repeated stamp
                est.add_joints(joints)
            ekf = est.ekf
            got.append(
                (
                    [(e.key, e.message) for e in est.pop_events()],
                    None if a is None else a.output_vector(),
                    None if b is None else b.output_vector(),
                    (ekf.stamp_ns, ekf._gyro_stamp_ns, ekf._omega_prev_valid, ekf._steps_since_normalise),
                    (est.joint_velocity.valid, est.joint_velocity._stamp_prev_ns),
                    est.joint_velocity.qdot.copy(),
                )
            )
        fast_steps += isinstance(ests[0].legs.step_feet, FeetOfJointStep)
        (ev_f, a_f, b_f, clock_f, jv_f, qdot_f), (ev_r, a_r, b_r, clock_r, jv_r, qdot_r) = got
        assert ev_f == ev_r, k
        keys.update(key for key, _ in ev_f)
        assert clock_f == clock_r and jv_f == jv_r, k
        close(qdot_f, qdot_r)
        for x, y in ((a_f, a_r), (b_f, b_r)):
            assert (x is None) == (y is None), k
            if x is not None:
                close(x, y)
    assert fast_steps > n // 2 and ests[0].initialized
    assert {"imu_gap", "joint_out_of_order", "joint_dt_nonpositive"} <= keys


def test_a_sliding_foot_is_reported_the_same_on_both_paths(go1_sim, monkeypatch) -> None:
    """The slip report of ``test_slip_report`` through both paths: the same episodes and events; in the compiled
    step the report of a stance foot above the threshold (``JOINT_HIGH_NIS_SHIFT``) is set exactly when one of
    its stance feet's NIS (read from its buffer) is above ``SlipDetector.threshold``, and it was set."""
    sim = dict(robot="go1", gait="trot", duration_s=3.0, settle_s=0.5, ramp_s=0.5, seed=3, noise=True)
    slip = simulation.SlipEvent(foot="FL_foot", start_s=2.0, duration_s=0.3, displacement_m=(0.12, 0.0))
    run = simulation.simulate(simulation.SimulationSettings(**sim, slip=slip), robot=go1_sim)
    fast, ref = (build(monkeypatch, k, lambda: _estimator(go1_sim, run, source="torque")) for k in (True, False))
    step = fast.legs.joint_step
    assert step is not None
    kernel, threshold = step.prepared_step, fast.slip.threshold
    reports: list[tuple[bool, bool]] = []  # (the step's report, the slip report's test on the step's NIS)

    def prepared_joint_step(*args):  # type: ignore[no-untyped-def]
        result = kernel(*args)
        if result >= 0:
            buf, n = args[7], len(fast.foot_frames)
            k = bin(result & 0xFFFFFFFF).count("1")
            o = layout.OUT_SIZE + 9 * n + 12 * k
            reports.append(
                (bool(result >> layout.JOINT_HIGH_NIS_SHIFT & 1), any(e > threshold for e in buf[o : o + k]))
            )
        return result

    step.prepared_step = prepared_joint_step
    made = []  # the outputs made outside the compiled steps (initialisation, the reference path)
    finite_output_vector = fast.ekf.finite_output_vector
    fast.ekf.finite_output_vector = lambda: made.append(1) or finite_output_vector()  # type: ignore[method-assign]
    out = [feed_run(est, run, imu_first=True) for est in (fast, ref)]
    np.testing.assert_array_equal(out[0]["contacts"], out[1]["contacts"])
    assert fast.slip.episodes == ref.slip.episodes == [1, 0, 0, 0]
    slips = [[e.message for e in est.pop_events() if e.key == "foot_slipping"] for est in (fast, ref)]
    assert slips[0] == slips[1] and len(slips[0]) == 1
    assert len(reports) > 1000 and all(a == b for a, b in reports) and any(a for a, _ in reports)
    assert len(made) < 3  # a step with a high NIS still hands over its buffer as the estimate's outputs


def test_an_estimate_over_the_joint_steps_buffer_is_an_ordinary_one(go1_sim, monkeypatch) -> None:
    """A joint sample applied at once (IMU first) in the compiled step: its estimate's vector is the filter's outputs
    (91 numbers, the same object at every read), its per-foot numbers are its feet's wrenches and forces
    (``FOOT_FIELDS``), and the packed buffer is the one of the same estimate made from its fields."""
    sim = dict(robot="go1", gait="stand", duration_s=0.6, seed=2)
    run = simulation.simulate(simulation.SimulationSettings(**sim), robot=go1_sim)
    est = build(monkeypatch, True, lambda: _estimator(go1_sim, run))
    feed_run(est, run, imu_first=True)
    e = est.last_estimate
    assert e is not None and isinstance(est.legs.step_feet, FeetOfJointStep)
    published = e.published_vector()  # before the vector is read: one copy from the step's buffer
    vector = e.output_vector()
    assert vector.shape == (OUTPUT_SIZE,) and e.output_vector() is vector
    np.testing.assert_array_equal(vector, est.ekf.output_vector())
    eager = Estimate(**{f.name: getattr(e, f.name) for f in dataclasses.fields(e)})
    assert len(e.feet) == 4 and all(f.in_contact for f in e.feet)
    expected = np.concatenate([np.r_[f.wrench_in_foot, f.force_in_world] for f in eager.feet])
    np.testing.assert_array_equal(e.feet_vector(), expected)
    np.testing.assert_array_equal(eager.feet_vector(), expected)
    packed, packed_eager = pack_estimate(e), pack_estimate(eager)
    assert packed is not None and packed_eager is not None
    np.testing.assert_array_equal(packed, packed_eager)
    assert not np.shares_memory(packed, vector)
    # the published numbers: the vector's first PUBLISHED_SIZE, then the per-foot ones; from the step's buffer, from
    # the vector once read (the estimate is no longer over the buffer) and from the fields give the same new array
    worked_out = np.concatenate([vector[:PUBLISHED_SIZE], expected])
    for p in (published, e.published_vector(), eager.published_vector()):
        np.testing.assert_array_equal(p, worked_out)
        assert not np.shares_memory(p, vector)
    imu = est.add_imu(ImuSample(int(est.ekf.stamp_ns or 0) + MS, run.imu_omega[0], run.imu_f[0]))
    assert imu is not None and imu.feet == () and imu.feet_vector().size == 0
    np.testing.assert_array_equal(imu.published_vector(), imu.output_vector()[:PUBLISHED_SIZE])
    assert not np.shares_memory(imu.published_vector(), imu.output_vector())


def _summary_of_feet(e: Estimate) -> tuple[int, tuple[str, ...]]:
    """The stance summary worked out from the per-foot states (``in_contact``, ``update_accepted``)."""
    return (
        sum(1 for f in e.feet if f.in_contact),
        tuple(f.name for f in e.feet if f.in_contact and not f.update_accepted),
    )


@pytest.mark.parametrize("kernels", [True, False])
def test_the_stance_summary_is_the_per_foot_states(go1_sim, monkeypatch, kernels: bool) -> None:
    """``Estimate.stance_summary`` (what the node's diagnostics read for every joint estimate, without making the
    per-foot states) gives the feet in contact and those whose update the gate refused as the per-foot states tell,
    on the compiled step and the reference path: a trot with a sliding foot and a gate low enough that some stance
    updates are refused, others all accepted; the summary is read before the states are made, then again after."""
    sim = dict(robot="go1", gait="trot", duration_s=1.5, settle_s=0.3, ramp_s=0.3, seed=3, noise=True)
    slip = simulation.SlipEvent(foot="FL_foot", start_s=1.0, duration_s=0.3, displacement_m=(0.12, 0.0))
    run = simulation.simulate(simulation.SimulationSettings(**sim, slip=slip), robot=go1_sim)

    def make() -> RobotStateEstimator:
        settings = EstimatorSettings(ekf=dataclasses.replace(EstimatorSettings().ekf, foot_gate_nis=3.0))
        return RobotStateEstimator(go1_sim.model, run.imu, run.feet, settings, base_link=run.base_link,
                                   foot_radii=run.foot_radii)  # fmt: skip

    est = build(monkeypatch, kernels, make)
    names = tuple(run.joint_names)
    seen = {"refused": 0, "all_accepted": 0, "fast": 0}
    for k in range(min(len(run.imu_index), len(run.joint_index))):
        stamp = int(run.stamps_ns[run.imu_index[k]])
        est.add_imu(ImuSample(stamp, run.imu_omega[k], run.imu_f[k]))
        e = est.add_joints(JointSample(stamp, names, run.joint_position[k], run.joint_velocity[k], run.joint_effort[k]))
        if e is None or not est.initialized:
            continue
        seen["fast"] += isinstance(est.legs.step_feet, FeetOfJointStep)
        summary = e.stance_summary()  # before the per-foot states are made
        assert summary == _summary_of_feet(e) == e.stance_summary(), k
        n_contact, refused = summary
        seen["refused"] += bool(refused)
        seen["all_accepted"] += n_contact > 0 and not refused
    assert seen["refused"] > 10 and seen["all_accepted"] > 10
    assert (seen["fast"] > 500) == kernels
    eager = Estimate(**{f.name: getattr(e, f.name) for f in dataclasses.fields(e)})  # an ordinary estimate too
    assert eager.stance_summary() == _summary_of_feet(e)
    imu = est.add_imu(ImuSample(stamp + MS, run.imu_omega[0], run.imu_f[0]))
    assert imu is not None and imu.stance_summary() == (0, ())
