"""The numpy rule table (cpsgrad/rules/numpy/) against finite differences and JAX.

One table of specs drives one checker. A spec's function takes its inputs and a weights array
`w` and returns `np.sum(<one numpy operation> * w)`; the weights are fixed, random and nonzero, so
every element of the operation's output matters. The checker draws the inputs with hypothesis
(float64 and float32 arrays, 0-d arrays, Python floats), and requires that

- `value_and_grad` returns exactly the function's own value, and the same gradient as `grad`;
- each gradient has its input's type, shape and dtype (float32 stays float32);
- each gradient matches central differences of the function evaluated in float64 (Richardson
  extrapolated), within rtol 1e-5 for float64 inputs and 2e-3 for float32 inputs.

Every input is differentiated; constants (axes, masks, shapes) are written into the function.
The operation sits inside each function, rather than being wrapped by the checker, because calls
of user functions are not differentiated yet. Inputs that are kinky (abs, maximum, clip, max
reductions) are drawn from a grid, distinct within and across inputs, so no tie or kink lies within
a finite-difference step; the kinks themselves are compared with jax.grad below.

Also here: every differentiable rule has a spec and a symbolic-zero case (a result computed but
unused, whose backward gets the adjoint `0.0`); non-differentiable results give no gradient; and
a wrong rule registered for a moment makes the checker fail.
"""

from __future__ import annotations

import builtins
import dis
import math
import types
import zlib
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cpsgrad
from cpsgrad.rules import numpy as numpy_rules
from cpsgrad.rules.numpy.ufuncs import chain
from cpsgrad.rules.registry import TABLE, _key
from tests.specs import FLOAT, GRID, SPREAD, UNIT, Kink, M, P, S, Spec, gather
from tests.specs import unused as _unused
from tests.specs import unused_pair as _unused_pair
from tests.specs import unused_with as _unused_with

STEP = 2.0**-10  # finite-difference step (relative to max(|x|, 1))
TOLERANCES = {"float64": (1e-5, 1e-7), "float32": (2e-3, 2e-3)}  # rtol, atol relative to max(|g|, 1)
EXAMPLES = 5

MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
ROW_MASK = np.array([True, False, False, True])


