"""Adding a contribution into an adjoint: `x_d = accumulate(x_d, contribution)`.

The one place where generated code updates an adjoint in place: only when nothing else refers
to it (its reference count says so, or it is a buffer the program borrowed, `books._lent`), so
adjoints may otherwise alias each other freely. `accumulate_index` and `accumulate_matmul_left`
are the fused forms for an `x[i]` read's and a `W @ h` product's adjoint (no full-size temporary).

A dict's adjoint (`DictAdjoint`) is a container of adjoints, and the same rule applies at both
levels: a `DictAdjoint` nothing else refers to takes a read's contribution (`params["W"]`) or
another `DictAdjoint` (a callee's) into itself, and each entry it holds is added into in place
only when the dict is the entry's one reference; otherwise the entry is replaced by a new sum
(`_add_entry`). A shared `DictAdjoint` is never changed: `+` builds a new one.

Conventions every array helper of this package keeps: an adjoint has its primal's shape and
dtype (a Python float for a Python float); `0.0` is the symbolic zero and may stand for any
shape; helpers never write into their arguments.
"""

from __future__ import annotations

import sys

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import DictAdjoint
from cpsgrad.runtime.books import _lent
from cpsgrad.runtime.indexing import _is_basic, index_adjoint
from cpsgrad.runtime.linalg import matmul_left
from cpsgrad.runtime.list_changes import ListAdjoint, accumulate_item

_ndarray = np.ndarray
_getrefcount = sys.getrefcount


def accumulate(total, contribution):
    """`total + contribution`, added into `total` in place when nothing else can see that array:
    its only references are the generated code's variable and this call's (CPython's reference
    count says so exactly, as numpy's own temporary elision uses it), it owns its memory, and
    nothing broadcasts. A sum of many array contributions (a parameter's adjoint over a loop or
    a recursion) then allocates once. Shared adjoints are never changed: they get a new array.
    A lent adjoint (`lend`) is its borrower's to add into; one handed back is added into."""
    # the reference count is read here, first: the caller's variable, this parameter, getrefcount's argument
    exclusive = _getrefcount(total) == 3
    return _accumulate(total, contribution, exclusive)


def _accumulate(total, contribution, exclusive: bool):
    if type(contribution) is DictAdjoint and exclusive and type(total) is DictAdjoint and contribution is not total:
        merge_into(total, contribution)
        return total
    if type(contribution) is _ndarray:
        if (exclusive or _lent(total)) and _owns(total, contribution):
            total += contribution
            return total
        if _lent(contribution) and contribution is not total and _owns(contribution, contribution):
            if type(total) is float and total == 0.0:
                return contribution
            if type(total) is _ndarray and total.shape == contribution.shape:
                contribution += total  # the borrower's total: everything lent and added comes back in it
                return contribution
    if type(contribution) is float and contribution == 0.0:  # the symbolic zero adds nothing
        return total
    if type(total) is float and total == 0.0:
        return contribution
    if type(total) is DeviceArray or type(contribution) is DeviceArray:
        return _device.add(total, contribution)
    return total + contribution


def _owns(total, like) -> bool:
    """Whether `total` is an array of `like`'s shape and dtype owning writeable memory: with a
    reference count of 3 in the caller (its variable, the parameter, getrefcount's argument),
    nothing else can see a change made to it in place."""
    return (
        type(total) is _ndarray
        and total.base is None
        and total.shape == like.shape
        and total.dtype is like.dtype
        and total.flags.writeable
    )


def accumulate_index(total, container, index, contribution):
    """`accumulate(total, index_adjoint(container, index, contribution))` without the full-size
    zeros: where `total` is an array nothing else holds (as `accumulate` decides), the
    contribution is added into the indexed elements in place; a column or a row read in a loop
    (an embedding, one-hot inputs) then costs its own size, not the whole array's."""
    if type(total) is ListAdjoint:  # an appended list's adjoint: into the element, in place (runtime/list_changes.py)
        exclusive = _getrefcount(total) == 3  # read first (an argument on the stack would count)
        added = accumulate_item(total, exclusive, container, index, contribution)
        if added is not None:
            return added
    if type(container) is _ndarray and (_getrefcount(total) == 3 or _lent(total)) and _owns(total, container):
        if type(contribution) is float and contribution == 0.0:
            return total
        if _is_basic(index):
            total[index] += contribution
        else:
            np.add.at(total, index, contribution)
        return total
    if type(total) is DictAdjoint and type(container) is dict and _getrefcount(total) == 3:
        _add_entry(total, index, contribution)  # a dict's read (`params["W"]`): into its adjoint's entry
        return total
    return accumulate(total, index_adjoint(container, index, contribution))


