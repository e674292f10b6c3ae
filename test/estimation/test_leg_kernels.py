"""The compiled joint-sample path (estimation/ekf/backends/kernels/legs.py) equals the numpy/pinocchio reference
paths to 1e-12; the lazily built estimates and foot states are ordinary ones to their users."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, GO1_STANDING, feed_run

from robot_state_estimator.common.samples import Estimate, ImuSample, JointSample
from robot_state_estimator.estimation import (
    ContactDetector,
    ContactForceEstimator,
    ContactSettings,
    EstimatorSettings,
    JointVelocityEstimator,
    LegKinematics,
    RobotStateEstimator,
)
from robot_state_estimator.estimation.ekf import layout
from robot_state_estimator.estimation.ekf.backends.kernels import legs as leg_kernels
from robot_state_estimator.estimation.jit import DISABLE_ENV, use_kernels
from robot_state_estimator.estimation.leg_odometry import FeetOfJointStep

pytest.importorskip("numba", reason="numba is not installed: only the reference paths exist")
simulation = pytest.importorskip("robot_state_estimator.simulation")

MS = 1_000_000


def build(monkeypatch: pytest.MonkeyPatch, kernels: bool, make, *args, **kwargs):  # type: ignore[no-untyped-def]
    """``make(*args, **kwargs)`` with the kernels on or off (objects read the switch when built)."""
    if kernels:
        monkeypatch.delenv(DISABLE_ENV, raising=False)
    else:
        monkeypatch.setenv(DISABLE_ENV, "1")
    assert use_kernels() == kernels
    obj = make(*args, **kwargs)
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    return obj


def close(a: np.ndarray, b: np.ndarray) -> None:
    """Equal to 1e-12 relative (elementwise, or to the largest magnitude of the reference); NaN where NaN."""
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, float(np.nanmax(np.abs(b)))))


def configurations(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    return [GO1_STANDING + rng.normal(size=12) * 0.4 for _ in range(n)]


def test_foot_kinematics_are_pinocchios_frame_placements_and_jacobians(go1_model: pin.Model, monkeypatch) -> None:
    """With or without the kernels, the foot placements and Jacobians are pinocchio's (``updateFramePlacement``,
    ``getFrameJacobian`` LOCAL_WORLD_ALIGNED at the full configuration, base at the identity), in views of one
    buffer each."""
    fast = build(monkeypatch, True, lambda: LegKinematics(go1_model, GO1_FEET, base_link="base"))
    ref = build(monkeypatch, False, lambda: LegKinematics(go1_model, GO1_FEET, base_link="base"))
    data = go1_model.createData()
    for q in configurations(np.random.default_rng(0), 20):
        fast.update(q)
        ref.update(q)
        q_full = np.concatenate([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], q])
        pin.computeJointJacobians(go1_model, data, q_full)
        for i, foot in enumerate(GO1_FEET):
            fid = go1_model.getFrameId(foot)
            X = pin.updateFramePlacement(go1_model, data, fid).homogeneous
            J = pin.getFrameJacobian(go1_model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, 6:]
            for kin in (fast, ref):
                np.testing.assert_array_equal(kin.X_base_foot[i], X)
                np.testing.assert_array_equal(kin.J6_base_foot[i], J)
        # foot_terms: the same pinocchio pass, each foot's placement and full (6, nv) Jacobian as pinocchio gives them
        placements, jacobians = fast.foot_terms(q)
        for i, foot in enumerate(GO1_FEET):
            fid = go1_model.getFrameId(foot)
            np.testing.assert_array_equal(placements[i], pin.updateFramePlacement(go1_model, data, fid).homogeneous)
            J_full = pin.getFrameJacobian(go1_model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            np.testing.assert_array_equal(jacobians[i], J_full)
        assert np.shares_memory(fast.p_base_foot, fast.X_base_foot)
        assert np.shares_memory(fast.J_base_foot, fast.J6_base_foot)


@pytest.mark.parametrize("rpy", [(0.0, 0.0, 0.0), (0.2, -0.3, 1.0)])
def test_point_forces_kernel_equals_generalized_gravity_reference(go1_model: pin.Model, monkeypatch, rpy) -> None:
    """Gravity torques from the centre-of-mass Jacobian and the closed-form solves equal the reference
    (``computeGeneralizedGravity`` with the rotated gravity, then the per-leg solve)."""
    rng = np.random.default_rng(1)
    R = pin.rpy.rpyToMatrix(*rpy)
    kin_f = build(monkeypatch, True, lambda: LegKinematics(go1_model, GO1_FEET, base_link="base"))
    kin_r = build(monkeypatch, False, lambda: LegKinematics(go1_model, GO1_FEET, base_link="base"))
    fast = build(monkeypatch, True, lambda: ContactForceEstimator(kin_f))
    ref = build(monkeypatch, False, lambda: ContactForceEstimator(kin_r))
    assert fast.backend.compiled and fast.point_3x3 and not ref.backend.compiled
    for q in configurations(rng, 20):
        tau = rng.normal(size=12) * 5.0
        kin_f.update(q)
        kin_r.update(q)
        f_fast, w_fast = (a.copy() for a in fast.estimate(q, tau, R))
        f_ref, w_ref = ref.estimate(q, tau, R)
        close(f_fast, f_ref)
        close(w_fast, w_ref)
    # a straight leg (knee at 0: J_leg^T singular) takes the least-squares reference in both
    q = GO1_STANDING.copy()
    q[2] = 0.0
    kin_f.update(q)
    kin_r.update(q)
    tau = rng.normal(size=12)
    f_fast = fast.estimate(q, tau, R)[0].copy()
    assert fast._unsolved == 1  # the first leg
    close(f_fast, ref.estimate(q, tau, R)[0])


def test_contact_detector_kernel_equals_reference(monkeypatch) -> None:
    rng = np.random.default_rng(2)
    kw = dict(on_threshold=60.0, off_threshold=30.0, min_on_duration_s=0.003, min_off_duration_s=0.002)
    fast = build(monkeypatch, True, lambda: ContactDetector(4, **kw))
    ref = build(monkeypatch, False, lambda: ContactDetector(4, **kw))
    values = rng.uniform(0.0, 100.0, size=(400, 4))
    values[rng.random(size=values.shape) < 0.05] = np.nan
    values[rng.random(size=values.shape) < 0.02] = np.inf
    stamp = 0
    for k, v in enumerate(values):
        stamp += int(rng.integers(0, 3)) * MS  # repeated stamps too
        a, b = fast.update(stamp, v), ref.update(stamp, v)
        assert a.tolist() == b.tolist(), k
        if k == 200:
            fast.reset()
            ref.reset()
            fast.set_thresholds(50.0, 40.0)
            ref.set_thresholds(50.0, 40.0)
    np.testing.assert_array_equal(fast._since_ns[fast._pending], ref._since_ns[ref._pending])


def test_joint_velocity_kernel_equals_reference(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    for cutoff in (100.0, 0.0):
        fast = build(monkeypatch, True, JointVelocityEstimator, 12, cutoff_hz=cutoff, max_dt_s=0.01)
        ref = build(monkeypatch, False, JointVelocityEstimator, 12, cutoff_hz=cutoff, max_dt_s=0.01)
        stamp = 0
        for _ in range(300):
            stamp += int(rng.choice([MS, 2 * MS, 0, -MS, 20 * MS], p=[0.8, 0.1, 0.04, 0.03, 0.03]))
            q = rng.normal(size=12)
            a, b = fast.update(stamp, q), ref.update(stamp, q)
            close(a, b)
            assert fast.valid == ref.valid


def test_prepare_joints_kernel_gathers_and_steps_the_joint_velocity() -> None:
    """``prepare_joints``: the message values in model order, the joint velocity's backward difference (and its
    low-pass), the velocity in use, worked out here with numpy; a NaN/Inf changes nothing."""
    rng = np.random.default_rng(7)
    gather = np.array([2, 0, 3, 1])  # model joint j is message entry gather[j]
    for mode in range(8):
        pos, vel, eff = rng.normal(size=(3, 5))  # entry 4: a joint not in the model
        q_prev, qdot = rng.normal(size=4), rng.normal(size=4)
        q_prev0, qdot0 = q_prev.copy(), qdot.copy()
        dt, alpha = 2e-3, 0.3
        out = np.full((3, 4), -7.0)
        q_full = np.full(11, -7.0)
        assert leg_kernels.prepare_joints(pos, vel, eff, gather, mode, q_prev, qdot, dt, alpha, out, q_full) == 0
        q = np.array([pos[2], pos[0], pos[3], pos[1]])
        raw = (q - q_prev0) / dt
        qdot_expected = qdot0 + alpha * (raw - qdot0) if mode & layout.PREPARE_FILTERED else raw
        np.testing.assert_array_equal(out[0], q)
        np.testing.assert_array_equal(q_full, [-7.0] * 7 + q.tolist())
        np.testing.assert_array_equal(q_prev, q)
        np.testing.assert_allclose(qdot, qdot_expected, rtol=1e-14)
        v_used = [vel[2], vel[0], vel[3], vel[1]] if mode & layout.PREPARE_MEASURED else qdot_expected
        np.testing.assert_allclose(out[1], v_used, rtol=1e-14)
        np.testing.assert_array_equal(out[2], [eff[2], eff[0], eff[3], eff[1]])
    # absent velocities and efforts: the estimate is the velocity in use, the effort row untouched
    out = np.full((3, 4), -7.0)
    q_prev, qdot = np.zeros(4), np.zeros(4)
    got = leg_kernels.prepare_joints(pos, np.empty(0), np.empty(0), gather, 0, q_prev, qdot, 0.5, 0.0, out, q_full)
    assert got == 0
    np.testing.assert_array_equal(out[1], 2.0 * out[0])
    np.testing.assert_array_equal(out[2], -7.0)
    # a NaN in an unused message entry rejects the sample only when every entry is checked
    for whole, code in ((layout.PREPARE_WHOLE, layout.GATHER_NAN_EFFORT), (0, layout.GATHER_OK)):
        bad = eff.copy()
        bad[4] = np.nan
        q_prev, qdot = q_prev0.copy(), qdot0.copy()
        q_full = np.zeros(11)
        got = leg_kernels.prepare_joints(
            pos, vel, bad, gather, whole, q_prev, qdot, dt, alpha, np.empty((3, 4)), q_full
        )
        assert got == code
        if code:
            np.testing.assert_array_equal(q_prev, q_prev0)
            np.testing.assert_array_equal(qdot, qdot0)
            np.testing.assert_array_equal(q_full, 0.0)
    bad = pos.copy()
    bad[0] = np.inf
    q_prev, qdot = q_prev0.copy(), qdot0.copy()
    got = leg_kernels.prepare_joints(bad, vel, eff, gather, 0, q_prev, qdot, dt, alpha, np.empty((3, 4)), q_full)
    assert got == layout.GATHER_NAN_POSITION
    np.testing.assert_array_equal(q_prev, q_prev0)


def test_rolling_contact_terms_kernel_equals_reference(go1_model: pin.Model, monkeypatch) -> None:
    rng = np.random.default_rng(4)
    fast = build(monkeypatch, True, lambda: LegKinematics(go1_model, GO1_FEET, base_link="base"))
    ref = build(monkeypatch, False, lambda: LegKinematics(go1_model, GO1_FEET, base_link="base"))
    for q in configurations(rng, 10):
        fast.update(q)
        ref.update(q)
        idx = np.flatnonzero(rng.random(4) < 0.7)
        qdot, omega = rng.normal(size=12) * 3.0, rng.normal(size=3)
        R = pin.exp3(rng.normal(size=3))
        radii = rng.uniform(0.0, 0.03, size=idx.size)
        radii[: idx.size // 2] = 0.0  # point feet among them
        terms = [kin.rolling_contact_terms(idx, qdot, omega, R, radii) for kin in (fast, ref)]
        for a, b in zip(*terms):
            close(a, b)
        terms = [kin.point_contact_terms(idx, qdot, omega) for kin in (fast, ref)]
        for a, b in zip(*terms):
            close(a, b)


@pytest.fixture(scope="module")
def trot_run():
    robot = simulation.load_sim_robot("go1")
    settings = dict(robot="go1", gait="trot", duration_s=1.5, settle_s=0.3, ramp_s=0.3, seed=5)
    return robot, simulation.simulate(simulation.SimulationSettings(**settings, noise=True), robot=robot)


@pytest.mark.parametrize(
    "contact, use_effort, radius, imu_first, use_velocity",
    [
        (dict(source="torque"), True, 0.02, False, True),
        (dict(source="torque"), True, 0.02, True, True),
        (dict(source="auto"), True, 0.0, True, True),
        (dict(source="torque"), True, 0.02, True, False),
        (dict(source="torque"), True, 0.0, False, True),
        (dict(source="kinematic"), False, 0.02, False, True),
        (dict(source="torque"), False, 0.0, False, True),
    ],
)
def test_pipeline_with_kernels_equals_reference(
    trot_run, monkeypatch, contact, use_effort, radius, imu_first, use_velocity
) -> None:
    """A noisy simulated trot through both paths: the same estimates, contacts, forces and NIS to 1e-12. With
    efforts and the torque source, joint samples held for the IMU (joints first on equal stamps) and joint samples
    applied at once (IMU first) take the backend's one-call joint step (``kernels.joint_step.joint_step``), with the
    message's joint velocities or the estimated ones."""
    robot, run = trot_run
    settings = EstimatorSettings(contact=dataclasses.replace(ContactSettings(), **contact))

    def make() -> RobotStateEstimator:
        return RobotStateEstimator(
            robot.model, run.imu, run.feet, settings, base_link=run.base_link, foot_radii=[radius] * 4
        )

    fast = build(monkeypatch, True, make)
    kw = dict(use_effort=use_effort, imu_first=imu_first, use_velocity=use_velocity)
    out_f = feed_run(fast, run, **kw)
    out_r = feed_run(build(monkeypatch, False, make), run, **kw)
    one_kernel = use_effort and contact["source"] != "kinematic"
    assert isinstance(fast.legs.step_feet, FeetOfJointStep) == one_kernel
    assert out_f["contacts"].shape == out_r["contacts"].shape and len(out_f["contacts"]) > 100
    np.testing.assert_array_equal(out_f["contacts"], out_r["contacts"])
    np.testing.assert_array_equal(out_f["accepted"], out_r["accepted"])
    for key in ("v", "p", "quat", "P_twist", "P_pose", "forces", "nis"):
        close(out_f[key], out_r[key])


