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
            outputs = function(*trial)
            if isinstance(outputs, tuple):
                values.append(sum(np.sum(o * g) for o, g in zip(outputs, grad_out, strict=True)))
            else:
                values.append(np.sum(np.asarray(outputs) * grad_out))
        result[index] = (values[0] - values[1]) / (2 * STEP)
    return result


def check_op(op, args, params=None, reference=None, wrt=None, output=None, atol=1e-6):
    """Check one op on float64 ``args``: forward against ``reference``, the float32 forward
    against float64 (rtol 1e-5, ``atol``), and the backward against central finite differences.

    ``wrt`` lists the positions of the differentiable arguments (default: every float array).
    For an op with several outputs, ``output`` picks the one the backward takes the adjoint of;
    without it the backward takes a tuple of adjoints, one per output.
    """
    params = params or {}
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    kernel = dispatch(op, *args)

    def forward(*inputs):
        y = kernel.forward(*inputs, **params)[0]
        return y if output is None else y[output]

    outputs, saved = kernel.forward(*args, **params)
    single = [a.astype(np.float32) if _is_float(a) else a for a in args]
    outputs32 = dispatch(op, *single).forward(*single, **params)[0]
    several = isinstance(outputs, tuple)
    expected = reference(*args, **params) if reference is not None else outputs
    for y, y32, wanted in zip(*(_as_tuple(v) for v in (outputs, outputs32, expected)), strict=True):
        assert_allclose(y, wanted, rtol=1e-10, atol=1e-12, err_msg=op)
        assert np.result_type(y32) == np.float32, op
        assert_allclose(y32, y, rtol=1e-5, atol=atol, err_msg=f"{op} float32")
    rng = np.random.default_rng(0)
    y = outputs[output] if output is not None else outputs
    grad_out = tuple(rng.standard_normal(np.shape(v)) for v in y) if several and output is None else (
        rng.standard_normal(np.shape(y)))
    adjoints = [a for a in kernel.backward(grad_out, saved) if a is not None]
    assert len(adjoints) == len(wrt), op
    for adjoint, position in zip(adjoints, wrt, strict=True):
        assert np.shape(adjoint) == np.shape(args[position]), (op, position)
        assert np.result_type(adjoint) == np.float64, (op, position)
        expected = numeric_adjoint(forward, args, position, grad_out)
        assert_allclose(adjoint, expected, rtol=1e-5, atol=1e-6, err_msg=f"{op} adjoint {position}")
    # the float32 backward against the float64 one just checked against finite differences
    kernel32 = dispatch(op, *single)
    saved32 = kernel32.forward(*single, **params)[1]
    grad_out32 = (
        tuple(g.astype(np.float32) for g in grad_out) if isinstance(grad_out, tuple) else grad_out.astype(np.float32)
    )
    adjoints32 = [a for a in kernel32.backward(grad_out32, saved32) if a is not None]
    for adjoint32, adjoint, position in zip(adjoints32, adjoints, wrt, strict=True):
        assert np.result_type(adjoint32) == np.float32, (op, position, "float32 backward")
        scale = float(np.max(np.abs(adjoint))) if np.size(adjoint) else 1.0
        assert_allclose(adjoint32, adjoint, rtol=2e-4, atol=1e-4 * max(scale, 1.0),
                        err_msg=f"{op} float32 adjoint {position}")
    return outputs


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def _is_float(value):
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"
