"""A replay against ground truth: the metrics of its estimates, the time alignment ``auto`` stands for, the span
unstamped ground truth is spread over and the gyroscope signal it is time-aligned on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from robot_state_estimator.evaluation.ground_truth import (
    GroundTruth,
    is_bag,
)
from robot_state_estimator.evaluation.trajectory import Trajectory
from robot_state_estimator.tools.replay.errors import ReplayError
from robot_state_estimator.tools.replay.result import ReplayResult


def nees_is_meaningful(est: Trajectory, gt: GroundTruth, mode: str) -> bool:
    """Whether the NEES of ``est`` against ``gt`` means something: the estimate has covariances, the ground truth is
    stamped and has velocities (a simulated run's, in the filter's own frame) and no time alignment (``mode``) moves
    its clock."""
    return (
        est.pose_covariance is not None and gt.stamped and gt.trajectory.v_base_in_base is not None and mode == "none"
    )


def auto_time_alignment(gt: GroundTruth) -> str:
    """The time alignment ``auto`` stands for: "none" for stamped ground truth; "offset+rate" for rows without
    stamps (the standard evaluation the Go1 data set prescribes, comparable with other estimators' figures).
    ``warp`` (a piecewise-linear clock fitted on yaw, ``metrics.fit_time_warp``) is opt-in: it fits more of the
    clock to the data and so reports lower errors than the standard alignment."""
    return "none" if gt.stamped else "offset+rate"


def evaluate_replay(
    result: ReplayResult,
    gt: GroundTruth,
    *,
    time_alignment: str = "auto",
    max_offset_s: float = 5.0,
    align_on: str = "gyro",
    with_nees: bool | None = None,
    reference_yaw_rate: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, Any]:
    """Metrics of a replay against ground truth (``metrics.evaluate``, plus contact precision/recall).

    Args:
        result: the replay.
        gt: the ground truth.
        time_alignment: "auto" (:func:`auto_time_alignment`), or a mode of ``metrics.evaluate``.
        max_offset_s: offset search half-width, s.
        align_on: "gyro" (the input's gyroscope z in the base frame: does not depend on the estimate's
            quality) or "estimate" (the estimate's yaw rate).
        with_nees: NEES in the filter's own frame (default: for ground truth from a bag, i.e. simulated).
        reference_yaw_rate: with ``align_on="gyro"``, this ``(t_s, yaw rate)`` instead of the replayed
            gyroscope (e.g. the whole source recording's, :func:`alignment_reference`).

    Raises:
        MetricsError: no overlap.
    """
    from robot_state_estimator import evaluation as metrics

    est = result.log.trajectory()
    mode = auto_time_alignment(gt) if time_alignment == "auto" else time_alignment
    if with_nees is None:
        with_nees = nees_is_meaningful(est, gt, mode)
    ref = (
        (reference_yaw_rate if reference_yaw_rate is not None else result.gyro_yaw_rate) if align_on == "gyro" else None
    )
    res = metrics.evaluate(
        est,
        gt.trajectory,
        time_alignment=mode,
        max_offset_s=max_offset_s,
        reference_yaw_rate=ref,
        with_nees=with_nees,
    )
    res["time_alignment"]["signal"] = "gyro z (base frame)" if ref is not None else "estimate yaw rate"
    res["ground_truth_stamped"] = bool(gt.stamped)  # metrics.metric_caveats: short-range RPE without stamps
    res["caveats"] = metrics.metric_caveats(res)
    if gt.contacts is not None and result.log.feet:
        t_c, flags = result.log.contacts_arrays()
        feet = tuple(f for f in result.log.feet if f in gt.contacts.feet)
        if feet and len(t_c):
            m = (t_c >= gt.contacts.t_s[0]) & (t_c <= gt.contacts.t_s[-1])
            cols = [result.log.feet.index(f) for f in feet]
            g = gt.contacts.at(t_c[m], feet)
            e = flags[m][:, cols]
            res["contacts"] = {"all": metrics.contact_precision_recall(e, g)}
            for k, f in enumerate(feet):
                res["contacts"][f] = metrics.contact_precision_recall(e[:, k], g[:, k])
    return res


def aligned_ground_truth(gt: GroundTruth, res: dict[str, Any]) -> GroundTruth:
    """Ground truth with the time alignment of an evaluation applied (for plots)."""
    from dataclasses import replace

    from robot_state_estimator.evaluation.time_alignment import TimeAlignment

    ta = res["time_alignment"]
    if ta["mode"] == "none":
        return gt
    return replace(gt, trajectory=TimeAlignment.from_dict(ta).apply(gt.trajectory))


def ground_truth_time_span(
    inp: Path, input_span_s: tuple[float, float], time_span: list[float] | tuple[float, float] | None
) -> tuple[tuple[float, float], str]:
    """The span (s, input stamps) that an unstamped ground truth's rows are spread over, and a line saying so.

    ``--time-span`` when given; else the full span of the CSV the input was imported from, when import-csv
    recorded it (``import_source.yaml``) and it differs from the replayed span (the input is a slice); else
    the replayed span, with a warning that a slice of a longer recording needs ``--time-span``.
    """
    from robot_state_estimator.tools.csv_import import IMPORT_SOURCE_FILE, read_import_source

    if time_span is not None:
        t0, t1 = (float(t) for t in time_span)
        if not t1 > t0:
            raise ReplayError(f"--time-span: T1 ({t1}) must be after T0 ({t0})")
        return (t0, t1), f"unstamped ground truth spread over --time-span {t0:.3f} .. {t1:.3f} s"
    info = read_import_source(inp) if is_bag(inp) or inp.is_dir() else None
    source_span = info.get("source_span_s") if info else None
    if info and isinstance(source_span, list) and len(source_span) == 2:  # a span implies info (for mypy)
        t0, t1 = float(source_span[0]), float(source_span[1])
        if abs(t0 - input_span_s[0]) < 1e-6 and abs(t1 - input_span_s[1]) < 1e-6:
            return (t0, t1), (
                f"unstamped ground truth spread over the replayed span {t0:.3f} .. {t1:.3f} s, the whole source "
                f"recording ({IMPORT_SOURCE_FILE}: {info.get('source', '?')})"
            )
        if t1 > t0:
            return (t0, t1), (
                f"unstamped ground truth spread over the span of the source recording, {t0:.3f} .. {t1:.3f} s "
                f"({IMPORT_SOURCE_FILE}: {info.get('source', '?')}); the input is a slice of it "
                f"({input_span_s[0]:.3f} .. {input_span_s[1]:.3f} s); --time-span T0 T1 overrides"
            )
    t0, t1 = input_span_s
    return (t0, t1), (
        f"WARNING: unstamped ground truth spread over the replayed span {t0:.3f} .. {t1:.3f} s: if the input is a "
        "slice of a longer recording, the metrics are meaningless; pass --time-span T0 T1 (the span, in the "
        "input's stamps, that the ground-truth rows cover)"
    )


def alignment_reference(
    inp: Path,
    input_span_s: tuple[float, float],
    R_base_imu: np.ndarray,
    replayed: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[tuple[np.ndarray, np.ndarray] | None, str]:
    """The gyroscope yaw rate to time-align unstamped ground truth on, and a line saying which.

    When the input is a slice of a CSV recording imported by import-csv (``import_source.yaml`` with a source
    span longer than the input's, and the source CSV still readable), the whole source's gyroscope z in the
    base frame: the slice is then time-aligned exactly as the whole recording is, so its metrics are the whole
    run's restricted to the slice. Else ``replayed`` (the input's own gyroscope), with an empty line.

    Args:
        inp: the input bag.
        input_span_s: first and last stamp of the input, s.
        R_base_imu: (3, 3) rotation of the IMU frame in the base frame (the description's).
        replayed: ``(t_s, gyro z in the base frame)`` of the input.
    """
    from robot_state_estimator.tools.csv_import import IMPORT_SOURCE_FILE, read_import_source, read_source_gyro

    info = read_import_source(inp) if is_bag(inp) or inp.is_dir() else None
    span = info.get("source_span_s") if info else None
    if not (isinstance(span, list) and len(span) == 2):
        return replayed, ""
    if abs(float(span[0]) - input_span_s[0]) < 1e-6 and abs(float(span[1]) - input_span_s[1]) < 1e-6:
        return replayed, ""  # the whole source: its own gyroscope is the source's
    src = read_source_gyro(info) if info else None
    if src is None:
        return replayed, (
            f"time alignment on the slice's own gyroscope: the source recording of {IMPORT_SOURCE_FILE} cannot be "
            "read again (moved, or imported before source_columns were recorded)"
        )
    t_s, omega = src
    z_axis = np.asarray(R_base_imu, dtype=float)[2]
    z = np.array([float(z_axis @ w) for w in omega])  # as ReplayDriver.imu computes it, to the last bit
    return (t_s, z), (
        f"time alignment on the gyroscope of the whole source recording ({IMPORT_SOURCE_FILE}: "
        f"{info.get('source', '?') if info else '?'}), as for the whole run"
    )
