"""The legged robots the generator knows: model, feet, standing posture, IMU and gait defaults.

Models and IMUs come from the bundled descriptions (``config/robots/<robot>.urdf.xacro``, with their
``<gazebo>`` IMU block) through :func:`robot_state_estimator.description.load_description`: the description is
the one source of the IMU's pose and noise.
Standing postures are the ``standing`` reference configurations of example-robot-data's SRDF files.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.common.paths import robot_description_path
from robot_state_estimator.common.robots import example_robot_data_share
from robot_state_estimator.description import RobotDescription, load_description
from robot_state_estimator.description.types import ImuSpec, NoiseSpec
from robot_state_estimator.simulation.errors import SimulationError


@dataclass(frozen=True)
class GaitDefaults:
    """Per-robot gait defaults: period (s), duty factors, step height (m), speeds (m/s)."""

    trot_period_s: float
    walk_period_s: float
    step_height_m: float
    trot_speed_m_s: float
    walk_speed_m_s: float
    trot_duty: float = 0.6
    walk_duty: float = 0.8


@dataclass(frozen=True)
class _RobotInfo:
    feet: tuple[str, str, str, str]  # front-left, front-right, hind-left, hind-right
    srdf: str
    gait: GaitDefaults


ROBOTS: dict[str, _RobotInfo] = {
    "go1": _RobotInfo(
        feet=("FL_foot", "FR_foot", "RL_foot", "RR_foot"),
        srdf="go1_description/srdf/go1.srdf",
        gait=GaitDefaults(0.5, 0.8, 0.06, 0.4, 0.2),
    ),
    "solo12": _RobotInfo(
        feet=("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"),
        srdf="solo_description/srdf/solo.srdf",
        gait=GaitDefaults(0.4, 0.7, 0.05, 0.25, 0.12),
    ),
    "anymal_c": _RobotInfo(
        feet=("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"),
        srdf="anymal_c_simple_description/srdf/anymal.srdf",
        gait=GaitDefaults(0.8, 1.2, 0.1, 0.4, 0.2),
    ),
}


@dataclass(frozen=True)
class _BipedInfo:
    """A biped of example-robot-data: URDF and SRDF (relative to its ``robots`` folder), standing posture, soles
    (left, right) and gait defaults (:mod:`.biped`)."""

    urdf: str
    srdf: str
    posture: str
    feet: tuple[str, str]  # left, right
    gait: GaitDefaults


#: The bipeds :mod:`.biped` generates walks of.
BIPEDS: dict[str, _BipedInfo] = {
    "talos": _BipedInfo(
        urdf="talos_data/robots/talos_reduced.urdf",
        srdf="talos_data/srdf/talos.srdf",
        posture="half_sitting",
        feet=("left_sole_link", "right_sole_link"),
        # trot fields unused (a biped walks); walk: 1.2 s per stride (two steps), 0.3 m/s, 5 cm steps, duty 0.6
        gait=GaitDefaults(1.2, 1.2, 0.05, 0.3, 0.3, trot_duty=0.6, walk_duty=0.6),
    ),
}


@dataclass
class SimRobot:
    """A robot ready for the generator.

    Attributes:
        name: short name (``go1``, ...).
        model: pinocchio model with the free-flyer ``root_joint``.
        imu: the IMU spec (from the description, or hand-built).
        feet: foot frame names (front-left, front-right, hind-left, hind-right).
        q_standing: (nq,) standing configuration with the foot frame origins on the plane z = 0 and yaw 0 at
            the origin (the generator raises the base by the foot radius for spherical feet).
        base_link: name of the base link (child frame of the ground-truth odometry).
        description_xml: the robot description text (URDF with its ``<gazebo>`` IMU block and the feet's
            collision spheres), as bundled. A point-foot run stores it without the foot spheres
            (:func:`point_feet_description`).
        gait: gait defaults.
        source: where model and IMU came from (always ``"description"``: the bundled description).
        foot_radii: (nf,) m, per foot the radius of its collision sphere centred at the foot frame origin
            (``RobotDescription.foot_radius``; 0 = point foot): Go1 0.02, Solo12 and ANYmal C 0 (their
            bundled descriptions have no sphere centred at the foot frame).
    """

    name: str
    model: pin.Model
    imu: ImuSpec
    feet: tuple[str, ...]
    q_standing: NDArray[np.float64]
    base_link: str
    description_xml: str
    gait: GaitDefaults
    source: str
    foot_radii: tuple[float, ...] = ()

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Actuated joint names in pinocchio order."""
        return tuple(self.model.names[i] for i in range(2, self.model.njoints))


