"""``robot-state-estimator replay``'s command line: its arguments, their checks before the run, the run, and what
it prints and writes (TUM, JSON, plots)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from robot_state_estimator.estimation.jit import kernels_need_compiling
from robot_state_estimator.evaluation.errors import MetricsError
from robot_state_estimator.evaluation.ground_truth import (
    GroundTruth,
    is_bag,
    load_ground_truth,
    output_path_problem,
    write_tum,
)
from robot_state_estimator.io.node_params import NODE_ONLY_PARAMETERS
from robot_state_estimator.tools.replay.driver import replay
from robot_state_estimator.tools.replay.errors import ReplayError
from robot_state_estimator.tools.replay.options import (
    DEFAULT_OUTPUT_COMPRESSION,
    NODE_DEFAULTS,
    OUTPUT_GROUPS,
    ReplayOptions,
    apply_overrides,
    resolve_config,
    resolve_description,
    split_config,
)
from robot_state_estimator.tools.replay.result import ReplayResult
from robot_state_estimator.tools.replay.truth import (
    aligned_ground_truth,
    alignment_reference,
    evaluate_replay,
    ground_truth_time_span,
)


# ------------------------------------------------------------------------------------------------ CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator replay``: the input and its settings, the outputs, the ground truth,
    the input topics, the progress bar and the title."""
    _add_input_arguments(parser)
    _add_output_arguments(parser)
    _add_ground_truth_arguments(parser)
    _add_topic_arguments(parser)
    _add_display_arguments(parser)


def _add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="rosbag2 directory or file (mcap, sqlite3) or ROS 1 bag")
    parser.add_argument(
        "--description",
        help="robot description (URDF/xacro/SDF); default: robot_description.urdf next to "
        "the input, else the bundled --robot's",
    )
    parser.add_argument("--robot", help="bundled robot (go1, solo12, anymal_c): description and config/<robot>.yaml")
    parser.add_argument(
        "--config",
        help="estimator settings YAML (node parameter-file layout); 'none': the built-in defaults; default: "
        "config/<robot>.yaml with --robot, else the built-in defaults",
    )
    parser.add_argument(
        "--imu",
        metavar="NAME",
        help="the IMU to use when the description has several (the setting imu_name); default: the only one",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override one setting or node parameter (dotted name, YAML value), e.g. ekf.foot_gate_nis=20",
    )


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        help="mcap bag directory to write with the node's outputs (see --output-topics); none is written without "
        "it (faster when only metrics or --tum are wanted)",
    )
    parser.add_argument(
        "--output-topics",
        nargs="+",
        choices=list(OUTPUT_GROUPS),
        default=None,
        metavar="GROUP",
        help="what --output gets, any of: odometry (nav_msgs/Odometry), tf (/tf), wrenches (contact_wrench/<foot>), "
        "contacts (contact_states); default: all four; needs --output",
    )
    parser.add_argument(
        "--output-compression",
        choices=["zstd", "none"],
        default=DEFAULT_OUTPUT_COMPRESSION,
        help="chunk compression of the --output mcap (zstd: a third of the size, for about 6 ms per MB written)",
    )
    parser.add_argument("--tum", help="TUM trajectory file to write")


def _add_ground_truth_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ground-truth",
        help="'bag' (the Odometry topic of the input), a bag, a TUM file, or an unstamped mocap CSV; "
        "default: the input's ground-truth topic when present",
    )
    parser.add_argument(
        "--time-span",
        nargs=2,
        type=float,
        metavar=("T0", "T1"),
        help="s, in the input's stamps: the span the rows of an unstamped ground-truth CSV cover (the full "
        "recording when INPUT is a slice of it); default: the source span recorded by import-csv "
        "(import_source.yaml), else the replayed span",
    )
    parser.add_argument("--no-ground-truth", action="store_true", help="do not evaluate")
    parser.add_argument("--gt-topic", default="/ground_truth/odom", help="ground-truth nav_msgs/Odometry topic")
    parser.add_argument("--gt-contacts-topic", default="/ground_truth/contacts", help="ground-truth contact topic")
    parser.add_argument(
        "--time-align",
        default="auto",
        choices=["auto", "none", "offset", "offset+rate", "warp"],
        help="auto: none for stamped ground truth, offset+rate for an unstamped CSV (offset and rate on the yaw "
        "rate, the standard evaluation); warp: then a piecewise-linear clock fitted on yaw, for rows not evenly "
        "spread in time (opt-in: reports lower errors than the standard alignment)",
    )
    parser.add_argument("--max-offset", type=float, default=5.0, help="s, time-offset search half-width")
    parser.add_argument(
        "--align-on",
        default="gyro",
        choices=["gyro", "estimate"],
        help="time alignment signal: the input gyroscope's yaw rate, or the estimate's",
    )
    parser.add_argument("--plots", help="folder for PNG plots")
    parser.add_argument("--json", help="metrics and run summary as JSON")


