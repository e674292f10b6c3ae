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
    parser.add_argument("--json", type=Path, default=None, help="write the result (settings, blocks, summary) here")


def run(args: argparse.Namespace) -> int:
    """Run the Monte Carlo, print one line per block; 0 when every banded block is inside its band, else 1 (height,
    not observable, is reported only)."""
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
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2))
        print(f"wrote {args.json}")
    outside = [k for k, b in doc["blocks"].items() if k != "height" and not b["consistent"]]
    return 1 if outside else 0
