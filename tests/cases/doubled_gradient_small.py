"""A smaller form of tests/cases/doubled_gradient.py: two calls of its h1 (each calling h0
positionally, one of them with one array twice), then h0 called with keywords: d/dv doubled."""

from tests.cases.doubled_gradient import h0, h1


def f(x0, v, n):
    b10 = h1(v, v[:])
    w = h1(b10, v[:])  # noqa: F841  (a bare call would be refused as a call for its effect)
    return h0(v=v * 0.0, u=v.reshape(-1))
