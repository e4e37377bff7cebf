"""The functions whose generated programs are pinned by golden files in tests/golden/."""

import math


def design_example(x: float, n: int):
    y = x
    i = 0
    while i < n:
        y = math.sin(y) * x
        i = i + 1
    if y > 0:
        z = y * y
    else:
        z = -y
    return z


def loop_jumps(x: float, values):
    total = 0.0
    for v in values:
        if v < 0:
            continue
        if v > 10:
            break
        total += v * x
    else:
        total = total * x
    return total


def early_return(x: float):
    while x > 1.0:
        if x > 100.0:
            return math.log(x)
        x = x / 2.0
    return x * x


def boolean_logic(x: float, y: float):
    a, b = y, x
    z = a * b if x > 0 and not y > 3 else abs(a - b)
    return max(z, x, 0.5) + min(x, y)


def nested_ranges(x: float, n: int):
    s = 0.0
    for i in range(n):
        for j in range(i, n, 2):
            s += x ** 2 / (1 + i + j)
    return s


def closures(x, w):
    """A lambda over a differentiable value, a nested def with a default, both called."""
    scale = lambda v: v * w  # noqa: E731
    def shifted(v, by=x):
        return scale(v) + by
    return shifted(x) * scale(2.0)


def scaled_square(v: float, by: float):
    """A user helper at module level, called by `calls_a_helper`."""
    return by * v * v


def calls_a_helper(x: float, w: float):
    """Calls of a module-level function: its derivative program is shown after the caller's."""
    return scaled_square(x, w) + math.sin(scaled_square(x, 2.0))
