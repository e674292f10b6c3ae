"""Foot wrench sensors (WrenchStamped per foot, any frame of the description) and a controller's contact schedule in
the core: the frame change worked out by hand (a point force at the foot gives a moment ``p x f`` about another
origin), the contacts, the refusals named, the schedule's timing rule and its disagreements with the forces."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from est_helpers import GO1_FEET, GO1_STANDING

from robot_state_estimator.common.samples import ContactScheduleSample, FootWrenchSample, ImuSample, JointSample
from robot_state_estimator.description.types import ImuSpec
from robot_state_estimator.estimation import EkfSettings, EstimatorSettings, RobotStateEstimator
from robot_state_estimator.estimation.settings import ContactSettings

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
LEVEL = np.array([0.0, 0.0, 9.81])
#: a configuration that is not the standing one: the base-to-foot transforms are not the usual ones
Q_BENT = np.array([0.2, 0.6, -1.4, -0.15, 0.9, -1.8, 0.1, 0.7, -1.2, -0.05, 1.0, -1.9])


def make(model: pin.Model, source: str = "auto", **contact) -> RobotStateEstimator:
    settings = EstimatorSettings(
        ekf=EkfSettings(init_imu_samples=20), contact=ContactSettings(source=source, **contact)
    )
    est = RobotStateEstimator(model, ImuSpec(name="imu", link="base", frame_id="imu_link"), GO1_FEET, settings,
                              base_link="base")  # fmt: skip
    for k in range(30):
        est.add_imu(ImuSample(T0 + k * MS, np.zeros(3), LEVEL))
        est.add_joints(JointSample(T0 + k * MS, est.joint_names, GO1_STANDING))
    assert est.initialized
    est.pop_events()
    return est


def tick(est: RobotStateEstimator, k: int, q: np.ndarray = GO1_STANDING, effort: np.ndarray | None = None):
    t = T0 + k * MS
    est.add_imu(ImuSample(t, np.zeros(3), LEVEL))
    return est.add_joints(JointSample(t, est.joint_names, q, effort=effort))


def placements(model: pin.Model, q_joints: np.ndarray) -> pin.Data:
    """pinocchio's forward kinematics with the base at the identity (the frame placements in B)."""
    data = model.createData()
    q = pin.neutral(model)
    q[:7] = (0, 0, 0, 0, 0, 0, 1)
    q[7:] = q_joints
    pin.framesForwardKinematics(model, data, q)
    return data


def test_wrench_in_other_frames_is_moved_to_the_foot_frame(go1_model: pin.Model) -> None:
    """A pure force f at each foot's origin (foot axes), expressed in the base, the calf, the thigh and the foot
    itself: about the base origin its moment is r x f (r the foot position in B); the estimator gives back f in
    foot axes and zero moment about the foot origin, and the contacts and world force from it."""
    est = make(go1_model)
    data = placements(go1_model, Q_BENT)
    frames = ("base", "FL_calf", "RL_thigh", "RR_foot")
    rng = np.random.default_rng(3)
    f_foot = rng.normal(size=(4, 3)) * 5 + [0.0, 0.0, 60.0]
    t = T0 + 30 * MS
    for i, (foot, frame) in enumerate(zip(GO1_FEET, frames, strict=True)):
        X_base_foot = data.oMf[go1_model.getFrameId(foot)]
        X_base_sensor = data.oMf[go1_model.getFrameId(frame)]
        f_base = X_base_foot.rotation @ f_foot[i]
        m_base = np.cross(X_base_foot.translation, f_base)  # moment of the point force about the base origin
        # in S's axes, the moment about S's origin: R_sensor_base f, R_sensor_base (m_base - p_base_sensor x f_base)
        R_sensor_base = X_base_sensor.rotation.T
        w_in_sensor = np.r_[
            R_sensor_base @ f_base, R_sensor_base @ (m_base - np.cross(X_base_sensor.translation, f_base))
        ]
        est.add_foot_wrench(FootWrenchSample(t, foot, frame, w_in_sensor))
    e = tick(est, 30, Q_BENT)
    assert est.contact_source == "foot_wrench"
    assert [x for x in est.pop_events() if x.key != "foot_gated"] == []  # (the jump to Q_BENT is gated)
    for i, foot in enumerate(e.feet):
        np.testing.assert_allclose(foot.wrench_in_foot[:3], f_foot[i], atol=1e-9)
        np.testing.assert_allclose(foot.wrench_in_foot[3:], 0.0, atol=1e-9)
        R_base_foot = data.oMf[go1_model.getFrameId(foot.name)].rotation
        np.testing.assert_allclose(foot.force_in_world, R_base_foot @ f_foot[i], atol=1e-9)  # level base: W = B
        assert foot.in_contact  # 60 N up against 0.3 of a 12.7 kg Go1's quarter weight (~9 N)


