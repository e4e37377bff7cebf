"""Derivative rules for Python's operators and numeric builtins (`abs`, `float`, `pow`, `max`, `min`,
`sum`, `divmod`, ...), on numbers and arrays alike.

Kinks follow JAX: abs'(0) = 1; a tie in max or min splits the adjoint equally.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import builtins
import math
import operator

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import not_differentiable, rule

# ---- arithmetic operators ---------------------------------------------------------------------


@rule(operator.add)
def add(x, y):
    z = x + y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.unbroadcast(z_d, y)


@rule(operator.sub)
def sub(x, y):
    z = x - y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += -cpsgrad_runtime.unbroadcast(z_d, y)


@rule(operator.mul)
def mul(x, y):
    z = x * y
    z_d = yield z
    x_d += cpsgrad_runtime.reduced_product(z_d, y, x)
    y_d += cpsgrad_runtime.reduced_product(z_d, x, y)


@rule(operator.truediv)
def truediv(x, y):
    z = x / y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(cpsgrad_runtime.quotient(z_d, y), x)
    y_d += -cpsgrad_runtime.quotient(cpsgrad_runtime.reduced_product(z_d, z, y), y)


@rule(operator.mod)
def mod(x, y):
    z = x % y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d, x)
    y_d += cpsgrad_runtime.unbroadcast(-z_d * (x // y), y)


@rule(operator.pow)
def power(x, y):
    z = x**y
    z_d = yield z
    x_d += cpsgrad_runtime.unbroadcast(z_d * cpsgrad_runtime.power_slope(x, y), x)
    y_d += cpsgrad_runtime.unbroadcast(z_d * cpsgrad_runtime.log_for_power(x) * z, y)


@rule(operator.matmul)
def matmul(x, y):
    z = x @ y
    z_d = yield z
    x_d += cpsgrad_runtime.matmul_left(z_d, x, y)
    y_d += cpsgrad_runtime.matmul_right(z_d, x, y)


@rule(operator.neg)
def neg(x):
    y = -x
    y_d = yield y
    x_d += -y_d


@rule(operator.pos)
def pos(x):
    y = +x
    y_d = yield y
    x_d += y_d


@rule(operator.floordiv)
def floordiv(x, y):
    z = x // y


@rule(operator.not_)
def not_(x):
    y = not x


# ---- builtins ---------------------------------------------------------------------------------


@rule(abs)
def abs_(x):
    y = abs(x)
    y_d = yield y
    x_d += y_d * cpsgrad_runtime.sign(x)


@rule(float)
def float_(x):
    y = float(x)
    y_d = yield y
    x_d += y_d


@rule(pow)
def pow_(x, y):
    z = pow(x, y)
    z_d = yield z
    x_d += z_d * cpsgrad_runtime.power_slope(x, y)
    y_d += z_d * cpsgrad_runtime.log_for_power(x) * z


@rule(max)
def max_(xs):
    y = max(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.split_ties(xs, y, y_d)


@rule(min)
def min_(xs):
    y = min(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.split_ties(xs, y, y_d)


@rule(sum)
def sum_(xs):
    y = sum(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.repeated(len(xs), y_d)


@rule(sum)
def sum_start(xs, start):
    y = sum(xs, start)
    y_d = yield y
    xs_d += cpsgrad_runtime.repeated(len(xs), y_d)
    start_d += y_d


@rule(divmod)
def divmod_(x, y):
    z = divmod(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.item(z_d, 1)
    y_d += -cpsgrad_runtime.item(z_d, 1) * (x // y)


@rule(tuple)
def tuple_(xs):
    y = tuple(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.sequence_adjoint(xs, y_d)


@rule(cpsgrad_runtime.as_sequence)
def as_sequence(xs):
    y = cpsgrad_runtime.as_sequence(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.sequence_adjoint(xs, y_d)


@rule(reversed)
def reversed_(xs):
    y = reversed(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.reverse(y_d)


@rule(list)
def list_(xs):
    y = list(xs)
    y_d = yield y
    xs_d += cpsgrad_runtime.sequence_adjoint(xs, y_d)


# Builtins whose results carry no gradient: they take differentiable values and return
# integers, booleans, strings or nothing.
for _primitive in (
    int, bool, round, len, range, print, isinstance, str, repr, id, type, callable, hash, all, any,
    builtins.format, math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
    math.isclose, operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift,
    operator.invert,
):
    not_differentiable(_primitive)
