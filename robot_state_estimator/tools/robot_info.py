"""``robot-state-estimator info DESCRIPTION``: what the estimator will use for a robot, and a settings template.

:func:`robot_report` loads the description (a file, a ``package://`` / ``model://`` URI or the XML text), applies
the settings' IMU choice or declaration (``estimation.imu_setup``), builds the estimator on it and reads back
what it uses: base link, IMU (name, where it comes from, link, pose in the base, rate, the noise the filter
uses), feet (and how they were found), foot radii, joints, mass, contact thresholds in N. Every number comes from
the estimator that was built (its ``ekf.noise``, ``torque_detector``, ``forces.weight_n``), not recomputed here.

:func:`config_template` writes a commented settings file for that robot (ROS 2 parameter-file layout, loadable
as is by the node's ``--params-file``, ``replay --config`` and ``load_settings``): the IMU choice or a declared
IMU (on the link whose name says ``imu``, else the base, with a comment to check it), the feet, and the
contact and noise settings with their values in N and per robot.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from robot_state_estimator.estimation.settings import EstimatorSettings
from robot_state_estimator.estimation.settings_loading import NODE_KEY, PARAMS_KEY


def settings_for(config: str | None, sets: list[str] | None, imu: str | None) -> EstimatorSettings:
    """Settings from ``--config`` (a settings YAML), ``--set NAME=VALUE`` items and ``--imu NAME`` (imu_name),
    read as replay reads them.

    Raises:
        SettingsError, ReplayError: naming the file, the setting and the value.
    """
    import dataclasses

    from robot_state_estimator.tools.replay import apply_overrides, split_config

    settings, params = split_config(config)
    settings, _ = apply_overrides(settings, params, list(sets or []))
    if imu:
        settings = dataclasses.replace(settings, imu_name=imu)
    return settings


@dataclass
class RobotReport:
    """What the estimator uses for one robot (see the module docstring); ``imu`` is None when it has none
    (``imu_problem`` says why and how to declare one)."""

    source: str
    name: str
    format: str
    base_link: str
    joints: list[str]
    mass_kg: float
    feet: list[str]
    feet_found_by: str
    foot_radii_m: list[float]
    imus: list[dict[str, Any]]
    imu: dict[str, Any] | None
    imu_problem: str
    contact: dict[str, Any]
    events: list[dict[str, str]] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # links and frames rigidly attached to the base
    flat_feet: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (``--json``)."""
        return dict(self.__dict__)


def _pose_dict(X: pin.SE3) -> dict[str, list[float]]:
    rpy = pin.rpy.matrixToRpy(np.asarray(X.rotation))
    return {"xyz_m": [float(v) for v in X.translation], "rpy_rad": [float(v) for v in rpy]}


def _imu_dict(imu: Any, est: Any) -> dict[str, Any]:
    noise = est.ekf.noise
    return {
        "name": imu.name,
        "from": "settings (declared_imu)" if imu.source == "settings" else "description",
        "link": imu.link,
        "frame_id": imu.frame_id,
        "accepted_frame_ids": list(imu.accepted_frame_ids),
        "pose_in_base": _pose_dict(imu.pose_in_base),
        "update_rate_hz": imu.update_rate,
        "filter_noise": {
            "gyro_density_rad_s_sqrt_hz": [float(v) for v in noise.gyro_density],
            "accel_density_m_s2_sqrt_hz": [float(v) for v in noise.accel_density],
            "gyro_bias_random_walk_rad_s2_sqrt_hz": [float(v) for v in noise.gyro_bias_random_walk],
            "accel_bias_random_walk_m_s3_sqrt_hz": [float(v) for v in noise.accel_bias_random_walk],
            "gyro_bias_prior_std_rad_s": [float(v) for v in noise.gyro_bias_prior_std],
            "accel_bias_prior_std_m_s2": [float(v) for v in noise.accel_bias_prior_std],
        },
    }


