"""Binary elementwise formulas: ``<op>(a, b)`` the value, ``<op>_adjoints(g, a, b, y)`` both
operands' adjoints from the output's adjoint ``g`` (``y`` is the forward's output).

Ties in maximum and minimum give half the adjoint to each side; pow follows JAX: d/da is 0
where b == 0, and d/db uses log(1) where a == 0 (nan for a negative base, as numpy's log).
``BINARY`` at the end lists the ops (``catalog`` numbers them for the kernels).
"""

import math

from cpsgrad.kernels.formulas.entries import Binary


def add(a, b):
    return a + b


def add_adjoints(g, a, b, y):
    return g, g


def sub(a, b):
    return a - b


def sub_adjoints(g, a, b, y):
    return g, -g


def mul(a, b):
    return a * b


def mul_adjoints(g, a, b, y):
    return g * b, g * a


def div(a, b):
    return a / b


def div_adjoints(g, a, b, y):
    return g / b, -g * y / b


def pow_value(a, b):
    return a**b


def pow_adjoints(g, a, b, y):
    grad_a = 0.0 if b == 0 else g * b * a ** (b - 1)
    log_a = 0.0 if a == 0 else (math.log(a) if a > 0 else math.nan)
    return grad_a, g * y * log_a


def maximum(a, b):
    return max(a, b)


def minimum(a, b):
    return min(a, b)


def chosen_adjoints(g, a, b, y):
    """maximum's and minimum's adjoints: to the operand that was chosen, half to each on a tie."""
    if a == b:
        return 0.5 * g, 0.5 * g
    if a == y:
        return g, 0.0
    return 0.0, g


# The ops, one entry each (kernels/formulas/entries.py), in code order; a new op goes at the end.
BINARY = (
    Binary("add", "add", add, add_adjoints, fused_cpu_backward=False),
    Binary("sub", "subtract", sub, sub_adjoints, fused_cpu_backward=False),
    Binary("mul", "multiply", mul, mul_adjoints, fused_cpu_backward=False),
    Binary("div", "divide", div, div_adjoints),
    Binary("pow", "power", pow_value, pow_adjoints),
    Binary("maximum", "maximum", maximum, chosen_adjoints),
    Binary("minimum", "minimum", minimum, chosen_adjoints),
)
