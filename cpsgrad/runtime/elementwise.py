"""Division in derivatives: `quotient` (which generated code calls where the forward divided
with numpy's meaning) and `divide`/`array_divide`, IEEE results at 0 instead of an error, for the
rules of the operators, `math` and numpy (cpsgrad/rules/) and `math.dist`'s adjoint here.
"""

from __future__ import annotations

import math

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray

_ndarray = np.ndarray
ARRAY_TYPES = (np.ndarray, np.generic, DeviceArray)  # what is not a Python number here


def quotient(numerator, denominator):
    """`numerator / denominator` in a derivative, where the forward divided with numpy's meaning
    (`np.float64(1.0) / 0.0` is inf): a Python zero denominator gives inf or nan as numpy does,
    not ZeroDivisionError. Between Python numbers only, the transform writes a plain `/`."""
    number = type(denominator) is float or type(denominator) is int
    if number and denominator == 0 and isinstance(numerator, (float, int, complex)):
        return (np.complex128 if type(numerator) is complex else np.float64)(numerator) / denominator
    return numerator / denominator  # numpy values (and a DeviceArray) divide by zero as numpy does


def array_divide(numerator, denominator):
    """`numerator / denominator` elementwise with IEEE results (inf, nan) and no warnings."""
    if type(denominator) is np.float64 and denominator != 0.0 and type(numerator) is float:
        return numerator / denominator  # no warning to silence: skip the error-state switch
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(numerator, denominator)


def divide(numerator, denominator):
    """`numerator / denominator` with IEEE results at 0 (inf, or nan for 0/0) instead of raising,
    for derivatives that are singular where the function is not (sqrt'(0) = inf, as JAX)."""
    if isinstance(numerator, ARRAY_TYPES) or isinstance(denominator, ARRAY_TYPES):
        return array_divide(numerator, denominator)
    try:
        return numerator / denominator
    except ZeroDivisionError:
        if numerator == 0 or numerator != numerator:
            return math.nan
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
