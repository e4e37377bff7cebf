"""Programs with `try` and `with`, written the way users write them.

Exceptions are raised and caught on the inputs' values (a threshold each strategy straddles), in
loops, branches and helpers, with handlers that fall through, re-raise, `continue` or return,
`else` and `finally` clauses (which run on every path), and context managers: `np.errstate`,
`warnings.catch_warnings`, `contextlib.suppress`, a lock, a user class logging its enter and
exit. `LOG` records the side effects in order (tests/test_try_with.py compares it with the
original's). Gradients: the statements that ran before a raise contribute, the rest do not.
"""

import contextlib
import math
import threading
import warnings

import jax.numpy as jnp
import numpy as np

from cpsgrad.testing.strategies import arrays, floats, ints
from tests.corpus import Case

LOG: list = []
LOCK = threading.Lock()
EXAMPLES = 6
JAX_EXAMPLES = 3


class Trace:
    """A user context manager: logs enter and exit (with the exception's type), swallows
    `ValueError` when asked to."""

    def __init__(self, label, swallow=False):
        self.label = label
        self.swallow = swallow

    def __enter__(self):
        LOG.append(("enter", self.label))
        return 2.0

    def __exit__(self, kind, error, traceback):
        LOG.append(("exit", self.label, None if kind is None else kind.__name__))
        return self.swallow and kind is ValueError


def checked(v):
    """A helper that raises on bad input (called with a value that carries no gradient)."""
    if v > 1.0:
        raise ValueError("too large")
    return v


def caught_value_error(x):
    y = x * x
    try:
        if x > 0.5:
            raise ValueError("x too large")
        z = y * 3.0
    except ValueError:
        z = y + x  # y ran before the raise: it contributes; y * 3.0 never ran
    return z * x


def jax_caught_value_error(x):
    y = x * x
    return jnp.where(x > 0.5, y + x, y * 3.0) * x


def division_guarded(x):
    try:
        r = 1.0 / (x - 1.0) if x > 0.0 else math.log(-x)
    except (ZeroDivisionError, ValueError) as error:
        r = len(str(error)) * x
    return r * x


def handler_reraises_to_outer(x):
    try:
        try:
            w = math.sin(x)
            if w > 0.0:
                raise KeyError("positive")
            w = w * 2.0
        except KeyError:
            w = w + 1.0
            raise
    except LookupError:
        w = w * x
    return w + x


def finally_on_every_path(x):
    LOG.append("start")
    try:
        y = x * 2.0
        if x > 0.0:
            raise ValueError
        y = y * y
    except ValueError:
        LOG.append("handler")
        y = y - 1.0
    else:
        LOG.append("else")
        y = y + x
    finally:
        LOG.append("finally")
        y = y * 3.0
    return y


def jax_finally_on_every_path(x):
    y = x * 2.0
    return jnp.where(x > 0.0, y - 1.0, y * y + x) * 3.0


def return_inside_try(x):
    try:
        y = math.exp(x)
        if x > 0.0:
            return y * x
        y = y + 1.0
    finally:
        LOG.append(("finally", x > 0.0))
    return y


def return_in_finally_overrides(x):
    try:
        y = x * x  # noqa: F841 (computed, then dropped with the exception)
        if x > 0.0:
            raise RuntimeError("dropped")
    finally:
        return x * 3.0 + 1.0  # noqa: B012 (the point: it swallows the exception)


def loop_continues_from_handler(x, n):
    total = 0.0
    for i in range(n):
        try:
            if i % 3 == 1:
                raise ArithmeticError(i)
            term = math.sin(x * i)
        except ArithmeticError:
            LOG.append(("skip", i))
            continue
        total = total + term
    return total + x


def loop_breaks_from_try_with_finally(x, n):
    acc = x
    i = 0
    while i < n:
        try:
            acc = acc * 1.5 - 0.25
            if acc > 4.0:
                break
        finally:
            LOG.append(("iteration", i))
            i = i + 1
    return acc * x


