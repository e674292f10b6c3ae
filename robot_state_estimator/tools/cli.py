"""The ``robot-state-estimator`` command line: one entry point, one sub-command per offline tool.

Each sub-command lives in its own module, which provides ``add_arguments(parser)`` and ``run(args) -> int``;
modules are imported only when their sub-command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: sub-command -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "info": ("robot_state_estimator.tools.info", "print versions of the package, ROS 2 and pinocchio"),
    "simulate": ("robot_state_estimator.simulation.cli", "generate a legged-robot run with ground truth (mcap)"),
    "import-csv": ("robot_state_estimator.tools.csv_import", "convert a tabular recording to a rosbag2 file"),
    "replay": ("robot_state_estimator.tools.replay", "run the estimator over a bag, write outputs and metrics"),
    "evaluate": ("robot_state_estimator.tools.evaluate", "compare a trajectory with ground truth"),
    "bench": ("robot_state_estimator.tools.bench", "measure throughput, latency and memory; write JSON"),
    "demo": ("robot_state_estimator.tools.demo", "the main job: simulate, replay and evaluate, then the real Go1 run"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robot-state-estimator", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_module, help_text) in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _run(command: str, argv: list[str]) -> int:
    module_name, help_text = SUBCOMMANDS[command]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"robot-state-estimator {command}", description=help_text)
    module.add_arguments(parser)
    args = parser.parse_args(argv)
    return int(module.run(args) or 0)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robot-state-estimator COMMAND [options]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in SUBCOMMANDS:
        build_parser().parse_args(argv)  # prints help or the error, and exits
        return 2
    return _run(argv[0], argv[1:])


def replay_main(argv: list[str] | None = None) -> int:
    """``ros2 run robot_state_estimator replay ...``: the ``replay`` sub-command."""
    return _run("replay", list(sys.argv[1:] if argv is None else argv))


def simulate_main(argv: list[str] | None = None) -> int:
    """``ros2 run robot_state_estimator simulate ...``: the ``simulate`` sub-command."""
    return _run("simulate", list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
