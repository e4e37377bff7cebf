"""Unary elementwise formulas: ``<op>(x, p, q)`` the value, ``<op>_adjoint(g, s, p, q)`` the
input's adjoint from the output's adjoint ``g`` and the saved value ``s`` (the input, or the
output for the ops whose catalog entry saves it). ``p`` and ``q`` are the op's scalar parameters
(leaky_relu's slope, clip's bounds), 0.0 where it has none. ``UNARY`` at the end lists the ops
(``catalog`` numbers them for the kernels).

Kinks follow JAX: abs'(0) = 1, relu'(0) = 0, leaky_relu'(0) = 1, clip at a bound gives 0.5.
Logarithms and square roots of out-of-domain inputs return -inf / nan explicitly, as numpy does,
because the CUDA simulator runs these bodies as Python, where ``math.log(0)`` raises.
"""

import math

from cpsgrad.kernels.formulas.entries import Unary, bounds_params, slope_param, unit_bounds


def logistic(x):
    """The logistic function, without overflow for either sign of ``x``."""
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


def log_or_limit(x):
    """``log(x)``, with numpy's -inf at 0 and nan below."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def neg(x, p, q):
    return -x


def neg_adjoint(g, s, p, q):
    return -g


def abs_value(x, p, q):
    return abs(x)


def abs_adjoint(g, s, p, q):
    return -g if s < 0 else g


def exp(x, p, q):
    return math.exp(x)


def exp_adjoint(g, y, p, q):
    return g * y


def log(x, p, q):
    return log_or_limit(x)


def log_adjoint(g, x, p, q):
    return g / x


def log1p(x, p, q):
    return math.log1p(x) if x > -1 else log_or_limit(1 + x)


def log1p_adjoint(g, x, p, q):
    return g / (1 + x)


def sqrt(x, p, q):
    return math.sqrt(x) if x >= 0 else math.nan


def sqrt_adjoint(g, y, p, q):
    return g * 0.5 / y


def square(x, p, q):
    return x * x


def square_adjoint(g, x, p, q):
    return 2 * x * g


def sin(x, p, q):
    return math.sin(x)


def sin_adjoint(g, x, p, q):
    return g * math.cos(x)


def cos(x, p, q):
    return math.cos(x)


def cos_adjoint(g, x, p, q):
    return -g * math.sin(x)


def tanh(x, p, q):
    return math.tanh(x)


def tanh_adjoint(g, y, p, q):
    return g * (1 - y * y)


def sigmoid(x, p, q):
    return logistic(x)


def sigmoid_adjoint(g, y, p, q):
    return g * y * (1 - y)


def relu(x, p, q):
    return 0.0 if x <= 0 else x


def relu_adjoint(g, x, p, q):
    return g if x > 0 else 0.0


def leaky_relu(x, slope, q):
    return x if x >= 0 else slope * x


def leaky_relu_adjoint(g, x, slope, q):
    return g if x >= 0 else slope * g


def clip(x, low, high):
    return low if x < low else (high if x > high else x)


def clip_adjoint(g, x, low, high):
    # clip(x) = minimum(maximum(x, low), high): each tie passes half the adjoint.
    lower = 1.0 if x > low else (0.5 if x == low else 0.0)
    raised = max(x, low)
    upper = 1.0 if raised < high else (0.5 if raised == high else 0.0)
    return g * lower * upper


def softplus(x, p, q):
    return math.log1p(math.exp(-abs(x))) + max(x, 0.0)


def softplus_adjoint(g, x, p, q):
    if x >= 0:
        return g / (1 + math.exp(-x))
    e = math.exp(x)
    return g * e / (1 + e)


def silu(x, p, q):
    return x * logistic(x)


def silu_adjoint(g, x, p, q):
    s = logistic(x)
    return g * s * (1 + x * (1 - s))


# The ops, one entry each (kernels/formulas/entries.py): both devices build their kernels from
# these, in this order (an op's position is its CUDA code). A new op goes at the end.
UNARY = (
    Unary("neg", neg, neg_adjoint),
    Unary("abs", abs_value, abs_adjoint),
    Unary("exp", exp, exp_adjoint, saves_output=True),
    Unary("log", log, log_adjoint),
    Unary("log1p", log1p, log1p_adjoint),
    Unary("sqrt", sqrt, sqrt_adjoint, saves_output=True),
    Unary("square", square, square_adjoint),
    Unary("sin", sin, sin_adjoint),
    Unary("cos", cos, cos_adjoint),
    Unary("tanh", tanh, tanh_adjoint, saves_output=True),
    Unary("sigmoid", sigmoid, sigmoid_adjoint, saves_output=True),
    Unary("relu", relu, relu_adjoint),
    Unary("leaky_relu", leaky_relu, leaky_relu_adjoint, params=slope_param),
    Unary("hardtanh", clip, clip_adjoint, params=unit_bounds),
    Unary("clip", clip, clip_adjoint, params=bounds_params),
    Unary("softplus", softplus, softplus_adjoint),
    Unary("silu", silu, silu_adjoint),
)
