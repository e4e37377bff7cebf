"""CUDA max, average and global average pooling against the CPU kernels."""

import numpy as np
import pytest
from cuda_checks import check_cuda

from cpsgrad.kernels import dispatch, to_device, to_host

RNG = np.random.default_rng(12)
X = RNG.standard_normal((2, 2, 5, 6))


@pytest.mark.parametrize(
    "params",
    [
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 1, "padding": 1},
        {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 0)},
    ],
)
def test_max_and_avg_pool(params):
    check_cuda("max_pool2d", [X], params)
    check_cuda("avg_pool2d", [X], params)


def test_pooling_float32_global_and_ties():
    check_cuda("max_pool2d", [X], {"kernel_size": 3, "stride": 2, "padding": 1}, dtype=np.float32)
    check_cuda("avg_pool2d", [X], {"kernel_size": 2, "stride": 1}, dtype=np.float32)
    check_cuda("global_avg_pool2d", [X])
    check_cuda("global_avg_pool2d", [X], dtype=np.float32)
    # Ties and overlapping windows: the adjoint goes to the first maximum of each window.
    check_cuda("max_pool2d", [np.round(X[:1, :1])], {"kernel_size": 3, "stride": 1})


def test_max_pool_propagates_nan_and_rejects_big_padding():
    host = X[:1, :1].copy()
    host[0, 0, 1, 1] = np.nan
    x = to_device(host)
    kernel = dispatch("max_pool2d", x)
    y, _ = kernel.forward(x, 2)
    np.testing.assert_array_equal(np.isnan(to_host(y)), np.isnan(kernel_cpu(host)))
    with pytest.raises(ValueError, match="max_pool2d: .*padding"):
        kernel.forward(x, 2, padding=2)


def kernel_cpu(host):
    return dispatch("max_pool2d", host).forward(host, 2)[0]
