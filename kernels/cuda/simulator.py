"""A fix for numba-cuda's CUDA simulator that the block reductions need (numba-cuda 0.30.4).

The simulator runs a block's threads as Python threads and hands out a static
``cuda.shared.array`` by the calling source line: the first thread to reach the line allocates
it, the others look it up. The look-up and the allocation are not atomic, so when the
interpreter switches threads between them, two threads of one block allocate two different
"shared" arrays; a block reduction then combines half the block's values, and a softmax or a
cross-entropy returns a wrong number (seen in CI on tests/test_device_programs.py about once in
a few hundred launches; on a GPU the array is one). ``make_shared_arrays_atomic`` replaces the
simulator's method by one that allocates under a lock, with the same key (file and line of the
caller), so every thread of a block gets the same array. It changes nothing off the simulator.
"""

import sys
import threading

import numpy as np

_LOCK = threading.Lock()
_PATCHED = "cpsgrad_atomic"


def make_shared_arrays_atomic() -> None:
    """Patch the simulator's static shared-array allocation to be atomic (idempotent)."""
    from numba.core import types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    shared = kernelapi.FakeCUDAShared
    if getattr(shared.array, _PATCHED, False):
        return
    dynamic = shared.array

    def array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:
            return dynamic(self, shape, dtype, alignment)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        with _LOCK:
            found = self._allocations.get(key)
            if found is None:
                found = self._allocations[key] = np.empty(shape, dtype)
        return found

    setattr(array, _PATCHED, True)
    shared.array = array
