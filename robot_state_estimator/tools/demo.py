"""``robot-state-estimator demo`` (``make demo``): the main job, from nothing.

1. Generate a simulated Go1 trot with exact ground truth (``simulate``; cached in ``OUT/sim_go1_trot_*``, reused
   when present), replay it through the estimator with that ground truth, print the metrics, write plots.
2. When the real Go1 trot (``../shared/data/go1_trot``, see its README) is found, import its CSV into a bag
   (cached), replay it with the motion-capture ground truth (time alignment: offset + rate, then a
   piecewise-linear clock on yaw, as the rows have no stamps; 4-DoF spatial alignment), print ATE and drift as
   % of the path, write plots.

Everything goes to ``--output`` (default ``out/demo``): bags, TUM files, ``metrics.json`` and PNGs per run,
and ``summary.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

GO1_DATA_ENV = "RSE_GO1_DATA"
GO1_DATA_REL = Path("shared") / "data" / "go1_trot"


def find_go1_data(start: Path | None = None) -> Path | None:
    """The folder of the real Go1 trot (``go1.csv`` + ``go1_ground_truth.csv``), or None.

    Looked up, in order: ``$RSE_GO1_DATA``; ``shared/data/go1_trot`` next to the current directory or to any
    of its parents (``../shared/data/go1_trot`` from the repository root); the same from the package's source
    location (for a source checkout or an editable install).
    """
    env = os.environ.get(GO1_DATA_ENV)
    if env:
        p = Path(env)
        return p if (p / "go1.csv").is_file() else None
    roots = [start or Path.cwd(), Path(__file__).resolve().parent]
    seen: set[Path] = set()
    for root in roots:
        for folder in [root.resolve(), *root.resolve().parents]:
            if folder in seen:
                continue
            seen.add(folder)
            cand = folder / GO1_DATA_REL
            if (cand / "go1.csv").is_file() and (cand / "go1_ground_truth.csv").is_file():
                return cand
    return None


def _replay_cli(argv: list[str]) -> tuple[Any, dict[str, Any] | None]:
    from robot_state_estimator.tools import replay

    parser = argparse.ArgumentParser(prog="replay")
    replay.add_arguments(parser)
    return replay.run_cli(parser.parse_args(argv))


def simulated_go1(out: Path, *, duration_s: float, seed: int, fresh: bool) -> Path:
    """The run folder of a simulated Go1 trot (generated, or reused when already there)."""
    from robot_state_estimator.simulation import generator
    from robot_state_estimator.simulation.bag import write_run_bag
    from robot_state_estimator.simulation.settings import SimulationSettings

    run_dir = out / f"sim_go1_trot_{duration_s:g}s_seed{seed}"
    complete = (run_dir / "bag" / "metadata.yaml").exists() and (run_dir / "robot_description.urdf").exists()
    if complete and not fresh:
        if _feet_model_recorded(run_dir / "run.yaml"):
            print(f"[demo] reusing the simulated run in {run_dir}")
            return run_dir
        print(f"[demo] {run_dir} was simulated before the feet's model was recorded (point feet): regenerating")
    print(f"[demo] simulating a {duration_s:g} s Go1 trot (seed {seed}) into {run_dir} ...", flush=True)
    settings = SimulationSettings(robot="go1", gait="trot", duration_s=duration_s, seed=seed, noise=True)
    write_run_bag(generator.simulate(settings), run_dir, overwrite=True)
    return run_dir


def _feet_model_recorded(run_yaml: Path) -> bool:
    """True when ``run.yaml`` names the simulated feet's model (``feet: {model: ...}``), which the simulator writes
    since it rolls spherical feet; older runs had point feet whatever the description said."""
    import yaml

    try:
        info = yaml.safe_load(run_yaml.read_text())
    except (OSError, yaml.YAMLError):
        return False
    feet = info.get("feet") if isinstance(info, dict) else None
    return isinstance(feet, dict) and "model" in feet


def imported_go1(out: Path, data: Path, *, fresh: bool) -> Path:
    """The bag of the real Go1 CSV (imported, or reused)."""
    from robot_state_estimator.common.paths import config_dir
    from robot_state_estimator.tools import csv_import

    bag = out / "go1_trot_real" / "bag"
    # a bag imported before the importer recorded its source (import_source.yaml) is imported again
    if (bag / "metadata.yaml").exists() and (bag / csv_import.IMPORT_SOURCE_FILE).exists() and not fresh:
        print(f"[demo] reusing the imported real Go1 bag {bag}")
        return bag
    if bag.exists():
        import shutil

        shutil.rmtree(bag)
    bag.parent.mkdir(parents=True, exist_ok=True)
    mapping = csv_import.load_mapping(config_dir() / "import" / "go1_trot.yaml")
    s = csv_import.import_csv(data / "go1.csv", mapping, bag)
    print(f"[demo] imported {s.rows} rows of {data / 'go1.csv'} into {bag}")
    return bag


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator demo``."""
    parser.add_argument("--output", default="out/demo", help="folder for bags, metrics and plots")
    parser.add_argument("--duration", type=float, default=20.0, help="s of simulated trot")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw of the simulated run")
    parser.add_argument("--fresh", action="store_true", help="regenerate the simulated run and the imported bag")
    parser.add_argument("--no-real", action="store_true", help="skip the real Go1 run")
    parser.add_argument("--go1-data", help=f"folder of the real Go1 trot; default: found as {GO1_DATA_REL}")


