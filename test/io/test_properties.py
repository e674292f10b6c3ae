"""Property tests of the adapter rules and the real core on corrupted Go1 streams (hypothesis).

A short simulated Go1 run (stand, then trot; noisy IMU, joint positions, velocities and torques) is turned into
``sensor_msgs/Imu`` and ``sensor_msgs/JointState`` messages (rosbags classes) and fed, in stamp order, through
``EstimatorStream`` to the real ``RobotStateEstimator`` of the bundled Go1 description (config/go1.yaml). Hypothesis
corrupts some messages (NaN/Inf in any field, wrong lengths, duplicate / missing / unknown names, zero and negative
stamps, repeated and older stamps, the stream jumping backwards or ahead) and checks:

- no exception escapes (``strict=True``: even the exceptions the node would turn into ``core_error``);
- every estimate is finite, and the core never produces a non-finite one (no ``estimate_not_finite`` reset);
- every input either reaches the core or is skipped with a cause key counted in ``rejected``; each corruption
  is skipped under the key the module doc of ``io/stream.py`` gives for it; no sample is counted lost (all
  arrived, corrupted or not);
- the compiled kernels and the numpy reference path (``ROBOT_STATE_ESTIMATOR_DISABLE_JIT=1`` at construction)
  give the same estimates on the same corrupted stream;
- joint names in another order with the values permuted alike give the same estimates as the model order.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.samples import FootForceSample, ImuSample, JointSample
from robot_state_estimator.description import load_description
from robot_state_estimator.estimation import RobotStateEstimator
from robot_state_estimator.estimation.jit import DISABLE_ENV, use_kernels
from robot_state_estimator.estimation.settings_loading import load_settings
from robot_state_estimator.io import bags, messages
from robot_state_estimator.io.stream import AdapterSettings, EstimatorStream, StampLossCounter

simulation = pytest.importorskip("robot_state_estimator.simulation")

REPO = Path(__file__).resolve().parents[2]
S = 1_000_000_000
#: stamps of the run are moved here (a robot clock, not 0)
T0 = 1_000 * S
#: IMU and joint samples fed (1 kHz each): 0.12 s standing (the static initialisation needs 0.1 s), then trot
N_SAMPLES = 300
TYPES = bags.default_types()


class Go1Stream:
    """The description, settings and samples of one stream (a plain class: its repr stays short in hypothesis
    reports, which print dataclasses field by field)."""

    def __init__(self, desc, settings, joint_names, imu_frame, imu, joints) -> None:
        self.desc, self.settings, self.joint_names, self.imu_frame = desc, settings, joint_names, imu_frame
        self.imu: list[ImuSample] = imu
        self.joints: list[JointSample] = joints

    def __repr__(self) -> str:
        return f"Go1Stream({len(self.imu)} IMU, {len(self.joints)} joint samples)"


@pytest.fixture(scope="module")
def go1() -> Go1Stream:
    desc = load_description(robot_description_path("go1"))
    settings = load_settings(REPO / "config" / "go1.yaml")
    run = simulation.simulate(
        simulation.SimulationSettings(
            robot="go1", gait="trot", duration_s=0.35, settle_s=0.12, ramp_s=0.1, seed=11, noise=True
        ),
        robot=simulation.load_sim_robot("go1"),
    )
    assert tuple(run.joint_names) == tuple(desc.joint_names)
    assert len(run.imu_stamps_ns) >= N_SAMPLES and len(run.joint_stamps_ns) >= N_SAMPLES
    names = tuple(run.joint_names)
    imu = [
        ImuSample(T0 + int(run.imu_stamps_ns[k]), run.imu_omega[k].copy(), run.imu_f[k].copy(), None, run.imu.frame_id)
        for k in range(N_SAMPLES)
    ]
    joints = [
        JointSample(
            T0 + int(run.joint_stamps_ns[k]),
            names,
            run.joint_position[k].copy(),
            run.joint_velocity[k].copy(),
            run.joint_effort[k].copy(),
        )
        for k in range(N_SAMPLES)
    ]
    return Go1Stream(desc, settings, names, str(desc.imu.frame_id), imu, joints)


@pytest.fixture(scope="module")
def go1_standing(go1: Go1Stream) -> Go1Stream:
    """The Go1 standing still, exactly: gyro 0, accelerometer g up in S, joints at a standing pose, velocities 0,
    no torques (zero efforts), so kinematic contacts (``contact.source: kinematic``): all four feet. (With the
    default ``auto`` the zero efforts would mean no foot loaded, and the initialisation would wait for one.)"""
    R_base_imu = np.asarray(go1.desc.imu.R_base_imu, dtype=float)
    f_imu = R_base_imu.T @ np.array([0.0, 0.0, 9.81])  # level base at rest: specific force +g along world z
    standing = np.array([0.0, 0.8, -1.6] * 4)
    imu = [ImuSample(T0 + k * 1_000_000, np.zeros(3), f_imu, None, go1.imu_frame) for k in range(N_SAMPLES)]
    joints = [
        JointSample(T0 + k * 1_000_000, go1.joint_names, standing, np.zeros(12), np.zeros(12)) for k in range(N_SAMPLES)
    ]
    settings = dataclasses.replace(go1.settings, contact=dataclasses.replace(go1.settings.contact, source="kinematic"))
    return Go1Stream(go1.desc, settings, go1.joint_names, go1.imu_frame, imu, joints)


def make_stream(go1: Go1Stream, *, kernels: bool) -> EstimatorStream:
    """A stream around a new real estimator; the kernel/reference choice is read once at construction (the
    environment is restored at once: hypothesis tests cannot use the function-scoped ``monkeypatch``)."""
    saved = os.environ.pop(DISABLE_ENV, None)
    try:
        if not kernels:
            os.environ[DISABLE_ENV] = "1"
        assert use_kernels() == kernels
        est = RobotStateEstimator.from_description(go1.desc, go1.settings)
    finally:
        os.environ.pop(DISABLE_ENV, None)
        if saved is not None:
            os.environ[DISABLE_ENV] = saved
    return EstimatorStream(est, go1.desc, go1.settings, AdapterSettings(), strict=True)


# ----------------------------------------------------------------------------------------- corruptions

#: corruption kind -> the cause key the adapter must count for it (None: the sample reaches the core)
IMU_KINDS = {
    "imu_value": "imu_not_finite",  # NaN/Inf in one of the six numbers
    "imu_stamp_zero": "stamp_zero",
    "imu_stamp_negative": "stamp_zero",
    "imu_frame": "imu_frame_id",
    "imu_stamp_repeat": None,  # the previous IMU stamp again: the core refuses it (imu_dt_nonpositive)
    "imu_stamp_older": None,  # 10 ms older than the previous one: the core refuses it (imu_out_of_order)
}
JOINT_KINDS = {
    "joint_position": "joint_not_finite",
    "joint_velocity": "joint_not_finite",
    "joint_effort": "joint_not_finite",
    "joint_short_position": "joint_bad_lengths",
    "joint_long_velocity": "joint_bad_lengths",
    "joint_short_effort": "joint_bad_lengths",
    "joint_duplicate": "joint_bad_message",
    "joint_no_names": "joint_bad_message",
    "joint_missing": "joint_missing_names",
    "joint_unknown": "joint_unknown_names",
    "joint_stamp_zero": "stamp_zero",
    "joint_stamp_negative": "stamp_zero",
}
#: the whole stream from this sample on moves in time (both sensors): a looping bag, a pause in the data
SHIFT_KINDS = {"back_small": -0.01, "back_big": -0.5, "gap": 0.8}

BAD_FLOATS = st.sampled_from([math.nan, math.inf, -math.inf])
corruption = st.tuples(
    st.integers(0, N_SAMPLES - 1),
    st.sampled_from(sorted(IMU_KINDS) + sorted(JOINT_KINDS) + sorted(SHIFT_KINDS)),
    st.integers(0, 11),  # which field / joint
    BAD_FLOATS,
)


def _with_stamp(msg, stamp_ns: int):
    sec, nanosec = divmod(stamp_ns, S)  # floor division: a negative stamp has sec < 0 and 0 <= nanosec < 1e9
    return dataclasses.replace(msg, header=dataclasses.replace(msg.header, stamp=TYPES.Time(sec=sec, nanosec=nanosec)))


def corrupt_imu(msg, kind: str, i: int, bad: float, previous_stamp_ns: int):
    if kind == "imu_value":
        field = "angular_velocity" if i % 2 == 0 else "linear_acceleration"
        axis = "xyz"[(i // 2) % 3]
        return dataclasses.replace(msg, **{field: dataclasses.replace(getattr(msg, field), **{axis: bad})})
    if kind == "imu_stamp_zero":
        return _with_stamp(msg, 0)
    if kind == "imu_stamp_negative":
        return _with_stamp(msg, -(i + 1) * 1_000_000)
    if kind == "imu_frame":
        return dataclasses.replace(msg, header=dataclasses.replace(msg.header, frame_id="FL_foot"))
    if kind == "imu_stamp_repeat":
        return _with_stamp(msg, previous_stamp_ns)
    if kind == "imu_stamp_older":
        return _with_stamp(msg, previous_stamp_ns - 10_000_000)
    raise AssertionError(kind)


def corrupt_joints(msg, kind: str, i: int, bad: float):
    names = list(msg.name)
    if kind in ("joint_position", "joint_velocity", "joint_effort"):
        values = np.array(getattr(msg, kind.split("_")[1]), dtype=float)
        values[i] = bad
        return dataclasses.replace(msg, **{kind.split("_")[1]: values})
    if kind == "joint_short_position":
        return dataclasses.replace(msg, position=np.asarray(msg.position)[:-1].copy())
    if kind == "joint_long_velocity":
        return dataclasses.replace(msg, velocity=np.append(msg.velocity, 0.0))
    if kind == "joint_short_effort":
        return dataclasses.replace(msg, effort=np.asarray(msg.effort)[: i % 11 + 1].copy())
    if kind == "joint_duplicate":
        names[i] = names[(i + 1) % 12]
        return dataclasses.replace(msg, name=names)
    if kind == "joint_no_names":
        return dataclasses.replace(msg, name=[], position=np.zeros(0), velocity=np.zeros(0), effort=np.zeros(0))
    if kind == "joint_missing":
        keep = [k for k in range(12) if k != i]
        return dataclasses.replace(
            msg,
            name=[names[k] for k in keep],
            position=np.asarray(msg.position)[keep],
            velocity=np.asarray(msg.velocity)[keep],
            effort=np.asarray(msg.effort)[keep],
        )
    if kind == "joint_unknown":
        return dataclasses.replace(
            msg,
            name=[*names, "head_pan_joint"],
            position=np.append(msg.position, 0.1),
            velocity=np.append(msg.velocity, 0.0),
            effort=np.append(msg.effort, 0.0),
        )
    if kind == "joint_stamp_zero":
        return _with_stamp(msg, 0)
    if kind == "joint_stamp_negative":
        return _with_stamp(msg, -S // 2)
    raise AssertionError(kind)


def corrupted_messages(go1: Go1Stream, corruptions) -> list[tuple[str, object, str | None]]:
    """(sensor, message, expected cause key or None) in feeding order: per step the joint sample, then the IMU
    sample of the same stamp."""
    by_index: dict[int, list] = {}
    for index, kind, i, bad in corruptions:
        by_index.setdefault(index, []).append((kind, i, bad))
    shift_ns = 0
    previous_imu_ns = go1.imu[0].stamp_ns
    out = []
    for k in range(N_SAMPLES):
        todo = by_index.get(k, [])
        for kind, _, _ in todo:
            if kind in SHIFT_KINDS:
                shift_ns += round(SHIFT_KINDS[kind] * S)
        joint = dataclasses.replace(go1.joints[k], stamp_ns=go1.joints[k].stamp_ns + shift_ns)
        imu = dataclasses.replace(go1.imu[k], stamp_ns=go1.imu[k].stamp_ns + shift_ns)
        joint_msg = messages.joint_state_msg(TYPES, joint)
        imu_msg = messages.imu_msg(TYPES, imu)
        joint_key = imu_key = None
        # one corruption per message (the first drawn): two would make the expected cause ambiguous
        joint_kind = next(((kd, i, b) for kd, i, b in todo if kd in JOINT_KINDS), None)
        imu_kind = next(((kd, i, b) for kd, i, b in todo if kd in IMU_KINDS), None)
        if joint_kind is not None:
            joint_msg = corrupt_joints(joint_msg, *joint_kind)
            joint_key = JOINT_KINDS[joint_kind[0]]
        if imu_kind is not None:
            imu_msg = corrupt_imu(imu_msg, *imu_kind, previous_imu_ns)
            imu_key = IMU_KINDS[imu_kind[0]]
        previous_imu_ns = imu.stamp_ns
        out.append(("joints", joint_msg, joint_key))
        out.append(("imu", imu_msg, imu_key))
    return out


def feed(stream: EstimatorStream, msgs) -> list:
    """Feed the messages; check the per-input properties; return the estimates (None where there is none)."""
    estimates = []
    for sensor, msg, expected_key in msgs:
        before = sum(stream.rejected.values())
        out = (stream.on_joints_msg if sensor == "joints" else stream.on_imu_msg)(msg)
        keys = [note.key for note in out.notes]
        assert "core_error" not in stream.rejected
        assert "estimate_not_finite" not in stream.rejected, [n.message for n in out.notes]
        if out.sample is None:  # skipped: with a cause key, counted
            assert out.estimate is None
            assert any(stream.rejected[key] for key in keys), (sensor, keys)
            assert sum(stream.rejected.values()) > before
        if expected_key is not None:
            assert out.sample is None and expected_key in keys, (sensor, expected_key, keys)
        if out.estimate is not None:
            assert out.buf is not None and np.isfinite(out.buf).all()
            for array in (out.estimate.p_world_base, out.estimate.v_base_in_base, out.estimate.pose_covariance):
                assert np.isfinite(array).all()
            assert abs(np.linalg.norm(out.estimate.quat_world_base_xyzw) - 1.0) < 1e-9
        estimates.append(out.estimate)
    return estimates


def assert_same_estimates(a: list, b: list, atol: float) -> None:
    assert [e is None for e in a] == [e is None for e in b]
    for ea, eb in zip(a, b):
        if ea is None:
            continue
        assert ea.stamp_ns == eb.stamp_ns
        for name in (
            "p_world_base",
            "quat_world_base_xyzw",
            "v_base_in_base",
            "omega_base_in_base",
            "pose_covariance",
            "twist_covariance",
        ):
            np.testing.assert_allclose(getattr(ea, name), getattr(eb, name), rtol=0, atol=atol, err_msg=name)
        assert [(f.name, f.in_contact) for f in ea.feet] == [(f.name, f.in_contact) for f in eb.feet]
        for fa, fb in zip(ea.feet, eb.feet):
            np.testing.assert_allclose(fa.force_in_world, fb.force_in_world, rtol=0, atol=atol * 1e3)


# ------------------------------------------------------------------------------------------------ tests


def test_the_clean_stream_initialises_and_tracks(go1: Go1Stream) -> None:
    """The base case of the properties: estimates from the initialisation on, no cause counted."""
    stream = make_stream(go1, kernels=use_kernels())
    estimates = feed(stream, corrupted_messages(go1, []))
    assert not stream.rejected
    assert sum(e is not None for e in estimates) >= N_SAMPLES - 110  # 100 static IMU samples to initialise
    assert estimates[-1] is not None


@settings(max_examples=30)  # about 0.45 s an example (two estimators; the reference path is the slower)
@given(corruptions=st.lists(corruption, min_size=1, max_size=6))
def test_corrupted_streams_skip_with_causes_and_kernels_match_reference(go1, corruptions) -> None:
    msgs = corrupted_messages(go1, corruptions)
    with_kernels = feed(make_stream(go1, kernels=True), msgs) if use_kernels() else None
    stream = make_stream(go1, kernels=False)
    reference = feed(stream, msgs)
    # every sample arrived (corrupted ones too: rejections, never losses; jumps are gaps or restarts)
    assert not any(stream.lost.values()), stream.lost
    if with_kernels is not None:
        assert_same_estimates(with_kernels, reference, atol=1e-9)


@settings(max_examples=30)  # about 0.2 s an example
@given(corruptions=st.lists(corruption, min_size=1, max_size=6))
def test_a_standing_robot_stays_standing_whatever_the_corruptions(go1_standing, corruptions) -> None:
    """Skipped samples, resets and re-initialisations never move the estimate of a robot standing still: every
    estimate is the clean stream's standing state (at rest, level, same height)."""
    kernels = use_kernels()
    clean = [e for e in feed(make_stream(go1_standing, kernels=kernels), corrupted_messages(go1_standing, [])) if e]
    assert len(clean) > N_SAMPLES // 2
    ref = clean[-1]
    np.testing.assert_allclose(ref.v_base_in_base, 0.0, atol=1e-12)
    np.testing.assert_allclose(ref.quat_world_base_xyzw, [0.0, 0.0, 0.0, 1.0], atol=1e-12)
    estimates = feed(make_stream(go1_standing, kernels=kernels), corrupted_messages(go1_standing, corruptions))
    for e in estimates:
        if e is None:
            continue
        np.testing.assert_allclose(e.v_base_in_base, 0.0, atol=1e-9, err_msg=str(e.stamp_ns))
        np.testing.assert_allclose(e.omega_base_in_base, 0.0, atol=1e-9, err_msg=str(e.stamp_ns))
        np.testing.assert_allclose(e.quat_world_base_xyzw, ref.quat_world_base_xyzw, atol=1e-9, err_msg=str(e.stamp_ns))
        np.testing.assert_allclose(e.p_world_base, ref.p_world_base, atol=1e-9, err_msg=str(e.stamp_ns))


