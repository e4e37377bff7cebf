"""Device selection and wiring: transfers, mixed-device errors, the CUDA entry running, listing."""

import subprocess
import sys

import numpy as np
import pytest
from cuda_checks import check_cuda

from cpsgrad.kernels import (
    DeviceMismatchError,
    cuda_available,
    describe,
    device_of,
    dispatch,
    to_device,
    to_host,
)
from cpsgrad.kernels.cpu import CATALOG as CPU_CATALOG
from cpsgrad.kernels.cuda import CATALOG as CUDA_CATALOG


def test_cuda_available_names_the_backend():
    assert cuda_available() in ("gpu", "simulator")


def test_to_device_and_back_round_trips_including_0d():
    for value in (np.arange(6.0).reshape(2, 3), np.array(2.5, np.float32)):
        moved = to_device(value)
        assert device_of(moved) == "cuda" and tuple(moved.shape) == value.shape
        back = to_host(moved)
        assert isinstance(back, np.ndarray) and back.dtype == value.dtype
        np.testing.assert_array_equal(back, value)
        assert to_device(moved) is moved and to_host(value) is value


def test_mixed_host_and_device_is_a_type_error_naming_the_op():
    with pytest.raises(TypeError, match="mul: arrays on different devices .*to_device"):
        dispatch("mul", np.ones(3), to_device(np.ones(3)))
    assert issubclass(DeviceMismatchError, TypeError)


def test_the_cuda_entry_runs_and_never_falls_back_to_the_host(monkeypatch):
    import cpsgrad.kernels.cpu.elementwise as cpu_elementwise
    import cpsgrad.kernels.cuda.elementwise as cuda_elementwise

    calls = []
    original = cuda_elementwise._unary

    def counted(name, *args):
        calls.append(name)
        return original(name, *args)

    monkeypatch.setattr(cuda_elementwise, "_unary", counted)
    monkeypatch.setattr(cpu_elementwise, "_apply", _host_fallback)
    x = to_device(np.linspace(-1, 1, 5))
    result, _ = dispatch("tanh", x).forward(x)
    assert calls == ["tanh"] and device_of(result) == "cuda"
    np.testing.assert_allclose(to_host(result), np.tanh(np.linspace(-1, 1, 5)))


def _host_fallback(*args):
    raise AssertionError("the CPU kernel ran for device arrays")


def test_results_of_a_chain_stay_on_the_device():
    x = to_device(np.linspace(-2, 2, 12).reshape(3, 4))
    y, _ = dispatch("exp", x).forward(x)
    z, _ = dispatch("sum", y).forward(y, axis=1)
    w, _ = dispatch("matmul", y, y).forward(z.reshape(1, 3), y)
    assert all(device_of(v) == "cuda" for v in (y, z, w))


def test_check_cuda_detects_a_host_result(monkeypatch):
    import cpsgrad.kernels.cuda.elementwise as cuda_elementwise

    monkeypatch.setattr(cuda_elementwise, "_unary", lambda name, x, *p: (to_host(x), None))
    with pytest.raises(AssertionError, match="host result"):
        check_cuda("neg", [np.ones(3)])


def test_describe_lists_cuda_for_every_op_in_the_cuda_catalog():
    devices = {line.split()[0]: line.split()[1:-2] for line in describe()}
    for op in CPU_CATALOG:
        assert devices[op] == (["cpu", "cuda"] if op in CUDA_CATALOG else ["cpu"]), op


def test_import_stays_free_of_numba():
    code = "import sys, cpsgrad.kernels; print('numba' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
