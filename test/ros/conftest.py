"""Fixtures of the ROS tests: an isolated DDS domain per test module, rclpy contexts, spin helpers.

Every test module gets its own ``ROS_DOMAIN_ID`` (reserved machine-wide by the suite's ``domain_ids``
fixture: no other module, test or pytest run on this machine uses it meanwhile) and
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``. The environment is set in this process while the module runs (for
in-process rclpy) and handed to subprocesses as a dict. Synchronisation is always "spin until a condition holds,
with a timeout", never a sleep.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ros_domain_env(domain_ids: Any) -> Iterator[dict[str, str]]:
    """Environment of this module's ROS tests (also set in ``os.environ`` while the module runs)."""
    with domain_ids.reserve() as domain, pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROS_DOMAIN_ID", str(domain))
        mp.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        mp.delenv("ROS_LOCALHOST_ONLY", raising=False)
        mp.setenv("PYTHONUNBUFFERED", "1")
        mp.setenv("RCUTILS_LOGGING_BUFFERED_STREAM", "0")
        yield dict(os.environ)


@pytest.fixture(scope="module")
def ros_context(ros_domain_env: dict[str, str]) -> Iterator[Any]:
    """An initialised rclpy context on this module's domain (shut down after the module)."""
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(ros_domain_env["ROS_DOMAIN_ID"]))
    yield context
    context.try_shutdown()


def spin_until(executor: Any, condition: Callable[[], bool], *, timeout_s: float = 10.0, step_s: float = 0.01) -> bool:
    """Spin ``executor`` until ``condition()`` is true or ``timeout_s`` passed; return the condition."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return condition()
        executor.spin_once(timeout_sec=step_s)
    return True


@pytest.fixture
def quiet_harness(ros_context, request):
    """A Go1 ``test_node.Harness`` whose diagnostics timer does not fire during the test (reports are triggered
    by hand)."""
    from .test_node import Harness

    name = request.node.name.replace("[", "_").replace("]", "")
    h = Harness(ros_context, f"/{name}", robot="go1", diagnostics_period_s=60.0)
    yield h
    h.close()
