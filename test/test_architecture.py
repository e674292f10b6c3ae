"""The import graph of docs/ARCHITECTURE.md holds: data flows one way and only ``ros/`` touches ROS."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "robot_state_estimator"

#: sub-package -> the sub-packages it may import (besides itself)
ALLOWED = {
    "common": set(),
    "description": {"common"},
    "estimation": {"common", "description"},
    "sensors": {"common", "description"},
    "io": {"common", "estimation"},
    "simulation": {"common", "description", "sensors", "estimation", "io"},
    "ros": {"common", "description", "estimation", "io"},
    "tools": {"common", "description", "sensors", "simulation", "estimation", "io", "ros"},
}
ROS_MODULES = {"rclpy", "rcl_interfaces", "tf2_ros", "launch", "launch_ros"}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_sub_packages_import_only_what_the_architecture_allows() -> None:
    problems = []
    for sub, allowed in ALLOWED.items():
        for path in sorted((PACKAGE / sub).rglob("*.py")):
            for name in _imports(path):
                parts = name.split(".")
                if parts[0] == "robot_state_estimator" and len(parts) > 1 and parts[1] != sub:
                    if parts[1] not in allowed:
                        problems.append(f"{path.relative_to(PACKAGE)} imports {name}")
                top = parts[0]
                is_msgs = top.endswith("_msgs") or top == "builtin_interfaces"
                if sub not in ("ros", "tools") and (top in ROS_MODULES or is_msgs):
                    problems.append(f"{path.relative_to(PACKAGE)} imports ROS module {name}")
    assert not problems, "\n".join(problems)
