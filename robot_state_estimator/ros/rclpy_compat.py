"""The private rclpy names this package uses, in one place.

rclpy's public API has no way to do what these do cheaply (a wait set the node's loop keeps across rounds,
log lines to rcutils without rclpy's stack walk, the level of the ``rcl`` logger while parsing the command
line, the exception types ``rclpy.init`` raises for a bad command line). They come from rclpy's C extension
(``rclpy.impl.implementation_singleton.rclpy_implementation``, the pybind11 module every rclpy class wraps) and
may change between rclpy releases: when they do, this is the one module to adapt. Checked by
``test/test_architecture.py`` (no other module imports ``rclpy.impl`` or rclpy's ``_rclpy_pybind11``).
"""

from __future__ import annotations

from typing import Any

from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

#: rcl's error (a failed publish on a context that is shutting down; ``rclpy.init`` refusing a ``-p`` rule).
RCLError: type[Exception] = _rclpy.RCLError
#: ``rclpy.init``'s error for an unknown flag after ``--ros-args``.
UnknownROSArgsError: type[Exception] = _rclpy.UnknownROSArgsError
#: rcl's wait set, ``WaitSet(n_subscriptions, n_guard_conditions, n_timers, n_clients, n_services, n_events,
#: context)`` (what ``rclpy.executors`` builds anew every round).
WaitSet: Any = _rclpy.WaitSet
#: ``(logger_name, severity) -> bool``: whether rcutils would print a line of that severity.
logging_logger_is_enabled_for: Any = _rclpy.rclpy_logging_logger_is_enabled_for
#: ``(severity, logger_name, message, function_name, file_name, line_number)``: one line to rcutils (console,
#: ``/rosout``), without ``RcutilsLogger.log``'s stack walk.
logging_rcutils_log: Any = _rclpy.rclpy_logging_rcutils_log
#: ``(logger_name) -> severity`` and ``(logger_name, severity)``: get and set a logger's level.
logging_get_logger_level: Any = _rclpy.rclpy_logging_get_logger_level
logging_set_logger_level: Any = _rclpy.rclpy_logging_set_logger_level