SPECS = [
    # unary ufuncs: arrays, a size-1 axis, 0-d arrays and Python floats
    S("exp", lambda x, w: np.sum(np.exp(x) * w), [M]),
    S("exp 0-d", lambda x, w: np.sum(np.exp(x) * w), [()]),
    S("exp float", lambda x, w: np.sum(np.exp(x) * w), [FLOAT]),
    S("exp2", lambda x, w: np.sum(np.exp2(x) * w), [(3, 1)]),
    S("expm1", lambda x, w: np.sum(np.expm1(x) * w), [M]),
    S("log", lambda x, w: np.sum(np.log(x) * w), [M], P),
    S("log float", lambda x, w: np.sum(np.log(x) * w), [FLOAT], P),
    S("log2", lambda x, w: np.sum(np.log2(x) * w), [(4,)], P),
    S("log10", lambda x, w: np.sum(np.log10(x) * w), [()], P),
    S("log1p", lambda x, w: np.sum(np.log1p(x) * w), [M], (-0.5, 2.0)),
    S("sqrt", lambda x, w: np.sum(np.sqrt(x) * w), [M], P),
    S("cbrt", lambda x, w: np.sum(np.cbrt(x) * w), [M], (-2.0, 2.0), apart=True),
    S("square", lambda x, w: np.sum(np.square(x) * w), [M]),
    S("reciprocal", lambda x, w: np.sum(np.reciprocal(x) * w), [M], (0.3, 2.0)),
    S("sin", lambda x, w: np.sum(np.sin(x) * w), [M]),
    S("cos", lambda x, w: np.sum(np.cos(x) * w), [FLOAT]),
    S("tan", lambda x, w: np.sum(np.tan(x) * w), [M], (-1.2, 1.2)),
    S("arcsin", lambda x, w: np.sum(np.arcsin(x) * w), [M], UNIT),
    S("arccos", lambda x, w: np.sum(np.arccos(x) * w), [M], UNIT),
    S("arctan", lambda x, w: np.sum(np.arctan(x) * w), [M]),
    S("sinh", lambda x, w: np.sum(np.sinh(x) * w), [M]),
    S("cosh", lambda x, w: np.sum(np.cosh(x) * w), [()]),
    S("tanh", lambda x, w: np.sum(np.tanh(x) * w), [M]),
    S("arcsinh", lambda x, w: np.sum(np.arcsinh(x) * w), [M]),
    S("arccosh", lambda x, w: np.sum(np.arccosh(x) * w), [M], (1.2, 3.0)),
    S("arctanh", lambda x, w: np.sum(np.arctanh(x) * w), [M], UNIT),
    S("degrees", lambda x, w: np.sum(np.degrees(x) * w), [M]),
    S("rad2deg", lambda x, w: np.sum(np.rad2deg(x) * w), [FLOAT]),
    S("radians", lambda x, w: np.sum(np.radians(x) * w), [M]),
    S("deg2rad", lambda x, w: np.sum(np.deg2rad(x) * w), [()]),
    S("abs", lambda x, w: np.sum(np.abs(x) * w), [M], apart=True),
    S("absolute float", lambda x, w: np.sum(np.absolute(x) * w), [FLOAT], apart=True),
    S("fabs", lambda x, w: np.sum(np.fabs(x) * w), [M], apart=True),
    S("negative", lambda x, w: np.sum(np.negative(x) * w), [M]),
    S("negative float", lambda x, w: np.sum(np.negative(x) * w), [FLOAT]),
    S("positive", lambda x, w: np.sum(np.positive(x) * w), [M]),
    # binary ufuncs: broadcasting against rows, columns, size-1 axes, 0-d arrays and floats
    S("add", lambda x, y, w: np.sum(np.add(x, y) * w), [M, (4,)]),
    S("add size-1 axes", lambda x, y, w: np.sum(np.add(x, y) * w), [(2, 1, 3), (4, 1)]),
    S("add float", lambda x, y, w: np.sum(np.add(x, y) * w), [(3,), FLOAT]),
    S("subtract", lambda x, y, w: np.sum(np.subtract(x, y) * w), [(1, 4), (3, 1)]),
    S("subtract 0-d", lambda x, y, w: np.sum(np.subtract(x, y) * w), [(), M]),
    S("multiply", lambda x, y, w: np.sum(np.multiply(x, y) * w), [M, (3, 1)]),
    S("multiply float", lambda x, y, w: np.sum(np.multiply(x, y) * w), [FLOAT, M]),
    S("divide", lambda x, y, w: np.sum(np.divide(x, y) * w), [M, (4,)], ((-2.0, 2.0), (0.5, 2.0))),
    S("true_divide float", lambda x, y, w: np.sum(np.true_divide(x, y) * w), [M, FLOAT], ((-2.0, 2.0), (0.5, 2.0))),
    S("mod", lambda x, y, w: np.sum(np.mod(x, y) * w), [M, (4,)], ((2.3, 2.8), (1.0, 1.1))),
    S("remainder float", lambda x, y, w: np.sum(np.remainder(x, y) * w), [M, FLOAT], ((-2.8, -2.3), (1.0, 1.1))),
    S("fmod", lambda x, y, w: np.sum(np.fmod(x, y) * w), [M, (3, 1)], ((-2.8, -2.3), (1.0, 1.1))),
    S("power", lambda x, y, w: np.sum(np.power(x, y) * w), [M, (4,)], ((0.5, 2.0), (-1.5, 2.0))),
    S("power float exponent", lambda x, y, w: np.sum(np.power(x, y) * w), [M, FLOAT], ((0.5, 2.0), (-1.5, 2.0))),
    S("power float base", lambda x, y, w: np.sum(np.power(x, y) * w), [FLOAT, (3,)], ((0.5, 2.0), (-1.5, 2.0))),
    S("float_power", lambda x, y, w: np.sum(np.float_power(x, y) * w), [M, ()], ((0.5, 2.0), (-1.5, 2.0))),
    S("maximum", lambda x, y, w: np.sum(np.maximum(x, y) * w), [M, (4,)], apart=True),
    S("maximum float", lambda x, y, w: np.sum(np.maximum(x, y) * w), [M, FLOAT], apart=True),
    S("minimum", lambda x, y, w: np.sum(np.minimum(x, y) * w), [(3, 1), (4,)], apart=True),
    S("fmax", lambda x, y, w: np.sum(np.fmax(x, y) * w), [M, (4,)], apart=True),
    S("fmin", lambda x, y, w: np.sum(np.fmin(x, y) * w), [M, (3, 1)], apart=True),
    S("arctan2", lambda y, x, w: np.sum(np.arctan2(y, x) * w), [M, (4,)], ((-2.0, 2.0), (0.3, 2.0))),
    S("hypot", lambda x, y, w: np.sum(np.hypot(x, y) * w), [M, (3, 1)], ((-2.0, 2.0), (0.3, 2.0))),
    S("logaddexp", lambda x, y, w: np.sum(np.logaddexp(x, y) * w), [M, (4,)]),
    S("logaddexp2", lambda x, y, w: np.sum(np.logaddexp2(x, y) * w), [M, FLOAT]),
    # selection
    S("where", lambda x, y, w: np.sum(np.where(MASK, x, y) * w), [M, (4,)]),
    S("where row mask, float", lambda x, y, w: np.sum(np.where(ROW_MASK, x, y) * w), [M, FLOAT]),
    S("where of a comparison", lambda x, w: np.sum(np.where(x > 0.0, x, 0.1 * x) * w), [M], apart=True),
    S("clip", lambda x, w: np.sum(np.clip(x, -0.5, 0.5) * w), [M], apart=True),
    S("clip array bounds", lambda x, lo, hi, w: np.sum(np.clip(x, lo, hi) * w),
      [M, (4,), (3, 1)], ((-2.0, 2.0), (-1.5, -0.1), (0.1, 1.5)), apart=True),
    S("clip float bounds", lambda x, lo, hi, w: np.sum(np.clip(x, lo, hi) * w),
      [M, FLOAT, FLOAT], ((-2.0, 2.0), (-1.5, -0.1), (0.1, 1.5)), apart=True),
    S("clip lower only", lambda x, lo, w: np.sum(np.clip(x, lo, None) * w), [M, (4,)], apart=True),
    S("clip max keyword", lambda x, hi, w: np.sum(np.clip(x, max=hi) * w), [M, FLOAT], apart=True),
    S("x.clip", lambda x, lo, hi, w: np.sum(x.clip(lo, hi) * w),
      [M, FLOAT, (4,)], ((-2.0, 2.0), (-1.5, -0.1), (0.1, 1.5)), apart=True),
    S("x.clip(max=)", lambda x, w: np.sum(x.clip(max=0.5) * w), [M], apart=True),
    # reductions: axis None, int, negative, tuple; keepdims; 0-d arrays, floats and lists
    S("sum", lambda x, w: np.sum(x) * w, [M]),
    S("sum axis 0", lambda x, w: np.sum(np.sum(x, axis=0) * w), [M]),
    S("sum axis -1 keepdims", lambda x, w: np.sum(np.sum(x, axis=-1, keepdims=True) * w), [(2, 3, 4)]),
    S("sum axis tuple", lambda x, w: np.sum(np.sum(x, axis=(0, 2)) * w), [(2, 3, 4)]),
    S("sum positional axis", lambda x, w: np.sum(np.sum(x, 1) * w), [M]),
    S("sum keepdims", lambda x, w: np.sum(np.sum(x, keepdims=True) * w), [M]),
    S("sum 0-d", lambda x, w: np.sum(x) * w, [()]),
    S("sum float", lambda x, w: np.sum(x) * w, [FLOAT]),
    S("sum list", lambda a, b, w: np.sum(np.sum([a, b, 2.0]) * w), [FLOAT, FLOAT]),
    S("x.sum", lambda x, w: np.sum(x.sum(axis=(0, -1)) * w), [(2, 3, 4)]),
    S("x.sum()", lambda x, w: x.sum() * w, [M]),
    S("mean", lambda x, w: np.mean(x) * w, [M]),
    S("mean axis tuple keepdims", lambda x, w: np.sum(np.mean(x, axis=(1, 2), keepdims=True) * w), [(2, 3, 4)]),
    S("x.mean", lambda x, w: np.sum(x.mean(-1) * w), [M]),
    S("max", lambda x, w: np.max(x) * w, [M], apart=True),
    S("max axis 0", lambda x, w: np.sum(np.max(x, axis=0) * w), [M], apart=True),
    S("max axis tuple keepdims", lambda x, w: np.sum(np.max(x, axis=(0, 2), keepdims=True) * w),
      [(2, 3, 4)], apart=True),
    S("min axis -1", lambda x, w: np.sum(np.min(x, axis=-1) * w), [M], apart=True),
    S("amax", lambda x, w: np.sum(np.amax(x, 1) * w), [M], apart=True),
    S("amin keepdims", lambda x, w: np.sum(np.amin(x, axis=0, keepdims=True) * w), [M], apart=True),
    S("x.max", lambda x, w: np.sum(x.max(axis=1) * w), [M], apart=True),
    S("x.min()", lambda x, w: x.min() * w, [M], apart=True),
    S("prod", lambda x, w: np.prod(x) * w, [(2, 3)], (0.5, 1.5)),
    S("prod axis -1", lambda x, w: np.sum(np.prod(x, axis=-1) * w), [(2, 3, 4)], (0.5, 1.5)),
    S("prod axis tuple keepdims", lambda x, w: np.sum(np.prod(x, axis=(0, 2), keepdims=True) * w),
      [(2, 3, 4)], (0.5, 1.5)),
    S("prod mixed signs", lambda x, w: np.sum(np.prod(x, axis=0) * w), [M], (-1.5, 1.5)),
    S("x.prod", lambda x, w: np.sum(x.prod(0) * w), [M], (0.5, 1.5)),
    S("var", lambda x, w: np.var(x) * w, [M]),
    S("var axis ddof", lambda x, w: np.sum(np.var(x, axis=1, ddof=1) * w), [M]),
    S("std axis keepdims", lambda x, w: np.sum(np.std(x, axis=0, keepdims=True) * w), [M], apart=True),
    S("x.std", lambda x, w: x.std() * w, [M], apart=True),
    S("x.var", lambda x, w: np.sum(x.var(axis=(0, 1)) * w), [(2, 3, 2)]),
    S("cumsum", lambda x, w: np.sum(np.cumsum(x) * w), [M]),
    S("cumsum axis", lambda x, w: np.sum(np.cumsum(x, axis=1) * w), [M]),
    S("x.cumsum", lambda x, w: np.sum(x.cumsum(-2) * w), [(2, 3, 2)]),
    S("norm vector", lambda x, w: np.linalg.norm(x) * w, [(5,)], apart=True),
    S("norm Frobenius", lambda x, w: np.linalg.norm(x) * w, [M], apart=True),
    S("norm axis keepdims", lambda x, w: np.sum(np.linalg.norm(x, axis=1, keepdims=True) * w), [M], apart=True),
    S("norm ord 2 axis", lambda x, w: np.sum(np.linalg.norm(x, 2, 0) * w), [M], apart=True),
    S("norm ord 3 vector", lambda x, w: np.linalg.norm(x, 3) * w, [(5,)], apart=True),
    S("norm ord 1 axis", lambda x, w: np.sum(np.linalg.norm(x, 1, axis=1) * w), [M], apart=True),
    S("norm ord 0.5 axis keepdims", lambda x, w: np.sum(np.linalg.norm(x, 0.5, 0, True) * w),
      [M], (0.5, 2.0), apart=True),
    S("norm ord inf vector", lambda x, w: np.linalg.norm(x, np.inf) * w, [(5,)], apart=True),
    S("norm ord -inf axis", lambda x, w: np.sum(np.linalg.norm(x, -np.inf, axis=0) * w), [M], apart=True),
    # matrix norms of SVDs: x plus a matrix of distinct singular values 6, 4, 2, x small, so that
    # they stay distinct and nonzero (where they meet the norm has a kink)
    S("norm nuclear", lambda x, w: np.linalg.norm(x + SPREAD, "nuc") * w, [M], (-0.5, 0.5)),
    S("norm nuclear axes", lambda x, w: np.sum(np.linalg.norm(x + SPREAD[:, None, :], "nuc", axis=(0, 2)) * w),
      [(3, 2, 4)], (-0.5, 0.5)),
    S("norm matrix 2", lambda x, w: np.linalg.norm(x + SPREAD, 2) * w, [M], (-0.5, 0.5)),
    S("norm matrix -2 keepdims", lambda x, w: np.sum(np.linalg.norm(x + SPREAD[:, :3], -2, (1, 2), True) * w),
      [(2, 3, 3)], (-0.5, 0.5)),
    S("trace", lambda x, w: np.trace(x) * w, [M]),
    S("trace offset", lambda x, w: np.trace(x, 1) * w, [M]),
    S("trace axes", lambda x, w: np.sum(np.trace(x, 0, 0, 2) * w), [(3, 2, 4)]),
    # products
    S("matmul", lambda x, y, w: np.sum(np.matmul(x, y) * w), [(2, 3), (3, 4)]),
    S("matmul vector matrix", lambda x, y, w: np.sum(np.matmul(x, y) * w), [(3,), (3, 4)]),
    S("matmul batched", lambda x, y, w: np.sum(np.matmul(x, y) * w), [(2, 2, 3), (3, 4)]),
    S("@ broadcast batches", lambda x, y, w: np.sum((x @ y) * w), [(2, 1, 2, 3), (3, 3, 2)]),
    S("dot matrices", lambda x, y, w: np.sum(np.dot(x, y) * w), [(2, 3), (3, 4)]),
    S("dot vectors", lambda x, y, w: np.dot(x, y) * w, [(3,), (3,)]),
    S("dot matrix vector", lambda x, y, w: np.sum(np.dot(x, y) * w), [(2, 3), (3,)]),
    S("dot vector matrix", lambda x, y, w: np.sum(np.dot(x, y) * w), [(3,), (3, 2)]),
    S("dot float", lambda x, y, w: np.sum(np.dot(x, y) * w), [FLOAT, (3,)]),
    S("dot 0-d", lambda x, y, w: np.sum(np.dot(x, y) * w), [M, ()]),
    S("dot 3-d", lambda x, y, w: np.sum(np.dot(x, y) * w), [(2, 2, 3), (2, 3, 2)]),
    S("x.dot", lambda x, y, w: np.sum(x.dot(y) * w), [(2, 3), (3, 4)]),
    S("inner vectors", lambda x, y, w: np.inner(x, y) * w, [(3,), (3,)]),
    S("inner matrices", lambda x, y, w: np.sum(np.inner(x, y) * w), [(2, 3), (4, 3)]),
    S("inner float", lambda x, y, w: np.sum(np.inner(x, y) * w), [(3,), FLOAT]),
    S("vdot vectors", lambda x, y, w: np.vdot(x, y) * w, [(3,), (3,)]),
    S("vdot of a matrix and a vector", lambda x, y, w: np.vdot(x, y) * w, [(2, 3), (6,)]),
    S("outer", lambda x, y, w: np.sum(np.outer(x, y) * w), [(3,), (4,)]),
    S("outer flattens", lambda x, y, w: np.sum(np.outer(x, y) * w), [(2, 2), FLOAT]),
    # shapes
    S("reshape", lambda x, w: np.sum(np.reshape(x, (4, 3)) * w), [M]),
    S("reshape -1 order F", lambda x, w: np.sum(np.reshape(x, (2, -1), order="F") * w), [M]),
    S("x.reshape(*shape)", lambda x, w: np.sum(x.reshape(2, 6) * w), [M]),
    S("x.reshape(shape)", lambda x, w: np.sum(x.reshape((6, 2)) * w), [M]),
    S("ravel", lambda x, w: np.sum(np.ravel(x) * w), [M]),
    S("ravel order F", lambda x, w: np.sum(np.ravel(x, order="F") * w), [M]),
    S("x.ravel", lambda x, w: np.sum(x.ravel() * w), [(2, 3, 2)]),
    S("x.flatten", lambda x, w: np.sum(x.flatten("F") * w), [M]),
    S("squeeze", lambda x, w: np.sum(np.squeeze(x) * w), [(3, 1, 4, 1)]),
    S("squeeze axis", lambda x, w: np.sum(np.squeeze(x, axis=1) * w), [(3, 1, 1)]),
    S("x.squeeze", lambda x, w: np.sum(x.squeeze() * w), [(1, 4)]),
    S("expand_dims", lambda x, w: np.sum(np.expand_dims(x, -1) * w), [M]),
    S("expand_dims tuple", lambda x, w: np.sum(np.expand_dims(x, (0, 2)) * w), [(4,)]),
    S("broadcast_to", lambda x, w: np.sum(np.broadcast_to(x, (2, 3, 4)) * w), [(3, 1)]),
    S("broadcast_to float", lambda x, w: np.sum(np.broadcast_to(x, (3,)) * w), [FLOAT]),
    S("transpose", lambda x, w: np.sum(np.transpose(x) * w), [(2, 3, 4)]),
    S("transpose axes", lambda x, w: np.sum(np.transpose(x, (1, 2, 0)) * w), [(2, 3, 4)]),
    S("transpose negative axes", lambda x, w: np.sum(np.transpose(x, [0, -1, -2]) * w), [(2, 3, 4)]),
    S("x.transpose()", lambda x, w: np.sum(x.transpose() * w), [M]),
    S("x.transpose(*axes)", lambda x, w: np.sum(x.transpose(2, 0, 1) * w), [(2, 3, 4)]),
    S("x.transpose(axes)", lambda x, w: np.sum(x.transpose((1, 0, 2)) * w), [(2, 3, 4)]),
    S("x.T", lambda x, w: np.sum(x.T * w), [(2, 3, 4)]),
    S("swapaxes", lambda x, w: np.sum(np.swapaxes(x, 0, -1) * w), [(2, 3, 4)]),
    S("x.swapaxes", lambda x, w: np.sum(x.swapaxes(1, 2) * w), [(2, 3, 4)]),
    S("moveaxis", lambda x, w: np.sum(np.moveaxis(x, 0, -1) * w), [(2, 3, 4)]),
    S("moveaxis several", lambda x, w: np.sum(np.moveaxis(x, (0, 1), (2, 0)) * w), [(2, 3, 4)]),
    # arrays from values, copies and casts
    S("array of floats", lambda a, b, c, w: np.sum(np.array([a, b, c]) * w), [FLOAT, FLOAT, FLOAT]),
    S("array of nested lists", lambda a, b, c, w: np.sum(np.array([[a, b], [c, 1.0]]) * w), [FLOAT, FLOAT, FLOAT]),
    S("array of arrays", lambda x, y, w: np.sum(np.array([x, y]) * w), [(4,), (4,)]),
    S("array of an array", lambda x, w: np.sum(np.array(x) * w), [M]),
    S("array ndmin", lambda x, w: np.sum(np.array(x, ndmin=3) * w), [(4,)]),
    S("asarray of a tuple", lambda a, b, w: np.sum(np.asarray((a, b)) * w), [FLOAT, FLOAT]),
    S("asarray float64 of float32", lambda x, w: np.sum(np.asarray(x, dtype=np.float64) * w), [M], dtypes=("float32",)),
    S("copy", lambda x, w: np.sum(np.copy(x) * w), [M]),
    S("x.copy", lambda x, w: np.sum(x.copy() * w), [M]),
    S("x.astype", lambda x, w: np.sum(x.astype(np.float64) * w), [M], dtypes=("float32",)),
    S("float64 of a float", lambda a, w: np.float64(a) * w, [FLOAT]),
    S("float32 of a 0-d array", lambda x, w: np.float32(x) * w, [()], dtypes=("float32",)),
    S("x.item()", lambda x, w: x.item() * w, [(1, 1)]),
    S("x.item(i)", lambda x, w: x.item(5) * w, [M]),
    S("x.item(i, j)", lambda x, w: x.item(2, 1) * w, [M]),
    S("full", lambda a, w: np.sum(np.full((2, 3), a) * w), [FLOAT]),
    S("full of an array", lambda x, w: np.sum(np.full((2, 3, 4), x) * w), [(3, 1)]),
    S("full_like", lambda x, a, w: np.sum(np.full_like(x, a) * w), [M, FLOAT]),
    S("linspace", lambda a, b, w: np.sum(np.linspace(a, b, 5) * w), [FLOAT, FLOAT]),
    S("linspace no endpoint", lambda a, b, w: np.sum(np.linspace(a, b, 4, endpoint=False) * w), [FLOAT, FLOAT]),
    S("linspace arrays axis", lambda x, y, w: np.sum(np.linspace(x, y, 3, axis=1) * w), [(2,), (2,)]),
    S("arange", lambda a, s, w: np.sum(np.arange(a, 2.0, s) * w), [FLOAT, FLOAT], ((0.1, 0.3), (0.5, 0.55))),
    # sequences of arrays
    S("concatenate", lambda x, y, w: np.sum(np.concatenate((x, y)) * w), [M, (2, 4)]),
    S("concatenate list axis -1", lambda x, y, z, w: np.sum(np.concatenate([x, y, z], axis=-1) * w),
      [M, (3, 1), (3, 2)]),
    S("concatenate axis None", lambda x, y, w: np.sum(np.concatenate((x, y), axis=None) * w), [M, (5,)]),
    S("concatenate a list of floats", lambda x, a, b, w: np.sum(np.concatenate((x, [a, b])) * w), [(3,), FLOAT, FLOAT]),
    S("concatenate axis 1", lambda x, y, w: np.sum(np.concatenate((x, y), axis=1) * w), [M, (3, 2)]),
    S("stack", lambda x, y, w: np.sum(np.stack((x, y)) * w), [M, M]),
    S("stack axis -1", lambda x, y, w: np.sum(np.stack([x, y], axis=-1) * w), [M, M]),
    S("stack floats", lambda a, b, w: np.sum(np.stack([a, b]) * w), [FLOAT, FLOAT]),
    S("hstack vectors", lambda x, y, w: np.sum(np.hstack((x, y)) * w), [(3,), (2,)]),
    S("hstack matrices", lambda x, y, w: np.sum(np.hstack([x, y]) * w), [M, (3, 2)]),
    S("vstack vectors", lambda x, y, w: np.sum(np.vstack((x, y)) * w), [(4,), (4,)]),
    S("vstack matrices", lambda x, y, w: np.sum(np.vstack([x, y]) * w), [M, (1, 4)]),
    S("split first", lambda x, w: np.sum(np.split(x, 2, axis=1)[0] * w), [M]),
    S("split second", lambda x, w: np.sum(np.split(x, [1])[1] * w), [M]),
    S("array_split", lambda x, w: np.sum(np.array_split(x, 3)[2] * w), [(7,)]),
]
SPECS += gather("SPECS")  # the further families, tests/specs/


