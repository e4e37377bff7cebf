"""Scalar programs written the way users write them, over floats, ints and bools, with domains.

Each function is plain module-level Python (math, builtins, module constants); `CASES` at the
end pairs it with hypothesis strategies for its arguments and the argnums to differentiate.
"""

import math

from hypothesis import strategies as st

from cpsgrad.testing.strategies import float_lists, floats, ints, positive_floats
from tests.corpus import Case

GRAVITY = 9.81
SPRING_CONSTANT = 4.0
DAMPING = 0.3
HORNER_COEFFICIENTS = (0.5, -1.25, 2.0, 0.75, -3.0)
TAX_BRACKETS = (10.0, 40.0, 90.0)
TAX_RATES = (0.1, 0.2, 0.35, 0.45)
SOFTPLUS_CUTOFF = 20.0
SCALE = 2.5
OFFSET = -0.75
TOLERANCE = 1e-12


# --- straight-line arithmetic ---------------------------------------------------------------


def quadratic_form(x, y):
    a = 3.0
    b = -2.0
    c = 0.5
    return a * x * x + b * x * y + c * y * y - x + 1


def all_operators(x, y):
    total = x + y
    total = total - 2 * x
    total = total * (y + 3.0)
    total = total / (1.0 + x * x)
    total = total + x**2 + y**3
    return -total + (-x) * (-y)


def augmented_assignments(x, y):
    z = x
    z += y
    z -= 0.5 * x
    z *= y
    z /= 1.0 + x * x
    z += 1
    return z


def unary_minus(x):
    y = -x
    z = -y
    z = -z
    return -(y * z) + (-x) ** 2 - (-(x**3))


def integer_powers(x):
    return x**3 - 2 * x**2 + x**-1 + 4.0 * x**0


def division_chain(x, y):
    return x / y / (1.0 + x * x) + 3.0 / y


def module_constants(x):
    y = SCALE * x + OFFSET
    return y * y + GRAVITY


def chained_assignment(x, y):
    a = b = x * y
    a = a + 1.0
    return a * b


def tuple_unpacking(x, y):
    a, b = x, y
    a, b = b, a + b
    a, b = a * b, a - b
    (p, q), r = (a, b), x
    return p + 2.0 * q + r * r


def self_assignment(x):
    x = x
    y = x
    y = y
    return y * x + x


def shadowed_parameter(x, y):
    y = x * 2.0
    x = y + 1.0
    return x * y


def ignores_first_argument(x, y):
    return y * y + 3.0


def int_then_float(x, n):
    acc = 0
    for i in range(n):
        acc = acc + i
    acc = acc * x
    acc = acc + 1
    return acc * x


# --- math functions and builtins -------------------------------------------------------------


def trigonometry(x):
    return math.sin(x) * math.cos(x) + math.tan(x / 4.0) + math.tanh(x)


def exponentials(x):
    return math.exp(-x * x) + math.expm1(x / 3.0) + math.sinh(x / 2.0) + math.cosh(x / 5.0)


def logarithms(x):
    return math.log(x) + math.log1p(x) + math.sqrt(x) + math.log10(x) + math.log2(x)


def polar_coordinates(x, y):
    radius = math.hypot(x, y)
    angle = math.atan2(y, x)
    return radius * math.cos(angle / 2.0) + angle


def gaussian_cdf(x, mean, sigma):
    z = (x - mean) / (sigma * math.sqrt(2.0))
    return 0.5 * (1.0 + math.erf(z)) + 0.1 * math.erfc(z)


def powers(x, y):
    return pow(x, y) + math.pow(x, 2.5) + x**y + pow(x, 3) + 2.0**x


def inverse_trigonometry(x):
    return math.asin(x) + math.acos(x / 2.0) + math.atan(3.0 * x) + math.asinh(x)


def softplus(x):
    if x > SOFTPLUS_CUTOFF:
        return x
    return math.log1p(math.exp(x))


def stable_sigmoid(x):
    if x >= 0:
        z = math.exp(-x)
        return 1.0 / (1.0 + z)
    z = math.exp(x)
    return z / (1.0 + z)


