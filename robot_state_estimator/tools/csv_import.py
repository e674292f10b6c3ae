"""``robot-state-estimator import-csv``: tabular recordings (one row per time step) -> a rosbag2 bag.

A small YAML mapping names the columns (see ``config/import/go1_trot.yaml``)::

    csv: {delimiter: ","}                 # optional
    time: {column: "Time(s)", unit: s, offset_s: 0.0}   # unit: s | ms | us | ns
    imu:
      topic: /imu/data
      frame_id: imu_sensor
      angular_velocity: [wx, wy, wz]       # rad/s, IMU frame
      linear_acceleration: [ax, ay, az]    # m/s^2, specific force, IMU frame
      orientation: [qx, qy, qz, qw]        # optional
      angular_velocity_stddev: 0.0         # optional, covariance diagonal = stddev^2 (0 = unknown)
      linear_acceleration_stddev: 0.0
    joints:
      topic: /joint_states
      position: {joint_name: column, ...}  # rad or m
      velocity: {joint_name: column, ...}  # optional
      effort: {joint_name: column, ...}    # optional
    foot_forces:                           # optional
      topic: /foot_forces
      feet: {foot_frame: column, ...}

Each row becomes one ``sensor_msgs/Imu``, one ``sensor_msgs/JointState`` and (when mapped) one foot-sensor
message, all stamped with the row's time (header stamp and bag log time). Foot sensors are written as
``sensor_msgs/JointState`` with ``name`` = foot frames and ``effort`` = the values (forces in N, or raw
counts), the layout ``io.messages.foot_force_sample_from_msg`` reads.
"""

from __future__ import annotations

import argparse
import csv
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from robot_state_estimator.common.samples import FootForceSample, ImuSample, JointSample

FloatArray = NDArray[np.float64]
UNITS_NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
#: Plausible median row rate of a robot recording, Hz: outside it the time unit of the mapping is wrong.
MIN_ROW_RATE_HZ, MAX_ROW_RATE_HZ = 1.0, 100_000.0


class CsvImportError(ValueError):
    """The CSV or the mapping is invalid; the message names the column or key."""


@dataclass(frozen=True)
class ImuColumns:
    """IMU part of the mapping (column names)."""

    topic: str
    frame_id: str
    angular_velocity: tuple[str, str, str]
    linear_acceleration: tuple[str, str, str]
    orientation: tuple[str, str, str, str] | None = None
    angular_velocity_stddev: float = 0.0
    linear_acceleration_stddev: float = 0.0


@dataclass(frozen=True)
class CsvMapping:
    """A parsed column mapping (see the module docstring).

    Attributes:
        time_column: stamp column; ``time_scale_ns`` ns per unit; ``time_offset_s`` added (s).
        imu: IMU columns.
        joints_topic: JointState topic; ``position``/``velocity``/``effort``: joint name -> column.
        foot_topic: foot-sensor topic; ``feet``: foot frame -> column (empty: none).
    """

    time_column: str
    time_scale_ns: float
    time_offset_s: float
    imu: ImuColumns
    joints_topic: str
    position: dict[str, str]
    velocity: dict[str, str] = field(default_factory=dict)
    effort: dict[str, str] = field(default_factory=dict)
    foot_topic: str = "/foot_forces"
    feet: dict[str, str] = field(default_factory=dict)
    delimiter: str = ","

    def columns(self) -> list[str]:
        """Every column the mapping reads."""
        cols = [self.time_column, *self.imu.angular_velocity, *self.imu.linear_acceleration]
        cols += list(self.imu.orientation or ())
        for d in (self.position, self.velocity, self.effort, self.feet):
            cols += list(d.values())
        return cols


