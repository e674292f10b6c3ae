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
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

try:
    import numba as _numba
except ImportError:  # pragma: no cover - numba is optional
    _numba = None  # type: ignore[assignment]  # the module's name holds None without numba

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


def python_function(fn: F) -> F:
    """The plain Python function of the kernel ``fn`` (numba's ``py_func``; ``fn`` itself without numba): for a
    Python caller that wants its result without compiling a Python-callable specialisation (e.g. views of arrays)."""
    return cast(F, getattr(fn, "py_func", fn))


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
    typeof = cast(Callable[[Any], Any], _numba.typeof)  # numba's typeof has no annotations
    sig = tuple(typeof(a) for a in args)
    overload = fn.overloads.get(sig)
    if overload is None:
        fn.compile(sig)
        overload = fn.overloads[sig]
    return cast(Callable[..., Any], overload.entry_point)


def _kernel_modules(folder: Path, package: str) -> list[str]:
    """The modules under ``folder`` (the package ``package``, sub-packages included) that define a kernel."""
    names = []
    for source in sorted(folder.rglob("*.py")):
        if source.name == "jit.py" or "\n@kernel" not in source.read_text():
            continue
        parts = source.relative_to(folder).with_suffix("").parts
        names.append(".".join((package, *parts)))
    return names


def cache_is_fresh(dispatcher: Any) -> bool:
    """Whether numba's on-disk cache of the kernel ``dispatcher`` holds compiled code it would load: its index file
    exists, was written by this numba version, holds at least one overload, and its source stamp is the one numba
    computes now for the kernel's source file (numba >= 0.59: the SHA-256 of the file's content, so a checkout that
    rewrites an unchanged file keeps the cache fresh and any edit makes it stale; before: its mtime and size). The
    same test as numba's ``IndexDataCacheFile._load_index``, at the place numba's locator chose (``__pycache__``
    next to the module, or the per-user cache when the package is read-only).

    Raises:
        ValueError: ``dispatcher`` is not a kernel with an on-disk cache (``cache=True``).
    """
    impl = getattr(getattr(dispatcher, "_cache", None), "_impl", None)
    if impl is None:
        raise ValueError(f"{dispatcher!r} has no numba on-disk cache")
    locator = impl.locator
    index = Path(locator.get_cache_path()) / f"{impl.filename_base}.nbi"
    try:
        with open(index, "rb") as f:
            version = pickle.load(f)
            data = f.read()
    except FileNotFoundError:
        return False
    if _numba is None or version != _numba.__version__:
        return False
    stamp, overloads = pickle.loads(data)
    return bool(overloads) and stamp == locator.get_source_stamp()


def stale_kernels(modules: list[str]) -> list[str]:
    """The kernels of ``modules`` (importable names) whose numba cache is not fresh (:func:`cache_is_fresh`), as
    ``module.function``."""
    import importlib

    stale = []
    for name in modules:
        module = importlib.import_module(name)
        for attr, value in sorted(vars(module).items()):
            if getattr(value, "__module__", None) == name and hasattr(value, "_cache") and hasattr(value, "py_func"):
                if not cache_is_fresh(value):
                    stale.append(f"{name}.{attr}")
    return stale


def kernels_need_compiling() -> bool:
    """True when the estimator will compile numba kernels at construction (a minute, once after an install or an
    update): the kernels are used and a kernel of a module under ``estimation/`` (sub-packages included) has no fresh
    numba cache (:func:`cache_is_fresh`: numba's own validity test, by the source's content, not its file time).
    False when unsure (numba's cache internals not as expected)."""
    if not use_kernels():
        return False
    folder = Path(__file__).resolve().parent
    try:
        return bool(stale_kernels(_kernel_modules(folder, __name__.rsplit(".", 1)[0])))
    except (OSError, ValueError, AttributeError, pickle.UnpicklingError, EOFError):
        return False
