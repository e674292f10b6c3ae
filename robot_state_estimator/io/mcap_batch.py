"""Many serialized messages written into a rosbags mcap bag at once, byte for byte as rosbags writes them one by one.

rosbags' ``Writer.write`` is its only way to write a message: per message it checks the connection against its list,
counts it, and its mcap storage makes the record field by field (about 3 us a message here, most of replay's cost of
writing once the messages are encoded in bulk). :func:`write_many` makes the records of a whole batch with numpy
(MCAP ``Message`` record, op 0x05: uint64 record length, uint16 channel id, uint32 sequence 0, uint64 log time,
uint64 publish time = log time, the data) and hands them to the writer's open chunk, with the bookkeeping
``Writer.write`` and ``McapWriter.write`` do: each message's (time, offset) in the chunk's message index, the
chunk's and the file's first and last times, the per-channel and per-connection counts, the bag's first and last
times, and a new chunk once the open one holds more than 1 MiB (the same message boundaries as rosbags').

The result is the file rosbags writes for the same messages (``test/io/test_mcap_batch.py`` compares the bytes of
both bags, metadata included, with and without zstd chunks, across several chunks), so every reader of rosbags' mcap
bags (rosbags, ``ros2 bag``, Foxglove) reads it. It relies on the attributes of rosbags' ``Writer`` and
``McapWriter`` (0.11, :data:`TESTED_ROSBAGS`): another rosbags version, another storage (sqlite3), per-message
compression or another writer falls back to ``Writer.write`` message by message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

import numpy as np
from rosbags.rosbag2.enums import CompressionMode
from rosbags.rosbag2.storage_mcap import McapWriter

#: the fixed part of an MCAP Message record: op, record length, channel id, sequence, log time, publish time
_RECORD_HEAD = np.dtype(
    {
        "names": ["op", "length", "channel", "sequence", "log_time", "publish_time"],
        "formats": ["u1", "<u8", "<u2", "<u4", "<u8", "<u8"],
        "offsets": [0, 1, 9, 11, 15, 23],
        "itemsize": 31,
    }
)
_HEAD = _RECORD_HEAD.itemsize
#: the message data follows the channel id, sequence and both times
_FIELDS_BEFORE_DATA = 22
#: rosbags' McapWriter closes its chunk after the message that takes it past this many bytes
CHUNK_BYTES = 2**20
#: the rosbags versions whose writer this module was tested against (``test/io/test_mcap_batch.py``, byte for byte);
#: with another one every message goes through ``Writer.write``
TESTED_ROSBAGS = "0.11."
BATCHES = version("rosbags").startswith(TESTED_ROSBAGS)


def write_many(
    writer: Any,
    connections: Sequence[Any],
    log_times_ns: Sequence[int],
    datas: Sequence[bytes | memoryview],
) -> None:
    """Write serialized messages in order, as ``writer.write(connections[i], log_times_ns[i], datas[i])`` for each i.

    Args:
        writer: an open rosbags ``rosbag2.Writer``.
        connections: the connection (of ``writer.add_connection``) of each message.
        log_times_ns: each message's log time, ns (>= 0).
        datas: each message's CDR bytes (encapsulation header included).

    Raises:
        ValueError: the three sequences differ in length, or a connection is not the writer's.
    """
    n = len(datas)
    if len(connections) != n or len(log_times_ns) != n:
        raise ValueError(f"{len(connections)} connections, {len(log_times_ns)} log times, {n} messages")
    if not n:
        return
    storage = writer.storage
    if not BATCHES or type(storage) is not McapWriter or writer.compression_mode == CompressionMode.MESSAGE:
        for connection, t, data in zip(connections, log_times_ns, datas, strict=True):
            writer.write(connection, t, data)
        return
    known = {id(c) for c in writer.connections}
    ids = [c.id for c in connections]
    if not {id(c) for c in connections} <= known:  # what Writer.write refuses
        raise ValueError("a connection is not one of this writer's (Writer.add_connection)")
    times = np.asarray(log_times_ns, dtype=np.int64)
    sizes = np.fromiter(map(len, datas), dtype=np.int64, count=n)
    heads = np.zeros(n, dtype=_RECORD_HEAD)
    heads["op"] = 0x05
    heads["length"] = sizes + _FIELDS_BEFORE_DATA
    heads["channel"] = ids
    heads["log_time"] = times
    heads["publish_time"] = times
    head_bytes = memoryview(heads.tobytes())
    record_ends = np.cumsum(sizes + _HEAD)
    start = 0
    while start < n:
        chunk = storage.chunk
        at = chunk.bio.tell()
        ends = at + record_ends[start:] - (record_ends[start - 1] if start else 0)
        over = np.flatnonzero(ends > CHUNK_BYTES)
        stop = start + int(over[0]) + 1 if over.size else n
        offsets = np.concatenate(([at], ends[: stop - start - 1])).tolist()
        parts: list[Any] = []
        for k in range(start, stop):
            parts.append(head_bytes[_HEAD * k : _HEAD * (k + 1)])
            parts.append(datas[k])
        chunk.bio.write(b"".join(parts))
        batch_times = times[start:stop]
        first, last = int(batch_times.min()), int(batch_times.max())
        chunk.message_start_time = min(first, chunk.message_start_time)
        chunk.message_end_time = max(last, chunk.message_end_time)
        storage.message_start_time = min(first, storage.message_start_time)
        storage.message_end_time = max(last, storage.message_end_time)
        index = chunk.msgs
        for cid, t, offset in zip(ids[start:stop], batch_times.tolist(), offsets, strict=True):
            index[cid].append((t, offset))
        for cid, count in Counter(ids[start:stop]).items():
            storage.channel_stats[cid] += count
            writer.counts[cid] += count
        if over.size:
            storage.close_chunk()
        start = stop
    writer.min_timestamp = min(int(times.min()), writer.min_timestamp)
    writer.max_timestamp = max(int(times.max()), writer.max_timestamp)


__all__ = ["BATCHES", "CHUNK_BYTES", "TESTED_ROSBAGS", "write_many"]
