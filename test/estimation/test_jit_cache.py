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
from pathlib import Path

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


def test_the_sources_digest_covers_the_kernels_and_what_they_import(tmp_path) -> None:
    """A kernel inlines its callees and freezes the constants it reads: the digest follows a kernel module and the
    package modules it imports (transitively), not the package's other modules."""
    root = tmp_path / "robot_state_estimator"
    (root / "sub").mkdir(parents=True)
    (root / "k.py").write_text("from robot_state_estimator.sub.layout import X\n\n\n@kernel\ndef f(x):\n    return X\n")
    (root / "sub" / "layout.py").write_text("from robot_state_estimator.sub import deeper\nX = 1\n")
    (root / "sub" / "deeper.py").write_text("Y = 2\n")
    (root / "other.py").write_text("Z = 3\n")
    first = jit.kernel_sources_digest(root)
    (root / "other.py").write_text("Z = 4\n")
    assert jit.kernel_sources_digest(root) == first
    for path, text in ((root / "sub" / "deeper.py", "Y = 5\n"), (root / "sub" / "layout.py", "X = 2\n")):
        path.write_text(text)
        changed = jit.kernel_sources_digest(root)
        assert changed != first
        first = changed


def test_a_stale_cache_folder_is_emptied_once(tmp_path) -> None:
    """numba's files go when the folder's stamp is another digest (or missing), and the stamp is written; a folder
    stamped with the digest keeps its files."""
    stale, fresh = tmp_path / "stale", tmp_path / "fresh"
    for folder in (stale, fresh):
        folder.mkdir()
        for name in ("m.f-1.py311.nbi", "m.f-1.py311.1.nbc", "m.cpython-311.pyc"):
            (folder / name).write_text("x")
    (stale / jit.SOURCES_STAMP).write_text("an older digest\n")
    (fresh / jit.SOURCES_STAMP).write_text("abc\n")
    assert jit.purge_stale_cache(stale, "abc")
    assert sorted(p.name for p in stale.iterdir()) == ["m.cpython-311.pyc", jit.SOURCES_STAMP]
    assert (stale / jit.SOURCES_STAMP).read_text() == "abc\n"
    assert not jit.purge_stale_cache(fresh, "abc")
    assert len(list(fresh.iterdir())) == 4
    assert not jit.purge_stale_cache(stale, "def")  # checked once per process


def test_the_installed_kernels_cache_folders_carry_the_current_stamp() -> None:
    """Every cache folder of the installed package's kernels has been checked against the current digest."""
    from robot_state_estimator.estimation.ekf.backends.kernels import update

    folder = Path(update.leg_update._cache._impl.locator.get_cache_path())
    assert (folder / jit.SOURCES_STAMP).read_text().strip() == jit.kernel_sources_digest()
