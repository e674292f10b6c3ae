"""``robot-state-estimator consistency``: the Go1 trot Monte Carlo of :mod:`.consistency` from the command line (the
suite's and ``make bench``'s test, at any number of runs and rates): per block the N-run average NEES, its time
average against the band of the effective number of independent times, and the share of times inside the per-time
band (Bar-Shalom's test; docs/uncertainty.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the ``consistency`` sub-command."""
    parser.add_argument("--runs", type=int, default=4, help="number of simulated trots (seeds 1..N)")
    parser.add_argument("--duration", type=float, default=4.0, help="s, each run's length (evaluated from 1.5 s)")
    parser.add_argument("--imu-rate", type=float, default=None, help="Hz, the simulated IMU's rate (default: 1000)")
    parser.add_argument("--joint-rate", type=float, default=None, help="Hz, the joint samples' rate (default: 1000)")
    parser.add_argument("--json", type=Path, default=None, help="write the result (settings, blocks, verdict) here")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit status 1 also when a block is below its band (conservative); without it 1 only when a block other "
        "than height (not observable, reported only) is above its band (over-confident), else 0",
    )


def run(args: argparse.Namespace) -> int:
    """Run the Monte Carlo, print one line per block, the unobservable directions' growth and a verdict; exit status
    1 when a block other than height (not observable, reported only) is above its band (over-confident), or with
    ``--strict`` below it (conservative), else 0."""
    from robot_state_estimator.simulation.errors import SimulationError
    from robot_state_estimator.tools.consistency import consistency_document

    if args.runs < 1 or not args.duration > 1.5:
        raise SimulationError(f"--runs >= 1 and --duration > 1.5 s (the evaluation starts at 1.5 s), got {args.runs}, "
                         f"{args.duration}")  # fmt: skip
    doc = consistency_document(args.runs, args.duration, imu_rate_hz=args.imu_rate, joint_rate_hz=args.joint_rate)
    st = doc["settings"]
    rates = f"IMU {st.get('imu_rate_hz', 1000.0):g} Hz, joints {st.get('joint_rate_hz', 1000.0):g} Hz"
    print(f"Monte Carlo NEES, {args.runs} Go1 trots of {args.duration:g} s with a real robot's errors ({rates}):")
    for line in doc["summary"]:
        print(f"  {line}")
    u = doc["unobservable"]
    growth = ", ".join(
        f"{name} {1e3 * a:.1f} -> {1e3 * b:.1f} (error RMS {1e3 * c:.1f} -> {1e3 * d:.1f})"
        for name, a, b, c, d in zip(("x mm", "y mm", "yaw mrad"), u["std_first"], u["std_last"],
                                    u["error_rms_first_s"], u["error_rms_last_s"])
    )  # fmt: skip
    print(f"  unobservable, the filter's stddev first -> last: {growth}")
    over = [k for k, b in doc["blocks"].items() if k != "height" and b["time_average"] > b["band95_time_average"][1]]
    under = [k for k, b in doc["blocks"].items() if k != "height" and b["time_average"] < b["band95_time_average"][0]]
    code = 1 if over or (args.strict and under) else 0
    doc["verdict"] = {"over_confident": over, "conservative": under, "strict": bool(args.strict), "exit_status": code}
    if not over and not under:
        print("verdict: every banded block inside its band")
    else:
        parts = [
            f"{label}: {', '.join(names)}"
            for label, names in (("over-confident (above the band)", over), ("conservative (below the band)", under))
            if names
        ]
        print("verdict: " + "; ".join(parts) + f" (exit status {code})")  # fmt: skip
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2))
        print(f"wrote {args.json}")
    return code