def test_bad_joint_samples_give_the_same_events_on_both_paths(trot_run, monkeypatch) -> None:
    """The kernel path hands every unusual sample to the reference path: same events, same outcome."""
    robot, run = trot_run
    names = tuple(run.joint_names)
    for ignore in (False, True):
        settings = EstimatorSettings(ignore_unknown_joints=ignore)
        ests = [
            build(
                monkeypatch, k, RobotStateEstimator, robot.model, run.imu, run.feet, settings, base_link=run.base_link
            )
            for k in (True, False)
        ]
        q, v, t = run.joint_position[0], run.joint_velocity[0], run.joint_effort[0]
        nan = np.r_[np.nan, np.zeros(11)]
        samples = [
            JointSample(1 * MS, names, q, v, t),
            JointSample(2 * MS, names, q + nan, v, t),
            JointSample(3 * MS, names, q, v + nan, t),
            JointSample(4 * MS, names, q, v, t + nan),
            JointSample(5 * MS, names, q, v[:5], t),
            JointSample(6 * MS, names, q, None, np.zeros(0)),
            JointSample(7 * MS, (*names, "gripper"), np.r_[q, np.nan], np.r_[v, 0.0], np.r_[t, 0.0]),
            JointSample(8 * MS, names[::-1], q[::-1], v[::-1], t[::-1]),
            JointSample(9 * MS, names[::-1], q[::-1] + nan, v[::-1], t[::-1]),
            JointSample(10 * MS, names, [float(x) for x in q], list(v), tuple(t)),
            JointSample(11 * MS, names, q, v, t),
        ]
        results = []
        for est in ests:
            got = []
            for s in samples:
                est.add_joints(s)
                got.append([(e.key, e.message) for e in est.pop_events()])
            results.append((got, est.legs.q_joints.copy(), est.legs.qdot_joints.copy(), est.joint_velocity.qdot.copy()))
        assert results[0][0] == results[1][0]
        assert any(results[0][0])
        for a, b in zip(results[0][1:], results[1][1:]):
            np.testing.assert_array_equal(a, b)


