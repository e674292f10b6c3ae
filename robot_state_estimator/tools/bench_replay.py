"""``make bench``'s replay section: replay's real-time factor by CPU time, and what each part costs per message.

Two inputs: the bench's simulated Go1 trot (IMU 1 kHz + joints 1 kHz, with efforts: contacts from torques, so the
wrenches are output) and, when ``../shared/data/go1_trot`` is there, the real Go1 recording imported from its CSV
(25.4 s, IMU, joints and foot sensors at 400 Hz; contacts from the foot sensors, so no wrench is output). Each is
replayed with the TUM output only (no output bag: ``replay`` without ``--output``) and with the full output bag
(odometry, /tf, wrenches, contact states; zstd chunks: ``replay``'s defaults).

By CPU time (``time.process_time``, this process only: the machine's other load shows in the wall times, not here),
from :class:`tools.replay.ReplayCpu` (a few clock reads per run, no per-message timing):

- ``read``: opening the bag, reading the records (rosbags), decoding them in bulk and making the samples, ordering;
- ``core``: the core's ``add_*`` calls, measured apart: the samples the core got in a first replay are fed again to a
  new estimator of the same description and settings (nothing else in the loop); ``core_feet``: reading each
  estimate's per-foot states (``Estimate.feet``, objects the core makes when first read, which every output reads):
  the same feed with them read, less the feed without;
- ``adapter_and_log``: the rest of the loop: the adapter rules (``io.stream``), the driver, the estimate log and
  holding the output messages (the loop's CPU minus the core's and its feet states');
- ``write``: encoding the output messages (``encode``) and writing their records (``records``: rosbags' writer, zstd).

Per message: ``read``, ``adapter_and_log`` and ``core`` per input message, ``write`` per output message. Each figure
is the median of ``repeats`` runs.
"""

from __future__ import annotations

import gc
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

#: bench-section name -> what it is
CASES = {
    "simulated_1k_1k": "simulated Go1 trot, IMU 1 kHz + joints 1 kHz (efforts: contacts from torques)",
    "go1_real": "real Go1 trot, IMU + joints + foot sensors 400 Hz (contacts from the foot sensors)",
}


def _timed_core() -> tuple[Any, dict[str, float]]:
    """Class-level wrappers around ``RobotStateEstimator.add_imu``/``add_joints``/``add_foot_forces`` that add
    up the wall time spent in them (the real methods run; about 0.2 us of overhead per call). Returns a restore
    function and the totals (s, by method name)."""
    from robot_state_estimator.estimation import RobotStateEstimator

    totals: dict[str, float] = {}
    originals = {}
    clock = time.perf_counter
    for name in ("add_imu", "add_joints", "add_foot_forces"):
        original = originals[name] = getattr(RobotStateEstimator, name)
        totals[name] = 0.0

        def timed(self: Any, sample: Any, _f: Any = original, _name: str = name) -> Any:
            t = clock()
            try:
                return _f(self, sample)
            finally:
                totals[_name] += clock() - t

        setattr(RobotStateEstimator, name, timed)

    def restore() -> None:
        for name, original in originals.items():
            setattr(RobotStateEstimator, name, original)

    return restore, totals


