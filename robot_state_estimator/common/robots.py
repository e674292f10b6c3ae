"""Where the robot models of the ``example-robot-data`` package are installed.

The PyPI wheel ``example-robot-data`` ships no Python module, only files under
``<site-packages>/cmeel.prefix/share/example-robot-data/robots``; this module finds them.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

#: Robot name -> URDF path relative to the example-robot-data ``robots`` folder.
ROBOT_URDFS: dict[str, str] = {
    "go1": "go1_description/urdf/go1.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
}


def example_robot_data_share() -> Path:
    """Path of ``share/example-robot-data`` (the folder that holds ``robots/``).

    Raises:
        FileNotFoundError: example-robot-data is not installed in this environment.
    """
    candidates = []
    for key in ("purelib", "platlib"):
        candidates.append(Path(sysconfig.get_paths()[key]) / "cmeel.prefix" / "share" / "example-robot-data")
    candidates.append(Path("/opt/openrobots/share/example-robot-data"))
    for c in candidates:
        if (c / "robots").is_dir():
            return c
    raise FileNotFoundError(
        "example-robot-data not found (looked in: " + ", ".join(str(c) for c in candidates) + "); "
        "install it with `pip install example-robot-data`"
    )


def example_robot_urdf(robot: str) -> Path:
    """URDF path of a robot of example-robot-data by short name (see ``ROBOT_URDFS``).

    Raises:
        KeyError: unknown robot name (the message lists the known ones).
        FileNotFoundError: example-robot-data is not installed.
    """
    try:
        rel = ROBOT_URDFS[robot]
    except KeyError:
        raise KeyError(f"unknown robot {robot!r}; known: {sorted(ROBOT_URDFS)}") from None
    return example_robot_data_share() / "robots" / rel


def example_robot_data_prefix() -> Path | None:
    """The install prefix holding example-robot-data (``<prefix>/share/example-robot-data``), or None.

    For the PyPI wheel this is ``<site-packages>/cmeel.prefix``, which also carries an ament resource index
    entry for ``example-robot-data``; adding it to ``AMENT_PREFIX_PATH`` makes xacro's
    ``$(find example-robot-data)`` and ``package://example-robot-data/...`` resolve.
    """
    try:
        return example_robot_data_share().parent.parent
    except FileNotFoundError:
        return None