def test_lazy_estimate_is_an_ordinary_estimate(trot_run) -> None:
    robot, run = trot_run
    est = RobotStateEstimator(robot.model, run.imu, run.feet, EstimatorSettings(), base_link=run.base_link)
    out = feed_run(est, run)
    assert len(out["contacts"]) > 0
    e = est.last_estimate
    assert e is not None and e.feet
    feet = est.feet
    assert est.feet is feet and e.feet is feet  # made once, shared by the estimate and the estimator
    assert isinstance(e, Estimate)
    eager = Estimate(**{f.name: getattr(e, f.name) for f in dataclasses.fields(e)})
    assert eager.__dict__.keys() == {f.name for f in dataclasses.fields(e)}
    assert repr(e) == repr(eager) and repr(e).startswith("Estimate(")
    for f in dataclasses.fields(e):
        a, b = getattr(e, f.name), getattr(eager, f.name)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == np.float64
    assert e.pose_covariance.shape == (6, 6) and e.twist_covariance.shape == (6, 6)
    ekf = est.ekf
    np.testing.assert_array_equal(e.pose_covariance, ekf.pose_covariance())
    np.testing.assert_array_equal(e.omega_base_in_base, ekf.omega_base_in_base)
    np.testing.assert_array_equal(eager.output_vector(), e.output_vector())
    assert e.output_vector() is e.output_vector()
    moved = dataclasses.replace(e, stamp_ns=1)
    np.testing.assert_array_equal(moved.p_world_base, e.p_world_base)
    copy = pickle.loads(pickle.dumps(e))
    assert type(copy) is Estimate  # an ordinary one, of the same values
    np.testing.assert_array_equal(copy.twist_covariance, e.twist_covariance)
    np.testing.assert_array_equal(copy.output_vector(), e.output_vector())
    assert type(dataclasses.replace(e)) is type(e) and dataclasses.replace(e).output_vector() is not e.output_vector()
    assert [f.name for f in copy.feet] == list(run.feet)
    for f in feet:
        assert dataclasses.replace(f, nis=1.0).force_in_world is f.force_in_world
    with pytest.raises(AttributeError):
        _ = e.not_a_field


