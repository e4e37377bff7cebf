"""Specs of issue 16's numpy rules: the reductions' `where=` and `initial=`
(cpsgrad/rules/numpy/masked_reductions.py). Masks and NaN are put in at fixed places; an
initial that is a FLOAT input is differentiated too. Ties (initial against the extremum, tied
elements, a NaN selected) are KINKS against JAX."""

from __future__ import annotations

import numpy as np
import pytest

from tests.specs import FLOAT, Kink, S, unused, unused_with

MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])
ROW = np.array([True, False, True, True])  # broadcast along the rows
NAN_AT = np.array([[False, True, False, False], [False, False, False, True], [True, False, False, False]])
OFF_GRID = 0.0625  # an initial between the grid values `apart` inputs take
M = (3, 4)


def _holes(x):
    return np.where(NAN_AT, np.nan, x)


SPECS = [
    # sum
    S("sum where", lambda x, w: np.sum(x, where=MASK) * w, [M]),
    S("sum where axis keepdims", lambda x, w: np.sum(np.sum(x, axis=1, where=MASK, keepdims=True) * w), [M]),
    S("sum where negative axis, broadcast mask", lambda x, w: np.sum(np.sum(x, -2, where=ROW) * w), [M]),
    S("sum where tuple axes", lambda x, w: np.sum(np.sum(x, axis=(0, 2), where=MASK[:, None, :2]) * w), [(3, 2, 2)]),
    S("sum initial", lambda x, w: np.sum(np.sum(x, axis=0, initial=1.5) * w), [M]),
    S("sum initial differentiated", lambda x, c, w: np.sum(np.sum(x, axis=1, initial=c, where=MASK) * w), [M, FLOAT]),
    S("sum method where", lambda x, w: x.sum(where=MASK, axis=0).sum() * w, [M]),
    S("sum method initial", lambda x, c, w: np.sum(x.sum(1, initial=c) * w), [M, FLOAT]),
    S("nansum where initial", lambda x, c, w: np.sum(np.nansum(_holes(x), axis=0, where=ROW, initial=c) * w),
      [M, FLOAT]),
    S("nansum initial", lambda x, w: np.nansum(_holes(x), initial=2.0) * w, [M]),
    # prod
    S("prod where", lambda x, w: np.sum(np.prod(x, axis=1, where=MASK) * w), [M]),
    S("prod where initial differentiated", lambda x, c, w: np.prod(x, where=MASK[:2], initial=c) * w,
      [(2, 4), FLOAT], (0.5, 1.5)),
    S("prod initial keepdims", lambda x, w: np.sum(np.prod(x, axis=0, initial=-2.0, keepdims=True) * w), [M]),
    S("prod method where", lambda x, w: np.sum(x.prod(axis=-1, where=MASK) * w), [M]),
    S("nanprod where initial", lambda x, c, w: np.sum(np.nanprod(_holes(x), axis=1, where=MASK, initial=c) * w),
      [M, FLOAT]),
    S("nanprod initial", lambda x, w: np.sum(np.nanprod(_holes(x), axis=0, initial=0.5) * w), [M]),
    # max, min, amax, amin and the methods
    S("max where initial", lambda x, w: np.sum(np.max(x, axis=1, where=MASK, initial=-3.0) * w), [M], apart=True),
    S("max initial that wins some", lambda x, w: np.sum(np.max(x, axis=0, initial=OFF_GRID) * w), [M], apart=True),
    S("max initial differentiated", lambda x, c, w: np.sum(np.max(x, axis=1, initial=c) * w), [M, FLOAT], apart=True),
    S("min where initial differentiated",
      lambda x, c, w: np.sum(np.min(x, -1, where=MASK, initial=c, keepdims=True) * w),
      [M, FLOAT], apart=True),
    S("amax where tuple axes", lambda x, w: np.sum(np.amax(x, axis=(0, 1), where=MASK[:2, :, None], initial=-9.0) * w),
      [(2, 4, 2)], apart=True),
    S("amin initial", lambda x, w: np.amin(x, initial=OFF_GRID) * w, [M], apart=True),
    S("max method where", lambda x, w: np.sum(x.max(axis=0, where=ROW, initial=-5.0) * w), [M], apart=True),
    S("min method initial", lambda x, c, w: np.sum(x.min(1, initial=c) * w), [M, FLOAT], apart=True),
    S("nanmax where initial", lambda x, c, w: np.sum(np.nanmax(_holes(x), axis=1, where=MASK, initial=c) * w),
      [M, FLOAT],
      apart=True),
    S("nanmin initial", lambda x, w: np.sum(np.nanmin(_holes(x), axis=0, initial=OFF_GRID) * w), [M], apart=True),
    # mean, var, std
    S("mean where", lambda x, w: np.mean(x, where=MASK) * w, [M]),
    S("mean where axis keepdims", lambda x, w: np.sum(np.mean(x, axis=0, where=MASK, keepdims=True) * w), [M]),
    S("mean method where", lambda x, w: np.sum(x.mean(-1, where=ROW) * w), [M]),
    S("nanmean where", lambda x, w: np.sum(np.nanmean(_holes(x), axis=1, where=MASK) * w), [M]),
    S("var where", lambda x, w: np.sum(np.var(x, axis=1, where=MASK) * w), [M]),
    S("var where ddof method", lambda x, w: x.var(ddof=1, where=MASK) * w, [M]),
    S("std where", lambda x, w: np.sum(np.std(x, axis=0, where=MASK, keepdims=True) * w), [M], apart=True),
    S("std where ddof method", lambda x, w: np.sum(x.std(1, ddof=1, where=MASK) * w), [M], apart=True),
    S("nanvar where", lambda x, w: np.sum(np.nanvar(_holes(x), axis=1, where=MASK) * w), [M]),
    S("nanstd where ddof", lambda x, w: np.nanstd(_holes(x), ddof=1, where=MASK) * w, [M], apart=True),
    # ufunc.reduce
    S("add.reduce where", lambda x, w: np.sum(np.add.reduce(x, where=MASK) * w), [M]),
    S("add.reduce initial axis 1", lambda x, c, w: np.sum(np.add.reduce(x, 1, initial=c) * w), [M, FLOAT]),
    S("multiply.reduce where initial", lambda x, w: np.sum(np.multiply.reduce(x, axis=-1, where=MASK, initial=2.0) * w),
      [M]),
    S("multiply.reduce initial differentiated", lambda x, c, w: np.multiply.reduce(x, None, initial=c) * w,
      [(2, 3), FLOAT],
      (0.5, 1.5)),
    S("maximum.reduce where initial", lambda x, c, w: np.sum(np.maximum.reduce(x, where=MASK, initial=c) * w),
      [M, FLOAT],
      apart=True),
    S("minimum.reduce initial keepdims",
      lambda x, w: np.sum(np.minimum.reduce(x, 1, initial=OFF_GRID, keepdims=True) * w),
      [M], apart=True),
    # running extrema (cpsgrad/rules/numpy/ufunc_scans.py)
    S("maximum.accumulate", lambda x, w: np.sum(np.maximum.accumulate(x) * w), [M], apart=True),
    S("maximum.accumulate axis 1 vector", lambda x, w: np.sum(np.maximum.accumulate(x, 0) * w), [(6,)], apart=True),
    S("maximum.accumulate axis 1", lambda x, w: np.sum(np.maximum.accumulate(x, axis=1) * w), [M], apart=True),
    S("minimum.accumulate negative axis", lambda x, w: np.sum(np.minimum.accumulate(x, -1) * w),
      [(2, 3, 4)], apart=True),
    S("minimum.accumulate dtype", lambda x, w: np.sum(np.minimum.accumulate(x, 0, x.dtype) * w), [M], apart=True),
    # reduceat: increasing, repeated and decreasing indices, overlapping segments
    S("add.reduceat", lambda x, w: np.sum(np.add.reduceat(x, [0, 2, 3]) * w), [(5,)]),
    S("add.reduceat overlapping axis 1", lambda x, w: np.sum(np.add.reduceat(x, [0, 3, 1, 1, 2], axis=1) * w), [M]),
    S("multiply.reduceat", lambda x, w: np.sum(np.multiply.reduceat(x, np.array([0, 1, 3]), 0) * w), [(4, 2)]),
    S("multiply.reduceat negative axis", lambda x, w: np.sum(np.multiply.reduceat(x, [2, 0, 1], axis=-1) * w), [M]),
    S("maximum.reduceat", lambda x, w: np.sum(np.maximum.reduceat(x, [0, 2, 2, 1]) * w), [(5, 2)], apart=True),
    S("minimum.reduceat axis 1", lambda x, w: np.sum(np.minimum.reduceat(x, [1, 3], axis=1) * w), [M], apart=True),
]


