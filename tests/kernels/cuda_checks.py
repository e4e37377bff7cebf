"""Shared checker for the CUDA kernel tests: run an op on the device and on the CPU, compare.

Importing this module sets small launch sizes (32-thread blocks, 8-thread row blocks, 4 x 4
matmul tiles) so the tiny test inputs still run several blocks; under the simulator a thread
costs about 100 us. Tests skip when neither a GPU nor the simulator is available.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from cpsgrad.kernels import cuda_available, device_of, dispatch, to_device, to_host

if cuda_available() is None:
    pytest.skip("no CUDA device and NUMBA_ENABLE_CUDASIM is not set", allow_module_level=True)

from cpsgrad.kernels.cuda import jit  # noqa: E402

jit.THREADS, jit.ROW_THREADS, jit.TILE = 32, 8, 4

TOLERANCE = {np.float64: (1e-10, 1e-12), np.float32: (1e-5, 1e-6)}


def check_cuda(op, args, params=None, dtype=np.float64, seed=0):
    """Compare ``op``'s CUDA forward and backward with the CPU entry of the table.

    Float arguments are cast to ``dtype``; every array is moved to the device. Asserts that the
    CUDA entry ran and that every result is a device array of ``dtype``.
    """
    params = params or {}
    host = [a.astype(dtype) if _is_float(a) else a for a in args]
    device = [to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    cpu, gpu = dispatch(op, *host), dispatch(op, *device)
    assert gpu.device == "cuda" and gpu.forward.__module__.startswith("cpsgrad.kernels.cuda."), op
    expected, cpu_saved = cpu.forward(*host, **params)
    result, gpu_saved = gpu.forward(*device, **params)
    rtol, atol = TOLERANCE[dtype]
    _compare(op, result, expected, dtype, rtol, atol)
    grad = np.random.default_rng(seed).standard_normal(np.shape(expected)).astype(dtype)
    expected_adjoints = cpu.backward(grad, cpu_saved)
    adjoints = gpu.backward(to_device(grad), gpu_saved)
    assert len(adjoints) == len(expected_adjoints), op
    for adjoint, wanted in zip(adjoints, expected_adjoints, strict=True):
        _compare(f"{op} adjoint", adjoint, wanted, dtype, rtol, atol)
    return result


def _compare(what, result, expected, dtype, rtol, atol):
    assert device_of(result) == "cuda", f"{what}: got a host result {type(result).__name__}"
    assert result.dtype == dtype, what
    assert tuple(result.shape) == np.shape(expected), what
    assert_allclose(to_host(result), expected, rtol=rtol, atol=atol, err_msg=what)


def _is_float(value):
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"
