"""The ``core`` section of ``robot-state-estimator bench``: the estimator's step for an IMU sample and a joint sample
of a standing Go1 (4 feet in contact: the 4-foot stacked leg update), with its breakdown, and its memory over a long
feed.

- ``pair_cpu_us``: CPU time (``time.process_time``, this process only) of ``add_imu`` + ``add_joints`` +
  ``pop_events`` per IMU and joint sample pair, fed in memory (IMU 1 kHz + joints 1 kHz with positions,
  velocities and efforts; the torque contacts of ``config/go1.yaml`` with the default full dynamics): the median
  over blocks of pairs after the estimator is initialised, no clock read inside a block, the garbage collector
  paused as a node's loop leaves it (no collection while streaming). ``add_imu_us`` / ``add_joints_us``: the median
  of each call's wall time (``perf_counter_ns``) over the rest of the feed.
- ``parts_us``: the compiled step's parts, each in a compiled loop from the state at the end of the feed
  (``JointStep.part_costs``): ``propagation`` (the IMU sample's kernel: check, propagation, outputs),
  ``kinematics`` (foot placements and Jacobians, the centre-of-mass Jacobian, RNEA with the estimated accelerations),
  ``contact_logic`` (point-foot forces, Schmitt trigger), ``update`` (the 4 feet's stacked leg update in Joseph
  form, the outputs); ``rest_us``: the pair's time less the parts (the Python around the two compiled calls: the
  joint preparation kernel, the checks, the ``Estimate`` objects, the event log).
- ``memory``: RSS (``/proc/self/status``) of this process after two feeds of a simulated 10 s Go1 trot (the second
  with its stamps shifted on) and after 200,000 more samples (the trot fed again and again, its stamps shifted on,
  the samples made one at a time), and the growth per 100,000 samples.
- ``target_us``: issue 18's target for the pair, 16 us (twice mim_estimation's C++ step on a quiet run here).

:func:`speed_reference` is the same pair cost, short, as the machine's speed next to the node cases: the node's CPU
per input in core steps measured in the same minutes is comparable between hours when the machine's speed is not
(it varied up to 4x between hours here).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from robot_state_estimator.common.samples import ImuSample, JointSample

#: us, issue 18's target for the IMU + 4-foot step on this machine
TARGET_US = 16.0
#: us, issue 18's target for the node's CPU per input at IMU 1 kHz + joints 1 kHz (odometry at every estimate)
NODE_TARGET_US = 100.0


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _pairs(samples: list[tuple[int, str, Any]]) -> list[tuple[ImuSample, JointSample]]:
    """(IMU, joints) pairs of the same stamp, in order."""
    out = []
    for (s0, k0, a), (s1, k1, b) in zip(samples[::2], samples[1::2]):
        if k0 == "imu" and k1 == "joints" and s0 == s1:
            out.append((a, b))
    return out


def _feed(est: Any, pairs: Iterable[tuple[ImuSample, JointSample]]) -> None:
    add_imu, add_joints, pop = est.add_imu, est.add_joints, est.pop_events
    for imu, joints in pairs:
        add_imu(imu)
        add_joints(joints)
        pop()


def pair_costs(est: Any, pairs: list[tuple[ImuSample, JointSample]], block: int) -> dict[str, Any]:
    """CPU per pair (median of blocks of ``block`` pairs, no per-call clock in the loop), then each call's median
    wall time (a second pass over the second half of ``pairs``, a clock read around each call), fed to ``est``."""
    add_imu, add_joints, pop = est.add_imu, est.add_joints, est.pop_events
    half = len(pairs) // 2
    blocks: list[float] = []
    imu_ns: list[int] = []
    joint_ns: list[int] = []
    pc = time.perf_counter_ns
    enabled = gc.isenabled()
    gc.disable()
    try:
        for b in range(0, half - block + 1, block):
            chunk = pairs[b : b + block]
            t_cpu = time.process_time()
            for imu, joints in chunk:
                add_imu(imu)
                add_joints(joints)
                pop()
            blocks.append((time.process_time() - t_cpu) / block * 1e6)
        for imu, joints in pairs[half:]:
            t0 = pc()
            add_imu(imu)
            t1 = pc()
            add_joints(joints)
            t2 = pc()
            pop()
            imu_ns.append(t1 - t0)
            joint_ns.append(t2 - t1)
    finally:
        if enabled:
            gc.enable()
    return {
        "pair_cpu_us": float(np.median(blocks)),
        "pair_cpu_us_blocks": [round(b, 2) for b in blocks],
        "add_imu_us": float(np.median(imu_ns)) / 1e3,
        "add_joints_us": float(np.median(joint_ns)) / 1e3,
        "n_pairs": half + len(imu_ns),
    }


def _shifted(pairs: list[tuple[ImuSample, JointSample]], offset_ns: int) -> Iterator[tuple[ImuSample, JointSample]]:
    """The pairs with their stamps moved by ``offset_ns``, made one at a time (the harness keeps no list)."""
    for i, j in pairs:
        yield (
            ImuSample(
                i.stamp_ns + offset_ns, i.angular_velocity, i.linear_acceleration, i.orientation_xyzw, i.frame_id
            ),
            JointSample(j.stamp_ns + offset_ns, j.names, j.position, j.velocity, j.effort),
        )


def memory_growth(est: Any, pairs: list[tuple[ImuSample, JointSample]], n_samples: int) -> dict[str, Any]:
    """RSS before and after feeding ``n_samples`` more samples to ``est`` (``pairs`` again and again, stamps shifted
    on), after one shifted feed that warms the allocator up."""
    # each feed starts one sample period after the last one's end
    offset = pairs[-1][0].stamp_ns - pairs[0][0].stamp_ns + (pairs[1][0].stamp_ns - pairs[0][0].stamp_ns)
    _feed(est, _shifted(pairs, offset))
    gc.collect()
    rss0 = _rss_kb()
    fed = 0
    k = 2
    while fed < n_samples:
        _feed(est, _shifted(pairs, k * offset))
        fed += 2 * len(pairs)
        k += 1
    gc.collect()
    rss1 = _rss_kb()
    return {
        "samples": fed,
        "rss_start_kb": rss0,
        "rss_end_kb": rss1,
        "rss_growth_kb_per_100k_samples": (rss1 - rss0) * 100_000 / fed,
        "initialized_at_end": bool(est.initialized),
    }


def _warmed(stand: Any) -> tuple[Any, list[tuple[ImuSample, JointSample]]]:
    """An estimator of ``stand``'s robot fed the first fifth of its pairs (initialisation: the static window, and
    the first steps), and the pairs left."""
    from robot_state_estimator.tools.bench_common import samples_of
    from robot_state_estimator.tools.bench_offline import _estimator

    pairs = _pairs(samples_of(stand))
    est = _estimator(stand)
    warm = len(pairs) // 5
    _feed(est, pairs[:warm])
    return est, pairs[warm:]


def bench_core(stand: Any, trot: Any, *, short: bool = False) -> dict[str, Any]:
    """The section (module docstring) on a simulated standing Go1 and trot (``bench_common.simulated_run``)."""
    from robot_state_estimator.tools.bench_common import samples_of
    from robot_state_estimator.tools.bench_offline import _estimator

    est, rest = _warmed(stand)
    block = 100 if short else 500
    doc: dict[str, Any] = {
        "robot": "go1 standing (4 feet in contact), IMU 1 kHz + joints 1 kHz",
        "target_us": TARGET_US,
    }
    doc.update(pair_costs(est, rest, block))
    doc["feet_in_contact_at_end"] = int(est.contacts.sum())
    doc["full_dynamics"] = bool(est.settings.contact.use_full_dynamics)
    step = est.legs.joint_step
    if step is not None and hasattr(step, "part_costs"):
        last = rest[-1][1]
        tau = np.asarray(last.effort, dtype=float)[est.legs.joint_input.gather]
        qtau = np.ascontiguousarray(np.stack([est.legs.q_joints, est.legs.qdot_joints, tau]))
        parts = step.part_costs(qtau, int(est.ekf.stamp_ns or 0), repeats=200 if short else 2000)
        doc["parts_us"] = parts
        doc["rest_us"] = doc["pair_cpu_us"] - sum(parts.values())
    trot_pairs = _pairs(samples_of(trot))
    trot_est = _estimator(trot)
    _feed(trot_est, trot_pairs)
    doc["memory"] = memory_growth(trot_est, trot_pairs, 20_000 if short else 200_000)
    return doc


def speed_reference(stand: Any, *, short: bool = False) -> float:
    """The machine's speed now: the core pair's CPU (``pair_cpu_us`` of :func:`pair_costs`, us) on the standing
    Go1 ``stand`` (``bench_common.simulated_run("stand", ...)``), fed after the estimator's initialisation and
    first steps, blocks of 100 pairs (a few seconds)."""
    est, pairs = _warmed(stand)
    return float(pair_costs(est, pairs, 50 if short else 100)["pair_cpu_us"])


def summary_lines(doc: dict[str, Any]) -> list[str]:
    """Headline numbers of the section."""
    lines = [
        f"core step, IMU + 4-foot joint sample (Go1 standing): {doc['pair_cpu_us']:.1f} us CPU per pair "
        f"(target {doc['target_us']:.0f}); add_imu {doc['add_imu_us']:.1f} us, add_joints {doc['add_joints_us']:.1f} "
        "us (median wall)"
    ]
    parts = doc.get("parts_us")
    if parts:
        lines.append(
            "  of which compiled: " + ", ".join(f"{k} {v:.2f} us" for k, v in parts.items())
            + f"; the rest (Python around the calls) {doc['rest_us']:.1f} us"
        )  # fmt: skip
    m = doc["memory"]
    lines.append(
        f"  memory: RSS {m['rss_end_kb'] / 1024:.0f} MiB after {m['samples']:,} more samples, growth "
        f"{m['rss_growth_kb_per_100k_samples']:+.0f} kB per 100,000 samples"
    )
    return lines