def _standing(robot: str, model: pin.Model, feet: tuple[str, ...]) -> NDArray[np.float64]:
    return _standing_from(model, feet, example_robot_data_share() / "robots" / ROBOTS[robot].srdf)


def _standing_from(model: pin.Model, feet: tuple[str, ...], srdf: Path | None) -> NDArray[np.float64]:
    """The SRDF's ``standing`` configuration (the neutral one when ``srdf`` is None), yaw 0 at the origin, the
    foot frame origins on z = 0."""
    if srdf is None:
        q = np.array(pin.neutral(model), dtype=float)
    else:
        try:
            pin.loadReferenceConfigurations(model, str(srdf), False)
            q = np.array(model.referenceConfigurations["standing"], dtype=float)
        except (KeyError, IndexError, RuntimeError) as exc:
            raise SimulationError(f"{srdf} has no 'standing' configuration for this model ({exc})") from exc
    q[:3] = 0.0
    q[3:7] = (0.0, 0.0, 0.0, 1.0)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    z_feet = [data.oMf[model.getFrameId(f)].translation[2] for f in feet]
    q[2] = -float(np.mean(z_feet))
    return q


_COLLISION_RE = re.compile(r"\s*<collision\b(?:(?!</collision>).)*?<sphere\b(?:(?!</collision>).)*</collision>", re.S)


def point_feet_description(xml: str, feet: tuple[str, ...]) -> str:
    """The description with every ``<collision>`` holding a ``<sphere>`` removed from the foot links.

    A point-foot run (``foot_model="point"``, see :mod:`.generator`) keeps the foot frame origins fixed in
    stance; the description stored with it must say so, or an estimator reading the foot radius from it
    (``ekf.foot_radius_m`` < 0, the default) would model rolling spheres the run does not have. Only the
    foot links' sphere collisions are touched (a comment marks the change); everything else is kept as is.
    """
    out = xml
    changed = False
    for foot in feet:
        m = re.search(rf"<link\s+name\s*=\s*[\"']{re.escape(foot)}[\"']\s*>(.*?)</link>", out, re.S)
        if m is None:
            continue
        body, n = _COLLISION_RE.subn("", m.group(1))
        if n:
            changed = True
            out = out[: m.start(1)] + body + out[m.end(1) :]
    if changed:
        note = "<!-- robot_state_estimator simulation: foot sphere collisions removed (the run has point feet) -->"
        head = re.match(r"\s*<\?xml[^>]*\?>", out)
        i = head.end() if head else 0
        out = out[:i] + "\n" + note + out[i:]
    return out


def load_sim_robot(robot: str) -> SimRobot:
    """Model, IMU, feet and standing posture of ``robot``.

    Raises:
        SimulationError: unknown robot, or its files are missing.
    """
    if robot not in ROBOTS:
        raise SimulationError(f"unknown robot {robot!r}; known: {sorted(ROBOTS)}")
    info = ROBOTS[robot]
    desc = load_description(robot_description_path(robot))
    model, imu, base_link, xml = desc.model, desc.imu, desc.base_link, desc.xml
    for foot in info.feet:
        if not model.existFrame(foot):
            raise SimulationError(f"{robot}: foot frame {foot!r} not in the model")
    q_standing = _standing(robot, model, info.feet)
    return SimRobot(
        name=robot,
        model=model,
        imu=imu,
        feet=info.feet,
        q_standing=q_standing,
        base_link=base_link,
        description_xml=xml,
        gait=info.gait,
        source="description",
        foot_radii=tuple(float(desc.foot_radius(f)) for f in info.feet),
    )


#: m, the Go1's standing base height above its feet: the reference of :func:`scaled_gait` (Go1 gait defaults).
_GO1_HEIGHT_M = 0.254


def scaled_gait(height_m: float) -> GaitDefaults:
    """The Go1's gait defaults scaled to a robot whose base stands ``height_m`` above its feet, with dynamic
    similarity (equal Froude number ``v^2 / (g h)``): lengths (step height) by ``k = h / h_go1``, periods and
    speeds by ``sqrt(k)`` (Alexander 1984, "The gaits of bipedal and quadrupedal animals")."""
    go1 = ROBOTS["go1"].gait
    k = max(height_m, 1e-3) / _GO1_HEIGHT_M
    r = float(np.sqrt(k))
    return GaitDefaults(
        trot_period_s=go1.trot_period_s * r,
        walk_period_s=go1.walk_period_s * r,
        step_height_m=go1.step_height_m * k,
        trot_speed_m_s=go1.trot_speed_m_s * r,
        walk_speed_m_s=go1.walk_speed_m_s * r,
    )


