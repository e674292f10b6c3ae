"""Bad command-line values and implausible inputs of import-csv and the ground-truth loaders are one-line errors
naming the problem (argparse-style, exit code 2 from the CLI), not tracebacks or silently wrong bags."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_estimator.evaluation import ground_truth
from robot_state_estimator.tools import cli, csv_import

MAPPING = """time: {column: t, unit: UNIT}
imu:
  angular_velocity: [wx, wy, wz]
  linear_acceleration: [ax, ay, az]
joints:
  position: {a: qa}
"""


def _write(tmp_path, t, unit="s"):
    csv = tmp_path / "rec.csv"
    rows = ["t,wx,wy,wz,ax,ay,az,qa"] + [f"{x!r},0,0,0,0,0,9.81,0.1" for x in t]
    csv.write_text("\n".join(rows) + "\n")
    mapping = tmp_path / "m.yaml"
    mapping.write_text(MAPPING.replace("UNIT", unit))
    return csv, mapping


def test_a_400_hz_recording_in_seconds_imports(tmp_path):
    csv, mapping = _write(tmp_path, [1.0 + 0.0025 * k for k in range(10)])
    s = csv_import.import_csv(csv, csv_import.load_mapping(mapping), tmp_path / "bag")
    assert s.rows == 10
    assert s.last_stamp_ns - s.first_stamp_ns == 22_500_000  # 9 steps of 2.5 ms


@pytest.mark.parametrize(
    ("unit", "step", "rate_text", "step_text"),
    [
        ("ms", 0.0025, "4e+05 rows/s", "2.5e-06 s"),  # seconds read as ms: 400 kHz
        ("ns", 0.0025, "4e+11 rows/s", "2.5e-12 s"),
        ("s", 2.5, "0.4 rows/s", "2.5 s"),  # milliseconds read as seconds: 0.4 Hz
    ],
)
def test_an_implausible_row_rate_names_the_rate_and_the_unit(tmp_path, unit, step, rate_text, step_text):
    csv, mapping = _write(tmp_path, [1.0 + step * k for k in range(10)], unit=unit)
    with pytest.raises(csv_import.CsvImportError) as info:
        csv_import.import_csv(csv, csv_import.load_mapping(mapping), tmp_path / "bag")
    text = str(info.value)
    assert f"read as {unit!r} gives {rate_text} (median step {step_text})" in text
    assert "check time.unit in the mapping (one of s, ms, us, ns)" in text
    assert not (tmp_path / "bag").exists()


@pytest.mark.parametrize("rows", ["abc", "1:x", "5", "1:2:3"])
def test_a_bad_rows_value_is_an_argparse_error(tmp_path, capsys, rows):
    csv, mapping = _write(tmp_path, [1.0 + 0.0025 * k for k in range(10)])
    with pytest.raises(SystemExit) as info:
        cli.main(["import-csv", str(csv), "--mapping", str(mapping), "--output", str(tmp_path / "b"), f"--rows={rows}"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        "robot-state-estimator import-csv: error: argument --rows: expected START:STOP with integer row numbers "
        f"(e.g. 2000:8000, :400, 400:), got {rows!r}"
    )


def test_rows_with_open_ends_are_slices():
    assert csv_import._parse_rows("2000:8000") == slice(2000, 8000)
    assert csv_import._parse_rows(":400") == slice(None, 400)
    assert csv_import._parse_rows("-5:") == slice(-5, None)


def test_an_implausible_rate_from_the_cli_is_one_line_with_exit_code_2(tmp_path, capsys):
    csv, mapping = _write(tmp_path, [1.0 + 0.0025 * k for k in range(10)], unit="ms")
    rc = cli.main(["import-csv", str(csv), "--mapping", str(mapping), "--output", str(tmp_path / "b")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("robot-state-estimator import-csv: error: time column 't' read as 'ms' gives 4e+05")


TUM_OK = "1.0 0 0 0 0 0 0 1"


def test_a_tum_row_with_nan_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "est.tum"
    # line 1 comment, 2 data, 3 blank, 4 data, 5 NaN row, 6 data
    path.write_text(f"# t x y z qx qy qz qw\n{TUM_OK}\n\n2.0 1 0 0 0 0 0 1\n3.0 nan 0 0 0 0 0 1\n4.0 2 0 0 0 0 0 1\n")
    with pytest.raises(ground_truth.GroundTruthError, match=r"est.tum line 5: a NaN or Inf number \(1 such rows\)"):
        ground_truth.load_tum(path)


def test_a_tum_row_with_a_zero_quaternion_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "est.tum"
    path.write_text(f"{TUM_OK}\n2.0 1 0 0 0 0 0 0\n3.0 inf 0 0 0 0 0 1\n")
    with pytest.raises(ground_truth.GroundTruthError, match=r"line 2: a quaternion of zero length \(2 such rows\)"):
        ground_truth.load_tum(path)


def test_a_finite_tum_file_loads(tmp_path):
    path = tmp_path / "est.tum"
    path.write_text(f"{TUM_OK}\n2.0 1 0 0 0 0 0 2\n")
    gt = ground_truth.load_tum(path)
    np.testing.assert_allclose(gt.trajectory.quat_world_base_xyzw[1], [0, 0, 0, 1])


def test_an_unstamped_csv_row_with_nan_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "gt.csv"
    path.write_text("seq,x,y,z,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n1,0,0,0,0,0,0,1\n2,0,NaN,0,0,0,0,1\n")
    with pytest.raises(ground_truth.GroundTruthError, match=r"gt.csv line 4: a NaN or Inf number"):
        ground_truth.load_unstamped_csv(path, 0.0, 1.0)
