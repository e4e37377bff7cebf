"""Specs of cpsgrad/rules/numpy/{arrangements,sorting,padding,parts}.py: diagonals, rolls, tiles,
flips, joins and splits; sorting and selection by index; np.pad in every mode; the parts of real
numbers. Ties (sorts, the extrema of np.pad) are compared with JAX in KINKS."""

from __future__ import annotations

import numpy as np

from tests.specs import FLOAT, Kink, M, S, unused, unused_pair, unused_with

CHOSEN = np.array([[0, 1, 2, 1], [2, 2, 0, 1], [1, 0, 0, 2]])
FIRST = np.array([[True, False, False, True], [False, False, True, False], [True, True, False, False]])
SECOND = np.array([[True, True, False, False], [False, True, True, False], [False, False, True, True]])
ORDER = np.array([[2, 0, 1, 0], [1, 1, 3, 2], [0, 3, 2, 1]])
W4 = np.array([1.0, -2.0, 0.5, 3.0])
W7 = np.arange(1.0, 8.0)
W30 = np.arange(1.0, 31.0).reshape(5, 6)

SPECS = [
    # diagonals and triangles
    S("diag of a vector", lambda x, w: np.sum(np.diag(x) * w), [(3,)]),
    S("diag of a vector k", lambda x, w: np.sum(np.diag(x, -2) * w), [(3,)]),
    S("diag of a matrix", lambda x, w: np.sum(np.diag(x) * w), [M]),
    S("diag of a matrix k", lambda x, w: np.sum(np.diag(x, k=1) * w), [M]),
    S("diagonal", lambda x, w: np.sum(np.diagonal(x) * w), [M]),
    S("diagonal offset axes", lambda x, w: np.sum(np.diagonal(x, -1, 2, 0) * w), [(3, 2, 4)]),
    S("x.diagonal", lambda x, w: np.sum(x.diagonal(offset=1, axis1=1, axis2=2) * w), [(2, 3, 4)]),
    S("tril", lambda x, w: np.sum(np.tril(x) * w), [M]),
    S("tril k batched", lambda x, w: np.sum(np.tril(x, -1) * w), [(2, 3, 4)]),
    S("triu k", lambda x, w: np.sum(np.triu(x, 1) * w), [M]),
    S("triu of a vector", lambda x, w: np.sum(np.triu(x) * w), [(4,)]),
    S("x.trace", lambda x, w: x.trace(1) * w, [M]),
    S("x.trace axes", lambda x, w: np.sum(x.trace(-1, 2, 1) * w), [(2, 3, 4)]),
    # rolls, tiles, repeats, flips, rotations
    S("roll", lambda x, w: np.sum(np.roll(x, 2) * w), [M]),
    S("roll axis", lambda x, w: np.sum(np.roll(x, -1, axis=1) * w), [M]),
    S("roll tuples", lambda x, w: np.sum(np.roll(x, (1, 5), (0, -1)) * w), [(2, 3, 4)]),
    S("rollaxis", lambda x, w: np.sum(np.rollaxis(x, 2) * w), [(2, 3, 4)]),
    S("rollaxis start", lambda x, w: np.sum(np.rollaxis(x, 0, 3) * w), [(2, 3, 4)]),
    S("rollaxis negative", lambda x, w: np.sum(np.rollaxis(x, -1, -2) * w), [(2, 3, 4)]),
    S("tile", lambda x, w: np.sum(np.tile(x, 2) * w), [M]),
    S("tile more axes", lambda x, w: np.sum(np.tile(x, (2, 1, 3)) * w), [(3, 2)]),
    S("tile float", lambda a, w: np.sum(np.tile(a, (2, 2)) * w), [FLOAT]),
    S("repeat", lambda x, w: np.sum(np.repeat(x, 2) * w), [M]),
    S("repeat axis", lambda x, w: np.sum(np.repeat(x, 3, axis=1) * w), [M]),
    S("repeat per element", lambda x, w: np.sum(np.repeat(x, [2, 0, 1], axis=0) * w), [M]),
    S("repeat per element flat", lambda x, w: np.sum(np.repeat(x, [1, 3, 0, 2]) * w), [(2, 2)]),
    S("repeat float", lambda a, w: np.sum(np.repeat(a, 3) * w), [FLOAT]),
    S("x.repeat", lambda x, w: np.sum(x.repeat(2, -1) * w), [M]),
    S("flip", lambda x, w: np.sum(np.flip(x) * w), [M]),
    S("flip axis", lambda x, w: np.sum(np.flip(x, 1) * w), [(2, 3, 4)]),
    S("flip axes", lambda x, w: np.sum(np.flip(x, (0, -1)) * w), [(2, 3, 4)]),
    S("fliplr", lambda x, w: np.sum(np.fliplr(x) * w), [M]),
    S("flipud", lambda x, w: np.sum(np.flipud(x) * w), [(4,)]),
    S("rot90", lambda x, w: np.sum(np.rot90(x) * w), [M]),
    S("rot90 k axes", lambda x, w: np.sum(np.rot90(x, 3, (2, 0)) * w), [(2, 3, 4)]),
    S("rot90 twice", lambda x, w: np.sum(np.rot90(x, k=-2) * w), [M]),
    # at least n dimensions
    S("atleast_1d", lambda a, w: np.sum(np.atleast_1d(a) * w), [FLOAT]),
    S("atleast_2d", lambda x, w: np.sum(np.atleast_2d(x) * w), [(4,)]),
    S("atleast_3d of a vector", lambda x, w: np.sum(np.atleast_3d(x) * w), [(4,)]),
    S("atleast_3d of a matrix", lambda x, w: np.sum(np.atleast_3d(x) * w), [M]),
    S("atleast_1d several", lambda a, x, w: np.sum(np.atleast_1d(a, x)[0] * w) + np.sum(np.atleast_1d(a, x)[1]),
      [FLOAT, M]),
    S("atleast_2d several", lambda x, y, w: np.sum(np.atleast_2d(x, y)[1] * w), [(3,), (4,)]),
    S("atleast_3d three", lambda x, y, z, w: np.sum(np.atleast_3d(x, y, z)[2] * w) + np.sum(np.atleast_3d(x, y, z)[0]),
      [(3,), M, ()]),
    # joins and splits
    S("append", lambda x, y, w: np.sum(np.append(x, y) * w), [M, (2,)]),
    S("append axis", lambda x, y, w: np.sum(np.append(x, y, axis=0) * w), [M, (1, 4)]),
    S("append a float", lambda x, a, w: np.sum(np.append(x, a) * w), [(3,), FLOAT]),
    S("column_stack", lambda x, y, w: np.sum(np.column_stack((x, y)) * w), [(3,), (3, 2)]),
    S("column_stack vectors", lambda x, y, w: np.sum(np.column_stack([x, y]) * w), [(4,), (4,)]),
    S("dstack", lambda x, y, w: np.sum(np.dstack((x, y)) * w), [M, M]),
    S("dstack vectors", lambda x, y, w: np.sum(np.dstack([x, y]) * w), [(3,), (3,)]),
    S("hsplit", lambda x, w: np.sum(np.hsplit(x, 2)[1] * w), [M]),
    S("hsplit vector", lambda x, w: np.sum(np.hsplit(x, [1, 3])[0] * w), [(5,)]),
    S("vsplit", lambda x, w: np.sum(np.vsplit(x, [2])[0] * w), [M]),
    S("dsplit", lambda x, w: np.sum(np.dsplit(x, 2)[1] * w), [(2, 3, 4)]),
    # sorting
    S("sort", lambda x, w: np.sum(np.sort(x) * w), [M], apart=True),
    S("sort axis 0", lambda x, w: np.sum(np.sort(x, axis=0) * w), [M], apart=True),
    S("sort axis None kind", lambda x, w: np.sum(np.sort(x, None, kind="mergesort") * w), [(2, 3, 2)], apart=True),
    S("partition", lambda x, w: np.sum(np.partition(x, 2) * w), [M], apart=True),
    # median: the middle element, or half to each of the two middle ones (even counts)
    S("median", lambda x, w: np.median(x) * w, [(3, 3)], apart=True),
    S("median even count", lambda x, w: np.median(x) * w, [M], apart=True),
    S("median axis 0 odd", lambda x, w: np.sum(np.median(x, axis=0) * w), [M], apart=True),
    S("median axis 1 even", lambda x, w: np.sum(np.median(x, 1) * w), [M], apart=True),
    S("median axes keepdims", lambda x, w: np.sum(np.median(x, axis=(0, 2), keepdims=True) * w),
      [(2, 3, 3)], apart=True),
    S("nanmedian", lambda x, w: np.nanmedian(x) * w, [M], apart=True),
    # quantiles: linear interpolation between neighbours of a stable sort, differentiable in q too
    S("quantile", lambda x, q, w: np.quantile(x, q) * w, [M, FLOAT], ((-2.0, 2.0), (0.05, 0.95)), apart=True),
    S("quantile axis levels", lambda x, w: np.sum(np.quantile(x, [0.2, 0.7], axis=1) * w), [M], apart=True),
    S("quantile axis keepdims midpoint",
      lambda x, w: np.sum(np.quantile(x, 0.4, 0, method="midpoint", keepdims=True) * w),
      [M], apart=True),
    S("percentile axes lower", lambda x, w: np.sum(np.percentile(x, 30.0, axis=(0, 2), method="lower") * w),
      [(2, 3, 3)], apart=True),
    S("percentile higher", lambda x, w: np.percentile(x, 55.0, method="higher") * w, [M], apart=True),
    S("percentile of levels", lambda x, q, w: np.sum(np.percentile(x, q, axis=0) * w),
      [M, (2,)], ((-2.0, 2.0), (10.0, 90.0)),
      apart=True),
    S("nanmedian axis keepdims", lambda x, w: np.sum(np.nanmedian(x, axis=0, keepdims=True) * w), [(3, 3)], apart=True),
    S("median axis -1 keepdims overwrite_input",
      lambda x, w: np.sum(np.median(x, -1, keepdims=True, overwrite_input=True) * w),
      [(2, 3, 2)], apart=True),
    S("partition axis 0 kths", lambda x, w: np.sum(np.partition(x, (0, 2), axis=0) * w), [(4, 3)], apart=True),
    S("partition axis None", lambda x, w: np.partition(x, 3, axis=None)[3] * w, [M], apart=True),
    # selection by index
    S("take", lambda x, w: np.sum(np.take(x, [5, 0, 5, 11]) * w), [M]),
    S("take axis", lambda x, w: np.sum(np.take(x, [[0, 2], [2, 2]], axis=1) * w), [M]),
    S("take wrap", lambda x, w: np.sum(np.take(x, [4, -1], axis=0, mode="wrap") * w), [M]),
    S("take clip", lambda x, w: np.sum(np.take(x, [9, -3, 1], mode="clip") * w), [(5,)]),
    S("take one", lambda x, w: np.take(x, 3) * w, [M]),
    S("x.take", lambda x, w: np.sum(x.take([1, 1, 0], -1) * w), [M]),
    S("take_along_axis", lambda x, w: np.sum(np.take_along_axis(x, ORDER, axis=1) * w), [M]),
    S("take_along_axis axis 0", lambda x, w: np.sum(np.take_along_axis(x, ORDER[:2, :] % 3, 0) * w), [M]),
    S("take_along_axis None", lambda x, w: np.sum(np.take_along_axis(x, np.array([3, 3, 0]), None) * w), [M]),
    S("choose", lambda x, y, z, w: np.sum(np.choose(CHOSEN, [x, y, z]) * w), [M, (4,), FLOAT]),
    S("choose wrap", lambda x, y, w: np.sum(np.choose(CHOSEN, (x, y), mode="wrap") * w), [M, M]),
    S("choose an array", lambda x, w: np.sum(np.choose(CHOSEN, x) * w), [(3, 3, 4)]),
    S("select", lambda x, y, w: np.sum(np.select([FIRST, SECOND], [x, y]) * w), [M, (4,)]),
    S("select default", lambda x, y, d, w: np.sum(np.select([FIRST, SECOND], [x, y], d) * w), [M, M, FLOAT]),
    # np.pad
    S("pad", lambda x, w: np.sum(np.pad(x, 1) * w), [M]),
    S("pad constant values", lambda x, c, w: np.sum(np.pad(x, (1, 2), constant_values=c) * w), [M, FLOAT]),
    S("pad constant values per side",
      lambda x, c, w: np.sum(np.pad(x, ((1, 2), (0, 1)), "constant", constant_values=c) * w),
      [M, (2, 2)]),
    S("pad constant values pair", lambda x, c, w: np.sum(np.pad(x, [(2, 0), (1, 1)], constant_values=c) * w),
      [M, (2,)]),
    S("pad dict", lambda x, w: np.sum(np.pad(x, {1: (1, 3)}) * w), [M]),
    S("pad edge", lambda x, w: np.sum(np.pad(x, ((2,),), "edge") * w), [M]),
    S("pad reflect", lambda x, w: np.sum(np.pad(x, (2, 5), "reflect") * w), [M]),
    S("pad reflect odd", lambda x, w: np.sum(np.pad(x, (2, 5), "reflect", reflect_type="odd") * w), [M]),
    S("pad symmetric", lambda x, w: np.sum(np.pad(x, ((1, 3), (4, 0)), mode="symmetric") * w), [M]),
    S("pad symmetric odd", lambda x, w: np.sum(np.pad(x, 3, mode="symmetric", reflect_type="odd") * w), [(2, 3)]),
    S("pad wrap", lambda x, w: np.sum(np.pad(x, ((5, 1), (2, 7)), "wrap") * w), [M]),
    S("pad linear_ramp", lambda x, w: np.sum(np.pad(x, 2, "linear_ramp") * w), [M]),
    S("pad linear_ramp end values",
      lambda x, e, w: np.sum(np.pad(x, ((1, 2), (3, 1)), "linear_ramp", end_values=e) * w),
      [M, (2, 2)]),
    S("pad linear_ramp end value", lambda x, e, w: np.sum(np.pad(x, (1, 2), "linear_ramp", end_values=e) * w),
      [M, FLOAT]),
    S("pad mean", lambda x, w: np.sum(np.pad(x, ((1, 2), (3, 1)), "mean") * w), [M]),
    S("pad mean stat_length", lambda x, w: np.sum(np.pad(x, 2, "mean", stat_length=((1, 2), (3, 2))) * w), [M]),
    S("pad maximum", lambda x, w: np.sum(np.pad(x, (1, 2), "maximum") * w), [M], apart=True),
    S("pad minimum stat_length", lambda x, w: np.sum(np.pad(x, ((2, 1), (1, 2)), "minimum", stat_length=2) * w), [M],
      apart=True),
    # the parts of real numbers
    S("real", lambda x, w: np.sum(np.real(x) * w), [M]),
    S("real float", lambda a, w: np.real(a) * w, [FLOAT]),
    S("x.real", lambda x, w: np.sum(x.real * w), [M]),
    S("real_if_close", lambda x, w: np.sum(np.real_if_close(x) * w), [M]),
    S("imag", lambda x, w: np.sum((np.imag(x) + x) * w), [M]),
    S("x.imag", lambda x, w: np.sum((x.imag + x) * w), [M]),
    S("conj", lambda x, w: np.sum(np.conj(x) * w), [M]),
    S("conjugate float", lambda a, w: np.conjugate(a) * w, [FLOAT]),
    S("x.conj", lambda x, w: np.sum(x.conj() * w), [M]),
    S("x.conjugate", lambda x, w: np.sum(x.conjugate() * w), [M]),
    S("angle", lambda x, w: np.sum((np.angle(x) + x) * w), [M], apart=True),
]
if hasattr(np, "row_stack"):  # numpy < 2.4
    SPECS.append(S("row_stack", lambda x, y, w: np.sum(np.row_stack((x, y)) * w), [M, (4,)]))


