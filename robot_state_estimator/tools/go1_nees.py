"""The real Go1 trot's consistency: NEES per block against the unstamped motion capture, with its clock fitted on
the gyroscope (design and figures in docs/uncertainty.md).

Runs the estimator over ``go1.csv`` of ``../shared/data/go1_trot`` (foot sensors as contact source, joint velocities
by finite differences, as ``test/estimation/test_go1_real.py``) and prints:

- the ATE of the recording's standard evaluation (offset+rate clock on the yaw rate, 4-DoF alignment;
  ``evaluation.evaluate``), as the test measures it;
- the NEES of roll/pitch (2), height (1) and position (3) (``evaluation.unstamped_nees``), per row and over 1 s
  means, over the whole run from ``--start`` and from ``--after`` (the first turn), for two clocks: the
  offset+rate one and the piecewise-linear clock fitted on the gyroscope (``evaluation.gyro_clock``);
- roll/pitch per row against the motion capture smoothed over 1 s with the gyroscope, against the filter's
  covariance alone and with the reference's own error (``evaluation.gyro_reference``: measured against the
  gyroscope, not the filter), once with the motion capture's tilt fitted on the estimate (as the blocks above;
  it removes the estimate's constant roll/pitch error too) and once fitted on the gyroscope (no filter at all);
- on the gyro clock, height and position also counting the reference's timing error: each row's time is uncertain by
  the spread of reasonable clock fits (``gyro_clock.clock_spread``: other knots, lags, scales; no estimate), which
  puts the motion capture ``sigma_t |v|`` off along its velocity (``unstamped_nees.timing_nees``).

From ``--after`` the evaluation re-anchors the motion capture (position anchor, yaw and tilt fitted on that span), so
its height and position errors are those accumulated since then; they are compared with the covariance of a second
estimator run that re-anchors itself at the same moment (``set_pose`` with its own pose: :func:`run`), so that its
published position covariance and the legs' scale term are those since then too. Roll/pitch from ``--after`` is
the first run's (gravity observes it; the evaluation does not re-anchor it, and ``set_pose`` zeroes the attitude's
cross-covariances: a transient of up to 1.2 deg in the second run).

Usage::

    python -m robot_state_estimator.tools.go1_nees [--config config/go1.yaml | --config none]
        [--set ekf.accel_bias_random_walk=3e-3 ...] [--data ../shared/data/go1_trot] [--json out.json]

``--config none``: the built-in defaults with the bundled description (its IMU noise), as a user without a config
file gets them; a file: those settings with the IMU of the description at 400 Hz (as the test builds it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_state_estimator import evaluation as M
from robot_state_estimator.common.paths import config_dir
from robot_state_estimator.evaluation import ground_truth as G
from robot_state_estimator.evaluation.gyro_clock import (
    ClockSpread,
    clock_spread,
    fit_gyro_clock,
    gyro_offset_and_rate,
    integrate_gyro,
)
from robot_state_estimator.evaluation.unstamped_nees import BLOCKS, format_nees, unstamped_nees
from robot_state_estimator.tools.demo import find_go1_data

if TYPE_CHECKING:  # imported where used: estimation loads numba
    from robot_state_estimator.estimation.settings import EstimatorSettings

LEGS = ("FR", "FL", "RR", "RL")
FEET = tuple(f"{leg}_foot" for leg in LEGS)
JOINTS = tuple(f"{leg}_{j}_joint" for leg in LEGS for j in ("hip", "thigh", "calf"))


def estimator_settings(config: str, overrides: Sequence[str] = ()) -> EstimatorSettings:
    """The settings of ``config`` ("none" = built-in defaults, else a settings file) with the ``--set NAME=VALUE``
    ``overrides`` applied by replay's rule (``tools.replay.options.apply_overrides``: dotted names, YAML values).

    Raises:
        ReplayError: an item without ``=``; a name that is no setting (the message names it and the close names);
            a node parameter (this tool feeds the estimator directly: no node, so its parameters would be ignored).
        ``estimation.errors.SettingsError``: an unreadable settings file, a bad value.
    """
    from robot_state_estimator.estimation import load_settings
    from robot_state_estimator.tools.replay.errors import ReplayError
    from robot_state_estimator.tools.replay.options import apply_overrides

    settings, node_params = apply_overrides(load_settings(None if config == "none" else config), {}, list(overrides))
    if node_params:
        names = ", ".join(node_params)
        raise ReplayError(
            f"--set {names}: a node parameter; go1_nees runs the estimator without the node, so it uses "
            "only the estimator settings (docs/PARAMETERS.md)"
        )
    return settings


def build_estimator(config: str, settings: EstimatorSettings) -> Any:
    """The estimator for ``config`` with ``settings`` (:func:`estimator_settings`): "none" = the bundled
    description; else example-robot-data's Go1 and its ``imu_link`` at 400 Hz (as ``test_go1_real.run_estimator``
    builds it)."""
    import pinocchio as pin

    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.common.robots import example_robot_urdf
    from robot_state_estimator.description import load_description
    from robot_state_estimator.description.types import ImuSpec
    from robot_state_estimator.estimation import RobotStateEstimator

    desc = load_description(robot_description_path("go1"))
    if config == "none":
        return RobotStateEstimator.from_description(desc, settings)
    model = pin.buildModelFromUrdf(str(example_robot_urdf("go1")), pin.JointModelFreeFlyer())
    X_base_imu = model.frames[model.getFrameId("imu_link")].placement
    imu = ImuSpec(name="imu", link="imu_link", frame_id="imu_link", pose_in_base=X_base_imu, update_rate=400.0)
    radii = [desc.foot_radius(f) for f in FEET]
    return RobotStateEstimator(model, imu, FEET, settings, base_link="base", foot_radii=radii)


def reanchor_covariance(estimate: Any, ekf_settings: Any) -> np.ndarray:
    """(6, 6) ROS-order pose covariance (x y z, rot x y z about the world axes; m^2, rad^2) that re-anchors the
    estimate the way the evaluation re-anchors the motion capture: position and yaw as at initialisation
    (``ekf.initial_position_std``, ``ekf.initial_yaw_std``: the evaluation matches the positions' means and
    fits the yaw on the span, as it does from the start), roll and pitch as published (gravity observes them; the
    evaluation does not re-anchor them), no pose cross-covariances (what ``set_pose`` does with them anyway)."""
    P = np.asarray(estimate.pose_covariance, dtype=float).reshape(6, 6)
    C = np.zeros((6, 6))
    C[:3, :3] = np.eye(3) * ekf_settings.initial_position_std**2
    C[3:5, 3:5] = P[3:5, 3:5]
    C[5, 5] = ekf_settings.initial_yaw_std**2
    return C


def run(
    data_dir: Path, config: str, settings: EstimatorSettings, *, reanchor_s: float | None = None
) -> tuple[M.Trajectory, M.Trajectory | None, np.ndarray, np.ndarray]:
    """The estimate over the recording (with pose covariances) of :func:`build_estimator` ``(config, settings)``, the
    same estimator re-anchored at ``reanchor_s`` (None: not run), the CSV's stamps (N,) s and gyroscope (N, 3) rad/s.

    The re-anchored run is a second estimator fed the same samples which, at its first estimate at or after
    ``reanchor_s`` s from the recording's first stamp, calls ``set_pose`` with its own pose and
    :func:`reanchor_covariance`: from there its published position covariance (and the legs' scale term's
    displacement) is the one since that moment, as the motion capture's error re-anchored there."""
    from scipy.spatial.transform import Rotation

    from robot_state_estimator.common.samples import FootForceSample, ImuSample, JointSample

    with open(data_dir / "go1.csv", encoding="utf-8") as fh:
        col = {h: i for i, h in enumerate(fh.readline().strip().split(","))}
    data = np.loadtxt(data_dir / "go1.csv", delimiter=",", skiprows=1)
    ests = [build_estimator(config, settings) for _ in range(1 if reanchor_s is None else 2)]
    jcols = [col[f"JointPos{leg}_{j}"] for leg in LEGS for j in ("hip", "thigh", "calf")]
    fcols = [col[f"{leg}_Force"] for leg in LEGS]
    gcols = [col[c] for c in ("BaseWx", "BaseWy", "BaseWz")]
    acols = [col[c] for c in ("BaseAx", "BaseAy", "BaseAz")]
    t_anchor = np.inf if reanchor_s is None else float(data[0, 0]) + reanchor_s
    rows: list[list[Any]] = [[] for _ in ests]
    for row in data:
        stamp = round(row[0] * 1e9)
        for k, est in enumerate(ests):
            est.add_foot_forces(FootForceSample(stamp, FEET, row[fcols]))
            est.add_joints(JointSample(stamp, JOINTS, row[jcols]))
            e = est.add_imu(ImuSample(stamp, row[gcols], row[acols]))
            if e is None:
                continue
            if k == 1 and row[0] >= t_anchor:
                R = Rotation.from_quat(e.quat_world_base_xyzw).as_matrix()
                seated = est.set_pose(e.p_world_base, R, reanchor_covariance(e, est.settings.ekf))
                if seated is not None:  # None: the filter was re-initialising (a divergence reset); next sample
                    e, t_anchor = seated, np.inf
            rows[k].append((row[0], e.p_world_base, e.quat_world_base_xyzw, e.pose_covariance))
    trajs = [
        M.Trajectory(
            np.array([r[0] for r in rs]),
            np.array([r[1] for r in rs]),
            np.array([r[2] for r in rs]),
            pose_covariance=np.array([np.asarray(r[3], dtype=float).reshape(6, 6) for r in rs]),
        )
        for rs in rows
    ]
    return trajs[0], (trajs[1] if len(trajs) > 1 else None), data[:, 0], data[:, gcols]


