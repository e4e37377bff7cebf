"""CUDA conv2d (im2col + tiled matmul, col2im) against the CPU kernel."""

import numpy as np
import pytest
from cuda_checks import TOLERANCE, _compare, check_cuda

from cpsgrad.kernels import dispatch, to_device

RNG = np.random.default_rng(13)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "params"),
    [
        ((2, 3, 4, 4), (2, 3, 3, 3), {}),
        ((1, 4, 5, 4), (4, 2, 3, 2), {"stride": (2, 1), "padding": (1, 1), "groups": 2}),
    ],
)
def test_conv2d_with_bias_matches_cpu(x_shape, w_shape, params):
    args = [RNG.standard_normal(x_shape), RNG.standard_normal(w_shape), RNG.standard_normal(w_shape[0])]
    check_cuda("conv2d", args, params)


def test_conv2d_without_bias_dilated_strided():
    """``db`` is None on both devices; the rest matches the CPU."""
    x, w = RNG.standard_normal((2, 2, 6, 6)), RNG.standard_normal((3, 2, 2, 3))
    params = {"stride": 2, "padding": 1, "dilation": (2, 1)}
    cpu = dispatch("conv2d", x, w)
    expected, cpu_saved = cpu.forward(x, w, **params)
    gpu = dispatch("conv2d", to_device(x), to_device(w))
    assert gpu.device == "cuda"
    y, saved = gpu.forward(to_device(x), to_device(w), **params)
    rtol, atol = TOLERANCE[np.float64]
    _compare("conv2d", y, expected, np.float64, rtol, atol)
    grad = RNG.standard_normal(expected.shape)
    dx, dw, db = gpu.backward(to_device(grad), saved)
    want_dx, want_dw, want_db = cpu.backward(grad, cpu_saved)
    assert db is None and want_db is None
    _compare("conv2d dx", dx, want_dx, np.float64, rtol, atol)
    _compare("conv2d dw", dw, want_dw, np.float64, rtol, atol)


def test_conv2d_float32_depthwise():
    args = [RNG.standard_normal((1, 3, 3, 3)), RNG.standard_normal((3, 1, 3, 3)), RNG.standard_normal(3)]
    check_cuda("conv2d", args, {"padding": 1, "groups": 3}, dtype=np.float32)


def test_conv2d_bad_shapes_name_the_op():
    x, w = to_device(np.zeros((1, 3, 4, 4))), to_device(np.zeros((2, 2, 3, 3)))
    with pytest.raises(ValueError, match="conv2d: .*groups=1"):
        dispatch("conv2d", x, w).forward(x, w)
