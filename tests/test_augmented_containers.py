"""`x op= y` on lists, dicts and their subclasses as Python's in-place operators run it (transforms/
augmented.py, cpsgrad/runtime/augmented.py): a subclass of list or dict is changed in place (the
caller and every name sharing it see the change, its type kept), a list's `+=` extends by any
iterable (`xs += (v,)`), a dict's `|=` takes pairs, and a class's own `__iadd__` (written in Python)
is refused with the statement's location rather than replaced by `__add__`. Each program's value
and its arguments' final contents are Python's; gradients against finite differences."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad

X = np.linspace(0.1, 0.9, 5)


class Items(list):
    pass


class Table(dict):
    pass


class Doubling(list):
    def __iadd__(self, other):
        for item in other:
            self.append(item * 2.0)
        return self


def extend_parameter(x, a):
    a += [x[2] * 3.0]
    return sum(a) * len(a)


def extend_alias(x, a):
    c = a
    c += [x[1] * x[2]]
    return sum(a) + c[0] * x[0]


def extend_empty_subclass_through_alias(x):
    a = Items()
    c = a
    c += [x[2] * 3.0, x[0]]
    return sum(a) * len(a)


def update_parameter(x, d):
    d |= {"b": x[1] * 3.0}
    return sum(d.values()) * len(d)


def update_alias(x, d):
    e = d
    e |= {"b": x[1] * 3.0}
    return sum(d.values()) + d["b"] * x[3]


def _values(function, *arguments):
    """(value, the arguments after) of Python's run and of cpsgrad's, each on fresh copies."""
    ours = [type(a)(a) for a in arguments]
    theirs = [type(a)(a) for a in arguments]
    expected = function(X.copy(), *theirs)
    value, _ = cpsgrad.value_and_grad(function)(X.copy(), *ours)
    return (expected, theirs), (value, ours)


def extend_parameter_caller(x):
    return extend_parameter(x, Items([1.0, 2.0]))


def extend_alias_caller(x):
    return extend_alias(x, Items([1.0]))


def update_parameter_caller(x):
    return update_parameter(x, Table(a=1.0))


def update_alias_caller(x):
    return update_alias(x, Table(a=1.0))


@pytest.mark.parametrize(
    "function, argument, caller",
    [
        (extend_parameter, Items([1.0, 2.0]), extend_parameter_caller),
        (extend_alias, Items([1.0]), extend_alias_caller),
        (update_parameter, Table(a=1.0), update_parameter_caller),
        (update_alias, Table(a=1.0), update_alias_caller),
    ],
)
def test_a_subclass_argument_is_changed_in_place_as_python_does(function, argument, caller):
    (expected, theirs), (value, ours) = _values(function, argument)
    assert value == expected
    assert ours == theirs and type(ours[0]) is type(argument)
    check_grad(caller, X.copy())


def test_a_local_subclass_shared_by_two_names_keeps_its_type():
    assert cpsgrad.value_and_grad(extend_empty_subclass_through_alias)(X.copy())[0] == (
        extend_empty_subclass_through_alias(X.copy())
    )
    check_grad(extend_empty_subclass_through_alias, X.copy())


def extend_by_tuple(x):
    a = [x[0] * 1.0]
    a += (x[1] * 2.0, x[2])
    return sum(a) * len(a)


def extend_by_tuple_through_alias(x):
    a = [x[0] * 1.0]
    c = a
    c += (x[1] * 2.0, x[2])
    c += (v * v for v in (x[3], x[4]))
    return sum(a) * len(a)


def update_by_pairs(x):
    d = {"a": x[0]}
    e = d
    e |= [("b", x[1] * 2.0), ("a", x[2])]
    return d["a"] * d["b"]


def extend_parameter_by_tuple(x, a):
    a += (x[1] * 2.0, x[2])
    return sum(a) * len(a)


def extend_parameter_by_tuple_caller(x):
    return extend_parameter_by_tuple(x, [x[0]])


def test_a_parameter_list_extended_by_a_tuple_changes_in_place():
    (expected, theirs), (value, ours) = _values(extend_parameter_by_tuple, Items([1.0]))
    assert value == expected and ours == theirs and type(ours[0]) is Items
    check_grad(extend_parameter_by_tuple_caller, X.copy())


@pytest.mark.parametrize("function", [extend_by_tuple, extend_by_tuple_through_alias, update_by_pairs])
def test_the_operand_is_taken_as_the_in_place_operator_takes_it(function):
    check_grad(function, X.copy())


def own_iadd_local(x):
    a = Doubling()
    a += [x[1] * 3.0]
    return sum(a) + len(a)


def own_iadd_parameter(x, a):
    a += [x[1] * 3.0]
    return sum(a)


def subclass_rebound(x):
    a = Items()
    a += [x[1] * 3.0]
    return sum(a)


def test_what_would_be_computed_otherwise_is_refused_where_it_is_written():
    located = r"test_augmented_containers.py:\d+:\d+: a \+= .*Doubling.__iadd__ is written in Python"
    with pytest.raises(cpsgrad.UnsupportedError, match=located):
        cpsgrad.grad(own_iadd_local)(X.copy())
    with pytest.raises(cpsgrad.UnsupportedError, match=r"Doubling.__iadd__ is written in Python"):
        cpsgrad.grad(own_iadd_parameter)(X.copy(), Doubling([1.0]))
    with pytest.raises(cpsgrad.UnsupportedError, match=r"a \+= \[x\[1\] \* 3.0\] \(a Items\).*a new plain list"):
        cpsgrad.grad(subclass_rebound)(X.copy())


def numbers_and_arrays_unchanged(x, n: int):
    total = 0.0
    acc = np.zeros(3)
    for i in range(n):
        total += x[i] * x[i + 1]
        acc += x[i:i + 3]
    t = (x[0],)
    t += (x[1],)
    return total + np.sum(acc * acc) + t[0] * t[1]


def test_numbers_arrays_and_tuples_are_computed_as_before():
    check_grad(numbers_and_arrays_unchanged, X.copy(), 2)
