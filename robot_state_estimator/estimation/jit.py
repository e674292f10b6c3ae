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

numba keeps a kernel's cached machine code while the kernel's own source file is unchanged (its content's hash),
but a kernel inlines the kernels it calls and freezes the module constants it reads (the buffer layout of
``ekf.layout``) at compile time: after an update that changes only a callee or the layout (a ``git pull`` under a
symlinked or editable install, an upgrade that leaves ``__pycache__`` behind), numba would load the caller's stale
code, silently computing with the old equations or indices. So :func:`kernel` also checks, once per cache folder and
process, a stamp of every kernel module of the package and of the package modules they import
(:func:`kernel_sources_digest`), and empties that folder's numba cache when the stamp differs
(:func:`purge_stale_cache`): the kernels then compile again, once.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
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
    unchanged when numba is missing (it then runs as plain Python, slowly; callers use their numpy path). numba's
    cache folder for ``fn`` is emptied first when the package's kernel sources changed since it was written
    (module docstring, :func:`purge_stale_cache`)."""
    if _numba is None:  # pragma: no cover - numba is optional
        return fn
    dispatcher = _numba.njit(cache=True, nogil=True)(fn)
    locator = getattr(getattr(getattr(dispatcher, "_cache", None), "_impl", None), "locator", None)
    if locator is not None:
        try:
            purge_stale_cache(Path(locator.get_cache_path()), kernel_sources_digest())
        except OSError:  # an unreadable source or cache folder: numba's own handling applies
            pass
    return cast(F, dispatcher)


#: the stamp file :func:`purge_stale_cache` keeps in each numba cache folder of the package's kernels
SOURCES_STAMP = "robot_state_estimator_kernels.sha256"
_IMPORT = re.compile(r"^\s*from\s+(robot_state_estimator(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n]*)", re.M)
_checked_folders: set[Path] = set()


def kernel_sources_digest(package_root: Path | None = None) -> str:
    """SHA-256 (hex) of the package's kernel modules (files with a ``@kernel`` line) and of every package module they
    import, transitively (``from robot_state_estimator.x import y`` lines: the module ``x`` and a sub-module ``x.y``),
    in path order: what a compiled kernel depends on. Computed once per process for the installed package.

    Args:
        package_root: the package's folder (``robot_state_estimator``); None: this installed package's.
    """
    if package_root is None:
        return _installed_digest()
    return _digest(package_root)


@functools.lru_cache(maxsize=1)
def _installed_digest() -> str:
    return _digest(Path(__file__).resolve().parent.parent)


def _digest(package_root: Path) -> str:
    top = package_root.parent
    todo = [p for p in sorted(package_root.rglob("*.py")) if "\n@kernel" in p.read_text()]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module, names in _IMPORT.findall(path.read_text()):
            base = top.joinpath(*module.split("."))
            candidates = [base.with_suffix(".py")]
            candidates += [base / f"{name}.py" for name in re.findall(r"(\w+)(?:\s+as\s+\w+)?", names)]
            todo += [c for c in candidates if c.is_file() and c not in seen]
    h = hashlib.sha256()
    for path in sorted(seen):
        h.update(str(path.relative_to(top)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def purge_stale_cache(folder: Path, digest: str) -> bool:
    """Empty numba's cache files (``*.nbi``, ``*.nbc``) in ``folder`` when its :data:`SOURCES_STAMP` is not ``digest``
    (or missing while cache files are there), then write the stamp; once per folder and process.

    Args:
        folder: a numba cache folder (the ``__pycache__`` next to a kernel module, or numba's per-user one).
        digest: :func:`kernel_sources_digest`.

    Returns:
        Whether cache files were removed.

    Raises:
        OSError: the folder or its stamp cannot be read or written.
    """
    if folder in _checked_folders:
        return False
    _checked_folders.add(folder)
    stamp = folder / SOURCES_STAMP
    if stamp.is_file() and stamp.read_text().strip() == digest:
        return False
    stale = [*folder.glob("*.nbi"), *folder.glob("*.nbc")] if folder.is_dir() else []
    for path in stale:
        path.unlink(missing_ok=True)  # another process may have removed it first
    folder.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest + "\n")
    return bool(stale)


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
