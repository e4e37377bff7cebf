"""Functions whose derivative programs make NaNs or infinities, for tests/test_debug_nans.py.

Each statement where a test expects the error is marked `# birth: <name>`; the tests find the
line by that mark, so these functions can move."""

import math

import numpy as np

from tests.cases.nan_helpers import root_scaled

NOT_A_NUMBER = float("nan")


def log_of_negated(x):
    y = np.log(-x)  # birth: log_of_negated
    return y * 2.0


def root(x):
    y = np.sqrt(x)  # birth: root
    return np.sum(y) * 3.0


def half_power(x):
    return x ** 0.5  # birth: half_power


def logs_in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.log(x - i)  # birth: logs_in_a_loop
    return s


def calls_the_helper(x):
    t = x * 1.0
    return root_scaled(t) + t


def recursive_root(x, n):
    if n == 0:
        return np.sqrt(x)  # birth: recursive_root
    return recursive_root(x, n - 1) * 1.0


def lambda_log(x):
    f = lambda v: np.log(v)  # birth: lambda_log
    return f(x) * 2.0


def overflow_then_nan(x):
    y = np.exp(x)  # birth: overflow_then_nan
    z = y - y
    return z * 1.0


def reads_everything(x, y):
    return np.sum(x * 2.0) + y


def ignores_y(x, y):
    return x * 2.0


def cleaned(x):
    z = np.where(np.isnan(x), 0.0, x)
    return np.sum(z ** 2)


def times_the_global(x):
    return x * NOT_A_NUMBER


def everything_finite(x, n):
    s = 0.0
    f = lambda v: np.tanh(v) * v
    for i in range(n):
        s = s + f(x * i)
    return np.sum(s) + recursive_root(np.sum(x * x) + 1.0, 3) + math.sin(float(np.sum(x)))


def log_called_as_a_value(x):
    g = np.log
    return g(-x) * 2.0  # birth: log_called_as_a_value
