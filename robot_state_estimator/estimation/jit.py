"""Optional compilation of the estimator's hot kernels with numba.

The per-sample maths of the filter (propagation, the stacked leg update, contact forces, ...) is small-matrix
work where numpy's per-call overhead (about 1 us per call) dominates; numba compiles those kernels to machine
code. numba is optional: without it (or with ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT=1`` in the environment) every
caller uses its numpy reference path, which computes the same numbers (tests check the two against each other
to 1e-12) at roughly a tenth of the speed.

Usage::

    from robot_state_estimator.estimation.jit import kernel, use_kernels

    @kernel
    def _propagate_kernel(P, ...): ...          # numba-compatible Python (loops over float64 arrays)

    if use_kernels():
        _propagate_kernel(...)
    else:
        ...numpy reference...

Kernels are compiled lazily at their first call and cached on disk next to the module (numba's ``cache=True``;
numba falls back to a per-user cache directory when the package directory is read-only). Callers that must
not pay the compilation on their first real sample (the node) warm the kernels up at construction.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

try:
    import numba as _numba
except ImportError:  # pragma: no cover - numba is optional
    _numba = None  # type: ignore[assignment]

#: environment variable that forces the numpy reference paths ("1", "true" or "yes")
DISABLE_ENV = "ROBOT_STATE_ESTIMATOR_DISABLE_JIT"

F = TypeVar("F", bound=Callable[..., Any])


def numba_available() -> bool:
    """True when numba is importable."""
    return _numba is not None


def use_kernels() -> bool:
    """True when the compiled kernels are used: numba is importable and not disabled by :data:`DISABLE_ENV`."""
    return _numba is not None and os.environ.get(DISABLE_ENV, "").strip().lower() not in ("1", "true", "yes")


def kernel(fn: F) -> F:
    """Compile ``fn`` with ``numba.njit(cache=True, nogil=True)`` (IEEE arithmetic: no ``fastmath``), or return it
    unchanged when numba is missing (it then runs as plain Python, slowly; callers use their numpy path)."""
    if _numba is None:  # pragma: no cover - numba is optional
        return fn
    return cast(F, _numba.njit(cache=True, nogil=True)(fn))


def entry_point(fn: Any, *args: Any) -> Callable[..., Any]:
    """The compiled function of the kernel ``fn`` for the numba types of ``args`` (compiled now, or loaded from the
    cache, when it is not yet), called without numba's dispatch: that looks up the types of every argument on
    each call (about 0.1 us an array, 0.5 us a tuple of arrays), a few microseconds per call for the per-sample
    kernels with their tens of arguments.

    The caller must pass arguments of exactly those types (dtype, number of dimensions, C-contiguity, tuple
    length): unlike the dispatcher, the entry point does not check them, and an array of another layout is read
    wrongly without an error. Use it only where every argument is made by the caller (its own buffers, arrays
    from ``np.empty`` / ``np.ascontiguousarray`` of a checked shape, pinocchio's fresh arrays of a fixed layout).
    ``fn`` must be a kernel (numba available).
    """
    assert _numba is not None
    sig = tuple(_numba.typeof(a) for a in args)
    overload = fn.overloads.get(sig)
    if overload is None:
        fn.compile(sig)
        overload = fn.overloads[sig]
    return cast(Callable[..., Any], overload.entry_point)


def kernels_need_compiling() -> bool:
    """True when the estimator will compile its numba kernels at construction (a minute, once after an install or
    an update): the kernels are used and a module defining them (under ``estimation/``, sub-packages included) has
    no numba index file (``*.nbi`` in its ``__pycache__``) at least as new as its source. False when unsure (a
    read-only package: numba then caches elsewhere)."""
    if not use_kernels():
        return False
    folder = Path(__file__).resolve().parent
    if not os.access(folder, os.W_OK):
        return False
    for source in sorted(folder.rglob("*.py")):
        try:
            if source.name == "jit.py" or "\n@kernel" not in source.read_text():
                continue
            source_mtime = source.stat().st_mtime
            cache = source.parent / "__pycache__"
            if not any(f.stat().st_mtime >= source_mtime for f in cache.glob(f"{source.stem}.*.nbi")):
                return True
        except OSError:
            return False
    return False
