"""Derivative rules for numpy's unary ufuncs (exp, log, sqrt, sin, tanh, abs, ...), and `chain` and
`elementwise_adjoint`, which their backwards share (see this package's docstring for the conventions).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import math

import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.operators import abs_adjoint, array_sign
from cpsgrad.rules.registry import rule
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast
from cpsgrad.runtime.elementwise import array_divide

_ndarray = np.ndarray

# ---- unary ufuncs -----------------------------------------------------------------------------


@rule(np.exp)
def exp(x):
    y = np.exp(x)
    y_d = yield y
    x_d += chain(y_d, y, x)


@rule(np.exp2)
def exp2(x):
    y = np.exp2(x)
    y_d = yield y
    x_d += chain(y_d, y * math.log(2.0), x)


@rule(np.expm1)
def expm1(x):
    y = np.expm1(x)
    y_d = yield y
    x_d += chain(y_d, y + 1.0, x)


@rule(np.log)
def log(x):
    y = np.log(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, x), x)


@rule(np.log2)
def log2(x):
    y = np.log2(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0 / math.log(2.0), x), x)


@rule(np.log10)
def log10(x):
    y = np.log10(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0 / math.log(10.0), x), x)


@rule(np.log1p)
def log1p(x):
    y = np.log1p(x)
    y_d = yield y
    x_d += elementwise_adjoint("log1p", y_d, x, x)


@rule(np.sqrt)
def sqrt(x):
    y = np.sqrt(x)
    y_d = yield y
    x_d += elementwise_adjoint("sqrt", y_d, y, x)


@rule(np.cbrt)
def cbrt(x):
    y = np.cbrt(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, 3.0 * y * y), x)


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


@rule(np.sin)
def sin(x):
    y = np.sin(x)
    y_d = yield y
    x_d += elementwise_adjoint("sin", y_d, x, x)


@rule(np.cos)
def cos(x):
    y = np.cos(x)
    y_d = yield y
    x_d += elementwise_adjoint("cos", y_d, x, x)


@rule(np.tan)
def tan(x):
    y = np.tan(x)
    y_d = yield y
    x_d += chain(y_d, 1.0 + y * y, x)


@rule(np.arcsin)
def arcsin(x):
    y = np.arcsin(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, np.sqrt(1.0 - x * x)), x)


@rule(np.arccos)
def arccos(x):
    y = np.arccos(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(-1.0, np.sqrt(1.0 - x * x)), x)


@rule(np.arctan)
def arctan(x):
    y = np.arctan(x)
    y_d = yield y
    x_d += chain(y_d, 1.0 / (1.0 + x * x), x)


@rule(np.sinh)
def sinh(x):
    y = np.sinh(x)
    y_d = yield y
    x_d += chain(y_d, np.cosh(x), x)


@rule(np.cosh)
def cosh(x):
    y = np.cosh(x)
    y_d = yield y
    x_d += chain(y_d, np.sinh(x), x)


@rule(np.tanh)
def tanh(x):
    y = np.tanh(x)
    y_d = yield y
    x_d += elementwise_adjoint("tanh", y_d, y, x)


@rule(np.arcsinh)
def arcsinh(x):
    y = np.arcsinh(x)
    y_d = yield y
    x_d += chain(y_d, 1.0 / np.sqrt(x * x + 1.0), x)


@rule(np.arccosh)
def arccosh(x):
    y = np.arccosh(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, np.sqrt(x * x - 1.0)), x)


@rule(np.arctanh)
def arctanh(x):
    y = np.arctanh(x)
    y_d = yield y
    x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, 1.0 - x * x), x)


@rule(np.degrees)
@rule(np.rad2deg)
def degrees(x):
    y = np.degrees(x)
    y_d = yield y
    x_d += chain(y_d, 180.0 / math.pi, x)


@rule(np.radians)
@rule(np.deg2rad)
def radians(x):
    y = np.radians(x)
    y_d = yield y
    x_d += chain(y_d, math.pi / 180.0, x)


@rule(np.abs)
def abs_(x):
    y = np.abs(x)
    y_d = yield y
    x_d += abs_adjoint(y_d, x)


@rule(np.fabs)
def fabs(x):
    y = np.fabs(x)
    y_d = yield y
    x_d += chain(y_d, array_sign(x), x)


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
# output for tanh and sqrt, the input otherwise).
_SLOPES = {
    "tanh": lambda y: 1.0 - y * y,
    "sqrt": lambda y: array_divide(0.5, y),
    "sin": np.cos,
    "cos": lambda x: -np.sin(x),
    "square": lambda x: 2.0 * x,
    "log1p": lambda x: array_divide(1.0, x + 1.0),
}


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
