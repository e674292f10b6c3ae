"""``robot-state-estimator evaluate EST [EST ...] GT``: compare trajectories with ground truth (no estimator run).

``EST`` is a TUM file or a bag with a ``nav_msgs/Odometry`` topic (e.g. replay's output, or another
estimator's recording); ``GT`` is anything ``ground_truth.load_ground_truth`` reads (a bag's Odometry topic,
a TUM file, an unstamped mocap CSV). Several estimates are each evaluated on their own against the same ground
truth and compared in one table (``comparison``) and, with ``--plots``, on one figure (``plots_compare``), as
evo's ``evo_ape ... est1 est2 --plot``.

An unstamped CSV is spread over the span replay would use (``replay.ground_truth_time_span``): ``--time-span``,
else the source span recorded by import-csv (``import_source.yaml`` of ``--input``, or the copy replay writes
into its ``--output`` bag next to the estimate), else the input's or the estimate's span. With ``--input`` (the
bag the estimate was replayed from) the time alignment runs on the same gyroscope signal as replay's
(``replay.alignment_reference``), so both commands give the same metrics.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from robot_state_estimator import evaluation as M
from robot_state_estimator.evaluation import ground_truth as G
from robot_state_estimator.evaluation.errors import GroundTruthError


def load_estimate(path: str | Path, topic: str) -> M.Trajectory:
    """A trajectory from a TUM file or from an Odometry topic of a bag.

    Raises:
        GroundTruthError: unreadable file or missing topic.
    """
    if G.is_bag(path):
        return G.load_odometry_topic(
            path, topic, contacts_topic=None, role="estimate topic", option="--est-topic"
        ).trajectory
    return G.load_tum(path).trajectory


def input_gyro(
    bag: str | Path, imu_topic: str, R_base_imu: np.ndarray
) -> tuple[tuple[float, float], tuple[np.ndarray, np.ndarray] | None]:
    """First and last IMU stamp of a bag (s) and its gyroscope z in the base frame (as replay records it).

    Raises:
        GroundTruthError: the bag cannot be read or has no IMU message on ``imu_topic``.
    """
    from robot_state_estimator.common.time import NS_PER_S
    from robot_state_estimator.io import bags, messages

    try:
        bags.check_topic_types(bag, bags.bag_topics(bag), {imu_topic: ("sensor_msgs/msg/Imu", "--imu-topic")})
        samples = [messages.imu_sample_from_msg(m.msg) for m in bags.read_messages(bag, [imu_topic])]
    except (bags.BagError, messages.MessageError) as exc:
        raise GroundTruthError(f"--input {bag}: {exc}") from exc
    samples = [s for s in samples if s.stamp_ns > 0]
    if not samples:
        raise GroundTruthError(f"--input {bag}: no IMU message on {imu_topic}")
    t = np.array([s.stamp_ns for s in samples], dtype=np.int64)
    order = np.argsort(t, kind="stable")
    t = t[order]
    z = (np.array([s.angular_velocity for s in samples]) @ np.asarray(R_base_imu, dtype=float)[2])[order]
    keep = np.concatenate([np.diff(t) > 0, [True]])
    t_s = (t[keep] // NS_PER_S).astype(float) + (t[keep] % NS_PER_S).astype(float) / NS_PER_S
    span = (float(t_s[0]), float(t_s[-1]))
    return span, ((t_s, z[keep]) if len(t_s) > 1 else None)


def evaluate_files(
    estimate: str | Path,
    ground_truth: str | Path,
    *,
    est_topic: str = "odometry",
    gt_topic: str = G.DEFAULT_ODOM_TOPIC,
    time_alignment: str = "auto",
    max_offset_s: float = 5.0,
    time_span_s: tuple[float, float] | None = None,
    input_bag: str | Path | None = None,
    R_base_imu: np.ndarray | None = None,
    imu_topic: str = "/imu/data",
    notes: list[str] | None = None,
) -> tuple[dict[str, Any], G.GroundTruth, M.Trajectory]:
    """Load both and run ``metrics.evaluate``.

    ``time_alignment="auto"``: none for stamped ground truth, offset+rate for an unstamped CSV
    (``replay.auto_time_alignment``), whose rows are spread over ``time_span_s``, else over the span
    ``replay.ground_truth_time_span`` gives for ``input_bag`` (or, without it, for the estimate's folder,
    where replay copies ``import_source.yaml``), else the estimate's span.

    Args:
        input_bag: the bag the estimate was replayed from: its ``import_source.yaml`` and, with ``R_base_imu``
            (the description's IMU rotation), its gyroscope for the time alignment, as replay does.
        R_base_imu: (3, 3); None aligns on the estimate's yaw rate.
        imu_topic: the input's IMU topic.
        notes: lines saying which span and which alignment signal were used are appended here.
    """
    from robot_state_estimator.tools import replay

    est = load_estimate(estimate, est_topic)
    est_span = (float(est.t_s[0]), float(est.t_s[-1]))
    ref = None
    where = Path(input_bag) if input_bag is not None else Path(estimate)
    span = est_span
    # what "the replayed span" of replay's note is here
    span_name = "the span of --input"
    if input_bag is not None and R_base_imu is not None:
        span, ref = input_gyro(input_bag, imu_topic, R_base_imu)
    elif input_bag is not None:
        input_span = _span_of(Path(input_bag), imu_topic)
        span = input_span or est_span
        if input_span is None:
            span_name = f"the estimate's span (no {imu_topic} in --input)"
    else:
        from robot_state_estimator.tools.csv_import import read_import_source

        info = read_import_source(where) if G.is_bag(where) or where.is_dir() else None
        span_name = "the estimate's span (no --input)"
        if info and isinstance(info.get("span_s"), list) and len(info["span_s"]) == 2:
            span = (float(info["span_s"][0]), float(info["span_s"][1]))
            span_name = "the span of the input recorded next to the estimate (import_source.yaml)"
    try:
        gt_span, span_note = replay.ground_truth_time_span(where, span, time_span_s)
    except replay.ReplayError as exc:
        raise GroundTruthError(str(exc)) from exc
    gt = G.load_ground_truth(ground_truth, topic=gt_topic, contacts_topic=None, time_span_s=gt_span)
    mode = replay.auto_time_alignment(gt) if time_alignment == "auto" else time_alignment
    if not gt.stamped:
        if notes is not None:
            notes.append(span_note.replace("the replayed span", span_name))
        if ref is not None:
            ref, ref_note = replay.alignment_reference(Path(input_bag), span, R_base_imu, ref)  # type: ignore[arg-type]
            if notes is not None and ref_note:
                notes.append(ref_note)
    res = M.evaluate(
        est,
        gt.trajectory,
        time_alignment=mode,
        max_offset_s=max_offset_s,
        reference_yaw_rate=ref,
        with_nees=replay.nees_is_meaningful(est, gt, mode),  # an Odometry bag's covariances; a TUM file has none
    )
    res["time_alignment"]["signal"] = "gyro z (base frame)" if ref is not None else "estimate yaw rate"
    res["ground_truth_stamped"] = bool(gt.stamped)  # metrics.metric_caveats: short-range RPE without stamps
    res["caveats"] = M.metric_caveats(res)
    return res, gt, est


def _span_of(bag: Path, topic: str) -> tuple[float, float] | None:
    from robot_state_estimator.io import bags

    try:
        stamps = [m.stamp_ns for m in bags.read_messages(bag, [topic])]
    except bags.BagError:
        return None
    return (min(stamps) / 1e9, max(stamps) / 1e9) if stamps else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator evaluate``."""
    parser.add_argument(
        "estimate",
        nargs="+",
        help="TUM file, or bag with an Odometry topic (--est-topic); several: compared in one table and figure",
    )
    parser.add_argument("ground_truth", help="bag (Odometry topic --gt-topic), TUM file or unstamped mocap CSV")
    parser.add_argument(
        "--labels", nargs="+", help="names of the estimates in the table and plots (default: their file names)"
    )
    parser.add_argument(
        "--plots",
        help="folder for PNG plots: trajectories.png and errors.png (every estimate), and per estimate a folder "
        "with its errors over time (3-sigma bands when it has covariances), attitude and height",
    )
    parser.add_argument("--title", default="", help="title of the table and plots")
    parser.add_argument("--est-topic", default="odometry", help="estimate nav_msgs/Odometry topic (bags)")
    parser.add_argument(
        "--gt-topic",
        default=G.DEFAULT_ODOM_TOPIC,
        help=f"ground-truth nav_msgs/Odometry topic (bags; default {G.DEFAULT_ODOM_TOPIC})",
    )
    parser.add_argument(
        "--time-align",
        default="auto",
        choices=["auto", "none", "offset", "offset+rate", "warp"],
        help="auto: none for stamped ground truth, offset+rate for an unstamped CSV (as replay)",
    )
    parser.add_argument("--max-offset", type=float, default=5.0, help="s, time-offset search half-width")
    parser.add_argument(
        "--time-span",
        type=float,
        nargs=2,
        metavar=("T0", "T1"),
        help="s, span of the recording an unstamped CSV is spread over; default: the source span recorded by "
        "import-csv (import_source.yaml of --input, or next to the estimate), else the input's or the "
        "estimate's span",
    )
    parser.add_argument(
        "--input",
        help="the bag the estimate was replayed from: its import_source.yaml (span of the source recording) and "
        "its gyroscope (time alignment on the same signal as replay; needs --robot or --description)",
    )
    parser.add_argument("--robot", help="bundled robot whose description gives the IMU's rotation (with --input)")
    parser.add_argument("--description", help="robot description file (with --input), as replay's")
    parser.add_argument("--imu-topic", default="/imu/data", help="IMU topic of --input")
    parser.add_argument("--json", help="write the metrics as JSON")


def _R_base_imu(args: argparse.Namespace) -> np.ndarray | None:
    """The IMU rotation of the description replay would use for ``--input``, or None (no description)."""
    from robot_state_estimator.tools import replay

    if args.input is None:
        return None
    try:
        path = replay.resolve_description(Path(args.input), args.description, args.robot)
    except replay.ReplayError:
        return None
    from robot_state_estimator.description import load_description

    return np.asarray(load_description(path).imu.R_base_imu, dtype=float)


def _check_json_path(args: argparse.Namespace) -> None:
    """Refuse a ``--json`` that is one of the files read (the estimate, the ground truth, a file of ``--input``) or
    that cannot be written (``ground_truth.output_path_problem``).

    Raises:
        GroundTruthError: naming the option and the file.
    """
    inputs = [("the estimate", e) for e in _estimates(args)]
    inputs += [("the ground truth", args.ground_truth), ("--input", args.input)]
    if args.json:
        target = Path(args.json).resolve()
        for option, value in inputs:
            if not value or not Path(value).exists():
                continue
            path = Path(value).resolve()
            if target == path or (path.is_dir() and target.parent == path and target.exists()):
                raise GroundTruthError(f"--json {args.json} would overwrite {option} {value}: choose another path")
        problem = G.output_path_problem(args.json)
        if problem:
            raise GroundTruthError(f"--json: {problem}")
    if getattr(args, "plots", None):
        target = Path(args.plots).resolve()
        for option, value in inputs:
            if value and Path(value).exists() and Path(value).resolve() == target:
                raise GroundTruthError(f"--plots {args.plots} would write into {option} {value}: choose another folder")
        problem = G.output_path_problem(args.plots, folder=True)
        if problem:
            raise GroundTruthError(f"--plots: {problem}")


def _estimates(args: argparse.Namespace) -> list[str]:
    """The estimate paths (one string for callers that build the namespace themselves, or a list)."""
    return [str(args.estimate)] if isinstance(args.estimate, (str, Path)) else [str(e) for e in args.estimate]


def run(args: argparse.Namespace) -> int:
    """Print the metrics table (and write JSON); returns 0, or 2 with one line naming the problem (the format and
    exit code of the other sub-commands' errors, ``tools.cli``)."""
    from robot_state_estimator.evaluation import comparison
    from robot_state_estimator.tools.replay import ReplayError, to_jsonable

    notes: list[str] = []
    estimates = _estimates(args)
    runs: list[tuple[dict[str, Any], G.GroundTruth, M.Trajectory]] = []
    try:
        labels = comparison.run_labels(estimates, getattr(args, "labels", None))
    except ValueError as exc:  # --labels of another count, or repeated
        print(f"robot-state-estimator evaluate: error: {exc}", file=sys.stderr)
        return 2
    try:
        _check_json_path(args)
        R = _R_base_imu(args)
        if args.input is not None and R is None:
            notes.append("no description for --input (--robot / --description): time alignment on the estimate")
        for estimate in estimates:
            run_notes: list[str] = []
            runs.append(
                evaluate_files(
                    estimate,
                    args.ground_truth,
                    est_topic=args.est_topic,
                    gt_topic=args.gt_topic,
                    time_alignment=args.time_align,
                    max_offset_s=args.max_offset,
                    time_span_s=tuple(args.time_span) if args.time_span else None,
                    input_bag=args.input,
                    R_base_imu=R,
                    imu_topic=args.imu_topic,
                    notes=run_notes,
                )
            )
            prefix = f"{estimate}: " if len(estimates) > 1 else ""
            notes += [prefix + n for n in run_notes]
    except (GroundTruthError, M.MetricsError, ReplayError) as exc:
        print(f"robot-state-estimator evaluate: error: {exc}", file=sys.stderr)  # as tools.cli reports errors
        return 2
    for line in notes:
        print(line)
    gt = runs[0][1]
    title = getattr(args, "title", "") or ""
    if len(runs) == 1:
        print(M.format_table(runs[0][0], title=title or f"{estimates[0]} against {gt.source}"))
        doc: Any = runs[0][0]
    else:
        results = [r for r, _, _ in runs]
        print(
            comparison.format_comparison(labels, results, title=title or f"{len(runs)} estimates against {gt.source}")
        )
        doc = {
            "ground_truth": gt.source,
            "runs": [{"label": lab, "estimate": str(e), "metrics": r} for lab, e, r in zip(labels, estimates, results)],
        }
    if getattr(args, "plots", None):
        files = _plot(args.plots, labels, runs, title=title)
        print(f"plots: {args.plots} ({len(files)} files: trajectories.png, errors.png, one folder per estimate)")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(to_jsonable(doc), indent=2))
    return 0


def _plot(
    folder: str | Path,
    labels: list[str],
    runs: list[tuple[dict[str, Any], G.GroundTruth, M.Trajectory]],
    *,
    title: str,
) -> list[Path]:
    """The comparison plots (``plots_compare``) of evaluated runs, each against its time-aligned ground truth."""
    from robot_state_estimator.evaluation import plot_series, plots_compare
    from robot_state_estimator.tools import replay

    comparisons = [plot_series.compare(est, replay.aligned_ground_truth(gt, res).trajectory) for res, gt, est in runs]
    return plots_compare.write_comparison_plots(folder, labels, comparisons, title=title)