def _jnp():
    import pytest

    return pytest.importorskip("jax.numpy")


A = np.array
KINKS = [
    Kink(
        "median ties, odd count",
        lambda x: np.median(x) * 2.0,
        lambda x: _jnp().median(x) * 2.0,
        (A([1.0, 2.0, 2.0, 3.0, 2.0]),),
    ),
    Kink(
        "median ties, even count",
        lambda x: np.median(x) * 2.0,
        lambda x: _jnp().median(x) * 2.0,
        (A([3.0, 1.0, 2.0, 2.0]),),
    ),
    Kink(
        "nanmedian skips NaNs, ties",
        lambda x: np.sum(np.nanmedian(x, axis=1) * W4[:3]),
        lambda x: _jnp().sum(_jnp().nanmedian(x, axis=1) * W4[:3]),
        (A([[1.0, np.nan, 2.0, 5.0], [4.0, 3.0, np.nan, 3.0], [1.0, 1.0, 3.0, 4.0]]),),
    ),
    Kink(
        "median of a slice holding a NaN, unused",
        lambda x: np.median(x, axis=1)[1] * 2.0,
        lambda x: _jnp().median(x, axis=1)[1] * 2.0,
        (A([[1.0, np.nan, 2.0], [4.0, 3.0, 0.5]]),),
    ),
    Kink(
        "quantile at a knot, with ties: q's gradient 0",
        lambda x, q: np.quantile(x, q) * 2.0 + np.sum(np.quantile(x, [0.5, 0.1], axis=0)),
        lambda x, q: _jnp().quantile(x, q) * 2.0 + _jnp().sum(_jnp().quantile(x, _jnp().array([0.5, 0.1]), axis=0)),
        (A([[1.0, 2.0, 2.0], [0.5, 2.0, 3.0]]), 0.4),
        (0, 1),
    ),
    Kink(
        "percentile between ties",
        lambda x, q: np.percentile(x, q) * 2.0,
        lambda x, q: _jnp().percentile(x, q) * 2.0,
        (A([1.0, 2.0, 2.0, 3.0, 2.0]), 37.0),
        (0, 1),
    ),
    Kink(
        "median ties on an axis",
        lambda x: np.sum(np.median(x, axis=1) * W4[:2]),
        lambda x: _jnp().sum(_jnp().median(x, axis=1) * W4[:2]),
        (A([[1.0, 1.0, 0.0, 1.0], [2.0, 0.5, 0.5, 2.0]]),),
    ),
    Kink(
        "sort ties",
        lambda x: np.sum(np.sort(x) * W4),
        lambda x: _jnp().sum(_jnp().sort(x) * W4),
        (A([1.0, 3.0, 3.0, 0.0]),),
    ),
    Kink(
        "sort ties on an axis",
        lambda x: np.sum(np.sort(x, axis=0) * W4[:2, None]),
        lambda x: _jnp().sum(_jnp().sort(x, axis=0) * W4[:2, None]),
        (A([[1.0, 2.0, 0.0], [1.0, 2.0, -1.0]]),),
    ),
    Kink(
        "partition's kth among ties",
        lambda x: np.partition(x, 1)[1],
        lambda x: _jnp().partition(x, 1)[1],
        (A([1.0, 1.0, 3.0, 1.0]),),
    ),
    Kink(
        "pad maximum ties",
        lambda x: np.sum(np.pad(x, (2, 1), mode="maximum") * W7),
        lambda x: _jnp().sum(_jnp().pad(x, (2, 1), mode="maximum") * W7),
        (A([1.0, 3.0, 3.0, 0.0]),),
    ),
    Kink(
        "pad minimum ties, two axes",
        lambda x: np.sum(np.pad(x, ((1, 2), (2, 1)), "minimum", stat_length=2) * W30),
        lambda x: _jnp().sum(_jnp().pad(x, ((1, 2), (2, 1)), "minimum", stat_length=2) * W30),
        (A([[1.0, 1.0, 3.0], [1.0, 0.0, 0.0]]),),
    ),
    Kink(
        "angle of reals away from 0",
        lambda x: np.sum(np.angle(x) * W4),
        lambda x: _jnp().sum(_jnp().angle(x) * W4),
        (A([1.0, -1.0, 2.5, -0.5]),),
    ),
]