def log_sum_exp(x, y, z):
    m = max(x, y, z)
    total = math.exp(x - m) + math.exp(y - m) + math.exp(z - m)
    return m + math.log(total) - x


def abs_distance(x, y):
    return abs(x - y) + 0.5 * abs(x) + abs(-2.0)


def clip(x, low, high):
    return min(max(x, low), high)


def max_over_list(x, y):
    return max([x, 2.0 * y, x * y, 1.0])


def min_of_three(x, y, z):
    return min(x * x, y, z + 1.0) + max(x, y)


def data_range_scaling(x, data):
    low = min(data)
    high = max(data)
    return (high - low) * x + max(x, low)


def sum_and_len(x, y):
    values = [x * x, y, 3.0, x * y]
    return sum(values) / len(values)


def mean_shifted(x, data):
    n = len(data)
    mean = sum(data) / n + x
    spread = 0.0
    for d in data:
        spread += (d - mean) ** 2
    return spread / n


def float_and_int_conversions(x, n):
    k = int(n * 1.5)
    y = float(k) * x
    whole = int(x)
    return y + float(n) + whole * x


def floor_division_and_modulo(x):
    q = x // 1.0
    r = x % 1.0
    return q * x + r * r + x % 3.0


# --- conditionals ----------------------------------------------------------------------------


def piecewise(x):
    if x < -1.0:
        return -2.0 * x - 1.0
    elif x < 1.0:
        return x * x
    else:
        return 2.0 * x - 1.0


def tax_owed(income):
    owed = 0.0
    if income > TAX_BRACKETS[2]:
        owed += (income - TAX_BRACKETS[2]) * TAX_RATES[3]
        income = TAX_BRACKETS[2]
    if income > TAX_BRACKETS[1]:
        owed += (income - TAX_BRACKETS[1]) * TAX_RATES[2]
        income = TAX_BRACKETS[1]
    if income > TAX_BRACKETS[0]:
        owed += (income - TAX_BRACKETS[0]) * TAX_RATES[1]
        income = TAX_BRACKETS[0]
    return owed + income * TAX_RATES[0]


def nested_conditions(x, y):
    if x > 0:
        if y > 0:
            result = x * y
        elif y > -1:
            result = x + y
        else:
            result = x - y * y
    else:
        if y > x:
            result = math.sin(x) * y
        else:
            result = x * x
    return result


def chained_comparison(x):
    if -1.0 < x <= 2.0:
        return x * x * x
    if 2.0 < x < 5.0 > x - 10.0:
        return 8.0 + 12.0 * (x - 2.0)
    return -x


def boolean_operators(x, y):
    if x > 0 and y > 0 or not x < -1:
        z = x * y
    else:
        z = x + y
    if not (x > y and y > 1):
        z = z * 2.0
    return z


def conditional_expressions(x):
    y = x * x if x > 0 else -x
    return y + (1.0 if y > 2 else 0.5) * x


def leaky_relu(x):
    return x if x > 0 else 0.01 * x


def bool_arithmetic(x):
    positive = x > 0
    return x * positive + 0.1 * x * (not positive)


def flag_argument(x, flip):
    if not flip:
        x = -x
    return x * x * x


def select_with_flag(x, y, use_max):
    best = max(x, y) if use_max else min(x, y)
    return best * x


def huber_loss(prediction, target, delta):
    error = prediction - target
    if abs(error) <= delta:
        return 0.5 * error * error
    return delta * (abs(error) - 0.5 * delta)


def smooth_step(x):
    t = (x - 1.0) / 2.0
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return t * t * (3.0 - 2.0 * t) + 0.1 * x


def assigned_in_one_branch(x):
    positive = x > 0
    if positive:
        root = math.sqrt(x)
    scaled = x * 3.0
    if positive:
        return root * scaled
    return scaled


def early_return_constant(x):
    if x < 0:
        return 0.0
    return x * math.exp(-x)