def evaluate_run(
    traj: M.Trajectory,
    t_csv: np.ndarray,
    gyro: np.ndarray,
    data_dir: Path,
    *,
    start_s: float,
    after_s: float,
    clocks: dict[str, M.TimeAlignment] | None = None,
    reanchored: M.Trajectory | None = None,
    reference_window_s: float = 1.0,
    spread: ClockSpread | None = None,
) -> dict[str, Any]:
    """ATE (standard evaluation) and the NEES blocks for the offset+rate and the gyro-fitted clocks; ``start_s`` and
    ``after_s`` from the recording's first stamp. ``clocks``: those two fitted before (they depend on the gyroscope
    and the motion capture only, not on the estimate), else fitted here. ``reanchored``: the estimate re-anchored
    at ``after_s`` (:func:`run`): the span from ``after_s`` then takes its height and position blocks from it
    (:func:`after_span`). ``reference_window_s``: s, the window of the motion capture smoothed with the gyroscope.
    ``spread``: the gyro clock's timing spread (``gyro_clock.clock_spread``, also estimate-free), else computed
    here; the gyro clock's height and position are then also given counting it (``unstamped_nees.timing_nees``)."""
    gt = G.load_unstamped_csv(data_dir / "go1_ground_truth.csv", float(traj.t_s[0]), float(traj.t_s[-1])).trajectory
    std = M.evaluate(traj, gt, time_alignment="offset+rate")
    out: dict[str, Any] = {
        "ate_m": std["ate_4dof"]["trans"]["rmse"],
        "ate_pct": std["ate_4dof_pct"],
        "path_m": std["path_length_m"],
    }
    t0 = float(t_csv[0])
    if clocks is None:
        clocks = {"offset+rate": gyro_offset_and_rate(t_csv, gyro, gt)}
        tic = time.perf_counter()
        clocks["gyro"] = fit_gyro_clock(t_csv, gyro, gt, clocks["offset+rate"])
        out["gyro_clock_fit_s"] = time.perf_counter() - tic
    out["clocks"] = clocks
    if spread is None and clocks["gyro"].knots_s is not None:
        spread = clock_spread(t_csv, gyro, gt, clocks["gyro"], clocks["offset+rate"])
    out["clock_spread"] = spread
    attitude = integrate_gyro(t_csv, gyro)
    for name, clock in clocks.items():
        gt_on_clock = clock.apply(gt)
        sigma = spread.sigma_s if (name == "gyro" and spread is not None) else None
        out[name] = {
            span: unstamped_nees(
                traj,
                gt_on_clock,
                start_s=t0 + s,
                attitude=attitude,
                reference_window_s=reference_window_s,
                timing_sigma_s=sigma,
            )
            for span, s in spans(start_s, after_s)
        }
        if reanchored is not None:
            again = unstamped_nees(reanchored, gt_on_clock, start_s=t0 + after_s, timing_sigma_s=sigma)
            out[name]["after"] = after_span(out[name]["after"], again)
    return out


