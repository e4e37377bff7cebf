"""The elementwise op catalog (``cpsgrad.kernels.formulas.catalog``): every entry has a CPU and a
CUDA kernel, and both agree with a numpy reference of the value and the derivative on random
inputs (CUDA under the simulator, or on a GPU). A new catalog entry fails here until its numpy
reference is added below."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from cpsgrad.kernels import cpu, cuda, cuda_available, lookup, to_device, to_host
from cpsgrad.kernels.formulas.catalog import BINARY, UNARY

RNG = np.random.default_rng(11)
WIDE = RNG.standard_normal(40) * 2
POSITIVE = np.abs(RNG.standard_normal(40)) + 0.1


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# op -> (input, params, value, derivative); inputs avoid the kinks, where conventions decide.
UNARY_REFERENCE = {
    "neg": (WIDE, {}, np.negative, lambda x: -np.ones_like(x)),
    "abs": (WIDE, {}, np.abs, np.sign),
    "exp": (WIDE, {}, np.exp, np.exp),
    "log": (POSITIVE, {}, np.log, lambda x: 1 / x),
    "log1p": (POSITIVE, {}, np.log1p, lambda x: 1 / (1 + x)),
    "sqrt": (POSITIVE, {}, np.sqrt, lambda x: 0.5 / np.sqrt(x)),
    "square": (WIDE, {}, np.square, lambda x: 2 * x),
    "sin": (WIDE, {}, np.sin, np.cos),
    "cos": (WIDE, {}, np.cos, lambda x: -np.sin(x)),
    "tanh": (WIDE, {}, np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "sigmoid": (WIDE * 5, {}, _sigmoid, lambda x: _sigmoid(x) * (1 - _sigmoid(x))),
    "relu": (WIDE, {}, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
    "leaky_relu": (
        WIDE, {"negative_slope": 0.2}, lambda x: np.where(x >= 0, x, 0.2 * x), lambda x: np.where(x >= 0, 1.0, 0.2)
    ),
    "hardtanh": (WIDE, {}, lambda x: np.clip(x, -1, 1), lambda x: (np.abs(x) < 1) * 1.0),
    "clip": (
        WIDE, {"low": -0.5, "high": 0.7}, lambda x: np.clip(x, -0.5, 0.7), lambda x: ((x > -0.5) & (x < 0.7)) * 1.0
    ),
    "softplus": (WIDE * 5, {}, lambda x: np.logaddexp(x, 0), _sigmoid),
    "silu": (WIDE * 5, {}, lambda x: x * _sigmoid(x), lambda x: _sigmoid(x) * (1 + x * (1 - _sigmoid(x)))),
}

# op -> (a, b, value, (d/da, d/db)); maximum and minimum inputs have no ties.
A, B = WIDE.reshape(5, 8), RNG.standard_normal((5, 8)) * 2
BINARY_REFERENCE = {
    "add": (A, B, np.add, lambda a, b: (np.ones_like(a), np.ones_like(b))),
    "sub": (A, B, np.subtract, lambda a, b: (np.ones_like(a), -np.ones_like(b))),
    "mul": (A, B, np.multiply, lambda a, b: (b, a)),
    "div": (A, B, np.divide, lambda a, b: (1 / b, -a / b**2)),
    "pow": (POSITIVE.reshape(5, 8), B, np.power, lambda a, b: (b * a ** (b - 1), a**b * np.log(a))),
    "maximum": (A, B, np.maximum, lambda a, b: ((a > b) * 1.0, (a < b) * 1.0)),
    "minimum": (A, B, np.minimum, lambda a, b: ((a < b) * 1.0, (a > b) * 1.0)),
}

DEVICES = ["cpu", "cuda"]
TOLERANCE = {"rtol": 1e-12, "atol": 1e-14}


def _needs(device):
    if device == "cuda" and cuda_available() is None:
        pytest.skip("no CUDA device and NUMBA_ENABLE_CUDASIM is not set")


def _moved(device, array):
    return to_device(array) if device == "cuda" else array


def test_every_catalog_op_has_a_reference_here_and_codes_are_positions():
    assert sorted(UNARY_REFERENCE) == sorted(entry.name for entry in UNARY)
    assert sorted(BINARY_REFERENCE) == sorted(entry.name for entry in BINARY)
    for entries in (UNARY, BINARY):
        assert [entry.code for entry in entries] == list(range(len(entries)))


@pytest.mark.parametrize("entry", UNARY + BINARY, ids=lambda entry: entry.name)
def test_every_catalog_op_has_a_cpu_and_a_cuda_kernel(entry):
    for device, catalog in (("cpu", cpu.CATALOG), ("cuda", cuda.CATALOG)):
        assert entry.name in catalog, (entry.name, device)
        kernel = lookup(entry.name, device)
        assert kernel.forward.__module__ == f"cpsgrad.kernels.{device}.{catalog[entry.name][0]}"
        assert callable(kernel.backward)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("entry", UNARY, ids=lambda entry: entry.name)
def test_unary_kernels_match_the_numpy_reference(entry, device):
    _needs(device)
    x, params, value, derivative = UNARY_REFERENCE[entry.name]
    kernel = lookup(entry.name, device)
    y, saved = kernel.forward(_moved(device, x), **params)
    assert_allclose(to_host(y), value(x), **TOLERANCE, err_msg=f"{entry.name} on {device}")
    grad = RNG.standard_normal(x.shape)
    (adjoint,) = kernel.backward(_moved(device, grad), saved)
    assert_allclose(to_host(adjoint), grad * derivative(x), **TOLERANCE, err_msg=f"{entry.name}' on {device}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("entry", BINARY, ids=lambda entry: entry.name)
def test_binary_kernels_match_the_numpy_reference(entry, device):
    _needs(device)
    a, b, value, derivatives = BINARY_REFERENCE[entry.name]
    kernel = lookup(entry.name, device)
    y, saved = kernel.forward(_moved(device, a), _moved(device, b))
    assert_allclose(to_host(y), value(a, b), **TOLERANCE, err_msg=f"{entry.name} on {device}")
    grad = RNG.standard_normal(a.shape)
    adjoints = kernel.backward(_moved(device, grad), saved)
    for adjoint, derivative in zip(adjoints, derivatives(a, b), strict=True):
        assert_allclose(to_host(adjoint), grad * derivative, **TOLERANCE, err_msg=f"{entry.name}' on {device}")


def test_the_cpu_cache_key_follows_the_formula_sources(monkeypatch):
    """numba's cache watches only a loop's own file; an edited formula must change the key."""
    from numba.core.registry import cpu_target

    from cpsgrad.kernels.cpu import jit

    loop = jit.serial(lambda x: x)
    codegen = cpu_target.target_context.codegen()
    before = loop._cache._index_key((), codegen)
    monkeypatch.setattr(jit, "FORMULA_DIGEST", "edited")
    assert loop._cache._index_key((), codegen) != before


def test_catalog_loops_have_their_own_cache_files():
    """The CPU loops are closures built per entry; each names its own cache file."""
    from cpsgrad.kernels.cpu import binary, elementwise

    loops = [*elementwise.LOOPS.values(), *binary.LOOPS.values()]
    names = [loop.py_func.__qualname__ for loop in loops]
    fused = sum(entry.fused_cpu_backward for entry in BINARY)
    assert len(names) == 2 * len(UNARY) + fused and len(set(names)) == len(names)
    assert all(type(loop._cache).__name__ == "_FormulaAwareCache" for loop in loops)
