"""Derivative rules for arrays made from values: `np.array`/`np.asarray`, copies and casts, `np.full`,
`np.linspace`, `np.arange`, and the results that carry no gradient (`np.zeros_like`, `np.argmax`,
`np.sign`, comparisons: integers, booleans, shapes, piecewise constants).

The transform drops `cpsgrad_runtime.unbroadcast` from rules whose arguments are all Python
numbers, so the rules here that can build an array from numbers go through
`array_adjoint` instead.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.numpy.ufuncs import chain
from cpsgrad.rules.registry import not_differentiable, rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import is_complex, unbroadcast

# ---- arrays from values, copies and casts -----------------------------------------------------


@rule(np.array)
def array(object, dtype=None, *, copy=True, order="K", ndmin=0):
    y = np.array(object, dtype, copy=copy, order=order, ndmin=ndmin)
    y_d = yield y
    object_d += array_adjoint(y_d, object, y)


@rule(np.asarray)
def asarray(a, dtype=None, order=None):
    y = np.asarray(a, dtype, order)
    y_d = yield y
    a_d += array_adjoint(y_d, a, y)


@rule(np.copy)
@rule(np.ndarray.copy)
def copy(a, order="K"):
    y = np.copy(a, order)
    y_d = yield y
    a_d += array_adjoint(y_d, a, y)


@rule(np.ndarray.astype)
def astype(a, dtype, *, order="K", casting="unsafe", subok=True, copy=True):
    y = a.astype(dtype, order=order, casting=casting, subok=subok, copy=copy)
    y_d = yield y
    a_d += array_adjoint(y_d, a, y)


@rule(np.float64)
@rule(np.float32)
def float_scalar(x):
    y = np.float64(x)
    y_d = yield y
    x_d += array_adjoint(y_d, x, y)


@rule(np.ndarray.item)
def item(a, index=None):
    y = a.item(index)
    y_d = yield y
    a_d += cpsgrad_runtime.item_adjoint(y_d, a, index)


@rule(np.ndarray.item)
def item_at(a, first, second, third=None, fourth=None, fifth=None, sixth=None):
    y = a.item(first, second, third, fourth, fifth, sixth)
    y_d = yield y
    a_d += cpsgrad_runtime.item_adjoint(y_d, a, (first, second, third, fourth, fifth, sixth)[: np.ndim(a)])


@rule(np.full)
def full(shape, fill_value, dtype=None):
    y = np.full(shape, fill_value, dtype)
    y_d = yield y
    fill_value_d += array_adjoint(y_d, fill_value, y)


@rule(np.full_like)
def full_like(a, fill_value, dtype=None):
    y = np.full_like(a, fill_value, dtype)
    y_d = yield y
    fill_value_d += array_adjoint(y_d, fill_value, y)


@rule(np.linspace)
def linspace(start, stop, num=50, endpoint=True, *, dtype=None, axis=0):
    y = np.linspace(start, stop, num, endpoint, dtype=dtype, axis=axis)
    y_d = yield y
    start_d += linspace_adjoint(y_d, start, stop, num, endpoint, axis, "start")
    stop_d += linspace_adjoint(y_d, start, stop, num, endpoint, axis, "stop")


@rule(np.arange)
def arange(start, stop, step=1, *, dtype=None):
    y = np.arange(start, stop, step, dtype=dtype)
    y_d = yield y
    start_d += array_adjoint(y_d, start, y)
    step_d += chain(y_d, np.arange(len(y)), step)


@rule(np.arange)
def arange_stop(stop, *, dtype=None):
    y = np.arange(stop, dtype=dtype)


# ---- results that carry no gradient -----------------------------------------------------------
# Integers, booleans, shapes, and arrays whose values do not depend on the values passed
# (`np.zeros_like(x)`); piecewise constant functions (`np.round`, `np.sign`) have derivative 0.


for _name in (
    "zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "eye", "identity", "tri",
    "argmax", "argmin", "argsort", "nonzero", "flatnonzero", "count_nonzero", "searchsorted",
    "digitize", "any", "all", "shape", "ndim", "size",
    "sign", "signbit", "heaviside", "floor", "ceil", "round", "around", "rint", "trunc", "fix",
    "floor_divide", "isnan", "isinf", "isfinite", "isclose", "allclose", "array_equal",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor",
):
    not_differentiable(getattr(np, _name), _name)

for _name in ("shape", "ndim", "dtype", "size", "argmax", "argmin", "argsort", "nonzero", "any", "all"):
    not_differentiable(getattr(np.ndarray, _name), f"ndarray_{_name}")

# Integer and boolean scalar types (`np.int64(x)` truncates: piecewise constant) and predicates.
_DECLARED: list = []
for _name in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp", "bool_",
    "iscomplex", "isreal", "iscomplexobj", "isrealobj", "isscalar", "isneginf", "isposinf", "isin",
    "array_equiv", "argwhere", "argpartition", "nanargmax", "nanargmin", "lexsort", "shares_memory",
    "may_share_memory",
):
    _primitive = getattr(np, _name, None)
    if _primitive is not None and not any(_primitive is seen for seen in _DECLARED):  # np.intp is np.int64
        _DECLARED.append(not_differentiable(_primitive, _name))


# ---- helpers ----------------------------------------------------------------------------------


def array_adjoint(adjoint, x, result):
    """The adjoint of `x` from that of `result`, an array made from it (`np.array`, `np.asarray`,
    `astype`, copies and casts): cast back to `x`'s dtype; for a nested tuple or list of floats and
    arrays, a `SequenceAdjoint` of their adjoints; zero when `result` is not a float array."""
    kind = (result.dtype if type(result) is DeviceArray else np.asarray(result).dtype).kind
    if is_zero(adjoint) or kind not in "fc":
        return 0.0
    if kind == "f" and is_complex(x):  # a cast to real keeps the real part: np.real's cotangent
        adjoint = np.real(adjoint)
    return unbroadcast(adjoint, x)


def linspace_adjoint(adjoint, start, stop, num, endpoint, axis, part: str):
    """`np.linspace` backward for `part` ("start" or "stop"): the adjoint weighted by each
    sample's distance from the other end."""
    if is_zero(adjoint):
        return 0.0
    fraction = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    weight = 1.0 - fraction if part == "start" else fraction
    weighted = np.sum(np.moveaxis(adjoint, axis, -1) * weight, axis=-1)
    return unbroadcast(weighted, start if part == "start" else stop)
