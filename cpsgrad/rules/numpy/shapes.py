"""Derivative rules for numpy's shape changes (reshape, transpose, swapaxes, ...) and for joining and
splitting sequences of arrays (concatenate, stack, split).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.numpy.creation import array_adjoint
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import SequenceAdjoint, is_zero, item
from cpsgrad.runtime.broadcasting import unbroadcast
from cpsgrad.runtime.indexing import cut_along

# ---- shapes -----------------------------------------------------------------------------------


@rule(np.reshape)
def reshape(a, shape, order="C"):
    y = np.reshape(a, shape, order=order)
    y_d = yield y
    a_d += reshape_adjoint(y_d, a, order)


@rule(np.ndarray.reshape)
def ndarray_reshape(a, *shape, order="C"):
    y = a.reshape(*shape, order=order)
    y_d = yield y
    a_d += reshape_adjoint(y_d, a, order)


@rule(np.ravel)
@rule(np.ndarray.ravel)
@rule(np.ndarray.flatten)
def ravel(a, order="C"):
    y = np.ravel(a, order)
    y_d = yield y
    a_d += reshape_adjoint(y_d, a, order)


@rule(np.squeeze)
@rule(np.ndarray.squeeze)
def squeeze(a, axis=None):
    y = np.squeeze(a, axis)
    y_d = yield y
    a_d += reshape_adjoint(y_d, a)


@rule(np.expand_dims)
def expand_dims(a, axis):
    y = np.expand_dims(a, axis)
    y_d = yield y
    a_d += reshape_adjoint(y_d, a)


@rule(np.broadcast_to)
def broadcast_to(array, shape):
    y = np.broadcast_to(array, shape)
    y_d = yield y
    array_d += array_adjoint(y_d, array, y)


@rule(np.transpose)
def transpose(a, axes=None):
    y = np.transpose(a, axes)
    y_d = yield y
    a_d += transpose_adjoint(y_d, a, axes)


@rule(np.ndarray.transpose)
def ndarray_transpose(a, axes=None):
    y = a.transpose(axes)
    y_d = yield y
    a_d += transpose_adjoint(y_d, a, axes)


# `x.transpose(1, 0)` and `x.item(i, j)` name one template parameter per axis (up to six): the
# backward of a template cannot read a `*args` parameter.
@rule(np.ndarray.transpose)
def ndarray_transpose_axes(a, first, second, third=None, fourth=None, fifth=None, sixth=None):
    y = a.transpose(first, second, third, fourth, fifth, sixth)
    y_d = yield y
    a_d += transpose_adjoint(y_d, a, (first, second, third, fourth, fifth, sixth)[: np.ndim(a)])


@rule(np.ndarray.T)
def ndarray_T(a):
    y = a.T
    y_d = yield y
    a_d += transpose_adjoint(y_d, a, None)


@rule(np.swapaxes)
@rule(np.ndarray.swapaxes)
def swapaxes(a, axis1, axis2):
    y = np.swapaxes(a, axis1, axis2)
    y_d = yield y
    a_d += swapaxes_adjoint(y_d, a, axis1, axis2)


@rule(np.moveaxis)
def moveaxis(a, source, destination):
    y = np.moveaxis(a, source, destination)
    y_d = yield y
    a_d += moveaxis_adjoint(y_d, a, source, destination)


# ---- sequences of arrays ----------------------------------------------------------------------


@rule(np.concatenate)
def concatenate(arrays, axis=0):
    y = np.concatenate(arrays, axis)
    y_d = yield y
    arrays_d += concatenate_adjoint(y_d, arrays, axis)


@rule(np.stack)
def stack(arrays, axis=0):
    y = np.stack(arrays, axis)
    y_d = yield y
    arrays_d += stack_adjoint(y_d, arrays, axis)


@rule(np.hstack)
def hstack(tup):
    y = np.hstack(tup)
    y_d = yield y
    tup_d += hstack_adjoint(y_d, tup)


@rule(np.vstack)
def vstack(tup):
    y = np.vstack(tup)
    y_d = yield y
    tup_d += vstack_adjoint(y_d, tup)


@rule(np.split)
@rule(np.array_split)
def split(ary, indices_or_sections, axis=0):
    y = np.split(ary, indices_or_sections, axis)
    y_d = yield y
    ary_d += split_adjoint(y_d, y, ary, axis)


# ---- helpers ----------------------------------------------------------------------------------


def reshape_adjoint(adjoint, x, order="C"):
    """The adjoint of `x` from that of a reshaped `x` (reshape, ravel, squeeze, expand_dims)."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.reshape(adjoint, np.shape(x), order=order), x)


