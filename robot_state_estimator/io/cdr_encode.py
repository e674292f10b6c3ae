"""Encoding of output messages to raw CDR, one message or a whole batch at once, without per-message objects.

The counterpart of :mod:`robot_state_estimator.io.cdr` (the decoder) for the messages the estimator outputs. rosbags'
serializer walks one message object per message and per nested field (about 10-20 us a message here, plus the cost
of filling the object); the outputs have a fixed layout once their frame names are fixed, so each is a constant
byte template in which only the stamp and one block of float64 change:

- :class:`FixedLayout`: ``nav_msgs/msg/Odometry`` (:func:`odometry_layout`), ``tf2_msgs/msg/TFMessage`` holding one
  ``geometry_msgs/TransformStamped`` (:func:`tf_message_layout`), ``geometry_msgs/msg/WrenchStamped``
  (:func:`wrench_stamped_layout`). :meth:`FixedLayout.encode` makes one message (the node's path),
  :meth:`FixedLayout.encode_many` N at once with numpy (replay's output bag): a structured view of an (N, size)
  byte array, the template copied into every row, stamps and floats written in one assignment each.
- :class:`DiagnosticArrayEncoder` (and :func:`encode_diagnostic_array` for one message):
  ``diagnostic_msgs/msg/DiagnosticArray`` (the contact states), whose strings vary in length from message to
  message, joined from the kept bytes of the pieces that repeat.

Anything else is serialized by rosbags (``Typestore.serialize_cdr``), which stays the reference: the encoders are
tested bit-equal to it (``test/io/test_cdr_encode.py``: hypothesis messages, every message of replay's output bag).

The rules are those the decoder reads (OMG DDS-XTypes 1.3, 7.4.3, XCDR1, the ``CDR_LE`` encapsulation ROS 2 writes):
a 4-byte header ``00 01 00 00``; alignment relative to the first byte after it; int32/uint32 aligned to 4, float64
to 8, a byte to 1; a string as uint32 length counting the NUL, the UTF-8 bytes, the NUL; a sequence as uint32 count
then its elements; fixed arrays (covariances) as their elements only; nothing after the last field.

Time: ``stamp_ns`` (int) is split as ``common.time.ns_to_sec_nanosec`` does (floor division, ``0 <= nanosec <
1e9``); a stamp whose seconds do not fit int32 raises ``ValueError``, as rosbags' serializer refuses them.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from robot_state_estimator.common.time import NS_PER_S

ODOMETRY = "nav_msgs/msg/Odometry"
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
DIAGNOSTIC_ARRAY = "diagnostic_msgs/msg/DiagnosticArray"

#: the encapsulation header of every message: CDR_LE, options 0
HEADER = b"\x00\x01\x00\x00"
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_SEC_NSEC = struct.Struct("<iI")
_U32 = struct.Struct("<I")


class _Template:
    """Builds a message's bytes field by field (offsets relative to the byte after :data:`HEADER`)."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def align(self, n: int) -> None:
        self.buf += bytes(-len(self.buf) % n)

    def u32(self, value: int) -> int:
        self.align(4)
        at = len(self.buf)
        self.buf += _U32.pack(value)
        return at

    def stamp(self) -> int:
        """Room for ``builtin_interfaces/Time`` (int32 sec, uint32 nanosec); returns its offset."""
        self.align(4)
        at = len(self.buf)
        self.buf += bytes(8)
        return at

    def string(self, text: str) -> None:
        data = text.encode("utf-8")
        self.u32(len(data) + 1)
        self.buf += data + b"\x00"

    def floats(self, count: int) -> int:
        """Room for ``count`` float64 in a row; returns the offset of the first."""
        self.align(8)
        at = len(self.buf)
        self.buf += bytes(8 * count)
        return at