def test_wrench_contacts_use_the_force_hysteresis(go1_model: pin.Model) -> None:
    """The vertical force goes through the Schmitt trigger: on above on_threshold, held between, off below
    off_threshold (absolute thresholds in N here)."""
    est = make(go1_model, threshold_mode="absolute", on_threshold=30.0, off_threshold=10.0)
    data = placements(go1_model, GO1_STANDING)
    fz = [50.0, 20.0, 5.0, 20.0, 40.0]
    expected = [True, True, False, False, True]
    for k, (f, want) in enumerate(zip(fz, expected, strict=True)):
        t = T0 + (30 + k) * MS
        for foot in GO1_FEET:  # a vertical force at the foot, in the (level) base frame: moment r x f
            r = data.oMf[go1_model.getFrameId(foot)].translation
            est.add_foot_wrench(FootWrenchSample(t, foot, "base", np.r_[0, 0, f, np.cross(r, [0, 0, f])]))
        e = tick(est, 30 + k)
        assert [x.in_contact for x in e.feet] == [want] * 4, k


def test_bad_wrenches_are_refused_by_name(go1_model: pin.Model) -> None:
    est = make(go1_model)
    t = T0 + 30 * MS
    ok = np.array([0, 0, 50.0, 0, 0, 0])
    est.add_foot_wrench(FootWrenchSample(t, "FL_foot", "odom", ok))
    est.add_foot_wrench(FootWrenchSample(t, "FL_foot", "", ok))
    est.add_foot_wrench(FootWrenchSample(t, "FL_foot", "universe", ok))
    est.add_foot_wrench(FootWrenchSample(t, "FL_foot", "FL_foot", np.r_[np.nan, ok[1:]]))
    est.add_foot_wrench(FootWrenchSample(t, "FL_toe", "FL_foot", ok))
    est.add_foot_wrench(FootWrenchSample(t, "FL_foot", "FL_foot", ok[:3]))
    events = est.pop_events()
    assert [e.key for e in events] == ["foot_wrench_unknown_frame"] * 3 + [
        "foot_wrench_nan", "unknown_foot", "foot_wrench_shape"
    ]  # fmt: skip
    assert "'odom' is not a frame of the robot description" in events[0].message
    assert "FL_foot" in events[3].message and "FL_toe" in events[4].message
    assert not est.foot_wrenches.started  # nothing kept


def test_a_foot_wrench_topic_that_stops_is_named(go1_model: pin.Model) -> None:
    """Three feet keep streaming, RR_foot stops: at the first joint step past contact.foot_sensor_timeout_s the core
    names it (once), and contacts come from the next source (the torques, which have efforts here: none, so
    kinematic); when it streams again, the wrenches are used again."""
    est = make(go1_model)
    up = np.array([0, 0, 60.0, 0, 0, 0])
    sources, stale = [], []
    for k in range(30, 300):
        t = T0 + k * MS
        for foot in GO1_FEET:
            if foot != "RR_foot" or k < 100 or k >= 250:
                est.add_foot_wrench(FootWrenchSample(t, foot, foot, up))
        tick(est, k)
        sources.append(est.contact_source)
        stale.append(est.stale_foot_wrenches)
    keys = [e for e in est.pop_events() if e.key == "foot_wrench_stale"]
    assert len(keys) == 1 and "['RR_foot']" in keys[0].message
    # RR's last sample at k = 99; the timeout is 0.1 s: stale from k = 200 (|200 - 99| ms > 100 ms) to 249
    assert sources[:170] == ["foot_wrench"] * 170 and set(sources[170:220]) == {"kinematic"}
    assert stale[169] == () and stale[170] == ("RR_foot",) and stale[-1] == ()
    assert sources[-1] == "foot_wrench"


