"""Fixtures shared by the whole suite.

ROS tests run over real DDS on this machine only: every test that touches ROS gets
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a ``ROS_DOMAIN_ID`` of its own (distinct across pytest-xdist
workers and across tests in one worker), so tests never see each other's traffic.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

#: Property tests (hypothesis) are deterministic and bounded: the same examples on every run (``derandomize``,
#: no example database), no per-example deadline (a shared 2-core machine), few examples; a test may ask for
#: fewer with its own ``@settings(max_examples=...)``.
settings.register_profile(
    "robot_state_estimator",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=50,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("robot_state_estimator")

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The shared data folder sits next to the repository (``../shared``); absent in some checkouts.
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

_domain_counter = itertools.count()


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker[2:]) if worker[2:].isdigit() else 0


def next_ros_domain_id() -> int:
    """A ROS domain id not used by any other test of this run (1..200; Fast DDS allows up to 232)."""
    return 1 + (_worker_index() % 2) * 100 + next(_domain_counter) % 100


@pytest.fixture
def ros_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Environment for a ROS test: localhost-only discovery and a test-unique domain id.

    Sets the variables in this process (for in-process rclpy) and yields a full environment dict to pass to
    subprocesses.
    """
    domain = str(next_ros_domain_id())
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", domain)
    monkeypatch.delenv("ROS_LOCALHOST_ONLY", raising=False)
    yield dict(os.environ)


@pytest.fixture(scope="session")
def go1_trot_dir() -> Path:
    """``../shared/data/go1_trot`` (the real Go1 recording); skips the test where it is absent."""
    path = SHARED_DATA / "go1_trot"
    if not (path / "go1.csv").is_file():
        pytest.skip(f"real Go1 data not found at {path} (it lives in ../shared/data next to the repository)")
    return path


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """One line saying how many launch tests (``launch_file`` marker: launch_pytest, ``ros2 launch``) ran, and
    why not where they were skipped (also when the whole module is: no launch_pytest)."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    reasons: set[str] = set()
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            module_skip = report.nodeid.endswith("test_launch.py") and outcome == "skipped"
            if not module_skip and "launch_file" not in getattr(report, "keywords", {}):
                continue
            when = getattr(report, "when", None)
            if (outcome == "passed" and when != "call") or (when == "teardown" and outcome != "failed"):
                continue
            key = "failed" if outcome == "error" else outcome
            counts[key] += 1
            if outcome == "skipped" and isinstance(report.longrepr, tuple):
                reasons.add(str(report.longrepr[2]).removeprefix("Skipped: "))
    if not any(counts.values()):
        return
    ran = counts["passed"] + counts["failed"]
    text = f"{ran} run ({counts['passed']} passed, {counts['failed']} failed), {counts['skipped']} skipped"
    why = f": {'; '.join(sorted(reasons))}" if reasons else ""
    terminalreporter.write_line(f"launch tests: {text}{why}")
