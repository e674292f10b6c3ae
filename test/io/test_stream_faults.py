"""Faults of issue 19 through the adapter rules (``io.stream.EstimatorStream``) over the real Go1 estimator, as the
node and replay run them: a joint driver whose clock is ahead, a looping recording whose timelines interleave, samples
lost to CPU load, efforts that disappear, a ``base_frame`` the description lacks.

Each run is a Go1 standing still (IMU at rest, the standing joint pose with the efforts of standing), 500 Hz; the
reference of a faulty run is the same run without the fault: a refused sample never reaches the core, so the
estimates after it are exactly those of the clean run.
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import RobotStateEstimator
from robot_state_estimator.estimation.settings import EstimatorSettings
from robot_state_estimator.io.stream import (
    NOT_REJECTIONS,
    AdapterSettings,
    EstimatorStream,
    output_frame_problem,
    output_frame_warning,
)

S = 1_000_000_000
T0 = 1_000 * S
DT = 2_000_000  # 500 Hz
STAND_Q = np.tile([0.0, 0.8, -1.6], 4)
STAND_TAU = np.tile([0.0, -2.0, 5.0], 4)  # hip, thigh, calf torques (N m): about 42 N on each foot, loaded


@pytest.fixture(scope="module")
def go1():
    return load_description(str(robot_description_path("go1")))


def _stream(desc, **settings_kw) -> EstimatorStream:
    settings = EstimatorSettings(**settings_kw)
    est = RobotStateEstimator.from_description(desc, settings)
    return EstimatorStream(est, desc, settings, AdapterSettings(), strict=True)


def _imu(desc, t: int) -> ImuSample:
    return ImuSample(t, np.zeros(3), np.array([0.0, 0.0, 9.81]), None, desc.imu.frame_id)


def _joints(desc, t: int, effort: bool = True) -> JointSample:
    return JointSample(t, tuple(desc.joint_names), STAND_Q, np.zeros(12), STAND_TAU if effort else None)


def _feed(st: EstimatorStream, desc, start: int, n: int, *, effort: bool = True, joints_first: bool = False) -> list:
    """``n`` stamps from ``start``: IMU then joints (or joints then IMU); returns every output."""
    outs = []
    for k in range(n):
        t = start + k * DT
        if joints_first:
            outs += [st.on_joints(_joints(desc, t, effort)), st.on_imu(_imu(desc, t))]
        else:
            outs += [st.on_imu(_imu(desc, t)), st.on_joints(_joints(desc, t, effort))]
    return outs


def _notes(outs: list) -> list:
    return [n for o in outs for n in o.notes]


def test_a_joint_sample_from_a_clock_100_s_ahead_is_refused_under_its_own_key_and_resets_nothing(go1) -> None:
    clean, faulty = _stream(go1), _stream(go1)
    _feed(clean, go1, T0, 500)
    _feed(faulty, go1, T0, 250)
    bad = T0 + 249 * DT + 100 * S
    out = faulty.on_joints(_joints(go1, bad))
    outs = _feed(faulty, go1, T0 + 250 * DT, 250)
    assert faulty.rejected == {"stamp_future": 1} and clean.rejected == {}
    assert faulty.events.get("reset", 0) == 0 and faulty.events.get("stamp_backwards", 0) == 0
    (note,) = out.notes
    # the log names the bad sample and the IMU clock, and no good sample after it is blamed
    assert note.key == "stamp_future" and "stamped 1100.498000000 s, 100.000 s after" in note.message
    assert "1000.498000000 s" in note.message and "max_time_gap_s = 0.5 s" in note.message
    assert not [n for n in _notes(outs) if n.level != "info"]
    # the refused sample never reached the core: the same estimates as the clean run, bit for bit
    np.testing.assert_array_equal(faulty.estimator.q, clean.estimator.q)
    np.testing.assert_array_equal(faulty.estimator.v, clean.estimator.v)
    assert faulty.estimator.last_estimate.stamp_ns == T0 + 499 * DT
    # the clock that is ahead stays refused, sample after sample, and the loss detection sees no gap
    for k in range(3):
        assert faulty.on_joints(_joints(go1, bad + (k + 1) * DT)).notes[0].key == "stamp_future"
    assert faulty.lost["joint_states_lost"] == 0


def test_a_joint_sample_from_a_clock_far_behind_is_refused_without_a_reset(go1) -> None:
    st = _stream(go1)
    _feed(st, go1, T0, 250)
    out = st.on_joints(_joints(go1, T0 - 100 * S))
    assert [n.key for n in out.notes] == ["stamp_past"] and "100.498 s before the last IMU" in out.notes[0].message
    _feed(st, go1, T0 + 250 * DT, 10)
    assert st.rejected == {"stamp_past": 1} and st.events.get("reset", 0) == 0


@pytest.mark.parametrize("joints_first", [False, True], ids=["imu_first", "joints_first"])
def test_a_looping_recording_resets_once_whichever_topic_loops_first(go1, joints_first: bool) -> None:
    """At the loop, the other topic still has a message of the old timeline queued (the node takes each topic's
    queue in turn): it is refused (``stamp_future`` after the IMU looped, ``stamp_past`` before), not a second
    reset."""
    st = _stream(go1)
    _feed(st, go1, T0, 500)  # 1 s, initialised
    end = T0 + 500 * DT
    if joints_first:
        st.on_joints(_joints(go1, T0))  # the new timeline's first joint state ...
        st.on_imu(_imu(go1, end))  # ... then the IMU message of the old timeline still queued
    else:
        st.on_imu(_imu(go1, T0))
        st.on_joints(_joints(go1, end))
    outs = _feed(st, go1, T0 + DT, 500, joints_first=joints_first)
    assert st.events["reset"] == 1 and st.events["stamp_backwards"] == 1
    # joints first: the new timeline's joint states until the IMU loops too (two here) are behind the IMU's clock
    assert st.rejected == ({"stamp_past": 2} if joints_first else {"stamp_future": 1})
    assert st.estimator.last_estimate is not None and st.estimator.last_estimate.stamp_ns == T0 + 500 * DT
    assert sum(1 for n in _notes(outs) if n.key == "reset") <= 1


def test_imu_samples_lost_to_load_are_losses_not_rejections(go1) -> None:
    """A 100 ms hole in the IMU stamps (a best-effort queue overflowing): longer than ``ekf.max_dt_s`` (the core
    re-anchors its clock: event ``imu_gap``, the sample used), shorter than ``max_time_gap_s`` (no reset)."""
    st = _stream(go1)
    _feed(st, go1, T0, 300)
    t = T0 + 299 * DT + 100_000_000
    outs = [st.on_imu(_imu(go1, t)), st.on_joints(_joints(go1, t))]
    outs += _feed(st, go1, t + DT, 50)
    assert st.rejected == {} and st.events["imu_gap"] == 1 and "imu_gap" in NOT_REJECTIONS
    assert st.lost["imu_lost"] == 49 and st.lost["joint_states_lost"] == 49  # 100 ms / 2 ms - 1
    assert st.estimator.last_estimate.stamp_ns == t + 50 * DT


def test_efforts_that_disappear_degrade_the_contact_source_which_is_named(go1) -> None:
    st = _stream(go1)
    _feed(st, go1, T0, 300)
    assert st.contact_source == "torque" and st.forces_estimated and not st.contact_source_problem
    outs = _feed(st, go1, T0 + 300 * DT, 100, effort=False)
    assert st.contact_source == "kinematic" and not st.forces_estimated
    degraded = [n for n in _notes(outs) if n.key == "contact_source"]
    assert len(degraded) == 1 and degraded[0].level == "warn"
    assert "no efforts any more" in degraded[0].message and "contact_wrench/<foot> is not published" in (
        st.contact_source_problem
    )
    assert st.rejected == {}  # the samples are used: not rejections
    outs = _feed(st, go1, T0 + 400 * DT, 50)
    back = [n for n in _notes(outs) if n.key == "contact_source"]
    assert [(n.level, n.message) for n in back] == [("info", "contacts come from 'torque' again")]
    assert st.contact_source == "torque" and st.forces_estimated and not st.contact_source_problem


def test_contact_source_auto_without_efforts_from_the_start_is_not_a_degradation(go1) -> None:
    st = _stream(go1)
    outs = _feed(st, go1, T0, 300, effort=False)
    assert st.contact_source == "kinematic" and not st.contact_source_problem
    assert not [n for n in _notes(outs) if n.key == "contact_source"]
    assert [n.key for n in _notes(outs)].count("contacts_from_kinematics") == 1  # the core says it once


def test_a_base_frame_the_description_lacks_is_warned_about_with_the_fix(go1) -> None:
    assert go1.base_link == "base" and "base_link" not in go1.graph
    text = output_frame_warning(go1, {"base_frame": "base_link", "tf_child_frame": ""})
    assert "'base_link' is not a frame of the robot description (its base link is 'base')" in text
    assert "robot_state_publisher publishes from 'base'" in text and "set base_frame:=base" in text
    assert not output_frame_problem(go1, {"base_frame": "base_link"})  # a warning, not a refusal
    for params in ({"base_frame": ""}, {"base_frame": "base"}, {"base_frame": "base_link", "tf_child_frame": "b"}):
        assert output_frame_warning(go1, params) == "", params
