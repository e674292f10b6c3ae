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
from robot_state_estimator.estimation.ekf.layout import (
    JV_HAS_PREV,
    JV_LIMITS_SIZE,
    JV_MAX_DT,
    JV_STAMP,
    JV_STATE_SIZE,
    JV_TAU,
    JV_VALID,
)

FloatArray = NDArray[np.float64]


class JointVelocityEstimator:
    """Causal joint-velocity estimate from positions (module docstring for the filter and its lag).

    Args:
        n_joints: number of joints.
        cutoff_hz: Hz, low-pass cutoff; 0 disables the low-pass (pure backward difference).
        max_dt_s: s, a larger gap restarts the estimator.
        backend: the numerics of the step (:mod:`.ekf.backends`; None: ``select_backend()``).

    Attributes:
        qdot: (n_joints,) rad/s, the estimate (updated in place).
        state: (``layout.JV_STATE_SIZE``,) int64, the history: a previous sample is held, its stamp (ns), the
            estimate is valid (``layout.JV_HAS_PREV``, ``JV_STAMP``, ``JV_VALID``).
        limits: (``layout.JV_LIMITS_SIZE``,) float64, ``max_dt_s`` and the low-pass time constant (s) (``layout.
            JV_MAX_DT``, ``JV_TAU``). The arrays (and the previous positions) are made once and changed in place: the
            backend's joint step binds them once and makes the regular step itself, by the rule of
            :meth:`step_coefficients` and :meth:`stepped`.
    """

    def __init__(
        self, n_joints: int, *, cutoff_hz: float = 100.0, max_dt_s: float = 0.1, backend: Backend | None = None
    ) -> None:
        self.n_joints = n_joints
        self.cutoff_hz = float(cutoff_hz)
        self.max_dt_s = float(max_dt_s)
        self._tau_s = 1.0 / (2.0 * math.pi * cutoff_hz) if cutoff_hz > 0.0 else 0.0
        self.backend = select_backend() if backend is None else backend
        self._q_prev = np.zeros(n_joints)
        self.qdot = np.zeros(n_joints)
        self.state = np.zeros(JV_STATE_SIZE, dtype=np.int64)
        self.limits = np.zeros(JV_LIMITS_SIZE)
        self.limits[JV_MAX_DT] = self.max_dt_s
        self.limits[JV_TAU] = self._tau_s
        self.reset()

    def reset(self) -> None:
        """Forget the history."""
        self.state[:] = 0
        self.qdot[:] = 0.0

    @property
    def valid(self) -> bool:
        """Whether the estimate is valid (a regular step made it since the last restart)."""
        return bool(self.state[JV_VALID])

    @property
    def _stamp_prev_ns(self) -> int | None:
        """The stamp of the previous positions (ns), None without them."""
        state = self.state
        return int(state[JV_STAMP]) if state[JV_HAS_PREV] else None

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
        state = self.state
        if not state[JV_HAS_PREV]:
            self._q_prev[:] = q
            state[JV_HAS_PREV] = 1
            state[JV_STAMP] = stamp_ns
            return
        coefficients = self.step_coefficients(stamp_ns)
        if coefficients is None:
            if stamp_ns > state[JV_STAMP]:  # a gap larger than max_dt_s: start again
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
        :meth:`stepped`. (The backend's joint step applies the same rule to :attr:`state` and :attr:`limits`.)"""
        state = self.state
        if not state[JV_HAS_PREV]:
            return None
        dt = (stamp_ns - int(state[JV_STAMP])) * 1e-9
        if not 0.0 < dt <= self.max_dt_s:
            return None
        filtered = bool(state[JV_VALID]) and self._tau_s != 0.0
        return dt, (dt / (dt + self._tau_s) if filtered else 0.0), filtered

    def stepped(self, stamp_ns: int) -> None:
        """Record a regular step to ``stamp_ns`` (made by :meth:`advance` or by the caller of
        :meth:`step_coefficients`): the estimate is valid."""
        self.state[JV_VALID] = 1
        self.state[JV_STAMP] = stamp_ns
