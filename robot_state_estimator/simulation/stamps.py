"""Sample stamps of a simulated run: the IMU's, the joints', and the ground-truth grid (their union).

Each sensor samples at its nominal rate, ``round(k / rate)`` ns, plus an optional uniform stamp jitter (the first
stamp never jittered); the ground truth is generated on the sorted union of both, and each sensor's samples are
indices into that grid. Shared by the quadruped (:mod:`.generator`) and biped (:mod:`.biped`) generators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.simulation.settings import SimulationSettings

FloatArray = NDArray[np.float64]
StampArray = NDArray[np.int64]


def make_stamps(rate_hz: float, duration_s: float, jitter_s: float, rng: np.random.Generator) -> StampArray:
    """(m,) int64 ns offsets from the run start: ``round(k / rate) + U(-jitter, jitter)``, k = 0.. while
    below ``duration_s``; the first stamp is never jittered (it stays at 0)."""
    n = int(np.floor(duration_s * rate_hz + 1e-9)) + 1
    base = np.round(np.arange(n) * (1e9 / rate_hz)).astype(np.int64)
    if jitter_s > 0:
        jitter = np.round(rng.uniform(-jitter_s, jitter_s, n) * 1e9).astype(np.int64)
        jitter[0] = 0
        base = base + jitter
    return base[base <= round(duration_s * 1e9)]


@dataclass(frozen=True)
class TimeGrid:
    """The stamps of a run, relative to its start.

    Attributes:
        grid_rel: (n,) int64 ns, the ground-truth samples: the sorted union of the IMU and joint stamps.
        t: (n,) s, ``grid_rel / 1e9``.
        imu_rel: (m,) int64 ns, the IMU stamps; imu_index: (m,) their indices into ``grid_rel``.
        joint_index: (k,) int64, the indices of the joint stamps into ``grid_rel``.
    """

    grid_rel: StampArray
    t: FloatArray
    imu_rel: StampArray
    imu_index: StampArray
    joint_index: StampArray


def time_grid(settings: SimulationSettings, rng_jitter: np.random.Generator) -> TimeGrid:
    """The IMU stamps, then the joint stamps (both jittered from ``rng_jitter``, in that order), and their union."""
    imu_rel = make_stamps(settings.imu_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    joint_rel = make_stamps(settings.joint_rate_hz, settings.duration_s, settings.jitter_s, rng_jitter)
    grid_rel = np.union1d(imu_rel, joint_rel)
    return TimeGrid(
        grid_rel=grid_rel,
        t=grid_rel / 1e9,
        imu_rel=imu_rel,
        imu_index=np.searchsorted(grid_rel, imu_rel).astype(np.int64),
        joint_index=np.searchsorted(grid_rel, joint_rel).astype(np.int64),
    )
