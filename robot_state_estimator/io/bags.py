"""Reading and writing bags with ``rosbags`` (rosbag2 sqlite3 / mcap, and ROS 1 bags for reading).

- :func:`default_typestore`: the ROS 2 Kilted message definitions (tf2_msgs, nav_msgs, ... included).
- :func:`read_messages`: deserialized messages of chosen topics, in the bag's log-time order.
- :func:`read_messages_in_stamp_order`: the same, ordered by ``header.stamp`` (what the estimator needs);
  :func:`read_stamp_ordered` (or :class:`BagReader`, to check the topics and read with one opening) gives the
  same order as plain lists, for the replay loop.
- :func:`gc_paused`: the cyclic garbage collector paused while many long-lived messages are made.
- :class:`BagWriter`: an mcap (default) or sqlite3 rosbag2 writer that adds connections as topics appear.

Time is integer nanoseconds everywhere (``stamp_ns``, ``log_time_ns``).
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from robot_state_estimator.common.time import stamp_to_ns
from robot_state_estimator.io import cdr
from robot_state_estimator.io.bulk import decode_or_deserialize, messages_from_arrays
from robot_state_estimator.io.bulk_samples import Converter
from robot_state_estimator.io.cdr import BULK_TYPES
from robot_state_estimator.io.mcap_batch import write_many
from robot_state_estimator.io.message_types import MessageTypes, rosbags_types


class BagError(RuntimeError):
    """A bag cannot be opened, read or written; the message names the path and the cause."""


@functools.cache
def default_typestore() -> Typestore:
    """The rosbags typestore of ROS 2 Kilted (immutable; built once per process)."""
    return get_typestore(Stores.ROS2_KILTED)


def default_types() -> MessageTypes:
    """:class:`MessageTypes` backed by :func:`default_typestore` (for the message builders)."""
    return rosbags_types(default_typestore())


@dataclass(frozen=True)
class BagMessage:
    """One deserialized message.

    Attributes:
        topic: topic name.
        msgtype: ROS 2 type name, e.g. ``sensor_msgs/msg/Imu``.
        log_time_ns: record (receive) time in the bag (ns).
        msg: the rosbags message dataclass (same field names as the rclpy message).
    """

    topic: str
    msgtype: str
    log_time_ns: int
    msg: Any

    @property
    def stamp_ns(self) -> int:
        """``header.stamp`` in ns when the message has a header, else the log time."""
        header = getattr(self.msg, "header", None)
        return stamp_to_ns(header.stamp) if header is not None else self.log_time_ns


def find_topic(name: str, present: dict[str, str] | Sequence[str]) -> str | None:
    """The topic of ``present`` (a bag's topics) that ``name`` means: ``name`` itself, else the same name with or
    without the leading ``/`` (rosbag2 records fully qualified names, ``/odometry``; a relative ``odometry`` written
    by a tool names the same topic in the root namespace); None when neither is there."""
    if name in present:
        return name
    other = name[1:] if name.startswith("/") else "/" + name
    return other if other in present else None


def check_topic_types(path: str | Path, present: dict[str, str], expected: dict[str, tuple[str, str]]) -> None:
    """Refuse topics whose message type is not the one a tool reads.

    Args:
        path: the bag (for the message).
        present: topic -> ROS 2 type name of the bag's connections (``BagReader.topics``).
        expected: topic -> (ROS 2 type name, what names the topic to the user, e.g. ``--imu-topic``); topics
            absent from ``present`` are not checked.

    Raises:
        BagError: one line listing every topic of another type (topic, its type, the type needed, the option).
    """
    wrong = [
        f"{topic} is {present[topic]}, not {msgtype} ({option})"
        for topic, (msgtype, option) in expected.items()
        if topic in present and present[topic] != msgtype
    ]
    if wrong:
        raise BagError(f"bag {path}: {'; '.join(wrong)}")


#: rosbags' words for a file that ends early or is no bag at all (mcap, ROS 1 bag, sqlite3)
_DAMAGE_WORDS = ("magic is invalid", "truncated record", "damaged", "disk image is malformed", "not a database")


def _damage_hint(exc: BaseException) -> str:
    """A hint for the user when rosbags' message says the file is cut short or not a bag, else ""."""
    text = str(exc).lower()
    if any(word in text for word in _DAMAGE_WORDS):
        return " (the file is incomplete, e.g. a recording that was not closed or a partial copy, or is not a bag)"
    return ""


def _bag_paths(path: str | Path) -> list[Path]:
    path = Path(path)
    if not path.exists():
        raise BagError(f"bag not found: {path}")
    if path.is_dir() and not (path / "metadata.yaml").exists():
        files = sorted(p.name for p in path.iterdir() if p.suffix in (".mcap", ".db3", ".bag"))
        hint = f"; it holds {', '.join(files)}: pass that file" if files else " (an empty folder?)"
        raise BagError(f"{path} is a folder without metadata.yaml, not a rosbag2 bag{hint}")
    return [path]


def bag_topics(path: str | Path) -> dict[str, str]:
    """Topic -> message type of every connection in the bag.

    Raises:
        BagError: the path does not exist or is not a bag rosbags can read.
    """
    try:
        with AnyReader(_bag_paths(path), default_typestore=default_typestore()) as reader:
            return {c.topic: c.msgtype for c in reader.connections}
    except BagError:
        raise
    except Exception as exc:  # rosbags raises several unrelated error types
        raise BagError(f"cannot read bag {path}: {exc}{_damage_hint(exc)}") from exc


def read_messages(path: str | Path, topics: Iterable[str] | None = None) -> Iterator[BagMessage]:
    """Deserialized messages of ``topics`` (all when None) in log-time order.

    Raises:
        BagError: the bag cannot be read, or a requested topic is not in it (the message lists those present).
    """
    try:
        with AnyReader(_bag_paths(path), default_typestore=default_typestore()) as reader:
            wanted = None if topics is None else set(topics)
            present = {c.topic for c in reader.connections}
            if wanted is not None and not wanted <= present:
                raise BagError(f"bag {path} lacks topics {sorted(wanted - present)}; it has {sorted(present)}")
            connections = [c for c in reader.connections if wanted is None or c.topic in wanted]
            for connection, log_time_ns, raw in reader.messages(connections=connections):
                msg = reader.deserialize(raw, connection.msgtype)
                yield BagMessage(connection.topic, connection.msgtype, int(log_time_ns), msg)
    except BagError:
        raise
    except Exception as exc:
        raise BagError(f"cannot read bag {path}: {exc}{_damage_hint(exc)}") from exc


def read_messages_in_stamp_order(path: str | Path, topics: Sequence[str] | None = None) -> list[BagMessage]:
    """All messages of ``topics`` sorted by ``header.stamp`` (ties: by position of the topic in ``topics``,
    then by log time), so an IMU sample and a joint sample with the same stamp are processed IMU first when
    ``topics`` lists the IMU topic first. Messages without a header sort by their log time.

    Raises:
        BagError: as :func:`read_messages`.
    """
    ordered = read_stamp_ordered(path, topics)
    return [
        BagMessage(ordered.topics[i], getattr(msg, "__msgtype__", ordered.msgtypes[i]), log_ns, msg)
        for i, log_ns, msg in zip(ordered.topic_index, ordered.log_time_ns, ordered.msgs, strict=True)
    ]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector inside the block (restored after it, also on errors).

    Reading a bag makes tens of thousands of small message objects that all stay alive; each automatic
    collection would walk all of them again (about a third of the time to deserialize a JointState). Nothing
    made while reading forms reference cycles, so nothing is left for the collector to free.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class StampOrdered:
    """Deserialized messages in stamp order (:func:`read_stamp_ordered`), as parallel lists of length N.

    Attributes:
        topics: the topics read, in the order asked for (tie order); ``topic_index`` indexes it.
        msgtypes: ROS 2 type name of each entry of ``topics`` (of its last connection, when a topic has
            connections of several types; each message's own is ``msg.__msgtype__``).
        stamp_ns: (N,) ``header.stamp`` in ns (the log time for a message without a header).
        topic_index: (N,) index into ``topics`` of each message.
        log_time_ns: (N,) record time in the bag, ns.
        msgs: (N,) the rosbags message dataclasses.
        steps_back: topic -> (how many times, largest step in ns) its ``header.stamp`` went back in recording
            (log-time) order; topics whose stamps never go back are absent. The stamp order interleaves the
            messages recorded before and after such a step.
        bulk_refused: topic -> why the bulk CDR decoder refused its messages (``io.cdr.CdrError``), which
            rosbags then deserialized; empty when none was refused.
    """

    topics: tuple[str, ...]
    msgtypes: tuple[str, ...]
    stamp_ns: list[int]
    topic_index: list[int]
    log_time_ns: list[int]
    msgs: list[Any]
    steps_back: dict[str, tuple[int, int]] = field(default_factory=dict)
    bulk_refused: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.msgs)