def robot_report(source: str, settings: EstimatorSettings) -> RobotReport:
    """Load ``source`` and build the estimator with ``settings``; report what it uses.

    A description without a usable IMU (none, several and none chosen, or one on a link that moves relative to the
    base, as Talos's on its torso) is reported with ``imu`` None and the reason in ``imu_problem`` (an IMU named or
    declared by the settings that does not resolve is an error); the rest (feet, thresholds) is read from an
    estimator built with a stand-in IMU at the base link, so a new robot can be inspected before its IMU is
    declared.

    Raises:
        DescriptionError: the description cannot be read, an unknown ``imu_name``, a declared IMU's link is
            missing, no feet found.
        ModelError: an IMU named or declared by the settings is on a link that moves relative to the base.
    """
    from robot_state_estimator.description import DescriptionError, ImuSpec, load_description
    from robot_state_estimator.estimation import RobotStateEstimator
    from robot_state_estimator.estimation.errors import ModelError
    from robot_state_estimator.estimation.imu_setup import apply_imu_settings

    desc = load_description(source)
    problem = ""
    try:
        chosen = apply_imu_settings(desc, settings)
        est = RobotStateEstimator.from_description(chosen, settings)
    except (DescriptionError, ModelError) as exc:  # ModelError: an IMU on a link that moves relative to the base
        if settings.declared_imu.declared or settings.imu_name or "IMU" not in str(exc):  # asked for: an error
            raise
        problem = str(exc)
        stand_in = ImuSpec(name="(none)", link=desc.base_link, frame_id="")
        chosen = desc
        feet = settings.foot_frames or tuple(desc.foot_frames())
        radii = [desc.foot_radius(f) for f in feet] if settings.ekf.foot_radius_m < 0.0 else None
        est = RobotStateEstimator(desc.model, stand_in, feet, settings, base_link=desc.base_link, foot_radii=radii)
    det = est.torque_detector
    cs = settings.contact
    contact = {
        "source": cs.source,
        "threshold_mode": cs.threshold_mode,
        "weight_n": float(est.forces.weight_n),
        "torque_on_threshold_n": float(det.on_threshold),
        "torque_off_threshold_n": float(det.off_threshold),
        "sensor_on_threshold": cs.sensor_on_threshold,
        "sensor_off_threshold": cs.sensor_off_threshold,
        "kinematic_on_height_m": cs.kinematic_on_height_m,
        "kinematic_off_height_m": cs.kinematic_off_height_m,
    }
    imus = [
        {"name": i.name, "link": i.link, "frame_id": i.frame_id, "from": i.source}
        for i in desc.imus  # the description's own
    ]
    return RobotReport(
        source=source if len(source) < 300 else f"(XML text, {len(source)} characters)",
        name=desc.name,
        format=desc.format,
        base_link=desc.base_link,
        joints=list(desc.joint_names),
        mass_kg=float(pin.computeTotalMass(desc.model)),
        feet=list(est.foot_frames),
        feet_found_by="settings foot_frames"
        if settings.foot_frames
        else "detected: frame names ending in foot, sole or toe at the ends of the legs, one per rigid body",
        foot_radii_m=[float(r) for r in est.foot_radii],
        imus=imus,
        imu=None if problem else _imu_dict(chosen.imu, est),
        imu_problem=problem,
        contact=contact,
        events=[{"key": e.key, "level": e.level, "message": e.message} for e in est.pop_events()],
        links=_links_on_the_base(desc),
        flat_feet=[f for f, flat in zip(est.foot_frames, est.flat_feet.tolist(), strict=True) if flat],
    )


def _links_on_the_base(desc: Any) -> list[str]:
    """The links and SDF frames of ``desc`` that are rigidly attached to its base link (where an IMU may be
    declared), in the description's order."""
    model = desc.model
    moves_with: dict[str, int] = {}  # frame name -> the joint it moves with
    for frame in model.frames:  # a link's BODY frame wins over a joint's frame of the same name (ANYmal's LF_HAA)
        if frame.type == pin.FrameType.BODY or frame.name not in moves_with:
            moves_with[frame.name] = frame.parentJoint
    base_joint = moves_with.get(desc.base_link)
    out = []
    for name, node in desc.graph.nodes.items():
        if node.kind not in ("link", "frame"):
            continue
        try:
            body = desc.frame_body(name)
        except Exception:  # a frame the graph cannot attach: not a candidate
            continue
        if base_joint is not None and moves_with.get(body) == base_joint:
            out.append(name)
    return out


def _vec(values: list[float], digits: int = 6) -> str:
    if len(set(values)) == 1:
        return f"{values[0]:.{digits}g}"
    return "[" + ", ".join(f"{v:.{digits}g}" for v in values) + "]"


