"""Bulk decoding of raw CDR messages into numpy arrays, for the few fixed-layout input types.

rosbags' deserializer builds one Python object per message and per nested field (about 20-35 us a message
here); the input types of the estimator have a fixed layout except for their strings and float64 sequences, so a
whole topic's messages can be decoded at once: the offsets of each message's fields are found (one pass over the
strings and sequence counts), and the float64 fields are gathered by numpy in one fancy-indexing step per block.

Types decoded here (:data:`BULK_TYPES`): ``sensor_msgs/msg/Imu``, ``sensor_msgs/msg/JointState``,
``geometry_msgs/msg/WrenchStamped``, ``nav_msgs/msg/Odometry``, ``rosgraph_msgs/msg/Clock``. Any other type, or
data that does not decode (:class:`CdrError`), is for rosbags (``Typestore.deserialize_cdr``); the decoder is
tested bit-equal against it (``test/io/test_cdr.py``).

The rules followed (OMG DDS-XTypes 1.3, 7.4.3 "Extended CDR Representation (encoding version 1)", the plain
``CDR_LE`` / ``CDR_BE`` encapsulations ROS 2 writes):

- 4-byte encapsulation header: representation id ``00 01`` (little endian) or ``00 00`` (big endian), then two
  option bytes (ignored). All alignment is relative to the first byte after the header.
- A primitive of size s (int32/uint32: 4, float64: 8) is aligned to s.
- A string: uint32 length counting the terminating NUL, the bytes, the NUL (length >= 1, last byte 0; UTF-8).
- A sequence: uint32 element count, then the elements, each aligned to its size; an empty sequence of float64 is
  not padded to 8 (as rosbags and Fast-CDR write it); strings of a sequence are each aligned to 4.
- A message may end with at most 3 bytes of padding after its last field (rosbags accepts that much); more is
  refused as trailing garbage.

Time stamps stay integers: ``stamp_ns = sec * 1e9 + nanosec`` (int64, ``common.time.sec_nanosec_to_ns_array``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.time import sec_nanosec_to_ns_array

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

IMU = "sensor_msgs/msg/Imu"
JOINT_STATE = "sensor_msgs/msg/JointState"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
ODOMETRY = "nav_msgs/msg/Odometry"
CLOCK = "rosgraph_msgs/msg/Clock"

#: The message types :func:`decode` reads; anything else is rosbags' job.
BULK_TYPES = frozenset((IMU, JOINT_STATE, WRENCH_STAMPED, ODOMETRY, CLOCK))

_HEADER_LE = b"\x00\x01"
_HEADER_BE = b"\x00\x00"
#: trailing bytes accepted after the last field (padding to 4, as rosbags' deserializer accepts)
_MAX_PADDING = 3


class CdrError(ValueError):
    """Raw data that this decoder does not read: not a bulk type, a bad encapsulation header, a length or string
    that does not fit, a missing string terminator, trailing bytes. The message names the type, the message index
    in the batch and what is wrong; the caller falls back to rosbags' deserializer."""


@dataclass(frozen=True)
class Headers:
    """``std_msgs/Header`` of N messages.

    Attributes:
        sec: (N,) int32 ``stamp.sec``.
        nanosec: (N,) uint32 ``stamp.nanosec``.
        stamp_ns: (N,) int64, ns (``sec * 1e9 + nanosec``).
        frame_id: N strings.
    """

    sec: NDArray[np.int32]
    nanosec: NDArray[np.uint32]
    stamp_ns: IntArray
    frame_id: list[str]


