"""tests/cases/doubled_gradient.py reduced: a helper that receives the caller's array, whose adjoint
the caller lent it (runtime/loans.py), passes that array twice to a callee (`h0(u, u)`); that call
site's `merge` ended the caller's loan though it had not lent the buffer on, and the caller then
added the buffer to itself (d/dv doubled). Each `f*` below is a form of it, checked by
tests/test_regressions.py against finite differences."""
# ruff: noqa: F841  (a discarded helper result is the point: the helper's adjoint is lent to it)

import numpy as np


def h0(u, v):
    return np.sum(u)


def h1(u, v):
    t = h0(u, u)  # one array twice: this site does not lend on what h1 borrowed
    return np.sum(u)


def h2(u, v):
    t = h1(u, u)  # the borrowed buffer passes two such sites, one level down
    return np.sum(u * u)


def h3(u, v):
    return h0(u, u) * np.sum(v) + np.sum(u)  # the repeated call's result used, not discarded


def f_discarded(v):
    w = h1(v, v[:])
    return h0(v, v * 0.0)


def f_keywords(v):
    b = h1(v, v[:])
    w = h1(b, v[:])
    return h0(v=v * 0.0, u=v.reshape(-1))


def f_two_levels(v):
    w = h2(v, v[:])
    return h0(v, v * 0.0) + w


def f_used(v):
    w = h3(v, v * 2.0)
    return h0(v, v) * w


def f_in_loop(v):
    total = 0.0
    for _ in range(3):
        w = h1(v, v[:])
        total = total + h0(v, v * 0.0) + w
    return total
