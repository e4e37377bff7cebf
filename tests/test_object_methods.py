"""A user object's method named like a dict's, a list's or an array's (`r.get()`, `s.pop()`,
`m.sum()`), on a name that surely holds an instance of a user class (transforms/object_methods.py):
called as the user's method, not bound to the rule of `dict.get` (a misleading NoRuleError before)."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad

X = np.linspace(0.1, 0.9, 5)


class Reader:
    def __init__(self, w):
        self.w = w

    def get(self, scale=2.0):
        return self.w * scale

    def sum(self):
        return self.w + self.w * self.w


class Stack:
    def __init__(self, top):
        self.top = top

    def pop(self):
        return self.top * 3.0


def reads_with_get(x):
    r = Reader(x[0])
    return r.get() * x[1] + r.get(x[2])


def named_like_array_and_list_methods(x):
    r = Reader(x[1] * x[2])
    s = Stack(np.sin(x[3]))
    return r.sum() * s.pop()


def a_dict_get_is_still_the_rule(x):
    d = {"a": x[0] * 2.0}
    return d.get("a") * x[1]


@pytest.mark.parametrize("function", [reads_with_get, named_like_array_and_list_methods, a_dict_get_is_still_the_rule])
def test_a_user_method_named_like_a_container_method_is_the_users(function):
    assert cpsgrad.value_and_grad(function)(X.copy())[0] == function(X.copy())
    check_grad(function, X.copy())


def maybe_a_dict(x, flag):
    r = Reader(x[0]) if flag else {"w": x[0]}
    return r.get("w") if not flag else r.w


def test_a_name_that_may_hold_another_kind_is_left_to_the_rules():
    assert cpsgrad.grad(maybe_a_dict)(X.copy(), False)[0] == 1.0


# ---- the other everyday forms of the brief: what works, and what is refused where it is written ----


def dict_of_pairs_and_keywords(x):
    pairs = [("a", x[0]), ("b", x[1] * x[2])]
    d = dict(pairs, c=x[3] * 2.0, a=x[4])  # a keyword replaces a pair's value, as in Python
    return d["a"] * d["b"] + d["c"]


def test_dict_of_pairs_and_keywords():
    assert cpsgrad.value_and_grad(dict_of_pairs_and_keywords)(X.copy())[0] == dict_of_pairs_and_keywords(X.copy())
    check_grad(dict_of_pairs_and_keywords, X.copy())
    assert cpsgrad.grad(dict_of_pairs_and_keywords)(X.copy())[0] == 0.0


def _products(x):
    for i in range(3):
        yield x[i] * x[i + 1]


def generator_in_a_generator_expression(x):  # two `for` clauses: refused (one over the call is taken)
    return sum(v * w for v in _products(x) for w in x)


def closure_appending(x):
    out = []

    def push(v):
        out.append(v * 2.0)

    for i in range(3):
        push(x[i])
    return sum(out)


def _fill(buf, v):
    buf[0] = v * 3.0


def callee_writing_the_callers_array(x):
    buf = np.zeros(2)
    _fill(buf, x[1])
    return np.sum(buf) * x[0]


@pytest.mark.parametrize(
    "function, offset, words",
    [
        (generator_in_a_generator_expression, 1, r"generator call in this position: iterate the call where it is made"),
        (closure_appending, 7, r"call of push for its effect: push receives a differentiable value"),
    ],
)
def test_the_forms_still_refused_are_refused_where_they_are_written(function, offset, words):
    import inspect

    with pytest.raises(cpsgrad.UnsupportedError, match=words) as raised:
        cpsgrad.grad(function)(X.copy())
    assert raised.value.location.line == inspect.getsourcelines(function)[1] + offset


def test_a_callee_writing_into_the_callers_array_read_after_differentiates():
    # once refused ("_fill writes into the array of its parameter buf"): the call is now one of
    # _fill's variant returning buf (transforms/written_arguments.py)
    from cpsgrad.testing import check_grad

    check_grad(callee_writing_the_callers_array, X.copy())
