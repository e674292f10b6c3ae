#!/usr/bin/env bash
# The README's "Using it in a ROS 2 workspace" steps, run as they are, in a temporary workspace: colcon build,
# colcon test (launch tests included) and colcon test-result. `make test` runs it (CI) after pytest.
#
# The lines run are read from README.md, between "# 2. build and test" and the end of that block, so that the
# README says exactly what CI does. Steps 1 (clone, rosdep, pip) are what the project venv already holds:
# here the workspace gets a clone of this repository's HEAD. colcon itself (colcon-common-extensions, which
# pins setuptools < 80) is installed with pip --target into VENV/colcon, outside the venv's site-packages, and
# runs with the venv's python, so that the installed scripts use that interpreter (../shared/ros2/README.md).
# Skipped, with the reason, where launch_pytest or launch_ros is missing (no ../shared/ros2 kit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$(cd "${1:-$root/.venv}" && pwd)
python="$venv/bin/python"
if ! "$python" -c "import launch_pytest, launch_ros, tf2_ros" >/dev/null 2>&1; then
  echo "[colcon] skipped: launch_pytest, launch_ros or tf2_ros is not installed (the ROS 2 kit ../shared/ros2)"
  exit 0
fi
start=$(date +%s)

colcon_dir="${COLCON_DIR:-$venv/colcon}"
colcon_version="0.3.0"
if [ ! -f "$colcon_dir/.installed-$colcon_version" ]; then
  echo "[colcon] installing colcon-common-extensions $colcon_version into $colcon_dir"
  rm -rf "$colcon_dir"
  # pytest pinned to the venv's version: colcon-core requires pytest, and this folder is on colcon test's path
  pytest_pin=$("$python" -c "import pytest; print(pytest.__version__)")
  constraints=$(mktemp)
  echo "pytest==$pytest_pin" >"$constraints"
  "$python" -m pip install --quiet --disable-pip-version-check --target "$colcon_dir" -c "$constraints" \
    "colcon-common-extensions==$colcon_version" 2> >(grep -v "^WARNING: Location\|launch-ros\|dependency resolver" >&2)
  rm -f "$constraints"
  touch "$colcon_dir/.installed-$colcon_version"
fi
colcon() { PYTHONPATH="$colcon_dir${PYTHONPATH:+:$PYTHONPATH}" "$python" -m colcon "$@"; }
export PATH="$venv/bin:$PATH"  # ros2, as on a ROS 2 install
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"

ws=$(mktemp -d "${TMPDIR:-/tmp}/rse-colcon-ws.XXXXXX")
trap 'rm -rf "$ws"' EXIT
git clone --quiet "$root" "$ws/src/robot_state_estimator"
steps=$(awk '/^# 2\. build and test/{on=1; next} on && /^```/{exit} on && !/^#/ && NF' "$root/README.md")
if [ -z "$steps" ]; then
  echo "[colcon] ERROR: no '# 2. build and test' steps in README.md's workspace section" >&2
  exit 1
fi
cd "$ws"
set +u  # colcon's setup.bash reads unset variables, as a user's shell allows
while IFS= read -r line; do
  echo "[colcon] \$ $line"
  eval "$line"
done <<<"$steps"

# what colcon test ran (its JUnit file): at least the launch tests, none of them skipped
report="$ws/build/robot_state_estimator/pytest.xml"
"$python" - "$report" <<'EOF'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
cases = [c for s in suites for c in s.iter("testcase")]
skipped = [c for c in cases if c.find("skipped") is not None]
failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
launch = [c for c in cases if "test_launch" in c.get("classname", "")]
launch_ran = [c for c in launch if c.find("skipped") is None]
print(f"[colcon] colcon test: {len(cases)} tests, {len(failed)} failed, {len(skipped)} skipped; "
      f"launch tests run: {len(launch_ran)} of {len(launch)}")
if failed or not launch or len(launch_ran) != len(launch):
    sys.exit("[colcon] ERROR: colcon test must run every launch test, and pass")
EOF
echo "[colcon] done in $(($(date +%s) - start)) s"