# ---- the checker ------------------------------------------------------------------------------


class _OutputShape:
    """Stands in for the weights once, to learn the shape of the output they multiply."""

    __array_ufunc__ = None  # numpy defers `output * probe` to `__rmul__`

    def __init__(self):
        self.shape = None

    def __rmul__(self, output):
        self.shape = np.shape(output)
        return output


def _weights(spec: Spec, inputs: tuple, dtype: str) -> np.ndarray:
    """Fixed random weights in +-[0.5, 1.5], one per element of the operation's output."""
    probe = _OutputShape()
    spec.function(*inputs, probe)
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    magnitudes = rng.uniform(0.5, 1.5, probe.shape)
    return (magnitudes * rng.choice([-1.0, 1.0], probe.shape)).astype(dtype)


def _grid(low: float, high: float, offset: float):
    first, last = math.ceil((low - offset) / GRID), math.floor((high - offset) / GRID)
    return st.integers(first, last).map(lambda k: offset + k * GRID)


@st.composite
def _inputs(draw, spec: Spec, dtype: str) -> tuple:
    inputs = []
    for position, (shape, (low, high)) in enumerate(zip(spec.shapes, spec.domains(), strict=True)):
        if spec.apart:  # each input on its own shifted grid: exact in float32, no ties anywhere
            elements = _grid(low, high, GRID * (position + 1) / (len(spec.shapes) + 1))
        else:
            elements = st.floats(low, high, allow_subnormal=False)
        if shape == FLOAT:
            inputs.append(draw(elements))
        else:
            array = draw(hnp.arrays(np.float64, shape, elements=elements, unique=spec.apart))
            inputs.append(array.astype(dtype))
    return tuple(inputs)