def test_schedule_decides_contacts_and_disagreements_are_counted(go1_model: pin.Model) -> None:
    """contact.source schedule: the feet in contact are the schedule's (named, any order); the torque estimate still
    runs, and a foot whose force disagrees for schedule_disagreement_s counts one episode, with an event naming it."""
    est = make(go1_model, source="schedule", schedule_disagreement_s=0.01)
    # joint torques of the robot standing on all four feet, each carrying a quarter of its weight (statics:
    # tau = g(q) - sum_i J_i^T f_i, pinocchio's gravity torques and foot Jacobians, base at the identity and level)
    m = pin.computeTotalMass(go1_model)
    q = pin.neutral(go1_model)
    q[:7] = (0, 0, 0, 0, 0, 0, 1)
    q[7:] = GO1_STANDING
    data = go1_model.createData()
    tau = pin.computeGeneralizedGravity(go1_model, data, q)[6:].copy()
    pin.computeJointJacobians(go1_model, data, q)
    pin.framesForwardKinematics(go1_model, data, q)
    for foot in GO1_FEET:
        J = pin.getFrameJacobian(go1_model, data, go1_model.getFrameId(foot), pin.LOCAL_WORLD_ALIGNED)[:3, 6:]
        tau -= J.T @ np.array([0.0, 0.0, m * 9.81 / 4])
    names = ("RR_foot", "FL_foot", "RL_foot", "FR_foot")
    for k in range(30, 60):
        est.add_contact_schedule(ContactScheduleSample(T0 + k * MS, names, (True, True, False, True)))
        e = tick(est, k, effort=tau)
    assert est.contact_source == "schedule"
    assert [f.in_contact for f in e.feet] == [True, True, False, True]  # FL FR RL RR: the schedule's
    np.testing.assert_allclose([f.force_in_world[2] for f in e.feet], m * 9.81 / 4, rtol=1e-6)  # the torque estimate
    assert est.schedule.disagreement_steps.tolist() == [0, 0, 30, 0]
    assert est.schedule.disagreements.tolist() == [0, 0, 1, 0]  # one episode of 30 ms >= 10 ms
    disagree = [x for x in est.pop_events() if x.key == "contact_schedule_disagrees"]
    assert len(disagree) == 1 and "RL_foot" in disagree[0].message and "says swing" in disagree[0].message


def test_schedule_timing_rule_late_and_stale(go1_model: pin.Model) -> None:
    """The latest schedule stamped at or before the joint stamp is used; one stamped after it waits; a late one (stamp
    before the joint's, arriving after it) is used for later joints; older than schedule_timeout_s: stale, the next
    source decides, said with the reason."""
    est = make(go1_model, source="schedule", schedule_timeout_s=0.02)
    all_on, rl_off = (True,) * 4, (True, True, False, True)
    est.add_contact_schedule(ContactScheduleSample(T0 + 30 * MS, GO1_FEET, rl_off))
    est.add_contact_schedule(ContactScheduleSample(T0 + 32 * MS, GO1_FEET, all_on))  # ahead of joint 31
    e = tick(est, 31)
    assert [f.in_contact for f in e.feet] == list(rl_off)
    e = tick(est, 32)
    assert [f.in_contact for f in e.feet] == list(all_on)
    est.add_contact_schedule(ContactScheduleSample(T0 + 33 * MS, GO1_FEET, rl_off))  # late for joint 34? no: in time
    e = tick(est, 34)
    assert [f.in_contact for f in e.feet] == list(rl_off)
    est.add_contact_schedule(ContactScheduleSample(T0 + 34 * MS + 1, GO1_FEET, all_on))  # late: after joint 34
    e = tick(est, 35)
    assert [f.in_contact for f in e.feet] == list(all_on)
    est.pop_events()
    e = tick(est, 35 + 21)  # 21 ms after the last schedule: stale
    assert est.contact_source == "kinematic"
    events = [x for x in est.pop_events() if x.key == "contact_source_unavailable"]
    assert events and "contact schedule stale" in events[0].message and "ms old" in events[0].message


def test_bad_schedules_are_refused_by_name(go1_model: pin.Model) -> None:
    est = make(go1_model, source="schedule")
    t = T0 + 30 * MS
    est.add_contact_schedule(ContactScheduleSample(t, ("l_foot", "r_foot"), (True, False)))
    est.add_contact_schedule(ContactScheduleSample(t, ("FL_foot", "FR_foot"), (True, False)))
    est.add_contact_schedule(ContactScheduleSample(t, (*GO1_FEET, "FL_toe"), (True,) * 5))
    est.add_contact_schedule(ContactScheduleSample(t, GO1_FEET, (True,) * 3))
    est.add_contact_schedule(ContactScheduleSample(t, ("FL_foot",) * 4, (True,) * 4))
    events = est.pop_events()
    assert [e.key for e in events] == [
        "schedule_unknown_feet", "schedule_missing_feet", "schedule_unknown_feet", "schedule_shape",
        "schedule_duplicate_feet",
    ]  # fmt: skip
    assert "names no foot of the robot: ['l_foot', 'r_foot']" in events[0].message
    assert "FL_foot" in events[0].message  # the robot's feet listed
    assert "lacks the feet ['RL_foot', 'RR_foot']" in events[1].message
    assert "names unknown feet: ['FL_toe']" in events[2].message
    assert not est.schedule.started