@dataclass(frozen=True)
class FixedLayout:
    """A message type whose CDR bytes, for given strings, are a constant template with one stamp and one block of
    float64 in it.

    Attributes:
        msgtype: ROS 2 type name, e.g. ``nav_msgs/msg/Odometry``.
        template: the whole message (header included) with zeros for the stamp and the floats.
        stamp_offset: byte offset (in ``template``) of ``sec`` (int32), followed by ``nanosec`` (uint32).
        float_offset: byte offset (in ``template``) of the first float64.
        n_floats: how many float64 follow it, in the message's field order (the constructor's docstring says which).
    """

    msgtype: str
    template: bytes
    stamp_offset: int
    float_offset: int
    n_floats: int

    @property
    def size(self) -> int:
        """Bytes of one message (header included)."""
        return len(self.template)

    def _dtype(self) -> np.dtype[Any]:
        return np.dtype(
            {
                "names": ["sec", "nanosec", "values"],
                "formats": ["<i4", "<u4", ("<f8", (self.n_floats,))],
                "offsets": [self.stamp_offset, self.stamp_offset + 4, self.float_offset],
                "itemsize": self.size,
            }
        )

    def encode(self, stamp_ns: int, values: ArrayLike) -> bytes:
        """One message.

        Args:
            stamp_ns: ns, the header stamp.
            values: (``n_floats``,) float64 in the message's field order.

        Raises:
            ValueError: ``values`` has another size, or the stamp's seconds do not fit int32.
        """
        sec, nanosec = divmod(int(stamp_ns), NS_PER_S)
        if not _INT32_MIN <= sec <= _INT32_MAX:
            raise ValueError(f"stamp {stamp_ns} ns: {sec} s does not fit the int32 seconds of builtin_interfaces/Time")
        floats = np.ascontiguousarray(values, dtype="<f8")
        if floats.shape != (self.n_floats,):
            raise ValueError(f"{self.msgtype}: {floats.size} values, expected {self.n_floats}")
        buf = bytearray(self.template)
        _SEC_NSEC.pack_into(buf, self.stamp_offset, sec, nanosec)
        buf[self.float_offset : self.float_offset + 8 * self.n_floats] = floats.tobytes()
        return bytes(buf)

    def encode_many(self, stamp_ns: ArrayLike, values: ArrayLike) -> NDArray[np.uint8]:
        """N messages at once.

        Args:
            stamp_ns: (N,) int64, ns, the header stamps.
            values: (N, ``n_floats``) float64 in the message's field order.

        Returns:
            (N, ``size``) uint8: row i is message i's bytes (``bytes(out[i])`` or a memoryview of the row).

        Raises:
            ValueError: shapes that do not match, or a stamp whose seconds do not fit int32.
        """
        stamps = np.asarray(stamp_ns, dtype=np.int64).reshape(-1)
        floats = np.asarray(values, dtype=np.float64)
        n = stamps.size
        if floats.shape != (n, self.n_floats):
            raise ValueError(f"{self.msgtype}: values of shape {floats.shape}, expected ({n}, {self.n_floats})")
        sec, nanosec = np.divmod(stamps, NS_PER_S)
        if n and (sec.min() < _INT32_MIN or sec.max() > _INT32_MAX):
            raise ValueError(
                f"{self.msgtype}: a stamp's seconds do not fit the int32 seconds of builtin_interfaces/Time"
            )
        out = np.empty((n, self.size), dtype=np.uint8)
        out[:] = np.frombuffer(self.template, dtype=np.uint8)
        rows = out.view(self._dtype()).reshape(n)
        rows["sec"] = sec
        rows["nanosec"] = nanosec
        rows["values"] = floats
        return out


def _layout(msgtype: str, build: Any) -> FixedLayout:
    t = _Template()
    stamp, floats, n = build(t)
    return FixedLayout(msgtype, HEADER + bytes(t.buf), 4 + stamp, 4 + floats, n)


def odometry_layout(frame_id: str, child_frame_id: str) -> FixedLayout:
    """``nav_msgs/msg/Odometry`` with ``header.frame_id`` and ``child_frame_id``; its 85 floats: position (3),
    orientation x y z w (4), pose covariance (36, row-major), linear velocity (3), angular velocity (3), twist
    covariance (36)."""

    def build(t: _Template) -> tuple[int, int, int]:
        stamp = t.stamp()
        t.string(frame_id)
        t.string(child_frame_id)
        return stamp, t.floats(85), 85

    return _layout(ODOMETRY, build)


def tf_message_layout(frame_id: str, child_frame_id: str) -> FixedLayout:
    """``tf2_msgs/msg/TFMessage`` holding one ``geometry_msgs/TransformStamped`` of ``child_frame_id`` in
    ``frame_id``; its 7 floats: translation (3), rotation x y z w (4)."""

    def build(t: _Template) -> tuple[int, int, int]:
        t.u32(1)  # transforms: a sequence of one
        stamp = t.stamp()
        t.string(frame_id)
        t.string(child_frame_id)
        return stamp, t.floats(7), 7

    return _layout(TF_MESSAGE, build)


def wrench_stamped_layout(frame_id: str) -> FixedLayout:
    """``geometry_msgs/msg/WrenchStamped`` in ``frame_id``; its 6 floats: force (3, N), torque (3, N m)."""

    def build(t: _Template) -> tuple[int, int, int]:
        stamp = t.stamp()
        t.string(frame_id)
        return stamp, t.floats(6), 6

    return _layout(WRENCH_STAMPED, build)


# ------------------------------------------------------------------------------------------ DiagnosticArray
#: one ``diagnostic_msgs/DiagnosticStatus``: (level, name, message, hardware_id, ((key, value), ...))
DiagnosticStatusFields = tuple[int, str, str, str, Sequence[tuple[str, str]]]

_PAD = (b"", b"\x00", b"\x00\x00", b"\x00\x00\x00")
#: entries each cache of a DiagnosticArrayEncoder keeps at most (values that change every message are not kept after)
CACHE_SIZE = 4096


