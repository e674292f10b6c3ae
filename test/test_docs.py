"""README stays true to the code: the parameter tables are generated from the declarations, and every file it
links to exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_readme_parameter_tables_are_current() -> None:
    pytest.importorskip("rclpy", reason="the node's parameter declarations import rclpy")
    spec = importlib.util.spec_from_file_location("gen_param_docs", REPO / "scripts" / "gen_param_docs.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = (REPO / "README.md").read_text()
    assert gen.updated(text) == text, (
        "README parameter tables are stale: run .venv/bin/python scripts/gen_param_docs.py"
    )


def test_readme_links_point_to_files_in_the_repository() -> None:
    text = (REPO / "README.md").read_text()
    missing = [
        target
        for target in re.findall(r"\]\(([^)#]+)\)", text)
        if not target.startswith(("http://", "https://")) and not (REPO / target).exists()
    ]
    assert not missing, f"README links to missing files: {missing}"
