"""io/bulk_samples.py: core samples made from bulk-decoded arrays equal io.messages' samples of the same messages.

On every message of the simulated bags (a Go1 trot with foot wrenches and a contact schedule; foot sensors as the
import of the real Go1 writes them) and on hypothesis batches with non-finite values, lengths that do not match,
duplicate and missing names, zero and unreported quaternions and schedule values other than 0 and 1: where
``io.messages`` makes a sample the converter makes the same one (stamp, strings, float64 bit patterns), and where it
raises the converter gives None (the message then goes through the message path).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rosbags.highlevel import AnyReader

from robot_state_estimator.io import bulk_samples as B
from robot_state_estimator.io import cdr
from robot_state_estimator.io import messages as M
from robot_state_estimator.io.bags import default_typestore

TS = default_typestore()
T = TS.types

#: converter, io.messages' conversion of one message
PAIRS = {
    "imu": (B.imu_samples, M.imu_sample_from_msg),
    "joints": (B.joint_samples, M.joint_sample_from_msg),
    "foot_forces": (B.foot_force_samples, M.foot_force_sample_from_msg),
    "schedule": (B.contact_schedule_samples, M.contact_schedule_from_msg),
    "wrench": (lambda a: B.foot_wrench_samples(a, "FL_foot"), lambda m: M.foot_wrench_sample_from_msg(m, "FL_foot")),
}
MSGTYPE = {
    "imu": cdr.IMU,
    "joints": cdr.JOINT_STATE,
    "foot_forces": cdr.JOINT_STATE,
    "schedule": cdr.JOINT_STATE,
    "wrench": cdr.WRENCH_STAMPED,
}


def _same(a: Any, b: Any) -> bool:
    """Equal samples: every field equal, arrays as float64 bit patterns (NaN-safe), None as None."""
    if type(a) is not type(b):
        return False
    for name, x in vars(a).items():
        y = vars(b)[name]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if x is None or y is None:
                return False
            xb = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
            yb = np.ascontiguousarray(y, dtype=np.float64).view(np.uint64)
            if xb.shape != yb.shape or not np.array_equal(xb, yb):
                return False
        elif x != y or type(x) is not type(y):
            return False
    return True


def assert_converted_equal(kind: str, raws: list[bytes]) -> int:
    """The converter on ``raws`` against io.messages on rosbags' messages; returns how many were None."""
    convert, of_message = PAIRS[kind]
    got = convert(cdr.decode(MSGTYPE[kind], raws))
    assert len(got) == len(raws)
    refused = 0
    for i, raw in enumerate(raws):
        msg = TS.deserialize_cdr(raw, MSGTYPE[kind])
        try:
            expected = of_message(msg)
        except M.MessageError:
            assert got[i] is None, (kind, i)
            refused += 1
            continue
        assert got[i] is not None and _same(got[i], expected), (kind, i, got[i], expected)
    return refused


@pytest.fixture(scope="module")
def simulated_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from robot_state_estimator.simulation import SimulationSettings, simulate
    from robot_state_estimator.simulation.bag import write_run_bag

    run = simulate(SimulationSettings(robot="go1", gait="trot", duration_s=0.6, settle_s=0.2, ramp_s=0.2, seed=3))
    out = tmp_path_factory.mktemp("samples") / "run"
    return write_run_bag(run, out, foot_wrenches=True, contact_schedule=True, foot_wrench_noise_n=0.5)


def test_every_input_message_of_a_simulated_bag_gives_the_same_sample(simulated_bag: Path) -> None:
    raws: dict[str, list[bytes]] = defaultdict(list)
    with AnyReader([simulated_bag], default_typestore=TS) as reader:
        for connection, _t, raw in reader.messages():
            raws[connection.topic].append(bytes(raw))
    assert assert_converted_equal("imu", raws["/imu/data"]) == 0
    assert assert_converted_equal("joints", raws["/joint_states"]) == 0
    assert assert_converted_equal("schedule", raws["/contact_schedule"]) == 0
    wrench_topics = [t for t in raws if t.endswith("/wrench")]
    assert len(wrench_topics) == 4
    for topic in wrench_topics:
        assert assert_converted_equal("wrench", raws[topic]) == 0


def test_foot_sensor_messages_as_the_csv_import_writes_them() -> None:
    msgs = [
        T[cdr.JOINT_STATE](
            header=T["std_msgs/msg/Header"](stamp=T["builtin_interfaces/msg/Time"](sec=42, nanosec=k), frame_id=""),
            name=["FR_foot", "FL_foot", "RR_foot", "RL_foot"],
            position=np.zeros(0),
            velocity=np.zeros(0),
            effort=np.array([10.0 * k, 0.0, 1100.0, 33.5]),
        )
        for k in range(5)
    ]
    raws = [bytes(TS.serialize_cdr(m, cdr.JOINT_STATE)) for m in msgs]
    assert assert_converted_equal("foot_forces", raws) == 0


