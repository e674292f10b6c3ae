"""Reading and writing bags with ``rosbags`` (rosbag2 sqlite3 / mcap, and ROS 1 bags for reading).

- :func:`default_typestore`: the ROS 2 Kilted message definitions (tf2_msgs, nav_msgs, ... included).
- :func:`read_messages`: deserialized messages of chosen topics, in the bag's log-time order.
- :func:`read_messages_in_stamp_order`: the same, ordered by ``header.stamp`` (what the estimator needs).
- :class:`BagWriter`: an mcap (default) or sqlite3 rosbag2 writer that adds connections as topics appear.

Time is integer nanoseconds everywhere (``stamp_ns``, ``log_time_ns``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from robot_state_estimator.common.time import stamp_to_ns
from robot_state_estimator.io.messages import MessageTypes, rosbags_types


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


def _bag_paths(path: str | Path) -> list[Path]:
    path = Path(path)
    if not path.exists():
        raise BagError(f"bag not found: {path}")
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
        raise BagError(f"cannot read bag {path}: {exc}") from exc


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
        raise BagError(f"cannot read bag {path}: {exc}") from exc


def read_messages_in_stamp_order(path: str | Path, topics: Sequence[str] | None = None) -> list[BagMessage]:
    """All messages of ``topics`` sorted by ``header.stamp`` (ties: by position of the topic in ``topics``,
    then by log time), so an IMU sample and a joint sample with the same stamp are processed IMU first when
    ``topics`` lists the IMU topic first."""
    order = {t: i for i, t in enumerate(topics or ())}
    messages = list(read_messages(path, topics))
    messages.sort(key=lambda m: (m.stamp_ns, order.get(m.topic, len(order)), m.log_time_ns))
    return messages


class BagWriter:
    """Write messages to a new rosbag2 bag (a directory), adding one connection per topic on first use.

    Example::

        with BagWriter(out_dir) as bag:
            bag.write("/imu/data", imu_msg, stamp_ns)

    Args:
        path: the bag directory to create (must not exist).
        storage: ``"mcap"`` (default) or ``"sqlite3"``.

    Raises:
        BagError: the path exists, or the storage is unknown.
    """

    def __init__(self, path: str | Path, *, storage: str = "mcap") -> None:
        self.path = Path(path)
        if self.path.exists():
            raise BagError(f"output bag already exists: {self.path}")
        plugins = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
        if storage not in plugins:
            raise BagError(f"unknown bag storage {storage!r}; use one of {sorted(plugins)}")
        self._typestore = default_typestore()
        self._writer = Writer(self.path, version=9, storage_plugin=plugins[storage])
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
        """Create the bag on disk."""
        self._writer.open()
        self._open = True

    def close(self) -> None:
        """Finish the bag (writes its metadata)."""
        if self._open:
            self._writer.close()
            self._open = False

    def write(self, topic: str, msg: Any, log_time_ns: int) -> None:
        """Serialize ``msg`` (a rosbags message) to CDR and write it on ``topic`` at ``log_time_ns``."""
        msgtype = msg.__msgtype__
        connection = self._connections.get(topic)
        if connection is None:
            connection = self._writer.add_connection(topic, msgtype, typestore=self._typestore)
            self._connections[topic] = connection
        elif connection.msgtype != msgtype:
            raise BagError(f"topic {topic} already carries {connection.msgtype}, not {msgtype}")
        self._writer.write(connection, int(log_time_ns), self._serialize(msg, msgtype))

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
