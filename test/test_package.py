"""The package metadata is valid for colcon/ament, lists every import the package and its tests make, and names
only keys rosdep resolves (checked against ``../shared/ros2/rosdep-keys-kilted.txt`` where it exists)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
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
    "tf2_ros": "tf2_ros_py",  # the Python module; the rosdistro package tf2_ros is the C++ library
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
    # tests only
    "pytest": "python3-pytest",
    "hypothesis": "python3-hypothesis",
    "catkin_pkg": "python3-catkin-pkg",
    "launch_pytest": "launch_pytest",
    "psutil": "python3-psutil",
}

#: imports with no rosdep key (not in rosdistro): installed with pip, as the README's workspace section says
PIP_ONLY = {"resolve_robotics_uri_py": "resolve-robotics-uri-py", "example_robot_data": "example-robot-data"}
ROSDEP_KEYS = REPO_ROOT.parent / "shared" / "ros2" / "rosdep-keys-kilted.txt"


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


def _undeclared(sources: list[Path], keys: set[str], local: set[str], what: str) -> list[str]:
    problems = []
    for module, where in sorted(_imports(sources).items()):
        if module in sys.stdlib_module_names or module in local or module in ("robot_state_estimator", "__future__"):
            continue
        if module in PIP_ONLY:
            continue
        key = IMPORT_TO_KEY.get(module)
        if key is None:
            problems.append(f"import {module!r} (in {sorted(where)}) has no package.xml key in IMPORT_TO_KEY")
        elif key not in keys:
            problems.append(f"import {module!r} (in {sorted(where)}) needs <{what}>{key}</{what}>")
    return problems


def test_every_runtime_import_is_an_exec_depend() -> None:
    package = parse_package(str(REPO_ROOT / "package.xml"))
    exec_keys = {d.name for d in package.exec_depends}
    sources = sorted((REPO_ROOT / "robot_state_estimator").rglob("*.py")) + sorted((REPO_ROOT / "launch").glob("*.py"))
    problems = _undeclared(sources, exec_keys, set(), "exec_depend")
    assert not problems, "\n".join(problems)


def test_every_test_import_is_a_dependency() -> None:
    package = parse_package(str(REPO_ROOT / "package.xml"))
    keys = {d.name for d in package.exec_depends} | {d.name for d in package.test_depends}
    sources = sorted((REPO_ROOT / "test").rglob("*.py"))
    local = {p.stem for p in sources}  # the tests' own helper modules (est_helpers, streams, ...)
    problems = _undeclared(sources, keys, local, "test_depend")
    assert not problems, "\n".join(problems)


def test_every_dependency_is_a_rosdep_key() -> None:
    if not ROSDEP_KEYS.is_file():
        pytest.skip(f"no list of rosdep keys at {ROSDEP_KEYS} (it comes with ../shared/ros2)")
    known = set()
    for line in ROSDEP_KEYS.read_text().splitlines():
        kind, _, name = line.partition(" ")
        if kind in ("package", "key") and name:
            known.add(name.split()[0])
    package = parse_package(str(REPO_ROOT / "package.xml"))
    depends = [*package.buildtool_depends, *package.build_depends, *package.exec_depends, *package.test_depends]
    unknown = sorted({d.name for d in depends} - known)
    assert not unknown, f"package.xml keys that rosdep does not resolve on Kilted: {unknown}"
    assert "tf2_ros" not in {d.name for d in depends}, "the Python module tf2_ros is the key tf2_ros_py"


def test_pip_only_dependencies_are_in_the_readme_workspace_steps() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme[readme.index("## Using it in a ROS 2 workspace") :]
    for dist in PIP_ONLY.values():
        assert f"{dist}" in section.split("\n## ")[0], f"README's workspace section must say: pip install {dist}"


def test_test_depends_include_launch_testing_tools() -> None:
    package = parse_package(str(REPO_ROOT / "package.xml"))
    test_keys = {d.name for d in package.test_depends}
    assert {"launch_pytest", "launch_ros", "python3-pytest"} <= test_keys


def test_setup_declares_pytest_and_installs_the_share_files() -> None:
    """colcon test runs pytest only when setup.py names it as the test dependency; ``ros2 launch`` needs the
    launch file, the settings, the RViz configuration and the bundled descriptions under share/."""
    setup_py = (REPO_ROOT / "setup.py").read_text()
    assert 'extras_require={"test": ["pytest"' in setup_py
    tree = ast.parse(setup_py)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setup")
    data_files = next(k.value for k in call.keywords if k.arg == "data_files")
    installed = ast.unparse(data_files)
    for folder in ("launch", "config", "config/robots", "config/import"):
        files = [p for p in (REPO_ROOT / folder).iterdir() if p.is_file()]
        assert files, folder
        assert f'"/{folder}"' in installed or f"'/{folder}'" in installed, f"{folder}/ is not installed by data_files"
    assert "resource/" in installed and "package.xml" in installed


def test_setup_installs_ament_resource_and_console_scripts() -> None:
    assert (REPO_ROOT / "resource" / "robot_state_estimator").is_file()
    setup_cfg = (REPO_ROOT / "setup.cfg").read_text()
    assert "$base/lib/robot_state_estimator" in setup_cfg  # so `ros2 run robot_state_estimator <exe>` finds it
    setup_py = (REPO_ROOT / "setup.py").read_text()
    for script in ("estimator_node = ", "robot-state-estimator = ", "replay = ", "precompile_kernels = "):
        assert script in setup_py
