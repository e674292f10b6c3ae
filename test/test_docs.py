"""README and docs stay true to the code: the parameter tables are generated from the declarations, and every file
they link to exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_parameter_tables_are_current() -> None:
    """README's node-parameter table and docs/PARAMETERS.md's settings table are what the generator makes now."""
    pytest.importorskip("rclpy", reason="the node's parameter declarations import rclpy")
    spec = importlib.util.spec_from_file_location("gen_param_docs", REPO / "scripts" / "gen_param_docs.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert set(gen.TARGETS) == {REPO / "README.md", REPO / "docs" / "PARAMETERS.md"}
    for path in gen.TARGETS:
        text = path.read_text()
        assert gen.updated(path, text) == text, (
            f"{path.name}'s parameter table is stale: run .venv/bin/python scripts/gen_param_docs.py"
        )


def test_readme_links_point_to_files_in_the_repository() -> None:
    text = (REPO / "README.md").read_text()
    missing = [
        target
        for target in re.findall(r"\]\(([^)#]+)\)", text)
        if not target.startswith(("http://", "https://")) and not (REPO / target).exists()
    ]
    assert not missing, f"README links to missing files: {missing}"


#: how code and config cite a README section: README.md, "Name" / README, 'Name' / the README (section "Name")
CITATION = re.compile(r"README(?:\.md)?(?:,| \(section) [\"']([^\"'\n]+)[\"']")


def test_readme_sections_cited_by_the_code_exist() -> None:
    """A message or docstring that sends the user to a README section finds it (a heading starting with the name,
    or a bold paragraph lead-in), so moving README text to docs/ cannot silently break the pointer."""
    text = (REPO / "README.md").read_text()
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    sources = [
        *sorted((REPO / "robot_state_estimator").rglob("*.py")),
        *sorted((REPO / "config").rglob("*.yaml")),
        *sorted((REPO / "launch").glob("*.py")),
    ]
    cited = {(m.group(1), path.relative_to(REPO)) for path in sources for m in CITATION.finditer(path.read_text())}
    assert cited, "the pattern finds no citation: it no longer matches how the code cites README sections"
    missing = sorted(
        f"{path}: {name!r}"
        for name, path in cited
        if not any(h.startswith(name) for h in headings) and f"**{name}**" not in text
    )
    assert not missing, f"README sections cited but not found: {missing}"


def test_docs_links_point_to_files_in_the_repository() -> None:
    missing = [
        f"{path.name}: {target}"
        for path in sorted((REPO / "docs").glob("*.md"))
        for target in re.findall(r"\]\(([^)#]+)\)", path.read_text())
        if not target.startswith(("http://", "https://")) and not (path.parent / target).exists()
    ]
    assert not missing, f"docs link to missing files: {missing}"