def merge_into(total: DictAdjoint, other: DictAdjoint) -> None:
    """`total + other` into `total`, which nothing but the caller's variable refers to."""
    for key in other:
        _add_entry(total, key, other[key])


def _add_entry(adjoint: DictAdjoint, key, contribution) -> None:
    """`adjoint[key] += contribution` for a `DictAdjoint` nothing else refers to: the entry is
    added into in place when the dict is its only reference (`getrefcount(adjoint[key]) == 2`:
    the dict's and getrefcount's argument) and it owns memory of the contribution's shape and
    dtype, or is a `DictAdjoint` itself (a nested dict's); otherwise it is replaced by
    `entry + contribution`, as `DictAdjoint.__add__` computes it (the same values either way)."""
    if key not in adjoint:
        adjoint[key] = contribution
        return
    kind = type(contribution)
    if kind is float and contribution == 0.0:
        return
    if kind is _ndarray:
        if _getrefcount(adjoint[key]) == 2:
            present = adjoint[key]
            if _owns(present, contribution):
                present += contribution
                return
    elif kind is DictAdjoint and type(adjoint[key]) is DictAdjoint and _getrefcount(adjoint[key]) == 2:
        if adjoint[key] is not contribution:
            merge_into(adjoint[key], contribution)
            return
    adjoint[key] = adjoint[key] + contribution


def accumulate_matmul_left(total, z_d, x, y):
    """`accumulate(total, matmul_left(z_d, x, y))` with the product added into `total` by BLAS
    in place (a rank-1 update `ger` for matrix @ vector, `gemm` with beta = 1 for matrix @
    matrix) where `total` is an array nothing else holds: a weight matrix's adjoint summed over a
    loop or a recursion then costs one pass a step, not an allocation and two."""
    if (
        type(x) is _ndarray
        and type(y) is _ndarray
        and type(z_d) is _ndarray
        and (_getrefcount(total) == 3 or _lent(total))
        and _owns(total, x)
        and x.ndim == 2
        and total.flags.c_contiguous
        and x.dtype is y.dtype is z_d.dtype
    ):
        routines = _blas(total.dtype)
        if routines is not None:
            ger, gemm = routines
            transposed = total.T  # Fortran-ordered, as BLAS wants it: total.T += y (x) z_d
            if y.ndim == 1 and z_d.ndim == 1:
                result = ger(1.0, y, z_d, a=transposed, overwrite_a=1)
            elif y.ndim == 2 and z_d.ndim == 2:
                result = gemm(1.0, y, z_d, beta=1.0, c=transposed, trans_b=1, overwrite_c=1)
            else:
                result = None
            if result is not None:
                if result is not transposed:  # BLAS worked on a copy (f2py returns `a` itself when it did not)
                    np.copyto(total, result.T)
                return total
    return accumulate(total, matmul_left(z_d, x, y))


_BLAS_ROUTINES: dict = {}


def _blas(dtype):
    """(ger, gemm) of scipy's BLAS for float32 or float64, or None."""
    if dtype not in _BLAS_ROUTINES:
        try:
            from scipy.linalg import blas
        except ImportError:  # pragma: no cover - scipy is a dependency
            _BLAS_ROUTINES[dtype] = None
        else:
            routines = {np.dtype(np.float64): (blas.dger, blas.dgemm), np.dtype(np.float32): (blas.sger, blas.sgemm)}
            _BLAS_ROUTINES[dtype] = routines.get(np.dtype(dtype))
    return _BLAS_ROUTINES[dtype]
