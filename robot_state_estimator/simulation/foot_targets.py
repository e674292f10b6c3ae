"""Step 2 of the quadruped generator: where each foot origin must be at each sample, with its velocity and
acceleration (W), for the inverse kinematics (:mod:`.inverse_kinematics`).

- In stance: the foothold plus the planned slip (:meth:`~.trajectory.FootPlan.evaluate_stance`) plus, for a
  rolling sphere, the rolling displacement of its centre (:mod:`.rolling`); the velocity and acceleration are
  those of the contact point (the slip's, zero without slip), which the inverse kinematics imposes on the
  contact point's Jacobian.
- In swing: a quintic :class:`~.trajectory.SwingSegment` from the state the foot had at lift-off (the stance
  position with the rolling extrapolated to the lift-off time, its rolling velocity and acceleration) to the
  state it must have at touch-down (the next foothold with the rolling velocity and acceleration it lands with,
  :func:`~.rolling.touchdown_rolling`; at rest for point feet), plus the vertical bump of the step height.
  Position, velocity and acceleration match at both ends (quintic Hermite interpolation), so the foot's motion
  is C^2 through lift-off and touch-down. For point feet, which rest in stance, it is the quintic smoothstep
  between the footholds.

The segment is planned once, at the first swing sample, and evaluated at all the swing's samples at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from robot_state_estimator.simulation.inverse_kinematics import Legs
from robot_state_estimator.simulation.rolling import RollingState, touchdown_rolling
from robot_state_estimator.simulation.trajectory import BaseState, FootPlan, SwingSegment

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class FootSchedule:
    """The foot plans evaluated at the ``n`` grid samples, per foot (``nf``).

    Attributes:
        stance_p: (n, nf, 3) m, the planned stance position (foothold plus slip; NaN in swing).
        slip_v, slip_a: (n, nf, 3) the slip's velocity (m/s) and acceleration (m/s^2); 0 in swing.
        contact, slipping, in_swing: (n, nf) bool.
        phase_index: (n, nf) the swing index in swing, the stance index in stance.
        code: (n, nf) one integer per stance (``2 j``, even) and swing (``2 j + 1``, odd) of each foot.
    """

    stance_p: FloatArray
    slip_v: FloatArray
    slip_a: FloatArray
    contact: NDArray[np.bool_]
    slipping: NDArray[np.bool_]
    in_swing: NDArray[np.bool_]
    phase_index: NDArray[np.intp]
    code: NDArray[np.intp]

    @classmethod
    def evaluate(cls, plans: list[FootPlan], t: FloatArray) -> FootSchedule:
        """The schedule of ``plans`` at the times ``t`` (n,) s."""
        n, nf = t.size, len(plans)
        stance_p = np.empty((n, nf, 3))
        slip_v = np.empty((n, nf, 3))
        slip_a = np.empty((n, nf, 3))
        contact = np.empty((n, nf), dtype=bool)
        slipping = np.empty((n, nf), dtype=bool)
        in_swing = np.empty((n, nf), dtype=bool)
        phase_index = np.empty((n, nf), dtype=np.intp)
        for i_foot, plan in enumerate(plans):
            (
                stance_p[:, i_foot],
                slip_v[:, i_foot],
                slip_a[:, i_foot],
                contact[:, i_foot],
                slipping[:, i_foot],
            ) = plan.evaluate_stance(t)
            in_swing[:, i_foot], phase_index[:, i_foot] = plan.phases(t)
        code = 2 * phase_index + in_swing
        return cls(stance_p, slip_v, slip_a, contact, slipping, in_swing, phase_index, code)


class FootTargets:
    """The foot-origin targets of the current sample, and what carries over from one sample to the next (the
    rolling displacement, the current swing of each foot).

    Attributes:
        p, v, a: (nf, 3) position (m), velocity (m/s) and acceleration (m/s^2) targets (W) of the current sample:
            of the foot origins in position, of the contact points in velocity and acceleration in stance
            (:func:`~.inverse_kinematics.contact_jacobians`), of the foot origins in swing.
        roll: the rolling displacement of the feet in stance.
    """

    def __init__(
        self,
        model: pin.Model,
        legs: Legs,
        plans: list[FootPlan],
        t: FloatArray,
        schedule: FootSchedule,
        Dx: FloatArray,
        rolling: NDArray[np.bool_],
        touchdown_bases: list[tuple[BaseState, BaseState] | None],
    ) -> None:
        """``Dx`` (nf, 3, 3) ``[d]x`` of each foot's contact offset; ``rolling`` (nf,) the spherical feet;
        ``touchdown_bases`` per foot the base at its touch-downs (:func:`~.rolling.touchdown_bases`)."""
        nf = len(plans)
        self._model, self._data = model, model.createData()
        self._legs, self._plans, self._t, self._schedule = legs, plans, t, schedule
        self._Dx, self._rolling, self._touchdown_bases = Dx, rolling, touchdown_bases
        self.roll = RollingState(nf)
        self._segments: list[SwingSegment | None] = [None] * nf
        # (first sample, p, v, a over the swing's samples) of each foot's current swing
        self._swing_targets: list[tuple[int, FloatArray, FloatArray, FloatArray] | None] = [None] * nf
        self._touchdown = np.zeros((nf, 3, 3))  # rolling velocity, acceleration and jerk at the end of each segment
        self._prev_code = np.full(nf, -1)
        self._same = np.zeros(nf, dtype=bool)
        self.p = np.empty((nf, 3))
        self.v = np.empty((nf, 3))
        self.a = np.empty((nf, 3))

    def update(self, k: int, h: float, q: FloatArray) -> None:
        """The targets of sample ``k``, ``h`` s after the previous one; ``q`` (nq,) is the configuration the
        inverse kinematics starts from (its base at sample ``k``), where a lift-off's touch-down posture starts."""
        sched = self._schedule
        tk = float(self._t[k])
        same = self._same = sched.code[k] == self._prev_code
        in_stance = sched.contact[k]
        if self._rolling.any():
            going_on = in_stance & same & self._rolling  # the same stance: integrate the rolling from the last sample
            self.roll.advance(h, going_on)
            for i in np.flatnonzero(in_stance & ~same):
                seg = self._segments[i]
                # the first stance at rest; otherwise touched down at the end of the segment
                self.roll.touch_down(int(i), None if seg is None else tk - seg.t1, self._touchdown[i])
        self.p[in_stance] = sched.stance_p[k, in_stance] + self.roll.r[in_stance]
        self.v[in_stance] = sched.slip_v[k, in_stance]  # of the contact point
        self.a[in_stance] = sched.slip_a[k, in_stance]
        for i in np.flatnonzero(~in_stance):
            if not same[i]:  # lift-off: a new swing from the state reached
                self._lift_off(k, int(i), q)
            swing = self._swing_targets[i]
            assert swing is not None  # set at the lift-off sample of this swing
            k0, p_sw, v_sw, a_sw = swing
            self.p[i], self.v[i], self.a[i] = p_sw[k - k0], v_sw[k - k0], a_sw[k - k0]

    def _lift_off(self, k: int, i: int, q: FloatArray) -> None:
        """Plan the swing of foot ``i`` that begins at sample ``k``: from its lift-off state to its touch-down
        state (module docstring), evaluated at the swing's samples."""
        t, code = self._t, self._schedule.code
        plan, s = self._plans[i], int(self._schedule.phase_index[k, i])
        t0, t1 = float(plan.swing_start[s]), float(plan.swing_end[s])
        if k > 0 and self._prev_code[i] % 2 == 0:
            r0, v0, a0 = (x[i] for x in self.roll.extrapolated(t0 - float(t[k - 1])))
        else:
            r0, v0, a0 = np.zeros(3), np.zeros(3), np.zeros(3)
        p1 = plan.footholds[s + 1]
        self._touchdown[i] = 0.0
        bases = self._touchdown_bases[i]
        if self._rolling[i] and bases is not None:
            self._touchdown[i] = touchdown_rolling(self._model, self._data, self._legs, i, self._Dx[i], q, p1, bases, s)
        p0 = plan.stance_end_position(s) + r0
        seg = SwingSegment.hermite(
            t0, t1, (p0, v0, a0), (p1, self._touchdown[i, 0], self._touchdown[i, 1]), plan.step_height
        )
        self._segments[i] = seg
        k_end = k + int(np.count_nonzero(code[k:, i] == code[k, i]))  # the samples of this swing
        self._swing_targets[i] = (k, *seg.evaluate(t[k:k_end]))

    def finish(
        self,
        k: int,
        h: float,
        rollers: NDArray[np.intp],
        J_ang: FloatArray,
        va: tuple[FloatArray, FloatArray],
        drift_ang: FloatArray,
    ) -> None:
        """After sample ``k``'s joint velocities and accelerations ``va``: keep the rolling velocity and
        acceleration of the stance feet (:meth:`~.rolling.RollingState.record`, same arguments)."""
        if self._rolling.any():
            going_on = self._schedule.contact[k] & self._rolling & self._same
            self.roll.record(h, going_on, rollers, self._Dx, J_ang, va, drift_ang)
        self._prev_code = self._schedule.code[k]
