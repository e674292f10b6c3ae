"""Fixtures shared by the whole suite.

ROS tests run over real DDS on this machine only: every test that touches ROS gets
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a ``ROS_DOMAIN_ID`` of its own (distinct across pytest-xdist
workers, tests in one worker and pytest runs on one machine: :class:`DomainIds`), so tests never see each other's
traffic.

Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) every module is one work unit, so a module's
fixtures are built once, and the modules with a ``ros`` test are one unit together (one ROS node or DDS test at a
time, as in a serial run: :func:`pytest_collection_modifyitems`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import zlib
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


class DomainIds:
    """ROS domain ids reserved machine-wide: two pytest runs on one machine (a developer's and CI's, or two
    worktrees) never share a DDS domain, nor two tests of one run that overlap.

    Each id is held by an exclusive ``flock`` on ``$TMPDIR/robot_state_estimator-ros-domains/<id>.lock`` for as
    long as the test (or module) uses it; the lock goes with the process, so a killed run leaves nothing held.
    Ids are handed out round-robin from a start that depends on the process, so an id just released is not the
    next one taken (a subprocess of the previous test may still be ending).
    """

    #: Fast DDS computes ports for domain ids up to 232; 1..200 leaves room above for other tools
    FIRST, LAST = 1, 200

    def __init__(self) -> None:
        self._dir = Path(tempfile.gettempdir()) / "robot_state_estimator-ros-domains"
        self._dir.mkdir(exist_ok=True)
        self._next = zlib.crc32(str(os.getpid()).encode())

    @contextlib.contextmanager
    def reserve(self) -> Iterator[int]:
        """Yield a domain id that no other holder on this machine has, held until the block ends.

        Raises:
            RuntimeError: every id is held.
        """
        span = self.LAST - self.FIRST + 1
        for _ in range(span):
            domain = self.FIRST + self._next % span
            self._next += 1
            handle = open(self._dir / f"{domain}.lock", "w")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            try:
                yield domain
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                handle.close()
            return
        raise RuntimeError(f"every ROS domain id {self.FIRST}..{self.LAST} is held by another test")


@pytest.fixture(scope="session")
def domain_ids() -> DomainIds:
    """The machine-wide ROS domain id allocator (:class:`DomainIds`)."""
    return DomainIds()


@pytest.fixture
def ros_env(monkeypatch: pytest.MonkeyPatch, domain_ids: DomainIds) -> Iterator[dict[str, str]]:
    """Environment for a ROS test: localhost-only discovery and a domain id no other test on this machine uses.

    Sets the variables in this process (for in-process rclpy) and yields a full environment dict to pass to
    subprocesses.
    """
    with domain_ids.reserve() as domain:
        monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
        monkeypatch.delenv("ROS_LOCALHOST_ONLY", raising=False)
        yield dict(os.environ)


@pytest.fixture(scope="session")
def go1_trot_dir() -> Path:
    """``../shared/data/go1_trot`` (the real Go1 recording); skips the test where it is absent."""
    path = SHARED_DATA / "go1_trot"
    if not (path / "go1.csv").is_file():
        pytest.skip(f"real Go1 data not found at {path} (it lives in ../shared/data next to the repository)")
    return path


#: s, the simulated Go1 trot of :func:`sim_run`
SIM_DURATION_S = 4.0


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory):
    """``(run_dir, SimulatedRun)``: a 4 s Go1 trot with SDF IMU noise, written as the simulate command does (one per
    session, seeded: the tools and evaluation tests share it)."""
    from robot_state_estimator.simulation import generator
    from robot_state_estimator.simulation.bag import write_run_bag
    from robot_state_estimator.simulation.settings import SimulationSettings

    run = generator.simulate(
        SimulationSettings(robot="go1", gait="trot", duration_s=SIM_DURATION_S, seed=7, noise=True)
    )
    run_dir = Path(tmp_path_factory.mktemp("sim")) / "go1_trot"
    write_run_bag(run, run_dir)
    return run_dir, run


#: The xdist work unit of every module holding a ``ros`` test: they run one after the other in one worker.
ROS_GROUP = "ros"


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which appends the group to the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each test an ``xdist_group``: its module's path, or :data:`ROS_GROUP` when any test of the module is
    marked ``ros``. With ``--dist loadgroup`` a module then runs in one worker (its module fixtures built once) and
    the ROS modules run serially; a test's own ``xdist_group`` mark is kept. Nothing is marked without xdist."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    ros_modules = {item.path for item in items if item.get_closest_marker("ros") is not None}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = ROS_GROUP if item.path in ros_modules else str(item.path.relative_to(config.rootpath))
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def sim_replayed(sim_run, tmp_path_factory: pytest.TempPathFactory):
    """``(out, ReplayResult, metrics, run_dir, SimulatedRun)``: ``replay`` of :func:`sim_run`'s bag as the command
    line runs it, with every file output in ``out`` (``odometry`` bag, ``est.tum``, ``metrics.json``, ``plots/``).
    One per session (the replay and plot tests read it; nothing may change it)."""
    import argparse

    from robot_state_estimator.tools import replay

    run_dir, run = sim_run
    out = Path(tmp_path_factory.mktemp("replay"))
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    argv = [str(run_dir / "bag"), "--robot", "go1", "--output", str(out / "odometry"), "--tum", str(out / "est.tum")]
    argv += ["--json", str(out / "metrics.json"), "--plots", str(out / "plots")]
    result, res = replay.run_cli(parser.parse_args(argv))
    return out, result, res, run_dir, run


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