def return_in_nested_ifs(x, y):
    if x > 1.0:
        if y > 0.0:
            return x * y
        return x - y
    else:
        if y < x:
            if y < -1.0:
                return y * y
            return x * y * y
    return x + y


# --- while loops -----------------------------------------------------------------------------


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > TOLERANCE * a:
        x = 0.5 * (x + a / x)
    return x


def kepler_eccentric_anomaly(mean_anomaly, eccentricity):
    e = mean_anomaly
    delta = 1.0
    while abs(delta) > TOLERANCE:
        delta = (e - eccentricity * math.sin(e) - mean_anomaly) / (1.0 - eccentricity * math.cos(e))
        e = e - delta
    return e


def halve_until_small(x):
    n = 0
    while x > 1.0:
        x = x / 2.0
        n += 1
    return x + n


def compound_interest(principal, rate):
    balance = principal
    years = 0
    while balance < 2.0 * principal + 10.0:
        balance *= 1.0 + rate
        years += 1
    return balance - years


def bracketed_square_root(a):
    low, high = 0.0, max(1.0, a)
    steps = 0
    while steps < 6:
        middle = 0.5 * (low + high)
        if middle * middle < a:
            low = middle
        else:
            high = middle
        steps += 1
    x = 0.5 * (low + high)
    return 0.5 * (x + a / x)


def return_inside_while(x):
    while True:
        x = x * 1.5
        if x > 10.0:
            return x - 10.0


def while_else(x, n):
    i = 0
    while i < n:
        x = x * 0.5 + 1.0
        if x > 3.0:
            break
        i += 1
    else:
        x = -x
    return x * x


def collatz_weighted(x, n):
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        x = x * 0.9 + 0.1
    return x


def fast_power(x, n):
    result = 1.0
    base = x
    while n > 0:
        if n % 2 == 1:
            result *= base
        base *= base
        n //= 2
    return result


# --- for loops -------------------------------------------------------------------------------


def horner_polynomial(x):
    result = 0.0
    for c in HORNER_COEFFICIENTS:
        result = result * x + c
    return result


def horner_with_coefficients(coefficients, x):
    result = 0.0
    for c in coefficients:
        result = result * x + c
    return result


def fibonacci_scaled(x, n):
    a, b = 0.0, x
    for _ in range(n):
        a, b = b, a + b
    return a * b + b


def taylor_exp(x, terms):
    total = 1.0
    term = 1.0
    for k in range(1, terms):
        term *= x
        term /= k
        total += term
    return total


def taylor_sine(x, terms):
    total = 0.0
    term = x
    for k in range(1, 2 * terms, 2):
        total += term
        term = -term * x * x / ((k + 1) * (k + 2))
    return total


def countdown_series(x, n):
    total = 0.0
    for k in range(n, 0, -1):
        total += x**k / k
    return total


def stepped_range(x, start, stop):
    total = 0.0
    for k in range(start, stop, 3):
        total -= k * math.sin(k * x)
    return total


def damped_oscillator(position, velocity, dt, steps):
    x, v = position, velocity
    for _ in range(steps):
        acceleration = -SPRING_CONSTANT * x - DAMPING * v
        x = x + dt * v
        v = v + dt * acceleration
    return 0.5 * SPRING_CONSTANT * x * x + 0.5 * v * v


def projectile_range(speed, angle):
    vx = speed * math.cos(angle)
    vy = speed * math.sin(angle)
    return 2.0 * vx * vy / GRAVITY