def report_text(r: RobotReport) -> str:
    """The report as the lines ``info DESCRIPTION`` prints."""
    lines = [
        f"robot          {r.name} ({r.format}) from {r.source}",
        f"base link      {r.base_link}",
    ]
    if r.imu is None:
        lines.append(f"IMU            none usable: {r.imu_problem}")
    else:
        i = r.imu
        pose = i["pose_in_base"]
        n = i["filter_noise"]
        rate = f"{i['update_rate_hz']:g} Hz" if i["update_rate_hz"] > 0 else "unknown (0: ekf.nominal_imu_rate_hz)"
        lines += [
            f"IMU            {i['name']!r} from the {i['from']}, on link {i['link']!r}, frame_id {i['frame_id']!r} "
            f"(accepted: {i['accepted_frame_ids']}), rate {rate}",
            f"  pose in base xyz {_vec(pose['xyz_m'])} m, rpy {_vec(pose['rpy_rad'])} rad (fixed axes)",
            f"  filter noise gyro {_vec(n['gyro_density_rad_s_sqrt_hz'])} rad/s/sqrt(Hz), accel "
            f"{_vec(n['accel_density_m_s2_sqrt_hz'])} m/s^2/sqrt(Hz); bias random walk gyro "
            f"{_vec(n['gyro_bias_random_walk_rad_s2_sqrt_hz'])} rad/s^2/sqrt(Hz), accel "
            f"{_vec(n['accel_bias_random_walk_m_s3_sqrt_hz'])} m/s^3/sqrt(Hz)",
        ]
    if len(r.imus) > 1 or (r.imus and r.imu is not None and r.imu["from"] != "description"):
        lines.append("  description IMUs: " + ", ".join(f"{d['name']!r} (link {d['link']!r})" for d in r.imus))
    radii = ", ".join(f"{f} {rho:g} m" for f, rho in zip(r.feet, r.foot_radii_m, strict=True))
    c = r.contact
    lines += [
        f"feet           {len(r.feet)}: {r.feet} ({r.feet_found_by})",
        *(f"  one per body {e['message']}" for e in r.events if e["key"] == "foot_frames_merged"),
        f"  foot radius  {radii} (0 = point foot)",
        f"  flat feet    {r.flat_feet or 'none'} (6-D stance update: position and orientation held; "
        "ekf.flat_foot_update)",
        f"joints         {len(r.joints)}: {r.joints}",
        f"mass           {r.mass_kg:.3f} kg (weight {c['weight_n']:.1f} N)",
        f"contacts       source {c['source']}; from torques: on above {c['torque_on_threshold_n']:.1f} N, off below "
        f"{c['torque_off_threshold_n']:.1f} N ({c['threshold_mode']}); foot sensors: on {c['sensor_on_threshold']:g}, "
        f"off {c['sensor_off_threshold']:g} (sensor units); kinematic: on below {c['kinematic_on_height_m']:g} m",
    ]
    for e in r.events:
        if e["level"] != "info":
            lines.append(f"{e['level']:<15}[{e['key']}] {e['message']}")
    return "\n".join(lines)


def _guess_imu_link(r: RobotReport) -> tuple[str, str]:
    named = [n for n in r.links if "imu" in n.lower()]
    if named:
        return named[0], f"the link whose name says imu ({named[0]!r}): check it is where the IMU is"
    return r.base_link, "no link on the base is named imu: the base link is a guess; set the IMU's link and pose in it"


def _yaml(value: Any) -> str:
    return json.dumps(value)  # JSON scalars and lists are YAML flow values