def bench_replay(
    run_dir: Path, description: str, *, output_bag: bool = True, config: Path | None = None
) -> dict[str, Any]:
    """``replay`` over the bag of a simulated run, split into its parts.

    With ``output_bag`` (the ``replay`` entry), the output bag gets everything the node publishes (odometry,
    /tf, the wrenches and the contact states, zstd chunks: ``replay``'s defaults); without it (the
    ``replay_no_bag`` entry) nothing is written, as ``replay`` without ``--output`` (metrics, TUM).

    Returns:
        ``read_wall_s`` (reading, deserializing and ordering the input), ``wall_s`` (the loop: message
        conversion, the node's adapter rules, the core, the log and writing the output bag), of which
        ``core_wall_s`` (inside the core's ``add_*`` calls) and ``write_wall_s`` (building, serializing and
        writing the output messages, plus closing the bag), ``total_wall_s`` (from reading to the closed bag),
        ``samples_per_s`` and ``realtime_factor`` (on ``wall_s``, as before), ``realtime_factor_total`` (on
        ``total_wall_s``), ``output_bag_mb``, and ``call_wall_s``/``call_cpu_s`` of the whole ``replay`` call
        (set-up included; a CPU time well below the wall time means other processes shared the cores), and ``cpu``:
        the CPU time of the parts (:func:`_cpu_parts`).
    """
    from robot_state_estimator.common.paths import config_dir
    from robot_state_estimator.tools import replay

    settings, params = replay.split_config(config or config_dir() / "go1.yaml")
    opts = replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, **params}, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out" if output_bag else None
        restore, core = _timed_core()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            r = replay.replay(run_dir, description=description, settings=settings, options=opts, output_bag=out)
        finally:
            restore()
        call_wall, call_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        size = sum(f.stat().st_size for f in out.iterdir()) if out is not None else 0
    return {
        "output_bag": None
        if out is None
        else {"topics": list(opts.output_topics), "compression": opts.output_compression},
        "n_samples": r.n_inputs,
        "input_duration_s": r.input_duration_s,
        "read_wall_s": r.read_s,
        "wall_s": r.wall_s,
        "core_wall_s": sum(core.values()),
        "write_wall_s": r.write_s,
        "total_wall_s": r.total_s,
        "samples_per_s": r.n_inputs / r.wall_s,
        "realtime_factor": r.realtime_factor,
        "realtime_factor_total": r.realtime_factor_total,
        "output_bag_mb": size / 1e6,
        # the whole call (set-up included): CPU time well below the wall time means other processes had the cores
        "call_wall_s": call_wall,
        "call_cpu_s": call_cpu,
        "cpu": _cpu_parts(r),
    }


def _cpu_parts(r: Any) -> dict[str, Any]:
    """The CPU time of a replay's parts (``ReplayResult.cpu``), s, and its real-time factor by CPU time."""
    c = r.cpu
    return {
        "read_s": c.read_s,
        "loop_s": c.loop_s,
        "write_s": c.write_s,
        "encode_s": c.encode_s,
        "total_s": c.total_s,
        "output_messages": c.output_messages,
        "realtime_factor": r.realtime_factor_cpu,
    }


def _captured_samples(run_dir: Path, description: str, config: Path | None) -> tuple[list[tuple[str, Any]], Any]:
    """The samples the core gets in a replay of ``run_dir`` (method name, sample), in order, and that replay's
    description (as replay loaded it)."""
    from robot_state_estimator.common.paths import config_dir
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.tools import replay

    settings, params = replay.split_config(config or config_dir() / "go1.yaml")
    opts = replay.ReplayOptions(node_params={**replay.NODE_DEFAULTS, **params}, progress=False)
    calls: list[tuple[str, Any]] = []
    originals = {}
    for name in ("add_imu", "add_joints", "add_foot_forces", "add_foot_wrench", "add_contact_schedule"):
        original = originals[name] = getattr(RobotStateEstimator, name)

        def captured(self: Any, sample: Any, _f: Any = original, _name: str = name) -> Any:
            calls.append((_name, sample))
            return _f(self, sample)

        setattr(RobotStateEstimator, name, captured)
    try:
        r = replay.replay(run_dir, description=description, settings=settings, options=opts)
    finally:
        for name, original in originals.items():
            setattr(RobotStateEstimator, name, original)
    return calls, r.description


def core_cpu_s(calls: list[tuple[str, Any]], desc: Any, settings: Any, *, outputs: bool = False) -> float:
    """CPU s of feeding ``calls`` (method name, sample) to a new estimator of ``desc`` and ``settings``, events
    popped after each call as the adapter does (nothing else timed); with ``outputs``, each estimate's per-foot
    states read too (``Estimate.feet``: made when first read, as every output of replay and the node reads them)."""
    from robot_state_estimator.estimation import RobotStateEstimator

    est = RobotStateEstimator.from_description(desc, settings)
    bound = [(getattr(est, name), sample) for name, sample in calls]
    pop = est.pop_events
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        t = time.process_time()
        if outputs:
            for add, sample in bound:
                estimate = add(sample)
                pop()
                if estimate is not None:
                    estimate.feet  # noqa: B018 (made when first read)
        else:
            for add, sample in bound:
                add(sample)
                pop()
        return time.process_time() - t
    finally:
        if not frozen_before:
            gc.unfreeze()