def after_span(from_init: dict[str, Any], reanchored: dict[str, Any]) -> dict[str, Any]:
    """The span after the first turn: roll/pitch and yaw (and the world yaw and tilt printed with them) of the run
    from initialisation, height and position of the run re-anchored at the span's start (``unstamped_nees`` results
    of the same span; also those counting the clock's timing error, ``timing``); ``reanchored_yaw_deg``: the world
    yaw fitted to the re-anchored run.

    The yaw error is measured from the span's start while its covariance is the one since initialisation:
    conservative by the variance accumulated before the span. Re-anchored, the covariance restarts at
    ``ekf.initial_yaw_std`` (1 mrad) while the motion capture's rows err by tenths of a degree in a turn, which then
    dominate the figure (docs/uncertainty.md)."""
    blocks = {
        **reanchored["blocks"],
        "roll_pitch": from_init["blocks"]["roll_pitch"],
        "yaw": from_init["blocks"]["yaw"],
    }
    out = {**from_init, "blocks": blocks, "reanchored_yaw_deg": reanchored["yaw_deg"]}
    if "timing" in reanchored:  # height and position counting the clock's error: the re-anchored run's too
        out["timing"] = reanchored["timing"]
    else:  # never the first run's height and position beside the re-anchored run's
        out.pop("timing", None)
    return out


