"""The numpy ufuncs and functions a DeviceArray answers (``__array_ufunc__`` and
``__array_function__`` look them up here), each mapped to its CUDA implementation."""

from __future__ import annotations

import numpy as np

from cpsgrad.kernels.device_array.array import _ops
from cpsgrad.kernels.device_array.operands import (
    _binary,
    _compare,
    _dot,
    _logical_not,
    _matmul,
    _unary,
)
from cpsgrad.kernels.device_array.shaping import (
    _broadcast_to,
    _clip,
    _concatenate,
    _copy,
    _expand_dims,
    _full_like,
    _max,
    _mean,
    _min,
    _moveaxis,
    _ones_like,
    _outer,
    _ravel,
    _reshape,
    _size,
    _squeeze,
    _stack,
    _sum,
    _swapaxes,
    _transpose,
    _where,
    _zeros_like,
)


def _binary_ufunc(op):
    return lambda a, b: _binary(op, a, b)


def _unary_ufunc(op):
    return lambda x: _unary(op, x)


def _compare_ufunc(name):
    return lambda a, b: _compare(name, a, b)


_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")

_UFUNCS = {
    np.add: _binary_ufunc("add"),
    np.subtract: _binary_ufunc("sub"),
    np.multiply: _binary_ufunc("mul"),
    np.divide: _binary_ufunc("div"),
    np.power: _binary_ufunc("pow"),
    np.maximum: _binary_ufunc("maximum"),
    np.minimum: _binary_ufunc("minimum"),
    np.matmul: _matmul,
    np.positive: lambda x: x,
    **{getattr(np, name): _compare_ufunc(name) for name in _COMPARISONS},
    np.logical_not: _logical_not,
    np.negative: _unary_ufunc("neg"),
    np.absolute: _unary_ufunc("abs"),
    **{getattr(np, name): _unary_ufunc(name) for name in "exp log log1p sqrt square sin cos tanh".split()},
}

_FUNCTIONS = {
    np.sum: _sum,
    np.mean: _mean,
    np.max: _max,
    np.amax: _max,
    np.min: _min,
    np.amin: _min,
    np.dot: _dot,
    np.outer: _outer,
    np.transpose: _transpose,
    np.swapaxes: _swapaxes,
    np.moveaxis: _moveaxis,
    np.where: _where,
    np.clip: _clip,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.reshape: _reshape,
    np.ravel: _ravel,
    np.squeeze: _squeeze,
    np.expand_dims: _expand_dims,
    np.broadcast_to: _broadcast_to,
    np.zeros_like: _zeros_like,
    np.ones_like: _ones_like,
    np.full_like: _full_like,
    np.copy: _copy,
    np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim,
    np.size: _size,
}

_ops.install(ufuncs=_UFUNCS, functions=_FUNCTIONS)
