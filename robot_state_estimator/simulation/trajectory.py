"""Analytic base and foot trajectories: positions, velocities and accelerations in closed form.

Base (world ``W``, ENU): heading ``psi(t)``, forward speed ``u(t)`` along the heading, height ``z(t)``, roll
``phi(t)`` and pitch ``theta(t)`` are closed-form signals (sums and products of sines and quintic
smoothsteps, C^2 everywhere), so velocity and acceleration are exact. The horizontal position is the integral
of ``u (cos psi, sin psi)``, computed with 5-point Gauss-Legendre quadrature on sub-intervals of at most
1 ms (error far below 1e-12 m over a run), so it is consistent with the analytic velocity.

Orientation ``R_world_base = Rz(psi) Ry(theta) Rx(phi)``; angular velocity and acceleration in W:

- ``omega_base_in_world = psi' e_z + Rz theta' e_y + Rz Ry phi' e_x``
- ``alpha_base_in_world = psi'' e_z + Rz theta'' e_y + (psi' e_z) x (Rz theta' e_y) + Rz Ry phi'' e_x
  + omega_zy x (Rz Ry phi' e_x)``, with ``omega_zy = psi' e_z + Rz theta' e_y``.

pinocchio free-flyer layout: ``v = (R^T p', R^T omega_base_in_world)``, ``a = dv/dt = (R^T p'' - omega_base_in_base x
v_base_in_base, R^T alpha_base_in_world)``.

Feet: the foot frame origin (a point foot, or the centre of a spherical foot) is at a given height above the
ground in stance (0 for point feet, the radius for spheres; :meth:`FootPlan.evaluate` gives the stance part:
foothold plus slip); in swing it follows a :class:`SwingSegment` from the lift-off state to the touch-down
state: a quintic Hermite polynomial matching position, velocity and acceleration at both ends (for point
feet, which rest in stance, this is the quintic smoothstep ``10 s^3 - 15 s^4 + 6 s^5`` between the footholds),
plus ``64 h tau^3 (1 - tau)^3`` vertically (zero velocity and acceleration at both ends, apex ``h``). Footholds
are the nominal standing foot positions under the base at mid-stance (Raibert-style).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

FloatArray = NDArray[np.float64]

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(5)


@dataclass(frozen=True)
class Signal:
    """A scalar signal sampled at times t: value, first and second time derivative, each (n,)."""

    x: FloatArray
    dx: FloatArray
    ddx: FloatArray

    def __add__(self, other: Signal) -> Signal:
        return Signal(self.x + other.x, self.dx + other.dx, self.ddx + other.ddx)

    def __mul__(self, other: Signal) -> Signal:
        return Signal(
            self.x * other.x,
            self.dx * other.x + self.x * other.dx,
            self.ddx * other.x + 2 * self.dx * other.dx + self.x * other.ddx,
        )

    def scale(self, k: float) -> Signal:
        return Signal(k * self.x, k * self.dx, k * self.ddx)


def constant(t: FloatArray, c: float) -> Signal:
    z = np.zeros_like(t)
    return Signal(np.full_like(t, c), z, z.copy())


def smoothstep(t: FloatArray, t0: float, T: float) -> Signal:
    """Quintic ``10 s^3 - 15 s^4 + 6 s^5`` of ``s = (t - t0) / T`` clipped to [0, 1] (C^2; 0 before, 1 after)."""
    if T <= 0:
        x = (t >= t0).astype(float)
        return Signal(x, np.zeros_like(t), np.zeros_like(t))
    s = np.clip((t - t0) / T, 0.0, 1.0)
    inside = (t > t0) & (t < t0 + T)
    x = s**3 * (10 - 15 * s + 6 * s**2)
    dx = np.where(inside, 30 * s**2 * (1 - s) ** 2 / T, 0.0)
    ddx = np.where(inside, 60 * s * (1 - s) * (1 - 2 * s) / T**2, 0.0)
    return Signal(x, dx, ddx)


def smoothstep_integral(t: FloatArray, t0: float, T: float) -> Signal:
    """``int_0^t smoothstep`` (s), with its derivatives (the smoothstep and its first derivative)."""
    step = smoothstep(t, t0, T)
    if T <= 0:
        x = np.maximum(t - t0, 0.0)
    else:
        s = np.clip((t - t0) / T, 0.0, 1.0)
        x = np.where(t >= t0 + T, T / 2 + (t - t0 - T), T * s**4 * (2.5 - 3 * s + s**2))
    return Signal(x, step.x, step.dx)


def sine(t: FloatArray, amplitude: float, frequency_hz: float, t0: float = 0.0, phase: float = 0.0) -> Signal:
    """``amplitude sin(2 pi f (t - t0) + phase)``."""
    w = 2 * np.pi * frequency_hz
    arg = w * (t - t0) + phase
    return Signal(amplitude * np.sin(arg), amplitude * w * np.cos(arg), -amplitude * w**2 * np.sin(arg))


@dataclass(frozen=True)
class BaseMotion:
    """Scalar base signals (see the module docstring); all times in s from the start of the run."""

    speed: float
    yaw_rate: float
    turn_amplitude: float
    turn_period: float
    z0: float
    z_amplitude: float
    roll_amplitude: float
    pitch_amplitude: float
    gait_frequency: float
    t_start: float
    t_ramp: float
    crouch: float = 0.0
    stand_up_time: float = 0.0

    def signals(self, t: FloatArray) -> dict[str, Signal]:
        ramp = smoothstep(t, self.t_start, self.t_ramp)
        u = ramp.scale(self.speed)
        psi = smoothstep_integral(t, self.t_start, self.t_ramp).scale(self.yaw_rate)
        if self.turn_amplitude and self.turn_period > 0:
            psi = psi + ramp * sine(t, self.turn_amplitude, 1.0 / self.turn_period, self.t_start)
        z = constant(t, self.z0)
        if self.z_amplitude and self.gait_frequency > 0:
            z = z + ramp * sine(t, self.z_amplitude, 2 * self.gait_frequency, self.t_start)
        if self.crouch:
            z = z + smoothstep(t, self.t_start, self.stand_up_time).scale(self.crouch) + constant(t, -self.crouch)
        phi = constant(t, 0.0)
        theta = constant(t, 0.0)
        if self.gait_frequency > 0:
            if self.roll_amplitude:
                phi = ramp * sine(t, self.roll_amplitude, self.gait_frequency, self.t_start)
            if self.pitch_amplitude:
                theta = ramp * sine(t, self.pitch_amplitude, self.gait_frequency, self.t_start, np.pi / 2)
        return {"u": u, "psi": psi, "z": z, "phi": phi, "theta": theta}

    def planar_velocity(self, t: FloatArray) -> FloatArray:
        """(n, 2) horizontal base velocity in W (m/s)."""
        s = self.signals(t)
        return np.column_stack([s["u"].x * np.cos(s["psi"].x), s["u"].x * np.sin(s["psi"].x)])

    def planar_position(self, t: FloatArray) -> FloatArray:
        """(n, 2) horizontal base position in W (m), integral from t = 0 (origin) by Gauss-Legendre."""
        t = np.asarray(t, dtype=float)
        order = np.argsort(t, kind="stable")
        ts = np.concatenate([[0.0], t[order]])
        if ts[1] < 0:
            raise ValueError("times must be >= 0")
        lengths = np.diff(ts)
        n_sub = np.maximum(np.ceil(lengths / 1e-3).astype(int), 1)
        starts = np.repeat(ts[:-1], n_sub)
        h = np.repeat(lengths / n_sub, n_sub)
        sub_index = np.arange(n_sub.sum()) - np.repeat(np.cumsum(n_sub) - n_sub, n_sub)
        a = starts + sub_index * h
        nodes = a[:, None] + (h[:, None] / 2) * (_GL_NODES[None, :] + 1.0)
        vel = self.planar_velocity(nodes.reshape(-1)).reshape(nodes.shape[0], nodes.shape[1], 2)
        integrals = (h[:, None] / 2) * np.einsum("k,mkd->md", _GL_WEIGHTS, vel)
        cum = np.cumsum(integrals, axis=0)
        ends = np.cumsum(n_sub) - 1
        out = np.empty((t.size, 2))
        out[order] = cum[ends]
        return out


@dataclass(frozen=True)
class BaseState:
    """Base trajectory sampled at n times.

    Attributes:
        p_world_base: (n, 3) m; R_world_base: (n, 3, 3); v_world: (n, 3) m/s (dp/dt in W);
        a_world: (n, 3) m/s^2 (d2p/dt2 in W); omega_world: (n, 3) rad/s; alpha_world: (n, 3) rad/s^2;
        q_base: (n, 7) pinocchio ``[p, quat_xyzw]``; v_base: (n, 6) ``[v_base_in_base, omega_base_in_base]``; a_base:
            (n, 6) dv/dt.
        psi: (n,) heading (rad).
    """

    p_world_base: FloatArray
    R_world_base: FloatArray
    v_world: FloatArray
    a_world: FloatArray
    omega_world: FloatArray
    alpha_world: FloatArray
    q_base: FloatArray
    v_base: FloatArray
    a_base: FloatArray
    psi: FloatArray


def _rz(a: FloatArray) -> FloatArray:
    c, s = np.cos(a), np.sin(a)
    R = np.zeros((a.size, 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
    return R


def _ry(a: FloatArray) -> FloatArray:
    c, s = np.cos(a), np.sin(a)
    R = np.zeros((a.size, 3, 3))
    R[:, 0, 0], R[:, 0, 2], R[:, 2, 0], R[:, 2, 2], R[:, 1, 1] = c, s, -s, c, 1.0
    return R


def _rx(a: FloatArray) -> FloatArray:
    c, s = np.cos(a), np.sin(a)
    R = np.zeros((a.size, 3, 3))
    R[:, 1, 1], R[:, 1, 2], R[:, 2, 1], R[:, 2, 2], R[:, 0, 0] = c, -s, s, c, 1.0
    return R


def evaluate_base(motion: BaseMotion, t: FloatArray) -> BaseState:
    """Sample the base trajectory at times ``t`` (n,) s (see the module docstring for the formulas)."""
    t = np.asarray(t, dtype=float)
    s = motion.signals(t)
    u, psi, z, phi, theta = s["u"], s["psi"], s["z"], s["phi"], s["theta"]
    cpsi, spsi = np.cos(psi.x), np.sin(psi.x)
    pxy = motion.planar_position(t)
    p = np.column_stack([pxy, z.x])
    v = np.column_stack([u.x * cpsi, u.x * spsi, z.dx])
    acc = np.column_stack([u.dx * cpsi - u.x * psi.dx * spsi, u.dx * spsi + u.x * psi.dx * cpsi, z.ddx])
    Rz, Ry, Rx = _rz(psi.x), _ry(theta.x), _rx(phi.x)
    Rzy = Rz @ Ry
    R = Rzy @ Rx
    ez = np.array([0.0, 0.0, 1.0])
    w_z = psi.dx[:, None] * ez
    w_y = Rz[:, :, 1] * theta.dx[:, None]
    w_x = Rzy[:, :, 0] * phi.dx[:, None]
    omega = w_z + w_y + w_x
    w_zy = w_z + w_y
    alpha = (
        psi.ddx[:, None] * ez
        + Rz[:, :, 1] * theta.ddx[:, None]
        + np.cross(w_z, w_y)
        + Rzy[:, :, 0] * phi.ddx[:, None]
        + np.cross(w_zy, w_x)
    )
    Rt = np.transpose(R, (0, 2, 1))
    v_base_in_base = np.einsum("nij,nj->ni", Rt, v)
    omega_base_in_base = np.einsum("nij,nj->ni", Rt, omega)
    a_lin = np.einsum("nij,nj->ni", Rt, acc) - np.cross(omega_base_in_base, v_base_in_base)
    a_ang = np.einsum("nij,nj->ni", Rt, alpha)
    quat = Rotation.from_matrix(R).as_quat()  # x y z w
    quat *= np.sign(quat[:, 3:4] + (quat[:, 3:4] == 0))  # w >= 0
    return BaseState(
        p_world_base=p,
        R_world_base=R,
        v_world=v,
        a_world=acc,
        omega_world=omega,
        alpha_world=alpha,
        q_base=np.column_stack([p, quat]),
        v_base=np.column_stack([v_base_in_base, omega_base_in_base]),
        a_base=np.column_stack([a_lin, a_ang]),
        psi=psi.x,
    )


# ------------------------------------------------------------------------------------------------- feet


@dataclass(frozen=True)
class SwingSegment:
    """One swing of a foot origin, on ``[t0, t1]``: ``p(t) = sum_i c_i s^i`` with ``s = (t - t0) / T``, plus the
    vertical bump ``64 h s^3 (1 - s)^3`` (world ``W``, m).

    The quintic matches position, velocity and acceleration at both ends (quintic Hermite interpolation):
    with ``c0 = p0``, ``c1 = T v0``, ``c2 = T^2 a0 / 2`` and the end residuals ``e0 = p1 - c0 - c1 - c2``,
    ``e1 = T v1 - c1 - 2 c2``, ``e2 = T^2 a1 - 2 c2``: ``c3 = 10 e0 - 4 e1 + e2 / 2``, ``c4 = -15 e0 + 7 e1 - e2``,
    ``c5 = 6 e0 - 3 e1 + e2 / 2`` (the inverse of the 3 x 3 system of the end conditions at ``s = 1``).

    Attributes:
        t0, t1: lift-off and touch-down times (s).
        coeffs: (6, 3) polynomial coefficients (m) in powers of ``s``.
        step_height: apex of the vertical bump (m).
    """

    t0: float
    t1: float
    coeffs: FloatArray
    step_height: float

    @classmethod
    def hermite(
        cls,
        t0: float,
        t1: float,
        start: tuple[FloatArray, FloatArray, FloatArray],
        end: tuple[FloatArray, FloatArray, FloatArray],
        step_height: float,
    ) -> SwingSegment:
        """The segment from ``start = (p0, v0, a0)`` at ``t0`` to ``end = (p1, v1, a1)`` at ``t1`` (each (3,):
        m, m/s, m/s^2 in W), with a vertical bump of apex ``step_height`` (m) on top."""
        T = t1 - t0
        if T <= 0:
            raise ValueError(f"swing duration must be > 0, got {T}")
        p0, v0, a0 = (np.asarray(x, dtype=float) for x in start)
        p1, v1, a1 = (np.asarray(x, dtype=float) for x in end)
        c0, c1, c2 = p0, T * v0, 0.5 * T * T * a0
        e0 = p1 - c0 - c1 - c2
        e1 = T * v1 - c1 - 2.0 * c2
        e2 = T * T * a1 - 2.0 * c2
        c3 = 10.0 * e0 - 4.0 * e1 + 0.5 * e2
        c4 = -15.0 * e0 + 7.0 * e1 - e2
        c5 = 6.0 * e0 - 3.0 * e1 + 0.5 * e2
        return cls(t0, t1, np.array([c0, c1, c2, c3, c4, c5]), step_height)

    def evaluate(self, t: float | FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Position, velocity, acceleration in W (m, m/s, m/s^2) at time ``t`` (s) in ``[t0, t1]``: (3,) each
        for a scalar ``t``, (m, 3) for (m,) times."""
        T = self.t1 - self.t0
        s = (np.asarray(t, dtype=float) - self.t0) / T
        one, zero = np.ones_like(s), np.zeros_like(s)
        s2, s3 = s * s, s * s * s
        c = self.coeffs
        p = np.stack([one, s, s2, s3, s3 * s, s3 * s2], axis=-1) @ c
        v = np.stack([zero, one, 2 * s, 3 * s2, 4 * s3, 5 * s3 * s], axis=-1) @ c / T
        a = np.stack([zero, zero, 2 * one, 6 * s, 12 * s2, 20 * s3], axis=-1) @ c / (T * T)
        h = 64.0 * self.step_height
        u = 1.0 - s
        p[..., 2] += h * s3 * u * u * u
        v[..., 2] += h * 3 * s2 * u * u * (1 - 2 * s) / T
        a[..., 2] += h * (6 * s * u * u * u - 18 * s2 * u * u + 6 * s3 * u) / (T * T)
        return p, v, a