class _MappingKeys:
    """Reads the keys of a mapping YAML with checks; each error names the file, the key, what it must be and what
    it is.

    Args:
        path: the mapping file (for the messages).
    """

    #: a header name YAML reads as a number (e.g. 1) is the same column name
    COLUMN_TYPES = (str, int)

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, what: str, value: Any) -> CsvImportError:
        """The error for ``key`` whose ``value`` is not ``what`` it must be."""
        return CsvImportError(f"{self.path}: {key} must be {what}, got {value!r}")

    def section(self, parent: Any, key: str, *, required: bool = True) -> dict[str, Any]:
        """The mapping under ``key`` ({} for an optional section that is absent)."""
        value = parent.get(key) if isinstance(parent, dict) else None
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, "a mapping of keys", value)
        return value

    def column_list(self, sec: dict[str, Any], key: str, sizes: tuple[int, ...]) -> tuple[str, ...]:
        """The column names listed under ``imu.<key>``, as many as one of ``sizes``."""
        value = sec.get(key)
        if (
            not isinstance(value, list)
            or len(value) not in sizes
            or not all(isinstance(c, self.COLUMN_TYPES) for c in value)
        ):
            raise self.fail(f"imu.{key}", f"a list of {' or '.join(map(str, sizes))} column names", value)
        return tuple(str(c) for c in value)

    def name_map(self, sec: dict[str, Any], key: str, section_name: str) -> dict[str, str]:
        """Name -> column under ``<section_name>.<key>`` ({} when absent)."""
        value = sec.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(c, self.COLUMN_TYPES) for c in value.values()):
            raise self.fail(f"{section_name}.{key}", "a mapping of name: column", value)
        return {str(k): str(v) for k, v in value.items()}

    def number(self, sec: dict[str, Any], key: str) -> float:
        """The finite number at the dotted ``key`` (its last part read from ``sec``; 0 when absent)."""
        value = sec.get(key.rsplit(".", 1)[-1], 0.0)
        try:  # a string too: YAML 1.1 reads 1e-3 (no dot) as one
            number = float(value) if not isinstance(value, bool) else float("nan")
        except (TypeError, ValueError):
            number = float("nan")
        if not np.isfinite(number):
            raise self.fail(key, "a finite number", value)
        return number


def _time_section(keys: _MappingKeys, doc: dict[str, Any]) -> dict[str, Any]:
    """The ``time`` section, checked: a known ``unit`` (default s) and a ``column`` name."""
    t = keys.section(doc, "time")
    unit = t.get("unit", "s")
    if unit not in UNITS_NS:
        raise CsvImportError(f"{keys.path}: time.unit {unit!r} not one of {sorted(UNITS_NS)}")
    if not isinstance(t.get("column"), keys.COLUMN_TYPES):
        raise keys.fail("time.column", "a column name", t.get("column"))
    return t


def _imu_columns(keys: _MappingKeys, doc: dict[str, Any]) -> ImuColumns:
    """The ``imu`` section: 3 angular velocity columns (rad/s), 3 specific force columns (m/s^2), optionally 4
    orientation columns (xyzw), all in the IMU frame; the noise standard deviations (0 = unknown)."""
    im = keys.section(doc, "imu")
    av = keys.column_list(im, "angular_velocity", (3,))
    la = keys.column_list(im, "linear_acceleration", (3,))
    ori = keys.column_list(im, "orientation", (4,)) if im.get("orientation") is not None else None
    return ImuColumns(
        topic=str(im.get("topic", "/imu/data")),
        frame_id=str(im.get("frame_id", "")),
        angular_velocity=av,  # type: ignore[arg-type]
        linear_acceleration=la,  # type: ignore[arg-type]
        orientation=ori,  # type: ignore[arg-type]
        angular_velocity_stddev=keys.number(im, "imu.angular_velocity_stddev"),
        linear_acceleration_stddev=keys.number(im, "imu.linear_acceleration_stddev"),
    )


def _joint_columns(
    keys: _MappingKeys, doc: dict[str, Any]
) -> tuple[str, dict[str, str], dict[str, str], dict[str, str]]:
    """The ``joints`` section: its topic and joint name -> column of the positions (at least one joint), the
    velocities and the efforts (each empty, or the same joints as the positions)."""
    j = keys.section(doc, "joints")
    position = keys.name_map(j, "position", "joints")
    if not position:
        raise keys.fail("joints.position", "a mapping of at least one joint name: column", j.get("position"))
    velocity = keys.name_map(j, "velocity", "joints")
    effort = keys.name_map(j, "effort", "joints")
    for name, d in (("velocity", velocity), ("effort", effort)):
        if d and set(d) != set(position):
            raise CsvImportError(f"{keys.path}: joints.{name} must map the same joints as joints.position")
    return str(j.get("topic", "/joint_states")), position, velocity, effort


