"""Specs of cpsgrad/rules/numpy/differences.py: diff, gradient, cumprod, polyval, interp, sinc,
nan_to_num; the kinks (interp at its samples, sinc at 0, cumprod with zeros) against JAX."""

import numpy as np
import pytest

from tests.specs import FLOAT, Kink, S, unused, unused_with


def _jnp():
    return pytest.importorskip("jax.numpy")


XP = np.array([-1.5, -0.5, 0.25, 1.0, 2.5])  # interp's samples (not differentiable)
COORDINATES = np.array([0.0, 0.5, 1.5, 1.75, 3.0])  # uneven spacing for np.gradient
W3 = np.array([1.0, -2.0, 0.5])
W4 = np.array([1.0, -2.0, 0.5, 3.0])
W5 = np.array([1.0, -2.0, 0.5, 3.0, 1.5])


def _gradient_pair(x, w):
    rows, columns = np.gradient(x, 0.5, 2.0, edge_order=2)
    return np.sum(rows * w) + np.sum(columns * w * w)


def _gradient_second(x, w):
    parts = np.gradient(x)
    return np.sum(parts[1] * w)


def _gradient_spacing(h, x, w):
    parts = np.gradient(x, h)
    return np.sum(parts[0] * w) + np.sum(parts[1] * w)


SPECS = [
    # diff: n, axis, prepend and append (differentiable, 0-d or arrays)
    S("diff", lambda x, w: np.sum(np.diff(x) * w), [(6,)]),
    S("diff n 2 axis 0", lambda x, w: np.sum(np.diff(x, 2, axis=0) * w), [(4, 3)]),
    S("diff n 0", lambda x, w: np.sum(np.diff(x, 0) * w), [(4,)]),
    S("diff prepend append", lambda x, p, q, w: np.sum(np.diff(x, axis=1, prepend=p, append=q) * w),
      [(3, 4), (), (3, 1)]),
    S("diff prepend float n 3", lambda x, p, w: np.sum(np.diff(x, n=3, prepend=p) * w), [(5,), FLOAT]),
    # gradient: spacings, coordinates, axes, edge orders; a list for several axes
    S("gradient 1-d", lambda x, w: np.sum(np.gradient(x) * w), [(5,)]),
    S("gradient spacing edge 2", lambda x, w: np.sum(np.gradient(x, 0.5, edge_order=2) * w), [(5,)]),
    S("gradient coordinates", lambda x, w: np.sum(np.gradient(x, COORDINATES) * w), [(5,)]),
    S("gradient coordinates edge 2", lambda x, w: np.sum(np.gradient(x, COORDINATES, edge_order=2) * w), [(5,)]),
    S("gradient two spacings", _gradient_pair, [(3, 4)]),
    S("gradient one of two axes", _gradient_second, [(3, 4)]),
    S("gradient axis", lambda x, w: np.sum(np.gradient(x, axis=0) * w), [(3, 4)]),
    S("gradient axis coordinates", lambda x, w: np.sum(np.gradient(x, COORDINATES, axis=-1, edge_order=2) * w),
      [(2, 5)]),
    S("gradient scalar spacing", _gradient_spacing, [(), (3, 4)], ((0.5, 2.0), (-2.0, 2.0))),
    # cumprod and the method (zeros: KINKS)
    S("cumprod", lambda x, w: np.sum(np.cumprod(x) * w), [(3, 4)]),
    S("cumprod axis", lambda x, w: np.sum(np.cumprod(x, axis=1) * w), [(3, 4)]),
    S("x.cumprod", lambda x, w: np.sum(x.cumprod(0) * w), [(3, 4)]),
    # polyval: coefficients and points
    S("polyval", lambda p, x, w: np.sum(np.polyval(p, x) * w), [(4,), (3, 2)]),
    S("polyval float", lambda p, x, w: np.polyval(p, x) * w, [(3,), FLOAT]),
    # interp: x and fp (xp is not differentiable); left/right values; period. On the grid, clear of
    # the samples (multiples of 1/8) by more than a finite-difference step
    S("interp", lambda x, fp, w: np.sum(np.interp(x, XP, fp) * w),
      [(6,), (5,)], ((-2.0, 3.0), (-2.0, 2.0)), apart=True),
    S("interp left right", lambda x, fp, a, b, w: np.sum(np.interp(x, XP, fp, a, b) * w),
      [(3, 2), (5,), FLOAT, FLOAT], ((-2.0, 3.0), (-2.0, 2.0), (-1.0, 1.0), (-1.0, 1.0)), apart=True),
    S("interp float", lambda x, fp, w: np.interp(x, XP, fp) * w, [FLOAT, (5,)], ((-1.4, 2.4), (-2.0, 2.0)), apart=True),
    S("interp period", lambda x, fp, w: np.sum(np.interp(x, XP, fp, period=4.5) * w),
      [(6,), (5,)], ((-5.0, 5.0), (-2.0, 2.0)), apart=True),
    # sinc (near 0 too), nan_to_num
    S("sinc", lambda x, w: np.sum(np.sinc(x) * w), [(3, 4)]),
    S("sinc near 0", lambda x, w: np.sum(np.sinc(x) * w), [(4,)], (-0.02, 0.02)),
    S("nan_to_num", lambda x, w: np.sum(np.nan_to_num(x) * w), [(3, 4)]),
]