def _replay_errors() -> tuple[type[Exception], ...]:
    """The errors a demo step reports and survives: bad input, the estimator, the ground truth, the metrics."""
    from robot_state_estimator.estimation.errors import EstimationError
    from robot_state_estimator.evaluation.errors import GroundTruthError, MetricsError
    from robot_state_estimator.tools.replay import ReplayError

    return (ReplayError, EstimationError, GroundTruthError, MetricsError)


def _results_folder(out: Path, name: str) -> Path:
    """``out/name``, made, without the output bag of an earlier run (replay refuses to overwrite one)."""
    folder = out / name
    if (folder / "odometry").exists():
        import shutil

        shutil.rmtree(folder / "odometry")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _output_arguments(folder: Path, title: str) -> list[str]:
    """The replay options that write a demo run's outputs into ``folder``: output bag, TUM file, plots, metrics."""
    return [
        "--output",
        str(folder / "odometry"),
        "--tum",
        str(folder / "estimate.tum"),
        "--plots",
        str(folder / "plots"),
        "--json",
        str(folder / "metrics.json"),
        "--title",
        title,
    ]


def _replay_part(summary: dict[str, Any], name: str, argv: list[str], folder: Path, *, label: str) -> int:
    """Replay with ``argv`` and put the run's summary and metrics in ``summary[name]``; returns 0, or 1 when the
    replay failed (the message, naming the ``label`` run, printed on stderr)."""
    try:
        result, res = _replay_cli(argv)
        summary[name] = {"run": result.summary(), "metrics": res, "folder": str(folder)}
    except _replay_errors() as exc:
        print(f"[demo] {label} replay failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


def _simulated_step(out: Path, args: argparse.Namespace, summary: dict[str, Any]) -> int:
    """Step 1: the simulated Go1 trot (generated or reused), replayed with its exact ground truth."""
    run_dir = simulated_go1(out, duration_s=args.duration, seed=args.seed, fresh=args.fresh)
    sim_out = _results_folder(out, "sim_results")
    print("[demo] replaying the simulated run with its ground truth", flush=True)
    argv = [
        str(run_dir / "bag"),
        "--description",
        str(run_dir / "robot_description.urdf"),
        "--robot",
        "go1",
        *_output_arguments(sim_out, "simulated Go1 trot"),
    ]
    return _replay_part(summary, "simulated", argv, sim_out, label="simulated")


def _real_step(out: Path, args: argparse.Namespace, summary: dict[str, Any]) -> int:
    """Step 2: the real Go1 trot (its CSV imported or reused) replayed with the motion capture, when found."""
    data = Path(args.go1_data) if args.go1_data else find_go1_data()
    if data is None or not (data / "go1.csv").is_file():
        print(f"[demo] real Go1 data not found (looked for {GO1_DATA_REL} from {Path.cwd()} and the package); skipped")
        return 0
    bag = imported_go1(out, data, fresh=args.fresh)
    real_out = _results_folder(out, "real_results")
    print(f"[demo] replaying the real Go1 trot with motion capture ({data / 'go1_ground_truth.csv'})", flush=True)
    argv = [
        str(bag),
        "--robot",
        "go1",
        "--ground-truth",
        str(data / "go1_ground_truth.csv"),
        *_output_arguments(real_out, "real Go1 trot"),
    ]
    return _replay_part(summary, "real", argv, real_out, label="real Go1")


def _print_summary(summary: dict[str, Any]) -> None:
    """One line per run: replay speed; with metrics, the 4-DoF ATE and the final drift (m and % of the path) and
    the velocity RMSE (m/s); then where its plots are."""
    print()
    print("[demo] summary")
    for name, part in summary.items():
        m = part.get("metrics") or {}
        r = part["run"]
        line = f"  {name:<9} replay {r['realtime_factor']:.1f}x real time (writing the output bag included)"
        if m:
            line += (
                f"; ATE (4-DoF) {m['ate_4dof']['trans']['rmse']:.3f} m = {m['ate_4dof_pct']:.2f} % of "
                f"{m['path_length_m']:.1f} m; final drift {m['drift']['final_error_m']:.3f} m = "
                f"{m['drift']['final_drift_pct']:.2f} %"
            )
            if m.get("velocity"):
                line += f"; velocity RMSE {m['velocity']['norm']['rmse']:.3f} m/s"
        print(line)
        print(f"            plots in {part['folder']}/plots")


def run(args: argparse.Namespace) -> int:
    """Run the demo; returns 0, or 1 when a step failed (the message says which)."""
    from robot_state_estimator.tools.replay import to_jsonable

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {}
    status = _simulated_step(out, args, summary)
    if not args.no_real:
        status = max(status, _real_step(out, args, summary))
    (out / "summary.json").write_text(json.dumps(to_jsonable(summary), indent=2))
    _print_summary(summary)
    print(f"[demo] wrote {out / 'summary.json'}")
    return status
