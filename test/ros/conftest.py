"""Fixtures of the ROS tests: an isolated DDS domain per test module, rclpy contexts, spin helpers.

Every test module gets its own ``ROS_DOMAIN_ID`` (from a hash of the module's node id and of this pytest
process, so two pytest runs on one machine do not share a domain either; 1..100, shifted by 100 on odd
pytest-xdist workers like the suite-wide ``ros_env``) and ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``. The
environment is set in this process while the module runs (for in-process rclpy) and handed to
subprocesses as a dict. Synchronisation is always "spin until a condition holds, with a timeout", never a
sleep.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy (ros-rclpy wheels or a ROS 2 install) is not available")

REPO_ROOT = Path(__file__).resolve().parents[2]
_used_domains: set[int] = set()


def _worker_offset() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return 100 if worker[2:].isdigit() and int(worker[2:]) % 2 else 0


def module_domain_id(nodeid: str) -> int:
    """A domain id in 1..100 (+100 on odd xdist workers) for one test module, distinct within this process."""
    start = zlib.crc32(f"{nodeid}:{os.getpid()}".encode()) % 100
    for i in range(100):
        domain = 1 + (start + i) % 100 + _worker_offset()
        if domain not in _used_domains:
            _used_domains.add(domain)
            return domain
    raise RuntimeError("no free ROS domain id left")  # pragma: no cover


@pytest.fixture(scope="module")
def ros_domain_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """Environment of this module's ROS tests (also set in ``os.environ`` while the module runs)."""
    domain = module_domain_id(request.node.nodeid)
    with pytest.MonkeyPatch.context() as mp:
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