def _numeric_gradient(function: Callable, inputs: tuple, weights: np.ndarray, position: int):
    """d function / d inputs[position] in float64, by Richardson-extrapolated central differences."""
    point = [value if type(value) is float else np.asarray(value, np.float64) for value in inputs]
    weights = weights.astype(np.float64)

    def derivative(evaluate, t: float) -> float:
        h = STEP * max(abs(t), 1.0)
        wide = (evaluate(t + h) - evaluate(t - h)) / (2 * h)
        narrow = (evaluate(t + h / 2) - evaluate(t - h / 2)) / h
        return (4 * narrow - wide) / 3

    def at(value) -> float:
        arguments = list(point)
        arguments[position] = value
        return float(function(*arguments, weights))

    x = point[position]
    if type(x) is float:
        return derivative(at, x)
    gradient = np.empty(x.shape)
    for index in np.ndindex(x.shape):
        def moved(t, index=index):
            shifted = x.copy()
            shifted[index] = t
            return at(shifted)

        gradient[index] = derivative(moved, float(x[index]))
    return gradient


def _same(a, b) -> bool:
    return type(a) is type(b) and np.array_equal(a, b, equal_nan=True)


def check(spec: Spec, inputs: tuple, dtype: str) -> None:
    """The checker: value, types, shapes and dtypes, and finite differences (see the module doc)."""
    weights = _weights(spec, inputs, dtype)
    argnums = tuple(range(len(inputs)))
    value, gradients = cpsgrad.value_and_grad(spec.function, argnums=argnums)(*inputs, weights)
    original = spec.function(*inputs, weights)
    assert _same(value, original), (value, original)
    again = cpsgrad.grad(spec.function, argnums=argnums)(*inputs, weights)
    assert all(_same(a, b) for a, b in zip(gradients, again, strict=True))
    rtol, atol = TOLERANCES[dtype]
    for position, (x, gradient) in enumerate(zip(inputs, gradients, strict=True)):
        if type(x) is float:
            assert type(gradient) is float, (position, type(gradient))
        else:
            assert type(gradient) is np.ndarray, (position, type(gradient))
            assert (gradient.shape, gradient.dtype) == (x.shape, x.dtype), (position, gradient.shape, gradient.dtype)
        expected = _numeric_gradient(spec.function, inputs, weights, position)
        scale = max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
        np.testing.assert_allclose(
            gradient, expected, rtol=rtol, atol=atol * scale, err_msg=f"{spec.name}: input {position} of {inputs}"
        )


