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


def _forward_loop(name, formula, constants):
    """The forward loop of one entry: over ``(x, out, p, q)``, or over ``(x, out)`` with the
    parameters ``constants`` frozen in (an op without parameters calls as cheaply as before)."""
    if constants is None:

        def loop(x, out, p, q):
            for i in range(x.size):
                out[i] = formula(x[i], p, q)
    else:
        p0, q0 = constants

        def loop(x, out):
            for i in range(x.size):
                out[i] = formula(x[i], p0, q0)

    loop.__qualname__ = loop.__name__ = f"{name}_loop"
    LOOPS[loop.__name__] = serial(loop)
    return LOOPS[loop.__name__]


def _backward_loop(name, formula, constants):
    """The backward loop of one entry, with its parameters as ``_forward_loop``'s."""
    if constants is None:

        def loop(g, saved, out, p, q):
            for i in range(saved.size):
                out[i] = formula(g[i], saved[i], p, q)
    else:
        p0, q0 = constants

        def loop(g, saved, out):
            for i in range(saved.size):
                out[i] = formula(g[i], saved[i], p0, q0)

    loop.__qualname__ = loop.__name__ = f"{name}_adjoint_loop"
    LOOPS[loop.__name__] = serial(loop)
    return LOOPS[loop.__name__]


def _define(entry):
    """``<op>_forward`` and ``<op>_backward`` of one catalog entry.

    The residuals are ``(saved array, *the parameters given)``, as callers that build them by
    hand expect: ``(x,)`` for an op without parameters, ``(x, slope)`` for leaky_relu; the
    backward takes the entry's defaults for parameters left out."""
    taken = len(inspect.signature(entry.params).parameters)
    constants = None if taken else entry.params()
    forward_loop = _forward_loop(entry.name, getattr(_formulas, entry.value.__name__), constants)
    backward_loop = _backward_loop(entry.name, getattr(_formulas, entry.adjoint.__name__), constants)

    if constants is not None:

        def forward(x):
            y = _apply(forward_loop, x)
            return y, (y if entry.saves_output else x,)

        def backward(grad, saved):
            return _adjoint(backward_loop, grad, saved[0])
    else:

        def forward(x, *args, **kwargs):
            params = entry.params(*args, **kwargs)
            y = _apply(forward_loop, x, *params)
            return y, (y if entry.saves_output else x, *params[:taken])

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
