"""Joint velocities from joint positions, for joint messages without velocities.

Backward difference of consecutive positions, optionally followed by a first-order low-pass (exponential
smoothing with ``alpha = dt / (dt + 1 / (2 pi f_c))``, the discretised RC filter):

    qdot_raw_k = (q_k - q_{k-1}) / dt_k
    qdot_k     = qdot_{k-1} + alpha_k (qdot_raw_k - qdot_{k-1})

Lag (group delay at frequencies well below the cutoff): half a sample period from the backward difference
(it is the central difference of the mid-interval instant) plus ``1 / (2 pi f_c)`` from the low-pass; e.g.
1.25 ms + 1.59 ms = 2.8 ms at 400 Hz with ``f_c = 100 Hz``. A trotting leg's velocity changes at a few Hz,
so this lag costs little; a lower cutoff trades noise for more lag. The lag is uniform over the joints and is
not compensated (doing so needs future samples).

The first sample after construction, :meth:`JointVelocityEstimator.reset` or a gap larger than ``max_dt_s``
gives zero velocity and ``valid = False``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from robot_state_estimator.estimation.jit import use_kernels
from robot_state_estimator.estimation.leg_kernels import joint_velocity_step

FloatArray = NDArray[np.float64]


class JointVelocityEstimator:
    """Causal joint-velocity estimate from positions (module docstring for the filter and its lag).

    Args:
        n_joints: number of joints.
        cutoff_hz: Hz, low-pass cutoff; 0 disables the low-pass (pure backward difference).
        max_dt_s: s, a larger gap restarts the estimator.
    """

    def __init__(self, n_joints: int, *, cutoff_hz: float = 100.0, max_dt_s: float = 0.1) -> None:
        self.n_joints = n_joints
        self.cutoff_hz = float(cutoff_hz)
        self.max_dt_s = float(max_dt_s)
        self._tau_s = 1.0 / (2.0 * math.pi * cutoff_hz) if cutoff_hz > 0.0 else 0.0
        self._kernels = use_kernels()  # leg_kernels.joint_velocity_step, else the numpy reference
        self.reset()

    def reset(self) -> None:
        """Forget the history."""
        self._q_prev: FloatArray | None = None
        self._stamp_prev_ns: int | None = None
        self.qdot = np.zeros(self.n_joints)
        self.valid = False

    def lag_s(self, sample_period_s: float) -> float:
        """Approximate delay (s) of the estimate at low frequency: ``dt / 2 + 1 / (2 pi f_c)``."""
        return 0.5 * sample_period_s + self._tau_s

    def update(self, stamp_ns: int, q: FloatArray) -> FloatArray:
        """Feed positions (n_joints,) at ``stamp_ns``; returns the velocity estimate (n_joints,) rad/s (a copy).

        A sample with a non-increasing stamp is ignored (the previous estimate is returned).
        """
        self.advance(stamp_ns, q)
        return self.qdot.copy()

    def advance(self, stamp_ns: int, q: FloatArray) -> None:
        """:meth:`update` without the returned copy: the estimate is then ``qdot`` (n_joints,) rad/s, updated in
        place (copy it to keep it)."""
        q = np.asarray(q, dtype=float)
        if self._q_prev is None or self._stamp_prev_ns is None:
            self._q_prev = q.copy()
            self._stamp_prev_ns = int(stamp_ns)
            return
        dt = (stamp_ns - self._stamp_prev_ns) * 1e-9
        if dt <= 0.0:
            return
        if dt > self.max_dt_s:
            self.reset()
            self.advance(stamp_ns, q)
            return
        filtered = self.valid and self._tau_s != 0.0
        alpha = dt / (dt + self._tau_s) if filtered else 0.0
        if self._kernels:
            joint_velocity_step(q, self._q_prev, self.qdot, dt, alpha, filtered)
        else:
            raw = (q - self._q_prev) / dt
            if filtered:
                self.qdot = self.qdot + alpha * (raw - self.qdot)
            else:
                self.qdot = raw
            self._q_prev = q.copy()
        self.valid = True
        self._stamp_prev_ns = int(stamp_ns)
