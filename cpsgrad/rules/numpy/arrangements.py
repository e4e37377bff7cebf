"""Derivative rules for numpy's rearrangements of one array's elements: diagonals and triangles
(diag, diagonal, tril, triu), rolls, tiles, repeats, flips and rotations, the `atleast_*`
family, and the joins and splits beyond `shapes.py`'s (append, column_stack, dstack, hsplit, ...).

Each output element is one input element (or a zero), so each backward puts the adjoint back
where the element came from, adding where an element was used more than once (tile, repeat).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.numpy.shapes import (
    concatenate_adjoint,
    joined_adjoint,
    reshape_adjoint,
    split_adjoint,
    transpose_adjoint,
    vstack,
)
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero, item
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- diagonals and triangles ------------------------------------------------------------------


@rule(np.diag)
def diag(v, k=0):
    y = np.diag(v, k)
    y_d = yield y
    v_d += diag_adjoint(y_d, v, k)


@rule(np.diagonal)
@rule(np.ndarray.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    y = np.diagonal(a, offset, axis1, axis2)
    y_d = yield y
    a_d += diagonal_adjoint(y_d, a, offset, axis1, axis2)


@rule(np.tril)
def tril(m, k=0):
    y = np.tril(m, k)
    y_d = yield y
    m_d += triangle_adjoint(y_d, m, k, np.tril)


@rule(np.triu)
def triu(m, k=0):
    y = np.triu(m, k)
    y_d = yield y
    m_d += triangle_adjoint(y_d, m, k, np.triu)


# ---- rolls, tiles, repeats, flips, rotations --------------------------------------------------


@rule(np.roll)
def roll(a, shift, axis=None):
    y = np.roll(a, shift, axis)
    y_d = yield y
    a_d += roll_adjoint(y_d, a, shift, axis)


@rule(np.rollaxis)
def rollaxis(a, axis, start=0):
    y = np.rollaxis(a, axis, start)
    y_d = yield y
    a_d += rollaxis_adjoint(y_d, a, axis, start)


@rule(np.tile)
def tile(A, reps):
    y = np.tile(A, reps)
    y_d = yield y
    A_d += tile_adjoint(y_d, A, reps)


@rule(np.repeat)
@rule(np.ndarray.repeat)
def repeat(a, repeats, axis=None):
    y = np.repeat(a, repeats, axis)
    y_d = yield y
    a_d += repeat_adjoint(y_d, a, repeats, axis)


@rule(np.flip)
def flip(m, axis=None):
    y = np.flip(m, axis)
    y_d = yield y
    m_d += flip_adjoint(y_d, m, axis)


@rule(np.fliplr)
def fliplr(m):
    y = np.fliplr(m)
    y_d = yield y
    m_d += flip_adjoint(y_d, m, 1)


@rule(np.flipud)
def flipud(m):
    y = np.flipud(m)
    y_d = yield y
    m_d += flip_adjoint(y_d, m, 0)


@rule(np.rot90)
def rot90(m, k=1, axes=None):  # None for numpy's (0, 1): a template's tuple default is not inlined
    y = np.rot90(m, k, axes)
    y_d = yield y
    m_d += rot90_adjoint(y_d, m, k, axes)


# ---- at least n dimensions: one argument gives an array, several a tuple (a list before numpy 2) -


@rule(np.atleast_1d)
@rule(np.atleast_2d)
@rule(np.atleast_3d)
def atleast_several(first, second, third=None, fourth=None, fifth=None, sixth=None):
    y = np.atleast_1d(first, second, third, fourth, fifth, sixth)
    y_d = yield y
    first_d += reshape_adjoint(item(y_d, 0), first)
    second_d += reshape_adjoint(item(y_d, 1), second)
    third_d += reshape_adjoint(item(y_d, 2), third)
    fourth_d += reshape_adjoint(item(y_d, 3), fourth)
    fifth_d += reshape_adjoint(item(y_d, 4), fifth)
    sixth_d += reshape_adjoint(item(y_d, 5), sixth)


@rule(np.atleast_1d)
@rule(np.atleast_2d)
@rule(np.atleast_3d)
def atleast(ary):
    y = np.atleast_1d(ary)
    y_d = yield y
    ary_d += reshape_adjoint(y_d, ary)


# ---- joins and splits -------------------------------------------------------------------------


@rule(np.append)
def append(arr, values, axis=None):
    y = np.append(arr, values, axis)
    y_d = yield y
    pieces = concatenate_adjoint(y_d, (arr, values), axis)
    arr_d += item(pieces, 0)
    values_d += item(pieces, 1)


@rule(np.column_stack)
def column_stack(tup):
    y = np.column_stack(tup)
    y_d = yield y
    tup_d += column_stack_adjoint(y_d, tup)


@rule(np.dstack)
def dstack(tup):
    y = np.dstack(tup)
    y_d = yield y
    tup_d += dstack_adjoint(y_d, tup)


if hasattr(np, "row_stack"):  # numpy < 2.4: vstack under its old name
    rule(np.row_stack)(vstack)


@rule(np.hsplit)
def hsplit(ary, indices_or_sections):
    y = np.hsplit(ary, indices_or_sections)
    y_d = yield y
    ary_d += split_adjoint(y_d, y, ary, 1 if np.ndim(ary) > 1 else 0)


@rule(np.vsplit)
def vsplit(ary, indices_or_sections):
    y = np.vsplit(ary, indices_or_sections)
    y_d = yield y
    ary_d += split_adjoint(y_d, y, ary, 0)


@rule(np.dsplit)
def dsplit(ary, indices_or_sections):
    y = np.dsplit(ary, indices_or_sections)
    y_d = yield y
    ary_d += split_adjoint(y_d, y, ary, 2)


# ---- helpers ----------------------------------------------------------------------------------


def diagonal_adjoint(adjoint, x, offset, axis1, axis2):
    """`np.diagonal(x, offset, axis1, axis2)` backward: the adjoint (diagonals along its last
    axis) written on those diagonals of zeros."""
    if is_zero(adjoint):
        return 0.0
    adjoint = np.asarray(adjoint)
    shape = np.shape(x)
    result = np.zeros(shape, adjoint.dtype)
    planes = np.moveaxis(result, (axis1 % len(shape), axis2 % len(shape)), (-2, -1))  # a view of result
    steps = np.arange(adjoint.shape[-1])
    planes[..., steps + max(-offset, 0), steps + max(offset, 0)] = adjoint
    return unbroadcast(result, x)


def diag_adjoint(adjoint, x, k):
    """`np.diag(x, k)` backward: a vector's adjoint is the k-th diagonal of the matrix's; a
    matrix's is its diagonal's adjoint written on the diagonal."""
    if is_zero(adjoint):
        return 0.0
    if np.ndim(x) == 1:
        return unbroadcast(np.diagonal(adjoint, k), x)
    return diagonal_adjoint(adjoint, x, k, 0, 1)


def triangle_adjoint(adjoint, x, k, triangle):
    """`np.tril`/`np.triu` backward: the same triangle of the adjoint (a vector `x` was read as
    every row of a matrix, so its adjoint sums the rows)."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(triangle(adjoint, k), x)