def transpose_adjoint(adjoint, x, axes):
    """`np.transpose(x, axes)` backward: the inverse permutation (axes None reverses them)."""
    if is_zero(adjoint):
        return 0.0
    inverse = None if axes is None else np.argsort([int(a) % np.ndim(x) for a in axes])
    return unbroadcast(np.transpose(adjoint, inverse), x)


def swapaxes_adjoint(adjoint, x, axis1, axis2):
    """`np.swapaxes` backward: the same swap."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.swapaxes(adjoint, axis1, axis2), x)


def moveaxis_adjoint(adjoint, x, source, destination):
    """`np.moveaxis` backward: the axes moved back."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.moveaxis(adjoint, destination, source), x)


def concatenate_adjoint(adjoint, arrays, axis):
    """`np.concatenate(arrays, axis)` backward: each array's piece (axis None: of the flat result)."""
    if is_zero(adjoint):
        return 0.0
    if axis is None:
        return joined_adjoint(adjoint, arrays, [np.size(a) for a in arrays], 0)
    return joined_adjoint(adjoint, arrays, [np.shape(a)[axis] for a in arrays], axis)


def stack_adjoint(adjoint, arrays, axis):
    """`np.stack(arrays, axis)` backward: each array's slice along the new axis."""
    if is_zero(adjoint):
        return 0.0
    slices = np.moveaxis(adjoint, axis, 0)
    return SequenceAdjoint(unbroadcast(s, a) for s, a in zip(slices, arrays, strict=True))


def hstack_adjoint(adjoint, arrays):
    """`np.hstack` backward: pieces along axis 0 for 1-d inputs, axis 1 otherwise."""
    if is_zero(adjoint):
        return 0.0
    shapes = [np.shape(np.atleast_1d(a)) for a in arrays]
    axis = 0 if len(shapes[0]) == 1 else 1
    return joined_adjoint(adjoint, arrays, [s[axis] for s in shapes], axis)


def vstack_adjoint(adjoint, arrays):
    """`np.vstack` backward: pieces along axis 0 of the inputs made at least 2-d."""
    if is_zero(adjoint):
        return 0.0
    return joined_adjoint(adjoint, arrays, [np.shape(np.atleast_2d(a))[0] for a in arrays], 0)


def joined_adjoint(adjoint, arrays, sizes, axis):
    """The backward of joining `arrays` along `axis` (each `sizes[i]` long there): each array's
    piece of the adjoint, in its own shape (concatenate, hstack, vstack, column_stack, dstack)."""
    pieces = cut_along(adjoint, sizes, axis)
    return SequenceAdjoint(unbroadcast(np.reshape(p, np.shape(a)), a) for p, a in zip(pieces, arrays, strict=True))


def split_adjoint(adjoint, pieces, x, axis):
    """`np.split(x, ..., axis)` backward: the pieces' adjoints (zeros where symbolic) joined again."""
    if is_zero(adjoint):
        return 0.0
    parts = [np.zeros(np.shape(p), np.asarray(p).dtype) if is_zero(item(adjoint, i)) else item(adjoint, i)
             for i, p in enumerate(pieces)]
    return unbroadcast(np.concatenate(parts, axis=axis), x)