@dataclass(frozen=True)
class FootSlip:
    """A slip inside one stance: ``p(t) = foothold + d * smoothstep((t - t0) / T)`` (d in W, m)."""

    t0: float
    T: float
    d: FloatArray


@dataclass
class FootPlan:
    """Contact schedule and footholds of one foot.

    Attributes:
        swing_start, swing_end: (k,) swing intervals (s), increasing.
        footholds: (k + 1, 3) stance positions of the foot origin in W (m): before the first swing, then after
            each swing (at touch-down; z = the foot radius, 0 for point feet).
        slips: stance index -> slip in that stance.
        step_height: swing apex height (m).
    """

    swing_start: FloatArray
    swing_end: FloatArray
    footholds: FloatArray
    step_height: float
    slips: dict[int, FootSlip]

    def stance_end_position(self, j: int) -> FloatArray:
        """(3,) m, the stance part of stance ``j`` at its end: foothold plus the whole slip displacement."""
        slip = self.slips.get(j)
        p: FloatArray = self.footholds[j] + (slip.d if slip is not None else 0.0)
        return p

    def phases(self, t: FloatArray) -> tuple[NDArray[np.bool_], NDArray[np.intp]]:
        """Phase at times ``t`` (n,) s: ``in_swing`` (n,) bool and ``index`` (n,): the swing index in swing, the
        stance index (0 before the first swing, j after swing j - 1) in stance."""
        t = np.asarray(t, dtype=float)
        idx = np.searchsorted(self.swing_start, t, side="right") - 1
        if self.swing_start.size:
            in_swing = (idx >= 0) & (t < self.swing_end[np.maximum(idx, 0)])
        else:
            in_swing = np.zeros(t.size, dtype=bool)
        return in_swing, np.where(in_swing, idx, idx + 1)

    def evaluate_stance(
        self, t: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray, NDArray[np.bool_], NDArray[np.bool_]]:
        """The planned stance part at times ``t`` (n,) s: position (n, 3) m (foothold plus slip displacement),
        slip velocity (n, 3) m/s and acceleration (n, 3) m/s^2 in W, contact (n,) bool, slipping (n,) bool.

        Swing rows are NaN (position) and 0 (velocity, acceleration): the generator builds each swing
        (:class:`SwingSegment`) from the state the foot reached at lift-off. For a point foot the stance
        position is the foot origin; for a rolling sphere the rolling displacement of its centre is added by the
        generator, and the slip is the motion of the contact point.
        """
        t = np.asarray(t, dtype=float)
        n = t.size
        in_swing, index = self.phases(t)
        p = np.full((n, 3), np.nan)
        v = np.zeros((n, 3))
        a = np.zeros((n, 3))
        slipping = np.zeros(n, dtype=bool)
        st = ~in_swing
        p[st] = self.footholds[index[st]]
        for j, slip in self.slips.items():
            m = st & (index == j)
            if not np.any(m):
                continue
            sig = smoothstep(t[m], slip.t0, slip.T)
            p[m] += sig.x[:, None] * slip.d
            v[m] = sig.dx[:, None] * slip.d
            a[m] = sig.ddx[:, None] * slip.d
            slipping[m] = (t[m] >= slip.t0) & (t[m] < slip.t0 + slip.T)
        return p, v, a, st, slipping