@dataclass(frozen=True)
class ImuArrays:
    """N ``sensor_msgs/Imu`` (REP-145 layout; covariances row-major).

    Attributes:
        header: their headers.
        orientation_xyzw: (N, 4) float64 quaternion x y z w.
        orientation_covariance: (N, 9) float64, rad^2.
        angular_velocity: (N, 3) float64, rad/s, ``frame_id``.
        angular_velocity_covariance: (N, 9) float64.
        linear_acceleration: (N, 3) float64, m/s^2, ``frame_id``.
        linear_acceleration_covariance: (N, 9) float64.
    """

    header: Headers
    orientation_xyzw: FloatArray
    orientation_covariance: FloatArray
    angular_velocity: FloatArray
    angular_velocity_covariance: FloatArray
    linear_acceleration: FloatArray
    linear_acceleration_covariance: FloatArray

    def __len__(self) -> int:
        return len(self.header.frame_id)


@dataclass(frozen=True)
class Ragged:
    """N float64 sequences of varied lengths, flat: sequence i is ``values[offsets[i]:offsets[i + 1]]``.

    Attributes:
        values: (sum of lengths,) float64.
        offsets: (N + 1,) int64, ``offsets[0] == 0``.
    """

    values: FloatArray
    offsets: IntArray

    def row(self, i: int) -> FloatArray:
        """Sequence ``i`` (a view into ``values``)."""
        return self.values[self.offsets[i] : self.offsets[i + 1]]

    def matrix(self) -> FloatArray | None:
        """(N, n) when all N sequences have the same length n (a view), else None."""
        lengths = np.diff(self.offsets)
        if lengths.size == 0 or not (lengths == lengths[0]).all():
            return None
        return self.values.reshape(lengths.size, int(lengths[0]))


@dataclass(frozen=True)
class JointStateArrays:
    """N ``sensor_msgs/JointState``.

    Attributes:
        header: their headers.
        name: N tuples of joint names (equal tuples of consecutive messages are the same object).
        position: rad or m, per message (:class:`Ragged`).
        velocity: rad/s or m/s (empty sequences: not reported).
        effort: N m or N (empty sequences: not reported).
    """

    header: Headers
    name: list[tuple[str, ...]]
    position: Ragged
    velocity: Ragged
    effort: Ragged

    def __len__(self) -> int:
        return len(self.name)


@dataclass(frozen=True)
class WrenchArrays:
    """N ``geometry_msgs/WrenchStamped``.

    Attributes:
        header: their headers.
        force: (N, 3) float64, N, in ``frame_id``.
        torque: (N, 3) float64, N m, in ``frame_id``.
    """

    header: Headers
    force: FloatArray
    torque: FloatArray

    def __len__(self) -> int:
        return len(self.header.frame_id)


@dataclass(frozen=True)
class OdometryArrays:
    """N ``nav_msgs/Odometry``: pose in ``header.frame_id``, twist in ``child_frame_id``.

    Attributes:
        header: their headers.
        child_frame_id: N strings.
        position: (N, 3) float64, m.
        orientation_xyzw: (N, 4) float64.
        pose_covariance: (N, 36) float64, row-major 6x6 (x, y, z, rot x, rot y, rot z).
        linear: (N, 3) float64, m/s.
        angular: (N, 3) float64, rad/s.
        twist_covariance: (N, 36) float64.
    """

    header: Headers
    child_frame_id: list[str]
    position: FloatArray
    orientation_xyzw: FloatArray
    pose_covariance: FloatArray
    linear: FloatArray
    angular: FloatArray
    twist_covariance: FloatArray

    def __len__(self) -> int:
        return len(self.child_frame_id)


@dataclass(frozen=True)
class ClockArrays:
    """N ``rosgraph_msgs/Clock``.

    Attributes:
        sec: (N,) int32; nanosec: (N,) uint32; stamp_ns: (N,) int64, ns.
    """

    sec: NDArray[np.int32]
    nanosec: NDArray[np.uint32]
    stamp_ns: IntArray

    def __len__(self) -> int:
        return int(self.stamp_ns.size)


BulkArrays = ImuArrays | JointStateArrays | WrenchArrays | OdometryArrays | ClockArrays