def nested_in_branches(x, y):
    if x > 0.0:
        try:
            v = x * y
            v = checked(v) * y
        except ValueError:
            v = x + y
    else:
        v = x - y
    return v * v


def helper_with_try(v):
    try:
        if v < 0.0:
            raise ValueError
        return math.sqrt(v)
    except ValueError:
        return -v


def calls_helper_with_try(x, y):
    a = helper_with_try(x)
    b = helper_with_try(y - x)
    return a * b + x


def recursive_with_try(x, n):
    if n == 0:
        return x
    try:
        if x > 2.0:
            raise OverflowError
        step = x * 1.3
    except OverflowError:
        step = x * 0.5
    return recursive_with_try(step, n - 1)


def exception_value_used(x):
    try:
        raise ValueError(2.5)
    except ValueError as e:
        scale = e.args[0]
    return x * scale


def bare_except_and_else(x):
    try:
        q = math.log(x)
    except:  # noqa: E722
        q = x * x
    else:
        q = q * 2.0
    return q + x


def errstate_raises(x):
    with np.errstate(invalid="raise"):
        try:
            r = np.sqrt(np.float64(x) - 1.0)
        except FloatingPointError:
            r = np.sqrt(1.0 - np.float64(x))
    return float(r * x)


def errstate_ignored(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x * x + 1.0)
    return np.sum(y * x)


def jax_errstate_ignored(x):
    return jnp.sum(jnp.log(x * x + 1.0) * x)


