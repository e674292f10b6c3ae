"""``robot-state-estimator evaluate EST GT``: compare a trajectory with ground truth (no estimator run).

``EST`` is a TUM file or a bag with a ``nav_msgs/Odometry`` topic (e.g. replay's output, or another
estimator's recording); ``GT`` is anything ``ground_truth.load_ground_truth`` reads (a bag's Odometry topic,
a TUM file, an unstamped mocap CSV spread over the estimate's time span).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from robot_state_estimator.tools import ground_truth as G
from robot_state_estimator.tools import metrics as M


def load_estimate(path: str | Path, topic: str) -> M.Trajectory:
    """A trajectory from a TUM file or from an Odometry topic of a bag.

    Raises:
        GroundTruthError: unreadable file or missing topic.
    """
    if G.is_bag(path):
        return G.load_odometry_topic(path, topic, contacts_topic=None).trajectory
    return G.load_tum(path).trajectory


def evaluate_files(
    estimate: str | Path,
    ground_truth: str | Path,
    *,
    est_topic: str = "odometry",
    gt_topic: str = G.DEFAULT_ODOM_TOPIC,
    time_alignment: str = "auto",
    max_offset_s: float = 5.0,
    time_span_s: tuple[float, float] | None = None,
) -> tuple[dict[str, Any], G.GroundTruth, M.Trajectory]:
    """Load both and run ``metrics.evaluate``.

    ``time_alignment="auto"``: none for stamped ground truth, offset+rate for an unstamped CSV, whose rows are
    spread over ``time_span_s`` (the recording's first and last stamp, s; default: the estimate's span).
    """
    est = load_estimate(estimate, est_topic)
    gt = G.load_ground_truth(
        ground_truth,
        topic=gt_topic,
        contacts_topic=None,
        time_span_s=time_span_s or (float(est.t_s[0]), float(est.t_s[-1])),
    )
    mode = ("none" if gt.stamped else "offset+rate") if time_alignment == "auto" else time_alignment
    return M.evaluate(est, gt.trajectory, time_alignment=mode, max_offset_s=max_offset_s), gt, est


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator evaluate``."""
    parser.add_argument("estimate", help="TUM file, or bag with an Odometry topic (--est-topic)")
    parser.add_argument("ground_truth", help="bag (Odometry topic --gt-topic), TUM file or unstamped mocap CSV")
    parser.add_argument("--est-topic", default="odometry")
    parser.add_argument("--gt-topic", default=G.DEFAULT_ODOM_TOPIC)
    parser.add_argument("--time-align", default="auto", choices=["auto", "none", "offset", "offset+rate"])
    parser.add_argument("--max-offset", type=float, default=5.0, help="s, time-offset search half-width")
    parser.add_argument(
        "--time-span",
        type=float,
        nargs=2,
        metavar=("T0", "T1"),
        help="s, span of the recording an unstamped CSV is spread over (default: the estimate's)",
    )
    parser.add_argument("--json", help="write the metrics as JSON")


def run(args: argparse.Namespace) -> int:
    """Print the metrics table (and write JSON)."""
    from robot_state_estimator.tools.replay import to_jsonable

    try:
        res, gt, _ = evaluate_files(
            args.estimate,
            args.ground_truth,
            est_topic=args.est_topic,
            gt_topic=args.gt_topic,
            time_alignment=args.time_align,
            max_offset_s=args.max_offset,
            time_span_s=tuple(args.time_span) if args.time_span else None,
        )
    except (G.GroundTruthError, M.MetricsError) as exc:
        print(f"evaluate: error: {exc}", file=sys.stderr)
        return 1
    print(M.format_table(res, title=f"{args.estimate} against {gt.source}"))
    if args.json:
        Path(args.json).write_text(json.dumps(to_jsonable(res), indent=2))
    return 0
