"""Broadcasting binary ops and ``where``.

Built from ``cpsgrad.kernels.formulas.catalog.BINARY``. Forwards are the entries' numpy ufuncs
(already one pass, with numpy's broadcasting and promotion); the backwards of div, pow, maximum
and minimum (every entry with ``fused_cpu_backward``) are numba loops over the entry's adjoints
formula that produce both adjoints in one pass over the broadcast shape, then sum broadcast axes
away. add, sub and mul keep numpy backwards. Ties in maximum and minimum give half the adjoint
to each side (JAX's convention).
"""

import numpy as np

from cpsgrad.kernels.cpu.jit import compile_formulas, serial
from cpsgrad.kernels.cpu.shapes import flat, unbroadcast
from cpsgrad.kernels.formulas import binary
from cpsgrad.kernels.formulas.catalog import BINARY


def _call(op, ufunc, a, b):
    try:
        return ufunc(a, b)
    except ValueError:
        raise ValueError(
            f"{op}: operands could not be broadcast together with shapes "
            f"{np.shape(a)} {np.shape(b)}"
        ) from None


def _meta(a):
    return np.shape(a), np.result_type(a)


def _full(a, shape, dtype):
    return flat(np.broadcast_to(a, shape), dtype)


def _fused(kernel, grad, a, b, y):
    """Run a two-adjoint kernel over the broadcast shape; return adjoints shaped like a and b."""
    shape, dtype = y.shape, y.dtype
    if np.shape(grad) != shape:
        raise ValueError(f"adjoint shape {np.shape(grad)} does not match output {shape}")
    grad_a = np.empty(y.size, dtype)
    grad_b = np.empty(y.size, dtype)
    kernel(flat(grad, dtype), _full(a, shape, dtype), _full(b, shape, dtype), flat(y), grad_a, grad_b)
    return (
        unbroadcast(grad_a.reshape(shape), np.shape(a), np.result_type(a)),
        unbroadcast(grad_b.reshape(shape), np.shape(b), np.result_type(b)),
    )


_formulas = compile_formulas(binary)

LOOPS: dict[str, object] = {}
"""Loop name (``<op>_adjoints_loop``) -> its numba dispatcher, for inspection."""


def _fused_loop(name, adjoints):
    def loop(g, a, b, y, grad_a, grad_b):
        for i in range(y.size):
            grad_a[i], grad_b[i] = adjoints(g[i], a[i], b[i], y[i])

    loop.__qualname__ = loop.__name__ = f"{name}_adjoints_loop"
    LOOPS[loop.__name__] = serial(loop)
    return LOOPS[loop.__name__]


def _define(entry):
    """``<op>_forward`` and ``<op>_backward`` of a catalog entry with a fused CPU backward."""
    ufunc = getattr(np, entry.ufunc)
    loop = _fused_loop(entry.name, getattr(_formulas, entry.adjoints.__name__))

    def forward(a, b):
        y = _call(entry.name, ufunc, a, b)
        return y, (a, b, y)

    def backward(grad, saved):
        return _fused(loop, grad, *saved)

    forward.__name__ = forward.__qualname__ = f"{entry.name}_forward"
    backward.__name__ = backward.__qualname__ = f"{entry.name}_backward"
    forward.__doc__ = f"numpy.{entry.ufunc} with its residuals; returns ``(y, saved)``."
    backward.__doc__ = f"The adjoints of {entry.name}'s operands, reduced to their shapes."
    return forward, backward


for _entry in BINARY:
    if _entry.fused_cpu_backward:
        globals()[f"{_entry.name}_forward"], globals()[f"{_entry.name}_backward"] = _define(_entry)


# add, sub and mul (``fused_cpu_backward=False`` in the catalog): the adjoints are the output's
# adjoint itself or one product with the other operand, so numpy does them with no pass to fuse.


def add_forward(a, b):
    return _call("add", np.add, a, b), (_meta(a), _meta(b))


def add_backward(grad, saved):
    (shape_a, dtype_a), (shape_b, dtype_b) = saved
    return unbroadcast(grad, shape_a, dtype_a), unbroadcast(grad, shape_b, dtype_b)


def sub_forward(a, b):
    return _call("sub", np.subtract, a, b), (_meta(a), _meta(b))


def sub_backward(grad, saved):
    (shape_a, dtype_a), (shape_b, dtype_b) = saved
    return unbroadcast(grad, shape_a, dtype_a), unbroadcast(-grad, shape_b, dtype_b)


def mul_forward(a, b):
    return _call("mul", np.multiply, a, b), (a, b)


def mul_backward(grad, saved):
    a, b = saved
    return (
        unbroadcast(grad * b, np.shape(a), np.result_type(a)),
        unbroadcast(grad * a, np.shape(b), np.result_type(b)),
    )


def where_forward(condition, a, b):
    try:
        y = np.where(condition, a, b)
    except ValueError:
        shapes = " ".join(str(np.shape(v)) for v in (condition, a, b))
        raise ValueError(f"where: operands could not be broadcast together with shapes {shapes}") from None
    return y, (condition, _meta(a), _meta(b))


def where_backward(grad, saved):
    """Adjoints of ``a`` and ``b`` (the condition is not differentiable)."""
    condition, (shape_a, dtype_a), (shape_b, dtype_b) = saved
    zero = np.zeros((), grad.dtype)
    return (
        unbroadcast(np.where(condition, grad, zero), shape_a, dtype_a),
        unbroadcast(np.where(condition, zero, grad), shape_b, dtype_b),
    )
