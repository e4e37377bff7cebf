"""The helpers of elementwise rules: slopes with IEEE results at kinks and poles, `chain` (an
adjoint times a slope, unbroadcast), and the CPU/CUDA kernel path for big float arrays
(`elementwise_adjoint`).
"""

from __future__ import annotations

import math

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

_ndarray = np.ndarray


def quotient(numerator, denominator):
    """`numerator / denominator` in a derivative, where the forward divided with numpy's meaning
    (`np.float64(1.0) / 0.0` is inf): a Python zero denominator gives inf or nan as numpy does,
    not ZeroDivisionError. Between Python numbers only, the transform writes a plain `/`."""
    if (type(denominator) is float or type(denominator) is int) and denominator == 0 and isinstance(numerator, (float, int, complex)):
        return (np.complex128 if type(numerator) is complex else np.float64)(numerator) / denominator
    return numerator / denominator  # numpy values (and a DeviceArray) divide by zero as numpy does


def array_divide(numerator, denominator):
    """`numerator / denominator` elementwise with IEEE results (inf, nan) and no warnings."""
    if type(denominator) is np.float64 and denominator != 0.0 and type(numerator) is float:
        return numerator / denominator  # no warning to silence: skip the error-state switch
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(numerator, denominator)


def array_power_slope(base, exponent):
    """d(b**e)/db elementwise: e * b**(e-1), 0 where e == 0, +-inf at b == 0 for 0 < e < 1."""
    if type(base) is DeviceArray or type(exponent) is DeviceArray:
        return _device.array_power_slope(base, exponent)
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = exponent * np.power(base, np.asarray(exponent, dtype=np.result_type(base, exponent, 1.0)) - 1)
        slope = np.where(np.asarray(exponent) == 0, 0.0, slope)
    return slope.astype(np.result_type(base, exponent, 1.0), copy=False)


def array_log_for_power(base):
    """d(b**e)/de / b**e elementwise: log(b), 0 at b == 0, NaN for b < 0."""
    if type(base) is DeviceArray:
        return _device.array_log_for_power(base)
    base = np.asarray(base)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(base == 0, 0.0, np.log(np.where(base == 0, 1.0, base))).astype(np.result_type(base, 1.0), copy=False)


def array_sign(x):
    """abs' elementwise: 1 at x >= 0 (abs'(0) = 1, as JAX), -1 below, NaN at NaN."""
    if type(x) is DeviceArray:
        return _device.array_sign(x)
    x = np.asarray(x)
    return np.where(x >= 0, 1.0, np.where(x < 0, -1.0, np.nan)).astype(np.result_type(x, 1.0), copy=False)


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


_KERNEL_MIN_SIZE: dict[str, int | None] = {}


def elementwise_adjoint(op: str, adjoint, saved, x):
    """The adjoint of `x` in `y = np.<op>(x)`, from `saved` (`y` for tanh and sqrt, `x` for sin,
    cos, square, log1p): numpy below the size from which the fused kernel was measured faster
    (`cpsgrad.kernels.thresholds`), the kernel from there on; Python numbers never reach it."""
    if type(adjoint) is float and adjoint == 0.0:
        return 0.0
    if type(saved) is _ndarray and type(adjoint) is _ndarray and adjoint.shape == saved.shape and adjoint.dtype is saved.dtype:
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


def select(adjoint, condition, x):
    """The adjoint of `x` where `condition` holds and exactly zero elsewhere (`np.where`)."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.where(condition, adjoint, 0.0), x)


def tie_share(x, other, result):
    """`np.maximum`/`np.minimum` backward: 1 where `x` was chosen, 0.5 on a tie (as JAX)."""
    if type(result) is DeviceArray:
        return _device.tie_share(x, other, result)
    return np.equal(x, result) * np.where(np.equal(other, result), 0.5, 1.0)


def clip_adjoint(adjoint, x, low, high, part: str):
    """`np.clip` backward for `part` ("x", "low" or "high"), as JAX's `minimum(maximum(x, low), high)`:
    a value at a bound shares the adjoint equally with that bound."""
    if is_zero(adjoint):
        return 0.0
    lower = x if low is None else np.maximum(x, low)
    result = lower if high is None else np.minimum(lower, high)
    if part == "high":
        return unbroadcast(adjoint * tie_share(high, lower, result), high)
    through = adjoint if high is None else adjoint * tie_share(lower, high, result)
    if part == "low":
        return unbroadcast(through * tie_share(low, x, lower), low)
    return unbroadcast(through if low is None else through * tie_share(x, low, lower), x)


def exponent_slope(base, result):
    """d(b**e)/de elementwise from the result b**e: log(b) * b**e, 0 at b == 0 with e > 0, NaN
    for b < 0 (as JAX), without warnings."""
    if type(result) is DeviceArray:
        return _device.array_log_for_power(base) * result
    with np.errstate(invalid="ignore", over="ignore"):
        return array_log_for_power(base) * result


def hypot_slope(x, z):
    """d hypot(x, y) / dx = x / z; 0.5 at the origin and 0 at infinity (as JAX)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(z == 0, 0.5, np.where(np.isinf(z), 0.0, np.divide(x, z)))


def logaddexp_share(x, result, base=math.e):
    """d logaddexp(x, y) / dx = exp(x - result) (`base` 2 for logaddexp2); NaN where both
    inputs are -inf (as JAX), without warnings."""
    with np.errstate(invalid="ignore"):
        return np.exp2(x - result) if base == 2 else np.exp(x - result)