# ---- the symbolic zero ------------------------------------------------------------------------

X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])
V = np.array([0.25, 0.5, 0.75])
INDEX = np.array([[0, 1, 0], [1, 1, 0]])


def _unused_choose(x, z, flag):
    y = np.choose(INDEX, [x, z])
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_select(x, z, flag):
    y = np.select([x > 0.3, x > 0.6], [x, z], 0.5)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_pad(x, c, flag):
    y = np.pad(x, 1, constant_values=c)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_atleast(x, z, flag):
    y = np.atleast_2d(x, z)
    if flag:
        return np.sum(y[0])
    return np.sum(x)


def _unused_attribute(name):
    def f(x, flag):
        y = x.real if name == "real" else x.imag
        if flag:
            return np.sum(y)
        return np.sum(x)

    return f


ZERO_CASES = [
    *[(op, unused(op), (X,)) for op in (
        np.diag, np.diagonal, np.ndarray.diagonal, np.tril, np.triu, np.ndarray.trace, np.fliplr, np.flipud, np.rot90,
        np.flip, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.sort, np.median, np.nanmedian, np.real, np.imag,
        np.conj, np.ndarray.conj,
        np.ndarray.conjugate, np.angle, np.real_if_close, np.column_stack, np.dstack,
    )],
    *[(op, unused_with(op, 0.3), (X,)) for op in (np.quantile, np.percentile)],
    *[(op, unused_with(op, 1), (X,))
      for op in (np.roll, np.rollaxis, np.tile, np.repeat, np.ndarray.repeat, np.partition)],
    *[(op, unused_with(op, [1, 0]), (X,)) for op in (np.take, np.ndarray.take)],
    *[(op, unused_with(op, 3), (X,)) for op in (np.hsplit,)],
    *[(op, unused_with(op, 2), (X,)) for op in (np.vsplit,)],
    (np.dsplit, unused_with(np.dsplit, 1), (X[..., None],)),
    (np.take_along_axis, unused_with(np.take_along_axis, INDEX), (X,)),
    (np.append, unused_pair(np.append), (X, V)),
    (np.choose, _unused_choose, (X, X[::-1])),
    (np.select, _unused_select, (X, X[::-1])),
    (np.pad, _unused_pad, (X, 0.5)),
    (np.atleast_2d, _unused_atleast, (X, V)),
    (np.ndarray.real, _unused_attribute("real"), (X,)),
    (np.ndarray.imag, _unused_attribute("imag"), (X,)),
]
if hasattr(np, "row_stack"):
    ZERO_CASES.append((np.row_stack, unused(np.row_stack), (X,)))