CHECKS = [pytest.param(spec, dtype, id=f"{spec.name}-{dtype}") for spec in SPECS for dtype in spec.dtypes]


@pytest.mark.parametrize(("spec", "dtype"), CHECKS)
def test_rule_matches_finite_differences(spec, dtype):
    @settings(max_examples=EXAMPLES, database=None)
    @given(_inputs(spec, dtype))
    def run(inputs):
        check(spec, inputs, dtype)

    run()


# ---- every rule is in the table ---------------------------------------------------------------


_COVERED = (numpy_rules.__name__ + ".", "cpsgrad.rules.scipy.")  # the rule families every spec table covers


def _differentiable_primitives() -> dict[object, object]:
    """The primitives cpsgrad/rules/numpy/ and cpsgrad/rules/scipy/ give a derivative, by the
    table's key (an id; for a method bound to an object, as `np.add.reduce`, its owner's and name)."""
    return {
        _key(primitive): primitive
        for primitive in TABLE.primitives()
        if any(r.differentiable and r.template.__module__.startswith(_COVERED) for r in TABLE.rules_for(primitive))
    }


def _called(function: Callable) -> set:
    """Table keys (registry._key) of the functions, module attributes, objects' methods (a bound
    method's function too), array methods or attributes and ufunc methods a function's code names,
    its closure's values included."""
    named: set = set()
    value = None
    code = function.__code__
    for instruction in dis.get_instructions(function):
        if instruction.opname == "LOAD_GLOBAL":  # a module (np, scipy.special), a function imported by name, an object
            value = function.__globals__.get(instruction.argval, getattr(builtins, instruction.argval, None))
        # a closure's value
        elif instruction.opname.startswith("LOAD_DEREF") and instruction.argval in code.co_freevars:
            value = function.__closure__[code.co_freevars.index(instruction.argval)].cell_contents
        elif instruction.opname.startswith(("LOAD_FAST", "LOAD_DEREF")):  # a local: an array
            value = np.ndarray
            continue
        elif instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and value is not None:
            value = getattr(value, instruction.argval, None)
        else:
            value = None
            continue
        named.add(_key(value))
        if type(value) is types.MethodType:
            named.add(id(value.__func__))
    return named


def test_every_numpy_rule_has_a_spec():
    covered = set().union(*(_called(spec.function) for spec in SPECS))
    missing = [getattr(p, "__qualname__", repr(p))
               for key, p in _differentiable_primitives().items() if key not in covered]
    assert not missing, f"numpy rules without a spec: {missing}"


# ---- kinks, against jax.grad ------------------------------------------------------------------

W4 = np.array([1.0, -2.0, 0.5, 3.0])
W5 = np.array([1.0, -2.0, 0.5, 3.0, 1.5])


def _jnp():
    return pytest.importorskip("jax.numpy")


