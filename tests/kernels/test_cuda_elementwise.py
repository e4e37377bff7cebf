"""CUDA unary elementwise ops against the CPU kernels, float32 and float64."""

import numpy as np
import pytest
from cuda_checks import check_cuda

RNG = np.random.default_rng(3)
X = RNG.standard_normal(40) * 2
X[:3] = [0.0, 1.0, -1.0]
POSITIVE = np.abs(X) + 0.1

CASES = [
    ("neg", X, {}),
    ("abs", X, {}),
    ("exp", X, {}),
    ("log", POSITIVE, {}),
    ("log1p", POSITIVE, {}),
    ("sqrt", POSITIVE, {}),
    ("square", X, {}),
    ("sin", X, {}),
    ("cos", X, {}),
    ("tanh", X, {}),
    ("sigmoid", X * 10, {}),
    ("relu", X, {}),
    ("leaky_relu", X, {"negative_slope": 0.2}),
    ("hardtanh", X, {}),
    ("clip", X.reshape(5, 8), {"low": -1.0, "high": 0.5}),
    ("softplus", X * 10, {}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("op", "x", "params"), CASES, ids=[case[0] for case in CASES])
def test_unary_matches_cpu(op, x, params, dtype):
    check_cuda(op, [x], params, dtype)
