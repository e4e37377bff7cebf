"""The simulator fix of kernels/cuda/simulator.py: one static shared array a block, under any
thread interleaving (numba-cuda's own allocation could give two threads two arrays)."""

import sys
import threading
import time

import numpy as np
import pytest
from cuda_checks import check_cuda

from cpsgrad.kernels import cuda_available

if cuda_available() != "simulator":
    pytest.skip("checks numba's CUDA simulator", allow_module_level=True)

from numba.cuda.simulator import kernelapi  # noqa: E402

from cpsgrad.kernels.cuda import simulator  # noqa: E402


def test_threads_reaching_one_line_together_share_one_array(monkeypatch):
    """A slow allocation opens the window the original check-then-allocate left open."""
    simulator.make_shared_arrays_atomic()
    real_empty = np.empty

    def slow_empty(*args, **kwargs):
        time.sleep(0.01)
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(simulator.np, "empty", slow_empty)
    shared = kernelapi.FakeCUDAShared(0)
    start = threading.Barrier(8)
    arrays = [None] * 8

    def allocate(index):
        start.wait()
        arrays[index] = shared.array(16, np.float64)  # one line: one key

    threads = [threading.Thread(target=allocate, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(array is arrays[0] for array in arrays)
    assert arrays[0].shape == (16,) and arrays[0].dtype == np.float64


def test_two_lines_get_two_arrays():
    shared = kernelapi.FakeCUDAShared(0)
    first = shared.array(4, np.float64)
    second = shared.array(4, np.float64)
    assert first is not second


def test_block_reductions_hold_under_frequent_thread_switches():
    """The CI failure: softmax cross-entropy's row reductions with a switch every microsecond."""
    logits = np.random.default_rng(3).standard_normal((4, 3))
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            check_cuda("softmax_cross_entropy", [logits, np.array([0, 2, 1, 2])])
    finally:
        sys.setswitchinterval(before)
