"""Pin requirements.in into requirements.txt from pip's resolver report.

``pip freeze`` cannot be used: the ROS 2 wheels (``ros-action-msgs`` ...) also install an ``.egg-info`` under the
ROS package name (``action_msgs``), which freeze reports and PyPI does not know. The resolver report names the
distributions as PyPI does. Usage: python scripts/lock.py (from the repository root, with the venv's python).
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

root = Path(__file__).resolve().parents[1]
with tempfile.TemporaryDirectory() as tmp:
    report = Path(tmp) / "report.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "-r",
            str(root / "requirements.in"),
        ],
        check=True,
    )
    items = json.loads(report.read_text())["install"]
pins = sorted(f"{i['metadata']['name'].lower()}=={i['metadata']['version']}" for i in items)
header = "# Pinned by `make lock` (scripts/lock.py) from requirements.in; Python 3.11, Linux x86_64.\n"
(root / "requirements.txt").write_text(header + "\n".join(pins) + "\n")
print(f"requirements.txt: {len(pins)} pins")