def load_mapping(path: str | Path) -> CsvMapping:
    """Parse a mapping YAML.

    Raises:
        CsvImportError: unreadable YAML; a missing key or a value of the wrong kind (the message names the key, what
            it must be and what it is); wrong numbers of IMU columns; no joint in ``joints.position``; an unknown
            time unit; velocity/effort for other joints than ``joints.position``.
    """
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CsvImportError(f"cannot read mapping {path}: {exc}") from exc
    keys = _MappingKeys(path)
    if not isinstance(doc, dict):
        raise keys.fail("the mapping", "a YAML mapping with time, imu and joints", doc)
    t = _time_section(keys, doc)
    imu = _imu_columns(keys, doc)
    joints_topic, position, velocity, effort = _joint_columns(keys, doc)
    ff = keys.section(doc, "foot_forces", required=False)
    return CsvMapping(
        time_column=str(t["column"]),
        time_scale_ns=UNITS_NS[t.get("unit", "s")],
        time_offset_s=keys.number(t, "time.offset_s"),
        imu=imu,
        joints_topic=joints_topic,
        position=position,
        velocity=velocity,
        effort=effort,
        foot_topic=str(ff.get("topic", "/foot_forces")),
        feet=keys.name_map(ff, "feet", "foot_forces"),
        delimiter=str(keys.section(doc, "csv", required=False).get("delimiter", ",")),
    )


def read_table(path: str | Path, mapping: CsvMapping, *, rows: slice | None = None) -> dict[str, np.ndarray]:
    """The mapped columns of a CSV as float64 arrays (column name -> (N,)).

    Raises:
        CsvImportError: the file cannot be read as text or has no header line; a mapped column is missing (the
            message lists the header) or named twice in the header; a cell that is not a number or a row with too
            few cells (the message names its line and column).
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:  # utf-8-sig: a byte-order mark is not in the name
            header = next(csv.reader(f, delimiter=mapping.delimiter), None)
    except (OSError, UnicodeDecodeError) as exc:
        raise CsvImportError(f"cannot read CSV {path}: {exc}") from exc
    if not header:
        raise CsvImportError(f"CSV {path} is empty: expected a header line naming the columns, then one row per step")
    header = [h.strip() for h in header]
    missing = [c for c in mapping.columns() if c not in header]
    if missing:
        raise CsvImportError(f"{path}: columns {missing} not in the header {header}")
    repeated = sorted({c for c in mapping.columns() if header.count(c) > 1})
    if repeated:
        raise CsvImportError(
            f"{path}: the header names the mapped columns {repeated} more than once: which one is meant?"
        )
    wanted = sorted({header.index(c) for c in mapping.columns()})
    try:
        with warnings.catch_warnings():  # a file with no data rows: refused by the caller in one line
            warnings.simplefilter("ignore", UserWarning)
            data = np.loadtxt(path, delimiter=mapping.delimiter, skiprows=1, usecols=wanted, ndmin=2)
    except (ValueError, OSError) as exc:
        raise CsvImportError(f"{path}: {_first_bad_cell(path, mapping.delimiter, header, wanted) or exc}") from exc
    if data.size == 0:
        data = np.zeros((0, len(wanted)))
    if rows is not None:
        data = data[rows]
    return {header[c]: data[:, k] for k, c in enumerate(wanted)}


def _first_bad_cell(path: Path, delimiter: str, header: list[str], wanted: list[int]) -> str | None:
    """``line N, column 'c': ...`` for the first row lacking a wanted cell or with one that is not a number."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            for line, row in enumerate(csv.reader(f, delimiter=delimiter), 1):
                if line == 1 or not row:
                    continue
                for c in wanted:
                    if c >= len(row):
                        return f"line {line} has {len(row)} cells, no column {header[c]!r} (cell {c + 1})"
                    try:
                        float(row[c])
                    except ValueError:
                        return f"line {line}, column {header[c]!r}: {row[c]!r} is not a number"
    except (OSError, UnicodeDecodeError):
        return None
    return None


