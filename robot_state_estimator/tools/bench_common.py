"""What the sections of ``robot-state-estimator bench`` (``tools/bench.py``) share: their error, the simulated Go1
runs they are fed, what they read from ``/proc`` (RSS, CPU time, the hypervisor's steal, a thread's run-queue wait)
and the percentiles of a list of timings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.samples import ImuSample, JointSample

if TYPE_CHECKING:  # imported where used: the simulator loads pinocchio
    from robot_state_estimator.simulation.run import SimulatedRun

#: An input sample of a run in stamp order: ``(stamp_ns, "imu" | "joints", sample)``.
TimedSample = tuple[int, str, ImuSample | JointSample]


class BenchError(RuntimeError):
    """The benchmark cannot run (the node did not start, no odometry came back, ...)."""


# ------------------------------------------------------------------------------------------- /proc
def rss_kb(pid: int | str = "self") -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak) of a process in kB, from ``/proc/<pid>/status`` (the keys the kernel gives)."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        pass
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, s (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime


def steal_s() -> float | None:
    """CPU time the hypervisor took from this (virtual) machine's CPUs, summed over them, s (``steal`` of the
    ``cpu`` line of ``/proc/stat``); None where the kernel does not provide it."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def steal_percent(steal0: float | None, steal1: float | None, wall_s: float) -> float | None:
    """Share of the machine's CPU time taken by the hypervisor over ``wall_s`` (percent of all CPUs)."""
    if steal0 is None or steal1 is None or wall_s <= 0:
        return None
    return 100.0 * (steal1 - steal0) / ((os.cpu_count() or 1) * wall_s)


def main_thread_schedstat(pid: int) -> tuple[int, int, int] | None:
    """``/proc/<pid>/task/<pid>/schedstat`` of a process's main thread: (ns on a CPU, ns waiting on a run
    queue, time slices); None where the kernel does not provide it."""
    try:
        fields = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
        return int(fields[0]), int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def percentiles_us(ns: list[int] | NDArray[np.int64]) -> dict[str, float]:
    """``n``, ``median_us``, ``p99_us``, ``max_us``, ``mean_us`` of timings in ns (``{"n": 0}`` without any)."""
    a = np.asarray(ns, dtype=float) / 1e3
    if a.size == 0:
        return {"n": 0}
    return {
        "n": int(a.size),
        "median_us": float(np.median(a)),
        "p99_us": float(np.percentile(a, 99)),
        "max_us": float(np.max(a)),
        "mean_us": float(np.mean(a)),
    }


# -------------------------------------------------------------------------------------------- input
def simulated_run(gait: str, duration_s: float, *, seed: int = 0) -> SimulatedRun:
    """A simulated Go1 run (IMU 1 kHz, joints 1 kHz, no noise) from ``robot_state_estimator.simulation``."""
    from robot_state_estimator.simulation import generator
    from robot_state_estimator.simulation.settings import SimulationSettings

    return generator.simulate(SimulationSettings(robot="go1", gait=gait, duration_s=duration_s, seed=seed))


def samples_of(run: SimulatedRun) -> list[TimedSample]:
    """``(stamp_ns, "imu"|"joints", sample)`` of a simulated run in stamp order (IMU first on ties)."""
    out: list[TimedSample] = []
    frame = run.imu.frame_id
    for k, s in enumerate(run.imu_stamps_ns.tolist()):
        out.append((s, "imu", ImuSample(s, run.imu_omega[k].copy(), run.imu_f[k].copy(), None, frame)))
    for k, s in enumerate(run.joint_stamps_ns.tolist()):
        out.append(
            (
                s,
                "joints",
                JointSample(
                    s,
                    tuple(run.joint_names),
                    run.joint_position[k].copy(),
                    run.joint_velocity[k].copy(),
                    run.joint_effort[k].copy(),
                ),
            )
        )
    out.sort(key=lambda x: (x[0], 0 if x[1] == "imu" else 1))
    return out


__all__ = [
    "BenchError",
    "TimedSample",
    "cpu_seconds",
    "main_thread_schedstat",
    "percentiles_us",
    "rss_kb",
    "samples_of",
    "simulated_run",
    "steal_percent",
    "steal_s",
]