def plan_feet(
    motion: BaseMotion,
    r_base_feet_xy: FloatArray,
    *,
    phase_offsets: FloatArray | None,
    period: float,
    duty: float,
    step_height: float,
    t_gait_start: float,
    t_end: float,
    stance_heights: FloatArray | None = None,
) -> list[FootPlan]:
    """Plan every foot: swing intervals from the gait phase offsets, footholds at mid-stance.

    Args:
        motion: base motion.
        r_base_feet_xy: (nf, 2) nominal foot positions in the base frame (m), from the standing posture.
        phase_offsets: (nf,) gait phase offsets in cycles (None: no stepping, all feet in stance).
        period: gait period (s); duty: stance fraction; step_height: swing apex (m).
        t_gait_start: when stepping starts (s); t_end: end of the run (s).
        stance_heights: (nf,) m, height of each foot origin above the ground in stance (the sphere radius of a
            rolling foot); None = 0 (point feet).
    """
    nf = r_base_feet_xy.shape[0]
    plans = []
    for i in range(nf):
        if phase_offsets is None:
            starts = np.zeros(0)
        else:
            k0 = np.ceil(phase_offsets[i] - duty - 1e-12)
            ks = np.arange(k0, (t_end - t_gait_start) / period + phase_offsets[i] - duty + 1)
            starts = t_gait_start + (ks + duty - phase_offsets[i]) * period
            starts = starts[(starts >= t_gait_start - 1e-12) & (starts < t_end)]
        ends = starts + (1 - duty) * period
        # footholds: initial, then at the middle of each following stance
        next_lift = np.concatenate([starts[1:], starts[-1:] + period]) if starts.size else starts
        mids = np.concatenate([[0.0], (ends + next_lift) / 2])
        pxy = motion.planar_position(mids)
        psi = motion.signals(mids)["psi"].x
        c, s = np.cos(psi), np.sin(psi)
        r = r_base_feet_xy[i]
        footholds = np.column_stack(
            [
                pxy[:, 0] + c * r[0] - s * r[1],
                pxy[:, 1] + s * r[0] + c * r[1],
                np.full(mids.size, 0.0 if stance_heights is None else float(stance_heights[i])),
            ]
        )
        footholds[0, :2] = r  # the initial stance is the standing posture at the origin
        plans.append(FootPlan(starts, ends, footholds, step_height, {}))
    return plans
