"""Entry point of ``estimator_node``: SIGINT and SIGTERM end the process within a second, at any moment.

Importing the node (rclpy, pinocchio, numba, rosbags) takes 2-7 s on a loaded machine, building it (description,
model, kernels loaded from numba's cache) another second or more, and a first start with a cold numba cache
compiles for a minute. A KeyboardInterrupt raised inside those imports can be swallowed by a library's catch-all,
a Python signal handler runs only between two bytecodes of the main thread (not during a long C call), and once
``rclpy.init`` ran, rclpy's own handler shuts the context down without raising, after which the construction
failed on its next rcl call with a misleading "context is invalid" FATAL line. ``ros2 launch`` then waited 5 s,
sent SIGTERM, waited 10 s more and sent SIGKILL.

So, before anything else, :class:`ExitGuard`:

- installs a handler for SIGINT and SIGTERM that only sets ``stop`` (``node.main`` checks it, with
  ``rclpy.ok()``, after the imports, after the construction and before spinning, and then ends quietly);
- registers a wakeup file descriptor (``signal.set_wakeup_fd``): the interpreter's C-level handler writes the
  signal's number into it at once, whatever the main thread is doing, and rclpy's handler, installed later by
  ``rclpy.init``, calls the previous handler, so this keeps working while the node spins;
- a daemon thread waits on that descriptor: on a signal it sets ``stop``; while the node spins it gives the main
  thread :data:`EXIT_GRACE_S` to end (it ends in milliseconds: rclpy's handler wakes the spin loop, which
  returns, and the node is destroyed); while starting, or when the grace is over, it flushes stdout/stderr and
  ends the process with ``os._exit(0)`` (nothing was published yet; the DDS participant goes with the process);
- once the node is destroyed and rclpy shut down, ``main`` ends the process with ``os._exit`` too (after
  flushing): the interpreter's teardown of numba, llvmlite and pinocchio took another 1-2 s.

Exit code 0 in every case, as an interrupted ``rclpy.spin``.

``estimator_node --help`` prints a short usage instead of starting the node (``ros.node.main`` does the same, for
``python -m robot_state_estimator.ros.node --help``).
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading

from robot_state_estimator.ros.usage import USAGE, wants_help

#: s, after SIGINT/SIGTERM the process ends on its own within this, or is ended (see the module docstring).
EXIT_GRACE_S = 0.5


def _flush_all() -> None:
    """Flush Python's stdout/stderr and the C streams (rcutils logs through C stdio) before an ``os._exit``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # pragma: no cover - a closed stream
            pass
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except Exception:  # pragma: no cover - no libc symbol table
        pass


class ExitGuard:
    """SIGINT/SIGTERM set :attr:`stop`, and end the process within :data:`EXIT_GRACE_S` if it does not end
    itself (call :meth:`done` when it is about to). Install from the main thread, before the heavy imports."""

    def __init__(self, grace_s: float = EXIT_GRACE_S) -> None:
        self.stop = threading.Event()
        #: set by ``node.main`` right before it spins: only then does the guard wait ``grace_s`` for the clean
        #: stop; while starting, the process ends at once (nothing is published yet, and a Python thread cannot
        #: count on the GIL while the main thread is in a long C call: a grace then took 1-1.6 s under load)
        self.spinning = threading.Event()
        self.stop.spinning = self.spinning  # type: ignore[attr-defined]  # node.main finds it on its stop event
        self._done = threading.Event()
        self._grace_s = grace_s
        self._reader, writer = socket.socketpair()
        writer.setblocking(False)
        self._writer = writer  # kept open for the life of the process
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._note)
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name="exit_guard", daemon=True).start()

    def _note(self, signum: int, frame: object) -> None:
        self.stop.set()

    def _watch(self) -> None:
        while True:
            try:
                data = self._reader.recv(64)
            except OSError:
                return
            if not data:
                return
            if not any(b in (signal.SIGINT, signal.SIGTERM) for b in data):
                continue
            self.stop.set()
            if self.spinning.is_set() and self._done.wait(self._grace_s):
                return
            _flush_all()
            os._exit(0)

    def done(self) -> None:
        """The process ends now on its own: the guard does not end it."""
        self._done.set()


def main(args: list[str] | None = None) -> int:
    """``estimator_node``: usage for ``--help``, else :func:`robot_state_estimator.ros.node.main` with the stop
    event of an :class:`ExitGuard` installed first."""
    argv = sys.argv[1:] if args is None else list(args[1:])
    if wants_help(argv):
        print(USAGE, end="")
        return 0
    guard = ExitGuard()
    from robot_state_estimator.ros.node import main as node_main  # 2-7 s: rclpy, pinocchio, numba, rosbags

    try:
        code = node_main(args, stop=guard.stop)
    finally:
        guard.done()
    # The node is destroyed and rclpy is shut down: end the process now. The interpreter's teardown after this
    # (the finalizers of numba, llvmlite, pinocchio and rclpy's modules) took 1-2 s more, a stop slower than a
    # second for ros2 launch and process managers.
    _flush_all()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