def check_finite(path: str | Path, table: dict[str, np.ndarray], *, first_row: int = 0) -> None:
    """Refuse a NaN or Inf in the mapped columns (it would reach the bag and be skipped there, or worse).

    Args:
        path: the CSV (for the message).
        table: :func:`read_table` output (possibly a slice of rows).
        first_row: 0-based index of the table's first row among the file's data rows (``--rows`` start).

    Raises:
        CsvImportError: naming the first such row's line (header = line 1; blank lines not counted), its column
            and how many rows have one.
    """
    if not table:
        return
    names = list(table)
    data = np.column_stack([table[c] for c in names])
    bad = ~np.isfinite(data)
    rows_bad = np.flatnonzero(bad.any(axis=1))
    if not rows_bad.size:
        return
    k = int(rows_bad[0])
    column = names[int(np.flatnonzero(bad[k])[0])]
    raise CsvImportError(
        f"{path} line {first_row + k + 2}, column {column!r}: {data[k, names.index(column)]} is not a finite number "
        f"({rows_bad.size} such rows); fix the rows or import around them with --rows"
    )


@dataclass(frozen=True)
class ImportSummary:
    """What an import wrote."""

    output: Path
    rows: int
    first_stamp_ns: int
    last_stamp_ns: int
    topics: dict[str, str]


def samples_from_table(table: dict[str, np.ndarray], mapping: CsvMapping) -> list[tuple[Any, ...]]:
    """Rows -> ``(stamp_ns, ImuSample, JointSample, FootForceSample | None)`` per row, in row order.

    Raises:
        CsvImportError: stamps not strictly increasing; a median row rate outside ``MIN_ROW_RATE_HZ`` ..
            ``MAX_ROW_RATE_HZ`` (a wrong ``time.unit``).
    """
    t_ns = table[mapping.time_column] * mapping.time_scale_ns + mapping.time_offset_s * 1e9
    if len(t_ns) > 1:  # before rounding: seconds read as ns would round to repeated stamps
        dt_ns = float(np.median(np.diff(t_ns)))
        rate_hz = 1e9 / dt_ns if dt_ns > 0 else float("nan")  # nan: not increasing, refused below
        if np.isfinite(rate_hz) and not MIN_ROW_RATE_HZ <= rate_hz <= MAX_ROW_RATE_HZ:
            unit = next((u for u, scale in UNITS_NS.items() if scale == mapping.time_scale_ns), "?")
            raise CsvImportError(
                f"time column {mapping.time_column!r} read as {unit!r} gives {rate_hz:.4g} rows/s (median step "
                f"{dt_ns / 1e9:.4g} s), not a plausible rate ({MIN_ROW_RATE_HZ:g} .. {MAX_ROW_RATE_HZ:g} Hz): "
                f"check time.unit in the mapping (one of {', '.join(UNITS_NS)})"
            )
    stamps = np.round(t_ns).astype(np.int64)
    if len(stamps) > 1 and np.any(np.diff(stamps) <= 0):
        k = int(np.flatnonzero(np.diff(stamps) <= 0)[0])
        raise CsvImportError(f"time column {mapping.time_column!r} not strictly increasing at row {k + 1}")

    def col(names: Iterable[str]) -> FloatArray:
        return np.column_stack([table[c] for c in names])

    omega = col(mapping.imu.angular_velocity)
    acc = col(mapping.imu.linear_acceleration)
    quat = col(mapping.imu.orientation) if mapping.imu.orientation else None
    names = tuple(mapping.position)
    pos = col(mapping.position.values())
    vel = col(mapping.velocity[n] for n in names) if mapping.velocity else None
    eff = col(mapping.effort[n] for n in names) if mapping.effort else None
    feet = tuple(mapping.feet)
    ff = col(mapping.feet.values()) if feet else None
    out = []
    for k, s in enumerate(stamps.tolist()):
        imu = ImuSample(
            stamp_ns=s,
            angular_velocity=omega[k],
            linear_acceleration=acc[k],
            orientation_xyzw=None if quat is None else quat[k],
            frame_id=mapping.imu.frame_id,
        )
        joints = JointSample(
            stamp_ns=s,
            names=names,
            position=pos[k],
            velocity=None if vel is None else vel[k],
            effort=None if eff is None else eff[k],
        )
        foot = None if ff is None else FootForceSample(stamp_ns=s, feet=feet, values=ff[k])
        out.append((s, imu, joints, foot))
    return out