def config_template(r: RobotReport, settings: EstimatorSettings) -> str:
    """A commented settings file for the robot of ``r`` (values from ``settings``; module docstring)."""
    e, c = settings.ekf, settings.contact
    weight = r.contact["weight_n"]
    per_foot = weight / max(len(r.feet), 1)
    out = [
        f"# Estimator settings for {r.name} (written by robot-state-estimator info --write-config from {r.source}).",
        "# ROS 2 parameter-file layout: ros2 run robot_state_estimator estimator_node --ros-args --params-file FILE,",
        "# robot-state-estimator replay BAG --config FILE, simulate --description ... --config FILE.",
        '# Units: SI; see README.md, "Parameters", and "Add your robot".',
        f"{NODE_KEY}:",
        f"  {PARAMS_KEY}:",
    ]
    if r.imu is not None and r.imu["from"] == "description":
        out.append(f"    imu_name: {_yaml(r.imu['name'])}  # the description's IMU on link {r.imu['link']!r}")
        others = [d["name"] for d in r.imus if d["name"] != r.imu["name"]]
        if others:
            out.append(f"    # other IMUs of the description: {others}")
    else:
        d = settings.declared_imu
        if d.declared:
            link, why = d.link, "as declared"
        else:
            link, why = _guess_imu_link(r)
        out += [
            "    # The description has no IMU the filter can use: it is declared here (replaces any of the "
            "description's when set).",
            f"    imu_name: {_yaml(settings.imu_name or 'imu')}",
            "    declared_imu:",
            f"      link: {_yaml(link)}  # {why}",
            f"      pose: {_yaml(list(d.pose))}  # x y z (m) roll pitch yaw (rad) of the IMU frame in the link",
            f'      frame_id: {_yaml(d.frame_id)}  # header.frame_id of imu/data; "" = the link (zero pose)',
            f"      update_rate_hz: {_yaml(d.update_rate_hz)}  # Hz; 0 = unknown",
            "      # noise from the IMU's datasheet; 0 = not given: the ekf.* value below is assumed (a warning)",
            f"      gyro_noise_density_rad_s_sqrt_hz: {_yaml(d.gyro_noise_density_rad_s_sqrt_hz)}"
            "  # deg/s/sqrt(Hz) * pi/180",
            f"      accel_noise_density_m_s2_sqrt_hz: {_yaml(d.accel_noise_density_m_s2_sqrt_hz)}"
            "  # ug/sqrt(Hz) * 9.81e-6",
            f"      gyro_bias_instability_rad_s: {_yaml(d.gyro_bias_instability_rad_s)}",
            f"      accel_bias_instability_m_s2: {_yaml(d.accel_bias_instability_m_s2)}",
            f"      gyro_bias_random_walk_rad_s2_sqrt_hz: {_yaml(d.gyro_bias_random_walk_rad_s2_sqrt_hz)}",
            f"      accel_bias_random_walk_m_s3_sqrt_hz: {_yaml(d.accel_bias_random_walk_m_s3_sqrt_hz)}",
        ]
    out += [
        f"    foot_frames: {_yaml(r.feet)}  # {r.feet_found_by}",
        "    ekf:",
        f"      use_description_noise: {_yaml(e.use_description_noise)}  # the IMU's <noise> (or declared noise) first",
        f"      accel_noise_density: {_yaml(e.accel_noise_density)}  # m/s^2/sqrt(Hz), where the IMU gives none",
        f"      gyro_noise_density: {_yaml(e.gyro_noise_density)}  # rad/s/sqrt(Hz)",
        f"      accel_bias_random_walk: {_yaml(e.accel_bias_random_walk)}  # m/s^3/sqrt(Hz)",
        f"      gyro_bias_random_walk: {_yaml(e.gyro_bias_random_walk)}  # rad/s^2/sqrt(Hz)",
        f"      foot_velocity_noise: {_yaml(e.foot_velocity_noise)}  # m/s, leg-odometry velocity per foot",
        f"      foot_creep_density: {_yaml(e.foot_creep_density)}  # m/sqrt(s), contact point creep over a stance",
        f"      foot_radius_m: {_yaml(e.foot_radius_m)}  # m; -1 = from the description: {_vec(r.foot_radii_m)} m",
        "    contact:",
        f"      source: {_yaml(c.source)}  # auto: foot sensors if streaming, else joint torques, else kinematic",
        f"      threshold_mode: {_yaml(c.threshold_mode)}",
    ]
    if c.threshold_mode == "weight_relative":
        out += [
            f"      # fractions of the weight per foot: {weight:.1f} N / {len(r.feet)} = {per_foot:.1f} N here",
            f"      on_threshold: {_yaml(c.on_threshold)}  # = {c.on_threshold * per_foot:.1f} N",
            f"      off_threshold: {_yaml(c.off_threshold)}  # = {c.off_threshold * per_foot:.1f} N",
        ]
    else:
        out += [
            f"      on_threshold: {_yaml(c.on_threshold)}  # N",
            f"      off_threshold: {_yaml(c.off_threshold)}  # N",
        ]
    out += [
        f"      sensor_on_threshold: {_yaml(c.sensor_on_threshold)}  # foot sensors, in their unit",
        f"      sensor_off_threshold: {_yaml(c.sensor_off_threshold)}",
    ]
    return "\n".join(out) + "\n"


def write_config(path: str | Path, r: RobotReport, settings: EstimatorSettings) -> Path:
    """Write :func:`config_template` to ``path`` (parent folders created); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(config_template(r, settings), encoding="utf-8")
    return p


__all__ = ["RobotReport", "config_template", "report_text", "robot_report", "settings_for", "write_config"]