def warnings_caught(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = x * x
    return y + x


def jax_warnings_caught(x):
    return x * x + x


def suppressed(x):
    y = x * 2.0
    with contextlib.suppress(ZeroDivisionError):
        y = y * x
        if x > 0.0:
            y = y / 0.0
        y = y + 1.0
    return y


def locked(x):
    with LOCK:
        y = math.tanh(x) * x
    return y


def jax_locked(x):
    return jnp.tanh(x) * x


def user_manager_swallows(x):
    with Trace("outer") as scale, Trace("inner", swallow=True):
        y = x * scale
        if x > 0.0:
            raise ValueError
        y = y * y
    return y + x


def user_manager_sees_exception(x):
    try:
        with Trace("m"):
            y = x * 3.0
            if x > 0.0:
                raise KeyError
            y = y + 1.0
    except KeyError:
        y = y * x
    return y


def with_without_as_in_loop(x, n):
    acc = 0.0
    for i in range(n):
        with Trace(i):
            acc = acc + x * i
    return acc + x


def jax_with_without_as_in_loop(x, n):
    acc = 0.0
    for i in range(n):
        acc = acc + x * i
    return acc + x


def return_from_with(x):
    with Trace("r"):
        y = x * x
        return y * 2.0


def jax_return_from_with(x):
    return x * x * 2.0


def array_try(w, x):
    h = np.tanh(w * x)
    try:
        if np.max(h) > 0.5:
            raise ValueError
        out = np.sum(h * h)
    except ValueError:
        out = np.sum(h) * 2.0
    return out


def inactive_helper_raises(x, n):
    try:
        m = checked(n * 0.5)
        y = x * m
    except ValueError:
        y = x * x
    return y


def else_raises(x):
    try:
        y = x * 2.0
    except ValueError:
        LOG.append("caught by its own try (wrong)")
        y = 0.0
    else:
        if x > 0.0:
            raise ValueError("from else")
        y = y * x
    return y


def outer_catches_else(x):
    try:
        y = else_raises(x)
    except ValueError:
        LOG.append("outer")
        y = x * x
    return y


def finally_raises(x):
    try:
        y = x * 3.0
    finally:
        if x > 0.0:
            raise KeyError("from finally")
    return y


def catches_finally(x):
    try:
        y = finally_raises(x)
    except KeyError:
        y = x
    return y * x


def every_jump_through_two_finallys(x, n):
    acc = x
    i = 0
    while True:
        i = i + 1
        try:
            try:
                if i > n:
                    break
                acc = acc * 1.1
                if i % 2 == 0:
                    raise ValueError
                LOG.append(("odd", i))
            except ValueError:
                LOG.append(("even", i))
                if i == 4:
                    return acc * x
                continue
            finally:
                LOG.append(("finally", i))
                acc = acc + 0.5
        finally:
            LOG.append(("outer finally", i))
    return acc


def with_in_try_in_loop(x, n):
    total = 0.0
    for i in range(n):
        try:
            with Trace(i):
                v = x * i
                if i == 2:
                    raise ValueError
                total = total + v
        except ValueError:
            total = total - v
    return total * x


def return_in_finally_in_loop(x, n):
    for i in range(n):
        try:
            x = x * 1.2
            if i == 1:
                raise ValueError
        finally:
            if i == 2:
                return x * x  # noqa: B012 (reached only when n == 3: i == 1 raised otherwise)
    return x


CASES = [
    Case(caught_value_error, (floats(-2.0, 2.0, exclude_near=(0.5,)),), jax=jax_caught_value_error),
    Case(division_guarded, (floats(-3.0, 3.0, exclude_near=(0.0, 1.0)),)),
    Case(handler_reraises_to_outer, (floats(-3.0, 3.0, exclude_near=(0.0, math.pi, -math.pi)),)),
    Case(finally_on_every_path, (floats(-2.0, 2.0, exclude_near=(0.0,)),), jax=jax_finally_on_every_path),
    Case(return_inside_try, (floats(-2.0, 2.0, exclude_near=(0.0,)),)),
    Case(return_in_finally_overrides, (floats(-2.0, 2.0),)),
    Case(loop_continues_from_handler, (floats(-2.0, 2.0), ints(0, 7))),
    Case(loop_breaks_from_try_with_finally, (floats(0.5, 3.0), ints(0, 6))),
    Case(nested_in_branches, (floats(-2.0, 2.0, exclude_near=(0.0,)), floats(0.1, 2.0)), (0, 1)),
    Case(calls_helper_with_try, (floats(-2.0, 2.0, exclude_near=(0.0,)), floats(-2.0, 2.0)), (0, 1)),
    Case(recursive_with_try, (floats(0.5, 3.0), ints(0, 5))),
    Case(exception_value_used, (floats(-2.0, 2.0),)),
    Case(bare_except_and_else, (floats(-2.0, 2.0, exclude_near=(0.0,)),)),
    Case(errstate_raises, (floats(-2.0, 3.0, exclude_near=(1.0,)),)),
    Case(errstate_ignored, (arrays(3),), jax=jax_errstate_ignored),
    Case(warnings_caught, (floats(-2.0, 2.0),), jax=jax_warnings_caught),
    Case(suppressed, (floats(-2.0, 2.0, exclude_near=(0.0,)),)),
    Case(locked, (floats(-2.0, 2.0),), jax=jax_locked),
    Case(user_manager_swallows, (floats(-2.0, 2.0, exclude_near=(0.0,)),)),
    Case(user_manager_sees_exception, (floats(-2.0, 2.0, exclude_near=(0.0,)),)),
    Case(with_without_as_in_loop, (floats(-2.0, 2.0), ints(0, 5)), jax=jax_with_without_as_in_loop),
    Case(return_from_with, (floats(-2.0, 2.0),), jax=jax_return_from_with),
    Case(array_try, (arrays(3), arrays(3)), (0, 1)),
    Case(inactive_helper_raises, (floats(-2.0, 2.0), ints(0, 4))),
    Case(outer_catches_else, (floats(-2.0, 2.0, exclude_near=(0.0,)),)),
    Case(catches_finally, (floats(-2.0, 2.0, exclude_near=(0.0,)),)),
    Case(every_jump_through_two_finallys, (floats(-2.0, 2.0), ints(0, 6))),
    Case(with_in_try_in_loop, (floats(-2.0, 2.0), ints(0, 4))),
]
