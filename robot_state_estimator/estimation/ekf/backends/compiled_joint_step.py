"""The compiled joint step (:class:`~.base.JointStep`) that :meth:`.numba_backend.NumbaBackend.joint_step` makes:
one compiled call per usual joint sample (``kernels/joint_step.py``: the preparation, gather and joint velocity; the
kinematics and dynamics from the constants pinocchio extracted once; the contact forces and trigger; the stance
feet's update), its tables packed once, its state arguments bound once, and the breakdown of its cost by part.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_state_estimator.estimation import jit
from robot_state_estimator.estimation.ekf.backends.kernels import joint_step as joint_step_kernel
from robot_state_estimator.estimation.ekf.backends.numpy_backend import FloatArray, IntArray
from robot_state_estimator.estimation.ekf.layout import (
    CROSS_COLS,
    CROSS_ROWS,
    JF_G,
    JF_GATE,
    JF_MASS,
    JF_RADII,
    JF_SC2,
    JF_SE2,
    JF_SF2,
    JI_FULL,
    JI_LEGS,
    JI_MIN_OFF,
    JI_MIN_ON,
    JI_ROLLING,
    JI_USE_J,
    JV_MAX_DT,
    JV_TAU,
    TAB_DYN,
    TAB_DYN_LEN,
    TAB_FF,
    TAB_FF_COLS,
    TAB_FI,
    TAB_HEADER,
    TAB_JF,
    TAB_JF_COLS,
    TAB_JI,
    TAB_JI_COLS,
    TAB_NF,
    TAB_NJ,
    TAB_TF,
    TAB_TF_LEN,
    TAB_TI,
    TAB_TI_LEN,
    TAB_WORK,
    TAB_WORK_COLS,
    X_ACCEL,
    X_GYRO,
    X_GYRO_CROSS,
    dynamics_buffer_size,
    joint_buffer_size,
)
from robot_state_estimator.estimation.kinematics_kernels import KernelModel, make_work, pack_model
from robot_state_estimator.estimation.model_constants import extract_model_constants

if TYPE_CHECKING:
    from robot_state_estimator.estimation.contact import ContactDetector, ContactForceEstimator
    from robot_state_estimator.estimation.ekf.filter import BaseEkf
    from robot_state_estimator.estimation.joint_input import JointInput
    from robot_state_estimator.estimation.kinematics import LegKinematics

_EMPTY = np.empty(0)


def _pack_tables(
    model: KernelModel, work: FloatArray, dyn: FloatArray, ints: IntArray, floats: FloatArray
) -> tuple[IntArray, FloatArray]:
    """The joint step's two tables (``layout.TAB_*``) of the kinematics' model and work arrays, the dynamics buffer
    and the integer and float tables."""
    ji, fi, jf, ff = model.joint_ints, model.frame_ints, model.joint_floats, model.frame_floats
    header = np.zeros(TAB_HEADER, dtype=np.int64)
    header[TAB_NJ], header[TAB_JI_COLS] = ji.shape
    header[TAB_NF] = fi.shape[0]
    header[TAB_JI] = TAB_HEADER
    header[TAB_FI] = header[TAB_JI] + ji.size
    header[TAB_TI] = header[TAB_FI] + fi.size
    header[TAB_TI_LEN] = ints.size
    header[TAB_JF_COLS], header[TAB_FF_COLS], header[TAB_WORK_COLS] = jf.shape[1], ff.shape[1], work.shape[1]
    header[TAB_JF] = 0
    header[TAB_FF] = jf.size
    header[TAB_WORK] = header[TAB_FF] + ff.size
    header[TAB_DYN] = header[TAB_WORK] + work.size
    header[TAB_DYN_LEN] = dyn.size
    header[TAB_TF] = header[TAB_DYN] + dyn.size
    header[TAB_TF_LEN] = floats.size
    itab = np.concatenate([header, ji.ravel(), fi.ravel(), ints]).astype(np.int64)
    ftab = np.concatenate([jf.ravel(), ff.ravel(), work.ravel(), dyn, floats]).astype(float)
    return itab, ftab


class CompiledJointStep:
    """:class:`~.base.JointStep` by ``kernels.joint_step.prepared_joint_step`` (``kernels.legs.prepare_joints``, then
    ``joint_step``: one call per usual joint sample) and ``kernels.joint_step.joint_step`` (a held sample), called
    through their entry points (resolved by :meth:`warm_up` with the layouts of the real calls). The kinematics and
    dynamics run inside the step, from the constants pinocchio extracted once (``model_constants``,
    ``kinematics_kernels.pack_model``; tested equal to pinocchio to 1e-12).

    The state arguments of the kernels (the filter's buffers, the model, the kinematics', the trigger's and the
    forces' arrays) are bound once, here: their owners change them in place and never replace them.

    Raises:
        ModelError: a joint the compiled kinematics does not support (``extract_model_constants``).
    """

    def __init__(
        self,
        ekf: BaseEkf,
        kin: LegKinematics,
        forces: ContactForceEstimator,
        detector: ContactDetector,
        joint_input: JointInput,
        radii: FloatArray,
        rolling: bool,
        high_nis: float,
    ) -> None:
        self._ekf, self._kin, self._forces, self._detector = ekf, kin, forces, detector
        self._joint_input = joint_input
        constants = extract_model_constants(kin.model, kin.foot_frame_ids)
        model = pack_model(constants)
        es = ekf.settings
        ints = np.array(
            [detector._min_on_ns, detector._min_off_ns, int(rolling), int(es.encoder_velocity_noise > 0.0),
             int(forces.use_full_dynamics), *forces.leg_columns.ravel().tolist()],
            dtype=np.int64,
        )  # fmt: skip
        jv_limits = joint_input.joint_velocity.limits
        floats = np.array(
            [forces.total_mass_kg, *forces.g_world.tolist(), float(es.foot_velocity_noise**2),
             float(es.encoder_velocity_noise**2), float(es.foot_gate_nis), float(jv_limits[JV_MAX_DT]),
             float(jv_limits[JV_TAU]), float(high_nis), ekf.contact_creep_variance, *radii.tolist()]
        )  # fmt: skip
        #: the constant and work arrays in the kernels' two tables (layout.TAB_*; views of them below)
        self._itab, self._ftab = _pack_tables(model, make_work(constants), np.zeros(dynamics_buffer_size(kin.n_joints)),
                                              ints, floats)  # fmt: skip
        self._bind_tables()
        self._noise_settings = es  # the settings the encoder-noise entries were taken from
        self.buffer_size = joint_buffer_size(kin.n_feet, kin.n_joints)
        self._qtau_shape = (3, kin.n_joints)
        #: the state arguments of ``joint_step`` (after the sample's), and of ``prepared_joint_step`` (the joint
        #: input's and the joint velocity estimator's arrays and the kinematics' configuration first)
        self._state = self._state_args(scratch=False)
        self._prepared_state = (*self._input_args(scratch=False), *self._state)
        self.prepared_step: Any = None
        self.step: Any = None

    def _bind_tables(self) -> None:
        """The parts of the tables as the views the Python side uses (``kernels.joint_step.tables``' layout)."""
        ji, fi, ti, jf, ff, work, dyn, tf = jit.python_function(joint_step_kernel.tables)(self._itab, self._ftab)
        self._model = KernelModel(ji, jf, fi, ff)
        self._work, self._dyn, self._ints, self._floats = work, dyn, ti, tf

    def __getstate__(self) -> dict[str, Any]:
        """Copies (``copy.deepcopy``) rebind the views on the copied tables."""
        state = self.__dict__.copy()
        for name in ("_model", "_work", "_dyn", "_ints", "_floats"):
            del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind_tables()

    def _state_args(self, scratch: bool) -> tuple[Any, ...]:
        """The step kernel's state arguments (after the sample's); with ``scratch`` copies of those it changes (the
        filter, the trigger, the held joint velocities, the tables' work arrays)."""
        ekf, kin, det, forces = self._ekf, self._kin, self._detector, self._forces
        x, P, flags, since = ekf._x, ekf._P, det._flags, det._since_ns
        qdot_prev, prev_stamp = forces.qdot_prev, forces.qdot_prev_stamp
        itab, ftab = self._itab, self._ftab
        if scratch:
            x, P, flags, since = x.copy(), P.copy(), flags.copy(), since.copy()
            qdot_prev, prev_stamp, ftab = qdot_prev.copy(), prev_stamp.copy(), ftab.copy()
        return (
            x, P, ekf._c, itab, ftab, kin.X_base_foot, kin.J6_base_foot, flags, since, qdot_prev, prev_stamp,
            forces.force_in_world, forces.wrench_in_foot,
        )  # fmt: skip

    def _input_args(self, scratch: bool) -> tuple[Any, ...]:
        """``prepared_joint_step``'s state arguments before :meth:`_state_args`' (copies with ``scratch``)."""
        jin = self._joint_input
        jv = jin.joint_velocity
        args = (jin.gather, jv._q_prev, jv.qdot, jv.state, self._kin.configuration)
        return tuple(a.copy() for a in args) if scratch else args

    def _follow_noise(self) -> None:
        """The leg noise chosen at an initialisation (the filter's settings) into the step's tables."""
        s = self._ekf.settings
        self._ints[JI_USE_J] = int(s.encoder_velocity_noise > 0.0)
        self._floats[JF_SE2] = float(s.encoder_velocity_noise**2)
        self._floats[JF_SF2] = float(s.foot_velocity_noise**2)
        self._floats[JF_SC2] = self._ekf.contact_creep_variance
        self._noise_settings = s

    def warm_up(self, q_joints: FloatArray) -> None:
        """Resolve the entry points with arguments of the real calls' types and run each once on scratch copies of
        the state they change (the kinematics' and the forces' buffers are written: the caller resets them)."""
        det = self._detector
        state = self._state_args(scratch=True)
        qtau = np.zeros(self._qtau_shape)
        qtau[0] = q_joints
        sample = (qtau, 3, True, det.on_threshold, det.off_threshold, np.empty(self.buffer_size))
        self.step = jit.entry_point(joint_step_kernel.joint_step, *sample, *state)
        self.step(*sample, *state)
        zeros = np.zeros(self._qtau_shape[1])
        inputs = self._input_args(scratch=True)
        inputs[3][:] = (1, 0, 0)  # a previous sample at 0 ns (layout.JV_*): the step to 1 ms below is regular
        prepared = (zeros, _EMPTY, zeros, 0, 1_000_000, det.on_threshold, det.off_threshold,
                    np.empty(self.buffer_size), *inputs, *state)  # fmt: skip
        self.prepared_step = jit.entry_point(joint_step_kernel.prepared_joint_step, *prepared)
        self.prepared_step(*prepared)

    def prepare_and_run(
        self, position: FloatArray, velocity: FloatArray, effort: FloatArray, mode: int, stamp_ns: int
    ) -> tuple[int, FloatArray]:
        if self._ekf.settings is not self._noise_settings:
            self._follow_noise()
        det = self._detector
        buf = np.empty(self.buffer_size)
        result: int = self.prepared_step(position, velocity, effort, mode, stamp_ns, det.on_threshold,
                                         det.off_threshold, buf, *self._prepared_state)  # fmt: skip
        return result, buf

    def run(
        self, qtau: FloatArray, stamp_ns: int, q_joints: FloatArray | None, measured: bool
    ) -> tuple[int, FloatArray]:
        if self._ekf.settings is not self._noise_settings:
            self._follow_noise()
        if q_joints is not None:  # as LegKinematics.update: the configuration holds the positions
            self._kin.configuration[7:] = q_joints
        det = self._detector
        buf = np.empty(self.buffer_size)
        result: int = self.step(qtau, stamp_ns, measured, det.on_threshold, det.off_threshold, buf, *self._state)
        return result, buf

    def part_costs(self, qtau: FloatArray, stamp_ns: int, repeats: int = 2000, batches: int = 5) -> dict[str, float]:
        """The compiled step's parts, each repeated in a compiled loop from the current state (nothing changed):
        us of CPU per repetition, the median of ``batches`` batches (``make bench``'s breakdown of the core step;
        ``kernels/parts.py``, compiled at the first call). Keys: ``propagation`` (an IMU sample's kernel: check,
        propagation, outputs), ``kinematics`` (foot placements and Jacobians, centre-of-mass Jacobian, the bias
        torques: ``g(q)`` or RNEA), ``contact_logic`` (point-foot forces, Schmitt trigger), ``update`` (the stance
        feet's stacked leg update, Joseph form, and the outputs), each less the loop's state restoring.

        Args:
            qtau: (3, nj) a prepared sample (positions, velocities, efforts); stamp_ns: its stamp (ns).
            repeats: repetitions per batch. batches: batches per part.
        """
        from robot_state_estimator.estimation.ekf.backends.kernels import parts

        ekf, kin, det, forces = self._ekf, self._kin, self._detector, self._forces
        m, ti, tf = self._model, self._ints, self._floats
        x0, P0, c = ekf._x.copy(), ekf._P.copy(), ekf._c
        # the update meets the state after the IMU step of the usual sample: no covariance with the readings' noise
        # (the snapshot follows an update, which left one)
        x0_update = x0.copy()
        x0_update[X_GYRO_CROSS : X_GYRO_CROSS + CROSS_ROWS * CROSS_COLS] = 0.0
        x, P = x0.copy(), P0.copy()
        X, J6, dyn = kin.X_base_foot.copy(), kin.J6_base_foot.copy(), self._dyn.copy()
        work = self._work.copy()
        full = bool(ti[JI_FULL])  # with the message's velocities
        qtau = np.ascontiguousarray(qtau, dtype=float)
        g = tf[JF_G : JF_G + 3].copy()
        n_feet = kin.n_feet
        legs_cols = np.ascontiguousarray(ti[JI_LEGS : JI_LEGS + 3 * n_feet].reshape(n_feet, 3))
        force, wrench = forces.force_in_world.copy(), forces.wrench_in_foot.copy()
        flags, since = det._flags.copy(), det._since_ns.copy()
        qdot_prev, prev_stamp = forces.qdot_prev.copy(), forces.qdot_prev_stamp.copy()
        gyro, accel = x0[X_GYRO : X_GYRO + 3].copy(), x0[X_ACCEL : X_ACCEL + 3].copy()
        contacts = det.in_contact.copy()
        clock = ekf._clock.copy()
        radii = tf[JF_RADII : JF_RADII + n_feet].copy()
        parts.repeat_kinematics(1, x, c, m.joint_ints, m.joint_floats, m.frame_ints, m.frame_floats, work, X, J6, dyn,
                                qtau, tf[JF_MASS], g, full, stamp_ns, qdot_prev, prev_stamp)  # fmt: skip
        bias = dyn[6 + 3 * kin.n_joints + 6 : 6 + 3 * kin.n_joints + 6 + kin.n_joints].copy()
        calls: dict[str, Callable[[int], object]] = {
            "copy": lambda n: parts.repeat_copy(n, x, P, x0, P0),
            "propagation": lambda n: parts.repeat_propagation(
                n, x, P, c, x0, P0, clock, ekf._imu_limits, stamp_ns, stamp_ns + 1_000_000, gyro, accel),
            "kinematics": lambda n: parts.repeat_kinematics(
                n, x0, c, m.joint_ints, m.joint_floats, m.frame_ints, m.frame_floats, work, X, J6, dyn, qtau,
                tf[JF_MASS], g, full, stamp_ns, qdot_prev, prev_stamp),
            "contact_logic": lambda n: parts.repeat_contacts(
                n, x0, J6, legs_cols, bias, qtau, X, force, wrench, det.on_threshold, det.off_threshold,
                int(ti[JI_MIN_ON]), int(ti[JI_MIN_OFF]), flags, since, stamp_ns),
            "update": lambda n: parts.repeat_update(
                n, x, P, c, x0_update, P0, contacts, qtau[1], radii, X, J6, bool(ti[JI_ROLLING]), bool(ti[JI_USE_J]),
                float(tf[JF_SF2]), float(tf[JF_SC2]), float(tf[JF_SE2]), float(tf[JF_GATE])),
        }  # fmt: skip
        costs = {}
        for name, call in calls.items():
            call(1)  # compiles
            per_batch = []
            for _ in range(batches):
                t0 = time.process_time()
                call(repeats)
                per_batch.append((time.process_time() - t0) / repeats * 1e6)
            costs[name] = float(np.median(per_batch))
        copy = costs.pop("copy")
        for name in ("propagation", "update"):
            costs[name] = max(costs[name] - copy, 0.0)
        return costs
