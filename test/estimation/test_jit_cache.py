"""``jit.kernels_need_compiling`` follows numba's own cache validity (numba's index stores a stamp of the source:
its content's SHA-256 in the numba in use), not file times: a checkout that rewrites an unchanged file keeps the
cache fresh (no false "compiling" notice at the node's start), an edit makes it stale, and undoing the edit makes it
fresh again. Checked on a kernel module written into a temporary folder, compiled there (numba's cache goes to its
``__pycache__``)."""

from __future__ import annotations

import importlib
import os
import sys
import time

import pytest

from robot_state_estimator.estimation import jit

pytest.importorskip("numba", reason="numba is not installed: nothing is compiled")

SOURCE = "from robot_state_estimator.estimation.jit import kernel\n\n\n@kernel\ndef twice(x):\n    return 2.0 * x\n"


@pytest.fixture
def kernel_module(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    name = f"rse_jit_probe_{os.getpid()}"
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield name, path, module
    sys.modules.pop(name, None)


def _set_mtime(path, seconds_from_now: float) -> None:  # type: ignore[no-untyped-def]
    t = time.time() + seconds_from_now
    os.utime(path, (t, t))


def test_the_cache_is_fresh_by_content_not_by_file_time(kernel_module) -> None:
    name, path, module = kernel_module
    assert jit.stale_kernels([name]) == [f"{name}.twice"]  # never compiled: no index
    assert module.twice(3.0) == 6.0  # compiles and writes numba's cache
    assert jit.stale_kernels([name]) == []
    assert list((path.parent / "__pycache__").glob(f"{name}.twice-*.nbi"))
    _set_mtime(path, 100.0)  # a checkout rewriting the same bytes: newer than the index, same content
    assert jit.cache_is_fresh(module.twice)
    assert jit.stale_kernels([name]) == []
    path.write_text(SOURCE.replace("2.0 * x", "3.0 * x"))  # an edit: numba would compile again
    _set_mtime(path, 200.0)
    assert jit.stale_kernels([name]) == [f"{name}.twice"]
    path.write_text(SOURCE)  # undone: numba's index matches again
    _set_mtime(path, 300.0)
    assert jit.stale_kernels([name]) == []


def test_an_index_of_another_numba_version_is_stale(kernel_module, monkeypatch) -> None:
    _, _, module = kernel_module
    module.twice(1.0)
    assert jit.cache_is_fresh(module.twice)
    monkeypatch.setattr(jit._numba, "__version__", "0.0.0")  # what numba compares its index's first record with
    assert not jit.cache_is_fresh(module.twice)


def test_kernels_need_compiling_reads_the_switch(monkeypatch) -> None:
    monkeypatch.setenv(jit.DISABLE_ENV, "1")
    assert not jit.kernels_need_compiling()  # the numpy reference: nothing to compile