def test_run_mirrors_mim_run(go1_model: pin.Model) -> None:
    """run(contact_schedule, imu, joints): the same as adding the schedule at the joint stamp, the IMU, then the
    joints, and the estimate after the joint update."""
    a = make(go1_model, source="schedule")
    b = make(go1_model, source="schedule")
    for k in range(30, 80):
        t = T0 + k * MS
        sched = (True, k % 20 < 10, k % 20 >= 10, True)
        ea = a.run(sched, ImuSample(t, np.zeros(3), LEVEL), JointSample(t, a.joint_names, GO1_STANDING))
        b.add_contact_schedule(ContactScheduleSample(t, GO1_FEET, sched))
        b.add_imu(ImuSample(t, np.zeros(3), LEVEL))
        eb = b.add_joints(JointSample(t, b.joint_names, GO1_STANDING))
        assert ea is not None and eb is not None and ea.stamp_ns == t
        np.testing.assert_array_equal(ea.output_vector(), eb.output_vector())
        assert [f.in_contact for f in ea.feet] == list(sched)
    ea = a.run(dict(zip(GO1_FEET, (True,) * 4)), None, JointSample(T0 + 80 * MS, a.joint_names, GO1_STANDING))
    other = make(go1_model)
    with pytest.raises(ValueError, match=r"contact\.source: schedule"):
        other.run((True,) * 4, None, JointSample(T0 + 31 * MS, other.joint_names, GO1_STANDING))
    with pytest.raises(ValueError, match="3 values for the 4 feet"):
        a.run((True,) * 3, None, JointSample(T0 + 81 * MS, a.joint_names, GO1_STANDING))


def test_the_torque_source_publishes_its_own_forces_with_wrenches_streaming(go1_model: pin.Model) -> None:
    """contact.source torque decides and publishes from the joint torques, whether the compiled one-kernel step or
    the reference path runs: streaming foot wrenches change nothing (the same outputs as without them)."""
    a, b = make(go1_model, source="torque"), make(go1_model, source="torque")
    effort = np.resize([0.0, 2.0, -5.0], 12)
    for k in range(30, 60):
        for foot in GO1_FEET:
            a.add_foot_wrench(FootWrenchSample(T0 + k * MS, foot, foot, np.array([0, 0, 80.0, 0, 0, 0])))
        ea, eb = tick(a, k, effort=effort), tick(b, k, effort=effort)
        assert ea is not None and eb is not None
        np.testing.assert_array_equal(ea.output_vector(), eb.output_vector())
        for fa, fb in zip(ea.feet, eb.feet, strict=True):
            assert fa.in_contact == fb.in_contact
            np.testing.assert_array_equal(fa.wrench_in_foot, fb.wrench_in_foot)
    assert a.contact_source == "torque" and a.forces_estimated


def test_initialisation_waits_for_the_wrench_sensors_or_the_schedule_to_load_a_foot(go1_model: pin.Model) -> None:
    """ekf.init_wait_for_loaded_feet with foot wrenches: the robot does not initialise while every sensor reads no
    force (held in the air, the standing joint pose and a still IMU notwithstanding), and does once they carry it;
    with contact.source schedule, once the schedule has a stance foot."""
    for source in ("auto", "schedule"):
        settings = EstimatorSettings(ekf=EkfSettings(init_imu_samples=20), contact=ContactSettings(source=source))
        est = RobotStateEstimator(go1_model, ImuSpec(name="imu", link="base", frame_id="imu_link"), GO1_FEET,
                                  settings, base_link="base")  # fmt: skip
        for k in range(60):
            t = T0 + k * MS
            loaded = k >= 40
            for foot in GO1_FEET:
                est.add_foot_wrench(FootWrenchSample(t, foot, "base", np.array([0, 0, 40.0 * loaded, 0, 0, 0])))
            est.add_contact_schedule(ContactScheduleSample(t, GO1_FEET, (loaded,) * 4))
            est.add_joints(JointSample(t, est.joint_names, GO1_STANDING))
            est.add_imu(ImuSample(t, np.zeros(3), LEVEL))
            assert est.initialized == (k >= 40), (source, k)
        keys = [e.key for e in est.pop_events()]
        assert "init_waiting_for_load" in keys and "initialized" in keys, source