def import_csv(
    csv_path: str | Path,
    mapping: CsvMapping,
    output: str | Path,
    *,
    rows: slice | None = None,
    storage: str = "mcap",
) -> ImportSummary:
    """Convert a CSV recording to a rosbag2 bag (directory ``output``, mcap by default).

    Args:
        csv_path: the table.
        mapping: the parsed column mapping.
        output: bag directory to create (must not exist).
        rows: optional slice of data rows (e.g. ``slice(0, 400)``).
        storage: "mcap" or "sqlite3".

    Returns:
        An :class:`ImportSummary`.

    Raises:
        CsvImportError: bad CSV or mapping; ``io.bags.BagError``: the output exists.
    """
    from robot_state_estimator.io import bags, messages

    full = read_table(csv_path, mapping)
    n_source = len(full[mapping.time_column])
    table = {k: v[rows] for k, v in full.items()} if rows is not None else full
    check_finite(csv_path, table, first_row=rows.indices(n_source)[0] if rows is not None else 0)
    samples = samples_from_table(table, mapping)
    if not samples:
        raise CsvImportError(f"{csv_path}: no rows to import")
    types = bags.default_types()
    av = np.eye(3) * mapping.imu.angular_velocity_stddev**2
    la = np.eye(3) * mapping.imu.linear_acceleration_stddev**2
    with bags.BagWriter(output, storage=storage) as bag:
        for stamp, imu, joints, foot in samples:
            bag.write(
                mapping.imu.topic,
                messages.imu_msg(types, imu, angular_velocity_covariance=av, linear_acceleration_covariance=la),
                stamp,
            )
            bag.write(mapping.joints_topic, messages.joint_state_msg(types, joints), stamp)
            if foot is not None:
                bag.write(mapping.foot_topic, messages.foot_force_msg(types, foot), stamp)
    source_t = full[mapping.time_column][[0, -1]] * mapping.time_scale_ns + mapping.time_offset_s * 1e9
    imported = range(n_source)[rows] if rows is not None else range(n_source)
    write_import_source(
        output,
        {
            "source": str(Path(csv_path).resolve()),
            "source_rows": n_source,
            "source_span_s": [float(round(t) / 1e9) for t in source_t],
            "rows": [imported.start, imported.stop],
            "span_s": [samples[0][0] / 1e9, samples[-1][0] / 1e9],
            # enough of the mapping to read the whole source's gyroscope again (time alignment of a slice)
            "source_columns": {
                "delimiter": mapping.delimiter,
                "time": mapping.time_column,
                "time_scale_ns": mapping.time_scale_ns,
                "time_offset_s": mapping.time_offset_s,
                "angular_velocity": list(mapping.imu.angular_velocity),
                "imu_frame_id": mapping.imu.frame_id,
            },
        },
    )
    topics = {mapping.imu.topic: "sensor_msgs/msg/Imu", mapping.joints_topic: "sensor_msgs/msg/JointState"}
    if mapping.feet:
        topics[mapping.foot_topic] = "sensor_msgs/msg/JointState"
    return ImportSummary(Path(output), len(samples), samples[0][0], samples[-1][0], topics)


#: Written inside the bag directory by ``import_csv``: where the rows came from (read by ``replay``).
IMPORT_SOURCE_FILE = "import_source.yaml"


