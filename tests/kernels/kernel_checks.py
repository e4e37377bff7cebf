"""Shared checkers for the kernel tests: naive references, finite differences, float32 vs float64."""

import numpy as np
from numpy.testing import assert_allclose

from cpsgrad.kernels import dispatch

STEP = 1e-6


def numeric_adjoint(function, args, position, grad_out):
    """Central differences of ``sum(function(*args) * grad_out)`` with respect to ``args[position]``."""
    point = np.array(args[position], dtype=np.float64)
    result = np.zeros_like(point)
    for index in np.ndindex(point.shape):
        values = []
        for sign in (1, -1):
            moved = point.copy()
            moved[index] += sign * STEP
            trial = list(args)
            trial[position] = moved
            values.append(np.sum(np.asarray(function(*trial)) * grad_out))
        result[index] = (values[0] - values[1]) / (2 * STEP)
    return result


def check_op(op, args, params=None, reference=None, wrt=None, seed=0, rtol=1e-5, atol=1e-6):
    """Check one op on float64 ``args``: forward against ``reference``, the float32 forward
    against float64, and the backward against central finite differences.

    ``wrt`` lists the positions of the differentiable arguments (default: every float array).
    """
    params = params or {}
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    kernel = dispatch(op, *args)

    def forward(*inputs):
        return kernel.forward(*inputs, **params)[0]

    y, saved = kernel.forward(*args, **params)
    if reference is not None:
        assert_allclose(y, reference(*args, **params), rtol=1e-10, atol=1e-12, err_msg=op)
    single = [a.astype(np.float32) if _is_float(a) else a for a in args]
    y32 = dispatch(op, *single).forward(*single, **params)[0]
    assert np.result_type(y32) == np.float32, op
    assert_allclose(y32, y, rtol=rtol, atol=atol, err_msg=f"{op} float32")
    grad_out = np.random.default_rng(seed).standard_normal(np.shape(y))
    adjoints = kernel.backward(grad_out, saved)
    assert len(adjoints) == len(wrt), op
    for adjoint, position in zip(adjoints, wrt, strict=True):
        assert np.shape(adjoint) == np.shape(args[position]), (op, position)
        assert np.result_type(adjoint) == np.float64, (op, position)
        expected = numeric_adjoint(forward, args, position, grad_out)
        assert_allclose(adjoint, expected, rtol=1e-5, atol=1e-6, err_msg=f"{op} adjoint {position}")
    return y


def _is_float(value):
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"