def _add_topic_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--imu-topic", default="/imu/data", help="sensor_msgs/Imu input topic")
    parser.add_argument("--joints-topic", default="/joint_states", help="sensor_msgs/JointState input topic")
    parser.add_argument(
        "--foot-forces-topic", default="/foot_forces", help="foot sensors (JointState: name = feet, effort = value)"
    )
    parser.add_argument(
        "--use-foot-forces", default="auto", choices=["auto", "yes", "no"], help="auto: when the topic is present"
    )
    parser.add_argument(
        "--use-foot-wrenches",
        default="auto",
        choices=["auto", "yes", "no"],
        help="foot wrench sensors (WrenchStamped per foot, topics from the node parameter foot_wrench_topics, "
        "default /<foot>/wrench); auto: when every foot's topic is present (default: auto)",
    )
    parser.add_argument(
        "--contact-schedule-topic",
        default="/contact_schedule",
        help="contact schedule (JointState: name = feet, position = 1 stance / 0 swing), read with "
        "contact.source schedule",
    )
    parser.add_argument("--imu-frame-id", help="accepted IMU frame_id ('*' = any); default: the description's")


def _add_display_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar; default: on a terminal, for inputs of more than 20000 messages",
    )
    parser.add_argument(
        "--title",
        default="",
        help="title of the metrics table and plots; default: 'metrics against <ground truth>' and the input's name",
    )


def plot_title(inp: str | Path) -> str:
    """The default title of replay's plots: the input's stem (``walk`` for ``walk.mcap``, the folder's name for a
    bag folder); for a folder named ``bag`` (what ``simulate`` and ``demo`` write inside their run folder), the run
    folder's name (``go1_trot_real``), since every such bag would be titled "bag"."""
    path = Path(inp).resolve() if str(inp) else Path(inp)
    if path.is_dir() and path.name == "bag" and path.parent.name:
        return path.parent.name
    return path.stem if path.is_file() else path.name


def settings_source_line(
    input_path: Path, description: str, config_path: str | None, *, defaults_asked: bool = False
) -> str:
    """One line naming the description and the settings file replay uses (None: the built-in defaults,
    ``defaults_asked`` when by ``--config none``); with the defaults not asked for and a ``run.yaml`` of ``simulate``
    next to the input naming a bundled robot, a hint to pass ``--robot`` for that robot's tuned
    ``config/<robot>.yaml`` (what ``demo`` does)."""
    from robot_state_estimator.common.paths import BUNDLED_ROBOTS

    if config_path is not None:
        return f"description {description}; settings {config_path}"
    if defaults_asked:
        return f"description {description}; settings: the built-in defaults (--config none)"
    line = f"description {description}; settings: the built-in defaults (no --robot or --config)"
    folder = input_path if input_path.is_dir() else input_path.parent
    for run_yaml in (folder / "run.yaml", folder.parent / "run.yaml"):
        if run_yaml.is_file():
            try:
                robot = (yaml.safe_load(run_yaml.read_text()) or {}).get("robot")
            except (yaml.YAMLError, OSError, AttributeError):
                robot = None
            if isinstance(robot, str) and robot in BUNDLED_ROBOTS:
                line += f"; {run_yaml} names {robot}: --robot {robot} uses config/{robot}.yaml, as demo does"
            break
    return line


