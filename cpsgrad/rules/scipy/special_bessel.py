"""Derivative rules for scipy.special's Bessel functions (i0 i1 i0e i1e iv ive, j0 j1 jv jve, y0 y1
yn yv yve, k0 k1 k0e k1e kv kve), in their argument x; their orders are not differentiable (an
order that is differentiated is refused: see `special.refuse`). At x = 0 the derivatives are JAX's.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np
import scipy.special

from cpsgrad.rules.numpy.ufuncs import chain
from cpsgrad.rules.registry import rule
from cpsgrad.rules.scipy.special import refuse

sc = scipy.special

# ---- modified Bessel functions of the first kind ------------------------------------------------


@rule(sc.i0)
def i0(x):
    y = sc.i0(x)
    y_d = yield y
    x_d += chain(y_d, sc.i1(x), x)


@rule(sc.i0e)
def i0e(x):
    y = sc.i0e(x)
    y_d = yield y
    x_d += chain(y_d, sc.i1e(x) - np.sign(x) * y, x)


@rule(sc.i1)
def i1(x):
    y = sc.i1(x)
    y_d = yield y
    x_d += chain(y_d, i1_slope(sc.i0(x), y, x, 0.0), x)


@rule(sc.i1e)
def i1e(x):
    y = sc.i1e(x)
    y_d = yield y
    x_d += chain(y_d, i1_slope(sc.i0e(x), y, x, np.sign(x)), x)


@rule(sc.iv)
def iv(v, x):
    y = sc.iv(v, x)
    y_d = yield y
    v_d += refuse("scipy.special.iv", "its order v", " (Bessel orders are not differentiable)")
    x_d += chain(y_d, 0.5 * (sc.iv(np.subtract(v, 1.0), x) + sc.iv(np.add(v, 1.0), x)), x)


@rule(sc.ive)
def ive(v, x):
    y = sc.ive(v, x)
    y_d = yield y
    v_d += refuse("scipy.special.ive", "its order v", " (Bessel orders are not differentiable)")
    x_d += chain(y_d, 0.5 * (sc.ive(np.subtract(v, 1.0), x) + sc.ive(np.add(v, 1.0), x)) - np.sign(x) * y, x)


# ---- Bessel functions of the first and second kinds ---------------------------------------------


@rule(sc.j0)
def j0(x):
    y = sc.j0(x)
    y_d = yield y
    x_d += chain(y_d, -sc.j1(x), x)


@rule(sc.j1)
def j1(x):
    y = sc.j1(x)
    y_d = yield y
    x_d += chain(y_d, 0.5 * (sc.j0(x) - sc.jv(2.0, x)), x)


@rule(sc.jv)
def jv(v, x):
    y = sc.jv(v, x)
    y_d = yield y
    v_d += refuse("scipy.special.jv", "its order v", " (Bessel orders are not differentiable)")
    x_d += chain(y_d, 0.5 * (sc.jv(np.subtract(v, 1.0), x) - sc.jv(np.add(v, 1.0), x)), x)


@rule(sc.y0)
def y0(x):
    y = sc.y0(x)
    y_d = yield y
    x_d += chain(y_d, -sc.y1(x), x)


@rule(sc.y1)
def y1(x):
    y = sc.y1(x)
    y_d = yield y
    x_d += chain(y_d, 0.5 * (sc.y0(x) - sc.yn(2, x)), x)


@rule(sc.yn)
def yn(n, x):
    y = sc.yn(n, x)
    y_d = yield y
    n_d += refuse("scipy.special.yn", "its order n", " (an integer)")
    x_d += chain(y_d, 0.5 * (sc.yn(np.subtract(n, 1), x) - sc.yn(np.add(n, 1), x)), x)


@rule(sc.yv)
def yv(v, x):
    y = sc.yv(v, x)
    y_d = yield y
    v_d += refuse("scipy.special.yv", "its order v", " (Bessel orders are not differentiable)")
    x_d += chain(y_d, 0.5 * (sc.yv(np.subtract(v, 1.0), x) - sc.yv(np.add(v, 1.0), x)), x)


# ---- modified Bessel functions of the second kind -----------------------------------------------


@rule(sc.k0)
def k0(x):
    y = sc.k0(x)
    y_d = yield y
    x_d += chain(y_d, -sc.k1(x), x)


@rule(sc.k0e)
def k0e(x):
    y = sc.k0e(x)
    y_d = yield y
    x_d += chain(y_d, y - sc.k1e(x), x)


@rule(sc.k1)
def k1(x):
    y = sc.k1(x)
    y_d = yield y
    x_d += chain(y_d, -0.5 * (sc.k0(x) + sc.kv(2.0, x)), x)


@rule(sc.k1e)
def k1e(x):
    y = sc.k1e(x)
    y_d = yield y
    x_d += chain(y_d, y - 0.5 * (sc.k0e(x) + sc.kve(2.0, x)), x)


@rule(sc.kv)
def kv(v, x):
    y = sc.kv(v, x)
    y_d = yield y
    v_d += refuse("scipy.special.kv", "its order v", " (Bessel orders are not differentiable)")
    x_d += chain(y_d, -0.5 * (sc.kv(np.subtract(v, 1.0), x) + sc.kv(np.add(v, 1.0), x)), x)


@rule(sc.kve)
def kve(v, x):
    y = sc.kve(v, x)
    y_d = yield y
    v_d += refuse("scipy.special.kve", "its order v", " (Bessel orders are not differentiable)")
    x_d += chain(y_d, y - 0.5 * (sc.kve(np.subtract(v, 1.0), x) + sc.kve(np.add(v, 1.0), x)), x)


# ---- helpers ------------------------------------------------------------------------------------


def i1_slope(i0_value, i1_value, x, sign):
    """d i1(x) / dx = i0(x) - i1(x) / x (for i1e, less sign(x) i1e(x)); 1/2 at x = 0 (JAX's)."""
    zero = np.equal(x, 0.0)
    safe = np.where(zero, 1.0, x)
    return np.where(zero, 0.5, i0_value - i1_value * (sign + 1.0 / safe))