def rk4_decay(y0, rate, steps):
    y = y0
    h = 0.1
    for _ in range(steps):
        k1 = -rate * y
        k2 = -rate * (y + 0.5 * h * k1)
        k3 = -rate * (y + 0.5 * h * k2)
        k4 = -rate * (y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y


def logistic_map(x, r, n):
    for _ in range(n):
        x = r * x * (1.0 - x)
    return x


def loop_reassigns_argument(x, n):
    for i in range(n):
        x = x * 0.9 + i
    return x


def weighted_powers(x, weights):
    total = 0.0
    for i, w in enumerate(weights):
        total += w * x**i
    return total


def indexed_data(x, data):
    total = 0.0
    for i in range(len(data)):
        total = total * x + data[i]
    return total


def zipped_data(x, y, inputs, targets):
    loss = 0.0
    for a, b in zip(inputs, targets):  # noqa: B905 - the lists may differ in length
        prediction = a * x + y
        loss += (prediction - b) ** 2
    return loss / max(1, len(inputs))


def relu_layer(w, inputs):
    total = 0.0
    for v in inputs:
        total += max(0.0, v * w)
    return total


def local_tuple_loop(x, y):
    total = 0.0
    for c in (x, 2 * x, y):
        total = total * c + 1.0
    return total


def local_list_loop(x, y):
    product = 1.0
    for v in [x, y, x * y, 2.0]:
        product *= 1.0 + v * v
    return math.log(product)


def enumerate_locals(x, y):
    total = 0.0
    for i, v in enumerate([x, y, x - y]):
        total += (i + 1) * v * v
    return total


def break_on_threshold(x, n):
    total = 0.0
    for i in range(n):
        total += x * i
        if total > 10.0:
            break
    return total * x


def skip_odd_terms(x, n):
    total = 0.0
    for i in range(n):
        if i % 2 == 1:
            continue
        total += x**i
    return total


def first_exceeding(x, data):
    for d in data:
        if d > x:
            result = d * x
            break
    else:
        result = x * x
    return result


def return_from_for_else(x, n):
    for i in range(n):
        if x * i > 3.0:
            return x * i
    else:
        return -x


def nested_loops_with_break(x, n):
    total = 0.0
    for i in range(n):
        for j in range(n):
            if i * j > 6:
                break
            total += x ** (i + j) / (1 + i + j)
    return total


def nested_loops_data_dependent(x, y):
    total = 0.0
    for i in range(4):
        for j in range(i, 4):
            term = x * i - y * j
            if term > 1.0:
                continue
            total += term * term
    return total


def helper_sum_of_squares(a, b):
    if a > b:
        return a * a + b * b
    return 2.0 * a * b


def calls_helper(x, y):
    return helper_sum_of_squares(x, y) + helper_sum_of_squares(y, 1.0) * x


# --- a loop long enough to need 10^5 continuation frames -------------------------------------

DECAY = 0.999999


def long_decay_loop(x, n):
    y = x
    for _ in range(n):
        y = y * DECAY + x * 1e-6
    return y


# Hypothesis often draws one value for several arguments; x == y sits on the kink of min, max
# and abs(x - y), where finite differences must skip. Shifting the later arguments keeps most
# draws checkable; log_sum_exp keeps exact ties, where its gradient must still be right.
TIE_BREAK = 0.0123


def apart(strategy, by=TIE_BREAK):
    """`strategy`'s draws shifted by `by`, so they differ from another argument's draws."""
    return strategy.map(lambda value: value + by)


def apart_all(values):
    """A list of data shifted like `apart`, so no element equals a drawn argument."""
    return [value + TIE_BREAK for value in values]


# hypothesis examples per case against finite differences (None: the hypothesis profile's)
EXAMPLES = None
CASES = [
    Case(quadratic_form, (floats(), floats()), (0, 1)),
    Case(all_operators, (floats(), floats(-2.5, 10.0)), (0, 1)),
    Case(augmented_assignments, (floats(), floats()), (0, 1)),
    Case(unary_minus, (floats(),)),
    Case(integer_powers, (positive_floats(),)),
    Case(division_chain, (floats(), positive_floats()), (0, 1)),
    Case(module_constants, (floats(),)),
    Case(chained_assignment, (floats(), floats()), (0, 1)),
    Case(tuple_unpacking, (floats(), floats()), (0, 1)),
    Case(self_assignment, (floats(),)),
    Case(shadowed_parameter, (floats(), floats()), (0, 1)),
    Case(ignores_first_argument, (floats(), floats()), (0, 1)),
    Case(int_then_float, (floats(), ints(0, 6))),
    Case(trigonometry, (floats(-3.0, 3.0),)),
    Case(exponentials, (floats(-3.0, 3.0),)),
    Case(logarithms, (positive_floats(),)),
    Case(polar_coordinates, (positive_floats(0.5, 5.0), floats(-5.0, 5.0)), (0, 1)),
    Case(
        gaussian_cdf, (floats(-3.0, 3.0), floats(-1.0, 1.0), positive_floats(0.5, 3.0)), (0, 1, 2)
    ),
    Case(powers, (positive_floats(0.5, 3.0), floats(-2.0, 2.0)), (0, 1)),
    Case(inverse_trigonometry, (floats(-0.9, 0.9),)),
    Case(softplus, (floats(-10.0, 30.0),)),
    Case(stable_sigmoid, (floats(),)),
    Case(log_sum_exp, (floats(), floats(), floats()), (0, 1, 2)),
    Case(abs_distance, (floats(exclude_near=(0.0,)), apart(floats())), (0, 1)),
    Case(clip, (floats(), apart(floats(-5.0, -0.5)), apart(floats(0.5, 5.0))), (0, 1, 2)),
    Case(max_over_list, (floats(), floats()), (0, 1)),
    Case(
        min_of_three,
        (floats(-3.0, 3.0), apart(floats()), apart(floats(), by=2 * TIE_BREAK)),
        (0, 1, 2),
    ),
    Case(data_range_scaling, (floats(), float_lists(1, 5).map(apart_all))),
    Case(sum_and_len, (floats(), floats()), (0, 1)),
    Case(mean_shifted, (floats(), float_lists(1, 5))),
    Case(float_and_int_conversions, (floats(), ints(0, 5))),
    Case(floor_division_and_modulo, (floats(-5.0, 5.0),)),
    Case(piecewise, (floats(-3.0, 3.0),)),
    Case(tax_owed, (positive_floats(1.0, 150.0),)),
    Case(
        nested_conditions,
        (
            floats(-3.0, 3.0, exclude_near=(0.0,)),
            apart(floats(-3.0, 3.0, exclude_near=(0.0, -1.0))),
        ),
        (0, 1),
    ),
    Case(chained_comparison, (floats(-3.0, 8.0),)),
    Case(
        boolean_operators,
        (
            floats(-3.0, 3.0, exclude_near=(0.0, -1.0)),
            apart(floats(-3.0, 3.0, exclude_near=(0.0, 1.0))),
        ),
        (0, 1),
    ),
    Case(conditional_expressions, (floats(-3.0, 3.0),)),
    Case(leaky_relu, (floats(),)),
    Case(bool_arithmetic, (floats(),)),
    Case(flag_argument, (floats(), st.booleans())),
    Case(select_with_flag, (floats(), apart(floats()), st.booleans()), (0, 1)),
    Case(huber_loss, (floats(), floats(), positive_floats(0.5, 2.0)), (0, 1, 2)),
    Case(smooth_step, (floats(-2.0, 5.0),)),
    Case(assigned_in_one_branch, (floats(),)),
    Case(early_return_constant, (floats(),)),
    Case(
        return_in_nested_ifs,
        (
            floats(-3.0, 3.0, exclude_near=(1.0,)),
            apart(floats(-3.0, 3.0, exclude_near=(0.0, -1.0))),
        ),
        (0, 1),
    ),
    Case(newton_sqrt, (positive_floats(0.1, 100.0),)),
    Case(kepler_eccentric_anomaly, (floats(0.1, 6.0), floats(0.05, 0.8)), (0, 1)),
    Case(halve_until_small, (positive_floats(0.1, 1000.0),)),
    Case(compound_interest, (positive_floats(1.0, 100.0), positive_floats(0.05, 0.5)), (0, 1)),
    Case(bracketed_square_root, (positive_floats(0.1, 50.0),)),
    Case(return_inside_while, (positive_floats(0.1, 20.0),)),
    Case(while_else, (floats(-3.0, 3.0), ints(0, 6))),
    Case(collatz_weighted, (floats(), ints(1, 30))),
    Case(fast_power, (floats(-2.0, 2.0), ints(0, 12))),
    Case(horner_polynomial, (floats(-3.0, 3.0),)),
    Case(horner_with_coefficients, (float_lists(0, 6), floats(-3.0, 3.0)), 1),
    Case(fibonacci_scaled, (floats(), ints(0, 12))),
    Case(taylor_exp, (floats(-3.0, 3.0), ints(1, 15))),
    Case(taylor_sine, (floats(-3.0, 3.0), ints(1, 10))),
    Case(countdown_series, (floats(-1.5, 1.5), ints(0, 10))),
    Case(stepped_range, (floats(-2.0, 2.0), ints(-5, 5), ints(0, 12))),
    Case(
        damped_oscillator,
        (floats(-2.0, 2.0), floats(-2.0, 2.0), positive_floats(0.001, 0.1), ints(1, 20)),
        (0, 1, 2),
    ),
    Case(projectile_range, (positive_floats(1.0, 50.0), floats(0.1, 1.4)), (0, 1)),
    Case(rk4_decay, (floats(), positive_floats(0.1, 3.0), ints(0, 15)), (0, 1)),
    Case(logistic_map, (floats(0.05, 0.95), floats(1.0, 3.0), ints(0, 10)), (0, 1)),
    Case(loop_reassigns_argument, (floats(), ints(0, 10))),
    Case(weighted_powers, (floats(-2.0, 2.0), float_lists(0, 6))),
    Case(indexed_data, (floats(-2.0, 2.0), float_lists(0, 6))),
    Case(
        zipped_data,
        (floats(), floats(), float_lists(0, 5), float_lists(0, 5)),
        (0, 1),
    ),
    Case(relu_layer, (floats(), float_lists(0, 6))),
    Case(local_tuple_loop, (floats(-3.0, 3.0), floats(-3.0, 3.0)), (0, 1)),
    Case(local_list_loop, (floats(-3.0, 3.0), floats(-3.0, 3.0)), (0, 1)),
    Case(enumerate_locals, (floats(), floats()), (0, 1)),
    Case(break_on_threshold, (floats(-2.0, 5.0), ints(0, 10))),
    Case(skip_odd_terms, (floats(-2.0, 2.0), ints(0, 10))),
    Case(first_exceeding, (floats(), float_lists(0, 5).map(apart_all))),
    Case(return_from_for_else, (floats(-3.0, 3.0), ints(0, 6))),
    Case(nested_loops_with_break, (floats(-1.5, 1.5), ints(0, 6))),
    Case(nested_loops_data_dependent, (floats(-3.0, 3.0), floats(-3.0, 3.0)), (0, 1)),
    Case(calls_helper, (floats(), apart(floats())), (0, 1)),
]


# Inputs on a kink or a tie, where finite differences skip: the gradient follows JAX (measured
# with jax.grad on the same expressions: abs'(0) = 1, a tie in max/min gives 0.5 to each side,
# floor division has gradient 0, x ** 0 has gradient 0 at x = 0). (function, arguments, argnums,
# the exact gradient)
AT_KINKS = [
    (abs_distance, (0.0, 0.0), (0, 1), (1.5, -1.0)),
    (clip, (-1.0, -1.0, 2.0), (0, 1, 2), (0.5, 0.5, 0.0)),
    (clip, (2.0, -1.0, 2.0), (0, 1, 2), (0.5, 0.0, 0.5)),
    (select_with_flag, (1.5, 1.5, True), (0, 1), (2.25, 0.75)),
    (min_of_three, (2.0, 1.0, 0.0), (0, 1, 2), (1.0, 0.5, 0.5)),
    (relu_layer, (0.0, [1.0, -2.0]), 0, -0.5),
    (leaky_relu, (0.0,), 0, 0.01),
    (bool_arithmetic, (0.0,), 0, 0.1),
    (floor_division_and_modulo, (2.0,), 0, 3.0),
    (float_and_int_conversions, (2.0, 2), 0, 5.0),
    (skip_odd_terms, (0.0, 3), 0, 0.0),
    (countdown_series, (0.0, 3), 0, 1.0),
]
