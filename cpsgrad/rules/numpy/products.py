"""Derivative rules for numpy's products: `np.matmul` (and `@`), `np.dot`, `np.inner`, `np.outer`,
`np.trace`, ...
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import rule

# ---- products ---------------------------------------------------------------------------------


@rule(np.matmul)
def matmul(x, y):
    z = np.matmul(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.matmul_left(z_d, x, y)
    y_d += cpsgrad_runtime.matmul_right(z_d, x, y)


@rule(np.ndarray.dot)
@rule(np.dot)
def dot(a, b):
    y = np.dot(a, b)
    y_d = yield y
    a_d += cpsgrad_runtime.dot_left(y_d, a, b)
    b_d += cpsgrad_runtime.dot_right(y_d, a, b)


@rule(np.inner)
def inner(a, b):
    y = np.inner(a, b)
    y_d = yield y
    a_d += cpsgrad_runtime.inner_left(y_d, a, b)
    b_d += cpsgrad_runtime.inner_right(y_d, a, b)


@rule(np.outer)
def outer(a, b):
    y = np.outer(a, b)
    y_d = yield y
    a_d += cpsgrad_runtime.outer_left(y_d, a, b)
    b_d += cpsgrad_runtime.outer_right(y_d, a, b)