def quadruped_feet(desc: RobotDescription, feet: tuple[str, ...] | None = None) -> tuple[str, str, str, str]:
    """The four feet of ``desc`` (``feet``, else ``desc.foot_frames()``) in the generator's order front-left,
    front-right, hind-left, hind-right, told by their position in the base at the neutral configuration (x
    forward, y left: REP-103).

    Raises:
        SimulationError: not four feet, or not two in front and two on the left.
    """
    names = tuple(feet) if feet else tuple(desc.foot_frames())
    model = desc.model
    if len(names) != 4:
        raise SimulationError(f"simulate generates quadruped gaits: {desc.name!r} has {len(names)} feet {list(names)}")
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    X_world_base = data.oMf[model.getFrameId(desc.base_link)]
    p = {f: X_world_base.actInv(data.oMf[model.getFrameId(f)]).translation for f in names}
    by_x = sorted(names, key=lambda f: -p[f][0])
    front, hind = by_x[:2], by_x[2:]
    ordered = []
    for pair in (front, hind):
        left, right = sorted(pair, key=lambda f: -p[f][1])
        if not p[left][1] > p[right][1]:
            raise SimulationError(f"feet {list(pair)} of {desc.name!r} are not a left and a right foot")
        ordered += [left, right]
    return (ordered[0], ordered[1], ordered[2], ordered[3])


def find_standing_srdf(source: str | Path) -> Path | None:
    """An SRDF with a ``standing`` state next to a description file laid out as example-robot-data's
    (``<robot>_description/urdf/<robot>.urdf`` or ``.../robots/<robot>.urdf``, and ``<robot>_description/srdf/``):
    the one named as the description (``a1.urdf``: ``a1.srdf``), else the one whose name the description's begins
    with, longest first (``solo12.urdf``: ``solo.srdf``, ``hyq_no_sensors.urdf``: ``hyq.srdf``); None when there is
    none (or ``source`` is no file)."""
    try:
        path = Path(source)
        if not path.is_file():
            return None
    except (OSError, ValueError):
        return None
    stem = path.stem.split(".")[0]
    standing = [
        srdf
        for srdf in sorted(path.resolve().parent.parent.glob("srdf/*.srdf"))
        if "standing" in srdf.read_text(errors="replace")
    ]
    exact = [srdf for srdf in standing if srdf.stem == stem]
    prefixes = sorted((srdf for srdf in standing if stem.startswith(srdf.stem)), key=lambda p: -len(p.stem))
    found = exact or prefixes
    return found[0] if found else None


#: smallest over largest singular value of a leg's foot Jacobian below which the leg counts as straight (singular)
_SINGULAR_LEG_RATIO = 1e-6


def _check_legs_bent(model: pin.Model, feet: tuple[str, ...], q: NDArray[np.float64], srdf: Path | None) -> None:
    """Refuse a standing configuration in which a leg is straight: its foot Jacobian (translation, over the leg's
    joints) is singular, so the generator's leg inverse kinematics has no solution for the foot velocities.

    Raises:
        SimulationError: naming the feet and the fix (an SRDF ``standing`` state with bent knees).
    """
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    straight = []
    for foot in feet:
        fid = model.getFrameId(foot)
        chain = [j for j in model.supports[model.frames[fid].parentJoint] if j > 1]
        cols = [model.joints[j].idx_v for j in chain]
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:3, cols]
        sv = np.linalg.svd(J, compute_uv=False)
        if sv.size == 0 or sv[-1] <= _SINGULAR_LEG_RATIO * max(float(sv[0]), 1e-300):
            straight.append(foot)
    if straight:
        where = f"the 'standing' configuration of {srdf}" if srdf is not None else "the neutral configuration (no SRDF)"
        raise SimulationError(
            f"the legs of {straight} are straight (singular) in {where}: the simulated gait needs bent knees; give "
            "--srdf FILE with a group_state named 'standing' (example-robot-data's layout: "
            "<robot>_description/srdf/<robot>.srdf)"
        )