def spans(start_s: float, after_s: float) -> tuple[tuple[str, float], ...]:
    """The evaluated spans: the whole run from ``start_s``, and from ``after_s`` (s from the recording's start)."""
    return (("whole", start_s), ("after", after_s))


def summary(res: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready: ATE and, per clock, span and block, the per-row and 1 s NEES."""
    out: dict[str, Any] = {k: res[k] for k in ("ate_m", "ate_pct", "path_m", "gyro_clock_fit_s") if k in res}
    for clock in ("offset+rate", "gyro"):
        out[clock] = {}
        for span, r in res[clock].items():
            out[clock][span] = {
                "yaw_deg": r["yaw_deg"],
                **({"reanchored_yaw_deg": r["reanchored_yaw_deg"]} if "reanchored_yaw_deg" in r else {}),
                "tilt_deg": [float(x) for x in r["tilt_deg"]],
                **{b: {"per_row": r["blocks"][b].per_row, "1s": r["blocks"][b].windowed} for b in BLOCKS},
            }
            for key, name in (
                ("smoothed_roll_pitch", "roll_pitch_smoothed_tilt_from_estimate"),
                ("smoothed_roll_pitch_gyro_tilt", "roll_pitch_smoothed_tilt_from_gyro"),
                ("smoothed_yaw", "yaw_smoothed"),
            ):
                sm = r.get(key)
                if sm is not None:
                    out[clock][span][name] = smoothed_summary(sm)
            tn = r.get("timing")
            if tn is not None:
                out[clock][span]["with_clock_spread"] = {
                    "sigma_median_s": tn.sigma_median_s,
                    "sigma_p95_s": tn.sigma_p95_s,
                    "anchor_offset_m": tn.anchor_offset_m,
                    **{
                        b: {"per_row": x.per_row, "per_row_band": list(x.per_row_band), "1s": x.windowed}
                        for b, x in tn.blocks.items()
                    },
                }
            if "gyro_tilt" in r:
                out[clock][span]["gyro_tilt_deg"] = np.degrees(r["gyro_tilt"].tilt_rad).tolist()
                out[clock][span]["gyro_tilt_halves_deg"] = np.degrees(r["gyro_tilt"].halves_rad).tolist()
    return out


def smoothed_summary(sm: Any) -> dict[str, Any]:
    """JSON-ready figures of an ``unstamped_nees.SmoothedNees``."""
    return {
        "window_s": sm.window_s,
        "per_row": sm.per_row,
        "per_row_band": list(sm.per_row_band),
        "with_reference": sm.with_reference,
        "with_reference_band": list(sm.with_reference_band),
        "reference_sigma_row_deg": np.degrees(sm.reference.sigma_row_rad).tolist(),
        "reference_sigma_smoothed_deg": np.degrees(sm.reference.sigma_mean_rad).tolist(),
        "structure_rad2": sm.reference.structure_rad2.tolist(),
    }


#: printed before the figures: how to read them (docs/uncertainty.md)
READING = (
    "NEES per block against the motion capture, whose rows carry no stamps: their times come from a clock (the\n"
    "offset+rate alignment, or one fitted on the gyroscope). Per row: against the band of a consistent filter's time\n"
    "average; '1 s means': error and covariance averaged over 1 s windows, which removes most of the clock's timing\n"
    "error. Target on this recording: at most 3 x DoF (roll_pitch 6, yaw 3, height 3, position 9). 'world yaw': the\n"
    "yaw fitted to align the motion capture with the estimate over the span (position and yaw errors are measured\n"
    "from the span's first 0.5 s, where both start); 'tilt removed': the motion capture's\n"
    "constant body tilt, fitted on the estimate (so the estimate's constant roll/pitch error goes with it).\n"
    "'smoothed with the gyroscope': each row replaced by the mean of the rows within 0.5 s, carried to its time by\n"
    "the gyroscope; 'the reference's own error': the motion capture's error measured against the gyroscope alone,\n"
    "added to the covariance (evaluation/gyro_reference.py). 'tilt fitted on the gyroscope': the motion capture's\n"
    "tilt from its rotations against the gyroscope's (no filter; the halves show that fit's spread): the figure that\n"
    "does not depend on the estimate. 'the reference's timing error': the spread of the row times over clock fits\n"
    "with other knots, lags and scales (gyro_clock.clock_spread; no estimate) times the motion capture's speed,\n"
    "added to the position covariance. Compare each figure with its band (a consistent filter) and the target."
)


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    ap = argparse.ArgumentParser(
        prog="python -m robot_state_estimator.tools.go1_nees", description=" ".join(__doc__.split("\n\n")[0].split())
    )
    ap.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder of go1.csv (default: $RSE_GO1_DATA, else shared/data/go1_trot beside this checkout, as demo)",
    )
    ap.add_argument(
        "--config",
        default=None,
        help="settings file, or 'none' for the built-in defaults (default: the package's config/go1.yaml)",
    )
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting (dotted name)")
    ap.add_argument("--start", type=float, default=2.0, help="s from the recording's start: first evaluated time (2)")
    ap.add_argument("--after", type=float, default=7.0, help="s from the recording's start: after the first turn (7)")
    ap.add_argument(
        "--reference-window",
        type=float,
        default=1.0,
        help="s, the window of the motion capture smoothed with the gyroscope (1)",
    )
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args(argv)
    if args.data is None:
        args.data = find_go1_data() or Path("../shared/data/go1_trot")
    if args.config is None:
        args.config = str(config_dir() / "go1.yaml")
    if not (args.data / "go1.csv").is_file():
        print(f"go1.csv not found in {args.data} (give --data or set $RSE_GO1_DATA)", file=sys.stderr)
        return 2
    from robot_state_estimator.estimation.errors import SettingsError
    from robot_state_estimator.tools.replay.errors import ReplayError

    try:
        settings = estimator_settings(args.config, args.set)
    except (ReplayError, SettingsError) as exc:
        print(f"{ap.prog}: error: {exc}", file=sys.stderr)
        return 2
    traj, again, t_csv, gyro = run(args.data, args.config, settings, reanchor_s=args.after)
    res = evaluate_run(
        traj,
        t_csv,
        gyro,
        args.data,
        start_s=args.start,
        after_s=args.after,
        reanchored=again,
        reference_window_s=args.reference_window,
    )
    source = "the built-in defaults" if str(args.config).lower() == "none" else str(args.config)
    print(f"settings: {source}{''.join(' --set ' + x for x in args.set)}")
    print(f"ATE (offset+rate, 4-DoF) {res['ate_m']:.4f} m = {res['ate_pct']:.3f} % of {res['path_m']:.2f} m")
    print(READING)
    for clock in ("offset+rate", "gyro"):
        for span, r in res[clock].items():
            label = f"clock {clock}, {span} (from {args.start if span == 'whole' else args.after} s): "
            print(format_nees(r, label=label))
            if "reanchored_yaw_deg" in r:
                print(
                    f"  (height, position: the estimator re-anchored at {args.after} s by set_pose, world yaw "
                    f"{r['reanchored_yaw_deg']:.2f} deg)"
                )
    if args.json:
        args.json.write_text(json.dumps(summary(res), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