def check_arguments(args: argparse.Namespace) -> None:
    """The checks of replay's options that need no input, before anything runs.

    Raises:
        ReplayError: ``--output-topics`` without ``--output``; a ``--time-span`` whose T1 is not after T0 or
            not finite.
    """
    if getattr(args, "output_topics", None) is not None and not getattr(args, "output", None):
        raise ReplayError("--output-topics chooses what the --output bag gets: pass --output DIR (no bag is written)")
    span = getattr(args, "time_span", None)
    if span is not None:
        t0, t1 = (float(t) for t in span)
        if not (np.isfinite(t0) and np.isfinite(t1)):
            raise ReplayError(f"--time-span: T0 and T1 must be finite, got {t0} {t1}")
        if not t1 > t0:
            raise ReplayError(f"--time-span: T1 ({t1}) must be after T0 ({t0})")


def check_output_paths(args: argparse.Namespace, resolved: Sequence[tuple[str, Any]] = ()) -> None:
    """Refuse an output (``--output``, ``--tum``, ``--json``, ``--plots``) that would overwrite a file replay reads
    (the input, a bag file or a file of a bag directory, the ground truth, the description or the settings, also
    when replay found them itself: ``resolved``) or that cannot be written (``ground_truth.output_path_problem``),
    before the replay runs.

    Args:
        args: the parsed command line.
        resolved: (what, path) of inputs replay chose itself, e.g. ``("the description", path)`` for the
            ``robot_description.urdf`` next to the bag or ``("the settings", path)`` for ``config/<robot>.yaml``;
            a value that is no existing path (XML text, None) is skipped.

    Raises:
        ReplayError: the first such output, naming its option (and the input's).
    """
    inputs: dict[Path, str] = {}
    candidates: list[tuple[str, Any]] = [
        ("the input", getattr(args, "input", None)),
        ("--ground-truth", getattr(args, "ground_truth", None)),
        ("--description", getattr(args, "description", None)),
        ("--config", getattr(args, "config", None)),
    ]
    candidates += [(what, value) for what, value in resolved]
    for option, value in candidates:
        if value is not None and (not isinstance(value, (str, Path)) or "\n" in str(value) or len(str(value)) > 4096):
            continue  # XML text, not a path
        if not value or not Path(value).exists():
            continue
        path = Path(value).resolve()
        inputs[path] = f"{option} {value}"
        if path.is_dir():
            inputs.update({f.resolve(): f"a file of {option} {value}" for f in path.iterdir() if f.is_file()})
    for option in ("output", "tum", "json", "plots"):
        value = getattr(args, option, None)
        if not value:
            continue
        if Path(value).resolve() in inputs:
            raise ReplayError(
                f"--{option} {value} would overwrite {inputs[Path(value).resolve()]}: choose another path"
            )
        problem = output_path_problem(value, folder=option in ("output", "plots"))
        if problem:
            raise ReplayError(f"--{option}: {problem}")


def _settings_and_options(args: argparse.Namespace, inp: Path) -> tuple[str, str | None, Any, ReplayOptions]:
    """The description, the settings file (None: the built-in defaults), the settings (with ``--set`` and ``--imu``)
    and the :class:`ReplayOptions` of the command line; prints which description and settings are used.

    Raises:
        ReplayError: see :func:`check_arguments`, :func:`resolve_description`, :func:`check_output_paths`,
            :func:`split_config`, :func:`apply_overrides`.
    """
    check_arguments(args)
    description = resolve_description(inp, args.description, args.robot)
    config_path = resolve_config(args.config, args.robot)
    check_output_paths(args, resolved=(("the description", description), ("the settings", config_path)))
    settings, node_params = split_config(config_path)
    asked = str(args.config or "").strip().lower() == "none"
    print(settings_source_line(inp, description, config_path, defaults_asked=asked))
    unused = sorted(k for k in node_params if k in NODE_ONLY_PARAMETERS)
    if unused:
        print(f"note: {config_path} sets node parameters replay does not use: {', '.join(unused)}")
    settings, node_params = apply_overrides(settings, node_params, getattr(args, "set", []) or [])
    if getattr(args, "imu", None):
        settings = dataclasses.replace(settings, imu_name=args.imu)
    if args.imu_frame_id is not None:
        node_params["imu_frame_id"] = args.imu_frame_id
    opts = ReplayOptions(
        imu_topic=args.imu_topic,
        joints_topic=args.joints_topic,
        foot_forces_topic=args.foot_forces_topic,
        use_foot_forces=args.use_foot_forces,
        use_foot_wrenches=getattr(args, "use_foot_wrenches", "auto"),
        contact_schedule_topic=getattr(args, "contact_schedule_topic", "/contact_schedule"),
        node_params={**NODE_DEFAULTS, **node_params},
        progress=args.progress,
        output_topics=tuple(getattr(args, "output_topics", None) or OUTPUT_GROUPS),
        output_compression=getattr(args, "output_compression", None) or DEFAULT_OUTPUT_COMPRESSION,
    )
    return description, config_path, settings, opts


