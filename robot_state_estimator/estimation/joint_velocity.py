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

from robot_state_estimator.estimation.ekf.backends import Backend, select_backend

FloatArray = NDArray[np.float64]


class JointVelocityEstimator:
    """Causal joint-velocity estimate from positions (module docstring for the filter and its lag).

    Args:
        n_joints: number of joints.
        cutoff_hz: Hz, low-pass cutoff; 0 disables the low-pass (pure backward difference).
        max_dt_s: s, a larger gap restarts the estimator.
        backend: the numerics of the step (:mod:`.ekf.backends`; None: ``select_backend()``).
    """

    def __init__(
        self, n_joints: int, *, cutoff_hz: float = 100.0, max_dt_s: float = 0.1, backend: Backend | None = None
    ) -> None:
        self.n_joints = n_joints
        self.cutoff_hz = float(cutoff_hz)
        self.max_dt_s = float(max_dt_s)
        self._tau_s = 1.0 / (2.0 * math.pi * cutoff_hz) if cutoff_hz > 0.0 else 0.0
        self.backend = select_backend() if backend is None else backend
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
        coefficients = self.step_coefficients(stamp_ns)
        if coefficients is None:
            if stamp_ns > self._stamp_prev_ns:  # a gap larger than max_dt_s: start again
                self.reset()
                self.advance(stamp_ns, q)
            return  # else a non-increasing stamp: ignored
        dt, alpha, filtered = coefficients
        self.backend.joint_velocity_step(q, self._q_prev, self.qdot, dt, alpha, filtered)
        self.stepped(stamp_ns)

    def step_coefficients(self, stamp_ns: int) -> tuple[float, float, bool] | None:
        """The regular step of :meth:`advance` to ``stamp_ns``: ``(dt s, alpha, filtered)`` (the low-pass gain, 0
        when not ``filtered``); None when :meth:`advance` would not make one (no previous sample, a
        non-increasing stamp, a gap larger than ``max_dt_s``).

        A caller that makes the step itself (the backend's ``prepare_joints`` on ``_q_prev`` and ``qdot``) then calls
        :meth:`stepped`."""
        prev = self._stamp_prev_ns
        if self._q_prev is None or prev is None:
            return None
        dt = (stamp_ns - prev) * 1e-9
        if not 0.0 < dt <= self.max_dt_s:
            return None
        filtered = self.valid and self._tau_s != 0.0
        return dt, (dt / (dt + self._tau_s) if filtered else 0.0), filtered

    def stepped(self, stamp_ns: int) -> None:
        """Record a regular step to ``stamp_ns`` (made by :meth:`advance` or by the caller of
        :meth:`step_coefficients`): the estimate is valid."""
        self.valid = True
        self._stamp_prev_ns = int(stamp_ns)
