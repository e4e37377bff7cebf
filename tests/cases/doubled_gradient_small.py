"""A smaller form of tests/cases/doubled_gradient.py: two calls of h1 (each calling h0 positionally,
one of them with one array twice), then h0 called with keywords: d/dv doubled."""
# ruff: noqa: F841  (the program as the generator drew it, reduced)
import math

import numpy as np


def h0(u, v):
    t0 = ((np.sum(u[:]) if -1.0 < 0.5 < 1.0 else 0.5),)
    return np.sum(u[1:]) + sum(t0)


def h1(u, v):
    a1 = a2 = np.sum(((u[:] / (1.0 + u[:] * u[:])) / (1.0 + (u[:] / (1.0 + u[:] * u[:])) * (u[:] / (1.0 + u[:] * u[:]))))[1:-1])
    t3 = (np.mean(np.exp(np.tanh(u.reshape(-1)))), math.hypot(h0(v, u), 0.5 + max(a1, a2) ** 2), h0(u, u),)
    return np.array([math.hypot(((0.5 >= -1.0 and -1.0) or np.dot(np.transpose(u), u.reshape(-1))), 0.5 + h0(v, v) ** 2), ((a2 or np.sum(u.reshape(3))) * np.sum(u)), sum(((sum(t3) + 2.0) * i4) for i4 in range(2) if i4 < 2.0)]) + a1


def s0(u, *rest):
    i5 = 0
    while (i5 := i5 + 1) <= 4:
        a6 = (((min(float(i5), rest[0], u) >= 1.5 and i5 == 0) and math.hypot((1.5 if -0.75 < -0.75 else -0.75), 0.5 + (rest[len(rest) - 1] * len(rest)) ** 2)) or max((sum(rest) if u > 3.0 else sum(rest)), float(i5), h0(np.array([u, max(rest), sum(rest)]), v=np.array([sum(rest), sum(rest), (i5 * 0.5)]))))
    return ((((0.5 if u >= 3.0 else rest[-1]) if (3.0 <= -1.0 and -1.0 < 1.5) else min(1.5, rest[0], sum(rest))) * ((0.5 if u >= 3.0 else rest[-1]) if (3.0 <= -1.0 and -1.0 < 1.5) else min(1.5, rest[0], sum(rest))) + 0.5) ** 0.5)


def s1(u, *rest, **kw):
    *t7, a8 = rest
    a8 -= max((a8 + sum([(float(i9)) for i9 in range(1) if a8 <= -1.0], 0.5)), abs(max(a8, u, -1.0)))
    return ((-a8) if (not (3.0 <= -0.75) and -1.0 < sum(rest) < 1.0) else h0(np.array([a8, a8, a8]), np.array([a8, a8, u])))


def f(x0, v, n):
    b10 = h1(v, v[:])
    w = h1(b10, v[:])
    return h0(v=v * 0.0, u=v.reshape(-1))
