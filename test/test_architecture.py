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
    "io": {"common"},  # the simulator writes its bags through io, so io never imports the estimator
    "simulation": {"common", "description", "sensors", "io"},  # never the estimator it is a test oracle for
    "ros": {"common", "description", "estimation", "io"},
    "evaluation": {"common", "io"},  # a library of metrics and plots: never the estimator, ROS or the tools using it
    "tools": {"common", "description", "sensors", "simulation", "estimation", "evaluation", "io", "ros"},
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


def test_every_sub_package_has_a_rule() -> None:
    """A new sub-package gets its line in ``ALLOWED`` (and in docs/ARCHITECTURE.md), so the graph stays checked."""
    subs = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subs == set(ALLOWED), f"sub-packages without a rule: {sorted(subs - set(ALLOWED))}"


def _module_file(name: str) -> Path | None:
    """The file of the package module ``name`` (``robot_state_estimator.x.y``), or None when it is not one."""
    parts = name.split(".")
    if parts[0] != "robot_state_estimator":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package_imports(path: Path) -> set[str]:
    """The package modules ``path`` imports anywhere (also inside functions), with the packages that run first."""
    here = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = here[:-1]  # the package a relative import starts from (also for an __init__.py)
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parent = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*parent, *(node.module.split(".") if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    out = set()
    for name in names:
        parts = name.split(".")
        out.update(".".join(parts[:i]) for i in range(2, len(parts) + 1) if _module_file(".".join(parts[:i])))
    return out


def test_simulation_reaches_no_estimation_module_even_through_io() -> None:
    """The simulator is the estimator's test oracle: following its imports (and theirs) never loads the estimator."""
    seen: set[str] = set()
    todo = [f"robot_state_estimator.simulation.{p.stem}" for p in (PACKAGE / "simulation").glob("*.py")]
    todo = [name.removesuffix(".__init__") for name in todo]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(name)
        assert path is not None, name
        todo.extend(_package_imports(path) - seen)
    reached = sorted(name for name in seen if name.split(".")[1:2] == ["estimation"])
    assert not reached, f"simulation imports (directly or through io/...) {reached}"


#: rclpy's private modules (its C extension); only ros/rclpy_compat.py may import them
PRIVATE_RCLPY = ("rclpy.impl", "rclpy._rclpy_pybind11")


def test_private_rclpy_names_only_in_the_compat_module() -> None:
    problems = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "ros" / "rclpy_compat.py"
        for name in _imports(path)
        if name.startswith(PRIVATE_RCLPY)
    ]
    assert not problems, "\n".join(problems) + "\n(use robot_state_estimator.ros.rclpy_compat)"


def _private_attribute_reads(path: Path) -> list[str]:
    """The private attributes ``path`` reads by name (``getattr``/``hasattr`` with a literal ``"_name"``)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                name = node.args[1].value
                if name.startswith("_") and not name.startswith("__"):
                    names.append(name)
    return names


def test_private_rclpy_attributes_only_in_the_compat_module() -> None:
    """rclpy's private attributes (``Node._parameter_overrides``, ``Executor._cb_iter``) are read in
    ``ros/rclpy_compat.py`` only: no other module of ``ros/`` reads a private attribute by name."""
    problems = [
        f"{path.relative_to(PACKAGE)} reads {name}"
        for path in sorted((PACKAGE / "ros").glob("*.py"))
        if path.name != "rclpy_compat.py"
        for name in _private_attribute_reads(path)
    ]
    assert not problems, "\n".join(problems) + "\n(use robot_state_estimator.ros.rclpy_compat)"


def test_no_import_circle_in_ros() -> None:
    """``ros/`` modules import each other one way (also counting imports inside functions): the entry point
    imports the node, never the reverse."""
    modules = {f"robot_state_estimator.ros.{p.stem}": p for p in (PACKAGE / "ros").glob("*.py") if p.stem != "__init__"}
    graph = {name: _package_imports(path) & set(modules) - {name} for name, path in modules.items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), list(graph[start])
        while todo:
            name = todo.pop()
            if name == goal:
                return True
            if name not in seen:
                seen.add(name)
                todo.extend(graph[name])
        return False

    circles = sorted({" <-> ".join(sorted((a, b))) for a in graph for b in graph[a] if reaches(b, a)})
    assert not circles, circles


#: the one seam where the numpy reference and the numba kernels are chosen (docs/ARCHITECTURE.md, "Inside
#: estimation/"); its kernel modules are ekf/backends/kernels/*, the compiled twins of the numpy reference
BACKENDS = PACKAGE / "estimation" / "ekf" / "backends"
KERNELS = BACKENDS / "kernels"
#: the switch between them: ROBOT_STATE_ESTIMATOR_DISABLE_JIT (estimation/jit.py). Not ``jit.numba_available``:
#: whether numba is importable decides nothing between the two (estimation/kinematics_kernels.py, compiled
#: kinematics whose reference is pinocchio, uses it to run uncompiled without numba)
JIT_SWITCH = {"use_kernels", "DISABLE_ENV", "ROBOT_STATE_ESTIMATOR_DISABLE_JIT"}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def _switch_uses(path: Path) -> set[str]:
    """What a module reads of the jit switch: names of ``estimation.jit`` imported from it or read as ``jit.<name>``,
    and the environment variable's name."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("jit"):
            found.update(f"jit.{alias.name}" for alias in node.names if alias.name in JIT_SWITCH)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "jit":
            if node.attr in JIT_SWITCH:
                found.add(f"jit.{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in JIT_SWITCH:
            found.add(node.value)
    return found


def test_only_the_backends_choose_between_the_numpy_reference_and_the_kernels() -> None:
    """Outside ``estimation/ekf/backends/`` no module imports a kernel module of the backends (also inside
    functions) or reads the jit switch (``jit.use_kernels``, ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT``): the backend
    chosen at construction is the only place the numerics are chosen (``jit.py`` itself defines the switch)."""
    paths = sorted(PACKAGE.rglob("*.py"))
    kernel_modules = {_module_name(p) for p in paths if p.is_relative_to(KERNELS) and p.stem != "__init__"}
    assert {m.rsplit(".", 1)[1] for m in kernel_modules} >= {"legs", "flat", "propagation", "update", "joint_step"}
    problems = []
    for path in paths:
        if path.is_relative_to(BACKENDS) or path == PACKAGE / "estimation" / "jit.py":
            continue
        where = path.relative_to(PACKAGE)
        problems += [f"{where} imports the kernel module {m}" for m in sorted(_package_imports(path) & kernel_modules)]
        problems += [f"{where} reads the jit switch ({name})" for name in sorted(_switch_uses(path))]
    assert not problems, (
        "\n".join(problems) + "\n(ask the object's backend: robot_state_estimator.estimation.ekf.backends)"
    )
