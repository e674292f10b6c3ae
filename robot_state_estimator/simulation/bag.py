"""Write a :class:`SimulatedRun` as a rosbag2 (mcap) with the robot description and the settings next to it.

Layout of ``out_dir``::

    out_dir/
      bag/                      rosbag2 directory (mcap by default; metadata.yaml + bag_0.mcap)
      robot_description.urdf    the description the run was generated from (with its <gazebo> IMU block; with
                                the foot collision spheres for rolling feet, without them for point feet)
      run.yaml                  settings (incl. seed and foot model), robot, frames, feet, topics, summary

Topics (stamps = sample stamps; log time = stamp):

- ``/imu/data`` (sensor_msgs/Imu): ``frame_id`` = the IMU's ``frame_id``; covariances from the noise
  stddevs (REP-145; orientation covariance ``[-1, 0, ...]`` when orientation is not reported).
- ``/joint_states`` (sensor_msgs/JointState): name, position, velocity, effort.
- ``/ground_truth/odom`` (nav_msgs/Odometry): ``odom`` -> base link, pose in ``odom``, twist in the base
  frame, at every ground-truth sample (the union of IMU and joint stamps); covariance diagonal
  ``GROUND_TRUTH_VARIANCE`` (never all zero, per the project conventions).
- ``/ground_truth/contact_wrench/<foot>`` (geometry_msgs/WrenchStamped): ground reaction on the foot,
  expressed in the foot frame (``frame_id`` = foot frame) about its origin (on a spherical foot the force
  acts at the contact point, ``rho`` below the centre: torque ``(-rho e_z) x f``), at the joint stamps.
- ``/ground_truth/contacts`` (diagnostic_msgs/DiagnosticArray): one status per foot, as built by
  :func:`robot_state_estimator.io.messages.contact_states_msg` (``values``: ``contact`` "1"/"0",
  ``normal_force`` N, ``update_accepted`` always "0" here), at the joint stamps.

Optional foot sensors (``write_run_bag(foot_wrenches=True, contact_schedule=True)``):

- ``/<foot>/wrench`` (geometry_msgs/WrenchStamped): the ground truth wrench on each foot as a force/torque sensor
  reports it, in ``foot_wrench_frames[foot]`` (any frame of the description, default the foot frame; moved there
  with pinocchio at the sample's true configuration), plus seeded white noise (``foot_wrench_noise_n`` N on the
  force, a tenth of it in N m on the torque), at the joint stamps.
- ``/contact_schedule`` (sensor_msgs/JointState: name = feet, position = 1 stance / 0 swing): the gait's contact
  schedule (the ground truth contacts), at the joint stamps.

Messages are built with :mod:`robot_state_estimator.io.messages` from core sample types.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import numpy as np
import yaml
from numpy.typing import NDArray

from robot_state_estimator.common.samples import (
    ContactScheduleSample,
    Estimate,
    FootState,
    FootWrenchSample,
    ImuSample,
    JointSample,
)
from robot_state_estimator.io import messages as m
from robot_state_estimator.io.bags import BagWriter, default_types
from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.run import SimulatedRun

TOPIC_IMU = "/imu/data"
TOPIC_JOINTS = "/joint_states"
TOPIC_ODOM = "/ground_truth/odom"
TOPIC_CONTACTS = "/ground_truth/contacts"
TOPIC_WRENCH_PREFIX = "/ground_truth/contact_wrench/"
TOPIC_SCHEDULE = "/contact_schedule"


def foot_wrench_topic(foot: str) -> str:
    """The simulated force/torque sensor topic of ``foot`` (the node's default ``foot_wrench_topics``)."""
    return f"/{foot}/wrench"


#: Variance on the diagonal of the ground-truth odometry covariances (m^2, rad^2, ...).
GROUND_TRUTH_VARIANCE = 1e-12


def imu_samples(run: SimulatedRun) -> list[ImuSample]:
    """The run's IMU readings as :class:`ImuSample` (orientation None when not reported)."""
    out = []
    stamps = run.imu_stamps_ns
    for j in range(stamps.size):
        quat = run.imu_quat_xyzw[j]
        out.append(
            ImuSample(
                stamp_ns=int(stamps[j]),
                angular_velocity=run.imu_omega[j].copy(),
                linear_acceleration=run.imu_f[j].copy(),
                orientation_xyzw=None if np.isnan(quat[0]) else quat.copy(),
                frame_id=run.imu.frame_id,
            )
        )
    return out


def joint_samples(run: SimulatedRun) -> list[JointSample]:
    """The run's joint readings as :class:`JointSample`."""
    stamps = run.joint_stamps_ns
    return [
        JointSample(
            stamp_ns=int(stamps[j]),
            names=run.joint_names,
            position=run.joint_position[j].copy(),
            velocity=run.joint_velocity[j].copy(),
            effort=run.joint_effort[j].copy(),
        )
        for j in range(stamps.size)
    ]


def foot_wrench_samples(
    run: SimulatedRun, frames: dict[str, str] | None = None, *, noise_n: float = 0.0
) -> list[list[FootWrenchSample]]:
    """Per joint sample, each foot's ground-truth wrench as a force/torque sensor in ``frames[foot]`` reports it.

    The wrench of the ground on the foot, ``w_F`` (force and moment about the foot origin, foot axes:
    ``SimulatedRun.contact_wrenches_in_foot``), moved to frame S at the sample's true configuration:
    ``w_S = X_SF . w_F`` (pinocchio ``SE3.act`` on a ``Force``, ``X_SF = oMf[S]^-1 oMf[F]``), then white noise,
    seeded from the run's seed: N(0, noise_n) N per force axis, N(0, noise_n / 10) N m per torque axis.

    Raises:
        SimulationError: a frame that is not one of the description's.
    """
    import pinocchio as pin

    from robot_state_estimator.description import load_description

    frames = dict(frames or {})
    model = load_description(run.description_xml).model
    data = model.createData()
    unknown = sorted({f for f in frames.values() if not model.existFrame(f)} | (set(frames) - set(run.feet)))
    if unknown:
        raise SimulationError(f"foot wrench frames: {unknown} are not feet / frames of the description")
    rng = np.random.default_rng([int(run.settings.seed), 15])
    fids = {foot: model.getFrameId(foot) for foot in run.feet}
    sids = {foot: model.getFrameId(frames.get(foot, foot)) for foot in run.feet}
    out = []
    for j, stamp in enumerate(run.joint_stamps_ns.tolist()):
        k = int(run.joint_index[j])
        pin.framesForwardKinematics(model, data, run.q[k])
        row = []
        for i, foot in enumerate(run.feet):
            w = np.asarray(run.contact_wrenches_in_foot[k, i], dtype=float)
            if sids[foot] != fids[foot]:
                X_sensor_foot = data.oMf[sids[foot]].actInv(data.oMf[fids[foot]])
                w = X_sensor_foot.act(pin.Force(w[:3], w[3:])).vector
            if noise_n > 0.0:
                w = w + rng.normal(size=6) * np.repeat([noise_n, noise_n / 10], 3)
            row.append(FootWrenchSample(int(stamp), foot, frames.get(foot, foot), np.array(w)))
        out.append(row)
    return out


def ground_truth_estimates(run: SimulatedRun, indices: NDArray[np.intp] | None = None) -> list[Estimate]:
    """Ground truth as :class:`Estimate` at the grid samples ``indices`` (all when None), status
    ``"ground_truth"``, covariances ``GROUND_TRUTH_VARIANCE * I``."""
    cov = np.eye(6) * GROUND_TRUTH_VARIANCE
    zero = np.zeros(3)
    idx = np.arange(run.stamps_ns.size) if indices is None else indices
    return [
        Estimate(
            stamp_ns=int(run.stamps_ns[k]),
            p_world_base=run.q[k, :3].copy(),
            quat_world_base_xyzw=run.q[k, 3:7].copy(),
            v_base_in_base=run.v[k, :3].copy(),
            omega_base_in_base=run.v[k, 3:6].copy(),
            pose_covariance=cov,
            twist_covariance=cov,
            accel_bias=zero,
            gyro_bias=zero,
            status="ground_truth",
        )
        for k in idx
    ]


def _foot_states(run: SimulatedRun, k: int) -> list[FootState]:
    return [
        FootState(
            name=foot,
            in_contact=bool(run.contact[k, i]),
            force_in_world=run.contact_forces_world[k, i],
            wrench_in_foot=run.contact_wrenches_in_foot[k, i],
        )
        for i, foot in enumerate(run.feet)
    ]


class RunSummary(TypedDict):
    """What :func:`run_summary` returns (the ``summary`` of ``run.yaml``)."""

    samples: int
    imu_samples: int
    joint_samples: int
    path_length_m: float
    final_position_m: list[float]
    duration_s: float
    max_base_residual_force_n: float
    max_base_residual_torque_nm: float
    max_base_residual_force_norm_n: float
    max_base_residual_torque_norm_nm: float
    unbalanced_samples: int
    unilateral_samples: int
    min_normal_force_n: float | None
    friction_violations: int
    imu_gyro_bias_rad_s: list[float]
    imu_accel_bias_m_s2: list[float]


def run_summary(run: SimulatedRun) -> RunSummary:
    """Numbers worth keeping with a run (for ``run.yaml`` and logs).

    Besides sizes, path and biases: ``max_base_residual_force_n`` / ``_torque_nm`` (largest component of
    ``base_residual_wrench``) and ``..._norm_n`` / ``..._norm_nm`` (largest norm); ``unbalanced_samples``
    (samples whose residual is above rounding), ``unilateral_samples`` (samples solved with ``f_z >= 0``
    bounds), ``min_normal_force_n`` (smallest ``f_z`` of a foot in stance, N; None without stance),
    ``friction_violations`` ((sample, foot) pairs outside the friction cone); see :class:`SimulatedRun`.
    """
    t = run.t_s
    fz = run.contact_forces_world[..., 2][run.contact]
    return {
        "samples": int(run.stamps_ns.size),
        "imu_samples": int(run.imu_index.size),
        "joint_samples": int(run.joint_index.size),
        "path_length_m": float(np.sum(np.linalg.norm(np.diff(run.q[:, :3], axis=0), axis=1))),
        "final_position_m": [float(x) for x in run.q[-1, :3]],
        "duration_s": float(t[-1] - t[0]),
        "max_base_residual_force_n": float(np.abs(run.base_residual_wrench[:, :3]).max()),
        "max_base_residual_torque_nm": float(np.abs(run.base_residual_wrench[:, 3:]).max()),
        "max_base_residual_force_norm_n": float(np.linalg.norm(run.base_residual_wrench[:, :3], axis=1).max()),
        "max_base_residual_torque_norm_nm": float(np.linalg.norm(run.base_residual_wrench[:, 3:], axis=1).max()),
        "unbalanced_samples": int(run.unbalanced_samples),
        "unilateral_samples": int(run.unilateral_samples),
        "min_normal_force_n": float(fz.min()) if fz.size else None,
        "friction_violations": int(run.friction_violations),
        "imu_gyro_bias_rad_s": [float(x) for x in run.imu_gyro_bias],
        "imu_accel_bias_m_s2": [float(x) for x in run.imu_accel_bias],
    }


def write_run_bag(
    run: SimulatedRun,
    out_dir: str | Path,
    *,
    storage: str = "mcap",
    odom_frame: str = "odom",
    overwrite: bool = False,
    foot_wrenches: bool = False,
    foot_wrench_frames: dict[str, str] | None = None,
    foot_wrench_noise_n: float = 0.0,
    contact_schedule: bool = False,
) -> Path:
    """Write ``run`` to ``out_dir`` (layout in the module docstring).

    Args:
        run: the generated run.
        out_dir: output folder (created; may exist, but its ``bag/`` must not unless ``overwrite``).
        storage: ``"mcap"`` or ``"sqlite3"``.
        odom_frame: ``header.frame_id`` of the ground-truth odometry.
        overwrite: remove an existing ``bag/``, ``run.yaml`` and ``robot_description.urdf`` first.
        foot_wrenches: also write ``/<foot>/wrench`` (:func:`foot_wrench_samples`).
        foot_wrench_frames: foot -> frame its wrench is expressed in (default the foot frame).
        foot_wrench_noise_n: N, stddev of the force noise of the foot wrenches (seeded).
        contact_schedule: also write ``/contact_schedule`` (the gait's contacts).

    Returns:
        Path of the bag directory (``out_dir/bag``).

    Raises:
        SimulationError: ``out_dir/bag`` exists and ``overwrite`` is false; a write failed (cause chained).
    """
    out_dir = Path(out_dir)
    bag_dir = out_dir / "bag"
    if bag_dir.exists():
        if not overwrite:
            raise SimulationError(f"{bag_dir} exists; pass overwrite=True (--overwrite) or choose another output")
        import shutil

        shutil.rmtree(bag_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        with BagWriter(bag_dir, storage=storage) as bag:
            wrenches = (
                foot_wrench_samples(run, foot_wrench_frames, noise_n=foot_wrench_noise_n) if foot_wrenches else None
            )
            _write_messages(bag, run, odom_frame=odom_frame, wrenches=wrenches, contact_schedule=contact_schedule)
    except SimulationError:
        raise
    except Exception as exc:
        raise SimulationError(f"writing {bag_dir} failed: {exc}") from exc
    (out_dir / "robot_description.urdf").write_text(run.description_xml)
    info = _run_info(
        run, odom_frame=odom_frame, storage=storage, foot_wrenches=foot_wrenches, contact_schedule=contact_schedule
    )
    (out_dir / "run.yaml").write_text(yaml.safe_dump(info, sort_keys=False))
    return bag_dir


def _write_messages(
    bag: BagWriter,
    run: SimulatedRun,
    *,
    odom_frame: str,
    wrenches: list[list[FootWrenchSample]] | None,
    contact_schedule: bool,
) -> None:
    """Every message of ``run`` into ``bag`` in stamp order (topics in the module docstring): at equal stamps the
    ground truth first, then the IMU, then the joint stamp's messages (contact schedule, foot wrenches, joints,
    ground-truth contact wrenches and contacts); writers order by log time, then by insertion."""
    types = default_types()
    cov = run.imu_covariances
    gt = ground_truth_estimates(run)
    imu = imu_samples(run)
    joints = joint_samples(run)
    events: list[tuple[int, int, int]] = []  # (stamp, kind, index)
    events += [(e.stamp_ns, 0, i) for i, e in enumerate(gt)]
    events += [(s.stamp_ns, 1, i) for i, s in enumerate(imu)]
    events += [(s.stamp_ns, 2, i) for i, s in enumerate(joints)]
    events.sort()
    for stamp, kind, i in events:
        if kind == 0:
            odometry = m.odometry_msg(types, gt[i], odom_frame=odom_frame, base_frame=run.base_link)
            bag.write(TOPIC_ODOM, odometry, stamp)
        elif kind == 1:
            imu_msg = m.imu_msg(
                types,
                imu[i],
                angular_velocity_covariance=cov["angular_velocity"],
                linear_acceleration_covariance=cov["linear_acceleration"],
                orientation_covariance=cov["orientation"],
            )
            bag.write(TOPIC_IMU, imu_msg, stamp)
        else:
            k = int(run.joint_index[i])
            if contact_schedule:  # before the joints at equal stamps (log time, then insertion order)
                sched = ContactScheduleSample(stamp, run.feet, tuple(bool(c) for c in run.contact[k]))
                bag.write(TOPIC_SCHEDULE, m.contact_schedule_msg(types, sched), stamp)
            if wrenches is not None:
                for w in wrenches[i]:
                    wrench = m.wrench_stamped_msg(types, w.stamp_ns, w.frame_id, w.wrench)
                    bag.write(foot_wrench_topic(w.foot), wrench, stamp)
            bag.write(TOPIC_JOINTS, m.joint_state_msg(types, joints[i]), stamp)
            feet = _foot_states(run, k)
            for foot in feet:
                bag.write(TOPIC_WRENCH_PREFIX + foot.name, m.foot_wrench_msg(types, stamp, foot), stamp)
            bag.write(TOPIC_CONTACTS, m.contact_states_msg(types, stamp, feet), stamp)


def _run_info(
    run: SimulatedRun, *, odom_frame: str, storage: str, foot_wrenches: bool, contact_schedule: bool
) -> dict[str, object]:
    """The content of ``run.yaml``: robot, seed, settings, frames, feet, joints, topics, storage and summary."""
    return {
        "robot": run.robot,
        "seed": run.settings.seed,
        "settings": run.settings.to_dict(),
        "frames": {
            "odom": odom_frame,
            "base_link": run.base_link,
            "imu": run.imu.frame_id,
            "imu_link": run.imu.link,
            "feet": list(run.feet),
        },
        "feet": {"model": run.foot_model, "radii_m": [float(r) for r in run.foot_radii]},
        "joint_names": list(run.joint_names),
        "topics": {
            "imu": TOPIC_IMU,
            "joints": TOPIC_JOINTS,
            "ground_truth_odom": TOPIC_ODOM,
            "contacts": TOPIC_CONTACTS,
            "contact_wrenches": [TOPIC_WRENCH_PREFIX + f for f in run.feet],
            **({"foot_wrenches": [foot_wrench_topic(f) for f in run.feet]} if foot_wrenches else {}),
            **({"contact_schedule": TOPIC_SCHEDULE} if contact_schedule else {}),
        },
        "storage": storage,
        "summary": run_summary(run),
    }