K = Kink
A = np.array
KINKS = [
    K(
        "abs at 0 and -0",
        lambda x: np.sum(np.abs(x) * W4),
        lambda x: _jnp().sum(_jnp().abs(x) * W4),
        (A([0.0, -0.0, 1.5, -1.5]),),
    ),
    K(
        "fabs at 0",
        lambda x: np.sum(np.fabs(x) * W4),
        lambda x: _jnp().sum(_jnp().fabs(x) * W4),
        (A([0.0, -0.0, 1.5, -1.5]),),
    ),
    K(
        "maximum ties",
        lambda x, y: np.sum(np.maximum(x, y) * W4),
        lambda x, y: _jnp().sum(_jnp().maximum(x, y) * W4),
        (A([1.0, 2.0, 3.0, 0.0]), A([1.0, 0.0, 3.0, 2.0])),
        (0, 1),
    ),
    K(
        "minimum ties",
        lambda x, y: np.sum(np.minimum(x, y) * W4),
        lambda x, y: _jnp().sum(_jnp().minimum(x, y) * W4),
        (A([1.0, 2.0, 3.0, 0.0]), A([1.0, 0.0, 3.0, 2.0])),
        (0, 1),
    ),
    K(
        "maximum NaN",
        lambda x, y: np.sum(np.maximum(x, y) * W4),
        lambda x, y: _jnp().sum(_jnp().maximum(x, y) * W4),
        (A([np.nan, 1.0, np.nan, 2.0]), A([1.0, np.nan, np.nan, 2.0])),
        (0, 1),
    ),
    K(
        "relu by maximum at 0",
        lambda x: np.sum(np.maximum(x, 0.0) * W4),
        lambda x: _jnp().sum(_jnp().maximum(x, 0.0) * W4),
        (A([0.0, -1.0, 2.0, 0.0]),),
    ),
    K(
        "fmax ties and NaN",
        lambda x, y: np.sum(np.fmax(x, y) * W4),
        lambda x, y: _jnp().sum(_jnp().fmax(x, y) * W4),
        (A([1.0, np.nan, 2.0, 3.0]), A([1.0, 1.0, np.nan, 0.0])),
        (0, 1),
    ),
    K(
        "fmin ties and NaN",
        lambda x, y: np.sum(np.fmin(x, y) * W4),
        lambda x, y: _jnp().sum(_jnp().fmin(x, y) * W4),
        (A([1.0, np.nan, 2.0, 3.0]), A([1.0, 1.0, np.nan, 0.0])),
        (0, 1),
    ),
    K(
        "clip at bounds",
        lambda x, lo, hi: np.sum(np.clip(x, lo, hi) * W5),
        lambda x, lo, hi: _jnp().sum(_jnp().clip(x, lo, hi) * W5),
        (A([0.0, 1.0, 0.5, -0.5, 1.5]), 0.0, 1.0),
        (0, 1, 2),
    ),
    K(
        "clip with low == high == x",
        lambda x, lo, hi: np.sum(np.clip(x, lo, hi) * W4),
        lambda x, lo, hi: _jnp().sum(_jnp().clip(x, lo, hi) * W4),
        (A([0.5, 0.5, 0.2, 0.9]), A([0.5, 0.2, 0.5, 0.5]), A([0.5, 0.5, 0.5, 0.2])),
        (0, 1, 2),
    ),
    K(
        "relu by where at 0",
        lambda x: np.sum(np.where(x > 0.0, x, 0.0) * W4),
        lambda x: _jnp().sum(_jnp().where(x > 0.0, x, 0.0) * W4),
        (A([0.0, -1.0, 2.0, 0.0]),),
    ),
    K(
        "sqrt at 0",
        lambda x: np.sum(np.sqrt(x) * W4[:2]),
        lambda x: _jnp().sum(_jnp().sqrt(x) * W4[:2]),
        (A([0.0, 4.0]),),
    ),
    K(
        "cbrt at 0",
        lambda x: np.sum(np.cbrt(x) * W4[:2]),
        lambda x: _jnp().sum(_jnp().cbrt(x) * W4[:2]),
        (A([0.0, 8.0]),),
    ),
    K(
        "log at 0",
        lambda x: np.sum(np.log(x) * W4[:2]),
        lambda x: _jnp().sum(_jnp().log(x) * W4[:2]),
        (A([0.0, 2.0]),),
    ),
    K(
        "reciprocal at 0",
        lambda x: np.sum(np.reciprocal(x) * W4[:2]),
        lambda x: _jnp().sum(_jnp().reciprocal(x) * W4[:2]),
        (A([0.0, 2.0]),),
    ),
    K(
        "arcsin, arccos, arctanh at 1",
        lambda x: np.sum((np.arcsin(x) + np.arccos(x) + np.arctanh(x)) * W4[:2]),
        lambda x: _jnp().sum((_jnp().arcsin(x) + _jnp().arccos(x) + _jnp().arctanh(x)) * W4[:2]),
        (A([1.0, 0.5]),),
    ),
    K(
        "max ties",
        lambda x: np.max(x),
        lambda x: _jnp().max(x),
        (A([1.0, 3.0, 3.0, 3.0]),),
    ),
    K(
        "max ties on an axis",
        lambda x: np.sum(np.max(x, axis=0) * W4[:2]),
        lambda x: _jnp().sum(_jnp().max(x, axis=0) * W4[:2]),
        (A([[1.0, 2.0], [1.0, 0.0], [0.0, 2.0]]),),
    ),
    K(
        "min ties keepdims",
        lambda x: np.sum(np.min(x, axis=1, keepdims=True) * W4[:2, None]),
        lambda x: _jnp().sum(_jnp().min(x, axis=1, keepdims=True) * W4[:2, None]),
        (A([[1.0, 1.0, 3.0], [0.0, 2.0, 0.0]]),),
    ),
    K(
        "max with NaN",
        lambda x: np.max(x),
        lambda x: _jnp().max(x),
        (A([1.0, np.nan, 2.0]),),
    ),
    K(
        "prod with zeros",
        lambda x: np.sum(np.prod(x, axis=1) * W4[:3]),
        lambda x: _jnp().sum(_jnp().prod(x, axis=1) * W4[:3]),
        (A([[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [1.0, 2.0, 3.0]]),),
    ),
    K(
        "hypot at the origin",
        lambda x, y: np.sum(np.hypot(x, y) * W4[:3]),
        lambda x, y: _jnp().sum(_jnp().hypot(x, y) * W4[:3]),
        (A([0.0, 0.0, 3.0]), A([0.0, 2.0, -4.0])),
        (0, 1),
    ),
    K(
        "arctan2 at the origin",
        lambda y, x: np.sum(np.arctan2(y, x) * W4[:2]),
        lambda y, x: _jnp().sum(_jnp().arctan2(y, x) * W4[:2]),
        (A([0.0, 1.0]), A([0.0, -1.0])),
        (0, 1),
    ),
    K(
        "logaddexp ties and -inf",
        lambda x, y: np.sum(np.logaddexp(x, y) * W4[:2]),
        lambda x, y: _jnp().sum(_jnp().logaddexp(x, y) * W4[:2]),
        (A([1.0, -np.inf]), A([1.0, -np.inf])),
        (0, 1),
    ),
    K(
        "norm of zero",
        lambda x: np.linalg.norm(x),
        lambda x: _jnp().linalg.norm(x),
        (np.zeros(3),),
    ),
    K(
        "std of a constant",
        lambda x: np.std(x),
        lambda x: _jnp().std(x),
        (np.ones(3),),
    ),
    K(
        "power at base 0",
        lambda x, y: np.sum(np.power(x, y) * W4[:3]),
        lambda x, y: _jnp().sum(_jnp().power(x, y) * W4[:3]),
        (A([0.0, 0.0, 0.0]), A([0.5, 2.0, -1.0])),
        (0, 1),
    ),
    K(
        "power of a negative base",
        lambda x, y: np.sum(np.power(x, y) * W4[:2]),
        lambda x, y: _jnp().sum(_jnp().power(x, y) * W4[:2]),
        (A([-2.0, -1.5]), A([2.0, 3.0])),
        (0, 1),
    ),
    K(
        "rounding has gradient 0",
        lambda x: np.sum((np.round(x) + np.floor(x) + np.sign(x)) * W4) + np.sum(x),
        lambda x: _jnp().sum((_jnp().round(x) + _jnp().floor(x) + _jnp().sign(x)) * W4) + _jnp().sum(x),
        (A([0.5, -0.0, 1.5, 2.2]),),
    ),
]
KINKS += gather("KINKS")


@pytest.mark.parametrize("kink", KINKS, ids=lambda kink: kink.name)
def test_kinks_follow_jax(kink):
    jax = pytest.importorskip("jax")
    with np.errstate(all="ignore"):  # the functions are infinite or NaN at some of these points
        value, gradients = cpsgrad.value_and_grad(kink.function, argnums=kink.argnums)(*kink.arguments)
        assert _same(value, kink.function(*kink.arguments))
    with jax.enable_x64(True):
        expected = jax.grad(kink.jax_function, argnums=kink.argnums)(*kink.arguments)
    for gradient, reference in zip(gradients, expected, strict=True):
        reference = np.asarray(reference)  # rounding-level entries (1e-17 of a 0.16 gradient) differ by BLAS's order
        atol = 1e-15 * max(1.0, float(np.max(np.abs(reference)))) if reference.size else 0.0
        np.testing.assert_allclose(gradient, reference, rtol=1e-12, atol=atol, err_msg=kink.name)


def test_power_keeps_the_operator_conventions():
    """x ** 0 has gradient 0 at x = 0 (JAX's jnp.power gives NaN there; `**` decides)."""

    def f(x, y):
        return np.sum(np.power(x, y))

    def g(x, y):
        return np.sum(x**y)

    arguments = (np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 0.0]))
    expected = cpsgrad.grad(g, argnums=(0, 1))(*arguments)
    for gradient, reference in zip(cpsgrad.grad(f, argnums=(0, 1))(*arguments), expected, strict=True):
        assert _same(gradient, reference)
    assert _same(expected[0], np.array([0.0, 1.0, 0.0]))


