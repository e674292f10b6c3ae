"""The robot-state-estimator command line: one entry point, one sub-command per offline tool.

Each sub-command lives in its own module, which provides ``add_arguments(parser)`` and ``run(args) -> int``;
modules are imported only when their sub-command runs, so ``--help`` stays fast. The project's own errors
(a bad description, settings, bag, mapping, ...) end the command with one line naming the problem and exit
code 2; set ``RSE_DEBUG=1`` to get the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

#: sub-command -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "info": (
        "robot_state_estimator.tools.info",
        "print versions; with a description, what the estimator uses for that robot (--write-config: a template)",
    ),
    "simulate": ("robot_state_estimator.tools.simulate", "generate a legged-robot run with ground truth (mcap)"),
    "import-csv": ("robot_state_estimator.tools.csv_import", "convert a tabular recording to a rosbag2 file"),
    "replay": ("robot_state_estimator.tools.replay", "run the estimator over a bag, write outputs and metrics"),
    "evaluate": ("robot_state_estimator.tools.evaluate", "compare a trajectory with ground truth"),
    "bench": ("robot_state_estimator.tools.bench", "measure throughput, latency and memory; write JSON"),
    "consistency": (
        "robot_state_estimator.tools.consistency_cli",
        "the filter's NEES by Monte Carlo through the simulator (simulated Go1 trots with a real robot's errors)",
    ),
    "demo": ("robot_state_estimator.tools.demo", "the main job: simulate, replay and evaluate, then the real Go1 run"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robot-state-estimator", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_module, help_text) in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


#: (module, class) of the errors that mean bad input, not a bug: reported in one line.
USER_ERRORS: tuple[tuple[str, str], ...] = (
    ("robot_state_estimator.description.errors", "DescriptionError"),
    ("robot_state_estimator.estimation.errors", "EstimationError"),
    ("robot_state_estimator.sensors.errors", "SensorError"),
    ("robot_state_estimator.simulation.errors", "SimulationError"),
    ("robot_state_estimator.io.bags", "BagError"),
    ("robot_state_estimator.io.messages", "MessageError"),
    ("robot_state_estimator.tools.replay", "ReplayError"),
    ("robot_state_estimator.tools.csv_import", "CsvImportError"),
    ("robot_state_estimator.evaluation.errors", "GroundTruthError"),
    ("robot_state_estimator.evaluation.errors", "MetricsError"),
    ("robot_state_estimator.tools.bench_common", "BenchError"),
    ("robot_state_estimator.tools.info", "InfoError"),
)


def _is_user_error(exc: BaseException) -> bool:
    if isinstance(exc, (FileNotFoundError, KeyError)):  # missing files, unknown bundled robot names
        return True
    for module_name, class_name in USER_ERRORS:
        module = sys.modules.get(module_name)  # only modules that ran can have raised
        if module is not None and isinstance(exc, getattr(module, class_name)):
            return True
    return False


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults in the help, written as a user types them: ``--noise/--no-noise`` flags name the one that
    is the default; nothing is added where there is nothing to say (a default of None, False, "" or [], i.e. a
    required option, a plain flag, an option left out; or a help text that gives the default itself, which must
    then not be Python's ``None``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if "default" in text.lower():
            return text
        if isinstance(action, argparse.BooleanOptionalAction) and isinstance(default, bool):
            flags = [o for o in action.option_strings if o.startswith("--no-") != default]
            return f"{text} (default: {flags[0]})" if flags else text
        if default is None or default is False or (isinstance(default, (str, list, tuple)) and not default):
            return text
        return super()._get_help_string(action)


def _one_line_warning(command: str) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints the project's own warnings (a ``DescriptionWarning``: what loads here
    but Gazebo reads differently) as one line naming the command, as its errors are, instead of Python's
    ``file:line: Category: message`` plus the source line of the call; other warnings are shown as Python does."""
    default = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, *rest: Any) -> None:
        if category.__module__.startswith("robot_state_estimator."):
            print(f"robot-state-estimator {command}: warning: {message}", file=sys.stderr)
        else:
            default(message, category, filename, lineno, *rest)

    return show


def _run(command: str, argv: list[str]) -> int:
    module_name, help_text = SUBCOMMANDS[command]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(
        prog=f"robot-state-estimator {command}",
        description=help_text,
        formatter_class=_DefaultsHelpFormatter,
    )
    module.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(command)
            return int(module.run(args) or 0)
    except Exception as exc:
        if os.environ.get("RSE_DEBUG") or not _is_user_error(exc):
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"robot-state-estimator {command}: error: {message}", file=sys.stderr)
        return 2


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
