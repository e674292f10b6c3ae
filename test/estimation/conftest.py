"""Fixtures of the estimation tests (the helpers module sits next to this file)."""

from __future__ import annotations

import sys
from pathlib import Path

import pinocchio as pin
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from robot_state_estimator.common.robots import example_robot_urdf


@pytest.fixture(scope="session")
def go1_model() -> pin.Model:
    """The Go1 of example-robot-data with a free-flyer root joint (``root_joint``)."""
    return pin.buildModelFromUrdf(str(example_robot_urdf("go1")), pin.JointModelFreeFlyer())
