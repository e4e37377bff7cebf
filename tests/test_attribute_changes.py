"""`obj.attr op= v` on an array attribute in methods (runtime/objects.py `_in_place`): numpy
changes the array in place, which cpsgrad computes as a new array only where the object holds it
alone (written fresh, or left by a plain `__init__` with no other reference, and not read out into
a name that keeps it since); everywhere else it is refused with the location and a rewrite. Each
gradient against finite differences and the same program written with new values."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import NoRuleError, UnsupportedError
from cpsgrad.testing import check_grad

X = np.array([0.3, 0.5, -0.2])


class Running:
    def __init__(self, n):
        self.avg = np.zeros(n)
        self.count = 0

    def update(self, x):
        self.count += 1
        self.avg += (x - self.avg) / self.count
        self.avg *= 1.5
        self.avg -= 0.1 * x
        self.avg /= 2.0
        return np.sum(self.avg)


def running(x):
    r = Running(3)
    s = 0.0
    for i in range(3):
        s = s + r.update(x * (i + 1))
    return s + np.sum(r.avg**2)


def running_new_values(x):
    avg, count, s = np.zeros(3), 0, 0.0
    for i in range(3):
        v = x * (i + 1)
        count = count + 1
        avg = (((avg + (v - avg) / count) * 1.5) - 0.1 * v) / 2.0
        s = s + np.sum(avg)
    return s + np.sum(avg**2)


def test_a_running_mean_built_by_a_plain_init_changes_in_place():
    check_grad(running, X)
    value, gradient = cpsgrad.value_and_grad(running)(X)
    assert value == running(X)
    np.testing.assert_allclose(gradient, cpsgrad.grad(running_new_values)(X), rtol=1e-12)


class Momentum:
    def __init__(self, w):
        self.v = np.zeros_like(w)  # w is differentiable: __init__ is differentiated, the write is fresh

    def step(self, w, g):
        self.v *= 0.9
        self.v -= 0.1 * g
        return w + self.v


def descend(w):
    opt = Momentum(w)
    for _ in range(4):
        w = opt.step(w, np.sin(w) * w)
    return np.sum(w**2)


def test_an_optimizer_state_changed_in_place_in_a_loop():
    check_grad(descend, X)
    assert cpsgrad.value_and_grad(descend)(X)[0] == descend(X)


class Holder:
    def __init__(self, m):
        self.m = m

    def add(self, g):
        self.m += g
        return np.sum(self.m)


def shared_by_the_caller(x):
    a = x * 2.0
    h = Holder(a)  # h.m is a: the caller's a sees h.m += g
    h.add(x)
    return np.sum(a * x)


def read_out_before(x):
    r = Running(3)
    held = r.avg  # held is r.avg: update changes what held sees
    r.update(x)
    return np.sum(held * x)


def kept_from_a_return(x):
    h = Holder(np.zeros(3))  # the caller's temporary holds the array too
    h.add(x)
    return np.sum(h.m)


class Returns:
    def __init__(self, w):
        self.m = w * 1.0  # fresh: the object holds it alone

    def current(self):
        return self.m

    def add(self, g):
        self.m += g


def returned_then_changed(x):
    r = Returns(x)
    before = r.current()
    r.add(x)
    return np.sum(before * x)


@pytest.mark.parametrize("function", [shared_by_the_caller, read_out_before, kept_from_a_return, returned_then_changed])
def test_an_array_another_name_may_hold_is_refused(function):
    with pytest.raises(UnsupportedError, match=r"test_attribute_changes\.py:\d+:\d+: augmented assignment to \.\w+"):
        cpsgrad.grad(function)(X)


def test_the_refusal_names_the_rewrite():
    with pytest.raises(UnsupportedError, match=r"obj\.m = obj\.m \+ value"):
        cpsgrad.grad(shared_by_the_caller)(X)


class Single:
    def __init__(self, n):
        self.m = np.zeros(n, dtype=np.float32)

    def add(self, g):
        self.m += g  # numpy keeps float32 in place
        return np.sum(self.m)


def cast_in_place(x):
    return Single(3).add(x)


def test_a_result_numpy_would_cast_is_refused():
    with pytest.raises(UnsupportedError, match=r"float32\[3\] array"):
        cpsgrad.grad(cast_in_place)(X)


class Scalars:
    def __init__(self, x):
        self.total = x

    def bump(self, v):
        self.total += v
        self.total *= v
        self.total = self.total * 2.0
        return self.total


def scalars(x):
    s = Scalars(x)
    for _ in range(2):
        s.bump(x)
    return s.total


def test_numbers_and_new_values_are_unaffected():
    check_grad(scalars, 0.7)
    assert cpsgrad.value_and_grad(scalars)(0.7)[0] == scalars(0.7)


# --- a user function called for its effect on an object (issue 15 item 5) ------------------------


def setm(obj, x):
    obj.m = x


def scale(obj, s):
    obj.m = obj.m * s


class Box:
    def __init__(self):
        self.m = 0.0


def set_by_helpers(x):
    b = Box()
    setm(b, x * 2.0)
    for i in range(3):
        scale(b, np.sin(x) + i)
    return np.sum(b.m * x)


def test_a_helper_called_for_its_effect_writes_the_callers_object():
    check_grad(set_by_helpers, X)
    assert cpsgrad.value_and_grad(set_by_helpers)(X)[0] == set_by_helpers(X)


# --- bound methods as values ------------------------------------------------------------------


class Affine:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return x * self.w

    def wave(self, x):
        return np.sin(x * self.w)

    def twice(self, x):
        f = self.apply
        return f(f(x))


def repeat(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def compose(f, g):
    return lambda x: f(g(x))


def bound_as_values(x):
    m = Affine(x)
    g = m.apply
    fs = [m.wave, m.apply]
    h = compose(m.wave, m.apply)
    mapped = sum(map(m.apply, [x, x * 2.0]))
    return np.sum(g(x) + fs[0](x) + fs[1](x) + h(x) + mapped + repeat(m.wave, x, 3) + m.twice(x))


def written_after_the_read(x):
    m = Affine(2.0)
    f = m.apply
    m.w = x  # f is bound to m: it sees the write
    return np.sum(f(x))


@pytest.mark.parametrize("function", [bound_as_values, written_after_the_read])
def test_bound_methods_read_as_values(function):
    check_grad(function, X)
    assert cpsgrad.value_and_grad(function)(X)[0] == function(X)


def through_an_argument(m, x):
    h = m.apply
    return np.sum(h(x))


def test_a_bound_method_of_a_differentiated_object_argument():
    m = Affine(np.array([1.0, 2.0, 3.0]))
    gradient, _ = cpsgrad.grad(through_an_argument, argnums=(0, 1))(m, X)
    np.testing.assert_allclose(gradient.w, X, rtol=1e-12)


# --- list methods of an attribute's list ------------------------------------------------------


class History:
    def __init__(self):
        self.items = []
        self.names = []

    def record(self, v):
        self.items.append(v)
        self.names.append("step")  # nothing differentiable: changed in place as Python does


def history(x):
    h = History()
    for i in range(4):
        h.record(x * i)
        if i % 2:
            h.items.append(np.sin(x))
    h.items.extend([x, x * x])
    h.items.extend((np.cos(x),))
    last = h.items.pop()
    total = 0.0
    for item in h.items:
        total = total + np.sum(item * item)
    return total + np.sum(last) * len(h.names)


def test_append_extend_and_pop_on_an_attributes_list_in_a_loop():
    check_grad(history, X)
    assert cpsgrad.value_and_grad(history)(X)[0] == history(X)


class Given:
    def __init__(self, items):
        self.items = items  # the caller's list

    def record(self, v):
        self.items.append(v)


def shared_list(x):
    kept = []
    g = Given(kept)
    g.record(x)
    return np.sum(kept[0])


def test_a_list_another_name_holds_is_refused():
    with pytest.raises(UnsupportedError, match=r"test_attribute_changes\.py:\d+:\d+: augmented assignment to \.items"):
        cpsgrad.grad(shared_list)(X)


def names_seen_by_the_caller(x):
    seen = []
    g = Given(seen)
    g.record("first")  # nothing differentiable: the caller's list changes, as in Python
    return np.sum(x) * len(seen)


def test_a_shared_list_without_differentiable_values_changes_in_place():
    assert cpsgrad.value_and_grad(names_seen_by_the_caller)(X) == (
        names_seen_by_the_caller(X),
        pytest.approx(np.ones(3)),
    )


class Queue:
    def __init__(self):
        import collections

        self.items = collections.deque()

    def push(self, v):
        self.items.append(v)


def deque_append(x):
    q = Queue()
    q.push(x)
    return np.sum(x)


def test_a_deque_attribute_is_refused_with_the_rewrite():
    with pytest.raises(UnsupportedError, match=r"\.items\.append\(\.\.\.\) on a deque.*items = obj\.items"):
        cpsgrad.grad(deque_append)(X)


class Summed:
    def __init__(self, w):
        self.items = []
        self.w = w

    def drained(self):
        return sum(self.items) + len(self.items) * self.w  # read at once: the list stays the object's alone

    def bump(self, v):
        self.items.append(v * self.w)


def summed_then_appended(x):
    s = Summed(x)
    total = 0.0
    for i in range(3):
        total = total + s.drained()
        s.bump(x + i)
    return total + s.drained()


def test_a_list_read_by_sum_then_appended():
    """Found by the generator (class_forms.Acc0.drained then bump): `sum(self.items)` shared
    nothing, yet it made the later append refused."""
    check_grad(summed_then_appended, 0.4)
    assert cpsgrad.value_and_grad(summed_then_appended)(0.4)[0] == summed_then_appended(0.4)


def add_item(obj, v):
    obj.items.append(v)


def helpers_append(x):
    h = History()
    add_item(h, np.sin(x))
    for i in range(2):
        add_item(h, x * i)
    return sum(np.sum(item * x) for item in h.items)


def test_a_helper_appends_to_an_objects_list():
    check_grad(helpers_append, X)
    assert cpsgrad.value_and_grad(helpers_append)(X)[0] == helpers_append(X)


def log_into(namespace, x):
    namespace.log.append("called")  # nothing differentiable, into a SimpleNamespace: in place, as Python
    return np.sum(x * x)


def test_a_list_of_a_library_object_without_differentiable_values_changes_in_place():
    import types

    namespace = types.SimpleNamespace(log=[])
    kept = namespace.log
    np.testing.assert_allclose(cpsgrad.grad(log_into, argnums=1)(namespace, X), 2 * X)
    assert namespace.log is kept and namespace.log == ["called"]


class Buffer:
    def __init__(self, n):
        self.data = np.zeros(n)  # named like an array's attribute: its reads are the array's

    def fill_up(self, v):
        self.data += v


def array_named(x):
    b = Buffer(3)
    held = [b][0].data  # Python: held is b.data, and sees fill_up's change
    b.fill_up(x)
    return np.sum(held * x)


def test_an_attribute_named_like_an_arrays_is_never_taken_for_alone():
    """Refused (at the read here, as an array's attribute of a differentiable value), never computed
    as a new array under the alias."""
    with pytest.raises((UnsupportedError, NoRuleError), match=r"test_attribute_changes\.py:\d+:\d+: .*\.data"):
        cpsgrad.grad(array_named)(X)
