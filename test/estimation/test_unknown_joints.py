"""``ignore_unknown_joints``: joint samples naming joints that are not in the model (gripper, head, wheels)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, GO1_STANDING

from robot_state_estimator.common.samples import Estimate, ImuSample, JointSample
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation import EkfSettings, EstimatorSettings, RobotStateEstimator, load_settings

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
EXTRA = ("gripper_joint", "head_pan_joint", "wheel_left_joint")


def make_est(model: pin.Model, ignore: bool) -> RobotStateEstimator:
    settings = EstimatorSettings(ekf=EkfSettings(init_imu_samples=20), ignore_unknown_joints=ignore)
    return RobotStateEstimator(
        model, ImuSpec(name="imu", link="base", frame_id="imu_link"), GO1_FEET, settings, base_link="base"
    )


def sample_at(est: RobotStateEstimator, k: int, extra: tuple[str, ...] = (), extra_value: float = 0.3) -> JointSample:
    """Moving joints (positions, velocities, efforts) in a shuffled order, the extra names interleaved."""
    n = len(est.joint_names)
    q = GO1_STANDING + 0.02 * np.sin(0.02 * k + np.arange(n))
    v = 0.4 * np.cos(0.02 * k + np.arange(n))
    tau = 5.0 + np.sin(0.01 * k + np.arange(n))
    names = list(est.joint_names)
    perm = np.random.default_rng(1).permutation(n)
    names, q, v, tau = [names[i] for i in perm], list(q[perm]), list(v[perm]), list(tau[perm])
    for j, name in enumerate(extra):  # at the front, in the middle and at the end
        at = (0, n // 2, len(names))[j % 3]
        names.insert(at, name)
        for arr in (q, v, tau):
            arr.insert(at, extra_value)
    return JointSample(T0 + k * MS, tuple(names), np.array(q), np.array(v), np.array(tau))


def run(est: RobotStateEstimator, n: int, extra: tuple[str, ...] = (), extra_value: float = 0.3):
    out: list[Estimate | None] = []
    events = []
    for k in range(n):
        gyro = np.array([0.01, -0.02, 0.03]) * np.sin(0.01 * k)
        accel = np.array([0.1 * np.sin(0.03 * k), 0.0, 9.81])
        out.append(est.add_imu(ImuSample(T0 + k * MS, gyro, accel)))
        out.append(est.add_joints(sample_at(est, k, extra, extra_value)))
        events.extend(est.pop_events())
    return out, events


def assert_same(a: list[Estimate | None], b: list[Estimate | None]) -> None:
    assert len(a) == len(b)
    n_est = 0
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is None:
            continue
        n_est += 1
        for field in (
            "p_world_base",
            "quat_world_base_xyzw",
            "v_base_in_base",
            "omega_base_in_base",
            "pose_covariance",
            "twist_covariance",
            "accel_bias",
            "gyro_bias",
        ):
            np.testing.assert_allclose(getattr(x, field), getattr(y, field), rtol=0, atol=1e-12, err_msg=field)
        assert len(x.feet) == len(y.feet)
        for fx, fy in zip(x.feet, y.feet):
            assert fx.in_contact == fy.in_contact
            np.testing.assert_allclose(fx.force_in_world, fy.force_in_world, rtol=0, atol=1e-12)
    assert n_est > 100


def test_extra_joints_are_ignored_and_the_estimates_are_identical(go1_model: pin.Model) -> None:
    ref, ref_events = run(make_est(go1_model, ignore=False), 300)
    est = make_est(go1_model, ignore=True)
    got, events = run(est, 300, EXTRA, extra_value=np.nan)  # their values are unused: even NaN is fine
    assert_same(got, ref)
    assert not [e for e in ref_events if e.key in ("unknown_joint", "ignored_joints")]
    ignored = [e for e in events if e.key == "ignored_joints"]
    assert len(ignored) == 1  # once, not per message
    assert ignored[0].level == "info"
    assert all(name in ignored[0].message for name in EXTRA)
    assert [e.key for e in events if e.key != "ignored_joints"] == [e.key for e in ref_events]
    np.testing.assert_array_equal(est.q, make_and_run_q(go1_model))


def make_and_run_q(model: pin.Model) -> np.ndarray:
    est = make_est(model, ignore=False)
    run(est, 300)
    return est.q


def test_ignored_joints_reported_when_the_set_changes(go1_model: pin.Model) -> None:
    est = make_est(go1_model, ignore=True)
    keys = []
    for k, extra in enumerate([EXTRA[:1], EXTRA[:1], (), EXTRA[:1], EXTRA[:2], EXTRA[:2][::-1]]):
        assert est.add_imu(ImuSample(T0 + k * MS, np.zeros(3), np.array([0.0, 0.0, 9.81]))) is None
        est.add_joints(sample_at(est, k, extra))
        keys.append([e.key for e in est.pop_events()])
    # reported: first time, after the set changed ((), not reported itself), new set; same set reordered: not
    assert keys == [["ignored_joints"], [], [], ["ignored_joints"], ["ignored_joints"], []]
    assert est.legs.have_joints


def test_extra_joints_rejected_without_the_setting(go1_model: pin.Model) -> None:
    est = make_est(go1_model, ignore=False)
    out, events = run(est, 60, EXTRA[:1])
    assert all(x is None for x in out[1::2])
    assert {e.key for e in events if e.level != "info"} == {"unknown_joint"}
    assert not est.legs.have_joints


@pytest.mark.parametrize("ignore", [False, True])
def test_missing_model_joint_rejected_either_way(go1_model: pin.Model, ignore: bool) -> None:
    est = make_est(go1_model, ignore=ignore)
    s = sample_at(est, 0, EXTRA if ignore else ())
    drop = s.names.index(est.joint_names[3])
    keep = [i for i in range(len(s.names)) if i != drop]
    bad = JointSample(s.stamp_ns, tuple(s.names[i] for i in keep), s.position[keep], s.velocity[keep], s.effort[keep])
    assert est.add_joints(bad) is None
    events = est.pop_events()
    assert [e.key for e in events] == ["missing_joint"]
    assert est.joint_names[3] in events[0].message
    assert not est.legs.have_joints


def test_model_joint_nan_still_rejected_with_the_setting(go1_model: pin.Model) -> None:
    est = make_est(go1_model, ignore=True)
    s = sample_at(est, 0, EXTRA[:1])
    pos = s.position.copy()
    pos[s.names.index(est.joint_names[0])] = np.nan
    assert est.add_joints(JointSample(s.stamp_ns, s.names, pos, s.velocity, s.effort)) is None
    assert [e.key for e in est.pop_events()] == ["ignored_joints", "joint_nan"]


def test_setting_default_off_and_loaded_from_yaml() -> None:
    assert EstimatorSettings().ignore_unknown_joints is False
    assert load_settings({"ignore_unknown_joints": True}).ignore_unknown_joints is True
