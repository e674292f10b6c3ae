"""The adapter rules for foot wrench sensors (WrenchStamped per foot) and the contact schedule (JointState: name =
feet, position = 1 / 0), on the real Go1 core: what is refused and under which key, and the topic names."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.samples import ContactScheduleSample
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import EstimatorSettings, RobotStateEstimator
from robot_state_estimator.estimation.settings import ContactSettings
from robot_state_estimator.io import bags, messages
from robot_state_estimator.io.stream import AdapterSettings, EstimatorStream, foot_wrench_topics

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
T0 = 100 * 10**9


@pytest.fixture(scope="module")
def go1():
    return load_description(str(robot_description_path("go1")))


def stream(desc, source: str = "auto") -> EstimatorStream:
    settings = EstimatorSettings(contact=ContactSettings(source=source))
    est = RobotStateEstimator.from_description(desc, settings)
    # the Go1 datasheet's IMU noise is below the walking-robot floor: that start-up warning is not about foot inputs,
    # drained here so that each message's own notes are checked below
    assert {e.key for e in est.pop_events()} <= {"imu_noise_below_floor"}
    return EstimatorStream(est, desc, settings, AdapterSettings(), strict=True)


def wrench_msg(stamp_ns: int, frame: str, values) -> object:
    return messages.wrench_stamped_msg(bags.default_types(), stamp_ns, frame, np.asarray(values, dtype=float))


def test_foot_wrench_messages(go1) -> None:
    st = stream(go1)
    up = [0, 0, 50.0, 0, 0, 0]
    out = st.on_foot_wrench_msg(wrench_msg(T0, "FL_calf", up), "FL_foot")
    assert out.sample is not None and out.sample.frame_id == "FL_calf" and out.sample.foot == "FL_foot"
    assert st.estimator.foot_wrenches.started and not st.rejected and not out.notes
    out = st.on_foot_wrench_msg(wrench_msg(T0 + 1, "FL_foot", [0, 0, np.nan, 0, 0, 0]), "FL_foot")
    assert out.sample is None and st.rejected["foot_wrench_not_finite"] == 1 and "FL_foot" in out.notes[0].message
    out = st.on_foot_wrench_msg(wrench_msg(T0 + 2, "l_sole", up), "FR_foot")  # not a frame of the Go1
    assert [n.key for n in out.notes] == ["foot_wrench_unknown_frame"] and st.events["foot_wrench_unknown_frame"] == 1
    assert "'l_sole' is not a frame of the robot description" in out.notes[0].message
    out = st.on_foot_wrench_msg(wrench_msg(0, "FL_foot", up), "FL_foot")
    assert st.rejected["stamp_zero"] == 1


def test_contact_schedule_messages(go1) -> None:
    st = stream(go1, "schedule")
    types = bags.default_types()
    msg = messages.contact_schedule_msg(types, ContactScheduleSample(T0, FEET, (True, False, False, True)))
    out = st.on_contact_schedule_msg(msg)
    assert out.sample.in_contact == (True, False, False, True) and not st.rejected and not out.notes
    bad = messages.contact_schedule_msg(types, ContactScheduleSample(T0, FEET, (True,) * 4))
    bad.position = np.array([1.0, 0.5, 0.0, 1.0])
    out = st.on_contact_schedule_msg(bad)
    assert st.rejected["schedule_bad_message"] == 1 and "FR_foot has 0.5" in out.notes[0].message
    biped = messages.contact_schedule_msg(types, ContactScheduleSample(T0, ("l_sole", "r_sole"), (True, False)))
    out = st.on_contact_schedule_msg(biped)
    assert [n.key for n in out.notes] == ["schedule_unknown_feet"] and "names no foot of the robot" in out.notes[
        0
    ].message


def test_foot_wrench_topic_names() -> None:
    assert foot_wrench_topics(["{foot}/wrench"], FEET)["RL_foot"] == "RL_foot/wrench"
    explicit = [f"{f}=/{f.lower()}_ft/wrench" for f in FEET]
    assert foot_wrench_topics(explicit, FEET)["FR_foot"] == "/fr_foot_ft/wrench"
    with pytest.raises(ValueError, match=r"no topic for the feet \['RR_foot'\]"):
        foot_wrench_topics(explicit[:3], FEET)
    with pytest.raises(ValueError, match="'l_sole' is not a foot"):
        foot_wrench_topics([*explicit, "l_sole=/x"], FEET)
    with pytest.raises(ValueError, match="lacks"):
        foot_wrench_topics(["wrench"], FEET)
    with pytest.raises(ValueError, match="not FOOT=TOPIC"):
        foot_wrench_topics(["a/wrench", "b/wrench"], FEET)