def sim_robot_from_description(
    desc: RobotDescription, *, feet: tuple[str, ...] | None = None, srdf: Path | None = None
) -> SimRobot:
    """A :class:`SimRobot` for any quadruped description whose legs have 3 joints: its IMU (``desc.imu``: the
    one chosen or declared, see ``RobotDescription.with_imu`` / ``with_declared_imu``), its four feet
    (:func:`quadruped_feet`), the ``standing`` configuration of ``srdf`` (the neutral configuration when None)
    and gait defaults scaled from the Go1's (:func:`scaled_gait`).

    Raises:
        SimulationError: not a quadruped, no standing configuration in ``srdf``, a straight leg in the standing
            configuration.
        DescriptionError: ``desc`` has no IMU, or several and none chosen.
    """
    imu = desc.imu
    order = quadruped_feet(desc, feet)
    model = desc.model
    q_standing = _standing_from(model, order, srdf)
    _check_legs_bent(model, order, q_standing, srdf)
    return SimRobot(
        name=desc.name,
        model=model,
        imu=imu,
        feet=order,
        q_standing=q_standing,
        base_link=desc.base_link,
        description_xml=desc.xml,
        gait=scaled_gait(float(q_standing[2])),
        source="description",
        foot_radii=tuple(float(desc.foot_radius(f)) for f in order),
    )


_UPDATE_RATE_RE = re.compile(r"(<update_rate>)\s*([^<]*?)\s*(</update_rate>)")
_STDDEV_RE = re.compile(r"(<stddev>)\s*([^<]*?)\s*(</stddev>)")


def imu_at_rate(robot: SimRobot, description_xml: str, rate_hz: float) -> tuple[SimRobot, str]:
    """The robot and its description with the IMU sampled at ``rate_hz`` instead of its ``<update_rate>``, the
    sensor's white-noise density kept: each white-noise ``stddev`` (per sample) times ``sqrt(rate_hz / update_rate)``
    (the per-sample noise of a density is proportional to the square root of the rate, whichever constant a
    description's rule uses); the biases (turn-on, Gauss-Markov: a density already) are kept. The run's samples, its
    ``ImuSpec`` and the description stored with it (that sensor's ``<update_rate>`` and ``<stddev>`` values, matched
    by the sensor's name) then agree: gz-sensors draws each sample with the stated ``stddev`` whatever the rate, so the
    stored description is what it would sample so. An IMU declared by the estimator's settings (``imu.source ==
    "settings"``: no ``<sensor>`` in the description) has only its spec changed; a replay of the run must then declare
    ``declared_imu.update_rate_hz`` as ``rate_hz`` (the rate that converts the declared densities to per-sample
    stddevs). Unchanged when the rate is the description's, or it states none (0).

    Args:
        robot: the simulated robot (its ``imu``). description_xml: its description (URDF or SDFormat text).
        rate_hz: Hz, the simulated IMU rate (``SimulationSettings.imu_rate_hz``).

    Raises:
        SimulationError: the description's text has no ``<sensor>`` of the IMU's name with an ``<update_rate>``.
    """
    rate0 = robot.imu.update_rate
    if rate0 <= 0.0 or rate_hz == rate0:
        return robot, description_xml
    k = math.sqrt(rate_hz / rate0)

    def scaled(axes: tuple[NoiseSpec, NoiseSpec, NoiseSpec]) -> tuple[NoiseSpec, NoiseSpec, NoiseSpec]:
        x, y, z = (dataclasses.replace(a, stddev=a.stddev * k) for a in axes)
        return x, y, z

    imu = dataclasses.replace(
        robot.imu,
        update_rate=float(rate_hz),
        angular_velocity_noise=scaled(robot.imu.angular_velocity_noise),
        linear_acceleration_noise=scaled(robot.imu.linear_acceleration_noise),
    )
    robot = dataclasses.replace(robot, imu=imu)
    if imu.source == "settings":
        return robot, description_xml
    name = re.escape(imu.name.split("::")[-1])
    sensor_re = rf"<sensor\b[^>]*\bname\s*=\s*[\"']{name}[\"'][^>]*>.*?</sensor>"
    m = re.search(sensor_re, description_xml, re.S)
    if m is None or not _UPDATE_RATE_RE.search(m.group(0)):
        raise SimulationError(f"{robot.name}: no <sensor name={imu.name!r}> with an <update_rate> in the description")
    block = _UPDATE_RATE_RE.sub(lambda g: f"{g.group(1)}{float(rate_hz)!r}{g.group(3)}", m.group(0), count=1)
    block = _STDDEV_RE.sub(lambda g: f"{g.group(1)}{float(g.group(2)) * k!r}{g.group(3)}", block)
    note = (
        f"<!-- robot_state_estimator simulation: the IMU sampled at {rate_hz:g} Hz (description: {rate0:g} Hz), "
        "white-noise stddevs scaled by sqrt of the rates' ratio (the same density) -->"
    )
    return robot, description_xml[: m.start()] + note + block + description_xml[m.end() :]
