"""Slopes of the operators and `math` functions at their kinks and poles, for Python numbers and
numpy values alike (`divide`, `power_slope`, `log_for_power`, `sign`, `digamma`).
"""

from __future__ import annotations

import math

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime.elementwise import (
    array_divide,
    array_log_for_power,
    array_power_slope,
    array_sign,
)


def divide(numerator, denominator):
    """`numerator / denominator` with IEEE results at 0 (inf, or nan for 0/0) instead of raising,
    for derivatives that are singular where the function is not (sqrt'(0) = inf, as JAX)."""
    if _numpy(numerator) or _numpy(denominator):
        return array_divide(numerator, denominator)
    try:
        return numerator / denominator
    except ZeroDivisionError:
        if numerator == 0 or numerator != numerator:
            return math.nan
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def power_slope(base, exponent):
    """d(b**e)/db = e * b**(e-1); 0 where e == 0, and +-inf at b == 0 for e < 1 (as JAX)."""
    if _numpy(base) or _numpy(exponent):
        return array_power_slope(base, exponent)
    if exponent == 0:
        return 0.0
    if base == 0 and exponent < 1:
        return math.inf if exponent > 0 else -math.inf
    try:
        return exponent * base ** (exponent - 1)
    except OverflowError:  # |base| tiny and exponent - 1 negative, or |base| huge: infinite slope
        negative = base < 0 and float(exponent - 1).is_integer() and int(exponent - 1) % 2 == 1
        return math.copysign(math.inf, exponent) * (-1.0 if negative else 1.0)


def log_for_power(base) -> float:
    """d(b**e)/de = log(b) * b**e; 0 at b == 0 (the limit for e > 0), NaN for b < 0."""
    if _numpy(base):
        return array_log_for_power(base)
    if base > 0:
        return math.log(base)
    return 0.0 if base == 0 else math.nan


def sign(x) -> float:
    """The derivative of abs: 1.0 at x >= 0, -1.0 below (abs'(0) = 1, as JAX), NaN at NaN."""
    if _numpy(x):
        return array_sign(x)
    if x >= 0:
        return 1.0
    return -1.0 if x < 0 else math.nan


def _numpy(value) -> bool:
    return isinstance(value, _ARRAY_TYPES)


_ARRAY_TYPES = (np.ndarray, np.generic, DeviceArray)


def digamma(x) -> float:
    """The derivative of lgamma (scipy's digamma, imported on first use)."""
    from scipy.special import digamma as scipy_digamma

    return float(scipy_digamma(x))
