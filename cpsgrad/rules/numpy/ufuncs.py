"""Derivative rules for numpy's unary ufuncs (exp, log, sqrt, sin, tanh, abs, ...), and `chain` and
`elementwise_adjoint`, which their backwards share (see this package's docstring for the conventions).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math  # noqa: F401  (read by the templates made from cpsgrad/rules/elementary.py)

import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules import elementary  # noqa: F401  (declares the shared templates)
from cpsgrad.rules.module_templates import ELEMENTARY, numpy_slope, register
from cpsgrad.rules.operators import abs_adjoint, array_sign  # noqa: F401  (array_sign: np.fabs's made template)
from cpsgrad.rules.registry import rule
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

_ndarray = np.ndarray

# ---- unary ufuncs (those math shares, exp log sqrt sin arcsin tanh ..., are made at the end) ---


@rule(np.square)
def square(x):
    y = np.square(x)
    y_d = yield y
    x_d += elementwise_adjoint("square", y_d, x, x)


@rule(np.reciprocal)
def reciprocal(x):
    y = np.reciprocal(x)
    y_d = yield y
    x_d += chain(y_d, -y * y, x)


@rule(np.abs)
def abs_(x):
    y = np.abs(x)
    y_d = yield y
    x_d += abs_adjoint(y_d, x)


@rule(np.negative)
def negative(x):
    y = np.negative(x)
    y_d = yield y
    x_d += chain(y_d, -1.0, x)


@rule(np.positive)
def positive(x):
    y = np.positive(x)
    y_d = yield y
    x_d += cpsgrad_runtime.unbroadcast(y_d, x)


# ---- helpers ----------------------------------------------------------------------------------


def chain(adjoint, slope, x):
    """The adjoint of `x` in an elementwise `y = f(x, ...)` whose derivative in `x` is `slope`.

    `adjoint * slope`, summed back to `x`'s shape and dtype; the symbolic zero stays zero even
    where `slope` is infinite.
    """
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(adjoint * slope, x)


# The numpy slope of each op whose backward has a fused kernel, from what the kernel saves (the
# output for tanh and sqrt, the input otherwise): the shared ones' from their shared template.
class _Slopes(dict):
    def __missing__(self, op: str):
        (entry,) = [entry for entry in ELEMENTARY if entry.kernel == op]
        self[op] = slope = eval(numpy_slope(entry), globals())  # noqa: S307 - `lambda s: <the shared slope>`
        return slope


_SLOPES = _Slopes(square=lambda x: 2.0 * x)


def elementwise_adjoint(op: str, adjoint, saved, x):
    """The adjoint of `x` in `y = np.<op>(x)`, from `saved` (`y` for tanh and sqrt, `x` for sin,
    cos, square, log1p): numpy below the size from which the fused kernel was measured faster
    (`cpsgrad.kernels.thresholds`), the kernel from there on; Python numbers never reach it."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    if (
        type(saved) is _ndarray
        and type(adjoint) is _ndarray
        and adjoint.shape == saved.shape
        and adjoint.dtype is saved.dtype
    ):
        threshold = _KERNEL_MIN_SIZE.get(op, -1)
        if threshold == -1:
            from cpsgrad.kernels import thresholds

            threshold = _KERNEL_MIN_SIZE[op] = thresholds.min_size(op, "backward")
        if threshold is not None and saved.size >= threshold and saved.dtype in _KERNEL_DTYPES:
            from cpsgrad.kernels import dispatch

            return unbroadcast(dispatch(op, adjoint, saved).backward(adjoint, (saved,))[0], x)
        if type(x) is _ndarray and x.shape == saved.shape and x.dtype is saved.dtype:
            return adjoint * _SLOPES[op](saved)  # nothing to unbroadcast
    if type(saved) is DeviceArray:  # the fused CUDA backward at every size
        return _device.elementwise_adjoint(op, adjoint, saved, x)
    return unbroadcast(adjoint * _SLOPES[op](saved), x)


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


_KERNEL_MIN_SIZE: dict[str, int | None] = {}


# ---- the ufuncs math shares (exp, log, sqrt, sin, arcsin, tanh, ...): cpsgrad/rules/elementary.py

register([entry for entry in ELEMENTARY if entry.arity == 1], globals(), "numpy")
