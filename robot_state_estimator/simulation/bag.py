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

Messages are built with :mod:`robot_state_estimator.io.messages` from core sample types.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rosbags.rosbag2 import StoragePlugin, Writer

from robot_state_estimator.estimation.types import Estimate, FootState, ImuSample, JointSample
from robot_state_estimator.io import messages as m
from robot_state_estimator.io.bags import default_types, default_typestore
from robot_state_estimator.simulation.errors import SimulationError
from robot_state_estimator.simulation.run import SimulatedRun

TOPIC_IMU = "/imu/data"
TOPIC_JOINTS = "/joint_states"
TOPIC_ODOM = "/ground_truth/odom"
TOPIC_CONTACTS = "/ground_truth/contacts"
TOPIC_WRENCH_PREFIX = "/ground_truth/contact_wrench/"

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


def ground_truth_estimates(run: SimulatedRun, indices: np.ndarray | None = None) -> list[Estimate]:
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


def run_summary(run: SimulatedRun) -> dict[str, Any]:
    """Numbers worth keeping with a run (for ``run.yaml`` and logs)."""
    t = run.t_s
    return {
        "samples": int(run.stamps_ns.size),
        "imu_samples": int(run.imu_index.size),
        "joint_samples": int(run.joint_index.size),
        "path_length_m": float(np.sum(np.linalg.norm(np.diff(run.q[:, :3], axis=0), axis=1))),
        "final_position_m": [float(x) for x in run.q[-1, :3]],
        "duration_s": float(t[-1] - t[0]),
        "max_base_residual_force_n": float(np.abs(run.base_residual_wrench[:, :3]).max()),
        "max_base_residual_torque_nm": float(np.abs(run.base_residual_wrench[:, 3:]).max()),
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
) -> Path:
    """Write ``run`` to ``out_dir`` (layout in the module docstring).

    Args:
        run: the generated run.
        out_dir: output folder (created; may exist, but its ``bag/`` must not unless ``overwrite``).
        storage: ``"mcap"`` or ``"sqlite3"``.
        odom_frame: ``header.frame_id`` of the ground-truth odometry.
        overwrite: remove an existing ``bag/``, ``run.yaml`` and ``robot_description.urdf`` first.

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
        _write_messages(run, bag_dir, storage=storage, odom_frame=odom_frame)
    except SimulationError:
        raise
    except Exception as exc:
        raise SimulationError(f"writing {bag_dir} failed: {exc}") from exc
    (out_dir / "robot_description.urdf").write_text(run.description_xml)
    info = {
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
        },
        "storage": storage,
        "summary": run_summary(run),
    }
    (out_dir / "run.yaml").write_text(yaml.safe_dump(info, sort_keys=False))
    return bag_dir


# ------------------------------------------------------------------------------------------------ serialization
#
# Most messages of a run have a fixed CDR layout (the same frame ids, names and array lengths in every message):
# their bytes are those of one probe message, serialized by rosbags, with the stamp and the float64 values
# overwritten for every sample at once (numpy). The probe carries distinct sentinel values, whose byte
# patterns locate each field; the first and last message of each kind are checked against rosbags' own
# serializer. The bag content is the same as building and serializing every message (test_bag.py compares
# the files byte for byte); writing a 20 s run takes ~3x less time.

_PROBE_SEC = 2_087_654_321
_PROBE_NANOSEC = 987_654_321


def _sentinels(n: int) -> np.ndarray:
    """(n,) distinct float64 values that never occur in a message by chance."""
    return -np.pi * 1e-200 * (1.0 + np.arange(n) / 1024.0)


def _find_once(raw: bytes, pattern: bytes, what: str) -> int:
    i = raw.find(pattern)
    if i < 0 or raw.find(pattern, i + 1) >= 0:
        raise SimulationError(f"bag writer: the probe message does not locate {what} uniquely")
    return i


class _FixedLayout:
    """The CDR bytes of many messages of one type with a fixed layout, from a probe message.

    Args:
        serialize: message -> CDR bytes (rosbags).
        make_msg: ``(stamp_ns, values (m,)) -> message``, the message builder of :mod:`..io.messages` with
            the varying values of one sample.
        n_values: m, the number of varying float64 values.
    """

    def __init__(self, serialize: Any, make_msg: Any, n_values: int) -> None:
        self.serialize, self.make_msg = serialize, make_msg
        probe = _sentinels(n_values)
        msg = make_msg(_PROBE_SEC * 1_000_000_000 + _PROBE_NANOSEC, probe)
        self.msgtype: str = msg.__msgtype__
        raw = serialize(msg)
        self.template = np.frombuffer(raw, dtype=np.uint8)
        self.sec_offset = _find_once(raw, struct.pack("<i", _PROBE_SEC), "header.stamp.sec")
        self.nanosec_offset = _find_once(raw, struct.pack("<I", _PROBE_NANOSEC), "header.stamp.nanosec")
        self.offsets = [_find_once(raw, struct.pack("<d", x), f"value {j}") for j, x in enumerate(probe)]

    def table(self, stamps_ns: np.ndarray, values: np.ndarray) -> np.ndarray:
        """(n, size) uint8: the serialized messages of ``stamps_ns`` (n,) int64 and ``values`` (n, m)."""
        n = stamps_ns.size
        out = np.repeat(self.template[None, :], n, axis=0)
        sec, nanosec = np.divmod(np.asarray(stamps_ns, dtype=np.int64), 1_000_000_000)
        if n and (sec.min() < -(2**31) or sec.max() >= 2**31):
            raise SimulationError("bag writer: a stamp does not fit builtin_interfaces/Time (int32 seconds)")
        so, no = self.sec_offset, self.nanosec_offset
        out[:, so : so + 4] = sec.astype("<i4").view(np.uint8).reshape(n, 4)
        out[:, no : no + 4] = nanosec.astype("<u4").view(np.uint8).reshape(n, 4)
        vbytes = np.ascontiguousarray(values, dtype="<f8").view(np.uint8).reshape(n, -1, 8)
        for j, off in enumerate(self.offsets):
            out[:, off : off + 8] = vbytes[:, j]
        for k in {0, n - 1} if n else ():  # the layout did not change: as rosbags serializes the real message
            if bytes(self.serialize(self.make_msg(int(stamps_ns[k]), values[k]))) != out[k].tobytes():
                raise SimulationError("bag writer: a message's layout differs from its probe's")
        return out


def _cdr_diagnostic_array(msg: Any) -> bytes:
    """CDR (little endian, after the 4-byte encapsulation header ``00 01 00 00``) of a
    ``diagnostic_msgs/DiagnosticArray``, as rosbags serializes it (OMG CDR: each primitive aligned to its size
    from the start of the payload; a string is a uint32 length including the NUL, the UTF-8 bytes and a NUL; a
    sequence is a uint32 count and its elements). Every field here aligns to at most 4 bytes."""
    out = bytearray(b"\x00\x01\x00\x00")

    def u32(x: int, fmt: str = "<I") -> None:
        out.extend(b"\x00" * (-len(out) % 4))  # len(out) - 4 is the payload offset; 4 is aligned already
        out.extend(struct.pack(fmt, x))

    def string(text: str) -> None:
        data = text.encode()
        u32(len(data) + 1)
        out.extend(data)
        out.append(0)

    u32(msg.header.stamp.sec, "<i")
    u32(msg.header.stamp.nanosec)
    string(msg.header.frame_id)
    u32(len(msg.status))
    for status in msg.status:
        out.append(int(status.level))
        string(status.name)
        string(status.message)
        string(status.hardware_id)
        u32(len(status.values))
        for kv in status.values:
            string(kv.key)
            string(kv.value)
    return bytes(out)


def _write_messages(run: SimulatedRun, bag_dir: Path, *, storage: str, odom_frame: str) -> None:
    """Every message of ``run`` into a new bag at ``bag_dir``, in log-time order (ground truth, then IMU, then
    joints with their wrenches and contacts at equal stamps), connections added as their topics first appear."""
    types = default_types()
    typestore = default_typestore()
    cov = run.imu_covariances
    nf, nj = len(run.feet), len(run.joint_names)

    def serialize(msg: Any) -> bytes:
        return bytes(typestore.serialize_cdr(msg, msg.__msgtype__))

    # ground truth (Estimate at every grid sample): p, quat, v_B, omega_B
    gt_cov = np.eye(6) * GROUND_TRUTH_VARIANCE
    zero = np.zeros(3)

    def odom(stamp: int, x: np.ndarray) -> Any:
        est = Estimate(stamp, x[0:3], x[3:7], x[7:10], x[10:13], gt_cov, gt_cov, zero, zero, status="ground_truth")
        return m.odometry_msg(types, est, odom_frame=odom_frame, base_frame=run.base_link)

    odom_layout = _FixedLayout(serialize, odom, 13)
    odom_rows = odom_layout.table(run.stamps_ns, np.hstack([run.q[:, :7], run.v[:, :6]]))

    # IMU: gyro, accelerometer, orientation (when reported; a layout per case)
    imu_stamps = run.imu_stamps_ns
    reported = ~np.isnan(run.imu_quat_xyzw[:, 0])
    imu_values = np.hstack([run.imu_omega, run.imu_f, np.nan_to_num(run.imu_quat_xyzw)])
    imu_rows: list[np.ndarray | None] = [None] * imu_stamps.size
    for with_quat in (True, False):
        rows = np.flatnonzero(reported == with_quat)
        if not rows.size:
            continue

        def imu(stamp: int, x: np.ndarray, with_quat: bool = with_quat) -> Any:
            sample = ImuSample(stamp, x[0:3], x[3:6], x[6:10] if with_quat else None, frame_id=run.imu.frame_id)
            return m.imu_msg(
                types,
                sample,
                angular_velocity_covariance=cov["angular_velocity"],
                linear_acceleration_covariance=cov["linear_acceleration"],
                orientation_covariance=cov["orientation"],
            )

        n_values = 10 if with_quat else 6
        imu_layout = _FixedLayout(serialize, imu, n_values)
        table = imu_layout.table(imu_stamps[rows], imu_values[rows, :n_values])
        for r, row in zip(rows, table):
            imu_rows[r] = row

    # joints and the wrench of each foot (in the foot frame), at the joint stamps
    joint_stamps = run.joint_stamps_ns

    def joint(stamp: int, x: np.ndarray) -> Any:
        return m.joint_state_msg(types, JointSample(stamp, run.joint_names, x[:nj], x[nj : 2 * nj], x[2 * nj :]))

    joint_layout = _FixedLayout(serialize, joint, 3 * nj)
    joint_rows = joint_layout.table(joint_stamps, np.hstack([run.joint_position, run.joint_velocity, run.joint_effort]))
    wrench_rows = []
    wrench_type = ""
    for i, foot in enumerate(run.feet):

        def wrench(stamp: int, x: np.ndarray, foot: str = foot) -> Any:
            return m.foot_wrench_msg(
                types, stamp, FootState(name=foot, in_contact=True, force_in_world=x[:3], wrench_in_foot=x)
            )

        wrench_layout = _FixedLayout(serialize, wrench, 6)
        wrench_type = wrench_layout.msgtype
        wrench_rows.append(wrench_layout.table(joint_stamps, run.contact_wrenches_in_foot[run.joint_index, i]))

    # log-time order; at equal stamps ground truth, then IMU, then joints (a stable sort keeps each stream's order)
    stamps = np.concatenate([run.stamps_ns, imu_stamps, joint_stamps])
    kinds = np.concatenate([np.zeros(run.stamps_ns.size), np.ones(imu_stamps.size), np.full(joint_stamps.size, 2)])
    index = np.concatenate([np.arange(run.stamps_ns.size), np.arange(imu_stamps.size), np.arange(joint_stamps.size)])
    order = np.lexsort((index, kinds, stamps))
    plugins = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
    if storage not in plugins:
        raise SimulationError(f"unknown bag storage {storage!r}; use one of {sorted(plugins)}")
    writer = Writer(bag_dir, version=9, storage_plugin=plugins[storage])
    connections: dict[str, Any] = {}

    def write(topic: str, msgtype: str, stamp: int, data: bytes) -> None:
        conn = connections.get(topic)
        if conn is None:
            conn = connections[topic] = writer.add_connection(topic, msgtype, typestore=typestore)
        writer.write(conn, stamp, data)

    wrench_topics = [TOPIC_WRENCH_PREFIX + foot for foot in run.feet]
    writer.open()
    try:
        for stamp, kind, i in zip(stamps[order].tolist(), kinds[order].tolist(), index[order].tolist()):
            if kind == 0:
                write(TOPIC_ODOM, odom_layout.msgtype, stamp, odom_rows[i].tobytes())
            elif kind == 1:
                row = imu_rows[i]
                assert row is not None
                write(TOPIC_IMU, "sensor_msgs/msg/Imu", stamp, row.tobytes())
            else:
                write(TOPIC_JOINTS, joint_layout.msgtype, stamp, joint_rows[i].tobytes())
                for f in range(nf):
                    write(wrench_topics[f], wrench_type, stamp, wrench_rows[f][i].tobytes())
                feet = _foot_states(run, int(run.joint_index[i]))
                msg = m.contact_states_msg(types, stamp, feet)
                data = _cdr_diagnostic_array(msg)
                if i in (0, joint_stamps.size - 1) and data != serialize(msg):  # as rosbags serializes it
                    raise SimulationError("bag writer: DiagnosticArray bytes differ from rosbags' serializer")
                write(TOPIC_CONTACTS, msg.__msgtype__, stamp, data)
    finally:
        writer.close()
