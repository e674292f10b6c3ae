"""The output bag: the node's output messages for each estimate, written into an mcap bag (the node's topics and
layouts), encoded in batches from arrays (``io.cdr_encode``) rather than built and serialized one by one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_estimator.common.samples import Estimate
from robot_state_estimator.tools.replay.errors import ReplayError
from robot_state_estimator.tools.replay.options import DEFAULT_OUTPUT_COMPRESSION, OUTPUT_GROUPS

#: estimates held before their messages are encoded and written (bounds the memory of a long run)
FLUSH_EVERY = 512


class OutputBag:
    """Writes the node's outputs for each estimate into an mcap bag (same topics and layouts as the node).

    :meth:`write` keeps each estimate's numbers; every ``FLUSH_EVERY`` estimates and at :meth:`close` they are
    encoded to CDR together (``io.cdr_encode``: odometry, TF and wrenches from one template per topic with the
    stamps and floats written by numpy; the contact states from cached strings) and written in the order the node
    publishes them: per estimate odometry, ``/tf``, the wrenches, the contact states. The bytes are those of the
    node's message builders (``io.messages``) serialized by rosbags (``test/tools/test_replay_outputs.py``).

    Args:
        path: the bag directory to create (must not exist).
        odom_frame: odometry and TF parent frame.
        base_frame: odometry child frame.
        tf_child_frame: TF child frame ("" = ``base_frame``).
        groups: which of ``OUTPUT_GROUPS`` to write (default: all).
        compression: chunk compression, ``"zstd"`` or ``"none"`` (``io.bags.BagWriter``).

    Raises:
        ReplayError: an unknown group; ``io.bags.BagError``: the path exists or a bad compression.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        odom_frame: str,
        base_frame: str,
        tf_child_frame: str,
        groups: tuple[str, ...] | list[str] = OUTPUT_GROUPS,
        compression: str = DEFAULT_OUTPUT_COMPRESSION,
    ) -> None:
        from robot_state_estimator.io import bags, cdr_encode

        unknown = sorted(set(groups) - set(OUTPUT_GROUPS))
        if unknown:
            raise ReplayError(f"unknown output topics {unknown}; choose from {list(OUTPUT_GROUPS)}")
        self.groups = tuple(g for g in OUTPUT_GROUPS if g in groups)
        self._odometry = "odometry" in self.groups
        self._tf = "tf" in self.groups
        self._wrenches = "wrenches" in self.groups
        self._contacts = "contacts" in self.groups
        self.bag = bags.BagWriter(path, compression=compression)
        self.bag.open()
        self.odom_frame = odom_frame
        self.base_frame = base_frame
        self.tf_child = tf_child_frame or base_frame
        self._enc = cdr_encode
        self._odom_layout = cdr_encode.odometry_layout(odom_frame, base_frame)
        self._tf_layout = cdr_encode.tf_message_layout(odom_frame, self.tf_child)
        self._wrench_layouts: dict[str, Any] = {}
        self._contact_states = cdr_encode.DiagnosticArrayEncoder()
        self._connections = _Connections(self.bag)
        #: per estimate held: (stamp ns, its output vector when its odometry is written else None, its feet whose
        #: contact states are written (or ()), whether their wrenches are written)
        self._held: list[tuple[int, Any, tuple[Any, ...], bool]] = []
        #: CPU s spent encoding and writing the messages and closing the bag, of which encoding; messages written
        self.cpu_s = 0.0
        self.cpu_encode_s = 0.0
        self.n_messages = 0

    def write(self, e: Estimate, odometry: bool = True, contacts: bool = True, forces: bool = True) -> None:
        """Write the messages the node publishes for ``e`` (odometry and /tf when ``odometry``; wrenches and
        contact states when ``contacts`` and it has feet, the wrenches only with ``forces``: the foot forces
        were estimated, ``EstimatorStream.forces_estimated``), those of the chosen groups, at ``e.stamp_ns``
        (encoded and written with the next batch)."""
        vector = e.output_vector() if odometry and (self._odometry or self._tf) else None
        feet = e.feet if contacts and (self._wrenches or self._contacts) else ()
        if vector is None and not feet:
            return
        self._held.append((e.stamp_ns, vector, feet, forces and self._wrenches))
        if len(self._held) >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Encode and write the messages of the estimates held."""
        from robot_state_estimator.io.messages import contact_status_fields

        held, self._held = self._held, []
        if not held:
            return
        cpu = time.process_time
        t0 = cpu()
        odometry, tf = self._odometry_rows(held)
        wrenches = self._wrench_rows(held)
        contacts = (
            [self._contact_states.encode(s, "", contact_status_fields(feet)) for s, _, feet, _ in held if feet]
            if self._contacts
            else []
        )
        t1 = cpu()
        connections = self._connections
        conns: list[Any] = []
        times: list[int] = []
        datas: list[Any] = []
        k = 0  # the next contact states message
        for stamp_ns, vector, feet, forces in held:
            if vector is not None:
                if odometry is not None:
                    conns.append(connections["odometry"])
                    times.append(stamp_ns)
                    datas.append(odometry.next())
                if tf is not None:
                    conns.append(connections["/tf"])
                    times.append(stamp_ns)
                    datas.append(tf.next())
            if not feet:
                continue
            if forces:
                for foot in feet:
                    conns.append(connections[f"contact_wrench/{foot.name}"])
                    times.append(stamp_ns)
                    datas.append(wrenches[foot.name].next())
            if self._contacts:
                conns.append(connections["contact_states"])
                times.append(stamp_ns)
                datas.append(contacts[k])
                k += 1
        self.bag.write_raw_many(conns, times, datas)
        n = len(datas)
        self.n_messages += n
        t2 = cpu()
        self.cpu_encode_s += t1 - t0
        self.cpu_s += t2 - t0

    def _odometry_rows(self, held: list[tuple[int, Any, tuple[Any, ...], bool]]) -> tuple[_Rows | None, _Rows | None]:
        """The odometry and TF messages of the held estimates with odometry, in order."""
        from robot_state_estimator.io.messages import ODOMETRY_FROM_OUTPUT, TRANSFORM_FROM_OUTPUT

        with_odometry = [(s, v) for s, v, _, _ in held if v is not None]
        if not with_odometry:
            return None, None
        stamps = np.fromiter((s for s, _ in with_odometry), dtype=np.int64, count=len(with_odometry))
        vectors = np.stack([v for _, v in with_odometry])
        odometry = tf = None
        if self._odometry:
            odometry = _Rows(self._odom_layout.encode_many(stamps, vectors[:, ODOMETRY_FROM_OUTPUT]))
        if self._tf:
            tf = _Rows(self._tf_layout.encode_many(stamps, vectors[:, TRANSFORM_FROM_OUTPUT]))
        return odometry, tf

    def _wrench_rows(self, held: list[tuple[int, Any, tuple[Any, ...], bool]]) -> dict[str, _Rows]:
        """Foot name -> its wrench messages of the held estimates, in order."""
        per_foot: dict[str, tuple[list[int], list[Any]]] = {}
        for stamp_ns, _, feet, forces in held:
            if forces:
                for foot in feet:
                    stamps, values = per_foot.setdefault(foot.name, ([], []))
                    stamps.append(stamp_ns)
                    values.append(foot.wrench_in_foot)
        out = {}
        for name, (stamps, values) in per_foot.items():
            layout = self._wrench_layouts.get(name)
            if layout is None:
                layout = self._wrench_layouts[name] = self._enc.wrench_stamped_layout(name)
            out[name] = _Rows(layout.encode_many(stamps, np.asarray(values, dtype=np.float64).reshape(len(values), 6)))
        return out

    def close(self) -> None:
        """Write what is held and finish the bag."""
        try:
            self.flush()
        finally:
            t = time.process_time()
            self.bag.close()
            self.cpu_s += time.process_time() - t


class _Rows:
    """Messages of one topic encoded together ((N, size) bytes), handed out one by one in order."""

    def __init__(self, rows: np.ndarray) -> None:
        self.n, self.size = rows.shape
        self.flat = memoryview(np.ascontiguousarray(rows).tobytes())
        self.start = 0

    def __len__(self) -> int:
        return int(self.n)

    def next(self) -> memoryview:
        start = self.start
        self.start = start + self.size
        return self.flat[start : start + self.size]


class _Connections(dict[str, Any]):
    """Topic -> connection of the output bag, added on first use (the order the node's topics first appear)."""

    def __init__(self, bag: Any) -> None:
        super().__init__()
        self.bag = bag

    def __missing__(self, topic: str) -> Any:
        from robot_state_estimator.io import cdr_encode as enc

        if topic.startswith("contact_wrench/"):
            msgtype = enc.WRENCH_STAMPED
        else:
            msgtype = {"odometry": enc.ODOMETRY, "/tf": enc.TF_MESSAGE, "contact_states": enc.DIAGNOSTIC_ARRAY}[topic]
        connection = self[topic] = self.bag.connection(topic, msgtype)
        return connection
