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


@pytest.fixture(autouse=True)
def _table_restored(monkeypatch):
    """Ops a test registers (`*_for_test`) leave the global table with it: later tests (in any
    file) may assume every op has a CPU entry."""
    from cpsgrad.kernels import table

    monkeypatch.setattr(table, "_table", {op: dict(devices) for op, devices in table._table.items()})
    monkeypatch.setattr(table, "_fast", dict(table._fast))
    monkeypatch.setattr(table, "_wrapped", dict(table._wrapped))


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


def _register_cpu_only(op):
    """A CPU-only op (which built-in ops have CUDA entries changes as the CUDA layer grows)."""
    register(op, "cpu", lambda x: (x, ()), lambda grad, saved: (grad,), ["float32", "float64"])


def test_device_arrays_need_a_cuda_entry():
    assert kernels.device_of(FakeDeviceArray()) == "cuda"
    _register_cpu_only("cpu_only_for_test")
    with pytest.raises(NotImplementedError, match="cpu_only_for_test: no cuda kernel"):
        dispatch("cpu_only_for_test", FakeDeviceArray(), FakeDeviceArray())


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
    assert conv and conv[0].split()[0:2] == ["conv2d", "cpu"]
    assert conv[0].split()[-2:] == ["float32", "float64"]
    names = [line.split()[0] for line in lines]
    assert len(names) == len(set(names))
    for op in ["relu", "where", "logsumexp", "matmul", "embedding", "batch_norm", "gru_cell"]:
        assert op in names


def test_every_catalog_entry_resolves_to_a_forward_and_backward():
    for name, devices, _ in kernels.ops():
        if "cpu" in devices and not name.endswith("_for_test"):
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


# ---- the fast path and the kept kernel: the same answers as the general path --------------------


def test_repeated_dispatch_returns_the_same_kernel():
    x = np.zeros(3)
    first = dispatch("tanh", x)
    assert dispatch("tanh", x) is first
    assert dispatch("tanh", np.zeros(2, np.float32)) is first


def test_fast_path_still_rejects_bad_dtypes_after_a_good_call():
    dispatch("conv2d", np.zeros((1, 1, 3, 3)), np.zeros((1, 1, 1, 1)))  # now cached
    with pytest.raises(TypeError, match="conv2d: unsupported dtype int64"):
        dispatch("conv2d", np.zeros((1, 1, 3, 3), np.int64), np.zeros((1, 1, 1, 1)))
    with pytest.raises(TypeError, match="conv2d: unsupported dtype float16"):
        dispatch("conv2d", np.zeros((1, 1, 3, 3)), np.zeros((1, 1, 1, 1), np.float16))
    dispatch("softmax_cross_entropy", np.zeros((2, 3)), np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="softmax_cross_entropy: argument 1 must be an integer"):
        dispatch("softmax_cross_entropy", np.zeros((2, 3)), np.zeros(2))
    with pytest.raises(TypeError, match="softmax_cross_entropy: unsupported dtype int64"):
        dispatch("softmax_cross_entropy", np.zeros((2, 3), np.int64), np.zeros(2, np.int64))


def test_fast_path_still_rejects_mixed_devices_and_no_array():
    dispatch("add", np.zeros(2, np.float32), np.zeros(2, np.float32))  # now cached
    with pytest.raises(ValueError, match="different devices"):
        dispatch("add", np.zeros(2, np.float32), FakeDeviceArray())
    with pytest.raises(ValueError, match="different devices"):
        dispatch("add", FakeDeviceArray(), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="add: expected at least one array"):
        dispatch("add", 1.0, 2.0)
    with pytest.raises(TypeError, match="add: expected at least one array"):
        dispatch("add")


def test_scalars_and_none_are_skipped_on_the_fast_path_too():
    kernel = dispatch("add", np.zeros(2), np.zeros(2))
    assert dispatch("add", np.zeros(2), 2.0) is kernel
    assert dispatch("add", 3, np.zeros(2), None, True) is kernel


