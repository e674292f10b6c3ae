#!/usr/bin/env bash
# Generate tf2_msgs (TFMessage only) from its interface definition into a virtual environment whose ROS 2
# comes from the PyPI wheels. Not used on a real ROS 2 install, where the system tf2_msgs exists.
# Usage: scripts/build_tf2_msgs.sh VENV_DIR
set -euo pipefail
venv=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv" PATH="$venv/bin:$PATH"
"$venv/bin/cmake" -S "$here/tf2_msgs" -B "$build" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$venv/bin/ninja" \
  -DCMAKE_INSTALL_PREFIX="$venv" \
  -DPython3_EXECUTABLE="$venv/bin/python" \
  -DBUILD_TESTING=OFF >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
"$venv/bin/cmake" --build "$build" >"$build/build.log" 2>&1 || { tail -50 "$build/build.log"; exit 1; }
"$venv/bin/cmake" --install "$build" >"$build/install.log" 2>&1 || { cat "$build/install.log"; exit 1; }
"$venv/bin/python" -c "from tf2_msgs.msg import TFMessage" || { echo "tf2_msgs built but does not import" >&2; exit 1; }
echo "tf2_msgs installed into $venv"