def _cdr_string(text: str) -> bytes:
    """uint32 length counting the NUL, the UTF-8 bytes, the NUL."""
    raw = text.encode("utf-8")
    return _U32.pack(len(raw) + 1) + raw + b"\x00"


class DiagnosticArrayEncoder:
    """``diagnostic_msgs/msg/DiagnosticArray`` messages (header, then the statuses) from plain values.

    Statuses repeat their names and most values from message to message (the contact states: only the normal
    force's text changes), so the encoder keeps the bytes of each status's head (level, name, message, hardware id,
    value count) and of each key/value pair, per offset mod 4 (their padding depends on it), up to
    :data:`CACHE_SIZE` of each: a message is then a few joins (about 3 us for four statuses, rosbags' serializer
    18). Keep one encoder per stream of messages.
    """

    def __init__(self) -> None:
        self._heads: dict[tuple[Any, ...], tuple[bytes, int]] = {}
        self._pairs: dict[tuple[int, str, str], tuple[bytes, int]] = {}

    def _head(self, mod: int, level: int, name: str, message: str, hardware_id: str, n: int) -> tuple[bytes, int]:
        key = (mod, level, name, message, hardware_id, n)
        piece = self._heads.get(key)
        if piece is None:
            if not 0 <= level <= 255:
                raise ValueError(f"diagnostic level {level} is not a byte")
            out = bytearray(mod)  # stands for the bytes before: only their length mod 4 matters
            out.append(level)  # a byte: no alignment
            for text in (name, message, hardware_id):
                out += _PAD[-len(out) & 3]
                out += _cdr_string(text)
            out += _PAD[-len(out) & 3]
            out += _U32.pack(n)
            piece = (bytes(out[mod:]), len(out) & 3)
            if len(self._heads) < CACHE_SIZE:
                self._heads[key] = piece
        return piece

    def _pair(self, mod: int, key: str, value: str) -> tuple[bytes, int]:
        k = (mod, key, value)
        piece = self._pairs.get(k)
        if piece is None:
            out = bytearray(mod)
            out += _PAD[-len(out) & 3]
            out += _cdr_string(key)
            out += _PAD[-len(out) & 3]
            out += _cdr_string(value)
            piece = (bytes(out[mod:]), len(out) & 3)
            if len(self._pairs) < CACHE_SIZE:
                self._pairs[k] = piece
        return piece

    def encode(self, stamp_ns: int, frame_id: str, statuses: Sequence[DiagnosticStatusFields]) -> bytes:
        """One message.

        Args:
            stamp_ns: ns, the header stamp.
            frame_id: the header's frame.
            statuses: per status ``(level, name, message, hardware_id, values)``, ``level`` a byte (0 OK, 1 WARN,
                2 ERROR, 3 STALE), ``values`` its ``(key, value)`` pairs.

        Raises:
            ValueError: a level outside 0..255, or the stamp's seconds do not fit int32.
        """
        sec, nanosec = divmod(int(stamp_ns), NS_PER_S)
        if not _INT32_MIN <= sec <= _INT32_MAX:
            raise ValueError(f"stamp {stamp_ns} ns: {sec} s does not fit the int32 seconds of builtin_interfaces/Time")
        out = bytearray(HEADER)
        out += _SEC_NSEC.pack(sec, nanosec)
        out += _cdr_string(frame_id)
        out += _PAD[-len(out) & 3]
        out += _U32.pack(len(statuses))
        mod = 0  # after the count: aligned (the 4-byte header keeps offsets and lengths congruent mod 4)
        head, pair = self._head, self._pair
        for level, name, message, hardware_id, values in statuses:
            piece, mod = head(mod, level, name, message, hardware_id, len(values))
            out += piece
            for key, value in values:
                piece, mod = pair(mod, key, value)
                out += piece
        return bytes(out)


def encode_diagnostic_array(stamp_ns: int, frame_id: str, statuses: Sequence[DiagnosticStatusFields]) -> bytes:
    """One ``diagnostic_msgs/msg/DiagnosticArray`` (:meth:`DiagnosticArrayEncoder.encode` with nothing kept: for a
    message now and then; a stream of them keeps a :class:`DiagnosticArrayEncoder`).

    Raises:
        ValueError: a level outside 0..255, or the stamp's seconds do not fit int32.
    """
    return DiagnosticArrayEncoder().encode(stamp_ns, frame_id, statuses)


__all__ = [
    "CACHE_SIZE",
    "DIAGNOSTIC_ARRAY",
    "HEADER",
    "ODOMETRY",
    "TF_MESSAGE",
    "WRENCH_STAMPED",
    "DiagnosticArrayEncoder",
    "DiagnosticStatusFields",
    "FixedLayout",
    "encode_diagnostic_array",
    "odometry_layout",
    "tf_message_layout",
    "wrench_stamped_layout",
]
