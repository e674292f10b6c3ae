"""``bench``'s ``offline`` sections (``offline``, ``offline_stand``, and from them ``step_cost``): the core fed a
simulated run in memory, no message conversion, on one core and one Python thread."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.samples import ImuSample
from robot_state_estimator.tools.bench_common import (
    percentiles_us,
    rss_kb,
    samples_of,
    steal_percent,
    steal_s,
)

if TYPE_CHECKING:  # imported where used: estimation loads numba, the simulator pinocchio
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.simulation.run import SimulatedRun

#: times the offline runs are fed (the median is reported)
OFFLINE_REPEATS = 5


def _estimator(run: SimulatedRun) -> RobotStateEstimator:
    from robot_state_estimator.common.paths import config_dir
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.tools.replay import split_config

    cfg = config_dir() / f"{run.robot}.yaml"
    settings, _ = split_config(cfg if cfg.exists() else None)
    return RobotStateEstimator.from_description(load_description(run.description_xml), settings)


def bench_offline(run: SimulatedRun, repeats: int = 1) -> dict[str, Any]:
    """Throughput of the core fed in memory, and the cost of each call by kind.

    With ``repeats`` > 1 the run is fed that many times, each to a new estimator, and the repeat with the
    median wall time is returned, with every repeat's realtime factor under ``repeats`` (this machine's
    speed varies by tens of percent from one second to the next, also when nothing else runs).
    """
    if repeats > 1:
        results = [bench_offline(run) for _ in range(repeats)]
        median = sorted(results, key=lambda r: r["wall_s"])[len(results) // 2]
        return {
            **median,
            "repeats": {
                "n": repeats,
                "what": "the repeat with the median wall time is the one reported",
                "realtime_factor": [r["realtime_factor"] for r in results],
                "machine_steal_percent": [r["machine_steal_percent"] for r in results],
                "realtime_factor_best": max(r["realtime_factor"] for r in results),
            },
        }
    samples = samples_of(run)
    est = _estimator(run)
    rss0 = rss_kb().get("VmRSS", 0)
    cost: dict[str, list[int]] = {"imu": [], "joints": []}
    contacts_of_step: list[NDArray[np.bool_] | None] = []
    pc = time.perf_counter_ns
    # the loop's own work kept small (bound methods looked up once): the wall time is mostly the core's
    add_imu, add_joints, pop_events = est.add_imu, est.add_joints, est.pop_events
    imu_cost, joints_cost_append, contacts_append = cost["imu"].append, cost["joints"].append, contacts_of_step.append
    steal0 = steal_s()
    t_start = pc()
    for _, _kind, sample in samples:
        if isinstance(sample, ImuSample):
            t0 = pc()
            add_imu(sample)
            imu_cost(pc() - t0)
        else:
            t0 = pc()
            e = add_joints(sample)
            joints_cost_append(pc() - t0)
            # the core's contact flags of the step (a new array each step, never written after): counting them
            # here through ``e.feet`` would build the FootState objects inside the timed loop
            contacts_append(est.contacts if e is not None else None)
        pop_events()
    wall = (pc() - t_start) / 1e9
    steal = steal_percent(steal0, steal_s(), wall)
    rss1 = rss_kb().get("VmRSS", 0)
    span = (samples[-1][0] - samples[0][0]) / 1e9
    fic = np.asarray([-1 if c is None else int(c.sum()) for c in contacts_of_step])
    joints_cost = np.asarray(cost["joints"])
    by_feet = {str(n): percentiles_us(joints_cost[fic == n]) for n in sorted(set(fic.tolist())) if n >= 0}
    return {
        "gait": run.settings.gait,
        "input_duration_s": span,
        "n_samples": len(samples),
        "wall_s": wall,
        "samples_per_s": len(samples) / wall,
        "realtime_factor": span / wall,
        "imu_step": percentiles_us(cost["imu"]),
        "joint_step": percentiles_us(cost["joints"]),
        "joint_step_by_feet_in_contact": by_feet,
        "rss_growth_kb": rss1 - rss0,
        "machine_steal_percent": steal,
    }


__all__ = ["OFFLINE_REPEATS", "bench_offline"]
