"""Warnings throttled per cause: at most one log line per second per stable key.

rclpy's ``throttle_duration_sec`` throttles per call site, and every call of an rclpy logger, throttled or
not, first identifies its caller by walking the stack with ``inspect.getframeinfo`` (which reads the source
files): about 0.2 ms each. On a node that falls behind, a warning per message (lost samples, rejections)
would cost more than the message itself. So the throttle is here, per *cause* (key), on the steady clock:
a suppressed report costs a dictionary look-up and a clock read, and the rclpy logger is only called for the
lines that are printed. Every report is also counted, so diagnostics can show how many samples each cause
rejected.
"""

from __future__ import annotations

import time
from collections import Counter

from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.logging import get_logger


class ThrottledReporter:
    """Log warnings per stable key, at most once per ``period_s`` each, and count them.

    Args:
        logger_name: name of the node's logger (``node.get_logger().name``).
        period_s: minimum interval between two lines of the same key (s, steady clock).
    """

    def __init__(self, logger_name: str, *, period_s: float = 1.0) -> None:
        self._logger: RcutilsLogger = get_logger(logger_name)
        self._period_ns = int(float(period_s) * 1e9)
        self._next_ns: dict[str, int] = {}  # key -> steady time from which its next line may be printed
        self.counts: Counter[str] = Counter()

    def _due(self, key: str) -> bool:
        """True (and the period restarts) when ``key`` may print a line now."""
        now = time.monotonic_ns()
        if now < self._next_ns.get(key, 0):
            return False
        self._next_ns[key] = now + self._period_ns
        return True

    def warn(self, key: str, message: str, *, count: bool = True) -> None:
        """Count one occurrence of ``key`` and log ``[key] message`` unless logged less than a period ago."""
        if count:
            self.counts[key] += 1
        if self._due(key):
            self._logger.warning(f"[{key}] {message}")

    def error(self, key: str, message: str, *, count: bool = True) -> None:
        """As ``warn`` at error severity."""
        if count:
            self.counts[key] += 1
        if self._due(key):
            self._logger.error(f"[{key}] {message}")

    def info(self, key: str, message: str) -> None:
        """Log ``[key] message`` at info severity, throttled, not counted."""
        if self._due(key):
            self._logger.info(f"[{key}] {message}")
