#!/usr/bin/env bash
# Create or update the project's virtual environment (.venv): pinned dependencies, the package itself
# (editable), and tf2_msgs generated from its interface definition. Idempotent and fast when already done.
# Needs: Python 3.10+ with venv and headers, a C/C++ compiler. Everything else comes from PyPI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="${VENV:-$root/.venv}"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
stamp="$venv/.requirements.sha256"

if [ ! -x "$venv/bin/python" ]; then
  echo "[setup] creating $venv with $python"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip 2> >(grep -v "^WARNING: Location" >&2)
fi
want=$(cat "$root/requirements.txt" "$root/setup.py" | sha256sum | cut -c1-64)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing pinned requirements (requirements.txt)"
  # (this machine's pip config names local indexes that may not exist: drop those warnings)
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/requirements.txt" \
    2> >(grep -v "^WARNING: Location" >&2)
  # setuptools' editable build prints banners on stderr: keep them in a log, show it only on failure
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$root" \
    >"$venv/.editable-install.log" 2>&1 || { cat "$venv/.editable-install.log" >&2; exit 1; }
  echo "$want" >"$stamp"
fi
# The ROS 2 kit next to the repository (../shared/ros2: launch, launch_ros, launch_pytest, ros2cli, tf2_ros;
# its install.sh is idempotent, 3 s when done). It brings the full tf2_msgs, so the generation below then skips.
kit="${ROS2_KIT:-$root/../shared/ros2}"
if [ -f "$kit/install.sh" ]; then
  echo "[setup] the ROS 2 kit from $kit (installs what is missing; seconds when nothing is)"
  bash "$kit/install.sh" "$venv"
else
  echo "[setup] no ROS 2 kit at $kit: launch tests and the colcon check will be skipped"
fi
if ! "$venv/bin/python" -c "import tf2_msgs.msg" >/dev/null 2>&1; then
  echo "[setup] generating tf2_msgs"
  bash "$root/scripts/build_tf2_msgs.sh" "$venv"
fi
# numba kernels compiled now, not by the first estimator_node (about a minute once; nothing when cached)
if "$venv/bin/python" -c "import sys; from robot_state_estimator.estimation.jit import kernels_need_compiling as k; sys.exit(not k())"; then
  echo "[setup] compiling the estimator's numba kernels (once; about a minute)"
  "$venv/bin/python" -m robot_state_estimator.estimation.precompile
fi
echo "[setup] ready: $venv"