class BagReader:
    """An input bag opened once (rosbags ``AnyReader``): its topics, then its messages in stamp order.

    Opening a rosbag2 bag costs tens to hundreds of milliseconds (its metadata, the message definitions it
    carries, the deserializers made for them), so a tool that checks the topics and then reads opens it once::

        with BagReader(path) as bag:
            if "/imu/data" in bag.topics:
                ordered = bag.stamp_ordered(["/imu/data", "/joint_states"])

    Args:
        path: rosbag2 directory or file (mcap, sqlite3) or ROS 1 bag.

    Attributes:
        topics: topic -> message type of every connection in the bag (set by opening).

    Raises:
        BagError: the path does not exist or is not a bag rosbags can read (on opening).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.topics: dict[str, str] = {}
        self._reader: Any = None

    def __enter__(self) -> BagReader:
        try:
            reader = AnyReader(_bag_paths(self.path), default_typestore=default_typestore())
            reader.open()
        except BagError:
            raise
        except Exception as exc:  # rosbags raises several unrelated error types
            raise BagError(f"cannot read bag {self.path}: {exc}{_damage_hint(exc)}") from exc
        self._reader = reader
        self.topics = {c.topic: c.msgtype for c in reader.connections}
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def stamp_ordered(
        self,
        topics: Sequence[str] | None = None,
        *,
        bulk: bool = True,
        samples: Mapping[str, Converter] | None = None,
    ) -> StampOrdered:
        """The messages of ``topics`` (all when None) in the order of :func:`read_messages_in_stamp_order`
        (stamp, then position of the topic in ``topics``, then log time, then position in the bag), without a
        per-message wrapper object, with the garbage collector paused (:func:`gc_paused`).

        Args:
            topics: the topics to read, in tie order.
            bulk: decode the types of ``io.cdr.BULK_TYPES`` in bulk, one topic at a time
                (``io.bulk.decode_or_deserialize``: the same messages, several times faster); a topic the bulk
                decoder refuses, and every other type, is deserialized by rosbags (``AnyReader.deserialize``), the
                refusal noted in ``StampOrdered.bulk_refused``. False: rosbags for every message.
            samples: topic -> converter of its decoded arrays into core samples (``io.bulk_samples``, e.g.
                ``{"/imu/data": imu_samples}``): with ``bulk``, the entries of these topics are the samples instead
                of messages, except where the converter gives None (a message the message path must judge) or the
                bulk decoder refused the topic: those stay rosbags messages.

        Raises:
            BagError: the bag is not open or cannot be read, or a requested topic is not in it (the message lists
                those present).
        """
        reader, path = self._reader, self.path
        if reader is None:
            raise BagError(f"bag {path} is not open (use BagReader as a context manager)")
        present = set(self.topics)
        if topics is not None and not set(topics) <= present:
            raise BagError(f"bag {path} lacks topics {sorted(set(topics) - present)}; it has {sorted(present)}")
        names = tuple(dict.fromkeys(topics)) if topics is not None else tuple(sorted(present))
        index = {t: i for i, t in enumerate(names)}
        rank = {t: i for i, t in enumerate(topics or ())}  # tie order (topics=None: log time only)
        connections = [c for c in reader.connections if c.topic in index]
        msgtypes = {c.topic: c.msgtype for c in connections}
        refused: dict[str, str] = {}
        try:
            with gc_paused():
                if bulk and reader.is2:  # rosbag2: CDR (a ROS 1 bag holds ROS 1 serialization)
                    msgs, log_times, topic_of, stamps = self._read_bulk(connections, refused, samples or {})
                else:
                    msgs, log_times, topic_of = self._read_each(connections)
                    stamps = [None] * len(msgs)
                for n, msg in enumerate(msgs):
                    if stamps[n] is None:
                        header = getattr(msg, "header", None)
                        stamps[n] = stamp_to_ns(header.stamp) if header is not None else log_times[n]
        except Exception as exc:  # rosbags raises several unrelated error types
            raise BagError(f"cannot read bag {path}: {exc}{_damage_hint(exc)}") from exc
        stamp = np.array(stamps, dtype=np.int64)
        log = np.array(log_times, dtype=np.int64)
        which = np.array([index[t] for t in topic_of], dtype=np.int64)
        ranks = np.array([rank.get(t, 0) for t in names], dtype=np.int64)[which] if len(which) else which
        steps_back = _steps_back(stamp, which, names)
        # the order of a stable sort on (stamp, topic rank, log time); the position in the bag breaks the rest
        order = np.lexsort((np.arange(stamp.size), log, ranks, stamp)).tolist()
        return StampOrdered(
            topics=names,
            msgtypes=tuple(msgtypes[t] for t in names),
            stamp_ns=stamp[order].tolist(),
            topic_index=which[order].tolist(),
            log_time_ns=log[order].tolist(),
            msgs=[msgs[k] for k in order],
            steps_back=steps_back,
            bulk_refused=refused,
        )

    def _read_each(self, connections: list[Any]) -> tuple[list[Any], list[int], list[str]]:
        """(messages, log times ns, topics) in the bag's order, each deserialized by rosbags."""
        deserialize = self._reader.deserialize
        msgs: list[Any] = []
        log_times: list[int] = []
        topic_of: list[str] = []
        for connection, log_time_ns, raw in self._reader.messages(connections=connections):
            msgs.append(deserialize(raw, connection.msgtype))
            log_times.append(int(log_time_ns))
            topic_of.append(connection.topic)
        return msgs, log_times, topic_of

    def _read_bulk(
        self, connections: list[Any], refused: dict[str, str], samples: Mapping[str, Converter]
    ) -> tuple[list[Any], list[int], list[str], list[int | None]]:
        """As :meth:`_read_each`, the raw messages of each (topic, type) decoded together
        (``io.bulk.decode_or_deserialize``, or into samples by ``samples[topic]``), with each entry's header stamp
        where the arrays give it (None: to be read from the message); ``refused`` gets topic -> why the bulk
        decoder refused it."""
        groups: dict[tuple[str, str], tuple[list[int], list[bytes]]] = {}
        log_times: list[int] = []
        topic_of: list[str] = []
        for n, (connection, log_time_ns, raw) in enumerate(self._reader.messages(connections=connections)):
            key = (connection.topic, connection.msgtype)
            group = groups.get(key)
            if group is None:
                group = groups[key] = ([], [])
            group[0].append(n)
            group[1].append(raw)
            log_times.append(int(log_time_ns))
            topic_of.append(connection.topic)
        msgs: list[Any] = [None] * len(log_times)
        stamps: list[int | None] = [None] * len(log_times)
        typestore = self._reader.typestore  # the bag's definitions over ROS 2 Kilted's (AnyReader)
        for (topic, msgtype), (positions, raws) in groups.items():
            if msgtype in BULK_TYPES and not _kilted_layout(typestore, msgtype):
                refused[topic] = f"the bag defines {msgtype} otherwise than ROS 2 Kilted"
                decoded = [typestore.deserialize_cdr(raw, msgtype) for raw in raws]
            elif msgtype in BULK_TYPES and topic in samples:
                decoded, group_stamps, why = _decode_samples(typestore, msgtype, raws, samples[topic])
                if why:
                    refused[topic] = why
                for n, stamp in zip(positions, group_stamps, strict=True):
                    stamps[n] = stamp
            else:
                decoded, why = decode_or_deserialize(typestore, msgtype, raws)
                if why:
                    refused[topic] = why
            for n, msg in zip(positions, decoded, strict=True):
                msgs[n] = msg
        return msgs, log_times, topic_of, stamps


