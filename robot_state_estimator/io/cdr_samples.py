"""One raw CDR message straight to a core sample: the node's input path (``ros/inputs.py``).

``io.cdr`` decodes a whole topic of a bag at once; the node receives one message at a time (a ``raw=True``
subscription gives its bytes), where rosbags' deserializer costs 20-35 us a message and builds objects the
estimator does not keep. Here the same CDR rules (``io.cdr``'s docstring: XCDR1, ``CDR_LE``, alignment relative
to the byte after the 4-byte header, strings with their NUL, at most 3 bytes of padding at the end) are applied
to one message with ``struct``, and the values go through the same rules as a deserialized message's
(``io.sample_rules.imu_sample_from_values``, ``check_joint_names``, ``joint_sample_from_arrays``; stamps by
``common.time.sec_nanosec_to_ns``): the sample is the one ``messages.imu_sample_from_msg(typestore.deserialize_cdr(
data, ...))`` makes, field for field (tested on every message of the test bags and on generated ones,
``test/io/test_cdr_samples.py``).

Only the plain case is decoded here: little-endian data of the expected layout whose values the rules accept
(finite values, an orientation that is either not reported or a valid quaternion, joint names without
duplicates). Anything else returns None, and the caller deserializes the message with rosbags and passes it
through ``EstimatorStream.on_*_msg``, which names what is wrong (``imu_not_finite``, ``joint_bad_lengths``,
``imu_bad_message``...): the keys and messages of bad input are unchanged.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from robot_state_estimator.common.samples import ImuSample, JointSample
from robot_state_estimator.common.time import sec_nanosec_to_ns
from robot_state_estimator.io.sample_rules import (
    MessageError,
    check_joint_names,
    imu_sample_from_values,
    joint_sample_from_arrays,
)

_LE = b"\x00\x01"
#: trailing bytes accepted after the last field (as ``io.cdr`` and rosbags' deserializer accept)
_MAX_PADDING = 3
#: ``sec`` (int32), ``nanosec`` (uint32), the length of ``frame_id`` (uint32): the header's numbers, at byte 4
_HEAD = struct.Struct("<iII")
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")
#: an Imu's 37 float64 after its header: orientation (4), its covariance (9), angular velocity (3), its covariance
#: (9), linear acceleration (3), its covariance (9); read: the orientation, its covariance's element 0, the angular
#: velocity and the linear acceleration (11 numbers: the other covariances are not used)
_IMU_VALUES = struct.Struct("<4dd64x3d72x3d")
_IMU_BYTES = 37 * 8
#: little-endian float64, made once (a dtype string is parsed on every call)
_F8 = np.dtype("<f8")
_frombuffer = np.frombuffer
_isfinite = math.isfinite


def _string_end(data: bytes, rel: int) -> int:
    """The relative end of the CDR string whose length is at relative offset ``rel`` (4-aligned), or -1 when it does
    not fit or lacks its NUL."""
    if 4 + rel + 4 > len(data):
        return -1
    length: int
    (length,) = _U32.unpack_from(data, 4 + rel)
    end = rel + 4 + length
    if length < 1 or 4 + end > len(data) or data[3 + end] != 0:
        return -1
    return end


class ImuDecoder:
    """``sensor_msgs/msg/Imu`` bytes -> :class:`ImuSample` (module docstring); the frame names decoded are kept."""

    def __init__(self) -> None:
        self._frames: dict[bytes, str] = {}

    def sample(self, data: bytes) -> ImuSample | None:
        """The sample of ``data``, or None when it is not the plain case (the caller uses rosbags).

        Args:
            data: the message's bytes with the encapsulation header.
        """
        if data[:2] != _LE or len(data) < 16:
            return None
        sec, nanosec, length = _HEAD.unpack_from(data, 4)
        end = 12 + length  # relative end of frame_id
        if length < 1 or 4 + end > len(data) or data[3 + end] != 0:
            return None
        off = 4 + ((end + 7) & ~7)
        if not 0 <= len(data) - off - _IMU_BYTES <= _MAX_PADDING:
            return None
        raw = data[16 : 3 + end]
        frame = self._frames.get(raw)
        if frame is None:
            try:
                frame = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None
            if len(self._frames) < 64:
                self._frames[raw] = frame
        v = _IMU_VALUES.unpack_from(data, off)
        try:
            return imu_sample_from_values(sec_nanosec_to_ns(sec, nanosec), frame, v[5:8], v[8:11], v[:4], v[4])
        except MessageError:
            return None


def _usual_layout(names_end: int, n: int) -> tuple[int, struct.Struct, int, int]:
    """Where the usual JointState whose ``name`` ends at relative offset ``names_end`` has its numbers: ``n``
    positions, velocities and efforts. Each sequence's data ends 8-aligned, so the next count and its padding take
    exactly 8 bytes: the three sequences are one run of ``3 n + 2`` float64 (the two 8-byte gaps are not used).

    Returns:
        (its size in bytes without trailing padding, a struct reading from byte 4 the stamp's ``sec`` and ``nanosec``
        and the three counts, the byte where the run starts, the run's number of float64).
    """
    rel4 = (names_end + 3) & ~3  # the position count
    start = (rel4 + 4 + 7) & ~7  # the positions
    counts = (rel4, start + 8 * n, start + 16 * n + 8)  # relative offsets of the three counts
    fmt, at = "<iI", 8  # the stamp at relative offsets 0..8
    for offset in counts:
        fmt += f"{offset - at}xI"
        at = offset + 4
    return 4 + start + 24 * n + 16, struct.Struct(fmt), 4 + start, 3 * n + 2


class JointStateDecoder:
    """``sensor_msgs/msg/JointState`` bytes -> :class:`JointSample` (module docstring).

    The names of a stream rarely change: the bytes from ``frame_id`` to the end of ``name`` of the last message
    decoded are kept with their decoded names, and a message whose bytes there are the same is read from the
    ``position`` count on.
    """

    def __init__(self) -> None:
        self._prefix = b""  # bytes 12..4 + names_end of the last layout (frame_id and name)
        self._names: tuple[str, ...] = ()
        self._names_end = 0  # relative offset of the end of name
        # the usual message of the kept layout (``_usual_layout``): its size without padding, the struct of its stamp
        # and three counts, where its run of values starts and how many
        self._usual: tuple[int, struct.Struct, int, int] | None = None

    def _layout(self, data: bytes) -> bool:
        """Read ``frame_id`` and ``name`` of ``data`` into the kept layout; False when they do not decode."""
        rel = _string_end(data, 8)  # frame_id (not used, but it must decode as rosbags decodes it)
        if rel < 0:
            return False
        try:
            data[16 : 3 + rel].decode("utf-8")
        except UnicodeDecodeError:
            return False
        rel = (rel + 3) & ~3
        if 4 + rel + 4 > len(data):
            return False
        (count,) = _U32.unpack_from(data, 4 + rel)
        rel += 4
        names = []
        for _ in range(count):
            rel = (rel + 3) & ~3
            end = _string_end(data, rel)
            if end < 0:
                return False
            try:
                names.append(data[4 + rel + 4 : 3 + end].decode("utf-8"))
            except UnicodeDecodeError:
                return False
            rel = end
        names_t = tuple(names)
        try:
            check_joint_names(names_t)
        except MessageError:
            return False
        self._prefix, self._names, self._names_end = data[12 : 4 + rel], names_t, rel
        self._usual = _usual_layout(rel, len(names_t))
        return True

    def sample(self, data: bytes) -> JointSample | None:
        """The sample of ``data``, or None when it is not the plain case (the caller uses rosbags).

        Args:
            data: the message's bytes with the encapsulation header.
        """
        if data[:2] != _LE or len(data) < 16:
            return None
        prefix = self._prefix
        if not prefix or not data.startswith(prefix, 12):
            if not self._layout(data):
                return None
        size = len(data)
        usual = self._usual
        assert usual is not None  # set with the layout
        # the usual message: position, velocity and effort of n joints each (_usual_layout)
        usual_size, head, start, count = usual
        if usual_size <= size <= usual_size + _MAX_PADDING:
            sec, nanosec, n_position, n_velocity, n_effort = head.unpack_from(data, 4)
            n = len(self._names)
            if n_position == n_velocity == n_effort == n:
                run = _frombuffer(data, dtype=_F8, count=count, offset=start).astype(np.float64)
                # every number of the run finite (the two gaps are a count and padding: a tiny number, 0 or, were
                # the padding not zeros, anything: then the rule tests each value)
                finite = _isfinite(run.dot(run))
                try:
                    return joint_sample_from_arrays(
                        sec_nanosec_to_ns(sec, nanosec),
                        self._names,
                        run[:n],
                        run[n + 1 : 2 * n + 1],
                        run[2 * n + 2 :],
                        values_finite=finite,
                    )
                except MessageError:
                    return None
        rel = self._names_end
        sec, nanosec = _STAMP.unpack_from(data, 4)
        arrays = []
        for _ in range(3):  # position, velocity, effort
            rel = (rel + 3) & ~3
            if 4 + rel + 4 > size:
                return None
            (count,) = _U32.unpack_from(data, 4 + rel)
            rel += 4
            if count:
                rel = (rel + 7) & ~7
                if 4 + rel + 8 * count > size:
                    return None
                arrays.append(np.frombuffer(data, dtype="<f8", count=count, offset=4 + rel).astype(np.float64))
                rel += 8 * count
            else:
                arrays.append(np.empty(0, dtype=np.float64))
        if not 0 <= size - 4 - rel <= _MAX_PADDING:
            return None
        try:
            return joint_sample_from_arrays(
                sec_nanosec_to_ns(sec, nanosec), self._names, arrays[0], arrays[1], arrays[2]
            )
        except MessageError:
            return None


__all__ = ["ImuDecoder", "JointStateDecoder"]
