"""Ground truth and trajectories from files: TUM text files, Odometry topics in bags, the Go1 mocap CSV.

Every loader returns a :class:`GroundTruth`: a :class:`~robot_state_estimator.evaluation.trajectory.Trajectory`
(float seconds, base pose in the ground truth's world, base velocity in the base frame when known), whether
its stamps are real (``stamped``) or spread evenly over the recording (then the evaluation searches an
offset *and* a rate), and ground-truth contacts when the source has them.

TUM format (Sturm et al. 2012): one pose per line, ``timestamp tx ty tz qx qy qz qw`` (s, m, quaternion
``x y z w``), ``#`` comments; what evo and the TUM tools read.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.common.time import NS_PER_S
from robot_state_estimator.evaluation.errors import GroundTruthError
from robot_state_estimator.evaluation.trajectory import Trajectory

#: Default topics of the simulator's ground truth (``robot-state-estimator simulate``).
DEFAULT_ODOM_TOPIC = "/ground_truth/odom"
DEFAULT_CONTACTS_TOPIC = "/ground_truth/contacts"
BAG_SUFFIXES = (".mcap", ".db3", ".bag")


@dataclass(frozen=True)
class Contacts:
    """Contact flags over time.

    Attributes:
        t_s: (N,) s.
        feet: foot frame names (F).
        in_contact: (N, F) bool.
        normal_force_n: (N, F) N, the true ground reaction force's world z (NaN where a message had none), or
            None when no message carried forces.
    """

    t_s: NDArray[np.float64]
    feet: tuple[str, ...]
    in_contact: NDArray[np.bool_]
    normal_force_n: NDArray[np.float64] | None = None

    def at(self, t_s: NDArray[np.float64], feet: tuple[str, ...]) -> NDArray[np.bool_]:
        """(len(t_s), len(feet)) flags by the last sample at or before each time (first sample before it).

        Raises:
            GroundTruthError: a foot is unknown.
        """
        missing = [f for f in feet if f not in self.feet]
        if missing:
            raise GroundTruthError(f"no contact data for feet {missing}; have {list(self.feet)}")
        cols = [self.feet.index(f) for f in feet]
        idx = np.clip(np.searchsorted(self.t_s, t_s, side="right") - 1, 0, len(self.t_s) - 1)
        return self.in_contact[idx][:, cols]


@dataclass(frozen=True)
class GroundTruth:
    """A ground-truth trajectory and what is known about its timing.

    Attributes:
        trajectory: the base poses (and velocities when known).
        stamped: False when rows had no stamps and were spread over the recording (search a rate too).
        source: human-readable origin (for reports).
        contacts: ground-truth contacts, or None.
    """

    trajectory: Trajectory
    stamped: bool = True
    source: str = ""
    contacts: Contacts | None = None


def is_bag(path: str | Path) -> bool:
    """True for a rosbag2 directory (with ``metadata.yaml``) or a ``.mcap``/``.db3``/ROS 1 ``.bag`` file."""
    p = Path(path)
    return (p.is_dir() and (p / "metadata.yaml").exists()) or p.suffix in BAG_SUFFIXES


def output_path_problem(path: str | Path, *, folder: bool = False) -> str | None:
    """Why an output file (or, with ``folder``, an output folder) cannot be written at ``path``, or None when it
    can: the path is a folder (a file wanted) or a file (a folder wanted), a part of its parent path is a file, or
    the nearest existing parent folder is not writable. Missing parent folders are fine (the tools create them).
    """
    path = Path(path)
    if path.is_dir() and not folder:
        return f"{path} is a folder, not a file"
    if path.exists() and not path.is_dir() and folder:
        return f"{path} is a file, not a folder"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is a file, not a folder: cannot write {path}"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"folder {parent} is not writable: cannot write {path}"
    return None


def _dedup_increasing(t: NDArray[np.float64], *arrays: Any) -> tuple[Any, ...]:
    """Sort by time and drop repeated stamps (keeps the last) so trajectories are strictly increasing."""
    order = np.argsort(t, kind="stable")
    t = t[order]
    keep = np.ones(len(t), bool)
    keep[:-1] = np.diff(t) > 0
    return (t[keep], *[None if a is None else np.asarray(a)[order][keep] for a in arrays])


# ----------------------------------------------------------------------------------------------------- TUM
def _loadtxt(path: Path, what: str, **kwargs: Any) -> np.ndarray:
    """``np.loadtxt`` without numpy's warning for a file without data rows (the caller refuses it in one line).

    Raises:
        GroundTruthError: unreadable (missing, a folder, not text) or a cell that is not a number.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return np.loadtxt(path, ndmin=2, **kwargs)
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        raise GroundTruthError(f"cannot read {what} {path}: {exc}") from exc


