"""The adapter rules of ``io.stream.EstimatorStream`` without ROS: hand-built samples, a fake core.

The fake core records what reaches it and returns a finite estimate (with feet for joint samples) at the
sample's stamp, so each test checks one rule by what the core saw, what the stream says to output, and the
cause counts.
"""

from __future__ import annotations

import dataclasses
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from robot_state_estimator.common.samples import Estimate, Event, FootForceSample, FootState, ImuSample, JointSample
from robot_state_estimator.io import bags, messages
from robot_state_estimator.io.stream import AdapterSettings, EstimatorStream, Outputs, pack_estimate

S = 1_000_000_000  # 1 s in ns
T0 = 100 * S


class FakeCore:
    """Stand-in for ``RobotStateEstimator``: records calls, returns finite estimates, reset emits an event."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, str]] = []
        self.resets: list[str] = []
        self.events: list[Event] = []
        self.joint_estimates = True

    @staticmethod
    def estimate(stamp_ns: int, feet: bool = False) -> Estimate:
        z = np.zeros(3)
        foot = FootState("FL_foot", True, np.array([0.0, 0.0, 50.0]), np.zeros(6), True, 1.0)
        return Estimate(
            stamp_ns, z, np.array([0.0, 0.0, 0.0, 1.0]), z, z, np.eye(6), np.eye(6), z, z, (foot,) if feet else ()
        )

    def add_imu(self, s):
        self.calls.append(("imu", s.stamp_ns, s.frame_id))
        return self.estimate(s.stamp_ns)

    def add_joints(self, s):
        self.calls.append(("joints", s.stamp_ns, ""))
        return self.estimate(s.stamp_ns, feet=True) if self.joint_estimates else None

    def add_foot_forces(self, s):
        self.calls.append(("feet", s.stamp_ns, ""))

    def pop_events(self):
        out, self.events = self.events, []
        return out

    def reset(self, reason):
        self.resets.append(reason)
        self.events.append(Event("reset", f"filter reset: {reason}", "warn"))


DESC = SimpleNamespace(joint_names=("a", "b"), imu=SimpleNamespace(frame_id="imu", link="imu_link"))


def settings(source: str = "auto", tolerance_s: float = 0.05, ignore_unknown_joints: bool = False):
    return SimpleNamespace(
        out_of_order_tolerance_s=tolerance_s,
        contact=SimpleNamespace(source=source),
        ignore_unknown_joints=ignore_unknown_joints,
    )


def make(strict: bool = False, source: str = "auto", **adapter) -> tuple[EstimatorStream, FakeCore]:
    core = FakeCore()
    return EstimatorStream(core, DESC, settings(source), AdapterSettings(**adapter), strict=strict), core


def imu(stamp_ns: int, frame: str = "imu") -> ImuSample:
    return ImuSample(stamp_ns, np.zeros(3), np.array([0.0, 0.0, 9.81]), None, frame)


def joints(stamp_ns: int, names=("a", "b"), effort=None) -> JointSample:
    return JointSample(stamp_ns, tuple(names), np.zeros(len(names)), None, effort)


def keys(out: Outputs) -> list[str]:
    return [n.key for n in out.notes]


# ------------------------------------------------------------------------------------------ settings


def test_adapter_settings_from_node_parameters():
    a = AdapterSettings.from_params({"imu_frame_id": "*", "max_time_gap_s": 2, "robot": "go1", "qos_depth": 5})
    assert a == AdapterSettings(imu_frame_id="*", max_time_gap_s=2.0)
    assert isinstance(a.max_time_gap_s, float)
    assert AdapterSettings.from_params({}) == AdapterSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.max_time_gap_s = 1.0  # type: ignore[misc]


def test_the_module_does_not_import_rclpy():
    import subprocess

    code = "import sys, robot_state_estimator.io.stream; sys.exit(int('rclpy' in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# --------------------------------------------------------------------------------------- IMU frame


def test_imu_frame_of_the_description_and_its_link_are_accepted_others_skipped():
    st, core = make()
    assert st.on_imu(imu(T0, "imu")).estimate is not None
    out = st.on_imu(imu(T0 + 1_000_000, "imu_link"))  # the link: accepted, renamed to the core's frame
    assert out.sample.frame_id == "imu"
    out = st.on_imu(imu(T0 + 2_000_000, "camera"))
    assert out == Outputs(notes=out.notes) and keys(out) == ["imu_frame_id"]
    assert "'camera'" in out.notes[0].message and "imu_frame_id" in out.notes[0].message
    assert core.calls == [("imu", T0, "imu"), ("imu", T0 + 1_000_000, "imu")]
    assert st.rejected == {"imu_frame_id": 1}


def test_imu_frame_gz_sim_publishes_is_accepted():
    desc = SimpleNamespace(
        joint_names=("a", "b"), imu=SimpleNamespace(frame_id="imu", link="imu_link", gz_frame_id="robot/base/imu")
    )
    core = FakeCore()
    st = EstimatorStream(core, desc, settings(), AdapterSettings())
    out = st.on_imu(imu(T0, "robot/base/imu"))
    assert out.sample.frame_id == "imu" and core.calls == [("imu", T0, "imu")] and not st.rejected


def test_imu_frame_id_parameter_alias_and_star():
    st, core = make(imu_frame_id="my_imu")
    st.on_imu(imu(T0, "imu"))  # the description's frame is no longer accepted
    st.on_imu(imu(T0 + 1, "my_imu"))
    assert core.calls == [("imu", T0 + 1, "imu")]  # alias renamed to the core's frame
    assert st.rejected == {"imu_frame_id": 1}

    st, core = make(imu_frame_id="*")
    st.on_imu(imu(T0, "anything"))
    st.on_imu(imu(T0 + 1, ""))
    assert [c[2] for c in core.calls] == ["imu", "imu"] and not st.rejected


def _described_stream(robot: str) -> tuple[EstimatorStream, FakeCore]:
    import warnings

    from robot_state_estimator.description import load_description

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        desc = load_description(f"config/robots/{robot}.urdf.xacro")
    core = FakeCore()
    return EstimatorStream(core, desc, settings(), AdapterSettings()), core


def test_go1_imu_link_is_accepted_and_the_lumped_base_refused():
    # Go1: the sensor is in imu_link (no pose), lumped into base with imu_joint's offset (-0.01592, -0.06659,
    # -0.00617) m (example-robot-data go1.urdf); frame ids: the sensor name and gz-sim's go1/base/imu_sensor.
    st, core = _described_stream("go1")
    accepted = ["go1/base/imu_sensor", "imu_link", "imu_sensor"]
    for k, frame in enumerate(accepted):
        assert st.on_imu(imu(T0 + k, frame)).sample.frame_id == "imu_sensor"
    out = st.on_imu(imu(T0 + 10, "base"))
    assert keys(out) == ["imu_frame_id"] and len(core.calls) == 3
    msg = out.notes[0].message
    assert "S is offset by (-0.01592, -0.06659, -0.00617) m in 'base'" in msg and str(accepted) in msg


def test_anymal_c_base_is_refused_as_rotated():
    # ANYmal C: imu_link is fixed to base with a +90 deg yaw (config/robots/anymal_c.urdf.xacro's header).
    st, core = _described_stream("anymal_c")
    out = st.on_imu(imu(T0, "base"))
    assert keys(out) == ["imu_frame_id"] and not core.calls
    assert "S is rotated by 90 deg about (0, 0, 1)" in out.notes[0].message
    assert st.on_imu(imu(T0 + 1, "imu_link")).sample.frame_id == "imu_sensor"
    st.set_adapter(AdapterSettings(imu_frame_id="base"))  # the parameter still overrides
    assert st.on_imu(imu(T0 + 2, "base")).sample.frame_id == "imu_sensor"


# -------------------------------------------------------------------------------------- zero stamps


def test_zero_and_negative_stamps_are_skipped():
    st, core = make()
    foot_forces = FootForceSample(0, ("FL_foot",), np.array([10.0]))
    for out in (st.on_imu(imu(0)), st.on_imu(imu(-5)), st.on_joints(joints(0)), st.on_foot_forces(foot_forces)):
        assert keys(out) == ["stamp_zero"] and out.estimate is None and out.sample is None
    assert core.calls == [] and st.rejected == {"stamp_zero": 4}


# ------------------------------------------------------------------------------ gap and backwards


def test_forward_gap_resets_then_processes_the_sample():
    st, core = make(max_time_gap_s=0.5)
    st.on_imu(imu(T0))
    st.on_imu(imu(T0 + 500_000_000))  # exactly the gap: no reset
    out = st.on_imu(imu(T0 + 1_100_000_000))  # 0.6 s: reset, then processed
    assert core.resets == ["gap of 0.600 s in the IMU stamps"]
    assert keys(out) == ["stamp_gap", "reset"]  # the adapter's note, then the core's reset event
    assert out.notes[0].message == "gap of 0.600 s in the IMU stamps: resetting the filter"
    assert out.estimate is not None and out.odometry  # after a reset the next stamp is output
    assert st.rejected == {"stamp_gap": 1} and st.events == {"reset": 1} and st.resets == 1
    assert [c[1] for c in core.calls] == [T0, T0 + 500_000_000, T0 + 1_100_000_000]


def test_time_going_backwards_is_left_to_the_core_and_not_a_gap():
    st, core = make(max_time_gap_s=0.5)
    st.on_imu(imu(T0 + S))
    st.on_imu(imu(T0 + 900_000_000))  # 0.1 s back (> tolerance 0.05): passed on, the core resets
    st.on_imu(imu(T0 + 901_000_000))
    assert not core.resets and not st.rejected
    assert [c[1] for c in core.calls] == [T0 + S, T0 + 900_000_000, T0 + 901_000_000]
    # the gap reference followed the new clock: 0.6 s after it is a gap again
    st.on_imu(imu(T0 + 1_501_000_000))
    assert st.rejected == {"stamp_gap": 1}


def test_small_backwards_step_keeps_the_gap_reference():
    st, _ = make(max_time_gap_s=0.5)
    st.on_imu(imu(T0 + S))
    st.on_imu(imu(T0 + S - 10_000_000))  # 10 ms back: within the tolerance, last stamp stays
    assert st.last_imu_ns == T0 + S


def test_live_max_time_gap_change():
    st, core = make(max_time_gap_s=0.5)
    st.on_imu(imu(T0))
    st.set_adapter(AdapterSettings(max_time_gap_s=2.0))
    st.on_imu(imu(T0 + S))
    assert not core.resets


# ------------------------------------------------------------------------------------------- joints


def test_joint_name_rules():
    st, core = make()
    assert keys(st.on_joints(joints(T0, names=("a",)))) == ["joint_missing_names"]
    assert keys(st.on_joints(joints(T0, names=("a", "b", "c")))) == ["joint_unknown_names"]
    assert st.on_joints(joints(T0, names=("b", "a"))).estimate is not None  # order does not matter
    assert keys(st.on_joints(joints(T0 + 1, names=("a",)))) == ["joint_missing_names"]  # checked again on change
    assert st.rejected == {"joint_missing_names": 2, "joint_unknown_names": 1}
    assert core.calls == [("joints", T0, "")]


def test_a_misspelt_joint_is_named_with_the_missing_one():
    st, _ = make()
    (note,) = st.on_joints(joints(T0, names=("a", "bb"))).notes
    assert (
        note.message == "joint sample skipped: missing joints ['b']; the message's joints ['bb'] are not in the model"
    )
    (note,) = st.on_joints(joints(T0 + 1, names=("a", "b", "gripper"))).notes
    assert "joints ['gripper'] are not in the model (set ignore_unknown_joints" in note.message


def test_unknown_joint_names_pass_to_the_core_with_ignore_unknown_joints():
    st, core = make()
    st.set_core(core, settings(ignore_unknown_joints=True))
    assert st.on_joints(joints(T0, names=("gripper", "a", "b"))).estimate is not None
    assert st.on_joints(joints(T0 + 1, names=("gripper", "a", "b"))).estimate is not None  # cached check
    assert keys(st.on_joints(joints(T0 + 2, names=("gripper", "a")))) == ["joint_missing_names"]  # still an error
    assert st.rejected == {"joint_missing_names": 1}
    assert core.calls == [("joints", T0, ""), ("joints", T0 + 1, "")]
    # the rule follows a settings change, also for names already checked
    st.on_joints(joints(T0 + 3, names=("gripper", "a", "b")))
    st.set_core(core, settings())
    assert keys(st.on_joints(joints(T0 + 4, names=("gripper", "a", "b")))) == ["joint_unknown_names"]


def test_settings_without_the_field_keep_the_strict_rule():
    st, _ = make()
    st.set_core(st.estimator, SimpleNamespace(out_of_order_tolerance_s=0.05, contact=SimpleNamespace(source="auto")))
    assert keys(st.on_joints(joints(T0, names=("a", "b", "c")))) == ["joint_unknown_names"]


def test_torque_contacts_need_efforts():
    st, core = make(source="torque")
    assert keys(st.on_joints(joints(T0))) == ["joint_effort_missing"]
    assert st.on_joints(joints(T0, effort=np.zeros(2))).estimate is not None
    st2, _ = make(source="auto")
    assert st2.on_joints(joints(T0)).estimate is not None
    assert st.rejected == {"joint_effort_missing": 1}
    assert core.calls == [("joints", T0, "")]


def test_settings_change_applies_to_the_rules():
    st, core = make(source="auto")
    st.set_core(core, settings(source="torque"))
    assert keys(st.on_joints(joints(T0))) == ["joint_effort_missing"]


# ---------------------------------------------------------------------------- once per stamp, order


def test_odometry_once_per_stamp_in_increasing_order_contacts_every_joint_update():
    st, core = make()
    a = st.on_imu(imu(T0))
    b = st.on_joints(joints(T0))  # same stamp: no odometry, but its feet are output
    c = st.on_imu(imu(T0 + 1_000_000))
    d = st.on_joints(joints(T0 + 1_000_000))
    assert (a.odometry, b.odometry, c.odometry, d.odometry) == (True, False, True, False)
    assert (a.contacts, b.contacts, d.contacts) == (False, True, True)
    # an estimate at an older stamp (a delayed joint sample applied at the filter time) is not output
    core.add_joints = lambda s: FakeCore.estimate(T0, feet=True)
    e = st.on_joints(joints(T0 + 2_000_000))
    assert e.estimate is not None and not e.odometry and e.contacts


def test_a_core_reset_restarts_the_output_order():
    st, core = make()
    st.on_imu(imu(T0 + S))
    core.events.append(Event("stamp_backwards", "time went backwards", "warn"))
    core.reset("time went backwards")
    out = st.on_imu(imu(T0))  # the core reset itself: an older stamp is output again
    assert keys(out) == ["stamp_backwards", "reset"] and out.odometry
    assert st.events == {"stamp_backwards": 1, "reset": 1} and not st.rejected


# -------------------------------------------------------------------------------------- decimation


def test_odometry_rate_first_estimate_of_each_period():
    st, _ = make(odometry_rate_hz=100.0)
    outs = [st.on_imu(imu(T0 + k * 1_000_000)) for k in range(25)]  # 1 kHz for 25 ms
    assert [o.estimate.stamp_ns for o in outs if o.odometry] == [T0, T0 + 10_000_000, T0 + 20_000_000]
    assert all(o.estimate is not None for o in outs)  # the filter runs on every sample


def test_contacts_rate_first_joint_update_of_each_period():
    st, _ = make(contacts_rate_hz=200.0)
    outs = [st.on_joints(joints(T0 + 1 + k * 1_000_000)) for k in range(12)]
    assert [o.estimate.stamp_ns for o in outs if o.contacts] == [T0 + 1, T0 + 5_000_001, T0 + 10_000_001]
    st.set_adapter(AdapterSettings(contacts_rate_hz=0.0))  # live change: every update again
    assert all(st.on_joints(joints(T0 + 20_000_000 + k)).contacts for k in range(3))


def test_periods_and_reset_of_the_slots():
    st, core = make(odometry_rate_hz=100.0, contacts_rate_hz=50.0, max_time_gap_s=0.5)
    assert (st.odom_period_ns, st.contacts_period_ns) == (10_000_000, 20_000_000)
    st.on_imu(imu(T0))
    assert not st.on_imu(imu(T0 + 1_000_000)).odometry
    core.reset("requested")
    # the core's reset event (popped with this step, before the output decision) restarts the slots: the
    # estimate is output although its 10 ms period already had one
    assert st.on_imu(imu(T0 + 2_000_000)).odometry is True
    assert not st.on_imu(imu(T0 + 3_000_000)).odometry
    st.on_imu(imu(T0 + 4_000_000 + S))  # a gap: reset by the stream, slots restart
    assert st.odom_slot == (T0 + 4_000_000 + S) // 10_000_000


# ---------------------------------------------------------------------------------- non-finite guard


def test_non_finite_estimate_is_not_output_and_resets():
    st, core = make()
    bad = FakeCore.estimate(T0)
    core.add_imu = lambda s: dataclasses.replace(bad, stamp_ns=s.stamp_ns, v_base_in_base=np.array([0, np.nan, 0]))
    out = st.on_imu(imu(T0))
    assert out.estimate is None and out.buf is None and not out.odometry
    assert keys(out) == ["estimate_not_finite"]
    assert out.notes[0].message == "the estimate is not finite: resetting the filter"
    assert core.resets == ["the estimate is not finite"] and st.rejected == {"estimate_not_finite": 1}
    assert st.last_imu_ns is None and st.n_estimates == 0


def test_non_finite_foot_wrench_is_caught_too():
    st, core = make()
    est = FakeCore.estimate(T0, feet=True)
    foot = dataclasses.replace(est.feet[0], wrench_in_foot=np.array([0, 0, np.inf, 0, 0, 0]))
    core.add_joints = lambda s: dataclasses.replace(est, feet=(foot,))
    assert keys(st.on_joints(joints(T0))) == ["estimate_not_finite"]


def test_finite_estimate_comes_with_its_packed_buffer():
    st, _ = make()
    out = st.on_joints(joints(T0))
    np.testing.assert_array_equal(out.buf, pack_estimate(out.estimate))
    assert st.n_estimates == 1


@pytest.mark.parametrize("lazy", [True, False], ids=["output_vector", "fields"])
def test_pack_estimate_lays_out_the_numbers_and_refuses_any_non_finite_one(lazy: bool) -> None:
    """The buffer is the estimate's numbers in the documented order (worked out here from the fields), a copy; a NaN
    or an infinity anywhere gives None; huge finite numbers are kept."""
    rng = np.random.default_rng(2)
    vector = rng.normal(size=91)
    feet = tuple(FootState(n, True, rng.normal(size=3), rng.normal(size=6), True, 1.0) for n in ("a", "b"))

    def estimate(v: np.ndarray, feet: tuple[FootState, ...]) -> Estimate:
        if lazy:
            return Estimate.from_output_vector(T0, v, feet)
        return Estimate(
            T0,
            v[0:3],
            v[3:7],
            v[7:10],
            v[10:13],
            v[13:49].reshape(6, 6),
            v[49:85].reshape(6, 6),
            v[85:88],
            v[88:91],
            feet,
        )

    expected = np.concatenate(
        [vector[:85], feet[0].wrench_in_foot, feet[0].force_in_world, feet[1].wrench_in_foot, feet[1].force_in_world]
    )
    buf = pack_estimate(estimate(vector, feet))
    assert buf is not None and np.array_equal(buf, expected)
    imu_only = pack_estimate(estimate(vector, ()))
    assert imu_only is not None and np.array_equal(imu_only, vector[:85]) and not np.shares_memory(imu_only, vector)
    for k in (0, 40, 84):
        for bad in (np.nan, np.inf, -np.inf):
            v = vector.copy()
            v[k] = bad
            assert pack_estimate(estimate(v, feet)) is None and pack_estimate(estimate(v, ())) is None
    bad_foot = dataclasses.replace(feet[1], force_in_world=np.array([0.0, np.nan, 0.0]))
    assert pack_estimate(estimate(vector, (feet[0], bad_foot))) is None
    huge = vector.copy()
    huge[20:23] = 1.7e308  # finite
    kept = pack_estimate(estimate(huge, feet))
    assert kept is not None and np.array_equal(kept[:85], huge[:85])


# -------------------------------------------------------------------------- messages, errors, counts


def _imu_msg(sample: ImuSample):
    return messages.imu_msg(bags.default_types(), sample)


def _joint_msg(sample: JointSample):
    return messages.joint_state_msg(bags.default_types(), sample)


def test_message_conversion_causes():
    st, core = make()
    assert keys(st.on_imu_msg(_imu_msg(dataclasses.replace(imu(T0), angular_velocity=np.array([np.nan, 0, 0]))))) == [
        "imu_not_finite"
    ]
    nan_joint = _joint_msg(dataclasses.replace(joints(T0), position=np.array([0.0, np.nan])))
    assert keys(st.on_joints_msg(nan_joint)) == ["joint_not_finite"]
    short = _joint_msg(joints(T0))
    short.position = short.position[:1]
    assert keys(st.on_joints_msg(short)) == ["joint_bad_lengths"]
    assert keys(st.on_foot_forces_msg(object())) == ["foot_force_bad_message"]
    assert st.on_imu_msg(_imu_msg(imu(T0))).estimate is not None
    assert st.on_joints_msg(_joint_msg(joints(T0))).estimate is not None
    ff = FootForceSample(T0, ("FL_foot",), np.array([10.0]))
    assert st.on_foot_forces(ff) == Outputs(sample=ff)
    assert st.rejected == {
        "imu_not_finite": 1,
        "joint_not_finite": 1,
        "joint_bad_lengths": 1,
        "foot_force_bad_message": 1,
    }
    assert [c[0] for c in core.calls] == ["imu", "joints", "feet"]


def test_unexpected_errors_are_causes_for_the_node_and_raise_offline():
    st, core = make()
    assert keys(st.on_imu_msg(object())) == ["imu_bad_message"]
    assert keys(st.on_joints_msg(object())) == ["joint_bad_message"]

    def boom(sample):
        raise RuntimeError("boom")

    core.add_imu = boom
    out = st.on_imu(imu(T0))
    assert keys(out) == ["core_error"] and out.notes[0].level == "error" and "boom" in out.notes[0].message
    assert st.rejected == {"imu_bad_message": 1, "joint_bad_message": 1, "core_error": 1}

    strict, core = make(strict=True)
    with pytest.raises(AttributeError):
        strict.on_imu_msg(object())
    core.add_imu = boom
    with pytest.raises(RuntimeError, match="boom"):
        strict.on_imu(imu(T0))


def test_core_events_are_counted_by_key_and_passed_on_in_order():
    st, core = make()
    core.events += [Event("imu_out_of_order", "old sample", "warn"), Event("initialized", "ok", "info")]
    out = st.on_imu(imu(T0))
    assert [(n.key, n.level) for n in out.notes] == [("imu_out_of_order", "warn"), ("initialized", "info")]
    assert st.events == {"imu_out_of_order": 1, "initialized": 1} and not st.rejected
    assert st.on_imu(imu(T0 + 1)).notes == ()  # the normal path carries no notes


# ------------------------------------------------------------------------------ lost samples (from the stamps)

MS = 1_000_000


def test_lost_imu_samples_are_counted_from_the_stamp_gaps():
    st, core = make(max_time_gap_s=0.5)
    stamps = [T0 + i * MS for i in range(20)]  # 1 kHz: the period is learnt from the first 15 differences
    stamps += [T0 + 22 * MS]  # 2 lost (20, 21)
    stamps += [T0 + 23 * MS, T0 + 24 * MS]
    stamps += [T0 + 30 * MS]  # 5 lost
    outs = [st.on_imu(imu(t)) for t in stamps]
    assert st.lost == {"imu_lost": 7, "joint_states_lost": 0, "foot_forces_lost": 0, "foot_wrenches_lost": 0}
    assert [keys(o) for o in outs].count(["imu_lost"]) == 2
    note = outs[len(stamps) - 4].notes[0]
    assert note.key == "imu_lost" and note.level == "warn" and "2 IMU samples lost" in note.message
    assert "qos_depth" in note.message and "odometry_rate_hz" in note.message
    assert not st.rejected  # a loss is not a rejection
    assert [c[1] for c in core.calls] == stamps  # every sample that arrived is processed


def test_jitter_below_one_and_a_half_periods_is_no_loss_and_no_period_no_count():
    st, _ = make()
    st.on_imu(imu(T0))
    st.on_imu(imu(T0 + 10 * MS))  # a gap before any period is known: not counted
    rng = np.random.default_rng(0)
    for i in range(11, 400):  # 1 kHz stamped with +-0.15 ms of jitter (differences 0.7..1.3 ms)
        st.on_imu(imu(T0 + i * MS + int(rng.integers(-150_000, 150_000))))
    assert st.lost["imu_lost"] == 0


def test_the_period_follows_the_median_with_many_losses():
    st, _ = make()
    t = T0
    expected = 0
    for i in range(300):  # 2 ms period, every third difference skips one or two samples (40 % lost)
        skip = (i % 3 == 0) * (1 + i % 2)
        t += 2 * MS * (1 + skip)
        if i >= 15:
            expected += skip
        st.on_joints(joints(t))
    counter = st._joint_loss
    assert counter.period_ns == 2 * MS
    assert st.lost["joint_states_lost"] >= expected - 2 and st.lost["joint_states_lost"] <= expected


def test_the_gap_reset_is_not_counted_as_a_loss_and_backwards_restarts():
    st, _ = make(max_time_gap_s=0.5)
    for i in range(20):
        st.on_imu(imu(T0 + i * MS))
    out = st.on_imu(imu(T0 + 19 * MS + 600 * MS))  # 0.6 s: the gap reset, not 599 lost samples
    assert keys(out) == ["stamp_gap", "reset"] and st.lost["imu_lost"] == 0
    st.on_imu(imu(T0))  # a looping bag: 0.6 s back, restart from here
    st.on_imu(imu(T0 + MS))
    assert st.lost["imu_lost"] == 0
    st.on_imu(imu(T0 + 4 * MS))  # the period is kept: 2 lost
    st.on_imu(imu(T0 + 4 * MS))  # a repeated stamp: nothing
    st.on_imu(imu(T0 + 3 * MS))  # slightly older (within the tolerance): nothing
    assert st.lost["imu_lost"] == 2
    # joint samples: the same rules, under their own key
    for i in range(20):
        st.on_joints(joints(T0 + i * 2 * MS))
    st.on_joints(joints(T0 + 19 * 2 * MS + 8 * MS))
    assert st.lost["joint_states_lost"] == 3 and st.lost["imu_lost"] == 2


def test_a_sample_with_an_older_stamp_arrived_and_is_no_loss():
    """A sample whose stamp is 10 ms older than the last (within the out-of-order tolerance; the core refuses it)
    in place of the next one: the gap it leaves in the good stamps (2 ms at 1 kHz) is that sample, not a loss
    (hypothesis found it: test_properties' imu_stamp_older counted one lost IMU sample). A real loss after it is
    still counted."""
    st, _ = make()
    for i in range(20):
        st.on_imu(imu(T0 + i * MS))
    st.on_imu(imu(T0 + 9 * MS))  # in place of the sample at 20 ms
    assert st.on_imu(imu(T0 + 21 * MS)).notes == ()
    assert st.lost["imu_lost"] == 0
    out = st.on_imu(imu(T0 + 24 * MS))  # 22 and 23 never arrive
    assert keys(out) == ["imu_lost"] and st.lost["imu_lost"] == 2


def test_rejected_samples_are_rejections_not_also_losses():
    # 500 Hz joints: the period is learnt from the first 15 differences; then one sample without joint "b" and one
    # with a NaN position arrive (both skipped), then good ones: nothing was lost before the node
    st, core = make()
    for i in range(20):
        st.on_joints(joints(T0 + i * 2 * MS))
    out = st.on_joints(joints(T0 + 20 * 2 * MS, names=("a",)))
    assert keys(out) == ["joint_missing_names"]
    nan = _joint_msg(dataclasses.replace(joints(T0 + 21 * 2 * MS), position=np.array([0.0, np.nan])))
    assert keys(st.on_joints_msg(nan)) == ["joint_not_finite"]
    short = _joint_msg(joints(T0 + 22 * 2 * MS))
    short.velocity = np.zeros(1)
    assert keys(st.on_joints_msg(short)) == ["joint_bad_lengths"]
    assert keys(st.on_joints(joints(T0 + 23 * 2 * MS))) == []
    assert st.rejected == {"joint_missing_names": 1, "joint_not_finite": 1, "joint_bad_lengths": 1}
    assert st.lost["joint_states_lost"] == 0
    # a real loss after a rejected sample is still one: 24 skipped (unknown joint), 25 and 26 never arrive
    assert keys(st.on_joints(joints(T0 + 24 * 2 * MS, names=("a", "b", "c")))) == ["joint_unknown_names"]
    out = st.on_joints(joints(T0 + 27 * 2 * MS))
    assert keys(out) == ["joint_states_lost"] and "2 joint samples lost" in out.notes[0].message
    assert st.lost["joint_states_lost"] == 2
    # a rejected sample that follows a loss carries both notes, the loss first
    out = st.on_joints(joints(T0 + 30 * 2 * MS, names=("a",)))
    assert keys(out) == ["joint_states_lost", "joint_missing_names"] and st.lost["joint_states_lost"] == 4
    assert [c[1] for c in core.calls] == [T0 + i * 2 * MS for i in (*range(20), 23, 27)]


def test_rejected_imu_and_foot_force_samples_feed_the_loss_detection():
    st, _ = make()
    for i in range(20):
        st.on_imu(imu(T0 + i * MS))
    assert keys(st.on_imu(imu(T0 + 20 * MS, "camera"))) == ["imu_frame_id"]
    nan = _imu_msg(dataclasses.replace(imu(T0 + 21 * MS), angular_velocity=np.array([np.nan, 0.0, 0.0])))
    assert keys(st.on_imu_msg(nan)) == ["imu_not_finite"]
    assert keys(st.on_imu(imu(T0 + 22 * MS))) == []
    # a zero stamp is not readable: it does not feed the detection (nor restart it)
    assert keys(st.on_imu(imu(0))) == ["stamp_zero"]
    assert keys(st.on_imu(imu(T0 + 23 * MS))) == []
    assert st.lost["imu_lost"] == 0 and st.rejected == {"imu_frame_id": 1, "imu_not_finite": 1, "stamp_zero": 1}
    # foot forces: messages the conversion rejects (names and values of different lengths) still arrived
    feet = SimpleNamespace(
        header=SimpleNamespace(stamp=SimpleNamespace(sec=0, nanosec=0)), name=["FL_foot"], effort=[1.0]
    )
    for i in range(20):
        feet.header.stamp = SimpleNamespace(sec=T0 // S, nanosec=i * 2 * MS)
        feet.effort = [1.0] if i != 17 else [1.0, 2.0]
        st.on_foot_forces_msg(feet)
    assert st.rejected["foot_force_bad_message"] == 1 and st.lost["foot_forces_lost"] == 0


# ------------------------------------------------------------------ extra joints with the real core


@pytest.mark.parametrize("ignore", [False, True])
def test_extra_joints_through_stream_and_core(ignore: bool):
    """Stream and core agree: with ``ignore_unknown_joints`` a gripper joint is ignored (reported once), without
    it the stream rejects the sample before the core."""
    import pinocchio as pin

    from robot_state_estimator.common.robots import example_robot_urdf
    from robot_state_estimator.description.types import ImuSpec
    from robot_state_estimator.estimation import EkfSettings, EstimatorSettings, RobotStateEstimator

    model = pin.buildModelFromUrdf(str(example_robot_urdf("go1")), pin.JointModelFreeFlyer())
    settings = EstimatorSettings(ekf=EkfSettings(init_imu_samples=10), ignore_unknown_joints=ignore)
    imu_spec = ImuSpec(name="imu", link="base", frame_id="imu_link")
    feet = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
    core = RobotStateEstimator(model, imu_spec, feet, settings, base_link="base")
    desc = SimpleNamespace(joint_names=core.joint_names, imu=imu_spec)
    st = EstimatorStream(core, desc, settings, AdapterSettings(), strict=True)
    q = pin.neutral(model)[7:]
    names = ("gripper_joint", *core.joint_names)
    n_joint_estimates = 0
    for k in range(50):
        stamp = T0 + k * 1_000_000
        st.on_imu(ImuSample(stamp, np.zeros(3), np.array([0.0, 0.0, 9.81]), None, "imu_link"))
        out = st.on_joints(JointSample(stamp, names, np.r_[0.5, q], None, None))
        n_joint_estimates += out.estimate is not None
    if ignore:
        assert st.rejected.get("joint_unknown_names", 0) == 0
        assert st.events["ignored_joints"] == 1
        assert "unknown_joint" not in st.events
        assert n_joint_estimates > 30
    else:
        assert st.rejected["joint_unknown_names"] == 50
        assert "ignored_joints" not in st.events and "unknown_joint" not in st.events
        assert n_joint_estimates == 0


def test_adapter_settings_refuse_a_rate_that_is_not_a_number():
    with pytest.raises(ValueError, match="max_time_gap_s must be a number, got 'abc'"):
        AdapterSettings.from_params({"max_time_gap_s": "abc"})
    with pytest.raises(ValueError, match="odometry_rate_hz must be a number, got True"):
        AdapterSettings.from_params({"odometry_rate_hz": True})