# ---- symbolic zeros ---------------------------------------------------------------------------

X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])
WHERE = np.array([[True, False, True], [True, True, False]])


def _unused_where(op):
    def f(x, flag):
        y = op(x, where=WHERE, initial=0.5)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused_where_only(op):
    def f(x, flag):
        y = op(x, where=WHERE)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


def _unused_initial(op):
    def f(x, z, flag):
        y = op(x, initial=z)
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


_NO_INITIAL = (np.mean, np.var, np.std, np.nanmean, np.nanvar, np.nanstd)
_REDUCE = (np.add.reduce, np.multiply.reduce, np.maximum.reduce, np.minimum.reduce)
_WITH_INITIAL = (np.sum, np.prod, np.max, np.min, np.amax, np.amin, np.nansum, np.nanprod, np.nanmax, np.nanmin)
ZERO_CASES = [(op, unused(op), (X,)) for op in (np.maximum.accumulate, np.minimum.accumulate)] + [
    (op, unused_with(op, [0, 1]), (X,))
    for op in (np.add.reduceat, np.multiply.reduceat, np.maximum.reduceat, np.minimum.reduceat)
] + [(op, _unused_where(op), (X,)) for op in _WITH_INITIAL + _REDUCE] + [
    (op, _unused_where_only(op), (X,)) for op in _NO_INITIAL
] + [
    (op, _unused_initial(op), (X, 2.0)) for op in _WITH_INITIAL
]