@settings(max_examples=12)  # about 0.4 s an example
@given(
    permutations=st.lists(st.permutations(range(12)), min_size=1, max_size=3),
    choice=st.lists(st.integers(0, 2), min_size=N_SAMPLES, max_size=N_SAMPLES),
)
def test_permuted_joint_names_give_the_same_estimates(go1, permutations, choice) -> None:
    """Each joint message in one of a few name orders (values permuted alike), switching between them."""
    msgs = corrupted_messages(go1, [])
    permuted = []
    k = 0
    for sensor, msg, key in msgs:
        if sensor == "joints":
            order = list(permutations[choice[k] % len(permutations)])
            k += 1
            msg = dataclasses.replace(
                msg,
                name=[msg.name[j] for j in order],
                position=np.asarray(msg.position)[order],
                velocity=np.asarray(msg.velocity)[order],
                effort=np.asarray(msg.effort)[order],
            )
        permuted.append((sensor, msg, key))
    kernels = use_kernels()
    assert_same_estimates(
        feed(make_stream(go1, kernels=kernels), permuted),
        feed(make_stream(go1, kernels=kernels), msgs),
        atol=1e-12,
    )


# ------------------------------------------------------------------------------------- foot-force messages

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
#: corruption kind of a foot-force message -> the cause key (adapter) or core event key it must give
FOOT_KINDS = {
    "nan": "foot_force_bad_message",
    "short": "foot_force_bad_message",
    "long": "foot_force_bad_message",
    "no_names": "foot_force_bad_message",
    "duplicate": "foot_force_bad_message",  # two values for one foot: which one is meant?
    "unknown": "unknown_foot",  # the core's event
    "stamp_zero": "stamp_zero",
}


