"""The one seam between the estimator and its numerics: the :class:`Backend` protocol.

Every per-sample computation whose numpy reference has a compiled twin goes through a backend: the filter's steps on
its buffers (:mod:`..layout`), the leg odometry's numerics (joint gather, joint velocity, contact trigger, foot
forces, leg-odometry terms) and the compiled shortcuts that merge several of them into one call. Two backends:

- :class:`~.numpy_backend.NumpyBackend`, the readable reference (numpy and pinocchio);
- :class:`~.numba_backend.NumbaBackend`, the numba kernels (:mod:`.kernels`), tested equal to the reference to 1e-12.
  Where a kernel declines a case (an innovation covariance that is not numerically positive definite, an
  ill-conditioned leg), it hands it to the reference.

The backend is chosen once, where an object is built (``ekf.backends.select_backend``: numba when it is importable
and ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT`` is not set); nothing outside ``ekf/backends`` chooses between them
(``test/test_architecture.py``).

Operations of two kinds:

- numerics: both backends compute them (same numbers to rounding);
- shortcuts (:meth:`Backend.imu_step`, :meth:`Backend.stance_update`, :meth:`Backend.gather_joints`,
  :meth:`Backend.prepare_joints`, :meth:`Backend.point_foot_forces`, :meth:`Backend.torque_contacts`,
  :meth:`Backend.joint_step`): several steps in one compiled call. The reference declines them (returns
  :data:`~..layout.DECLINED`, or None for the joint step); the caller then takes its general path, made of the
  numerics above, which is the shortcut's reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from robot_state_estimator.estimation.contact import ContactDetector, ContactForceEstimator
    from robot_state_estimator.estimation.ekf.filter import BaseEkf
    from robot_state_estimator.estimation.ekf.measurements import Measurement, UpdateResult
    from robot_state_estimator.estimation.joint_input import JointInput
    from robot_state_estimator.estimation.kinematics import LegKinematics

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]


class JointStep(Protocol):
    """A joint sample's step in one call (a compiled shortcut): its preparation, then the kinematics and dynamics
    (compiled, from the constants pinocchio extracted once), the foot forces, the contact trigger, the stance feet's
    leg update and the outputs (:meth:`Backend.joint_step`)."""

    def warm_up(self, q_joints: FloatArray) -> None:
        """Compile now (or load from the cache) for the argument types of the real calls, running each once on
        scratch copies of the state (a step of ``q_joints`` (nj,)); the kinematics' and the forces' buffers are
        written (the caller resets them)."""
        ...

    def prepare_and_run(
        self, position: FloatArray, velocity: FloatArray, effort: FloatArray, mode: int, stamp_ns: int
    ) -> tuple[int, FloatArray]:
        """A joint sample from its message arrays (every array C-contiguous float64 (n,), ``velocity`` (n,) or (0,):
        not checked) in one call: the joint velocity estimator's regular step to ``stamp_ns`` (its rule,
        ``JointVelocityEstimator.step_coefficients`` and ``stepped``, on its arrays), :meth:`Backend.prepare_joints`
        with the joint input's gather (``mode``: :data:`~..layout.PREPARE_WHOLE` and
        :data:`~..layout.PREPARE_MEASURED`; the positions into the kinematics' configuration) into the (3, nj) rows
        of a new buffer (from ``layout.joint_rows_offset``), then :meth:`run` of them at ``stamp_ns`` (the velocities
        ``measured`` with ``PREPARE_MEASURED``).

        Returns:
            The result (:data:`~..layout.JOINT_NOT_PREPARED` when the sample is not the usual one: no regular step
            of the joint velocity, a used value not finite; nothing changed; else :meth:`run`'s) and the step's
            buffer (``layout.joint_buffer_size``: the outputs, the per-foot numbers, the leg update's output, the
            rows).
        """
        ...

    def run(
        self, qtau: FloatArray, stamp_ns: int, q_joints: FloatArray | None, measured: bool
    ) -> tuple[int, FloatArray]:
        """The step of a prepared sample ``qtau`` (3, nj) (positions rad, the velocities in use rad/s, efforts N m)
        at the filter's time: the foot kinematics of ``qtau[0]`` stored in the kinematics' buffers (``q_joints``:
        also written into its configuration; None: already there), the bias torques (``M a + h`` with the full
        dynamics when the velocities are the message's, ``measured``; else ``g(q)``), the point-foot forces and the
        torque trigger, the leg update, the outputs.

        Returns:
            The result (:data:`~..layout.JOINT_FORCES_FAILED`, :data:`~..layout.JOINT_NOT_PD`, or the contact
            mask, the number of accepted feet and whether the state is not finite: ``JOINT_ACCEPTED_SHIFT``) and
            the buffer (:func:`~..layout.joint_buffer_size`).
        """
        ...

    def part_costs(self, qtau: FloatArray, stamp_ns: int, repeats: int = 2000, batches: int = 5) -> dict[str, float]:
        """The step's parts (propagation, kinematics, contact logic, update), each timed in a compiled loop from the
        current state, nothing changed: us of CPU per repetition (``make bench``'s breakdown of the core step)."""
        ...


class Backend(Protocol):
    """The numerics of the filter and of the leg odometry (module docstring). Arrays are float64; frames as named."""

    #: "numpy" or "numba"
    name: str
    #: whether the operations are compiled (objects warm them up at construction: compiled once, or loaded from
    #: numba's cache, before the first sample)
    compiled: bool

    def warm_up(self) -> None:
        """Compile (or load) the filter's kernels now; idempotent."""
        ...

    # -- the filter (on ``ekf``'s buffers) -------------------------------------------------------------------------

    def set_imu(self, ekf: BaseEkf, gyro_imu: FloatArray, accel_imu: FloatArray, dt_gyro: float) -> None:
        """Hold a reading (S: rad/s, m/s^2); ``alpha_base_in_base`` from the previous rate over ``dt_gyro`` s (0:
        zero)."""
        ...

    def propagate(self, ekf: BaseEkf, dt: float, normalise: bool) -> None:
        """State and covariance over dt (s) with the held reading; R re-orthonormalised when ``normalise``."""
        ...

    def gap_step(self, ekf: BaseEkf, dt: float) -> None:
        """An IMU gap of ``dt`` s: the position carried at the estimated velocity, the covariance grown by the gap's
        transition, process noise and unknown acceleration and rate (``NumpyBackend.gap_step``, both backends)."""
        ...

    def imu_step(self, ekf: BaseEkf) -> Callable[..., int] | None:
        """Shortcut: the one-call IMU step bound to ``ekf``'s buffers (its state, ``_clock`` and ``_imu_limits``):
        ``step(t_ns, stamp_ns, gyro_imu, accel_imu, out) -> int`` from the filter time ``t_ns`` (``BaseEkf.imu_step``:
        the bookkeeping of :meth:`BaseEkf.set_imu` and ``propagate_to``, the reading's check, :meth:`set_imu`,
        :meth:`propagate`, :meth:`finite_outputs` into ``out``; returns ``IMU_OK``, ``IMU_NOT_FINITE``,
        ``IMU_BAD_INPUT`` (nothing changed) or ``DECLINED`` (not the usual step: nothing changed)); None when the
        backend has no such shortcut (the reference)."""
        ...

    def leg_update(
        self,
        ekf: BaseEkf,
        names: Sequence[str],
        v_base_measured: FloatArray,
        p_base_foot: FloatArray,
        J_base_foot: FloatArray | None,
        gate: float,
        H_attitude: FloatArray | None,
    ) -> list[UpdateResult]:
        """The stacked leg-odometry update of k >= 1 stance feet (``BaseEkf.update_leg_velocities``)."""
        ...

    def stance_update(
        self,
        ekf: BaseEkf,
        contacts: BoolArray,
        qdot_joints: FloatArray,
        radii: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
        rolling: bool,
        use_J: bool,
        sf2: float,
        sc2: float,
        se2: float,
        gate: float,
        out: FloatArray,
    ) -> int:
        """Shortcut: the leg terms of the feet in contact and :meth:`leg_update` (``BaseEkf.update_stance_feet``);
        the number of accepted feet, or < 0 (not positive definite, or declined: nothing changed)."""
        ...

    def update(self, ekf: BaseEkf, measurements: list[Measurement], gate: float) -> list[UpdateResult]:
        """Gate each measurement on its NIS, fuse the accepted ones in one Joseph-form update."""
        ...

    def rotation_update(
        self,
        ekf: BaseEkf,
        names: Sequence[str],
        feet: IntArray,
        qdot_joints: FloatArray,
        J6_base_foot: FloatArray,
        rotation_noise: float,
        encoder_noise: float,
        gate: float,
    ) -> list[UpdateResult]:
        """The orientation update of k >= 1 flat stance feet (:mod:`robot_state_estimator.estimation.flat_feet`)."""
        ...

    def quat_xyzw(self, ekf: BaseEkf) -> FloatArray:
        """(4,) attitude quaternion ``x y z w``."""
        ...

    def pose_covariance(self, ekf: BaseEkf) -> FloatArray:
        """(6, 6) pose covariance, ROS order (position in W, rotation about the W axes)."""
        ...

    def twist_covariance(self, ekf: BaseEkf) -> FloatArray:
        """(6, 6) twist covariance (linear, angular), in B."""
        ...

    def outputs(self, ekf: BaseEkf, out: FloatArray) -> None:
        """``out`` (91,) = the output vector (``common.output_layout``)."""
        ...

    def finite_outputs(self, ekf: BaseEkf, out: FloatArray) -> bool:
        """:meth:`state_is_finite`, then :meth:`outputs` when it is."""
        ...

    def state_is_finite(self, ekf: BaseEkf) -> bool:
        """True when the state and covariance hold no NaN/Inf."""
        ...

    # -- leg odometry ----------------------------------------------------------------------------------------------

    def joint_velocity_step(
        self, q: FloatArray, q_prev: FloatArray, qdot: FloatArray, dt: float, alpha: float, filtered: bool
    ) -> None:
        """One step of the joint velocity estimate in place: ``raw = (q - q_prev) / dt``; ``qdot += alpha (raw -
        qdot)`` when ``filtered`` else ``qdot = raw``; ``q_prev = q`` ((nj,) rad, rad/s)."""
        ...

    def schmitt_step(
        self,
        values: FloatArray,
        stamp_ns: int,
        on: float,
        off: float,
        min_on_ns: int,
        min_off_ns: int,
        raw: BoolArray,
        in_contact: BoolArray,
        pending: BoolArray,
        since_ns: NDArray[np.int64],
    ) -> None:
        """One step of the contact trigger after its first sample, in place (``ContactDetector.update``)."""
        ...

    def leg_velocity_terms(
        self,
        idx: IntArray,
        qdot_joints: FloatArray,
        omega_base_in_base: FloatArray,
        R_world_base: FloatArray,
        radii: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Rolling-contact leg odometry of the feet ``idx`` (``LegKinematics.rolling_contact_terms``)."""
        ...

    def point_contact_terms(
        self,
        idx: IntArray,
        qdot_joints: FloatArray,
        omega_base_in_base: FloatArray,
        p_base_foot: FloatArray,
        J6_base_foot: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Point-foot leg odometry of the feet ``idx`` (``LegKinematics.point_contact_terms``)."""
        ...

    def gather_joints(
        self,
        position: FloatArray,
        velocity: FloatArray,
        effort: FloatArray,
        gather: IntArray,
        whole: bool,
        out: FloatArray,
    ) -> int:
        """Shortcut: finiteness check and gather of a joint sample into model order; ``GATHER_*`` or ``DECLINED``."""
        ...

    def prepare_joints(
        self,
        position: FloatArray,
        velocity: FloatArray,
        effort: FloatArray,
        gather: IntArray,
        mode: int,
        q_prev: FloatArray,
        qdot: FloatArray,
        dt: float,
        alpha: float,
        out: FloatArray,
        q_full: FloatArray,
    ) -> int:
        """Shortcut: :meth:`gather_joints`, the joint velocity's regular step, the velocity in use, the positions
        into ``q_full``; ``GATHER_*`` or ``DECLINED``."""
        ...

    def point_foot_forces(self, forces: ContactForceEstimator, tau_joints: FloatArray, R_world_base: FloatArray) -> int:
        """Shortcut: point-foot forces with ``g(q)`` from the centre-of-mass Jacobian into ``forces``' arrays; the
        legs whose 3 x 3 solve failed (bits), or ``DECLINED``."""
        ...

    def torque_contacts(
        self,
        forces: ContactForceEstimator,
        tau_joints: FloatArray,
        R_world_base: FloatArray,
        detector: ContactDetector,
        stamp_ns: int,
    ) -> int:
        """Shortcut: :meth:`point_foot_forces`, then the trigger on the vertical forces; as it, or ``DECLINED``."""
        ...

    def joint_step(
        self,
        ekf: BaseEkf,
        kin: LegKinematics,
        forces: ContactForceEstimator,
        detector: ContactDetector,
        joint_input: JointInput,
        radii: FloatArray,
        rolling: bool,
        high_nis: float,
    ) -> JointStep | None:
        """Shortcut: the whole joint step (:class:`JointStep`) bound to these objects (``high_nis``: the slip
        report's NIS threshold, whose crossing the step reports), or None when the backend has none for them."""
        ...