class _Batch:
    """The raw messages of one type joined in one buffer, with each message's data start and end (absolute byte
    offsets; data = after the 4-byte encapsulation header) and the byte order of all of them."""

    def __init__(self, msgtype: str, raws: Sequence[bytes | bytearray | memoryview]) -> None:
        self.msgtype = msgtype
        lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
        self.data = b"".join(raws)
        self.buf = np.frombuffer(self.data, dtype=np.uint8)
        starts = np.zeros(len(raws), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        short = np.flatnonzero(lengths < 4)
        if short.size:
            self.fail(int(short[0]), f"{int(lengths[short[0]])} bytes, shorter than the encapsulation header")
        self.base = starts + 4
        self.end = starts + lengths
        heads = self.buf[starts[:, None] + np.arange(2)] if len(raws) else np.zeros((0, 2), np.uint8)
        bad = np.flatnonzero((heads[:, 0] != 0) | (heads[:, 1] > 1))
        if bad.size:
            i = int(bad[0])
            self.fail(
                i, f"encapsulation header {bytes(heads[i]).hex(' ')} is neither CDR_LE (00 01) nor CDR_BE (00 00)"
            )
        little = heads[:, 1] == 1
        if len(raws) and not (little == little[0]).all():
            self.fail(int(np.flatnonzero(little != little[0])[0]), "mixed CDR_LE and CDR_BE messages in one batch")
        self.order = "<" if not len(raws) or bool(little[0]) else ">"
        self.u32 = struct.Struct(self.order + "I")

    def fail(self, i: int, what: str) -> NoReturn:
        raise CdrError(f"{self.msgtype} message {i}: {what}")

    def check_fits(self, pos: IntArray, size: int | IntArray, what: str) -> None:
        """Refuse messages whose ``size`` bytes at relative ``pos`` run past their end."""
        over = np.flatnonzero(self.base + pos + size > self.end)
        if over.size:
            i = int(over[0])
            self.fail(i, f"{what} at offset {int(pos[i])} runs past the end ({int(self.end[i] - self.base[i])} bytes)")

    def check_end(self, pos: IntArray) -> None:
        """Refuse messages with more than the allowed padding after their last field at relative ``pos``."""
        extra = self.end - self.base - pos
        bad = np.flatnonzero(extra > _MAX_PADDING)
        if bad.size:
            i = int(bad[0])
            self.fail(i, f"{int(extra[i])} trailing bytes after the last field at offset {int(pos[i])}")

    def gather(self, pos: IntArray, nbytes: int) -> NDArray[np.uint8]:
        """(N, nbytes) uint8: the bytes at relative ``pos`` of each message (bounds checked by the caller).

        When the fields are equally spaced in the buffer (messages of one length, the usual case) this is one
        strided copy; otherwise one fancy-indexing gather."""
        at = self.base + pos
        n = at.size
        if n > 1:
            step = np.diff(at)
            if step[0] > 0 and (step == step[0]).all():
                rows = np.lib.stride_tricks.as_strided(
                    self.buf[int(at[0]) :], shape=(n, nbytes), strides=(int(step[0]), 1), writeable=False
                )
                return np.ascontiguousarray(rows)
        gathered: NDArray[np.uint8] = self.buf[at[:, None] + np.arange(nbytes)]
        return gathered

    def u32_at(self, pos: IntArray) -> IntArray:
        return self.gather(pos, 4).view(self.order + "u4")[:, 0].astype(np.int64)

    def f64_block(self, pos: IntArray, count: int) -> FloatArray:
        """(N, count) float64 (bit patterns kept; byte-swapped to native order for CDR_BE)."""
        raw = self.gather(pos, 8 * count).view(self.order + "u8")
        return raw.astype(np.uint64).view(np.float64)

    def string(self, i: int, rel: int) -> tuple[bytes, int]:
        """Message ``i``'s string at relative ``rel`` (aligned to 4): (its bytes without the NUL, next offset)."""
        rel = (rel + 3) & -4
        base, end = int(self.base[i]), int(self.end[i])
        at = base + rel
        if at + 4 > end:
            self.fail(i, f"string length at offset {rel} runs past the end ({end - base} bytes)")
        (length,) = self.u32.unpack_from(self.data, at)
        stop = at + 4 + length
        if length < 1 or stop > end:
            self.fail(i, f"string length {length} at offset {rel} does not fit in {end - base} bytes")
        if self.data[stop - 1] != 0:
            self.fail(i, f"string at offset {rel} lacks its NUL terminator")
        return self.data[at + 4 : stop - 1], rel + 4 + length

    def strings(self, rel: IntArray, cache: dict[bytes, str]) -> tuple[list[str], IntArray]:
        """One string per message at relative offsets ``rel``: (the strings, the offsets after them).

        When every message holds the same bytes there (one frame id for the whole topic, the usual case), the
        checks run on arrays and the string is decoded once; otherwise message by message."""
        n = rel.size
        if n > 1:
            rel = (rel + 3) & -4
            size = self.end - self.base
            if bool((rel + 4 <= size).all()):
                length = self.u32_at(rel)
                if bool((length >= 1).all() and (rel + 4 + length <= size).all()) and (length == length[0]).all():
                    body = self.gather(rel + 4, int(length[0]))
                    if (body == body[0]).all() and body[0, -1] == 0:
                        raw = body[0, :-1].tobytes()
                        text = cache.get(raw)
                        if text is None:
                            text = cache[raw] = self.text(0, raw)
                        return [text] * n, rel + 4 + length
        out: list[str] = []
        after = np.empty_like(rel)
        for i in range(rel.size):
            raw, after[i] = self.string(i, int(rel[i]))
            text = cache.get(raw)
            if text is None:
                text = cache[raw] = self.text(i, raw)
            out.append(text)
        return out, after

    def text(self, i: int, raw: bytes) -> str:
        try:
            return raw.decode()
        except UnicodeDecodeError as exc:
            self.fail(i, f"string {raw[:40]!r} is not UTF-8 ({exc.reason} at byte {exc.start})")

    def headers(self, cache: dict[bytes, str]) -> tuple[Headers, IntArray]:
        """The ``std_msgs/Header`` at relative offset 0 of each message, and the offsets after it."""
        n = self.base.size
        zero = np.zeros(n, dtype=np.int64)
        self.check_fits(zero, 12, "header")
        stamp = self.gather(zero, 8)
        sec = stamp[:, :4].copy().view(self.order + "i4")[:, 0].astype(np.int32)
        nanosec = stamp[:, 4:].copy().view(self.order + "u4")[:, 0].astype(np.uint32)
        frame_id, after = self.strings(zero + 8, cache)
        stamp_ns = sec_nanosec_to_ns_array(sec, nanosec)
        return Headers(sec=sec, nanosec=nanosec, stamp_ns=stamp_ns, frame_id=frame_id), after


def _align8(rel: IntArray) -> IntArray:
    return (rel + 7) & -8


def _imu(batch: _Batch) -> ImuArrays:
    header, rel = batch.headers({})
    rel = _align8(rel)
    batch.check_fits(rel, 37 * 8, "Imu body")
    batch.check_end(rel + 37 * 8)
    v = batch.f64_block(rel, 37)
    return ImuArrays(
        header=header,
        orientation_xyzw=v[:, 0:4],
        orientation_covariance=v[:, 4:13],
        angular_velocity=v[:, 13:16],
        angular_velocity_covariance=v[:, 16:25],
        linear_acceleration=v[:, 25:28],
        linear_acceleration_covariance=v[:, 28:37],
    )


def _wrench(batch: _Batch) -> WrenchArrays:
    header, rel = batch.headers({})
    rel = _align8(rel)
    batch.check_fits(rel, 6 * 8, "Wrench")
    batch.check_end(rel + 6 * 8)
    v = batch.f64_block(rel, 6)
    return WrenchArrays(header=header, force=v[:, 0:3], torque=v[:, 3:6])


def _odometry(batch: _Batch) -> OdometryArrays:
    cache: dict[bytes, str] = {}
    header, rel = batch.headers(cache)
    child, rel = batch.strings(rel, cache)
    rel = _align8(rel)
    batch.check_fits(rel, 85 * 8, "Odometry pose and twist")
    batch.check_end(rel + 85 * 8)
    v = batch.f64_block(rel, 85)
    return OdometryArrays(
        header=header,
        child_frame_id=child,
        position=v[:, 0:3],
        orientation_xyzw=v[:, 3:7],
        pose_covariance=v[:, 7:43],
        linear=v[:, 43:46],
        angular=v[:, 46:49],
        twist_covariance=v[:, 49:85],
    )


def _clock(batch: _Batch) -> ClockArrays:
    zero = np.zeros(batch.base.size, dtype=np.int64)
    batch.check_fits(zero, 8, "Clock")
    batch.check_end(zero + 8)
    stamp = batch.gather(zero, 8)
    sec = stamp[:, :4].copy().view(batch.order + "i4")[:, 0].astype(np.int32)
    nanosec = stamp[:, 4:].copy().view(batch.order + "u4")[:, 0].astype(np.uint32)
    return ClockArrays(sec=sec, nanosec=nanosec, stamp_ns=sec_nanosec_to_ns_array(sec, nanosec))


def _joint_state(batch: _Batch) -> JointStateArrays:
    header, after_header = batch.headers({})
    n = batch.base.size
    names: list[tuple[str, ...]] = []
    # per message and per sequence: relative offset of the first float64 and the count
    seq_pos = np.zeros((3, n), dtype=np.int64)
    seq_len = np.zeros((3, n), dtype=np.int64)
    data, u32 = batch.data, batch.u32
    last_block = b""
    last_names: tuple[str, ...] = ()
    text_cache: dict[bytes, str] = {}
    count_at = [0, 0, 0]  # message 0's relative offsets of the three sequence counts
    names_span = (0, 0)  # message 0's name block (count + strings), relative
    for i in range(n):
        if i == 1 and _same_layout_as_first(batch, after_header, names_span, count_at):
            names = [names[0]] * n
            seq_pos[:, 1:] = seq_pos[:, :1]
            seq_len[:, 1:] = seq_len[:, :1]
            break
        base, end = int(batch.base[i]), int(batch.end[i])
        rel = (int(after_header[i]) + 3) & -4
        names_span = (rel, rel) if i == 0 else names_span
        # the name block (count + strings) of the previous message, byte-equal at the same alignment (rel is a
        # multiple of 4 and strings align to 4): the same names, no parsing
        if last_block and data[base + rel : base + rel + len(last_block)] == last_block:
            names.append(last_names)
            rel += len(last_block)
        else:
            start = rel
            if base + rel + 4 > end:
                batch.fail(i, f"name count at offset {rel} runs past the end ({end - base} bytes)")
            (count,) = u32.unpack_from(data, base + rel)
            if rel + 4 + 5 * count > end - base:
                batch.fail(i, f"{count} names at offset {rel} do not fit in {end - base} bytes")
            rel += 4
            row = []
            for _ in range(count):
                raw, rel = batch.string(i, rel)
                text = text_cache.get(raw)
                if text is None:
                    text = text_cache[raw] = batch.text(i, raw)
                row.append(text)
            last_block, last_names = data[base + start : base + rel], tuple(row)
            names.append(last_names)
        if i == 0:
            names_span = (names_span[0], rel)
        for k in range(3):
            rel = (rel + 3) & -4
            if base + rel + 4 > end:
                batch.fail(i, f"{_SEQUENCES[k]} count at offset {rel} runs past the end ({end - base} bytes)")
            (count,) = u32.unpack_from(data, base + rel)
            count_at[k] = rel
            rel += 4
            if count:
                rel = (rel + 7) & -8
                if base + rel + 8 * count > end:
                    batch.fail(i, f"{count} {_SEQUENCES[k]} values at offset {rel} do not fit in {end - base} bytes")
            seq_pos[k, i] = rel
            seq_len[k, i] = count
            rel += 8 * count
        if end - base - rel > _MAX_PADDING:
            batch.fail(i, f"{end - base - rel} trailing bytes after the last field at offset {rel}")
    position, velocity, effort = (_ragged(batch, seq_pos[k], seq_len[k]) for k in range(3))
    return JointStateArrays(header=header, name=names, position=position, velocity=velocity, effort=effort)


_SEQUENCES = ("position", "velocity", "effort")


def _same_layout_as_first(
    batch: _Batch, after_header: IntArray, names_span: tuple[int, int], count_at: list[int]
) -> bool:
    """Whether every JointState of the batch has message 0's layout (checked on arrays): the same length, header
    end, name block bytes and sequence counts; then message 0's parse (names, offsets, counts, trailing bytes)
    holds for all of them (the padding bytes are not read, as rosbags does not read them)."""
    size = batch.end - batch.base
    if not ((size == size[0]).all() and (after_header == after_header[0]).all()):
        return False
    n = size.size
    start, stop = names_span
    spans = [(start, stop - start), *((at, 4) for at in count_at)]
    for at, nbytes in spans:
        rows = batch.gather(np.full(n, at, dtype=np.int64), nbytes)
        if not (rows == rows[0]).all():
            return False
    return True


def _ragged(batch: _Batch, rel: IntArray, lengths: IntArray) -> Ragged:
    """The float64 sequences at relative offsets ``rel`` with ``lengths`` elements (bounds already checked)."""
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    if lengths.size and (lengths == lengths[0]).all():  # the usual case: one gather of (N, 8 n) bytes
        values = batch.f64_block(rel, int(lengths[0])).reshape(total)
        return Ragged(values=values, offsets=offsets)
    first = np.repeat(batch.base + rel - offsets[:-1] * 8, lengths)  # absolute offset of element 0, minus 8 j
    at = first + np.arange(total, dtype=np.int64) * 8
    raw = batch.buf[at[:, None] + np.arange(8)].view(batch.order + "u8")[:, 0]
    return Ragged(values=raw.astype(np.uint64).view(np.float64), offsets=offsets)


_DECODERS: dict[str, Callable[[_Batch], BulkArrays]] = {
    IMU: _imu,
    JOINT_STATE: _joint_state,
    WRENCH_STAMPED: _wrench,
    ODOMETRY: _odometry,
    CLOCK: _clock,
}


def decode(msgtype: str, raws: Sequence[bytes | bytearray | memoryview]) -> BulkArrays:
    """Decode the raw CDR messages ``raws`` (each with its 4-byte encapsulation header, as rosbags reads them
    from a bag) of type ``msgtype`` into arrays, all at once.

    Args:
        msgtype: one of :data:`BULK_TYPES` (ROS 2 names, e.g. ``sensor_msgs/msg/Imu``).
        raws: N serialized messages, all CDR_LE or all CDR_BE.

    Returns:
        :class:`ImuArrays`, :class:`JointStateArrays`, :class:`WrenchArrays`, :class:`OdometryArrays` or
        :class:`ClockArrays` of length N; float64 bit patterns as serialized (NaN payloads included).

    Raises:
        CdrError: ``msgtype`` is not a bulk type, or a message does not decode (header, lengths, strings,
            trailing bytes, mixed byte orders): the message names the first such message and what is wrong;
            decode that topic with rosbags instead.
    """
    decoder = _DECODERS.get(msgtype)
    if decoder is None:
        raise CdrError(f"{msgtype} is not decoded in bulk (types: {', '.join(sorted(BULK_TYPES))})")
    return decoder(_Batch(msgtype, raws))
