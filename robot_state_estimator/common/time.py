"""The one representation of time in the core: integer nanoseconds (``stamp_ns``).

ROS stamps (``builtin_interfaces/Time``: ``sec`` int32, ``nanosec`` uint32 in [0, 1e9)) are converted
here and nowhere else. Both rclpy and rosbags messages have the same two fields, so these helpers take
either.
"""

from __future__ import annotations

from typing import Protocol

NS_PER_S = 1_000_000_000


class StampLike(Protocol):
    sec: int
    nanosec: int


def stamp_to_ns(stamp: StampLike) -> int:
    """``builtin_interfaces/Time`` -> integer nanoseconds (keeps the seconds field and the sign)."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def ns_to_sec_nanosec(stamp_ns: int) -> tuple[int, int]:
    """Integer nanoseconds -> ``(sec, nanosec)`` with ``0 <= nanosec < 1e9`` (floor division for negatives)."""
    sec, nanosec = divmod(int(stamp_ns), NS_PER_S)
    return sec, nanosec


def ns_to_s(stamp_ns: int) -> float:
    """Integer nanoseconds -> float seconds (for arithmetic on differences only; loses ns at 1e9 s)."""
    return stamp_ns / NS_PER_S


def s_to_ns(t_s: float) -> int:
    """Float seconds -> integer nanoseconds, rounded to the nearest nanosecond."""
    return round(t_s * NS_PER_S)
