"""io/mcap_batch.py: a batch of serialized messages written at once makes the very bag rosbags' ``Writer.write`` makes
one message at a time: the same bytes of the mcap file and of metadata.yaml, with and without zstd chunks, across
several chunks and several batches, messages of several connections interleaved and out of time order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

from robot_state_estimator.io import mcap_batch
from robot_state_estimator.io.bags import BagWriter, default_typestore

TOPICS = (
    ("odometry", "nav_msgs/msg/Odometry"),
    ("/tf", "tf2_msgs/msg/TFMessage"),
    ("contact_wrench/FL_foot", "geometry_msgs/msg/WrenchStamped"),
    ("contact_states", "diagnostic_msgs/msg/DiagnosticArray"),
)


def _messages(seed: int, n: int) -> tuple[list[int], list[int], list[bytes]]:
    """(topic index, log time, data) of ``n`` messages: sizes 1-3000 bytes (several 1 MiB chunks), times mostly
    increasing with some going back."""
    rng = np.random.default_rng(seed)
    which = rng.integers(0, len(TOPICS), size=n).tolist()
    times = (10**9 + np.cumsum(rng.integers(-200, 1000, size=n))).tolist()
    datas = [rng.bytes(int(size)) for size in rng.integers(1, 3000, size=n)]
    return which, times, datas


def _write(path: Path, zstd: bool, batches: list[int] | None, msgs: tuple[list[int], list[int], list[bytes]]) -> None:
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    if zstd:
        writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    writer.open()
    conns = [writer.add_connection(t, m, typestore=default_typestore()) for t, m in TOPICS]
    which, times, datas = msgs
    if batches is None:
        for i, t, data in zip(which, times, datas, strict=True):
            writer.write(conns[i], t, data)
    else:
        start = 0
        for size in batches:
            stop = start + size
            mcap_batch.write_many(writer, [conns[i] for i in which[start:stop]], times[start:stop], datas[start:stop])
            start = stop
    writer.close()


def test_the_installed_rosbags_is_the_tested_one() -> None:
    """The batch path is on with the pinned rosbags (requirements.txt): the tests below exercise it."""
    assert mcap_batch.BATCHES


@pytest.mark.parametrize("zstd", [False, True], ids=["none", "zstd"])
def test_batches_write_the_bytes_rosbags_writes_one_by_one(tmp_path: Path, zstd: bool) -> None:
    msgs = _messages(seed=3, n=3000)  # about 4.5 MB: five chunks
    _write(tmp_path / "one" / "bag", zstd, None, msgs)
    for name, batches in (("all", [3000]), ("parts", [1, 0, 700, 1299, 1000])):
        _write(tmp_path / name / "bag", zstd, batches, msgs)
        for file in ("bag.mcap", "metadata.yaml"):
            assert (tmp_path / name / "bag" / file).read_bytes() == (tmp_path / "one" / "bag" / file).read_bytes()
    with AnyReader([tmp_path / "all" / "bag"], default_typestore=default_typestore()) as reader:
        got = [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]
    which, times, datas = msgs
    expected = sorted(zip((TOPICS[i][0] for i in which), times, datas, strict=True), key=lambda m: m[1])
    assert sorted(got, key=lambda m: m[1]) == expected


def test_a_connection_of_another_writer_or_a_length_mismatch_is_refused(tmp_path: Path) -> None:
    a, b = BagWriter(tmp_path / "a"), BagWriter(tmp_path / "b")
    a.open()
    b.open()
    foreign = b.connection("/tf", "tf2_msgs/msg/TFMessage")
    with pytest.raises(ValueError, match="not one of this writer's"):
        a.write_raw_many([foreign], [1], [b"\x00\x01\x00\x00"])
    with pytest.raises(ValueError, match="1 connections, 2 log times, 1 messages"):
        a.write_raw_many([a.connection("/tf", "tf2_msgs/msg/TFMessage")], [1, 2], [b"\x00\x01\x00\x00"])
    a.close()
    b.close()


def test_a_sqlite3_bag_takes_the_messages_one_by_one(tmp_path: Path) -> None:
    bag = BagWriter(tmp_path / "s", storage="sqlite3")
    bag.open()
    conn = bag.connection("/tf", "tf2_msgs/msg/TFMessage")
    data = bytes(
        default_typestore().serialize_cdr(
            default_typestore().types["tf2_msgs/msg/TFMessage"](transforms=[]), "tf2_msgs/msg/TFMessage"
        )
    )
    bag.write_raw_many([conn, conn], [5, 7], [data, data])
    bag.close()
    with AnyReader([tmp_path / "s"], default_typestore=default_typestore()) as reader:
        assert [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()] == [("/tf", 5, data), ("/tf", 7, data)]