def _ground_truth_before(args: argparse.Namespace, inp: Path) -> GroundTruth | None:
    """A ground-truth file that needs nothing from the replay, loaded (and so checked) before it: a bad file then
    ends the command at once rather than after a long replay. Unstamped CSV rows are checked with a placeholder
    span (None is returned: they are spread over the replayed span afterwards, :func:`_ground_truth_after`)."""
    spec = None if args.no_ground_truth else args.ground_truth
    if spec is None or str(spec) in ("bag", "topic"):
        return None
    if Path(spec).suffix.lower() == ".csv":
        load_ground_truth(spec, time_span_s=(0.0, 1.0))
        return None
    return load_ground_truth(spec, input_bag=inp, topic=args.gt_topic, contacts_topic=args.gt_contacts_topic)


def _print_run(args: argparse.Namespace, inp: Path, result: ReplayResult, opts: ReplayOptions) -> dict[str, Any]:
    """Print the run's summary line, its problems and the output-frame warning; returns ``result.summary()``.

    Raises:
        ReplayError: fewer than two estimates.
    """
    from robot_state_estimator.io.stream import output_frame_warning

    s = result.summary()
    writing = f", of which writing the output bag {s['write_wall_s']:.2f} s" if args.output else ""
    print(
        f"replayed {inp}: {s['n_inputs']} messages over {s['input_duration_s']:.2f} s "
        f"in {s['estimation_wall_s']:.2f} s{writing} "
        f"({s['samples_per_s']:.0f} samples/s, {s['realtime_factor']:.1f}x real time; reading the input "
        f"{s['read_wall_s']:.2f} s before, {s['realtime_factor_total']:.1f}x real time with it); "
        f"{s['n_estimates']} estimates"
        + (f"; skipped {s['skipped']}" if s["skipped"] else "")
        + (f"; samples missing from the recording (stamp gaps) {s['lost']}" if s["lost"] else "")
    )
    for line in result.problem_lines():
        print(line)
    frame_warning = output_frame_warning(result.description, opts.node_params) if args.output else ""
    if frame_warning:  # as the node says at start: the TF written into the output bag is apart from the robot's
        print(f"WARNING: {frame_warning}")
    if len(result.log) < 2:
        raise ReplayError(
            f"the estimator produced {len(result.log)} estimates from the {s['n_inputs']} messages "
            f"({s['input_duration_s']:.2f} s) of {inp}: too short a run, or most of it skipped (see above)"
        )
    return s


def _ground_truth_after(
    args: argparse.Namespace, inp: Path, result: ReplayResult, gt_before: GroundTruth | None
) -> GroundTruth | None:
    """The ground truth to evaluate against: ``gt_before``, else ``--ground-truth`` (or the input's ground-truth
    topic) loaded now, unstamped rows spread over :func:`ground_truth_time_span`; None without any."""
    if args.no_ground_truth:
        return None
    if gt_before is not None:
        return gt_before
    spec = args.ground_truth
    if spec is None and is_bag(inp) and args.gt_topic in result.input_topics:
        spec = "bag"
    if spec is None:
        return None
    span, span_note = ground_truth_time_span(inp, result.input_span_s, getattr(args, "time_span", None))
    gt = load_ground_truth(
        spec,
        input_bag=inp,
        topic=args.gt_topic,
        contacts_topic=args.gt_contacts_topic,
        time_span_s=span,  # unstamped rows are spread over the recording
    )
    if not gt.stamped:
        print(span_note)
    return gt


