"""The ``decode`` section of ``robot-state-estimator bench``: per-message cost of turning an input bag's raw CDR
into something the estimator reads, rosbags' deserializer against the bulk decoder, in one run.

For each (topic, type) of the bulk types (``io.cdr.BULK_TYPES``) in the bag, with the garbage collector paused as
in replay's reading (``io.bags.gc_paused``), the best of ``repeats`` timings (CPU time of this process, so other
processes on the cores count less) of:

- ``rosbags_us``: ``Typestore.deserialize_cdr`` on each message (what replay did before the bulk path);
- ``bulk_arrays_us``: ``io.cdr.decode`` of all of them at once (numpy arrays);
- ``bulk_messages_us``: ``io.bulk.decode_messages`` (the arrays, then rosbags' dataclasses built from them: what
  replay's reading now does);

each divided by the number of messages, and the ratios rosbags / bulk. Reading the bag's records (rosbags' mcap
reader) is the same for both and left out.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rosbags.highlevel import AnyReader

from robot_state_estimator.io import bags, bulk, cdr


def _best_cpu_s(func: Any, repeats: int) -> float:
    best = float("inf")
    with bags.gc_paused():
        for _ in range(repeats):
            t0 = time.process_time()
            func()
            best = min(best, time.process_time() - t0)
    return best


def bench_decode(bag: Path, *, repeats: int = 3) -> dict[str, Any]:
    """Per-message decoding cost of each bulk-type topic of ``bag`` (rosbag2), rosbags against bulk.

    Returns:
        topic -> ``{"msgtype", "n", "rosbags_us", "bulk_arrays_us", "bulk_messages_us", "speedup_arrays",
        "speedup_messages"}`` (us per message, CPU time, best of ``repeats``).
    """
    typestore = bags.default_typestore()
    raws: dict[tuple[str, str], list[bytes]] = {}
    with AnyReader([bag], default_typestore=typestore) as reader:
        for connection, _t, raw in reader.messages():
            if connection.msgtype in cdr.BULK_TYPES:
                raws.setdefault((connection.topic, connection.msgtype), []).append(bytes(raw))
    out: dict[str, Any] = {}
    for (topic, msgtype), group in sorted(raws.items()):
        n = len(group)
        deserialize = typestore.deserialize_cdr
        rosbags_s = _best_cpu_s(lambda: [deserialize(r, msgtype) for r in group], repeats)  # noqa: B023
        arrays_s = _best_cpu_s(lambda: cdr.decode(msgtype, group), repeats)  # noqa: B023
        messages_s = _best_cpu_s(lambda: bulk.decode_messages(typestore, msgtype, group), repeats)  # noqa: B023
        out[topic] = {
            "msgtype": msgtype,
            "n": n,
            "rosbags_us": 1e6 * rosbags_s / n,
            "bulk_arrays_us": 1e6 * arrays_s / n,
            "bulk_messages_us": 1e6 * messages_s / n,
            "speedup_arrays": rosbags_s / arrays_s if arrays_s > 0 else None,
            "speedup_messages": rosbags_s / messages_s if messages_s > 0 else None,
        }
    return out


def summary_lines(section: dict[str, Any]) -> list[str]:
    """One line per topic of a :func:`bench_decode` result."""
    return [
        f"decode {topic} ({d['msgtype']}, {d['n']} messages): rosbags {d['rosbags_us']:.1f} us/msg, bulk arrays "
        f"{d['bulk_arrays_us']:.2f} us/msg, bulk to rosbags messages {d['bulk_messages_us']:.2f} us/msg"
        for topic, d in section.items()
    ]
