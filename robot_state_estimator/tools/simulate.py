"""``robot-state-estimator simulate``: a generated run of a bundled robot or of any quadruped description.

The options of :mod:`robot_state_estimator.simulation.cli`, plus the robot from a description (``--description``:
a file, a ``package://`` / ``model://`` URI or the XML text) with its IMU chosen (``--imu``) or declared by
settings (``--config`` / ``--set`` with ``declared_imu.*``, for a description without one, e.g.
example-robot-data's Go2). The IMU settings are applied as the estimator applies them
(``estimation.imu_setup``), so the simulated IMU is the one the estimator will use with the same settings.

Example::

    robot-state-estimator simulate --description go2.urdf --config go2.yaml --gait trot --output out/go2_trot
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from robot_state_estimator.simulation import cli as sim_cli


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``simulate``: the bundled-robot ones and those of a description."""
    sim_cli.add_arguments(parser)
    group = parser.add_argument_group("any description (instead of --robot)")
    group.add_argument(
        "--description",
        help="robot description to simulate (URDF/xacro/SDF file, package:// or model:// URI, or the XML text): a "
        "quadruped with 3-joint legs; gait defaults scaled from the Go1's by the standing height",
    )
    group.add_argument(
        "--imu", metavar="NAME", help="the IMU to use when the description (or --robot's) has several (imu_name)"
    )
    group.add_argument(
        "--config",
        help="estimator settings YAML whose imu_name / declared_imu.* give the IMU (the file info --write-config "
        "writes; also with --robot); the other settings are not used by the simulation",
    )
    group.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override one of those settings, e.g. declared_imu.link=imu",
    )
    group.add_argument(
        "--srdf",
        help="SRDF with the 'standing' configuration; default: the one next to the description in "
        "example-robot-data's layout (<robot>_description/srdf), else the neutral configuration",
    )


def load_robot(args: argparse.Namespace) -> object:
    """The :class:`~robot_state_estimator.simulation.robots.SimRobot` of ``--description`` with its IMU.

    Raises:
        DescriptionError, SettingsError, SimulationError: naming what is wrong.
    """
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation.imu_setup import apply_imu_settings
    from robot_state_estimator.simulation.robots import find_standing_srdf, sim_robot_from_description
    from robot_state_estimator.tools.robot_info import settings_for

    settings = settings_for(args.config, args.set, args.imu)
    desc = apply_imu_settings(load_description(args.description), settings)
    srdf = Path(args.srdf) if args.srdf else find_standing_srdf(args.description)
    if srdf is None:
        print("note: no SRDF 'standing' configuration found (--srdf): the robot stands in its neutral configuration")
    elif not args.srdf:
        print(f"note: the 'standing' configuration of {srdf} (--srdf for another)")
    return sim_robot_from_description(desc, feet=settings.foot_frames or None, srdf=srdf)


def bundled_robot_with_imu(args: argparse.Namespace) -> object:
    """The bundled ``--robot`` with the IMU ``--imu`` / ``--config`` / ``--set`` choose or declare on its
    description (its posture, feet and gait as bundled).

    Raises:
        DescriptionError, SettingsError, SimulationError: naming what is wrong.
    """
    import dataclasses

    from robot_state_estimator.common.paths import robot_description_path
    from robot_state_estimator.description import load_description
    from robot_state_estimator.estimation.imu_setup import apply_imu_settings
    from robot_state_estimator.simulation.biped import load_biped
    from robot_state_estimator.simulation.robots import BIPEDS, load_sim_robot
    from robot_state_estimator.tools.robot_info import settings_for

    settings = settings_for(args.config, args.set, args.imu)
    if args.robot in BIPEDS:  # its description as the run writes it (the IMU block on base_link)
        robot = load_biped(args.robot)
        source: str | Path = robot.description_xml
    else:
        robot = load_sim_robot(args.robot)
        source = robot_description_path(args.robot)
    imu = apply_imu_settings(load_description(source), settings).imu
    return dataclasses.replace(robot, imu=imu)


def _note_imu_without_noise(args: argparse.Namespace, robot: Any) -> None:
    """With ``--noise``, say so when the IMU states no noise (an IMU declared without ``declared_imu.*`` noise, or a
    description's without ``<noise>``): the simulated IMU then reads the ideal values, though the estimator assumes
    its ``ekf.*`` noise for it."""
    imu = robot.imu
    axes = [*imu.angular_velocity_noise, *imu.linear_acceleration_noise]
    if args.noise and not any(n.enabled for n in axes):
        print(
            f"note: the IMU {imu.name!r} states no noise (declared_imu.* noise 0, or no <noise> in the description): "
            "--noise adds none to its readings, only to the joints"
        )


def run(args: argparse.Namespace) -> int:
    """Generate and write the run (see ``simulation.cli.run``)."""
    if args.description:
        robot = load_robot(args)
        _note_imu_without_noise(args, robot)
        return sim_cli.run(args, robot=robot)  # type: ignore[arg-type]
    if args.srdf:
        print("simulate: --srdf goes with --description", file=sys.stderr)
        return 2
    if args.imu or args.config or args.set:
        robot = bundled_robot_with_imu(args)
        _note_imu_without_noise(args, robot)
        return sim_cli.run(args, robot=robot)  # type: ignore[arg-type]
    return sim_cli.run(args)
