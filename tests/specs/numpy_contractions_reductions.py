"""Specs of cpsgrad/rules/numpy/nan_reductions.py and ufunc_methods.py: the NaN-ignoring
reductions (NaN put in by `np.where` at fixed places; literal NaN, ties and all-NaN slices in
KINKS against JAX) and the ufunc methods reduce, accumulate and outer."""

import numpy as np
import pytest

from tests.specs import FLOAT, Kink, S, unused, unused_pair

NAN_AT = np.array([[False, True, False, False], [False, False, False, True], [True, False, False, False]])


def _jnp():
    return pytest.importorskip("jax.numpy")


SPECS = [
    S("nansum", lambda x, w: np.nansum(np.where(NAN_AT, np.nan, x)) * w, [(3, 4)]),
    S("nansum axis keepdims", lambda x, w: np.sum(np.nansum(np.where(NAN_AT, np.nan, x), axis=1, keepdims=True) * w),
      [(3, 4)]),
    S("nanmean axis", lambda x, w: np.sum(np.nanmean(np.where(NAN_AT, np.nan, x), axis=0) * w), [(3, 4)]),
    S("nanmean", lambda x, w: np.nanmean(x) * w, [(3, 4)]),
    S("nanvar ddof", lambda x, w: np.sum(np.nanvar(np.where(NAN_AT, np.nan, x), axis=1, ddof=1) * w), [(3, 4)]),
    S("nanvar", lambda x, w: np.nanvar(np.where(NAN_AT, np.nan, x)) * w, [(3, 4)]),
    S("nanstd axis tuple", lambda x, w: np.sum(np.nanstd(np.where(NAN_AT[None], np.nan, x), axis=(0, 2)) * w),
      [(2, 3, 4)], apart=True),
    S("nanstd keepdims ddof",
      lambda x, w: np.sum(np.nanstd(np.where(NAN_AT, np.nan, x), axis=1, ddof=1, keepdims=True) * w),
      [(3, 4)], apart=True),
    S("nanmax", lambda x, w: np.nanmax(np.where(NAN_AT, np.nan, x)) * w, [(3, 4)], apart=True),
    S("nanmax axis", lambda x, w: np.sum(np.nanmax(np.where(NAN_AT, np.nan, x), axis=0) * w), [(3, 4)], apart=True),
    S("nanmin axis keepdims", lambda x, w: np.sum(np.nanmin(np.where(NAN_AT, np.nan, x), axis=-1, keepdims=True) * w),
      [(3, 4)], apart=True),
    S("nanprod axis", lambda x, w: np.sum(np.nanprod(np.where(NAN_AT, np.nan, x), axis=1) * w), [(3, 4)], (0.5, 1.5)),
    S("nanprod", lambda x, w: np.nanprod(x) * w, [(2, 3)], (-1.5, 1.5)),
    S("nancumsum", lambda x, w: np.sum(np.nancumsum(np.where(NAN_AT, np.nan, x)) * w), [(3, 4)]),
    S("nancumsum axis", lambda x, w: np.sum(np.nancumsum(np.where(NAN_AT, np.nan, x), axis=0) * w), [(3, 4)]),
    S("nancumprod axis", lambda x, w: np.sum(np.nancumprod(np.where(NAN_AT, np.nan, x), axis=1) * w), [(3, 4)]),
    # ufunc methods: reduce (numpy's default axis 0), accumulate, outer
    S("add.reduce", lambda x, w: np.sum(np.add.reduce(x) * w), [(3, 4)]),
    S("add.reduce axis None", lambda x, w: np.add.reduce(x, axis=None) * w, [(3, 4)]),
    S("add.reduce axis keepdims", lambda x, w: np.sum(np.add.reduce(x, 1, keepdims=True) * w), [(3, 4)]),
    S("multiply.reduce", lambda x, w: np.sum(np.multiply.reduce(x, axis=-1) * w), [(3, 4)], (-1.5, 1.5)),
    S("maximum.reduce", lambda x, w: np.sum(np.maximum.reduce(x) * w), [(3, 4)], apart=True),
    S("minimum.reduce axis tuple", lambda x, w: np.minimum.reduce(x, axis=(0, 1)) * w, [(3, 4)], apart=True),
    S("fmax.reduce", lambda x, w: np.sum(np.fmax.reduce(np.where(NAN_AT, np.nan, x), axis=1) * w),
      [(3, 4)], apart=True),
    S("fmin.reduce", lambda x, w: np.sum(np.fmin.reduce(x) * w), [(3, 4)], apart=True),
    S("add.accumulate", lambda x, w: np.sum(np.add.accumulate(x) * w), [(3, 4)]),
    S("add.accumulate axis", lambda x, w: np.sum(np.add.accumulate(x, axis=1) * w), [(3, 4)]),
    S("multiply.accumulate", lambda x, w: np.sum(np.multiply.accumulate(x, 1) * w), [(3, 4)]),
    S("add.outer", lambda x, y, w: np.sum(np.add.outer(x, y) * w), [(3,), (2, 2)]),
    S("subtract.outer", lambda x, y, w: np.sum(np.subtract.outer(x, y) * w), [(2, 2), (3,)]),
    S("multiply.outer", lambda x, y, w: np.sum(np.multiply.outer(x, y) * w), [(3,), (4,)]),
    S("multiply.outer float", lambda a, y, w: np.sum(np.multiply.outer(a, y) * w), [FLOAT, (4,)]),
    S("divide.outer", lambda x, y, w: np.sum(np.divide.outer(x, y) * w), [(3,), (4,)], ((-2.0, 2.0), (0.5, 2.0))),
    S("maximum.outer", lambda x, y, w: np.sum(np.maximum.outer(x, y) * w), [(3,), (4,)], apart=True),
    S("minimum.outer", lambda x, y, w: np.sum(np.minimum.outer(x, y) * w), [(2, 2), (3,)], apart=True),
]

