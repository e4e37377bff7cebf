"""Derivative rules for numpy's reductions (sum, mean, prod, max/min, var/std, norm, cumsum, ...)
and the matching `np.ndarray` methods.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import rule

# ---- reductions -------------------------------------------------------------------------------


@rule(np.ndarray.sum)
@rule(np.sum)
def sum_(a, axis=None, *, dtype=None, keepdims=False):
    y = np.sum(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.sum_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.mean)
@rule(np.mean)
def mean(a, axis=None, *, dtype=None, keepdims=False):
    y = np.mean(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.mean_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.max)
@rule(np.ndarray.min)
@rule(np.max)
@rule(np.min)
@rule(np.amax)
@rule(np.amin)
def extremum(a, axis=None, *, keepdims=False):
    y = np.max(a, axis, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.extremum_adjoint(y_d, a, y, axis, keepdims)


@rule(np.ndarray.prod)
@rule(np.prod)
def prod(a, axis=None, *, dtype=None, keepdims=False):
    y = np.prod(a, axis, dtype=dtype, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.array_product_adjoint(y_d, a, axis, keepdims)


@rule(np.ndarray.var)
@rule(np.var)
def var(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.var(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.var_adjoint(y_d, a, axis, ddof, keepdims)


@rule(np.ndarray.std)
@rule(np.std)
def std(a, axis=None, *, dtype=None, ddof=0, keepdims=False):
    y = np.std(a, axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    y_d = yield y
    a_d += cpsgrad_runtime.std_adjoint(y_d, a, y, axis, ddof, keepdims)


@rule(np.ndarray.cumsum)
@rule(np.cumsum)
def cumsum(a, axis=None, *, dtype=None):
    y = np.cumsum(a, axis, dtype=dtype)
    y_d = yield y
    a_d += cpsgrad_runtime.cumsum_adjoint(y_d, a, axis)


@rule(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    y = np.linalg.norm(x, ord, axis, keepdims)
    y_d = yield y
    x_d += cpsgrad_runtime.norm_adjoint(y_d, x, y, ord, axis, keepdims)


@rule(np.trace)
def trace(a, offset=0, axis1=0, axis2=1):
    y = np.trace(a, offset, axis1, axis2)
    y_d = yield y
    a_d += cpsgrad_runtime.trace_adjoint(y_d, a, offset, axis1, axis2)
