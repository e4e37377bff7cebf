"""Writes and `x op= y` through one name of an array that another name holds too (issue 15 item 1:
`c = a; c += b` changes `a`, as numpy does). transforms/aliasing.py finds the names that are the
written array itself on every path and binds them to it again after the write (`a = c`), or, where an
`x op= y` may have rebound instead of changing in place, checks when it runs
(`alias_after_update`, `alias_after_write`: the array itself followed, a number kept, anything else
refused). Each program is checked against finite differences and its own values; a name that may
be a view or another array stays refused."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad

X = np.linspace(0.1, 0.9, 5)


def item_write_through_a_copy_of_the_name(x):
    a = x * 1.0
    c = a
    c[0] = x[1] * 3.0
    return np.sum(a * x)


def whole_write_then_both_names(x):
    a = x * 1.0
    c = a
    c[...] = a + np.sin(x)
    return np.sum(a * c)


def augmented_through_the_other_name(x):
    a = x * 2.0
    c = a
    c += np.cos(x)
    c *= x
    return np.sum(a * x) + np.sum(c)


def chain_of_names_in_a_loop(x):
    a = x * 1.0
    b = a
    c = b
    for i in range(3):
        c += x * i
        c[i % 2] = c[1 - i % 2] * x[2]
        b *= 1.5
    return np.sum(a * b) * np.sum(c)


def _bump(v):
    w = v
    w += 1.0
    w[2] = w[2] * w[0]
    return np.sum(v * v)


def callee_parameter_sees_the_change(x):
    y = x * 2.0
    return _bump(y)  # _bump's v sees what it wrote through w (the caller reading y again is refused)


def numbers_and_tuples_are_rebound(x):
    s = x[0] * 2.0
    t = s
    t += 1.0  # a number: s keeps its value
    p = (x[1], x[2])
    q = p
    q += (x[3],)  # a tuple: p keeps its two elements
    return s * t + sum(p) * sum(q)


@pytest.mark.parametrize(
    "function",
    [
        item_write_through_a_copy_of_the_name,
        whole_write_then_both_names,
        augmented_through_the_other_name,
        chain_of_names_in_a_loop,
        callee_parameter_sees_the_change,
        numbers_and_tuples_are_rebound,
    ],
)
def test_the_other_name_sees_the_change_and_its_gradient(function):
    value = function(X.copy())
    argument = X.copy()
    got, _ = cpsgrad.value_and_grad(function)(argument)
    assert got == value
    np.testing.assert_array_equal(argument, X)  # the differentiated argument is left as it was
    check_grad(function, X.copy())


def test_the_names_are_bound_again_in_the_program():
    program = cpsgrad.show(item_write_through_a_copy_of_the_name, example=(X,))
    assert "c_1 = cpsgrad_runtime.written(c, 0, " in program and "a_1 = c_1" in program
    program = cpsgrad.show(augmented_through_the_other_name, example=(X,))
    assert "a_1 = cpsgrad_runtime.alias_after_update(a, c_1, " in program


def view_written_then_base_read(x):
    a = x * 1.0
    v = a[1:4]
    v[...] = v * 2.0
    return np.sum(a**2)


def one_of_two_arrays_written(x, flag):
    a = x * 1.0
    b = x * 2.0
    c = a if flag else b
    c[0] = 5.0
    return np.sum(a * b)


def test_a_view_or_a_name_that_may_be_another_array_is_still_refused():
    with pytest.raises(cpsgrad.UnsupportedError, match=r"read of a after a write into the array it shares"):
        cpsgrad.grad(view_written_then_base_read)(X.copy())
    with pytest.raises(cpsgrad.UnsupportedError, match=r"after a write into the array it shares"):
        cpsgrad.grad(one_of_two_arrays_written)(X.copy(), True)


def rebound_then_written(x):
    a = [x[0] * 1.0, x[1] * 2.0]
    c = a
    c += [x[2] * 3.0]  # a list: Python extends a in place, and so does runtime.updated
    c[0] = x[3] * 4.0
    return sum(a)


def test_a_list_an_update_extends_in_place_is_followed_by_its_other_name():
    check_grad(rebound_then_written, X.copy())
    np.testing.assert_array_equal(cpsgrad.grad(rebound_then_written)(X.copy()), [0.0, 2.0, 3.0, 4.0, 0.0])