# ---- the symbolic zero: a result computed but not used ----------------------------------------
# After `if flag:` the untaken branch hands the rule's backward the adjoint `0.0`, standing for
# zeros of any shape; every backward must give a correct (zero) contribution, never NaN.





def _unused_triple(op):
    def f(x, z, u, flag):
        y = op(x, z, u)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused_reduction(op, axis, keepdims):
    def f(x, flag):
        y = op(x, axis=axis, keepdims=keepdims)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused_sequence(op):
    def f(x, z, flag):
        y = op((x, z))
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused_where(x, z, flag):
    y = np.where(x > 0.5, x, z)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_transposed(x, flag):
    y = x.T
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_full(x, flag):
    y = np.full((2, 3), x)
    if flag:
        return np.sum(y)
    return np.sum(x)


X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])  # zeros where some derivatives are infinite
V = np.array([0.25, 0.5, 0.75])
ONE = np.array([[0.5]])

_UNARY = [
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.cbrt, np.square,
    np.reciprocal, np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh,
    np.tanh, np.arcsinh, np.arctanh, np.degrees, np.radians, np.abs, np.fabs, np.negative,
    np.positive, np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.var, np.std,
    np.cumsum, np.linalg.norm, np.trace, np.ravel, np.squeeze, np.transpose, np.array, np.asarray,
    np.copy, np.ndarray.sum, np.ndarray.mean, np.ndarray.max, np.ndarray.min, np.ndarray.prod,
    np.ndarray.var, np.ndarray.std, np.ndarray.cumsum, np.ndarray.ravel, np.ndarray.flatten,
    np.ndarray.squeeze, np.ndarray.copy, np.ndarray.transpose, np.rad2deg, np.deg2rad,
]
_BINARY = [
    np.add, np.subtract, np.multiply, np.divide, np.mod, np.fmod, np.power, np.float_power,
    np.maximum, np.minimum, np.fmax, np.fmin, np.arctan2, np.hypot, np.logaddexp, np.logaddexp2,
    np.matmul, np.dot, np.ndarray.dot, np.inner, np.outer, np.full_like,
]
ZERO_CASES = (
    [(op, _unused(op), (X,)) for op in _UNARY]
    + [
        (op, _unused_pair(op), (X, X[::-1]))
        for op in _BINARY
        if op not in (np.matmul, np.dot, np.ndarray.dot, np.inner, np.outer)
    ]
    + [(op, _unused_pair(op), (X, X.T)) for op in (np.matmul, np.dot, np.ndarray.dot)]
    + [(op, _unused_pair(op), (V, V)) for op in (np.inner, np.vdot, np.outer, np.linspace)]
    + [(op, _unused_triple(op), (X, V, V + 0.5)) for op in (np.clip, np.ndarray.clip)]
    + [
        (op, _unused_reduction(op, (0, -1), True), (X,))
        for op in (np.sum, np.mean, np.max, np.prod, np.var, np.std, np.linalg.norm)
    ]
    + [(op, _unused_reduction(op, 1, False), (X,)) for op in (np.ndarray.sum, np.ndarray.min, np.ndarray.mean)]
    + [(op, _unused_sequence(op), (X, X)) for op in (np.concatenate, np.stack, np.hstack, np.vstack)]
    + [
        (np.arccosh, _unused(np.arccosh), (X + 2.0,)),
        (np.float64, _unused(np.float64), (0.5,)),
        (np.float32, _unused(np.float32), (np.array(0.5, np.float32),)),
        (np.ndarray.item, _unused(np.ndarray.item), (ONE,)),
        (np.ndarray.item, _unused_with(np.ndarray.item, 4), (X,)),
        (np.ndarray.astype, _unused_with(np.ndarray.astype, np.float32), (X,)),
        (np.reshape, _unused_with(np.reshape, (3, 2)), (X,)),
        (np.ndarray.reshape, _unused_with(np.ndarray.reshape, (3, 2)), (X,)),
        (np.expand_dims, _unused_with(np.expand_dims, 1), (X,)),
        (np.broadcast_to, _unused_with(np.broadcast_to, (4, 2, 3)), (X,)),
        (np.transpose, _unused_with(np.transpose, (1, 0)), (X,)),
        (np.swapaxes, _unused_triple(np.swapaxes), (X, 0, 1)),
        (np.ndarray.swapaxes, _unused_triple(np.ndarray.swapaxes), (X, 0, 1)),
        (np.moveaxis, _unused_triple(np.moveaxis), (X, 0, 1)),
        (np.arange, _unused_pair(np.arange), (0.25, 2.0)),
        (np.split, _unused_with(np.split, 2), (X,)),
        (np.array_split, _unused_with(np.array_split, 2), (X,)),
        (np.where, _unused_where, (X, V)),
        (np.ndarray.T, _unused_transposed, (X,)),
        (np.full, _unused_full, (0.5,)),
    ]
)
ZERO_CASES += gather("ZERO_CASES")


