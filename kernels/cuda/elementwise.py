"""Unary elementwise ops on the device: one forward and one backward kernel for all of them.

The kernels run the formulas of ``cpsgrad.kernels.formulas.catalog.UNARY`` (compiled as device
functions), choosing an op's by its catalog code, a launch argument; so a new op needs only its
catalog entry. Each forward saves what its backward reads (input or output, as the entry says)
and the JAX kink conventions of the CPU kernels hold: both devices run the same formulas.
"""

import math

from numba import cuda

from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, flat
from cpsgrad.kernels.cuda.jit import compile_formulas, device, kernel, launch
from cpsgrad.kernels.cuda.select import selector
from cpsgrad.kernels.formulas import elementwise
from cpsgrad.kernels.formulas.catalog import UNARY, UNARY_BY_NAME

CODE = {entry.name: entry.code for entry in UNARY}
"""Op name -> the catalog code the kernels take."""

_formulas = compile_formulas(elementwise)


@device
def _no_op(*args):
    return math.nan


_value = selector(UNARY, lambda entry: getattr(_formulas, entry.value.__name__), _no_op)
_adjoint = selector(UNARY, lambda entry: getattr(_formulas, entry.adjoint.__name__), _no_op)


@kernel("void({f}[::1], {f}[::1], int64, float64, float64)")
def _forward(x, out, code, p, q):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = _value(code, x[i], p, q)


@kernel("void({f}[::1], {f}[::1], {f}[::1], int64, float64, float64)")
def _backward(g, saved, out, code, p, q):
    for i in range(cuda.grid(1), saved.size, cuda.gridsize(1)):
        out[i] = _adjoint(code, g[i], saved[i], p, q)


def _unary(name, x, p=0.0, q=0.0):
    x = contiguous(name, x)
    y = empty(x.shape, x.dtype)
    launch(_forward, x.size, flat(x), flat(y), CODE[name], p, q)
    return y, (name, y if UNARY_BY_NAME[name].saves_output else x, p, q)


def _unary_backward(grad, saved):
    name, value, p, q = saved
    grad = adjoint(name, grad, value.shape, value.dtype)
    out = empty(value.shape, value.dtype)
    launch(_backward, value.size, flat(grad), flat(value), flat(out), CODE[name], p, q)
    return (out,)


def _define(entry):
    def forward(x, *args, **kwargs):
        return _unary(entry.name, x, *entry.params(*args, **kwargs))

    forward.__name__ = forward.__qualname__ = f"{entry.name}_forward"
    forward.__doc__ = f"{entry.name} on the device; returns ``(y, saved)``."
    return forward


for _entry in UNARY:
    globals()[f"{_entry.name}_forward"] = _define(_entry)
    globals()[f"{_entry.name}_backward"] = _unary_backward


def backward_from(name, grad, saved):
    """``name``'s backward from the array its forward saves (the output for the entries that
    save it, the input otherwise), for callers that did not keep the forward's residuals."""
    return _unary_backward(grad, (name, saved, 0.0, 0.0))[0]
