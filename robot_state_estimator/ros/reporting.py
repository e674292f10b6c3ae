"""Warnings throttled per cause: at most one log line per second per stable key.

rclpy's ``throttle_duration_sec`` throttles per call site, and every call of an rclpy logger, throttled or
not, first identifies its caller by walking the stack with ``inspect.getframeinfo`` (which reads the source
files): about 0.2 ms each. On a node that falls behind, a warning per message (lost samples, rejections)
would cost more than the message itself. So the throttle is here, per *cause* (key), on the steady clock:
a suppressed report costs a dictionary look-up and a clock read. Every report is also counted, so diagnostics
can show how many samples each cause rejected.

A line that is printed goes to rcutils' logging (console, ``/rosout``, log file: the same output handlers
as ``RcutilsLogger.log``) through the C call that ``RcutilsLogger.log`` ends with, with the caller's
function, file and line read from its frame. ``RcutilsLogger.log`` itself identifies its caller with
``inspect.getframeinfo`` on each frame up the stack: 0.5-0.8 ms a line, and the first line of a process
whose logger was not used before scans every module of ``sys.modules`` (``inspect.getmodule``; about 60 ms
in the node with its 900 modules), which stalled the node's message loop at the first warning of a stream.
The loggers' levels (``--log-level``, ``rclpy.logging.set_logger_level``) apply as before.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from robot_state_estimator.ros.rclpy_compat import LoggingSeverity, logging_logger_is_enabled_for, logging_rcutils_log


def _log(name: str, severity: LoggingSeverity, message: str) -> None:
    """Log ``message`` on logger ``name`` if it is enabled for ``severity``, as ``RcutilsLogger.log`` does in
    the end, with the caller of the reporter's method (two frames up) as the location."""
    if not logging_logger_is_enabled_for(name, severity):
        return
    frame = sys._getframe(2)
    code = frame.f_code
    logging_rcutils_log(severity, name, message, code.co_name, code.co_filename, frame.f_lineno)


class ThrottledReporter:
    """Log warnings per stable key, at most once per ``period_s`` each, and count them.

    Args:
        logger_name: name of the node's logger (``node.get_logger().name``).
        period_s: minimum interval between two lines of the same key (s, steady clock).
    """

    def __init__(self, logger_name: str, *, period_s: float = 1.0) -> None:
        self._name = logger_name
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
            _log(self._name, LoggingSeverity.WARN, f"[{key}] {message}")

    def error(self, key: str, message: str, *, count: bool = True) -> None:
        """As ``warn`` at error severity."""
        if count:
            self.counts[key] += 1
        if self._due(key):
            _log(self._name, LoggingSeverity.ERROR, f"[{key}] {message}")

    def info(self, key: str, message: str) -> None:
        """Log ``[key] message`` at info severity, throttled, not counted."""
        if self._due(key):
            _log(self._name, LoggingSeverity.INFO, f"[{key}] {message}")
