"""Reading bags in stamp order (``io.bags.read_stamp_ordered``, ``read_messages_in_stamp_order``), the garbage
collector pause around it, and the output bag's chunk compression."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.io import bags
from robot_state_estimator.io import messages as M


def _write_shuffled_bag(path: Path, seed: int) -> list[tuple[str, int, int, int]]:
    """A bag whose log order is not its stamp order, with stamp ties inside a topic and across topics, and a
    message without a header (rosgraph_msgs/Clock). Returns ``(topic, stamp_ns, log_ns, write position)``."""
    rng = np.random.default_rng(seed)
    T = bags.default_types()
    written = []
    with bags.BagWriter(path) as bag:
        for k in range(60):
            stamp = 1_000_000_000 + int(rng.integers(0, 12)) * 1_000_000  # 12 stamps: many ties
            log = 2_000_000_000 + k * 1000 - int(rng.integers(0, 3)) * 1000  # log times also tie
            if k % 3 == 0:
                topic = "/imu"
                bag.write(topic, M.imu_msg(T, ImuSample(stamp, rng.normal(size=3), rng.normal(size=3))), log)
            elif k % 3 == 1:
                topic = "/joints"
                msg = M.joint_state_msg(T, JointSample(stamp, ("a",), rng.normal(size=1), None, None))
                bag.write(topic, msg, log)
            else:
                topic = "/clock"
                stamp = log  # no header: ordered by its log time
                bag.write(topic, M.clock_msg(T, 5), log)
            written.append((topic, stamp, log, k))
    return written


def test_stamp_order_is_stamp_then_topic_rank_then_log_time(tmp_path: Path) -> None:
    written = _write_shuffled_bag(tmp_path / "bag", seed=3)
    topics = ["/joints", "/imu", "/clock"]
    rank = {t: i for i, t in enumerate(topics)}
    # worked out independently: the bag yields messages by log time (ties in write order), then a stable sort
    by_log = sorted(written, key=lambda w: (w[2], w[3]))
    expected = sorted(by_log, key=lambda w: (w[1], rank[w[0]], w[2]))
    ordered = bags.read_stamp_ordered(tmp_path / "bag", topics)
    assert ordered.topics == tuple(topics)
    assert ordered.msgtypes == ("sensor_msgs/msg/JointState", "sensor_msgs/msg/Imu", "rosgraph_msgs/msg/Clock")
    assert len(ordered) == 60
    got = [(ordered.topics[i], s, log) for i, s, log in zip(ordered.topic_index, ordered.stamp_ns, ordered.log_time_ns)]
    assert got == [(w[0], w[1], w[2]) for w in expected]
    # the messages travel with their keys
    for i, s, msg in zip(ordered.topic_index, ordered.stamp_ns, ordered.msgs):
        if ordered.topics[i] != "/clock":
            assert msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec == s
    # the BagMessage form gives the same order and types
    msgs = bags.read_messages_in_stamp_order(tmp_path / "bag", topics)
    assert [(m.topic, m.stamp_ns, m.log_time_ns) for m in msgs] == got
    assert {m.msgtype for m in msgs if m.topic == "/imu"} == {"sensor_msgs/msg/Imu"}


def test_without_topics_ties_go_by_log_time_only(tmp_path: Path) -> None:
    written = _write_shuffled_bag(tmp_path / "bag", seed=4)
    expected = sorted(sorted(written, key=lambda w: (w[2], w[3])), key=lambda w: (w[1], w[2]))
    msgs = bags.read_messages_in_stamp_order(tmp_path / "bag")
    assert [(m.topic, m.stamp_ns, m.log_time_ns) for m in msgs] == [(w[0], w[1], w[2]) for w in expected]


def test_a_missing_topic_is_named(tmp_path: Path) -> None:
    _write_shuffled_bag(tmp_path / "bag", seed=5)
    with pytest.raises(bags.BagError, match=r"lacks topics \['/nope'\]"):
        bags.read_stamp_ordered(tmp_path / "bag", ["/imu", "/nope"])
    with pytest.raises(bags.BagError, match="bag not found"):
        bags.read_stamp_ordered(tmp_path / "missing", ["/imu"])


@pytest.mark.parametrize("enabled_before", [True, False])
def test_gc_paused_restores_the_collector_state(enabled_before: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled_before else gc.disable()
        with bags.gc_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled_before
        with pytest.raises(RuntimeError, match="boom"), bags.gc_paused():
            raise RuntimeError("boom")
        assert gc.isenabled() is enabled_before
    finally:
        gc.enable() if was else gc.disable()


def test_zstd_chunks_read_back_the_same_messages(tmp_path: Path) -> None:
    T = bags.default_types()
    rng = np.random.default_rng(7)
    samples = [ImuSample(1_000_000_000 + k * 1_000_000, rng.normal(size=3), rng.normal(size=3)) for k in range(3000)]
    for compression in ("none", "zstd"):
        with bags.BagWriter(tmp_path / compression, compression=compression) as bag:
            for s in samples:
                bag.write("/imu", M.imu_msg(T, s), s.stamp_ns)
    plain = bags.read_messages_in_stamp_order(tmp_path / "none", ["/imu"])
    packed = bags.read_messages_in_stamp_order(tmp_path / "zstd", ["/imu"])
    assert len(packed) == len(samples)
    for s, m in zip(samples, packed):
        got = M.imu_sample_from_msg(m.msg)
        assert got.stamp_ns == s.stamp_ns
        np.testing.assert_array_equal(got.angular_velocity, s.angular_velocity)
        np.testing.assert_array_equal(got.linear_acceleration, s.linear_acceleration)
    assert [m.log_time_ns for m in plain] == [m.log_time_ns for m in packed]
    size = {c: sum(f.stat().st_size for f in (tmp_path / c).glob("*.mcap")) for c in ("none", "zstd")}
    assert size["zstd"] < size["none"]  # random floats compress little, the rest of each record does


def test_bad_compression_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(bags.BagError, match="needs the mcap storage"):
        bags.BagWriter(tmp_path / "a", storage="sqlite3", compression="zstd")
    with pytest.raises(bags.BagError, match="unknown bag compression 'lz4'"):
        bags.BagWriter(tmp_path / "b", compression="lz4")