@pytest.mark.parametrize(
    ("op", "function", "arguments"),
    ZERO_CASES,
    ids=[f"{getattr(op, '__qualname__', op)}-{i}" for i, (op, _, _) in enumerate(ZERO_CASES)],
)
def test_an_unused_result_passes_the_symbolic_zero(op, function, arguments):
    argnums = tuple(
        i for i, a in enumerate(arguments) if type(a) is float or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    )
    with np.errstate(all="ignore"):  # the unused results are infinite or NaN in places
        value, gradients = cpsgrad.value_and_grad(function, argnums=argnums)(*arguments, False)
        assert _same(value, function(*arguments, False))
    for position, gradient in zip(argnums, gradients, strict=True):
        expected = np.ones_like(arguments[0]) if position == 0 else np.zeros_like(arguments[position])
        assert np.array_equal(gradient, expected), (position, gradient)


def test_every_numpy_rule_meets_the_symbolic_zero():
    covered = {_key(op) for op, _, _ in ZERO_CASES}
    missing = [getattr(p, "__qualname__", repr(p))
               for key, p in _differentiable_primitives().items() if key not in covered]
    assert not missing, f"numpy rules without a symbolic-zero case: {missing}"


# ---- results that carry no gradient -----------------------------------------------------------

NOT_DIFFERENTIABLE = [
    lambda x: np.sum(x) + np.sum(np.zeros_like(x)) + np.sum(np.ones_like(x)) + np.size(np.empty_like(x)),
    lambda x: np.sum(x) + np.sum(np.zeros(np.shape(x))) + np.sum(np.ones(x.shape)) + np.size(np.empty(x.size)),
    lambda x: np.sum(x) + np.sum(np.full_like(x, 2.0)) + np.sum(np.full(x.shape, 2.0)),
    lambda x: np.sum(x) + np.sum(np.eye(x.shape[0])) + np.sum(np.identity(x.shape[1])) + np.sum(np.tri(x.ndim)),
    lambda x: np.sum(x) + np.sum(np.arange(x.size)) + np.sum(np.linspace(0.0, 1.0, x.size)),
    lambda x: np.sum(x) + float(np.argmax(x)) + float(np.argmin(x)) + np.sum(np.argsort(x)),
    lambda x: np.sum(x) + float(x.argmax()) + float(x.argmin()) + np.sum(x.argsort()),
    lambda x: np.sum(x) + np.sum(np.sign(x)) + np.sum(np.floor(x)) + np.sum(np.ceil(x)) + np.sum(np.fix(x)),
    lambda x: np.sum(x) + np.sum(np.round(x)) + np.sum(np.around(x, 1)) + np.sum(np.rint(x)) + np.sum(np.trunc(x)),
    lambda x: np.sum(x) + np.sum(np.floor_divide(x, 0.3)) + np.sum(np.heaviside(x, 0.5)) + np.sum(np.signbit(x)),
    lambda x: np.sum(x) + np.sum(np.isnan(x)) + np.sum(np.isinf(x)) + np.sum(np.isfinite(x)),
    lambda x: np.sum(x) + np.sum(np.isclose(x, 0.5)) + float(np.allclose(x, x)) + float(np.array_equal(x, x)),
    lambda x: np.sum(x) + np.sum(np.equal(x, 0.5)) + np.sum(np.not_equal(x, 0.5)) + np.sum(np.less(x, 0.5)),
    lambda x: np.sum(x) + np.sum(np.less_equal(x, 0.5)) + np.sum(np.greater(x, 0.5)) + np.sum(np.greater_equal(x, 0.5)),
    lambda x: (
        np.sum(x)
        + np.sum(np.logical_and(x, x))
        + np.sum(np.logical_or(x, x))
        + np.sum(np.logical_xor(x, x))
        + np.sum(np.logical_not(x))
    ),
    lambda x: np.sum(x) + np.shape(x)[0] + np.ndim(x) + np.size(x) + x.ndim + x.size + x.shape[1],
    lambda x: np.sum(x) + float(np.any(x)) + float(np.all(x)) + float(x.any()) + float(x.all()),
    lambda x: np.sum(x) + float(len(np.nonzero(x)[0])) + float(len(x.nonzero()[0])) + float(np.count_nonzero(x)),
    lambda x: np.sum(x) + float(len(np.flatnonzero(x))) + float(len(np.where(x)[0])),
    lambda x: np.sum(x) + np.sum(np.searchsorted(np.ravel(x), 0.5)) + np.sum(np.digitize(x, np.array([0.5]))),
    lambda x: (
        np.sum(x) + np.sum(np.zeros(3, dtype=x.dtype)) + np.sum(x.astype(np.int64)) + np.sum(np.array(x, dtype=int))
    ),
]


@pytest.mark.parametrize("function", NOT_DIFFERENTIABLE, ids=range(len(NOT_DIFFERENTIABLE)))
def test_non_differentiable_results_give_no_gradient(function):
    x = np.array([[0.25, -1.5, 2.0], [0.0, 0.75, -0.5]])
    value, gradient = cpsgrad.value_and_grad(function)(x)
    assert value == function(x)
    assert _same(gradient, np.ones_like(x))


def test_casts_give_the_gradient_back_in_the_input_dtype():
    def f(x, w):
        return np.sum(x.astype(np.float32) * w)

    x = np.array([0.1, 0.2, 0.3])
    w = np.array([1.0, -2.0, 0.5], np.float32)
    gradient = cpsgrad.grad(f)(x, w)
    assert gradient.dtype == np.float64
    assert _same(gradient, w.astype(np.float64))


# ---- mutation self-test: a wrong rule must fail the checker -----------------------------------


def _wrong_tanh(x):
    y = np.tanh(x)
    y_d = yield y
    x_d += chain(y_d, 1.0 + y * y, x)  # noqa: F821, F841  (wrong on purpose)


def _one_row_add(x, y):
    z = np.add(x, y)
    z_d = yield z
    x_d += z_d  # noqa: F821, F841
    y_d += z_d[0]  # noqa: F821, F841  (one row instead of the sum over rows, on purpose)


def _spec(name: str) -> Spec:
    return next(spec for spec in SPECS if spec.name == name)


@pytest.mark.parametrize(
    ("primitive", "template", "name"), [(np.tanh, _wrong_tanh, "tanh"), (np.add, _one_row_add, "add")]
)
def test_a_wrong_rule_fails_the_checker(primitive, template, name):
    spec = _spec(name)
    inputs = tuple(np.linspace(0.1, 0.9, math.prod(shape)).reshape(shape) for shape in spec.shapes)
    wrong = TABLE.add(primitive, template)
    try:
        with pytest.raises(AssertionError):
            check(spec, inputs, "float64")
    finally:
        TABLE.remove(wrong)
    check(spec, inputs, "float64")
