"""Where the package's bundled configuration and robot descriptions live.

Three layouts are supported, tried in this order:

1. a source checkout (the package imported from ``<repo>/robot_state_estimator`` with ``<repo>/setup.py``
   and ``<repo>/config`` next to it: editable installs, tests run from the tree);
2. a colcon/ament install: ``ament_index_python.get_package_share_directory("robot_state_estimator")``
   followed by ``config``;
3. a plain ``pip install``: ``<sys.prefix>/share/robot_state_estimator/config`` (from ``data_files`` in
   ``setup.py``).

The source tree comes first so that a stale installed copy never shadows the files being edited.
"""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_NAME = "robot_state_estimator"

#: Bundled robot descriptions: short name -> file name under ``config/robots``.
BUNDLED_ROBOTS: dict[str, str] = {
    "go1": "go1.urdf.xacro",
    "solo12": "solo12.urdf.xacro",
    "anymal_c": "anymal_c.urdf.xacro",
}


def _source_config_dir() -> Path | None:
    repo = Path(__file__).resolve().parents[2]
    if (repo / "setup.py").is_file() and (repo / "config").is_dir():
        return repo / "config"
    return None


def _ament_config_dir() -> Path | None:
    try:
        from ament_index_python.packages import (
            PackageNotFoundError,
            get_package_share_directory,
        )
    except ImportError:
        return None
    try:
        share = Path(get_package_share_directory(PACKAGE_NAME))
    except (PackageNotFoundError, LookupError, ValueError, OSError):
        # OSError: ament_index raises EnvironmentError when AMENT_PREFIX_PATH is unset (a plain venv)
        return None
    return share / "config" if (share / "config").is_dir() else None


def _prefix_config_dir() -> Path | None:
    cfg = Path(sys.prefix) / "share" / PACKAGE_NAME / "config"
    return cfg if cfg.is_dir() else None


def config_dir() -> Path:
    """The ``config`` folder of this package (see the module docstring for the search order).

    Returns:
        An existing directory.

    Raises:
        FileNotFoundError: none of the layouts has a ``config`` folder (the message lists where it looked).
    """
    for finder in (_source_config_dir, _ament_config_dir, _prefix_config_dir):
        found = finder()
        if found is not None:
            return found
    raise FileNotFoundError(
        f"config folder of {PACKAGE_NAME} not found: not in a source checkout, no ament share directory, "
        f"not in {Path(sys.prefix) / 'share' / PACKAGE_NAME / 'config'}"
    )


def robot_description_path(robot: str) -> Path:
    """Path of a bundled robot description (``config/robots/<robot>.urdf.xacro``).

    Args:
        robot: short name, one of ``BUNDLED_ROBOTS`` (``go1``, ``solo12``, ``anymal_c``).

    Returns:
        Path of the xacro file; load it with ``robot_state_estimator.description.load_description``.

    Raises:
        KeyError: unknown robot (the message lists the known names).
        FileNotFoundError: the config folder or the file is missing.
    """
    try:
        file_name = BUNDLED_ROBOTS[robot]
    except KeyError:
        raise KeyError(f"unknown bundled robot {robot!r}; known: {sorted(BUNDLED_ROBOTS)}") from None
    path = config_dir() / "robots" / file_name
    if not path.is_file():
        raise FileNotFoundError(f"bundled robot description {path} is missing")
    return path
