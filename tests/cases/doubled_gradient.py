"""A program the generator drew in CI (session 11, test_generated_programs, unseeded then) whose
gradient in v was twice the true one ([2, 4, 4] for [1, 2, 2]), fixed in session 12
(runtime/loans.py: h1 borrowed the adjoint f lent it for v, then passed u twice to h0 (`h0(u, u)`);
that site's merge ended f's loan, and f added the buffer to itself). tests/test_regressions.py
checks it; tests/cases/doubled_gradient_small.py holds the reduced forms."""
# ruff: noqa: F841  (the program as the generator drew it)

import math

import numpy as np


def h0(u, v):
    t0 = ((np.sum(u[:]) if -1.0 < 0.5 < 1.0 else 0.5),)
    return np.sum(u[1:]) + sum(t0)


def h1(u, v):
    a1 = a2 = np.sum(
        ((u[:] / (1.0 + u[:] * u[:])) / (1.0 + (u[:] / (1.0 + u[:] * u[:])) * (u[:] / (1.0 + u[:] * u[:]))))[1:-1]
    )
    t3 = (np.mean(np.exp(np.tanh(u.reshape(-1)))), math.hypot(h0(v, u), 0.5 + max(a1, a2) ** 2), h0(u, u),)
    return (
        np.array(
            [
                math.hypot(((0.5 >= -1.0 and -1.0) or np.dot(np.transpose(u), u.reshape(-1))), 0.5 + h0(v, v) ** 2),
                ((a2 or np.sum(u.reshape(3))) * np.sum(u)),
                sum(((sum(t3) + 2.0) * i4) for i4 in range(2) if i4 < 2.0),
            ]
        )
        + a1
    )


def s0(u, *rest):
    i5 = 0
    while (i5 := i5 + 1) <= 4:
        a6 = (
            (min(float(i5), rest[0], u) >= 1.5 and i5 == 0)
            and math.hypot((1.5 if -0.75 < -0.75 else -0.75), 0.5 + (rest[len(rest) - 1] * len(rest)) ** 2)
        ) or max(
            (sum(rest) if u > 3.0 else sum(rest)),
            float(i5),
            h0(np.array([u, max(rest), sum(rest)]), v=np.array([sum(rest), sum(rest), (i5 * 0.5)])),
        )
    return (
        ((0.5 if u >= 3.0 else rest[-1]) if (3.0 <= -1.0 and -1.0 < 1.5) else min(1.5, rest[0], sum(rest)))
        * ((0.5 if u >= 3.0 else rest[-1]) if (3.0 <= -1.0 and -1.0 < 1.5) else min(1.5, rest[0], sum(rest)))
        + 0.5
    ) ** 0.5


def s1(u, *rest, **kw):
    *t7, a8 = rest
    a8 -= max((a8 + sum([(float(i9)) for i9 in range(1) if a8 <= -1.0], 0.5)), abs(max(a8, u, -1.0)))
    return (
        (-a8) if (not (3.0 <= -0.75) and -1.0 < sum(rest) < 1.0) else h0(np.array([a8, a8, a8]), np.array([a8, a8, u]))
    )


def f(x0, v, n):
    b10 = np.array(h1(v, v[:]))
    b10[b10 > 0.25] = min((x0 / 0.5), ((n * n + 0.5) ** -1.0), math.exp(-v[0] * v[0]))
    def g11(p12):
        return h1(p12, p12) * v + p12
    i13 = 0
    while i13 < 3:
        i13 = i13 + 1
        t14 = [math.cos(n), h0(v, v.reshape(3))]
    return h0(v=g11(h1(b10, v[:])), u=v.reshape(-1))


