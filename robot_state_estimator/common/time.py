"""The one representation of time in the core: integer nanoseconds (``stamp_ns``).

ROS stamps (``builtin_interfaces/Time``: ``sec`` int32, ``nanosec`` uint32 in [0, 1e9)) are converted
here and nowhere else. Both rclpy and rosbags messages have the same two fields, so these helpers take
either; the raw-CDR readers (``io/cdr_samples``: one message, ``io/cdr``: arrays of N) pass the two numbers.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

NS_PER_S = 1_000_000_000


class StampLike(Protocol):
    """``builtin_interfaces/Time`` of either message implementation (read only)."""

    @property
    def sec(self) -> int: ...
    @property
    def nanosec(self) -> int: ...


def stamp_to_ns(stamp: StampLike) -> int:
    """``builtin_interfaces/Time`` -> integer nanoseconds (keeps the seconds field and the sign)."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def sec_nanosec_to_ns(sec: int, nanosec: int) -> int:
    """A stamp's two numbers (``sec``, ``nanosec``, Python ints) -> integer nanoseconds, as :func:`stamp_to_ns`."""
    return sec * NS_PER_S + nanosec


def sec_nanosec_to_ns_array(
    sec: NDArray[np.int32] | NDArray[np.int64], nanosec: NDArray[np.uint32] | NDArray[np.int64]
) -> NDArray[np.int64]:
    """N stamps' ``sec`` (int32) and ``nanosec`` (uint32) arrays -> (N,) int64 nanoseconds, as :func:`stamp_to_ns`
    (computed in int64: ``sec * 1e9`` does not fit in int32)."""
    return sec.astype(np.int64) * NS_PER_S + nanosec.astype(np.int64)


def ns_to_sec_nanosec(stamp_ns: int) -> tuple[int, int]:
    """Integer nanoseconds -> ``(sec, nanosec)`` with ``0 <= nanosec < 1e9`` (floor division for negatives)."""
    sec, nanosec = divmod(int(stamp_ns), NS_PER_S)
    return sec, nanosec


def format_stamp_s(stamp_ns: int) -> str:
    """A stamp in ns as seconds with 9 decimals, exact (``1796020000123456789`` -> ``'1796020000.123456789'``):
    a float formatted with ``%.6g`` keeps only 6 significant digits (1.79602e+09 s for a wall-clock stamp)."""
    sign = "-" if stamp_ns < 0 else ""
    sec, nsec = divmod(abs(int(stamp_ns)), NS_PER_S)
    return f"{sign}{sec}.{nsec:09d}"


def ns_to_s(stamp_ns: int) -> float:
    """Integer nanoseconds -> float seconds (for arithmetic on differences only; loses ns at 1e9 s)."""
    return stamp_ns / NS_PER_S


def s_to_ns(t_s: float) -> int:
    """Float seconds -> integer nanoseconds, rounded to the nearest nanosecond."""
    return round(t_s * NS_PER_S)