def _evaluate(args: argparse.Namespace, inp: Path, result: ReplayResult, gt: GroundTruth) -> dict[str, Any]:
    """The metrics of the replay against ``gt`` (kept in ``result``), printed as a table."""
    from robot_state_estimator.evaluation.report import format_table

    ref = None
    if not gt.stamped and args.align_on == "gyro":
        ref, ref_note = alignment_reference(
            inp, result.input_span_s, result.description.imu.R_base_imu, result.gyro_yaw_rate
        )
        if ref_note:
            print(ref_note)
    res = evaluate_replay(
        result,
        gt,
        time_alignment=args.time_align,
        max_offset_s=args.max_offset,
        align_on=args.align_on,
        reference_yaw_rate=ref,
    )
    result.metrics = res
    result.ground_truth = aligned_ground_truth(gt, res)
    print(format_table(res, title=args.title or f"metrics against {gt.source}"))
    return res


def run_cli(args: argparse.Namespace) -> tuple[ReplayResult, dict[str, Any] | None]:
    """Run replay from parsed arguments; returns the result and the metrics (or None)."""
    inp = Path(args.input)
    if not inp.exists():
        raise ReplayError(f"input not found: {inp}")
    description, config_path, settings, opts = _settings_and_options(args, inp)
    gt_before = _ground_truth_before(args, inp)
    if kernels_need_compiling():
        print("compiling the estimator's numba kernels (once after an install or update: about a minute)", flush=True)
    result = replay(inp, description=description, settings=settings, options=opts, output_bag=args.output)
    s = _print_run(args, inp, result, opts)
    traj = result.log.trajectory()
    if args.tum:
        write_tum(args.tum, traj, header=f"robot_state_estimator replay of {inp}")
    gt = _ground_truth_after(args, inp, result, gt_before)
    if args.output:
        _copy_import_source(inp, Path(args.output))
    res = _evaluate(args, inp, result, gt) if gt is not None else None
    if args.plots:
        from robot_state_estimator.evaluation import plot_series, plots

        files = plots.plot_replay(
            result,
            args.plots,
            title=args.title or plot_title(inp),
            truth=plot_series.simulated_truth(inp),  # the true biases of a simulated run (its run.yaml)
            nis_gate=settings.ekf.foot_gate_nis,
            sensor_thresholds=(settings.contact.sensor_on_threshold, settings.contact.sensor_off_threshold),
        )
        print(f"plots: {', '.join(str(f) for f in files)}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "input": str(inp),
            "description": description,
            "config": config_path,  # None: the built-in defaults
            "run": s,
            "metrics": res,
        }
        Path(args.json).write_text(json.dumps(to_jsonable(doc), indent=2))
    return result, res


def _copy_import_source(inp: Path, output: Path) -> None:
    """Copy the input's ``import_source.yaml`` into the output bag, so ``evaluate OUTPUT GT.csv`` finds the span
    (and the source) the replayed input came from."""
    from robot_state_estimator.tools.csv_import import read_import_source, write_import_source

    info = read_import_source(inp) if is_bag(inp) or inp.is_dir() else None
    if info is not None and output.is_dir():
        write_import_source(output, info)


def to_jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    return x


def run(args: argparse.Namespace) -> int:
    """``robot-state-estimator replay``: returns 0, or 2 with one line naming the problem on a known error (the
    format and exit code of the other sub-commands' errors, ``tools.cli``)."""
    from robot_state_estimator.estimation.errors import EstimationError
    from robot_state_estimator.evaluation.errors import GroundTruthError

    try:
        run_cli(args)
    except (ReplayError, GroundTruthError, MetricsError, EstimationError) as exc:
        print(f"robot-state-estimator replay: error: {exc}", file=sys.stderr)
        return 2
    return 0
