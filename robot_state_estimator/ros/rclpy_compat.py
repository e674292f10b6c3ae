"""The private rclpy names this package uses, in one place.

rclpy's public API has no way to do what these do cheaply (a wait set the node's loop keeps across rounds,
log lines to rcutils without rclpy's stack walk, the level of the ``rcl`` logger while parsing the command
line, the exception types ``rclpy.init`` raises for a bad command line, the parameter overrides a node was given,
the callback generator an executor leaves suspended), and ``LoggingSeverity``, which ``rclpy.logging`` uses without
declaring it public (its module is ``rclpy.impl.logging_severity`` since Jazzy). They come from rclpy's C extension
(``rclpy.impl.implementation_singleton.rclpy_implementation``, the pybind11 module every rclpy class wraps) and
private attributes of rclpy's classes, and may change between rclpy releases: when they do, this is the one
module to adapt. Checked by ``test/test_architecture.py`` (no other module imports ``rclpy.impl`` or rclpy's
``_rclpy_pybind11``, nor reads a private attribute by name).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import rclpy
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

try:  # where rclpy.logging takes it from, without declaring it public (rclpy 7, Jazzy, on)
    from rclpy.impl.logging_severity import LoggingSeverity
except ImportError:  # pragma: no cover - older rclpy defines it in rclpy.logging
    from rclpy.logging import LoggingSeverity  # type: ignore[attr-defined,no-redef,unused-ignore]

if TYPE_CHECKING:
    from rclpy.executors import Executor
    from rclpy.node import Node
    from rclpy.publisher import Publisher

#: rcl's error (a failed publish on a context that is shutting down; ``rclpy.init`` refusing a ``-p`` rule).
RCLError = _rclpy.RCLError
#: ``rclpy.init``'s error for an unknown flag after ``--ros-args``.
UnknownROSArgsError = _rclpy.UnknownROSArgsError
#: rcl's wait set, ``WaitSet(n_subscriptions, n_guard_conditions, n_timers, n_clients, n_services, n_events,
#: context)`` (what ``rclpy.executors`` builds anew every round).
WaitSet = _rclpy.WaitSet
#: ``(logger_name, severity) -> bool``: whether rcutils would print a line of that severity.
logging_logger_is_enabled_for = _rclpy.rclpy_logging_logger_is_enabled_for
#: ``(severity, logger_name, message, function_name, file_name, line_number)``: one line to rcutils (console,
#: ``/rosout``), without ``RcutilsLogger.log``'s stack walk.
logging_rcutils_log = _rclpy.rclpy_logging_rcutils_log
#: ``(logger_name) -> severity`` and ``(logger_name, severity)``: get and set a logger's level.
logging_get_logger_level = _rclpy.rclpy_logging_get_logger_level
logging_set_logger_level = _rclpy.rclpy_logging_set_logger_level


def raw_publish(publisher: Publisher[Any]) -> Callable[[bytes], None]:
    """``publisher.publish`` for CDR bytes without rclpy's wrapper: the ``publish_raw`` of its C handle (the wrapper
    enters the handle and tests the argument's type twice on every call, about 1 us of the 1 kHz odometry's publish).
    The wrapper's entering guards a publish against a destroy from another thread; the node publishes and destroys
    from one thread, and a publish after the destroy raises ``RCLError`` ("publisher pointer is invalid")."""
    publish: Callable[[bytes], None] = publisher.handle.publish_raw
    return publish


def parameter_overrides(node: Node) -> Mapping[str, Any] | None:
    """The parameter overrides given to ``node`` (``-p``, the ``--params-file`` sections that apply to it,
    ``parameter_overrides``), name -> ``Parameter``; None when rclpy keeps them elsewhere (it has no public
    accessor: ``Node._parameter_overrides`` is read when present)."""
    overrides = getattr(node, "_parameter_overrides", None)
    return overrides if isinstance(overrides, Mapping) else None


def close_pending_callbacks(executor: Executor) -> None:
    """Close the callback generator an rclpy executor left suspended (``Executor._cb_iter``; an exception out of a
    callback it ran, e.g. Ctrl-C, leaves it holding every handle of the node entered), so that destroying the node
    destroys its entities then and not later, behind their node's back (a crash at exit)."""
    pending = getattr(executor, "_cb_iter", None)
    if pending is not None:
        pending.close()


def init_quietly(args: list[str] | None, argv: list[str]) -> None:
    """``rclpy.init(args=args)`` with the ``rcl`` logger at FATAL meanwhile: a malformed argument makes rcl log
    ``[ERROR] [rcl]: Failed to parse global arguments`` before raising, which :func:`ros_args_error` reports
    instead. Its level is restored afterwards unless ``--log-level rcl:=...`` (in ``argv``) set one.

    Raises:
        RCLError, UnknownROSArgsError: rcl refused the command line.
    """
    before = logging_get_logger_level("rcl")
    fatal = int(LoggingSeverity.FATAL)
    logging_set_logger_level("rcl", fatal)
    try:
        rclpy.init(args=args)
    finally:
        if logging_get_logger_level("rcl") == fatal and not any("rcl:=" in a for a in argv):
            logging_set_logger_level("rcl", before)


def ros_args_error(exc: BaseException) -> str:
    """The one-line report of ``rclpy.init`` refusing the command line (``RCLError`` for a ``-p``, ``-r`` or
    ``--params-file`` rcl cannot parse, ``UnknownROSArgsError`` for an unknown flag after ``--ros-args``):
    rcl's message without its source locations, and for ``-p`` how values are written."""
    text = re.sub(r",? at /\S+:\d+", "", str(exc)).replace(" Error: error not set", "").strip()
    text = text.removeprefix("failed to initialize rcl: ")
    if isinstance(exc, UnknownROSArgsError):
        return f"unknown ROS arguments {text} (after --ros-args: -p NAME:=VALUE, -r FROM:=TO, --params-file FILE, ...)"
    if "parameter override" in text:
        text += (
            " (-p takes NAME:=VALUE, the value in YAML: an empty string is NAME:='' (in a shell: "
            "-p NAME:=\"''\"), a list [a, b] and a string with spaces are quoted for the shell)"
        )
    return f"invalid --ros-args: {text}"


__all__ = [
    "LoggingSeverity",
    "RCLError",
    "UnknownROSArgsError",
    "WaitSet",
    "close_pending_callbacks",
    "init_quietly",
    "logging_get_logger_level",
    "logging_logger_is_enabled_for",
    "logging_rcutils_log",
    "logging_set_logger_level",
    "parameter_overrides",
    "raw_publish",
    "ros_args_error",
]