def write_import_source(bag_dir: str | Path, info: dict[str, Any]) -> Path:
    """Write ``IMPORT_SOURCE_FILE`` in ``bag_dir``: the source CSV, its row count and full time span
    (``source_span_s``: first and last stamp of all its rows, s), the imported ``rows`` (start, stop), their
    ``span_s``, and ``source_columns`` (time and gyroscope columns, to read the source's gyroscope again). A
    slice of a recording then knows the span that the recording's unstamped ground truth covers, and can be
    time-aligned on the whole recording (rosbag2 readers ignore the extra file)."""
    path = Path(bag_dir) / IMPORT_SOURCE_FILE
    header = "# written by robot-state-estimator import-csv: the CSV this bag was imported from\n"
    path.write_text(header + yaml.safe_dump(info, sort_keys=False))
    return path


def read_import_source(bag: str | Path) -> dict[str, Any] | None:
    """The ``IMPORT_SOURCE_FILE`` of a bag imported by ``import_csv`` (in the bag directory, or next to a bag
    file), or None when there is none or it is unreadable."""
    p = Path(bag)
    path = p / IMPORT_SOURCE_FILE if p.is_dir() else p.parent / IMPORT_SOURCE_FILE
    if path.is_file():
        try:
            info = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError):
            return None
        return info if isinstance(info, dict) else None
    return None


def read_source_gyro(info: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The gyroscope of the whole source recording an ``IMPORT_SOURCE_FILE`` names.

    Args:
        info: what :func:`read_import_source` returned.

    Returns:
        ``(t_s (N,), angular_velocity (N, 3) rad/s in the IMU frame)`` with the importer's stamps, or None when
        the file records no ``source_columns`` (older imports) or the source CSV cannot be read.
    """
    cols = info.get("source_columns")
    source = Path(str(info.get("source", "")))
    if not isinstance(cols, dict) or not source.is_file():
        return None
    try:
        delimiter = str(cols.get("delimiter", ","))
        with source.open(newline="", encoding="utf-8-sig") as f:
            header = [h.strip() for h in next(csv.reader(f, delimiter=delimiter))]
        names = [str(cols["time"]), *(str(c) for c in cols["angular_velocity"])]
        data = np.loadtxt(source, delimiter=delimiter, skiprows=1, usecols=[header.index(c) for c in names], ndmin=2)
        offset_ns = float(cols.get("time_offset_s", 0.0)) * 1e9
        stamps_ns = np.round(data[:, 0] * float(cols["time_scale_ns"]) + offset_ns).astype(np.int64)
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
    # seconds as replay converts its integer stamps, so both give the same floats
    return (stamps_ns // 1_000_000_000).astype(float) + (stamps_ns % 1_000_000_000).astype(float) / 1e9, data[:, 1:4]


def _parse_rows(text: str | None) -> slice | None:
    """``--rows START:STOP`` -> a slice (either end may be empty).

    Raises:
        argparse.ArgumentTypeError: not two integers (or empty ends) separated by one ``:``.
    """
    if not text:
        return None
    start, sep, stop = text.partition(":")
    try:
        if not sep or ":" in stop:
            raise ValueError
        return slice(int(start) if start.strip() else None, int(stop) if stop.strip() else None)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected START:STOP with integer row numbers (e.g. 2000:8000, :400, 400:), got {text!r}"
        ) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``robot-state-estimator import-csv``."""
    parser.add_argument("csv", help="the CSV recording (one row per time step, one header line)")
    parser.add_argument("--mapping", required=True, help="column mapping YAML (e.g. config/import/go1_trot.yaml)")
    parser.add_argument("--output", required=True, help="bag directory to create")
    parser.add_argument("--rows", default=None, type=_parse_rows, help="data rows to import, START:STOP (Python slice)")
    parser.add_argument("--storage", default="mcap", choices=["mcap", "sqlite3"], help="rosbag2 storage format")


def run(args: argparse.Namespace) -> int:
    """Run the import; prints a one-line summary."""
    s = import_csv(args.csv, load_mapping(args.mapping), args.output, rows=args.rows, storage=args.storage)
    dur = (s.last_stamp_ns - s.first_stamp_ns) / 1e9
    print(f"wrote {s.output}: {s.rows} rows over {dur:.2f} s on {', '.join(s.topics)}")
    return 0