def test_construction_compiles_the_kernels_the_samples_use(trot_run) -> None:
    """The warm-up at construction calls each kernel with the array layouts of the real calls: feeding samples
    compiles nothing more (no compilation pause on the first real sample of a node)."""
    from robot_state_estimator.estimation.ekf.backends.kernels.joint_step import joint_step

    robot, run = trot_run
    dispatchers = [getattr(leg_kernels, name) for name in leg_kernels.__all__] + [joint_step]
    for radius, source, imu_first in ((0.02, "torque", False), (0.0, "auto", True), (0.0, "kinematic", True)):
        settings = EstimatorSettings(contact=dataclasses.replace(ContactSettings(), source=source))
        est = RobotStateEstimator(
            robot.model, run.imu, run.feet, settings, base_link=run.base_link, foot_radii=[radius] * 4
        )
        compiled = [len(d.signatures) for d in dispatchers]
        out = feed_run(est, run, imu_first=imu_first)
        assert len(out["contacts"]) > 100
        assert [len(d.signatures) for d in dispatchers] == compiled


def test_bad_imu_samples_give_the_same_events_on_both_paths(trot_run, monkeypatch) -> None:
    """The one-kernel IMU step (BaseEkf.imu_step) hands every unusual sample to the reference path: same events,
    same estimates; the leg update's results (made when read) are the reference's."""
    robot, run = trot_run
    ests = [
        build(
            monkeypatch,
            k,
            RobotStateEstimator,
            robot.model,
            run.imu,
            run.feet,
            EstimatorSettings(),
            base_link=run.base_link,
        )
        for k in (True, False)
    ]
    w, f, frame = run.imu_omega[0], run.imu_f[0], run.imu.frame_id
    nan = np.array([np.nan, 0.0, 0.0])
    names = tuple(run.joint_names)
    q, v, t = run.joint_position[0], run.joint_velocity[0], run.joint_effort[0]
    static = [ImuSample(k * MS, w, f, None, frame) for k in range(1, 301)]
    odd = [
        ImuSample(301 * MS, w + nan, f, None, frame),
        ImuSample(302 * MS, w, f + np.inf, None, frame),
        ImuSample(303 * MS, w + 200.0, f, None, frame),
        ImuSample(304 * MS, w, f * 20.0, None, frame),
        ImuSample(305 * MS, w[:2], f, None, frame),
        ImuSample(306 * MS, w, f, None, "other_frame"),
        ImuSample(306 * MS, w, f, None, frame),
        ImuSample(306 * MS - MS // 2, w, f, None, frame),
        ImuSample(307 * MS, list(w), tuple(f), None, ""),
        ImuSample(500 * MS, w, f, None, frame),
        ImuSample(501 * MS, w * 1.1, f, None, frame),
    ]
    results = []
    for est in ests:
        got = []
        for s in static:
            est.add_joints(JointSample(s.stamp_ns, names, q, v, t))
            est.add_imu(s)
            est.pop_events()
        assert est.initialized
        for s in odd:
            e = est.add_imu(s)
            est.add_joints(JointSample(s.stamp_ns + 1, names, q, v, t))
            got.append(([(ev.key, ev.message) for ev in est.pop_events()], None if e is None else e.output_vector()))
        results.append((got, [(r.name, r.nis, r.accepted, r.innovation, r.S) for r in est.last_update_results]))
    (got_k, res_k), (got_r, res_r) = results
    assert [g[0] for g in got_k] == [g[0] for g in got_r]
    expected = {"imu_nan", "imu_out_of_range", "imu_shape", "imu_frame_id", "imu_dt_nonpositive", "imu_out_of_order"}
    assert {key for g in got_k for key, _ in g[0]} >= expected | {"imu_gap"}
    for (_, a), (_, b) in zip(got_k, got_r):
        assert (a is None) == (b is None)
        if a is not None:
            close(a, b)
    assert len(res_k) == len(res_r) > 0
    for a, b in zip(res_k, res_r):
        assert a[0] == b[0] and a[2] == b[2]
        for x, y in zip(a[1:], b[1:]):
            close(np.asarray(x, dtype=float), np.asarray(y, dtype=float))


def test_one_kernel_joint_step_hands_unusual_outcomes_to_the_reference(trot_run, monkeypatch) -> None:
    """The one-kernel joint step's rare outcomes continue on the reference path with the same result: a leg whose
    3 x 3 force system is singular (straight knee: least squares), a stacked innovation covariance that is not
    positive definite (the reference update), a foot rejected by the gate, a state that is not finite (the
    divergence reset)."""
    robot, run = trot_run
    # (the noise of the test as written: the description's IMU noise without the legged-robot floor, the
    # contact-point noise of before, 0.05 m/s: the gate must reject some feet)
    ekf = dataclasses.replace(
        EstimatorSettings().ekf,
        foot_gate_nis=0.2,
        foot_velocity_noise=0.05,
        accel_noise_floor=0.0,
        gyro_noise_floor=0.0,
    )
    settings = EstimatorSettings(ekf=ekf)
    ests = [
        build(monkeypatch, k, RobotStateEstimator, robot.model, run.imu, run.feet, settings, base_link=run.base_link)
        for k in (True, False)
    ]
    compiled_step = ests[0].legs.joint_step
    assert compiled_step is not None and ests[1].legs.joint_step is None
    results: list[int] = []  # what the real kernel returned, to check that each outcome was reached
    # the entry points of kernels.joint_step.joint_step (a held sample) and prepared_joint_step (the usual one), called
    # by the backend's joint step
    kernels = (compiled_step.step, compiled_step.prepared_step)

    def joint_step(*args):  # type: ignore[no-untyped-def]
        results.append(kernels[0](*args))
        return results[-1]

    def prepared_joint_step(*args):  # type: ignore[no-untyped-def]
        results.append(kernels[1](*args))
        return results[-1]

    compiled_step.step = joint_step
    compiled_step.prepared_step = prepared_joint_step
    names = tuple(run.joint_names)
    stamps = run.stamps_ns
    n = min(len(run.imu_index), len(run.joint_index), 900)

    def step(est: RobotStateEstimator, k: int, q: np.ndarray) -> tuple:
        est.add_imu(ImuSample(int(stamps[run.imu_index[k]]), run.imu_omega[k], run.imu_f[k]))
        e = est.add_joints(
            JointSample(int(stamps[run.joint_index[k]]), names, q, run.joint_velocity[k], run.joint_effort[k])
        )
        events = [(ev.key, ev.message) for ev in est.pop_events()]
        if e is None:
            return events, None, None
        feet = [(f.in_contact, f.update_accepted, f.nis, *f.force_in_world, *f.wrench_in_foot) for f in e.feet]
        return events, e.output_vector(), np.array(feet, dtype=float)

    straight = {n - 200, n - 150}  # the first leg's knee at 0: J_leg^T singular
    seen: set[str] = set()
    for k in range(n):
        if k == n - 100:
            for est in ests:
                est.ekf.P[3:6, 3:6] = -10.0 * np.eye(3)  # the stance feet's S: negative NIS, not positive definite
        if k == n - 50:
            for est in ests:
                est.ekf.P[4, 4] = np.nan  # not finite: the divergence reset
        q = run.joint_position[k].copy()
        if k in straight:
            q[2] = 0.0
        got = [step(est, k, q) for est in ests]
        assert got[0][0] == got[1][0], k
        seen.update(key for key, _ in got[0][0])
        for a, b in zip(got[0][1:], got[1][1:]):
            assert (a is None) == (b is None), k
            if a is not None:
                close(a, b)
    assert {"foot_gated", "filter_diverged", "reset"} <= seen
    assert results.count(layout.JOINT_FORCES_FAILED) == len(straight)
    assert results.count(layout.JOINT_NOT_PD) >= 1
    assert sum(r >= 0 for r in results) > 600


@pytest.mark.parametrize("robot_name", ["go1", "solo12", "anymal_c"])
@pytest.mark.parametrize("use_velocity", [True, False])
def test_compiled_step_equals_reference_on_every_bundled_robot(robot_name, use_velocity, monkeypatch) -> None:
    """Each bundled robot's noisy simulated trot through both backends with the default settings: the compiled joint
    step (its kinematics and dynamics from the constants pinocchio extracted, the full dynamics with the message's
    joint velocities, ``g(q)`` with differentiated ones) gives the reference's estimates, contacts, forces and NIS
    (numpy and pinocchio) to 1e-12."""
    from robot_state_estimator.common.paths import BUNDLED_ROBOTS

    assert robot_name in BUNDLED_ROBOTS
    robot = simulation.load_sim_robot(robot_name)
    # stamp jitter: joint samples between two readings (the rate interpolated to the filter's time)
    sim = dict(robot=robot_name, gait="trot", duration_s=1.5, settle_s=0.3, ramp_s=0.3, seed=7, jitter_s=1e-4)
    run = simulation.simulate(simulation.SimulationSettings(**sim, noise=True), robot=robot)

    def make() -> RobotStateEstimator:
        return RobotStateEstimator(
            robot.model, run.imu, run.feet, EstimatorSettings(), base_link=run.base_link, foot_radii=run.foot_radii
        )

    fast, ref = build(monkeypatch, True, make), build(monkeypatch, False, make)
    assert fast.legs.joint_step is not None and ref.legs.joint_step is None
    out_f = feed_run(fast, run, use_velocity=use_velocity)
    out_r = feed_run(ref, run, use_velocity=use_velocity)
    assert isinstance(fast.legs.step_feet, FeetOfJointStep)
    assert len(out_f["contacts"]) > 1000 and out_f["contacts"].any() and not out_f["contacts"].all()
    np.testing.assert_array_equal(out_f["contacts"], out_r["contacts"])
    np.testing.assert_array_equal(out_f["accepted"], out_r["accepted"])
    for key in ("v", "p", "quat", "P_twist", "P_pose", "forces", "nis"):
        close(out_f[key], out_r[key])
    # the compiled step keeps the previous velocities as the reference does (full dynamics: held; else dropped)
    assert fast.forces.qdot_prev_stamp[0] == ref.forces.qdot_prev_stamp[0] == int(use_velocity)
