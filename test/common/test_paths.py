"""Where the package finds its config folder (common/paths.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from robot_state_estimator.common import paths


def test_ament_lookup_without_ament_prefix_path_is_not_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # ament_index raises EnvironmentError (an OSError) when AMENT_PREFIX_PATH is unset: "not found", not a crash
    pytest.importorskip("ament_index_python")
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    assert paths._ament_config_dir() is None


def test_config_dir_of_the_checkout_holds_the_robot_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    cfg = paths.config_dir()
    assert cfg == Path(__file__).resolve().parents[2] / "config"
    assert (cfg / "go1.yaml").is_file()