# interp's samples are kinks: JAX takes the right segment's slope (the last segment's at the last
# sample), and so do we; numpy's value there is fp[i] either way.
KINKS = [
    Kink(
        "interp at its samples and outside",
        lambda x, fp: np.sum(np.interp(x, XP, fp) * W5),
        lambda x, fp: _jnp().sum(_jnp().interp(x, XP, fp) * W5),
        (np.array([-1.5, 0.25, 2.5, -3.0, 4.0]), np.array([1.0, -1.0, 2.0, 0.5, 3.0])),
        (0, 1),
    ),
    Kink(
        "interp left and right",
        lambda x, fp, a, b: np.sum(np.interp(x, XP, fp, a, b) * W5),
        lambda x, fp, a, b: _jnp().sum(_jnp().interp(x, XP, fp, a, b) * W5),
        (np.array([-1.5, 0.25, 2.5, -3.0, 4.0]), np.array([1.0, -1.0, 2.0, 0.5, 3.0]), 0.5, -0.5),
        (0, 1, 2, 3),
    ),
    Kink(
        "sinc at 0",
        lambda x: np.sum(np.sinc(x) * W3),
        lambda x: _jnp().sum(_jnp().sinc(x) * W3),
        (np.array([0.0, 0.5, -1.5]),),  # near 0 (1e-9) JAX's derivative rounds to 0; ours is -pi^2 x / 3
    ),
    Kink(
        "cumprod with zeros",
        lambda x: np.sum(np.cumprod(x, axis=1) * W4),
        lambda x: _jnp().sum(_jnp().cumprod(x, axis=1) * W4),
        (np.array([[2.0, 0.0, 3.0, -1.0], [0.0, 0.0, 2.0, 1.5], [1.0, 2.0, 3.0, 0.0], [0.5, -2.0, 1.0, 3.0]]),),
    ),
    Kink(
        "nan_to_num at NaN and infinities",
        lambda x: np.sum(np.nan_to_num(x) * W4),
        lambda x: _jnp().sum(_jnp().nan_to_num(x) * W4),
        (np.array([np.nan, np.inf, -np.inf, 1.5]),),
    ),
]

X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])
V5 = np.array([0.25, 0.5, 0.75, 1.5, 2.0])


def _unused_diff(x, z, flag):
    y = np.diff(x, prepend=z)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_gradient(x, flag):
    y = np.gradient(x, 0.5)
    if flag:
        return np.sum(y[0])
    return np.sum(x)


def _unused_interp(x, z, flag):
    y = np.interp(x, XP, z)
    if flag:
        return np.sum(y)
    return np.sum(x)


ZERO_CASES = [
    (np.diff, _unused_diff, (X, X[:, :1])),
    (np.gradient, _unused_gradient, (X,)),
    (np.cumprod, unused(np.cumprod), (X,)),
    (np.ndarray.cumprod, unused(np.ndarray.cumprod), (X,)),
    (np.polyval, unused_with(np.polyval, 0.5), (V5,)),
    (np.interp, _unused_interp, (V5, V5)),
    (np.sinc, unused(np.sinc), (X,)),
    (np.nan_to_num, unused(np.nan_to_num), (X,)),
]