def roll_adjoint(adjoint, x, shift, axis):
    """`np.roll` backward: rolled back by the same shifts."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.roll(adjoint, np.negative(shift), axis), x)


def rollaxis_adjoint(adjoint, x, axis, start):
    """`np.rollaxis` backward: the inverse of the permutation numpy's rollaxis makes."""
    if is_zero(adjoint):
        return 0.0
    ndim = np.ndim(x)
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    axes = [a for a in range(ndim) if a != axis]
    axes.insert(start, axis)
    return transpose_adjoint(adjoint, x, axes)


def tile_adjoint(adjoint, x, reps):
    """`np.tile(x, reps)` backward: the adjoint summed over the copies."""
    if is_zero(adjoint):
        return 0.0
    reps = tuple(np.atleast_1d(reps).tolist())
    shape = np.shape(x)
    ndim = max(len(reps), len(shape))
    shape = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + reps
    copies = np.reshape(adjoint, [n for pair in zip(reps, shape, strict=True) for n in pair])
    return unbroadcast(np.reshape(copies.sum(axis=tuple(range(0, 2 * ndim, 2))), np.shape(x)), x)


def repeat_adjoint(adjoint, x, repeats, axis):
    """`np.repeat(x, repeats, axis)` backward: each element's copies summed (axis None: of the
    flat `x`); `repeats` one count, or a count per element."""
    if is_zero(adjoint):
        return 0.0
    shape = np.shape(x)
    along = 0 if axis is None else axis % len(shape)
    length = int(np.prod(shape)) if axis is None else shape[along]
    moved = np.moveaxis(adjoint, along, 0)
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        count = int(np.ravel(repeats)[0])
        summed = moved.reshape((length, count) + moved.shape[1:]).sum(axis=1)
    else:
        summed = np.zeros((length,) + moved.shape[1:], moved.dtype)
        np.add.at(summed, np.repeat(np.arange(length), repeats), moved)
    result = np.moveaxis(summed, 0, along)
    return unbroadcast(np.reshape(result, shape) if axis is None else result, x)


def flip_adjoint(adjoint, x, axis):
    """`np.flip` (fliplr: axis 1, flipud: axis 0) backward: flipped back."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.flip(adjoint, axis), x)


def rot90_adjoint(adjoint, x, k, axes):
    """`np.rot90` backward: rotated back."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.rot90(adjoint, -k, (0, 1) if axes is None else axes), x)


def column_stack_adjoint(adjoint, arrays):
    """`np.column_stack` backward: pieces along axis 1, a column for each input under 2-d."""
    if is_zero(adjoint):
        return 0.0
    return joined_adjoint(adjoint, arrays, [np.shape(a)[1] if np.ndim(a) >= 2 else 1 for a in arrays], 1)


def dstack_adjoint(adjoint, arrays):
    """`np.dstack` backward: pieces along axis 2 of the inputs made at least 3-d."""
    if is_zero(adjoint):
        return 0.0
    return joined_adjoint(adjoint, arrays, [np.shape(np.atleast_3d(a))[2] for a in arrays], 2)
