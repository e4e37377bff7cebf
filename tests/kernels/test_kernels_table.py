"""The dispatch table: lookup by device, dtype errors, registration, listing, cheap import."""

import subprocess
import sys

import numpy as np
import pytest

from cpsgrad import kernels
from cpsgrad.kernels import dispatch, register


class FakeDeviceArray:
    """Just enough of a device array for the table to see the CUDA interface."""

    __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (0, False), "version": 3}
    dtype = np.dtype("float32")


def test_dispatch_picks_the_cpu_kernel_for_numpy_arrays():
    kernel = dispatch("tanh", np.zeros(3))
    assert kernel.device == "cpu" and kernel.op == "tanh"
    assert callable(kernel)


def test_unknown_op_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="no_such_op"):
        dispatch("no_such_op", np.zeros(1))


@pytest.mark.parametrize("dtype", ["int64", "float16", "complex128", "bool"])
def test_unsupported_dtype_is_a_type_error_naming_op_and_dtype(dtype):
    with pytest.raises(TypeError, match=f"conv2d: unsupported dtype {dtype}"):
        dispatch("conv2d", np.zeros((1, 1, 3, 3), dtype), np.zeros((1, 1, 1, 1)))


def test_index_arguments_must_be_integers():
    with pytest.raises(TypeError, match="softmax_cross_entropy: argument 1 must be an integer"):
        dispatch("softmax_cross_entropy", np.zeros((2, 3)), np.zeros(2))
    assert dispatch("softmax_cross_entropy", np.zeros((2, 3)), np.zeros(2, np.int32))


def test_no_array_argument_is_a_type_error():
    with pytest.raises(TypeError, match="add: expected at least one array"):
        dispatch("add", 1.0, 2.0)


def test_mixed_devices_are_rejected():
    with pytest.raises(ValueError, match="different devices"):
        dispatch("add", np.zeros(2, np.float32), FakeDeviceArray())


def test_device_arrays_need_a_cuda_entry():
    assert kernels.device_of(FakeDeviceArray()) == "cuda"
    with pytest.raises(NotImplementedError, match="conv2d: no cuda kernel"):
        dispatch("conv2d", FakeDeviceArray(), FakeDeviceArray())


def test_register_adds_a_device_entry_and_listing_shows_it():
    def forward(x):
        return x, ()

    def backward(grad, saved):
        return (grad,)

    register("identity_for_test", "cuda", forward, backward, ["float32"])
    kernel = dispatch("identity_for_test", FakeDeviceArray())
    assert kernel.forward is forward and kernel.backward is backward
    assert ("identity_for_test", ("cuda",), ("float32",)) in kernels.ops()
    with pytest.raises(ValueError, match="unknown device"):
        register("identity_for_test", "tpu", forward, backward, ["float32"])


def test_describe_lists_every_builtin_op_once_with_devices_and_dtypes():
    lines = kernels.describe()
    conv = [line for line in lines if line.split()[0] == "conv2d"]
    assert conv and conv[0].split() == ["conv2d", "cpu", "float32", "float64"]
    names = [line.split()[0] for line in lines]
    assert len(names) == len(set(names))
    for op in ["relu", "where", "logsumexp", "matmul", "embedding", "batch_norm", "gru_cell"]:
        assert op in names


def test_every_catalog_entry_resolves_to_a_forward_and_backward():
    for name, devices, _ in kernels.ops():
        if "cpu" in devices and name != "identity_for_test":
            arrays = [np.zeros(1)] + ([np.zeros(1, np.int64)] if name in {"gather", "embedding",
                "softmax_cross_entropy"} else [])
            if name == "where":
                arrays = [np.zeros(1, bool), np.zeros(1)]
            kernel = dispatch(name, *arrays)
            assert callable(kernel.forward) and callable(kernel.backward), name


def test_import_loads_no_kernel_module():
    code = (
        "import sys, cpsgrad.kernels, cpsgrad.kernels.nn; "
        "print(sorted(m for m in sys.modules if m.startswith('cpsgrad.kernels.cpu.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