def _decode_samples(
    typestore: Typestore, msgtype: str, raws: list[bytes], convert: Converter
) -> tuple[list[Any], list[int | None], str]:
    """One topic's raw messages as core samples (``convert`` of their bulk-decoded arrays), the rows the converter
    leaves None as rosbags messages; all as rosbags messages when the bulk decoder refuses the batch.

    Returns:
        (the entries, their header stamps (None: read it from the message), "" or why the decoder refused)."""
    try:
        arrays = cdr.decode(msgtype, raws)
    except cdr.CdrError as exc:
        deserialize = typestore.deserialize_cdr
        return [deserialize(raw, msgtype) for raw in raws], [None] * len(raws), str(exc)
    items = convert(arrays)
    if any(item is None for item in items):  # rare: messages the message path must judge
        messages = messages_from_arrays(typestore, msgtype, arrays)
        items = [messages[i] if item is None else item for i, item in enumerate(items)]
    stamps: list[int | None] = list(
        arrays.stamp_ns.tolist() if isinstance(arrays, cdr.ClockArrays) else arrays.header.stamp_ns.tolist()
    )
    return items, stamps, ""


def _kilted_layout(typestore: Typestore, msgtype: str) -> bool:
    """Whether ``typestore`` defines ``msgtype`` (and the types it holds) as ROS 2 Kilted does, the layout the bulk
    decoder reads."""
    try:
        return bool(typestore.generate_msgdef(msgtype) == default_typestore().generate_msgdef(msgtype))
    except Exception:  # an unknown or broken definition: rosbags reads it, or says why not
        return False


