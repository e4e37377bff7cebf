"""Programs on which cpsgrad's own machinery once crashed or differed from Python (found by
cpsgrad.testing.fuzz); each must now give the original's outcome or a cpsgrad error."""

import numpy as np


def empty_body(x):
    pass


def docstring_only(x):
    """Nothing but a docstring."""


def nested_empty_def(x):
    def inner(): pass  # noqa: E704
    return x


def empty_branches(x, y):
    if x + y:
        pass
    elif y:
        pass
    else:
        pass
    return x * 2.0


def bare_undefined_name(x):
    undefined_name  # noqa: B018, F821
    return x


def bare_missing_attribute(x):
    x.nope  # noqa: B018
    return x


def keyword_only(x, *, n):
    return x * n


def unbound_in_matmul(x):
    a1 = (1e-3 @ a1) / x  # noqa: F821
    return a1


def unbound_copied(x):
    a1 = a1  # noqa: F821, F841
    return x


def unbound_before_bad_keyword(x):
    a1 = np.log(a1, dtype=float)  # noqa: F821
    return x + a1


def unbound_after_loop(x, n):
    for i in range(n):
        y = x * i
    return y


def unbound_in_numpy_call(x):
    if x > 5.0:
        a = x
    return x * np.sum(a)


def helper(u, w=1.0):
    return u


def unbound_before_a_later_call(x):
    a3 = helper(x, a3 - np.sqrt(-0.25, axis=-1))  # noqa: F821
    return a3


def unbound_in_a_loop_before_a_comprehension(x):
    for _ in (1, 2):
        a5 = helper(a5, {v: v / "s" for v in [0.0]})  # noqa: F821, F841
    return x * 2.0


def maybe_unbound_compared_by_identity(x, c):
    if c:
        a = x
    b = a is None  # noqa: F841
    return x * 2.0


def maybe_unbound_before_a_comprehension(x, c):
    if c:
        a = x
    return x * helper(a, [v * 2.0 for v in (x, "s")])


def closure_of_an_unbound_variable(x):
    a1 = (lambda u=(lambda: a1): u())()  # noqa: F841
    return x


def maybe_unbound_in_an_untaken_branch(x, y):
    for _ in (1, 2):
        a6 = y if x > -10.0 else (y + a6)  # noqa: F821  (never taken: a6 is never read unbound)
    return a6 * x


def augmented_assignment_on_an_array(x, y):
    a1 = y * 1.0
    b = a1.reshape(3)  # a view of a1's array, read after a1 changes: refused when it runs
    a1 += x
    return float(np.sum(a1 * b))


def raise_from_a_number(x, n):
    raise ValueError from (0 % n)


def raise_from_an_exception(x):
    raise ValueError("outer") from KeyError("inner")


def refused_in_a_lambda_default(x, y):
    g = lambda u, w=(list(y) % x): 1.0  # noqa: E731, F841
    return x * 2.0


def no_rule_in_a_lambda_default(x, y):
    g = lambda u=(np.unwrap(y) if x > 0 else y): u  # noqa: E731, B008
    return np.sum(g()) + x


def undefined_global_and_unbound_local(x, c):
    if c:
        a = x
    return undefined_name + a  # noqa: F821