def bench_replay_case(
    run_dir: Path, description: str, *, config: Path | None = None, repeats: int = 3
) -> dict[str, Any]:
    """One input: replay with the TUM output only and with the full output bag (``repeats`` times each), the core
    alone on the same samples; the CPU per message of each part (module docstring). Medians of the repeats."""
    from robot_state_estimator.common.paths import config_dir
    from robot_state_estimator.tools import replay

    settings, _ = replay.split_config(config or config_dir() / "go1.yaml")
    calls, desc = _captured_samples(run_dir, description, config)  # also the warm-up
    core = statistics.median(core_cpu_s(calls, desc, settings) for _ in range(repeats))
    with_feet = statistics.median(core_cpu_s(calls, desc, settings, outputs=True) for _ in range(repeats))
    feet = max(0.0, with_feet - core)
    out: dict[str, Any] = {"core_samples": len(calls), "core_cpu_s": core, "core_feet_cpu_s": feet}
    for key, output_bag in (("tum", False), ("full_bag", True)):
        runs = [bench_replay(run_dir, description, output_bag=output_bag, config=config) for _ in range(repeats)]
        cpu = {k: statistics.median(r["cpu"][k] for r in runs) for k in runs[0]["cpu"]}
        n_in, n_out = runs[0]["n_samples"], cpu["output_messages"]
        out["input_messages"], out["input_duration_s"] = n_in, runs[0]["input_duration_s"]
        out[key] = {
            "realtime_factor_cpu": runs[0]["input_duration_s"] / cpu["total_s"],
            "realtime_factor_wall": statistics.median(r["realtime_factor_total"] for r in runs),
            "cpu_s": cpu,
            "per_message_us": {
                "read": 1e6 * cpu["read_s"] / n_in,
                "adapter_and_log": 1e6 * (cpu["loop_s"] - core - feet) / n_in,
                "core": 1e6 * core / n_in,
                "core_feet": 1e6 * feet / n_in,
                **(
                    {
                        "write": 1e6 * cpu["write_s"] / n_out,
                        "encode": 1e6 * cpu["encode_s"] / n_out,
                        "records": 1e6 * (cpu["write_s"] - cpu["encode_s"]) / n_out,
                    }
                    if n_out
                    else {}
                ),
            },
            "output_messages": int(n_out),
            "output_bag_mb": runs[0]["output_bag_mb"],
        }
    return out


def bench_replay_section(sim_bag: Path, sim_description: str, *, short: bool) -> dict[str, Any]:
    """``make bench``'s ``replay`` section: :func:`bench_replay_case` of the simulated bag and of the real Go1
    (skipped with the reason when its data is absent, and with ``short``)."""
    from robot_state_estimator.common.paths import config_dir, robot_description_path
    from robot_state_estimator.tools import csv_import
    from robot_state_estimator.tools.demo import find_go1_data

    repeats = 1 if short else 3
    section: dict[str, Any] = {"cases": CASES, "repeats": repeats}
    section["simulated_1k_1k"] = bench_replay_case(sim_bag, sim_description, repeats=repeats)
    data = find_go1_data()
    if short:
        section["go1_real"] = {"skipped": "--short"}
    elif data is None:
        section["go1_real"] = {"skipped": "../shared/data/go1_trot not found"}
    else:
        with tempfile.TemporaryDirectory() as tmp:
            bag = Path(tmp) / "bag"
            mapping = csv_import.load_mapping(config_dir() / "import" / "go1_trot.yaml")
            csv_import.import_csv(data / "go1.csv", mapping, bag)
            section["go1_real"] = bench_replay_case(bag, str(robot_description_path("go1")), repeats=repeats)
    return section


def summary_lines(section: dict[str, Any]) -> list[str]:
    """One line per input and output: real-time factor by CPU time and the CPU per message of each part."""
    lines = []
    for case in CASES:
        c = section.get(case)
        if not c:
            continue
        if "skipped" in c:
            lines.append(f"replay {case}: skipped ({c['skipped']})")
            continue
        for key, what in (("tum", "TUM only"), ("full_bag", "full output bag")):
            r = c[key]
            us = r["per_message_us"]
            write = (
                f", write {us['write']:.1f} us/output msg (encode {us['encode']:.1f}, records {us['records']:.1f}; "
                f"{r['output_messages']} msgs)"
                if "write" in us
                else ""
            )
            lines.append(
                f"replay {case}, {what}: {r['realtime_factor_cpu']:.1f}x real time by CPU "
                f"({r['realtime_factor_wall']:.1f}x wall); per input msg: read {us['read']:.1f} us, adapter+log "
                f"{us['adapter_and_log']:.1f} us, core {us['core']:.1f} us + its feet states {us['core_feet']:.1f} "
                f"us{write}"
            )
    return lines
