"""``robot-state-estimator simulate``: generate a legged-robot run and write it as a bag.

Example::

    robot-state-estimator simulate --robot go1 --gait trot --duration 20 --output out/go1_trot
    robot-state-estimator simulate --robot anymal_c --gait walk --noise --slip RF_FOOT@6.0 --output out/walk
    robot-state-estimator simulate --robot go1 --foot-model point --output out/go1_point_feet
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.robots import BIPEDS, ROBOTS, SimRobot
from robot_state_estimator.simulation.settings import (
    GAITS,
    REAL_ROBOT_ERRORS,
    RealRobotErrors,
    SimulationSettings,
    SlipEvent,
    real_robot_errors,
)


def _slip(text: str) -> tuple[str, float]:
    foot, sep, start = text.partition("@")
    if not sep or not foot:
        raise argparse.ArgumentTypeError(f"--slip expects FOOT@START_S (e.g. FL_foot@3.0), got {text!r}")
    try:
        return foot, float(start)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--slip start time is not a number: {start!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the ``simulate`` sub-command."""
    parser.add_argument(
        "--robot",
        choices=sorted([*ROBOTS, *BIPEDS]),
        default="go1",
        help="bundled robot (config/robots), or the biped talos (example-robot-data; stand or walk on flat soles)",
    )
    parser.add_argument("--gait", choices=GAITS, default="trot", help="motion to generate")
    parser.add_argument("--duration", type=float, default=20.0, help="run length (s)")
    parser.add_argument("--output", required=True, help="output folder (bag/, robot_description.urdf, run.yaml)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (noise, jitter)")
    parser.add_argument("--imu-rate", type=float, default=1000.0, help="IMU rate (Hz)")
    parser.add_argument("--joint-rate", type=float, default=1000.0, help="joint state rate (Hz)")
    parser.add_argument("--jitter", type=float, default=0.0, help="uniform stamp jitter (s), < half a period")
    parser.add_argument(
        "--noise", action=argparse.BooleanOptionalAction, default=False, help="IMU (SDF) + encoder/torque noise"
    )
    gaits = {**{n: r.gait for n, r in ROBOTS.items()}, **{n: b.gait for n, b in BIPEDS.items()}}
    speeds = ", ".join(f"{n} {g.trot_speed_m_s:g}/{g.walk_speed_m_s:g}" for n, g in sorted(gaits.items()))
    parser.add_argument(
        "--speed", type=float, default=None, help=f"forward speed (m/s); default per robot (trot/walk): {speeds}"
    )
    parser.add_argument("--yaw-rate", type=float, default=0.0, help="constant turn rate (rad/s)")
    parser.add_argument("--slip", type=_slip, default=None, metavar="FOOT@START_S", help="a foot slip event")
    parser.add_argument(
        "--slip-displacement",
        type=float,
        nargs=2,
        default=(0.03, 0.0),
        metavar=("DX", "DY"),
        help="slip displacement (m, world x y)",
    )
    parser.add_argument("--slip-duration", type=float, default=0.05, help="slip duration (s)")
    parser.add_argument(
        "--real-errors",
        action="store_true",
        help="a real robot's errors (REAL_ROBOT_ERRORS): 16-bit encoders, 2 mm random slips per stance, IMU "
        "vibration up to the estimator's noise floor, an accelerometer bias walk of 0.03 m/s^3/sqrt(Hz), a gyroscope "
        "turn-on offset of 1 deg/s per axis, 0.1 ms jitter (unless --jitter is given)",
    )
    parser.add_argument(
        "--foot-model",
        choices=("sphere", "point", "flat"),
        default=None,
        help="feet as rolling spheres of the description's radii or as points (default: sphere when the "
        "description has foot spheres, as the Go1's; flat: soles, the bipeds' only model)",
    )
    parser.add_argument(
        "--foot-wrenches",
        action="store_true",
        help="also write each foot's force/torque sensor as /<foot>/wrench (geometry_msgs/WrenchStamped)",
    )
    parser.add_argument(
        "--foot-wrench-frame",
        action="append",
        default=[],
        metavar="FOOT=FRAME",
        help="express FOOT's wrench in FRAME (a frame of the description; repeatable; default: the foot frame)",
    )
    parser.add_argument(
        "--foot-wrench-noise", type=float, default=0.0, help="N, stddev of the foot wrench force noise (seeded)"
    )
    parser.add_argument(
        "--contact-schedule",
        action="store_true",
        help="also write the gait's contact schedule as /contact_schedule (JointState: position 1 stance, 0 swing)",
    )
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap", help="rosbag2 storage")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing bag in --output")