def _row_lines(path: Path, header_lines: int = 0) -> list[int]:
    """1-based file line of each data row as ``np.loadtxt`` counts them (blank and ``#`` lines are not rows)."""
    try:
        return [
            i
            for i, text in enumerate(path.read_text().splitlines(), 1)
            if i > header_lines and text.strip() and not text.lstrip().startswith("#")
        ]
    except (OSError, UnicodeDecodeError):
        return []


def _check_increasing(path: Path, t: np.ndarray) -> None:
    """Refuse rows whose time is before the previous row's (equal times are kept: the last row wins).

    Raises:
        GroundTruthError: the first such row, with its line, its time and the previous time, and how many.
    """
    back = np.flatnonzero(np.diff(t) < 0)
    if not back.size:
        return
    k = int(back[0]) + 1
    lines = _row_lines(path)
    line = lines[k] if k < len(lines) else k + 1
    raise GroundTruthError(
        f"{path} line {line}: time {t[k]:.6f} s is before the previous row's {t[k - 1]:.6f} s ({back.size} such "
        "rows); a trajectory file must be in time order"
    )


def _check_finite_rows(path: Path, data: np.ndarray, quat: np.ndarray, *, header_lines: int = 0) -> None:
    """Refuse a table with a non-finite number or a zero quaternion, naming the file's line (1-based; lines
    counted as ``np.loadtxt`` reads them: blank lines and ``#`` comments are not rows).

    Raises:
        GroundTruthError: the first such row, with its line number.
    """
    bad_value = ~np.isfinite(data).all(axis=1)
    with np.errstate(invalid="ignore"):
        bad_quat = ~(np.linalg.norm(quat, axis=1) > 0)
    bad = bad_value | bad_quat
    if not bad.any():
        return
    k = int(np.flatnonzero(bad)[0])
    line = k + 1 + header_lines
    rows = _row_lines(path, header_lines)
    if k < len(rows):
        line = rows[k]
    what = "a NaN or Inf number" if bad_value[k] else "a quaternion of zero length"
    raise GroundTruthError(f"{path} line {line}: {what} ({int(bad.sum())} such rows); remove or fix the row")


def load_tum(path: str | Path) -> GroundTruth:
    """Read a TUM trajectory file.

    Raises:
        GroundTruthError: unreadable, not 8 columns, fewer than two poses, a row with a NaN/Inf number or a
            zero quaternion, or a time before the previous row's (the message names its line).
    """
    path = Path(path)
    data = _loadtxt(path, "TUM file", comments="#")
    if data.size == 0:
        raise GroundTruthError(f"TUM file {path} has no poses (t x y z qx qy qz qw per line)")
    if data.shape[1] != 8 or len(data) < 2:
        raise GroundTruthError(
            f"TUM file {path} must have >= 2 lines of 8 numbers (t x y z qx qy qz qw); shape {data.shape}"
        )
    _check_finite_rows(path, data, data[:, 4:8])
    _check_increasing(path, data[:, 0])
    t, p, q = _dedup_increasing(data[:, 0], data[:, 1:4], data[:, 4:8])
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    return GroundTruth(Trajectory(t, p, q), stamped=True, source=f"TUM {path}")


def write_tum(path: str | Path, traj: Trajectory, *, header: str = "") -> None:
    """Write ``traj`` as a TUM file (``t x y z qx qy qz qw``, evo-compatible), creating missing parent folders.

    Stamps with 6 decimals: float64 seconds since 1970 resolve about 0.24 us, so more decimals would print
    rounding noise (``1700000000.099999905`` for a stamp of ...100000000 ns); positions and quaternions with 9
    significant digits.
    """
    data = np.column_stack([traj.t_s, traj.p_world_base, traj.quat_world_base_xyzw])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    hdr = "timestamp tx ty tz qx qy qz qw" + (f"\n{header}" if header else "")
    np.savetxt(path, data, fmt=["%.6f"] + ["%.9g"] * 7, header=hdr)


