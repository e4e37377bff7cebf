"""Subscripts: the adjoint of `container[index]` for arrays, tuples, lists and dicts, numpy's
index tricks (`np.r_`, `np.c_`), and what `obj[v]` calls when the index itself is differentiable
(`subscript_of`, transforms/subscripts.py).
"""

from __future__ import annotations

import functools
import types

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import DictAdjoint, SequenceAdjoint, is_zero, one_hot
from cpsgrad.runtime.broadcasting import unbroadcast

_ndarray = np.ndarray


def index_adjoint(container, index, adjoint):
    """The adjoint of `container` when only `container[index]` was read.

    Arrays take any numpy index (ints, slices, tuples, integer arrays, boolean masks); integer
    arrays that repeat a position add up, as the chain rule says. Tuples and lists take an int
    or a slice; dicts a key (a `DictAdjoint` holding the one entry).
    """
    if type(container) is _ndarray:
        result = np.zeros(container.shape, container.dtype)
        if _is_basic(index):
            result[index] = adjoint
        else:
            np.add.at(result, index, adjoint)
        return result
    if type(container) is DeviceArray:
        return _device.index_adjoint(container, index, adjoint)
    if _own_getitem(container):
        # its own __getitem__ ran as an opaque call: an adjoint for it as for a list or a dict
        # would be wrong (located by the caller: api finds the generated line that raised)
        raise UnsupportedError(
            None, f"subscript of a differentiable {type(container).__name__} (a class with its own __getitem__)",
            "cpsgrad differentiates a user class's __getitem__ only on an object that carries no gradient "
            "itself; call a method of your own (obj.get(k)), or index a tuple, list, dict or array",
        )
    if isinstance(container, dict):
        return DictAdjoint({index: adjoint})
    return one_hot(container, index, adjoint)


def _is_basic(index) -> bool:
    """Whether `index` is a basic index (views, no repeated positions)."""
    kind = type(index)
    if kind is int or kind is slice:
        return True
    if kind is tuple:
        for part in index:
            kind = type(part)
            if not (kind is int or kind is slice or _is_basic(part)):
                return False
        return True
    return index is None or index is Ellipsis or isinstance(index, (int, np.integer, slice))


def index_concatenate(indexer, parts: tuple):
    """`np.r_[a, b, ...]` or `np.c_[a, b, ...]` (`indexer[parts]`), as numpy computes it; a
    subscript whose elements are differentiable becomes this call (transforms/subscripts.py)."""
    return indexer[parts]


def _rows(part) -> int:
    """How many rows `np.r_` makes of one part: a range's length, 1 for a number, else axis 0's."""
    if type(part) is slice:
        return len(np.r_[part])
    return 1 if np.ndim(part) == 0 else np.shape(part)[0]


def index_concatenate_adjoint(adjoint, indexer, parts: tuple):
    """`index_concatenate` backward: each part's piece. `np.r_` joins the parts (at least 1-d)
    along their first axis; `np.c_` makes them at least 2-d, a 1-d part a column, and joins
    along the last axis."""
    if is_zero(adjoint):
        return 0.0
    if indexer is np.c_:
        axis = -1
        sizes = [1 if type(part) is slice or np.ndim(part) < 2 else np.shape(part)[-1] for part in parts]
    else:
        axis = 0
        sizes = [_rows(part) for part in parts]
    cut = cut_along(adjoint, sizes, axis)
    return SequenceAdjoint(
        0.0 if type(part) is slice else unbroadcast(np.reshape(piece, np.shape(part)), part)  # a range: constants
        for piece, part in zip(cut, parts, strict=True)
    )


_INDEXABLE = (np.ndarray, list, tuple, dict, str, range)


def indexed(value, index):
    """`value[index]` of a builtin container or an array: piecewise constant in the index."""
    return value[index]


def _own_getitem(value) -> bool:
    """Whether `value`'s class defines `__getitem__` in Python (a user class, not a builtin's)."""
    return type(getattr(type(value), "__getitem__", None)) is types.FunctionType


def subscript_of(value):
    """What `value[...]` calls when its index is differentiable (transforms/subscripts.py): a
    user class's own `__getitem__`, bound (differentiated like any method); for the builtin
    containers and arrays, `indexed` (no derivative in the index); otherwise the bound builtin
    method, which the call refuses, naming it, unless a rule was declared for it."""
    if _own_getitem(value):
        return value.__getitem__
    if isinstance(value, _INDEXABLE):
        return functools.partial(indexed, value)
    return getattr(value, "__getitem__", value)


def item_adjoint(adjoint, x, index):
    """`x.item(index)` backward: the adjoint at the element read (`index` None for a one-element
    array, a flat index, or a tuple with one index per axis)."""
    if is_zero(adjoint):
        return 0.0
    if type(x) is DeviceArray:
        position = 0 if index is None else index
        if not isinstance(position, tuple):
            position = np.unravel_index(position, x.shape)
        return _device.index_adjoint(x, position, adjoint)
    result = np.zeros(np.shape(x), np.asarray(x).dtype)
    if isinstance(index, tuple):
        result[index] = adjoint
    else:
        result.flat[0 if index is None else index] = adjoint
    return result


# ---- shared with the shape rules (cpsgrad/rules/numpy/shapes.py) ---------------------------------


def cut_along(adjoint, sizes: list[int], axis: int) -> list:
    """`adjoint` cut along `axis` into consecutive pieces of `sizes`."""
    if type(adjoint) is DeviceArray:
        return _device.pieces(adjoint, sizes, axis)
    return np.split(adjoint, np.cumsum(sizes)[:-1], axis=axis)