def settings_from_args(args: argparse.Namespace) -> SimulationSettings:
    """:class:`SimulationSettings` from parsed arguments."""
    slip = None
    if args.slip is not None:
        slip = SlipEvent(
            foot=args.slip[0],
            start_s=args.slip[1],
            duration_s=args.slip_duration,
            displacement_m=tuple(args.slip_displacement),
        )
    settings = SimulationSettings(
        robot=args.robot,
        gait=args.gait,
        duration_s=args.duration,
        seed=args.seed,
        imu_rate_hz=args.imu_rate,
        joint_rate_hz=args.joint_rate,
        jitter_s=args.jitter or (REAL_ROBOT_ERRORS["jitter_s"] if getattr(args, "real_errors", False) else 0.0),
        noise=args.noise,
        speed_m_s=args.speed,
        yaw_rate_rad_s=args.yaw_rate,
        slip=slip,
        foot_model=args.foot_model,
    )
    return dataclasses.replace(settings, **real_errors(args)) if real_errors(args) else settings


def real_errors(args: argparse.Namespace) -> RealRobotErrors:
    """The :data:`REAL_ROBOT_ERRORS` settings with ``--real-errors`` at ``--imu-rate`` (the vibration's density kept:
    :func:`.settings.real_robot_errors`; an explicit ``--jitter`` wins)."""
    if not getattr(args, "real_errors", False):
        return {}
    errors = real_robot_errors(float(args.imu_rate))
    del errors["jitter_s"]  # settings_from_args sets it
    return errors


def run(args: argparse.Namespace, robot: SimRobot | None = None) -> int:
    """Generate and write; returns 0, or 1 with a message on stderr when the settings are invalid.

    Args:
        args: the parsed options.
        robot: the robot to simulate (any description: ``tools.simulate``); None = the bundled ``--robot``.
    """
    from robot_state_estimator.simulation.bag import run_summary, write_run_bag
    from robot_state_estimator.simulation.generator import simulate

    try:
        settings = settings_from_args(args)
        if robot is not None:
            settings = dataclasses.replace(settings, robot=robot.name)
        t0 = time.perf_counter()
        result = simulate(settings, robot=robot)
        t1 = time.perf_counter()
        frames = {}
        for item in getattr(args, "foot_wrench_frame", None) or []:
            foot, sep, frame = str(item).partition("=")
            if not sep or not foot or not frame:
                raise SimulationError(f"--foot-wrench-frame {item!r} is not FOOT=FRAME")
            frames[foot] = frame
        bag = write_run_bag(
            result,
            args.output,
            storage=args.storage,
            overwrite=args.overwrite,
            foot_wrenches=bool(getattr(args, "foot_wrenches", False)) or bool(frames),
            foot_wrench_frames=frames,
            foot_wrench_noise_n=float(getattr(args, "foot_wrench_noise", 0.0)),
            contact_schedule=bool(getattr(args, "contact_schedule", False)),
        )
        t2 = time.perf_counter()
    except SimulationError as exc:
        print(f"simulate: {exc}", file=sys.stderr)
        return 1
    summary = run_summary(result)
    final = [round(x, 3) for x in summary["final_position_m"]]
    print(
        f"{settings.robot} {settings.gait} {settings.duration_s:g} s: {summary['samples']} samples generated in "
        f"{t1 - t0:.1f} s, bag written in {t2 - t1:.1f} s -> {bag}\n"
        f"  {result.foot_model} feet, path {summary['path_length_m']:.2f} m, final position {final}, "
        f"max base residual {summary['max_base_residual_force_n']:.3g} N / "
        f"{summary['max_base_residual_torque_nm']:.3g} N m, "
        f"unbalanced samples {summary['unbalanced_samples']} of {summary['samples']}, "
        f"friction cone violations {summary['friction_violations']}"
    )
    if getattr(args, "real_errors", False):  # the values run.yaml records (an explicit --jitter included)
        errors = ", ".join(f"{name} {getattr(settings, name):.3g}" for name in REAL_ROBOT_ERRORS)
        print(f"  real-robot errors: {errors}")
    return 0
