"""Undoing numpy's broadcasting in a backward: `unbroadcast` and `reduced_product`.

`x_d += unbroadcast(z_d, x)` sums the adjoint over the axes broadcasting added to `x` and gives
it `x`'s shape and dtype; every rule that may broadcast calls it. Between Python numbers the
adjoint pass drops these calls (transforms/templates.py, `without_unbroadcast`).
"""

from __future__ import annotations

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import SEQUENCE_ADVICE, SequenceAdjoint

_ndarray = np.ndarray


def unbroadcast(adjoint, like):
    """`adjoint` summed over the axes broadcasting added to `like`, in `like`'s shape and dtype.

    The one helper that undoes broadcasting for every rule: `x_d += unbroadcast(z_d, x)`. A
    Python float `like` gets a Python float; a numpy scalar or array keeps its dtype.

    A complex adjoint of a real `like` gives its real part (JAX's rule for a real input of a
    complex computation: docs/design.md, "Complex numbers"); a complex `like` keeps it whole.
    """
    kind = type(like)
    if kind is _ndarray and type(adjoint) is _ndarray and adjoint.shape == like.shape and adjoint.dtype is like.dtype:
        return adjoint  # the common case: nothing was broadcast
    if type(adjoint) is float and adjoint == 0.0:  # the symbolic zero
        return adjoint
    if kind is _ndarray:
        if like.dtype.kind != "c":
            adjoint = real_part(adjoint)
        if type(adjoint) is _ndarray and adjoint.shape == like.shape:
            return adjoint if adjoint.dtype == like.dtype else adjoint.astype(like.dtype)
        return _reduce_to(adjoint, like.shape, like.dtype)
    if kind is DeviceArray:
        return _device.unbroadcast(adjoint, like)
    if kind is float or kind is int or kind is bool:
        if type(adjoint) is float:
            return adjoint
        adjoint = real_part(adjoint)
        # a DeviceArray's sum is copied to the host: the gradient of a Python number is one
        return float(adjoint.sum()) if type(adjoint) is _ndarray or type(adjoint) is DeviceArray else float(adjoint)
    if kind is complex:
        if type(adjoint) is float or type(adjoint) is complex:
            return adjoint
        return complex(adjoint.sum() if type(adjoint) is _ndarray else adjoint)
    if isinstance(like, np.generic):
        if like.dtype.kind != "c":
            adjoint = real_part(adjoint)
        if type(adjoint) is DeviceArray:
            return like.dtype.type(float(adjoint.sum()))
        return like.dtype.type(adjoint.sum() if type(adjoint) is _ndarray else adjoint)
    if isinstance(like, (list, tuple)):
        if isinstance(adjoint, SequenceAdjoint) and len(adjoint) != len(like):
            raise UnsupportedError(None, "an operator combining a differentiable tuple or list with another sequence",
                                   SEQUENCE_ADVICE)
        if isinstance(adjoint, (_ndarray, np.generic)):  # numpy read the sequence as an array
            return _as_sequence_adjoint(adjoint, like)
        return adjoint
    return adjoint


def real_part(adjoint):
    """`adjoint`'s real part where it is complex (the cotangent of a real value), else `adjoint`."""
    kind = type(adjoint)
    if kind is complex:
        return adjoint.real
    if kind is _ndarray or isinstance(adjoint, np.generic):
        return adjoint.real if adjoint.dtype.kind == "c" else adjoint
    return adjoint


def is_complex(value) -> bool:
    """Whether `value` is a complex number or an array of a complex dtype (cheap for floats)."""
    kind = type(value)
    if kind is float or kind is int:
        return False
    if kind is _ndarray or kind is DeviceArray or isinstance(value, np.generic):
        return value.dtype.kind == "c"
    return kind is complex or np.iscomplexobj(value)


def refuse_complex(value, construct: str) -> None:
    """Raise for a complex `value` reaching an operation that does not differentiate complex
    values (an order, a comparison, a real-only formula): never a real-valued answer."""
    if is_complex(value):
        raise UnsupportedError(
            None, construct,
            "its rule is for real values only (docs/python-support.md, \"Complex numbers\", lists the "
            "operations that differentiate complex ones); apply it to real values: np.real, np.imag or "
            "np.abs of the complex one",
        )


def reduced_product(a, b, like):
    """`unbroadcast(a * b, like)`; when `like` is a scalar and `a`, `b` arrays of one shape, a
    dot product instead of the product array and its sum (`x * W` with a scalar `x`)."""
    same_arrays = type(a) is _ndarray and type(b) is _ndarray and a.shape == b.shape and a.dtype is b.dtype
    if same_arrays and type(like) is not _ndarray and a.dtype.kind != "c":  # np.vdot conjugates a complex a
        return unbroadcast(np.vdot(a, b), like)
    return unbroadcast(a * b, like)


def _reduce_to(adjoint, shape: tuple, dtype):
    """Sum `adjoint` down to `shape` (numpy's broadcasting rules, run backwards)."""
    adjoint = np.asarray(adjoint)
    extra = adjoint.ndim - len(shape)
    if extra < 0:  # a scalar (symbolic) adjoint standing for a broadcast value
        return np.broadcast_to(adjoint, shape).astype(dtype)
    axes = tuple(range(extra)) + tuple(
        extra + axis for axis, size in enumerate(shape) if size == 1 and adjoint.shape[extra + axis] != 1
    )
    if axes:
        adjoint = adjoint.sum(axis=axes, keepdims=True)
    if extra:
        adjoint = adjoint.reshape(shape)
    if adjoint.shape != shape:
        adjoint = np.broadcast_to(adjoint, shape).copy()
    return adjoint.astype(dtype, copy=False)


def _as_sequence_adjoint(adjoint, like):
    """An array adjoint of a nested tuple or list `like`, as nested `SequenceAdjoint`s."""
    parts = _reduce_to(adjoint, np.shape(like), np.asarray(adjoint).dtype)
    return SequenceAdjoint(unbroadcast(part, element) for part, element in zip(parts, like, strict=True))


def refuse_complex_operands(construct: str, *values) -> None:
    """The guard of a rule that does not differentiate complex values (cpsgrad/rules/
    complex_support.py): raise when one of its inputs or outputs `values` is complex."""
    for value in values:
        kind = type(value)
        if kind is float or kind is int or kind is bool or value is None:
            continue
        if kind is _ndarray or kind is complex or isinstance(value, np.generic):
            if is_complex(value):
                refuse_complex(value, construct)
        elif isinstance(value, (tuple, list)):
            refuse_complex_operands(construct, *value)


def shaped_like(part, value):
    """`part` (an adjoint of `x[key]`) as the adjoint of the value written there, which
    broadcast to that shape: summed back to it, in its type (a list or tuple of numbers or arrays
    gets a `SequenceAdjoint`)."""
    if isinstance(value, (list, tuple)):
        reduced = unbroadcast(part, np.zeros(np.shape(value)))
        return SequenceAdjoint(shaped_like(reduced[position], element) for position, element in enumerate(value))
    return unbroadcast(part, value)
