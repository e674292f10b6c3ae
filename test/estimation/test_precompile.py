"""``precompile_kernels`` (make setup, and the README's colcon steps) leaves nothing for the first node start to
compile: every kernel module has a cache afterwards, so ``jit.kernels_need_compiling`` is False and no start says it
compiles for a minute. Checked in a fresh interpreter, on the signatures numba's dispatchers hold after the call
(compiled now or loaded from the cache), so the result does not depend on what other tests compiled before."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from robot_state_estimator.estimation.jit import use_kernels

SCRIPT = """
import json
from pathlib import Path
from robot_state_estimator.estimation import jit
from robot_state_estimator.estimation.ekf.backends.kernels import flat, joint_step
from robot_state_estimator.estimation.precompile import compile_kernels
compile_kernels()
modules = jit._kernel_modules(Path(jit.__file__).parent, "robot_state_estimator.estimation")
print(json.dumps({"joint_step": len(joint_step.joint_step.signatures), "flat": len(flat.rotation_update.signatures),
                  "stale": jit.stale_kernels(modules), "need": jit.kernels_need_compiling()}))
"""


@pytest.mark.skipif(not use_kernels(), reason="numba kernels are not used here (numba missing or disabled)")
def test_precompile_covers_bipeds_quadrupeds_and_flat_feet() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # one joint step for every robot (arrays only: the number of feet is no part of its signature)
    assert result["joint_step"] == 1, result
    assert result["stale"] == [], result
    assert result["flat"] >= 1  # the flat-foot orientation update (humanoid soles)
    assert result["need"] is False