# ------------------------------------------------------------------------------------------------ bags
def trajectory_from_odometry(rows: list[dict[str, Any]], *, source: str = "Odometry") -> Trajectory:
    """Odometry rows (``messages.odometry_arrays_from_msg``) -> :class:`Trajectory` with covariances.

    Args:
        rows: the messages' arrays.
        source: what the rows are, for the messages (e.g. ``bag:topic``).

    Raises:
        GroundTruthError: fewer than two rows; a row with a NaN/Inf position or orientation or a zero quaternion
            (the message gives how many and the stamp of the first).
    """
    if len(rows) < 2:
        raise GroundTruthError(f"{source}: need at least two Odometry messages, got {len(rows)}")
    t = np.array([r["stamp_ns"] for r in rows], dtype=np.int64)
    t_s = (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S
    pose = np.array([np.concatenate((r["p_world_base"], r["quat_world_base_xyzw"])) for r in rows])
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(pose).all(axis=1) | ~(np.linalg.norm(pose[:, 3:], axis=1) > 0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise GroundTruthError(
            f"{source}: {int(bad.sum())} of {len(rows)} Odometry messages have a NaN/Inf pose or a zero quaternion "
            f"(first at stamp {t_s[k]:.6f} s: position {pose[k, :3].tolist()}, quaternion xyzw {pose[k, 3:].tolist()})"
        )
    t_s, p, q, v, pc, tc = _dedup_increasing(
        t_s,
        np.array([r["p_world_base"] for r in rows]),
        np.array([r["quat_world_base_xyzw"] for r in rows]),
        np.array([r["v_base_in_base"] for r in rows]),
        np.array([r["pose_covariance"] for r in rows]),
        np.array([r["twist_covariance"] for r in rows]),
    )
    return Trajectory(t_s, p, q / np.linalg.norm(q, axis=1, keepdims=True), v, pc, tc)


def load_odometry_topic(
    bag: str | Path,
    topic: str = DEFAULT_ODOM_TOPIC,
    *,
    contacts_topic: str | None = DEFAULT_CONTACTS_TOPIC,
    role: str = "ground-truth topic",
    option: str = "--gt-topic",
) -> GroundTruth:
    """Ground truth from a ``nav_msgs/Odometry`` topic of a bag (and contacts from a contact-state topic).

    Args:
        bag: rosbag2 directory or file, or ROS 1 bag.
        topic: the Odometry topic (found with or without its leading ``/``: ``io.bags.find_topic``).
        contacts_topic: a ``diagnostic_msgs/DiagnosticArray`` contact-state topic (layout of
            ``io.messages.contact_states_msg``), read when present in the bag (likewise); None to skip.
        role: what the topic is to the user, for the messages (e.g. ``estimate topic``).
        option: the command-line option that names the topic, for the messages.

    Raises:
        GroundTruthError: the bag lacks the topic or holds fewer than two messages.
    """
    from robot_state_estimator.io import bags, messages

    try:
        # one opening and one pass over the bag for both topics (opening a rosbag2 bag costs 0.1-0.3 s)
        with bags.BagReader(bag) as reader:
            present = reader.topics
            found = bags.find_topic(topic, present)  # with or without the leading "/"
            if found is None:
                raise GroundTruthError(f"bag {bag} has no {role} {topic} ({option}); topics: {sorted(present)}")
            topic = found
            bags.check_topic_types(bag, present, {topic: ("nav_msgs/msg/Odometry", f"the {role}, {option}")})
            if contacts_topic is not None:
                contacts_topic = bags.find_topic(contacts_topic, present)
            if contacts_topic in present and present[contacts_topic] != "diagnostic_msgs/msg/DiagnosticArray":
                contacts_topic = None  # not contact states: no ground-truth contacts
            wanted = [topic] + ([contacts_topic] if contacts_topic and contacts_topic in present else [])
            with bags.gc_paused():
                ordered = reader.stamp_ordered(wanted)
    except bags.BagError as exc:
        raise GroundTruthError(str(exc)) from exc
    rows = [messages.odometry_arrays_from_msg(m) for i, m in zip(ordered.topic_index, ordered.msgs) if i == 0]
    traj = trajectory_from_odometry(rows, source=f"bag {bag} topic {topic}")
    contacts = None
    if len(wanted) == 2:
        contacts = _contacts_from_msgs([m for i, m in zip(ordered.topic_index, ordered.msgs) if i == 1])
    return GroundTruth(traj, stamped=True, source=f"{bag}:{topic}", contacts=contacts)


def read_contacts(bag: str | Path, topic: str) -> Contacts | None:
    """Contact states (``diagnostic_msgs/DiagnosticArray`` per ``io.messages.contact_states_msg``) of a bag.

    Returns None when the topic has no messages.
    """
    from robot_state_estimator.io import bags

    return _contacts_from_msgs([m.msg for m in bags.read_messages(bag, [topic])])


def _contacts_from_msgs(msgs: list[Any]) -> Contacts | None:
    """Contact states from contact-state messages (any order); None when none holds a foot."""
    from robot_state_estimator.io import messages

    stamps: list[int] = []
    states: list[dict[str, bool]] = []
    forces: list[dict[str, float]] = []
    for msg in msgs:
        stamp, s = messages.contact_states_from_msg(msg)
        if s:
            stamps.append(stamp)
            states.append(s)
            forces.append(messages.contact_normal_forces_from_msg(msg))
    if not stamps:
        return None
    feet = tuple(states[0])
    flags = np.array([[s.get(f, False) for f in feet] for s in states], dtype=bool)
    force = np.array([[d.get(f, np.nan) for f in feet] for d in forces], dtype=float)
    t = np.asarray(stamps, dtype=np.int64)
    t_s = (t // NS_PER_S).astype(float) + (t % NS_PER_S).astype(float) / NS_PER_S
    order = np.argsort(t_s, kind="stable")
    has_force = bool(np.isfinite(force).any())
    return Contacts(t_s[order], feet, flags[order], force[order] if has_force else None)


# ------------------------------------------------------------------------------------------- Go1 CSV
def load_unstamped_csv(path: str | Path, t_start_s: float, t_end_s: float) -> GroundTruth:
    """Motion capture without stamps (``seq, x, y, z, qx, qy, qz, qw``, one header line), rows spread evenly.

    This is ``go1_ground_truth.csv`` of the Go1 trot (../shared/data/go1_trot/README.md): the rows are given
    nominal stamps from ``t_start_s`` to ``t_end_s`` (the span of the recording); the evaluation then searches
    an offset and a rate (and, opt-in, as the rows are not evenly spread in time, a piecewise-linear clock:
    ``metrics.align_time(..., warp=True)``).

    Raises:
        GroundTruthError: unreadable, fewer than 8 columns or fewer than two rows, a row with a NaN/Inf pose
            number or a zero quaternion (the message names its line).
    """
    path = Path(path)
    data = _loadtxt(path, "ground-truth CSV", delimiter=",", skiprows=1)
    if data.size == 0:
        raise GroundTruthError(f"ground-truth CSV {path} has no rows after its header line (seq,x,y,z,qx,qy,qz,qw)")
    if data.shape[1] < 8 or len(data) < 2:
        raise GroundTruthError(f"{path}: expected >= 2 rows of seq,x,y,z,qx,qy,qz,qw; shape {data.shape}")
    _check_finite_rows(path, data[:, 1:8], data[:, 4:8], header_lines=1)
    t = np.linspace(t_start_s, t_end_s, len(data))
    q = data[:, 4:8] / np.linalg.norm(data[:, 4:8], axis=1, keepdims=True)
    return GroundTruth(Trajectory(t, data[:, 1:4].copy(), q), stamped=False, source=f"unstamped CSV {path}")


def load_ground_truth(
    spec: str | Path,
    *,
    input_bag: str | Path | None = None,
    topic: str = DEFAULT_ODOM_TOPIC,
    contacts_topic: str | None = DEFAULT_CONTACTS_TOPIC,
    time_span_s: tuple[float, float] | None = None,
) -> GroundTruth:
    """Load ground truth by what ``spec`` names.

    - ``"bag"`` or ``"topic"``: the Odometry ``topic`` of ``input_bag``;
    - a bag (directory with metadata.yaml, ``.mcap``, ``.db3``, ``.bag``): its Odometry ``topic``;
    - ``*.csv``: unstamped mocap rows spread over ``time_span_s`` (the recording's span, s);
    - anything else: a TUM file.

    Raises:
        GroundTruthError: the file is missing or cannot be read; a CSV without ``time_span_s``.
    """
    if str(spec) in ("bag", "topic"):
        if input_bag is None:
            raise GroundTruthError("ground truth 'bag' needs an input bag")
        return load_odometry_topic(input_bag, topic, contacts_topic=contacts_topic)
    path = Path(spec)
    if not path.exists():
        raise GroundTruthError(f"ground truth not found: {path}")
    if is_bag(path):
        return load_odometry_topic(path, topic, contacts_topic=contacts_topic)
    if path.suffix.lower() == ".csv":
        if time_span_s is None:
            raise GroundTruthError(f"{path}: an unstamped CSV needs the recording's time span")
        return load_unstamped_csv(path, *time_span_s)
    return load_tum(path)
