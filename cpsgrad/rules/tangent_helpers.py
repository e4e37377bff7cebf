"""Rules for what forward-mode programs call (cpsgrad/runtime/tangents.py), so that the reverse mode
can differentiate a tangent program: a Hessian-vector product is the gradient of a directional
derivative (cpsgrad/higher_order.py), each level generated as source from the one below.

`fitted(t, like)` and `fresh(t, like)` are linear in the tangent `t` (a broadcast to the primal's
shape, a copy): the adjoint goes back summed over the broadcast axes. `broadcast_like` is a
broadcast too; `zero_tangent` is a constant.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad import nn_backward
from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules import operators
from cpsgrad.rules.numpy import binary
from cpsgrad.rules.registry import not_differentiable, rule
from cpsgrad.runtime import elementwise, tangents

not_differentiable(tangents.zero_tangent)


@rule(tangents.fitted)
def fitted(tangent, like):
    y = tangents.fitted(tangent, like)
    y_d = yield y
    tangent_d += cpsgrad_runtime.unbroadcast(y_d, tangent)


@rule(tangents.broadcast_like)
def broadcast_like(value, like):
    y = tangents.broadcast_like(value, like)
    y_d = yield y
    value_d += cpsgrad_runtime.unbroadcast(y_d, value)


@rule(tangents.fresh)
def fresh(tangent, like):
    y = tangents.fresh(tangent, like)
    y_d = yield y
    tangent_d += cpsgrad_runtime.unbroadcast(y_d, tangent)


# ---- the slopes elementwise tangents read (their second derivatives) -----------------------


@rule(operators.power_slope)
def power_slope(base, exponent):
    s = operators.power_slope(base, exponent)
    s_d = yield s
    base_d += cpsgrad_runtime.unbroadcast(s_d * exponent * operators.power_slope(base, exponent - 1), base)
    exponent_d += cpsgrad_runtime.unbroadcast(
        s_d * (base ** (exponent - 1)) * (1.0 + exponent * operators.log_for_power(base)), exponent
    )


@rule(elementwise.quotient)
def quotient(numerator, denominator):
    y = elementwise.quotient(numerator, denominator)
    y_d = yield y
    numerator_d += cpsgrad_runtime.unbroadcast(cpsgrad_runtime.quotient(y_d, denominator), numerator)
    denominator_d += -cpsgrad_runtime.unbroadcast(cpsgrad_runtime.quotient(y_d * y, denominator), denominator)


@rule(elementwise.divide)
def divide(numerator, denominator):
    y = elementwise.divide(numerator, denominator)
    y_d = yield y
    numerator_d += cpsgrad_runtime.unbroadcast(cpsgrad_runtime.array_divide(y_d, denominator), numerator)
    denominator_d += -cpsgrad_runtime.unbroadcast(cpsgrad_runtime.array_divide(y_d * y, denominator), denominator)


@rule(elementwise.array_divide)
def array_divide(numerator, denominator):
    y = elementwise.array_divide(numerator, denominator)
    y_d = yield y
    numerator_d += cpsgrad_runtime.unbroadcast(cpsgrad_runtime.array_divide(y_d, denominator), numerator)
    denominator_d += -cpsgrad_runtime.unbroadcast(cpsgrad_runtime.array_divide(y_d * y, denominator), denominator)


# ---- adjoint helpers tangents call with a tangent first: linear in it, piecewise constant in the rest


not_differentiable(binary.tie_share)
not_differentiable(operators.array_sign)
not_differentiable(operators.sign)


@rule(operators.abs_adjoint)
def abs_adjoint(adjoint, a):
    y = operators.abs_adjoint(adjoint, a)
    y_d = yield y
    adjoint_d += cpsgrad_runtime.unbroadcast(operators.abs_adjoint(y_d, a), adjoint)


@rule(binary.select)
def select(adjoint, condition, a):
    y = binary.select(adjoint, condition, a)
    y_d = yield y
    adjoint_d += cpsgrad_runtime.unbroadcast(np.where(condition, y_d, 0.0), adjoint)


@rule(nn_backward.relu)
def relu_adjoint(adjoint, a):
    y = nn_backward.relu(adjoint, a)
    y_d = yield y
    adjoint_d += cpsgrad_runtime.unbroadcast(nn_backward.relu(y_d, a), adjoint)
