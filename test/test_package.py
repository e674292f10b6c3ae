"""The package metadata is valid for colcon/ament and lists every runtime import the package makes."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from catkin_pkg.package import parse_package

REPO_ROOT = Path(__file__).resolve().parents[1]

#: top-level Python module -> the package.xml dependency key that provides it
IMPORT_TO_KEY = {
    "rclpy": "rclpy",
    "builtin_interfaces": "builtin_interfaces",
    "std_msgs": "std_msgs",
    "sensor_msgs": "sensor_msgs",
    "geometry_msgs": "geometry_msgs",
    "nav_msgs": "nav_msgs",
    "diagnostic_msgs": "diagnostic_msgs",
    "std_srvs": "std_srvs",
    "rosgraph_msgs": "rosgraph_msgs",
    "rcl_interfaces": "rcl_interfaces",
    "tf2_msgs": "tf2_msgs",
    "tf2_ros": "tf2_ros",
    "ament_index_python": "ament_index_python",
    "launch": "launch",
    "launch_ros": "launch_ros",
    "xacro": "xacro",
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "numba": "python3-numba",
    "yaml": "python3-yaml",
    "matplotlib": "python3-matplotlib",
    "tqdm": "python3-tqdm",
    "pinocchio": "pinocchio",
    "rosbags": "python3-rosbags-pip",
    "resolve_robotics_uri_py": "python3-resolve-robotics-uri-py-pip",
}


def _imports(paths: list[Path]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in paths:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(REPO_ROOT)))
    return found


def test_package_xml_is_valid_format_3() -> None:
    package = parse_package(str(REPO_ROOT / "package.xml"))
    package.validate()
    assert package.name == "robot_state_estimator"
    assert package.package_format == 3
    assert package.get_build_type() == "ament_python"
    setup_py = (REPO_ROOT / "setup.py").read_text()
    assert f'version="{package.version}"' in setup_py, "package.xml and setup.py versions differ"


def test_every_runtime_import_is_an_exec_depend() -> None:
    package = parse_package(str(REPO_ROOT / "package.xml"))
    exec_keys = {d.name for d in package.exec_depends}
    sources = sorted((REPO_ROOT / "robot_state_estimator").rglob("*.py")) + sorted((REPO_ROOT / "launch").glob("*.py"))
    problems = []
    for module, where in sorted(_imports(sources).items()):
        if module in sys.stdlib_module_names or module in ("robot_state_estimator", "__future__"):
            continue
        key = IMPORT_TO_KEY.get(module)
        if key is None:
            problems.append(f"import {module!r} (in {sorted(where)}) has no package.xml key in IMPORT_TO_KEY")
        elif key not in exec_keys:
            problems.append(f"import {module!r} (in {sorted(where)}) needs <exec_depend>{key}</exec_depend>")
    assert not problems, "\n".join(problems)


def test_test_depends_include_launch_testing_tools() -> None:
    package = parse_package(str(REPO_ROOT / "package.xml"))
    test_keys = {d.name for d in package.test_depends}
    assert {"launch_pytest", "launch_ros", "python3-pytest"} <= test_keys


def test_setup_installs_ament_resource_and_console_scripts() -> None:
    assert (REPO_ROOT / "resource" / "robot_state_estimator").is_file()
    setup_cfg = (REPO_ROOT / "setup.cfg").read_text()
    assert "$base/lib/robot_state_estimator" in setup_cfg  # so `ros2 run robot_state_estimator <exe>` finds it
    setup_py = (REPO_ROOT / "setup.py").read_text()
    for script in ("estimator_node = ", "robot-state-estimator = ", "replay = "):
        assert script in setup_py
