"""CUDA batch_norm (training and eval) and seeded dropout against the CPU kernels."""

import numpy as np
import pytest
from cuda_checks import TOLERANCE, _compare, check_cuda

from cpsgrad.kernels import dispatch, to_device, to_host

RNG = np.random.default_rng(14)


def check_batch_norm(x_shape, training, dtype):
    channels = x_shape[1]
    host = [
        RNG.standard_normal(x_shape) * 2 + 1,
        RNG.standard_normal(channels),
        RNG.standard_normal(channels),
        RNG.standard_normal(channels),
        RNG.random(channels) + 0.5,
    ]
    host = [a.astype(dtype) for a in host]
    device = [to_device(a) for a in host]
    params = {"training": training, "momentum": 0.2}
    cpu, gpu = dispatch("batch_norm", *host), dispatch("batch_norm", *device)
    assert gpu.device == "cuda" and gpu.forward.__module__ == "cpsgrad.kernels.cuda.normalization"
    expected, cpu_saved = cpu.forward(*host, **params)
    outputs, saved = gpu.forward(*device, **params)
    rtol, atol = TOLERANCE[dtype]
    for name, result, wanted in zip(("y", "running_mean", "running_var"), outputs, expected, strict=True):
        _compare(f"batch_norm {name}", result, wanted, dtype, rtol, atol)
    grad = RNG.standard_normal(x_shape).astype(dtype)
    adjoints = gpu.backward(to_device(grad), saved)
    wanted = cpu.backward(grad, cpu_saved)
    for name, result, want in zip(("x", "gamma", "beta"), adjoints, wanted, strict=True):
        _compare(f"batch_norm adjoint {name}", result, want, dtype, rtol, 10 * atol)


@pytest.mark.parametrize(
    ("x_shape", "training", "dtype"),
    [((5, 3), True, np.float64), ((2, 3, 2, 3), True, np.float64), ((2, 3, 2, 3), False, np.float64),
     ((2, 2, 3, 2), True, np.float32), ((4, 3), False, np.float32)],
)
def test_batch_norm_matches_cpu(x_shape, training, dtype):
    check_batch_norm(x_shape, training, dtype)


def test_batch_norm_training_needs_two_values_a_channel():
    args = [to_device(np.ones(s)) for s in ((1, 2), (2,), (2,), (2,), (2,))]
    with pytest.raises(ValueError, match="batch_norm: training needs more than one"):
        dispatch("batch_norm", *args).forward(*args)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dropout_matches_the_cpu_mask_exactly(dtype):
    x = RNG.standard_normal((4, 9)).astype(dtype)
    result = check_cuda("dropout", [x], {"rate": 0.3, "seed": 7}, dtype=dtype)
    cpu = dispatch("dropout", x).forward(x, rate=0.3, seed=7)[0]
    np.testing.assert_array_equal(to_host(result), cpu)


def test_dropout_eval_rate_zero_and_bad_rate():
    x = to_device(RNG.standard_normal(5))
    kernel = dispatch("dropout", x)
    for params in ({"training": False}, {"rate": 0.0}):
        y, saved = kernel.forward(x, **params)
        assert y is x and kernel.backward(x, saved)[0] is x
    with pytest.raises(ValueError, match="dropout: rate"):
        kernel.forward(x, 1.0)
