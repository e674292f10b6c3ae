"""The numerics backends of the estimator (:mod:`.base`: the one seam where the numpy reference and the numba
kernels are chosen).

``select_backend()`` is called once where an object is built (the filter, the leg kinematics, the contact detectors
and force estimator, the joint velocity estimator; the estimator passes its own to all of them): the numba kernels
when numba is importable and ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT`` is not set
(:func:`robot_state_estimator.estimation.jit.use_kernels`), else the numpy reference.
"""

from __future__ import annotations

from robot_state_estimator.estimation import jit
from robot_state_estimator.estimation.ekf.backends.base import Backend, JointStep
from robot_state_estimator.estimation.ekf.backends.numpy_backend import NUMPY_BACKEND, NumpyBackend

__all__ = ["NUMPY_BACKEND", "Backend", "JointStep", "NumpyBackend", "compiled_backend", "select_backend"]


def compiled_backend() -> Backend:
    """The numba backend.

    Raises:
        RuntimeError: numba is not importable.
    """
    if not jit.numba_available():
        raise RuntimeError("the compiled backend needs numba, which is not importable")
    from robot_state_estimator.estimation.ekf.backends.numba_backend import NUMBA_BACKEND

    return NUMBA_BACKEND


def select_backend(compiled: bool | None = None) -> Backend:
    """The backend to build an object with.

    Args:
        compiled: True: the numba kernels (:func:`compiled_backend`); False: the numpy reference; None: the numba
            kernels when :func:`robot_state_estimator.estimation.jit.use_kernels` (numba importable, not disabled by
            ``ROBOT_STATE_ESTIMATOR_DISABLE_JIT``), else the reference.

    Raises:
        RuntimeError: ``compiled`` is True and numba is not importable.
    """
    if compiled is None:
        compiled = jit.use_kernels()
    return compiled_backend() if compiled else NUMPY_BACKEND
