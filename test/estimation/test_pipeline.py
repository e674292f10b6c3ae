"""RobotStateEstimator: API, layouts, timing rules and bad inputs (a standing Go1, synthetic streams)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, GO1_STANDING

from robot_state_estimator.common.samples import Estimate, FootForceSample, ImuSample, JointSample
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation import EkfSettings, EstimatorSettings, ModelError, RobotStateEstimator

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
LEVEL = np.array([0.0, 0.0, 9.81])


def make_est(model: pin.Model, settings: EstimatorSettings | None = None, imu: ImuSpec | None = None):
    settings = settings or EstimatorSettings(ekf=EkfSettings(init_imu_samples=20))
    imu = imu or ImuSpec(name="imu", link="base", frame_id="imu_link")
    return RobotStateEstimator(model, imu, GO1_FEET, settings, base_link="base")


def step(est: RobotStateEstimator, k: int, names=None, q=None, **joint_kw) -> tuple[Estimate | None, Estimate | None]:
    names = names or est.joint_names
    q = GO1_STANDING if q is None else q
    stamp = T0 + k * MS
    e_imu = est.add_imu(ImuSample(stamp, np.zeros(3), LEVEL))
    e_j = est.add_joints(JointSample(stamp, tuple(names), np.asarray(q, dtype=float), **joint_kw))
    return e_imu, e_j


def started(model: pin.Model, n: int = 50, **kw) -> RobotStateEstimator:
    est = make_est(model, **kw)
    for k in range(n):
        step(est, k)
    assert est.initialized
    est.pop_events()
    return est


def assert_sane(e: Estimate) -> None:
    for arr in (e.p_world_base, e.quat_world_base_xyzw, e.v_base_in_base, e.omega_base_in_base):
        assert np.isfinite(arr).all()
    for C in (e.pose_covariance, e.twist_covariance):
        assert C.shape == (6, 6)
        assert np.array_equal(C, C.T)
        assert np.linalg.eigvalsh(C).min() > 0.0


def test_initialisation_layout_and_static_robot(go1_model: pin.Model) -> None:
    est = make_est(go1_model)
    outs = [step(est, k) for k in range(19)]
    assert all(o[0] is None and o[1] is None for o in outs)
    assert not est.initialized
    e, _ = step(est, 19)
    assert e is not None and est.initialized and e.stamp_ns == T0 + 19 * MS
    # no efforts, no foot sensors: contacts from kinematics, said once
    assert [ev.key for ev in est.pop_events()] == ["initialized", "contacts_from_kinematics"]
    # height above the feet (feet on z = 0)
    est.kin.update(GO1_STANDING)
    assert e.p_world_base[2] == pytest.approx(-est.kin.p_base_foot[:, 2].mean())
    for k in range(20, 1000):
        e_imu, e_j = step(est, k)
        assert_sane(e_imu)
        assert_sane(e_j)
        assert len(e_j.feet) == 4 and all(f.in_contact and f.update_accepted for f in e_j.feet)
        assert np.linalg.norm(e_j.v_base_in_base) < 1e-3
    assert est.q.shape == (go1_model.nq,) and est.v.shape == (go1_model.nv,)
    np.testing.assert_allclose(est.q[7:], GO1_STANDING)
    np.testing.assert_allclose(est.q[3:7], [0, 0, 0, 1], atol=1e-9)
    assert est.last_estimate is e_j
    assert est.pop_events() == []


def test_reordered_joint_names_give_identical_results(go1_model: pin.Model) -> None:
    rng = np.random.default_rng(0)
    perm = rng.permutation(12)
    a, b = make_est(go1_model), make_est(go1_model)
    names = np.array(a.joint_names)
    for k in range(300):
        q = GO1_STANDING + 0.01 * np.sin(0.01 * k + np.arange(12))
        ea = step(a, k, q=q)
        eb = step(b, k, names=tuple(names[perm]), q=q[perm])
        for x, y in zip(ea, eb):
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_array_equal(x.v_base_in_base, y.v_base_in_base)
                np.testing.assert_array_equal(x.pose_covariance, y.pose_covariance)
    np.testing.assert_array_equal(a.q, b.q)


@pytest.mark.parametrize(
    ("sample_kw", "key"),
    [
        ({"position": np.r_[GO1_STANDING[:-1], np.nan]}, "joint_nan"),
        ({"position": np.r_[GO1_STANDING[:-1], np.inf]}, "joint_nan"),
        ({"velocity": np.full(12, np.nan)}, "joint_nan"),
        ({"position": GO1_STANDING[:5]}, "joint_shape"),
        ({"drop": 1}, "missing_joint"),
        ({"rename": "FL_toe_joint"}, "unknown_joint"),
        ({"duplicate": True}, "duplicate_joint"),
    ],
)
def test_bad_joint_samples_are_skipped_with_an_event(go1_model: pin.Model, sample_kw: dict, key: str) -> None:
    est = started(go1_model)
    before = est.q.copy(), est.ekf.P.copy()
    names = list(est.joint_names)
    pos = sample_kw.get("position", GO1_STANDING)
    if "drop" in sample_kw:
        names, pos = names[1:], pos[1:]
    if "rename" in sample_kw:
        names[0] = sample_kw["rename"]
    if sample_kw.get("duplicate"):
        names[1] = names[0]
    assert est.add_joints(JointSample(T0 + 50 * MS, tuple(names), pos, sample_kw.get("velocity"))) is None
    assert [e.key for e in est.pop_events()] == [key]
    np.testing.assert_array_equal(est.q, before[0])
    np.testing.assert_array_equal(est.ekf.P, before[1])


def test_bad_imu_samples_and_stamp_rules(go1_model: pin.Model) -> None:
    est = started(go1_model)
    q0 = est.q.copy()
    last = T0 + 49 * MS
    assert est.add_imu(ImuSample(last + MS, np.array([np.nan, 0, 0]), LEVEL)) is None
    assert est.add_imu(ImuSample(last + MS, np.zeros(3), np.array([0, np.inf, 9.8]))) is None
    assert est.add_imu(ImuSample(last + MS, np.zeros(2), LEVEL)) is None
    assert est.add_imu(ImuSample(last, np.zeros(3), LEVEL)) is None  # same stamp: dt = 0
    assert est.add_imu(ImuSample(last - 2 * MS, np.zeros(3), LEVEL)) is None  # slightly out of order
    assert [e.key for e in est.pop_events()] == [
        "imu_nan",
        "imu_nan",
        "imu_shape",
        "imu_dt_nonpositive",
        "imu_out_of_order",
    ]
    np.testing.assert_array_equal(est.q, q0)
    # a gap larger than max_dt_s: refused and re-anchored, the next sample propagates normally
    e = est.add_imu(ImuSample(last + 1_000 * MS, np.zeros(3), LEVEL))
    assert e is not None and e.stamp_ns == last + 1_000 * MS
    assert [ev.key for ev in est.pop_events()] == ["imu_gap"]
    assert est.add_imu(ImuSample(last + 1_001 * MS, np.zeros(3), LEVEL)) is not None
    # time going back by seconds (a looping bag): reset and initialise again
    assert est.add_imu(ImuSample(T0, np.zeros(3), LEVEL)) is None
    keys = [e.key for e in est.pop_events()]
    assert keys == ["reset", "stamp_backwards"]
    assert not est.initialized and est.last_estimate is None
    for k in range(1, 25):
        step(est, k)
    assert est.initialized


def test_joint_time_backwards_resets(go1_model: pin.Model) -> None:
    est = started(go1_model)
    assert est.add_joints(JointSample(T0 - 10_000 * MS, est.joint_names, GO1_STANDING)) is None
    assert [e.key for e in est.pop_events()] == ["reset", "stamp_backwards"]
    assert not est.initialized


def test_joint_sample_ahead_of_the_imu_is_held_then_applied(go1_model: pin.Model) -> None:
    est = started(go1_model)
    t = T0 + 49 * MS
    assert est.add_joints(JointSample(t + MS // 2, est.joint_names, GO1_STANDING)) is None
    assert est.add_joints(JointSample(t + 3 * MS // 2, est.joint_names, GO1_STANDING)) is None
    e = est.add_imu(ImuSample(t + MS, np.zeros(3), LEVEL))
    assert e is not None and len(e.feet) == 4 and e.stamp_ns == t + MS  # first one applied on the way
    assert len(est.legs.pending) == 1
    e = est.add_imu(ImuSample(t + 2 * MS, np.zeros(3), LEVEL))
    assert e is not None and len(e.feet) == 4 and not est.legs.pending
    assert est.pop_events() == []


def test_late_joint_sample_rule(go1_model: pin.Model) -> None:
    est = started(
        go1_model, settings=EstimatorSettings(ekf=EkfSettings(init_imu_samples=20), max_measurement_delay_s=0.01)
    )
    t = T0 + 49 * MS
    for k in range(1, 30):
        est.add_imu(ImuSample(t + k * MS, np.zeros(3), LEVEL))
    t_now = t + 29 * MS
    # joints stream stopped at t; a sample 5 ms old is applied at the filter time, one 20 ms old is dropped
    e = est.add_joints(JointSample(t_now - 5 * MS, est.joint_names, GO1_STANDING))
    assert e is not None and e.stamp_ns == t_now and len(e.feet) == 4
    est2 = started(
        go1_model, settings=EstimatorSettings(ekf=EkfSettings(init_imu_samples=20), max_measurement_delay_s=0.01)
    )
    for k in range(1, 30):
        est2.add_imu(ImuSample(t + k * MS, np.zeros(3), LEVEL))
    assert est2.add_joints(JointSample(t_now - 20 * MS, est2.joint_names, GO1_STANDING)) is None
    assert [e.key for e in est2.pop_events()] == ["joint_too_old"]


def test_explicit_initial_state_velocity_round_trip(go1_model: pin.Model) -> None:
    est = make_est(go1_model)
    R = pin.rpy.rpyToMatrix(0.1, -0.2, 1.0)
    q = np.r_[1.0, 2.0, 0.3, pin.Quaternion(R).coeffs(), GO1_STANDING]
    v_world = np.array([0.5, -0.2, 0.1])
    v = np.r_[R.T @ v_world, 0.1, 0.2, 0.3, np.zeros(12)]  # pinocchio free-flyer: twist in the base frame
    e = est.initialize_state(T0, q, v)
    np.testing.assert_allclose(est.q, q, atol=1e-12)
    np.testing.assert_allclose(est.v, v, atol=1e-12)
    np.testing.assert_allclose(R @ e.v_base_in_base, v_world, atol=1e-12)  # local -> world round trip
    with pytest.raises(ValueError, match="q must be"):
        est.initialize_state(T0, q[:5])


def test_from_description_and_model_errors(go1_model: pin.Model) -> None:
    imu = ImuSpec(name="imu", link="imu_link", frame_id="imu_link")
    desc = SimpleNamespace(model=go1_model, imu=imu, base_link="base", foot_frames=lambda: GO1_FEET)
    est = RobotStateEstimator.from_description(desc, EstimatorSettings())
    assert est.foot_frames == GO1_FEET
    est2 = RobotStateEstimator.from_description(desc, EstimatorSettings(foot_frames=("FL_foot", "RR_foot")))
    assert est2.foot_frames == ("FL_foot", "RR_foot")
    with pytest.raises(ModelError, match="nope"):
        RobotStateEstimator(go1_model, imu, ("nope",), EstimatorSettings(), base_link="base")
    with pytest.raises(ModelError, match="base link"):
        RobotStateEstimator(go1_model, imu, GO1_FEET, EstimatorSettings(), base_link="imu_link")
    fixed = pin.buildModelFromUrdf(
        str(__import__("robot_state_estimator.common.robots").common.robots.example_robot_urdf("go1"))
    )
    with pytest.raises(ModelError, match="free-flyer"):
        RobotStateEstimator(fixed, imu, GO1_FEET, EstimatorSettings(), base_link="base")


def test_an_imu_on_a_moving_link_is_refused(go1_model: pin.Model) -> None:
    """The filter's X_base_imu is a constant: an IMU on a leg would be read as if it sat at the zero configuration
    (an expert review: a Go1 IMU moved to FL_thigh diverged, 2 m of z error in 4 s, with no word)."""
    on_thigh = ImuSpec(name="imu", link="FL_thigh", frame_id="imu_link")
    with pytest.raises(ModelError) as info:
        RobotStateEstimator(go1_model, on_thigh, GO1_FEET, EstimatorSettings(), base_link="base")
    assert str(info.value) == (
        "the IMU 'imu' is on link 'FL_thigh', which moves relative to the base link 'base' (joint 'FL_thigh_joint'): "
        "the filter needs the IMU rigidly attached to the base (its pose in the base is a constant of the filter); "
        "mount it on the base or on a link fixed to it, or choose an IMU on the base with the setting imu_name, or "
        "declare one with declared_imu.link and declared_imu.pose (docs/imu_choice.md)"
    )
    # a link fixed to the base (URDF imu_link, trunk: lumped into base's joint) is fine
    for link in ("imu_link", "trunk", "base"):
        RobotStateEstimator(go1_model, ImuSpec("imu", link, "imu"), GO1_FEET, EstimatorSettings(), base_link="base")


def test_contact_sources(go1_model: pin.Model) -> None:
    est = started(go1_model)
    assert est.contact_source == "kinematic"  # no efforts, no foot sensors
    t = T0 + 50 * MS
    est.add_foot_forces(FootForceSample(t, GO1_FEET, np.array([100.0, 10.0, 100.0, 10.0])))
    est.add_imu(ImuSample(t, np.zeros(3), LEVEL))
    e = est.add_joints(JointSample(t, est.joint_names, GO1_STANDING))
    assert est.contact_source == "foot_sensor"
    assert [f.in_contact for f in e.feet] == [True, False, True, False]
    est.add_foot_forces(FootForceSample(t, ("FL_toe",), np.array([1.0])))
    est.add_foot_forces(FootForceSample(t, GO1_FEET, np.full(4, np.nan)))
    assert [ev.key for ev in est.pop_events()] == ["unknown_foot", "foot_force_nan"]
    # efforts of a robot standing on its four feet (tau = g(q) - sum J^T f): torque-based contacts, forces
    tau = est.forces.bias_torques(GO1_STANDING, np.eye(3))
    est.kin.update(GO1_STANDING)
    weight = est.forces.weight_n
    for i, idx in enumerate(est.kin.leg_joint_indices):
        tau[idx] -= est.kin.J_base_foot[i][:, idx].T @ np.array([0.0, 0.0, weight / 4])
    settings = EstimatorSettings(
        ekf=EkfSettings(init_imu_samples=20), contact=dataclasses.replace(EstimatorSettings().contact, source="torque")
    )
    est3 = make_est(go1_model, settings=settings)
    for k in range(60):
        e3 = step(est3, k, effort=tau)[1]
    assert est3.contact_source == "torque"
    assert all(f.in_contact for f in e3.feet)
    forces = np.array([f.force_in_world for f in e3.feet])
    np.testing.assert_allclose(forces[:, 2], weight / 4, rtol=1e-3)
    np.testing.assert_allclose(forces[:, 2].sum(), weight, rtol=1e-3)


def test_never_nan_under_a_stream_of_garbage(go1_model: pin.Model) -> None:
    rng = np.random.default_rng(3)
    est = make_est(go1_model)
    stamp = T0
    for _ in range(600):
        stamp += int(rng.choice([MS, 0, -MS, 200 * MS, -5_000 * MS], p=[0.9, 0.03, 0.03, 0.02, 0.02]))
        gyro = rng.normal(size=3) * 0.1
        acc = LEVEL + rng.normal(size=3)
        if rng.random() < 0.05:
            gyro[rng.integers(3)] = rng.choice([np.nan, np.inf, 1e300])
        e = est.add_imu(ImuSample(stamp, gyro, acc))
        q = GO1_STANDING + rng.normal(size=12) * 0.01
        if rng.random() < 0.05:
            q[rng.integers(12)] = np.nan
        e2 = est.add_joints(JointSample(stamp + int(rng.integers(-2, 3)) * MS // 2, est.joint_names, q))
        for x in (e, e2):
            if x is not None:
                assert_sane(x)
        assert np.isfinite(est.q).all()
    keys = {ev.key for ev in est.pop_events()}
    assert {"imu_nan", "imu_out_of_range", "joint_nan", "reset"} <= keys