# ---- ties against JAX -------------------------------------------------------------------------
# JAX's max(x, initial=c, where=m) is lax.max(c, reduce_max(where(m, x, -inf))): a tie between c
# and the extremum of x gives half to each side (lax.max), the x side shared equally among its
# tied elements (reduce_max); these rules follow it.


def _jnp():
    return pytest.importorskip("jax.numpy")


TIES = np.array([[1.0, 2.0, 2.0, 0.5], [3.0, 1.0, 3.0, 3.0], [0.5, 0.5, -1.0, 0.5]])
W3 = np.array([1.0, -2.0, 0.5])
W4 = np.array([1.0, -2.0, 0.5, 3.0])
K = Kink
KINKS = [
    K("max initial ties the extremum",
      lambda x, c: np.sum(np.max(x, axis=1, initial=c) * W3),
      lambda x, c: _jnp().sum(_jnp().max(x, axis=1, initial=c) * W3),
      (TIES, 2.0), (0, 1)),
    K("min where initial ties and masked ties",
      lambda x, c: np.sum(np.min(x, axis=0, where=MASK, initial=c) * W4),
      lambda x, c: _jnp().sum(_jnp().min(x, axis=0, where=MASK, initial=c) * W4),
      (TIES, 0.5), (0, 1)),
    K("max where a masked element is larger",
      lambda x: np.sum(np.max(x, axis=1, where=~MASK, initial=-4.0) * W3),
      lambda x: _jnp().sum(_jnp().max(x, axis=1, where=~MASK, initial=-4.0) * W3),
      (TIES,)),
    K("sum and prod where initial",
      lambda x, c: np.sum(np.sum(x, axis=0, where=MASK, initial=c) * W4) + np.prod(x, where=MASK, initial=c),
      lambda x, c: (_jnp().sum(_jnp().sum(x, axis=0, where=MASK, initial=c) * W4)
                    + _jnp().prod(x, where=MASK, initial=c)),
      (TIES, 1.5), (0, 1)),
    K("mean var std where",
      lambda x: np.sum((np.mean(x, 1, where=MASK) + np.var(x, 1, where=MASK) + np.std(x, 1, where=MASK)) * W3),
      lambda x: _jnp().sum((_jnp().mean(x, 1, where=MASK) + _jnp().var(x, 1, where=MASK)
                            + _jnp().std(x, 1, where=MASK)) * W3),
      (TIES + np.arange(12.0).reshape(3, 4) / 7,)),
    K("maximum.reduce initial ties, minimum.reduce where",
      lambda x, c: (np.sum(np.maximum.reduce(x, 1, initial=c) * W3)
                    + np.sum(np.minimum.reduce(x, where=MASK, initial=c) * W4)),
      lambda x, c: (_jnp().sum(_jnp().max(x, 1, initial=c) * W3)
                    + _jnp().sum(_jnp().min(x, 0, where=MASK, initial=c) * W4)),
      (TIES, 0.5), (0, 1)),
    # two-way ties only: where three or more elements tie, JAX's split follows its scan's tree
    # (ufunc_scans.py; tests/test_rules_more.py checks the equal split here)
    K("maximum and minimum accumulate, two-way ties",
      lambda x: np.sum(np.maximum.accumulate(x, 1) * TIES) + np.sum(np.minimum.accumulate(x) * TIES),
      lambda x: _jnp().sum(_jnp().maximum.accumulate(x, 1) * TIES) + _jnp().sum(_jnp().minimum.accumulate(x) * TIES),
      (np.array([[1.0, 1.0, 0.5, 2.0], [0.0, 2.0, 2.0, 3.0], [0.0, -1.0, 3.0, 3.0]]),)),
    K("reduceat ties and zeros",
      lambda x: np.sum(np.maximum.reduceat(x, [0, 2], 1) * W3[:, None]) + np.sum(np.multiply.reduceat(x, [0, 1]) * W4),
      lambda x: _jnp().sum(_jnp().maximum.reduceat(x, _jnp().array([0, 2]), 1) * W3[:, None])
      + _jnp().sum(_jnp().multiply.reduceat(x, _jnp().array([0, 1])) * W4),
      (np.array([[1.0, 1.0, 0.0, 2.0], [0.0, 2.0, 2.0, 3.0], [0.0, 0.0, 3.0, 3.0]]),)),
    K("add.reduceat with repeated and decreasing indices",
      lambda x: np.sum(np.add.reduceat(x, [0, 3, 1, 1]) * W4),
      lambda x: _jnp().sum(_jnp().add.reduceat(x, _jnp().array([0, 3, 1, 1])) * W4),
      (np.arange(5.0),)),
]
