"""The numeric ranges of the node's parameters (and the frames that must not be empty), in one place without ROS
imports.

``ros/parameters.py`` puts them into the parameter descriptors of the node (``ParamSpec.range``, enforced by
rclpy when a value is set); the offline tools (``tools/replay.py``, ``--set`` and ``--config``) check the same
numbers without importing rclpy. Both ends inclusive.
"""

from __future__ import annotations

#: Node parameter -> (lowest, highest) accepted value, inclusive; units as in README.md, "Parameters".
NODE_PARAMETER_RANGES: dict[str, tuple[float, float]] = {
    "qos_depth": (1, 10000),
    "max_time_gap_s": (0.001, 3600.0),
    "diagnostics_period_s": (0.05, 60.0),
    "odometry_rate_hz": (0.0, 10000.0),
    "contacts_rate_hz": (0.0, 10000.0),
}

#: Frame parameters that must not be empty (the odometry's and the TF's parent frame).
NON_EMPTY_PARAMETERS: tuple[str, ...] = ("odom_frame",)

__all__ = ["NODE_PARAMETER_RANGES", "NON_EMPTY_PARAMETERS"]
