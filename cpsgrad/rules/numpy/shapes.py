"""Derivative rules for numpy's shape changes (reshape, transpose, swapaxes, ...) and for joining and
splitting sequences of arrays (concatenate, stack, split).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import rule

# ---- shapes -----------------------------------------------------------------------------------


@rule(np.reshape)
def reshape(a, shape, order="C"):
    y = np.reshape(a, shape, order=order)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a, order)


@rule(np.ndarray.reshape)
def ndarray_reshape(a, *shape, order="C"):
    y = a.reshape(*shape, order=order)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a, order)


@rule(np.ravel)
@rule(np.ndarray.ravel)
@rule(np.ndarray.flatten)
def ravel(a, order="C"):
    y = np.ravel(a, order)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a, order)


@rule(np.squeeze)
@rule(np.ndarray.squeeze)
def squeeze(a, axis=None):
    y = np.squeeze(a, axis)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a)


@rule(np.expand_dims)
def expand_dims(a, axis):
    y = np.expand_dims(a, axis)
    y_d = yield y
    a_d += cpsgrad_runtime.reshape_adjoint(y_d, a)


@rule(np.broadcast_to)
def broadcast_to(array, shape):
    y = np.broadcast_to(array, shape)
    y_d = yield y
    array_d += cpsgrad_runtime.array_adjoint(y_d, array, y)


@rule(np.transpose)
def transpose(a, axes=None):
    y = np.transpose(a, axes)
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, axes)


@rule(np.ndarray.transpose)
def ndarray_transpose(a, axes=None):
    y = a.transpose(axes)
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, axes)


# `x.transpose(1, 0)` and `x.item(i, j)` name one template parameter per axis (up to six): the
# backward of a template cannot read a `*args` parameter.
@rule(np.ndarray.transpose)
def ndarray_transpose_axes(a, first, second, third=None, fourth=None, fifth=None, sixth=None):
    y = a.transpose(first, second, third, fourth, fifth, sixth)
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, (first, second, third, fourth, fifth, sixth)[: np.ndim(a)])


@rule(np.ndarray.T)
def ndarray_T(a):
    y = a.T
    y_d = yield y
    a_d += cpsgrad_runtime.transpose_adjoint(y_d, a, None)


@rule(np.swapaxes)
@rule(np.ndarray.swapaxes)
def swapaxes(a, axis1, axis2):
    y = np.swapaxes(a, axis1, axis2)
    y_d = yield y
    a_d += cpsgrad_runtime.swapaxes_adjoint(y_d, a, axis1, axis2)


@rule(np.moveaxis)
def moveaxis(a, source, destination):
    y = np.moveaxis(a, source, destination)
    y_d = yield y
    a_d += cpsgrad_runtime.moveaxis_adjoint(y_d, a, source, destination)


# ---- sequences of arrays ----------------------------------------------------------------------


@rule(np.concatenate)
def concatenate(arrays, axis=0):
    y = np.concatenate(arrays, axis)
    y_d = yield y
    arrays_d += cpsgrad_runtime.concatenate_adjoint(y_d, arrays, axis)


@rule(np.stack)
def stack(arrays, axis=0):
    y = np.stack(arrays, axis)
    y_d = yield y
    arrays_d += cpsgrad_runtime.stack_adjoint(y_d, arrays, axis)


@rule(np.hstack)
def hstack(tup):
    y = np.hstack(tup)
    y_d = yield y
    tup_d += cpsgrad_runtime.hstack_adjoint(y_d, tup)


@rule(np.vstack)
def vstack(tup):
    y = np.vstack(tup)
    y_d = yield y
    tup_d += cpsgrad_runtime.vstack_adjoint(y_d, tup)


@rule(np.split)
@rule(np.array_split)
def split(ary, indices_or_sections, axis=0):
    y = np.split(ary, indices_or_sections, axis)
    y_d = yield y
    ary_d += cpsgrad_runtime.split_adjoint(y_d, y, ary, axis)
