"""``robot-state-estimator info``: versions of the package and of what it runs on (works without rclpy); with a
robot description, what the estimator will use for that robot and, with ``--write-config``, a commented settings
template for it (:mod:`robot_state_estimator.tools.robot_info`)."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata as md
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any


def _dist_version(*names: str) -> str | None:
    for name in names:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            continue
    return None


def _module_version(module: str) -> str | None:
    try:
        mod = importlib.import_module(module)
    except Exception:
        return None
    return str(getattr(mod, "__version__", "") or "") or "unknown"


#: rclpy major version -> ROS 2 distribution (rclpy wheels carry no ROS_DISTRO).
RCLPY_DISTROS = {3: "humble", 4: "iron", 7: "jazzy", 9: "kilted", 10: "rolling"}


def collect() -> dict[str, Any]:
    """Versions and environment facts, as a dict (values None when absent)."""
    info: dict[str, Any] = {
        "robot_state_estimator": _dist_version("robot_state_estimator", "robot-state-estimator"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": _module_version("numpy"),
        "scipy": _module_version("scipy"),
        "pinocchio": _module_version("pinocchio"),
        "example_robot_data": _dist_version("example-robot-data"),
        "rosbags": _dist_version("rosbags"),
        "matplotlib": _dist_version("matplotlib"),
    }
    # ROS 2: the rclpy wheel (PyPI ros-rclpy / rclpy) or a sourced distribution (ROS_DISTRO)
    rclpy_version = _dist_version("ros-rclpy", "rclpy")
    try:
        importlib.import_module("rclpy")
        rclpy_importable = True
    except Exception:
        rclpy_importable = False
    info["ros2"] = {
        "rclpy": rclpy_version,
        "rclpy_importable": rclpy_importable,
        "distro": os.environ.get("ROS_DISTRO") or _distro_from_rclpy(rclpy_version),
        "rmw_implementation": os.environ.get("RMW_IMPLEMENTATION"),
        "domain_id": os.environ.get("ROS_DOMAIN_ID"),
        "automatic_discovery_range": os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE"),
    }
    return info


def _distro_from_rclpy(version: str | None) -> str | None:
    if not version:
        return None
    try:
        major = int(version.split(".")[0])
    except ValueError:
        return None
    name = RCLPY_DISTROS.get(major)
    return f"{name} (from rclpy {version})" if name else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator info``."""
    parser.add_argument(
        "description",
        nargs="?",
        help="a robot description (URDF/xacro/SDF file, package:// or model:// URI, or the XML text): print what the "
        "estimator will use for it (base, IMU with pose and noise, feet, joints, mass, contact thresholds in N); "
        "without it, the versions",
    )
    parser.add_argument(
        "--robot",
        metavar="NAME",
        help="a bundled robot (go1, solo12, anymal_c) instead of DESCRIPTION: its description and, unless --config, "
        "its settings config/<robot>.yaml",
    )
    parser.add_argument("--imu", metavar="NAME", help="the IMU to use when the description has several (imu_name)")
    parser.add_argument(
        "--config", help="estimator settings YAML to apply (e.g. declared_imu.* for a robot without IMU)"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override one setting (dotted name, YAML value)",
    )
    parser.add_argument(
        "--write-config",
        metavar="FILE",
        help="write a commented settings template for this robot (loadable as is by the node, replay and simulate)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


class InfoError(ValueError):
    """Arguments of ``info`` that do not go together, or name no robot (``tools.cli`` prints it as the command's
    error, exit code 2)."""


def run(args: argparse.Namespace) -> int:
    """Print the versions, or the robot report (and write the template).

    Raises:
        InfoError: a DESCRIPTION and ``--robot`` both, an unknown bundled robot, a bundled robot's name given as
            a file, options that need a DESCRIPTION without one.
    """
    robot = getattr(args, "robot", None)
    if robot:
        from robot_state_estimator.common.paths import BUNDLED_ROBOTS, config_dir, robot_description_path

        if args.description:
            raise InfoError("give a DESCRIPTION or --robot, not both")
        if robot not in BUNDLED_ROBOTS:
            raise InfoError(f"unknown bundled robot {robot!r} (--robot); known: {', '.join(sorted(BUNDLED_ROBOTS))}")
        args.description = str(robot_description_path(robot))
        if not args.config and (config_dir() / f"{robot}.yaml").is_file():
            args.config = str(config_dir() / f"{robot}.yaml")
    description = getattr(args, "description", None)
    if description:
        from robot_state_estimator.common.paths import BUNDLED_ROBOTS

        if description in BUNDLED_ROBOTS and not Path(description).exists():
            raise InfoError(f"no such file {description!r}: for the bundled robot, use --robot {description}")
        return _run_robot(args)
    if any(getattr(args, name, None) for name in ("write_config", "imu", "config", "set")):
        raise InfoError("--imu, --config, --set and --write-config need a DESCRIPTION")
    info = collect()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    ros = info.pop("ros2")
    for key, value in info.items():
        print(f"{key:<22} {value if value is not None else 'not installed'}")
    rclpy_text = ros["rclpy"] or "not installed"
    if ros["rclpy"] and not ros["rclpy_importable"]:
        rclpy_text += " (not importable)"
    print(f"{'ROS 2 rclpy':<22} {rclpy_text}")
    print(f"{'ROS 2 distro':<22} {ros['distro'] or 'unknown'}")
    for key in ("rmw_implementation", "domain_id", "automatic_discovery_range"):
        if ros[key]:
            print(f"{key:<22} {ros[key]}")
    return 0


def _run_robot(args: argparse.Namespace) -> int:
    from robot_state_estimator.tools.robot_info import report_text, robot_report, settings_for, write_config

    settings = settings_for(args.config, args.set, args.imu)
    report = robot_report(args.description, settings)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(report_text(report))
    if args.write_config:
        path = write_config(args.write_config, report, settings)
        print(f"wrote {path}: check the IMU and the feet, then use it with --params-file / --config", file=sys.stderr)
    return 0