def test_numpy_scalars_and_subclasses_take_the_general_path():
    kernel = dispatch("mul", np.zeros(2), np.zeros(2))
    assert dispatch("mul", np.zeros(2), np.float64(2.0)) is kernel
    with pytest.raises(TypeError, match="mul: unsupported dtype int64"):
        dispatch("mul", np.zeros(2), np.int64(2))
    assert dispatch("mul", np.zeros(2).view(np.recarray)) is kernel  # an ndarray subclass
    with pytest.raises(TypeError, match="mul: unsupported dtype >f8"):
        dispatch("mul", np.zeros(2, ">f8"))  # a non-native byte order is not float64


def test_register_replaces_a_cached_cpu_kernel():
    def forward(x):
        return x, ()

    def backward(grad, saved):
        return (grad,)

    register("cached_for_test", "cpu", forward, backward, ["float64"])
    first = dispatch("cached_for_test", np.zeros(1))
    assert first.forward is forward
    with pytest.raises(TypeError, match="unsupported dtype float32"):
        dispatch("cached_for_test", np.zeros(1, np.float32))

    def other(x):
        return -x, ()

    register("cached_for_test", "cpu", other, backward, ["float32"], index_args=[1])
    second = dispatch("cached_for_test", np.zeros(1, np.float32), np.zeros(1, np.int8))
    assert second.forward is other and second is not first
    with pytest.raises(TypeError, match="unsupported dtype float64"):
        dispatch("cached_for_test", np.zeros(1))
    with pytest.raises(TypeError, match="argument 1 must be an integer"):
        dispatch("cached_for_test", np.zeros(1, np.float32), np.zeros(1, np.float32))


def test_lookup_gives_the_dispatched_kernel_without_arrays():
    kernel = kernels.lookup("sigmoid")
    assert kernel is dispatch("sigmoid", np.zeros(2)) and kernel.device == "cpu"
    x = np.linspace(-2, 2, 5)
    y, saved = kernel.forward(x)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x)))
    (dx,) = kernel.backward(np.ones_like(x), saved)
    np.testing.assert_allclose(dx, y * (1 - y))
    assert kernels.lookup("matmul", "cpu").forward(np.eye(2), np.ones((2, 1)))[0].shape == (2, 1)


def test_lookup_errors():
    with pytest.raises(KeyError, match="no_such_op"):
        kernels.lookup("no_such_op")
    with pytest.raises(KeyError, match="unknown device"):
        kernels.lookup("tanh", "tpu")
    _register_cpu_only("cpu_only_for_test")
    with pytest.raises(NotImplementedError, match="cpu_only_for_test: no cuda kernel"):
        kernels.lookup("cpu_only_for_test", "cuda")


def test_lookup_on_cuda_does_not_fill_the_cpu_fast_path():
    from cpsgrad.kernels import table

    def forward(x):
        return x, ()

    def backward(grad, saved):
        return (grad,)

    register("cuda_only_for_test", "cuda", forward, backward, ["float32"])
    assert kernels.lookup("cuda_only_for_test", "cuda").device == "cuda"
    assert "cuda_only_for_test" not in table._fast
    with pytest.raises(NotImplementedError, match="no cpu kernel"):
        dispatch("cuda_only_for_test", np.zeros(1, np.float32))


# ---- size thresholds ------------------------------------------------------------------------------


def test_thresholds_are_exposed_and_consistent():
    from cpsgrad.kernels import thresholds

    names = {name for name, _, _ in kernels.ops()}
    for (op, phase), group in thresholds.GROUPS.items():
        assert op in names and phase in thresholds.PHASES, (op, phase)
        assert group in thresholds.MIN_SIZE, group
    for group, size in thresholds.MIN_SIZE.items():
        assert size is None or (isinstance(size, int) and size >= 0), group
    assert thresholds.use_kernel("softmax_cross_entropy", 1, "forward")
    assert thresholds.use_kernel("conv2d", 1)  # an op without a threshold always uses its kernel
    backward = thresholds.MIN_SIZE["elementwise_backward"]
    if backward is not None:
        assert not thresholds.use_kernel("tanh", backward - 1, "backward")
        assert thresholds.use_kernel("tanh", backward, "backward")
    with pytest.raises(ValueError, match="phase"):
        thresholds.use_kernel("tanh", 10, "sideways")
    assert thresholds.min_size("conv2d") == 0
    assert thresholds.min_size("exp", "backward") is None
    assert not thresholds.use_kernel("exp", 10**9, "backward")
    assert isinstance(thresholds.summary(), str)