W3 = np.array([1.0, -2.0, 0.5])
W4 = np.array([1.0, -2.0, 0.5, 3.0])
HOLES = np.array([[1.0, np.nan, 3.0, 3.0], [np.nan, np.nan, np.nan, np.nan], [0.0, 2.0, np.nan, -1.0]])

# NaN positions and all-NaN slices get a zero gradient, as in JAX; where a slice's result is NaN
# (nanmean, nanvar of an all-NaN row) the functions are masked with nan_to_num, whose gradient
# there is 0, so the comparison reads the non-NaN rows.
KINKS = [
    Kink(
        "nansum with NaN",
        lambda x: np.sum(np.nansum(x, axis=1) * W3),
        lambda x: _jnp().sum(_jnp().nansum(x, axis=1) * W3),
        (HOLES,),
    ),
    Kink(
        "nanmean with NaN",
        lambda x: np.sum(np.nanmean(x[::2], axis=1) * W3[:2]),
        lambda x: _jnp().sum(_jnp().nanmean(x[::2], axis=1) * W3[:2]),
        (HOLES,),
    ),
    Kink(
        "nanvar and nanstd with NaN",
        lambda x: np.sum((np.nanvar(x[::2], axis=1) + np.nanstd(x[::2], axis=1, ddof=1)) * W3[:2]),
        lambda x: _jnp().sum((_jnp().nanvar(x[::2], axis=1) + _jnp().nanstd(x[::2], axis=1, ddof=1)) * W3[:2]),
        (HOLES,),
    ),
    Kink(
        "nanmax ties and NaN",
        lambda x: np.sum(np.nanmax(x[::2], axis=1) * W3[:2]) + np.nanmin(x),
        lambda x: _jnp().sum(_jnp().nanmax(x[::2], axis=1) * W3[:2]) + _jnp().nanmin(x),
        (HOLES,),
    ),
    Kink(
        "nanprod with NaN and zeros",
        lambda x: np.sum(np.nanprod(x, axis=1) * W3),
        lambda x: _jnp().sum(_jnp().nanprod(x, axis=1) * W3),
        (HOLES,),
    ),
    Kink(
        "nancumsum and nancumprod with NaN",
        lambda x: np.sum((np.nancumsum(x, axis=1) + np.nancumprod(x, axis=1)) * W4),
        lambda x: _jnp().sum((_jnp().nancumsum(x, axis=1) + _jnp().nancumprod(x, axis=1)) * W4),
        (HOLES,),
    ),
    Kink(
        "maximum.reduce and minimum.reduce ties",
        lambda x: np.sum(np.maximum.reduce(x) * W4) + np.minimum.reduce(x, axis=None),
        lambda x: _jnp().sum(_jnp().max(x, axis=0) * W4) + _jnp().min(x),
        (np.array([[1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 3.0], [0.0, 2.0, 0.0, 3.0]]),),
    ),
    Kink(
        "multiply.reduce and multiply.accumulate with zeros",
        lambda x: np.sum(np.multiply.reduce(x, 1) * W3) + np.sum(np.multiply.accumulate(x, 1) * W4),
        lambda x: _jnp().sum(_jnp().prod(x, axis=1) * W3) + _jnp().sum(_jnp().cumprod(x, axis=1) * W4),
        (np.array([[0.0, 2.0, 3.0, 1.0], [0.0, 0.0, 3.0, 2.0], [1.0, 2.0, 0.0, -1.0]]),),
    ),
    Kink(
        "maximum.outer ties",
        lambda x, y: np.sum(np.maximum.outer(x, y) * W4),
        lambda x, y: _jnp().sum(_jnp().maximum(x[:, None], y[None, :]) * W4),
        (np.array([1.0, 2.0]), np.array([1.0, 2.0, 0.0, 3.0])),
        (0, 1),
    ),
]

X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])
V = np.array([0.25, 0.5, 0.75])

_NAN_REDUCTIONS = [np.nansum, np.nanmean, np.nanvar, np.nanstd, np.nanmax, np.nanmin, np.nanprod, np.nancumsum,
                   np.nancumprod]
_METHODS = [
    np.add.reduce, np.multiply.reduce, np.maximum.reduce, np.minimum.reduce, np.fmax.reduce,
    np.fmin.reduce, np.add.accumulate, np.multiply.accumulate,
]
_OUTER = [np.add.outer, np.subtract.outer, np.multiply.outer, np.divide.outer, np.maximum.outer, np.minimum.outer]

ZERO_CASES = (
    [(op, unused(op), (X,)) for op in _NAN_REDUCTIONS + _METHODS]
    + [(op, unused_pair(op), (V, V + 0.5)) for op in _OUTER]
)
