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
from robot_state_estimator.estimation import jit
from robot_state_estimator.estimation.ekf.backends.kernels import flat, joint_step
from robot_state_estimator.estimation.precompile import compile_kernels
compile_kernels()
feet = sorted({sig[3].count for sig in joint_step.joint_step.signatures})  # UniTuple of per-foot placements
print(json.dumps({"joint_step_feet": feet, "flat": len(flat.rotation_update.signatures),
                  "need": jit.kernels_need_compiling()}))
"""


@pytest.mark.skipif(not use_kernels(), reason="numba kernels are not used here (numba missing or disabled)")
def test_precompile_covers_bipeds_quadrupeds_and_flat_feet() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # the joint step's per-foot tuples: 2 feet (a biped with point feet) and 4 (the quadrupeds)
    assert result["joint_step_feet"] == [2, 4], result
    assert result["flat"] >= 1  # the flat-foot orientation update (humanoid soles)
    assert result["need"] is False