def foot_msg(stamp_ns: int, feet, values):
    sample = FootForceSample(stamp_ns, tuple(feet), np.asarray(values, dtype=float))
    return messages.foot_force_msg(TYPES, sample)


@settings(max_examples=30)
@given(
    corruptions=st.dictionaries(
        st.integers(0, N_SAMPLES - 1), st.tuples(st.sampled_from(sorted(FOOT_KINDS)), st.integers(0, 3), BAD_FLOATS)
    )
)
def test_corrupted_foot_force_messages_are_skipped_with_causes(go1_standing, corruptions) -> None:
    """Foot sensor counts (all four feet loaded) with the joint and IMU samples of the standing Go1: every corrupted
    foot-force message is skipped under its cause; the estimate stays the standing one."""
    stream = make_stream(go1_standing, kernels=use_kernels())
    counts = np.full(4, 200.0)  # Go1 sensor counts well above sensor_on_threshold (60)
    last = None
    for k, (sensor, msg, key) in enumerate(corrupted_messages(go1_standing, [])):
        if sensor == "joints":
            stamp = go1_standing.joints[k // 2].stamp_ns
            feet, values, expected = list(FEET), counts.copy(), None
            kind, i, bad = corruptions.get(k // 2, (None, 0, 0.0))
            if kind == "nan":
                values[i] = bad
            elif kind == "short":
                values = values[:i]
            elif kind == "long":
                values = np.append(values, 1.0)
            elif kind == "no_names":
                feet, values = [], values[:0]
            elif kind == "duplicate":
                feet[i] = feet[(i + 1) % 4]
            elif kind == "unknown":
                feet[i] = "tail_foot"
            elif kind == "stamp_zero":
                stamp = 0
            expected = FOOT_KINDS.get(kind) if kind else None
            out = stream.on_foot_forces_msg(foot_msg(stamp, feet, values))
            keys = [n.key for n in out.notes]
            if expected is None:
                assert not keys, keys
            else:
                assert expected in keys, (kind, keys)
                if expected != "unknown_foot":  # the adapter skips it (the core reports unknown feet)
                    assert out.sample is None and stream.rejected[expected] > 0
        feed_out = feed(stream, [(sensor, msg, key)])
        if feed_out[0] is not None:
            last = feed_out[0]
    assert last is not None
    np.testing.assert_allclose(last.v_base_in_base, 0.0, atol=1e-9)
    np.testing.assert_allclose(last.quat_world_base_xyzw, [0.0, 0.0, 0.0, 1.0], atol=1e-9)


# ------------------------------------------------------------------------------------------ loss counting


@given(
    dropped=st.sets(st.integers(40, 199), max_size=6),
    unstamped=st.sets(st.integers(40, 199), max_size=6),
    period_ns=st.sampled_from([1_000_000, 2_500_000, 3_333_333]),
)
def test_lost_samples_are_the_dropped_ones_never_the_unstamped(dropped, unstamped, period_ns) -> None:
    """A 1 kHz-like stream where some samples never arrive (dropped) and some arrive without a usable stamp (zero:
    the adapter skips them as ``stamp_zero``): the count of lost samples is the number dropped."""
    counter = StampLossCounter("imu_lost", "IMU")
    for k in range(200):
        if k in dropped:
            continue
        if k in unstamped:
            counter.arrived_unstamped()
            continue
        counter.check(T0 + k * period_ns, max_gap_ns=S // 2, backwards_tolerance_ns=S // 20)
    # a run of drops at the very end is not seen (no sample after it)
    end = max((k for k in range(200) if k not in dropped and k not in unstamped), default=-1)
    assert counter.lost == sum(1 for k in dropped if k < end)
