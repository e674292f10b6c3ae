"""Warnings throttled per cause: at most one log line per second per stable key.

rclpy's ``throttle_duration_sec`` throttles per call site of one logger object. To throttle per *cause*
(key) instead, each key gets its own logger object (same logger name, so the output looks the same) and
logs from a single call site with ``throttle_duration_sec``. Every report is also counted, so diagnostics
can show how many samples each cause rejected.
"""

from __future__ import annotations

from collections import Counter

from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.logging import get_logger


class ThrottledReporter:
    """Log warnings per stable key, at most once per ``period_s`` each, and count them.

    Args:
        logger_name: name of the node's logger (``node.get_logger().name``).
        period_s: minimum interval between two lines of the same key (s, system clock).
    """

    def __init__(self, logger_name: str, *, period_s: float = 1.0) -> None:
        self._logger_name = logger_name
        self._period_s = float(period_s)
        self._loggers: dict[str, RcutilsLogger] = {}
        self.counts: Counter[str] = Counter()

    def _logger(self, key: str) -> RcutilsLogger:
        logger = self._loggers.get(key)
        if logger is None:
            logger = self._loggers[key] = get_logger(self._logger_name)
        return logger

    def warn(self, key: str, message: str, *, count: bool = True) -> None:
        """Count one occurrence of ``key`` and log ``[key] message`` unless logged less than a period ago."""
        if count:
            self.counts[key] += 1
        self._logger(key).warning(f"[{key}] {message}", throttle_duration_sec=self._period_s)

    def error(self, key: str, message: str, *, count: bool = True) -> None:
        """As ``warn`` at error severity."""
        if count:
            self.counts[key] += 1
        self._logger(key).error(f"[{key}] {message}", throttle_duration_sec=self._period_s)

    def info(self, key: str, message: str) -> None:
        """Log ``[key] message`` at info severity, throttled, not counted."""
        self._logger(key).info(f"[{key}] {message}", throttle_duration_sec=self._period_s)
