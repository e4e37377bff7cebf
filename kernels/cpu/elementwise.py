"""Unary elementwise ops: one fused numba loop a direction over the flattened array.

The loops are built from ``cpsgrad.kernels.formulas.catalog.UNARY``: each entry's value and
adjoint formulas, compiled with ``inline="always"``, become the body of one forward and one
backward loop, so a new op needs only its catalog entry. Each forward saves what its backward
reads (the input or, where the entry says so, the output), so the backward is one more pass
with no temporaries. Kinks follow JAX (see ``formulas.elementwise``).
"""

import inspect

import numpy as np

from cpsgrad.kernels.cpu.jit import compile_formulas, serial
from cpsgrad.kernels.cpu.shapes import flat
from cpsgrad.kernels.formulas import elementwise
from cpsgrad.kernels.formulas.catalog import UNARY

_formulas = compile_formulas(elementwise)

LOOPS: dict[str, object] = {}
"""Loop name (``<op>_loop``, ``<op>_adjoint_loop``) -> its numba dispatcher, for inspection."""


def _apply(kernel, x, *params):
    source = flat(x)
    out = np.empty_like(source)
    kernel(source, out, *params)
    return out.reshape(np.shape(x))


def _adjoint(kernel, grad, saved, *params):
    if np.shape(grad) != saved.shape:
        raise ValueError(f"adjoint shape {np.shape(grad)} does not match output {saved.shape}")
    source = flat(saved)
    out = np.empty_like(source)
    kernel(flat(grad, source.dtype), source, out, *params)
    return (out.reshape(saved.shape),)


def _forward_loop(name, formula):
    def loop(x, out, p, q):
        for i in range(x.size):
            out[i] = formula(x[i], p, q)

    loop.__qualname__ = loop.__name__ = f"{name}_loop"
    LOOPS[loop.__name__] = serial(loop)
    return LOOPS[loop.__name__]


def _backward_loop(name, formula):
    def loop(g, saved, out, p, q):
        for i in range(saved.size):
            out[i] = formula(g[i], saved[i], p, q)

    loop.__qualname__ = loop.__name__ = f"{name}_adjoint_loop"
    LOOPS[loop.__name__] = serial(loop)
    return LOOPS[loop.__name__]


def _define(entry):
    """``<op>_forward`` and ``<op>_backward`` of one catalog entry.

    The residuals are ``(saved array, *the parameters given)``, as callers that build them by
    hand expect (``(x,)`` for an op without parameters); the backward takes the entry's
    defaults for parameters left out."""
    forward_loop = _forward_loop(entry.name, getattr(_formulas, entry.value.__name__))
    backward_loop = _backward_loop(entry.name, getattr(_formulas, entry.adjoint.__name__))
    takes_params = bool(inspect.signature(entry.params).parameters)

    def forward(x, *args, **kwargs):
        params = entry.params(*args, **kwargs)
        y = _apply(forward_loop, x, *params)
        saved = y if entry.saves_output else x
        return y, ((saved, *params) if takes_params else (saved,))

    def backward(grad, saved):
        value, *given = saved
        params = given if len(given) == 2 else (*given, *entry.params()[len(given) :])
        return _adjoint(backward_loop, grad, value, *params)

    forward.__name__ = forward.__qualname__ = f"{entry.name}_forward"
    backward.__name__ = backward.__qualname__ = f"{entry.name}_backward"
    forward.__doc__ = f"{entry.name} of a numpy array; returns ``(y, saved)``."
    backward.__doc__ = f"The adjoint of {entry.name}'s input, as a 1-tuple."
    return forward, backward


for _entry in UNARY:
    globals()[f"{_entry.name}_forward"], globals()[f"{_entry.name}_backward"] = _define(_entry)