def _steps_back(
    stamp: NDArray[np.int64], which: NDArray[np.int64], names: tuple[str, ...]
) -> dict[str, tuple[int, int]]:
    """Topic -> (count, largest ns) of header stamps earlier than the previous one of the same topic, in log-time
    order (``stamp``, ``which``: each message's stamp and topic index in the order read, which is rosbags' log-time
    order)."""
    out: dict[str, tuple[int, int]] = {}
    for i, name in enumerate(names):
        step = np.diff(stamp[which == i])
        back = step < 0
        if back.any():
            out[name] = (int(back.sum()), int(-step[back].min()))
    return out


def read_stamp_ordered(path: str | Path, topics: Sequence[str] | None = None) -> StampOrdered:
    """:meth:`BagReader.stamp_ordered` of the bag at ``path`` (opened and closed here).

    Raises:
        BagError: the bag cannot be read, or a requested topic is not in it (the message lists those present).
    """
    with BagReader(path) as bag:
        return bag.stamp_ordered(topics)


class BagWriter:
    """Write messages to a new rosbag2 bag (a directory), adding one connection per topic on first use.

    Example::

        with BagWriter(out_dir) as bag:
            bag.write("/imu/data", imu_msg, stamp_ns)

    Args:
        path: the bag directory to create (must not exist).
        storage: ``"mcap"`` (default) or ``"sqlite3"``.
        compression: ``"none"`` (default) or ``"zstd"``: mcap chunks compressed with zstd (rosbags'
            storage-side compression; the default of libmcap's writer, which rosbag2's mcap plugin uses; read by
            ``ros2 bag``, Foxglove and rosbags; about a third of the size for some 6 ms per MB written); mcap
            only.

    Raises:
        BagError: the path exists, the storage or compression is unknown, or zstd was asked for sqlite3.
    """

    def __init__(self, path: str | Path, *, storage: str = "mcap", compression: str = "none") -> None:
        self.path = Path(path)
        if self.path.exists():
            raise BagError(f"output bag already exists: {self.path}")
        plugins = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
        if storage not in plugins:
            raise BagError(f"unknown bag storage {storage!r}; use one of {sorted(plugins)}")
        if compression not in ("none", "zstd"):
            raise BagError(f"unknown bag compression {compression!r}; use 'none' or 'zstd'")
        if compression == "zstd" and storage != "mcap":
            raise BagError(f"zstd chunk compression needs the mcap storage, not {storage!r}")
        self._typestore = default_typestore()
        self._writer = Writer(self.path, version=9, storage_plugin=plugins[storage])
        if compression == "zstd":
            self._writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        self._connections: dict[str, Any] = {}
        self._serializers: dict[str, tuple[Any, Any]] = {}
        self._open = False

    def __enter__(self) -> BagWriter:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def open(self) -> None:
        """Create the bag on disk.

        Raises:
            BagError: the folder cannot be created (a part of its path is a file, no permission, ...).
        """
        try:
            self._writer.open()
        except OSError as exc:
            raise BagError(f"cannot create bag {self.path}: {exc}") from exc
        self._open = True

    def close(self) -> None:
        """Finish the bag (writes its metadata)."""
        if self._open:
            self._writer.close()
            self._open = False

    def write(self, topic: str, msg: Any, log_time_ns: int) -> None:
        """Serialize ``msg`` (a rosbags message) to CDR and write it on ``topic`` at ``log_time_ns``."""
        msgtype = msg.__msgtype__
        self._writer.write(self.connection(topic, msgtype), int(log_time_ns), self._serialize(msg, msgtype))

    def connection(self, topic: str, msgtype: str) -> Any:
        """The connection of ``topic`` (added on first use) to hand to :meth:`write_raw`.

        Raises:
            BagError: ``topic`` already carries another type.
        """
        connection = self._connections.get(topic)
        if connection is None:
            connection = self._writer.add_connection(topic, msgtype, typestore=self._typestore)
            self._connections[topic] = connection
        elif connection.msgtype != msgtype:
            raise BagError(f"topic {topic} already carries {connection.msgtype}, not {msgtype}")
        return connection

    def write_raw(self, connection: Any, data: bytes | memoryview, log_time_ns: int) -> None:
        """Write one message already serialized to CDR (``io.cdr_encode``) on a :meth:`connection`."""
        self._writer.write(connection, log_time_ns, data)

    def write_raw_many(
        self, connections: Sequence[Any], log_times_ns: Sequence[int], datas: Sequence[bytes | memoryview]
    ) -> None:
        """Write messages already serialized to CDR, in order, as :meth:`write_raw` of each: the bytes rosbags
        writes, its mcap records made for the whole batch at once (``io.mcap_batch.write_many``).

        Raises:
            ValueError: the sequences differ in length or a connection is not this bag's.
        """
        write_many(self._writer, connections, log_times_ns, datas)

    def _serialize(self, msg: Any, msgtype: str) -> bytes:
        """CDR (little endian) of ``msg``, as ``Typestore.serialize_cdr`` but with the generated functions of
        each type looked up once."""
        funcs = self._serializers.get(msgtype)
        if funcs is None:
            msgdef = self._typestore.get_msgdef(msgtype)
            funcs = self._serializers[msgtype] = (msgdef.getsize_cdr, msgdef.serialize_cdr_le)
        getsize, serialize = funcs
        typestore = self._typestore
        size = 4 + getsize(0, msg, typestore)
        raw = bytearray(size)
        raw[1] = 1  # representation identifier CDR_LE: 00 01, options 00 00
        serialize(memoryview(raw)[4:], 0, msg, typestore)
        return bytes(raw)