# ------------------------------------------------------------------------ generated batches (hypothesis)

_floats = st.one_of(
    st.floats(-1e3, 1e3, width=64), st.sampled_from([0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), 1e-9])
)
_stamps = st.tuples(st.integers(-3, 2**31 - 1), st.integers(0, 10**9 - 1))
_frames = st.sampled_from(["", "imu_link", "FL_foot", "é"])


def _header(stamp: tuple[int, int], frame_id: str) -> Any:
    return T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp[0], nanosec=stamp[1]), frame_id=frame_id
    )


@st.composite
def imu_msgs(draw: st.DrawFn) -> Any:
    f = draw(st.lists(_floats, min_size=10, max_size=10))
    quat = draw(st.sampled_from([f[6:10], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1e-8, 0.0, 0.0, 0.0]]))
    cov0 = draw(st.sampled_from([-1.0, 0.0, 0.01]))
    vec = T["geometry_msgs/msg/Vector3"]
    return T[cdr.IMU](
        header=_header(draw(_stamps), draw(_frames)),
        orientation=T["geometry_msgs/msg/Quaternion"](x=quat[0], y=quat[1], z=quat[2], w=quat[3]),
        orientation_covariance=np.array([cov0, *[0.0] * 8]),
        angular_velocity=vec(x=f[0], y=f[1], z=f[2]),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=vec(x=f[3], y=f[4], z=f[5]),
        linear_acceleration_covariance=np.zeros(9),
    )


@st.composite
def joint_state_msgs(draw: st.DrawFn) -> Any:
    names = draw(st.sampled_from([["a", "b", "c"], ["a", "b"], [], ["a", "a"], ["FL_foot", "FR_foot"]]))
    n = len(names)

    def values(sizes: list[int]) -> np.ndarray:
        size = draw(st.sampled_from(sizes))
        return np.array(draw(st.lists(_floats, min_size=size, max_size=size)), dtype=np.float64)

    return T[cdr.JOINT_STATE](
        header=_header(draw(_stamps), ""),
        name=names,
        position=values([n, n, 0, n + 1]),
        velocity=values([n, 0, 1]),
        effort=values([n, 0, n + 1]),
    )


@st.composite
def schedule_msgs(draw: st.DrawFn) -> Any:
    names = draw(st.sampled_from([["FL_foot", "FR_foot"], [], ["FL_foot"]]))
    size = draw(st.sampled_from([len(names), len(names), len(names) + 1]))
    position = draw(st.lists(st.sampled_from([0.0, 1.0, 1.0, 0.5, float("nan")]), min_size=size, max_size=size))
    return T[cdr.JOINT_STATE](
        header=_header(draw(_stamps), ""),
        name=names,
        position=np.array(position, dtype=np.float64),
        velocity=np.zeros(0),
        effort=np.zeros(0),
    )


@st.composite
def wrench_msgs(draw: st.DrawFn) -> Any:
    f = draw(st.lists(_floats, min_size=6, max_size=6))
    vec = T["geometry_msgs/msg/Vector3"]
    w = T["geometry_msgs/msg/Wrench"](force=vec(x=f[0], y=f[1], z=f[2]), torque=vec(x=f[3], y=f[4], z=f[5]))
    return T[cdr.WRENCH_STAMPED](header=_header(draw(_stamps), draw(_frames)), wrench=w)


STRATEGIES = {
    "imu": imu_msgs(),
    "joints": joint_state_msgs(),
    "foot_forces": joint_state_msgs(),
    "schedule": schedule_msgs(),
    "wrench": wrench_msgs(),
}


@pytest.mark.parametrize("kind", sorted(STRATEGIES))
def test_generated_batches_give_the_samples_or_none_of_the_message_path(kind: str) -> None:
    @given(st.lists(STRATEGIES[kind], min_size=1, max_size=6))
    def check(msgs: list[Any]) -> None:
        assert_converted_equal(kind, [bytes(TS.serialize_cdr(m, MSGTYPE[kind])) for m in msgs])

    check()


def test_sample_arrays_are_read_only_views() -> None:
    vec = T["geometry_msgs/msg/Vector3"]
    msg = T[cdr.WRENCH_STAMPED](
        header=_header((1, 2), "FL_foot"),
        wrench=T["geometry_msgs/msg/Wrench"](force=vec(x=1.0, y=2.0, z=3.0), torque=vec(x=4.0, y=5.0, z=6.0)),
    )
    (sample,) = B.foot_wrench_samples(
        cdr.decode(cdr.WRENCH_STAMPED, [bytes(TS.serialize_cdr(msg, cdr.WRENCH_STAMPED))]), "FL_foot"
    )
    assert sample is not None and sample.wrench.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(ValueError, match="read-only"):
        sample.wrench[0] = 0.0
