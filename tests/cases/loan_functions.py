"""Functions for tests/test_loans.py: calls whose callee could take a lent adjoint."""

import functools

import numpy as np


def inner(a, b):
    return np.sum(a * b) + np.sum(a)

def dup(W, x):
    s = inner(W, W)
    return s + np.sum(W * x)

def alias(W, x):
    V = W
    s = inner(W, V)
    return s + np.sum(W * x) + np.sum(V)

def via_partial(W, x):
    p = functools.partial(inner, W)
    return p(W) + np.sum(W * x)

def rec(W, h, n):
    if n == 0:
        return np.sum(np.tanh(W @ h))
    h2 = np.tanh(W @ h)
    return rec(W, h2, n - 1) + np.sum(W * 0.5)

def closure_alias(W, x):
    g = lambda a: np.sum(a * W)
    return g(W) + np.sum(W * x)

def tree(W, t):
    if isinstance(t, int):
        return W[:, t] * 1.0
    left = tree(W, t[0])
    right = tree(W, t[1])
    return np.tanh(W @ (W[:, 0] * left + right))


def failing(W, n):
    if n == 0:
        raise ValueError("stop")
    return failing(W, n - 1) + np.sum(W)

def tree_loss(W, t):
    return float(np.sum(tree(W, t)))


def passes_through(W, t):
    """Inner nodes only hand W on to their children; leaves use it."""
    if isinstance(t, int):
        return W[:, t] * 2.0
    return passes_through(W, t[0]) * passes_through(W, t[1])


def passes_through_loss(W, t):
    return np.sum(passes_through(W, t))


def sq(a):
    return a * a


def squares(x):
    """sq called twice on x, and x used after both calls: an array x's adjoint is lent around each."""
    u = sq(x)
    v = sq(x) + u * x
    return v + x


def squares_total(x):
    return np.sum(squares(x))
