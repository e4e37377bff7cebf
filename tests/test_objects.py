"""Objects of the user's own classes (runtime/objects.py, transforms/attributes.py): built in the
differentiated function or differentiated as arguments, their attributes read and written, their
methods called; each gradient against finite differences or the same program written without
objects, the values and the objects' final states against Python's, and every refusal with its
location. The corpus cases are in tests/corpus/object_programs.py."""

import dataclasses
import functools
import inspect

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import ArgumentError, NoRuleError, UnsupportedError
from cpsgrad.testing import check_grad

RNG = np.random.default_rng(7)


class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b
        self.name = "layer"
        self.units = 3

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b)


class Model:
    def __init__(self, layers):
        self.layers = layers
        self.scale = 2.0

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.scale * np.sum(x**2)


def flat(w1, b1, w2, b2, scale, x):
    x = np.tanh(x @ w1 + b1)
    x = np.tanh(x @ w2 + b2)
    return scale * np.sum(x**2)


def _parameters():
    return RNG.normal(size=(3, 3)), RNG.normal(size=3), RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=3)


# --- objects built in the function ---------------------------------------------------------------


def built_inside(w1, b1, w2, b2, x):
    return Model([Layer(w1, b1), Layer(w2, b2)]).forward(x)


def test_an_mlp_built_inside_matches_finite_differences_and_the_flat_program():
    w1, b1, w2, b2, x = _parameters()
    check_grad(built_inside, w1, b1, w2, b2, x, argnums=(0, 1, 2, 3, 4))
    value, gradients = cpsgrad.value_and_grad(built_inside, argnums=(0, 1, 2, 3, 4))(w1, b1, w2, b2, x)
    assert value == built_inside(w1, b1, w2, b2, x)
    expected = cpsgrad.grad(flat, argnums=(0, 1, 2, 3, 5))(w1, b1, w2, b2, 2.0, x)
    for got, want in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


class Counter:
    def __init__(self):
        self.total = 0.0
        self.calls = 0

    def add(self, v):
        self.total += v
        self.calls += 1
        return self.calls


def counted(x, n):
    counter = Counter()
    for i in range(n):
        if i % 2:
            counter.add(x * i)
        else:
            _ = counter.add(np.sin(x))  # the result discarded
    return counter.total * counter.calls


def test_a_method_writing_self_in_a_loop_and_branch():
    for n in range(5):
        check_grad(counted, 0.3, n)
        expected = (sum(i for i in range(n) if i % 2) + np.cos(0.3) * sum(1 for i in range(n) if not i % 2)) * n
        assert cpsgrad.grad(counted)(0.3, n) == pytest.approx(expected, rel=1e-12)


def alias(w):
    a = Layer(w, 0.0)
    b = a
    b.w = 2.0 * b.w
    c = [a]
    return np.sum(c[0].w * w) + np.sum(a.w)


def test_two_names_and_a_container_see_a_write():
    w = RNG.normal(size=3)
    np.testing.assert_allclose(cpsgrad.grad(alias)(w), 4.0 * w + 2.0, rtol=1e-12)


def overwritten(x):
    holder = Layer(x * 3.0, 0.0)
    before = holder.w
    holder.w = 5.0  # a constant: the reads after it get no gradient through the old value
    holder.w += x * x
    return before * 2.0 + holder.w * x


def augmented_numbers(x):
    holder = Base(x)
    holder.w += x
    holder.w *= x
    holder.w **= 2
    return holder.w


def test_augmented_writes_of_numbers():
    assert cpsgrad.grad(augmented_numbers)(0.5) == pytest.approx(16.0 * 0.5**3, rel=1e-12)


def test_the_overwritten_value_gets_only_the_reads_before_the_write():
    x = 0.7
    assert cpsgrad.grad(overwritten)(x) == pytest.approx(6.0 + 5.0 + 3.0 * x * x, rel=1e-12)


def scale_weight(layer, factor):
    layer.w = layer.w * factor


def helpers_write(w, s):
    layer = Layer(w, s)
    _ = scale_weight(layer, s)
    return np.sum(layer.w) * layer.b


def test_a_helper_writing_an_attribute_of_an_object_it_is_given():
    w = RNG.normal(size=3)
    check_grad(helpers_write, w, 0.6, argnums=(0, 1))


class Node:
    def __init__(self, value, children=()):
        self.value = value
        self.children = list(children)

    def total(self):
        s = self.value
        for child in self.children:
            s = s + child.total() * child.value
        return s


def tree(x):
    root = Node(x, [Node(x * x, [Node(np.sin(x))]), Node(2.0 * x)])
    root.children[1].value = root.children[1].value + x
    return root.total()


def test_objects_with_children_and_recursion():
    check_grad(tree, 0.4)


class Base:
    def __init__(self, w):
        self.w = w


class Child(Base):
    def __init__(self, w, b):
        super().__init__(w)
        self.b = b


class Other(Base):
    def __init__(self, w, b):
        Base.__init__(self, w * b)
        self.b = b


def inherited(x):
    return Child(x * 2.0, x).w * Other(x, x).w


def test_init_of_a_base_class_through_super_and_by_name():
    assert cpsgrad.grad(inherited)(0.5) == pytest.approx(6.0 * 0.5**2, rel=1e-12)


def captured(x):
    layer = Base(x)
    g = lambda v: layer.w * v  # noqa: E731
    return g(x) + g(2.0)


def test_a_closure_capturing_an_object():
    assert cpsgrad.grad(captured)(0.5) == pytest.approx(2.0 * 0.5 + 2.0, rel=1e-12)


def guarded(x):
    a = Base(x)
    try:
        a.w = a.w * x
        raise ValueError("stop")
    except ValueError:
        a.w = a.w + 1.0
    return a.w * x


def test_a_write_in_a_try_runs_its_backward_once():
    check_grad(guarded, 0.8)


@dataclasses.dataclass
class Affine:
    w: np.ndarray

    def __call__(self, x):
        return np.sum(np.tanh(x @ self.w))

    def forward(self, x):
        return np.sum(np.tanh(x @ self.w))


def dataclass_methods(w, x):
    a = Affine(w)
    return a(x) + a.forward(2.0 * x)


def test_the_instance_of_a_dataclass_method_is_differentiated():
    """`a(x)` of a dataclass with `__call__` gave self no gradient (a zero, silently) before."""
    w, x = RNG.normal(size=(3, 2)), RNG.normal(size=3)
    gradient = cpsgrad.grad(dataclass_methods)(w, x)
    assert np.abs(gradient).max() > 0.1
    check_grad(dataclass_methods, w, x)


# --- differentiated object arguments ----------------------------------------------------------


def loss(model, x):
    return model.forward(x)


def train(model, x):
    for layer in model.layers:
        layer.w = layer.w * 0.9
    return model.forward(x)


def test_the_gradient_of_an_object_argument_has_its_structure():
    w1, b1, w2, b2, x = _parameters()
    model = Model([Layer(w1, b1), Layer(w2, b2)])
    gradient = cpsgrad.grad(loss)(model, x)
    expected = cpsgrad.grad(flat, argnums=(0, 1, 2, 3, 4))(w1, b1, w2, b2, 2.0, x)
    assert type(gradient) is Model and all(type(layer) is Layer for layer in gradient.layers)
    assert gradient.layers[0].name is None and gradient.layers[0].units is None  # not floats: no gradient
    parts = (gradient.layers[0].w, gradient.layers[0].b, gradient.layers[1].w, gradient.layers[1].b, gradient.scale)
    for got, want in zip(parts, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert model.layers[0].w is w1 and model.scale == 2.0  # the argument unchanged


def test_writes_into_an_object_argument_leave_it_as_python_does():
    w1, b1, w2, b2, x = _parameters()
    model = Model([Layer(w1, b1), Layer(w2, b2)])
    gradient = cpsgrad.grad(train)(model, x)
    expected = cpsgrad.grad(flat, argnums=(0, 2))(w1 * 0.9, b1, w2 * 0.9, b2, 2.0, x)
    np.testing.assert_allclose(gradient.layers[0].w, 0.9 * expected[0], rtol=1e-12)
    np.testing.assert_allclose(gradient.layers[1].w, 0.9 * expected[1], rtol=1e-12)
    python = Model([Layer(w1, b1), Layer(w2, b2)])
    train(python, x)
    for ours, theirs in zip(model.layers, python.layers, strict=True):
        np.testing.assert_array_equal(ours.w, theirs.w)


def test_one_object_in_two_differentiated_arguments_is_refused():
    layer = Layer(np.ones(3), 1.0)

    def both(a, b):
        return np.sum(a.w) * b.b

    with pytest.raises(UnsupportedError, match="another differentiated argument holds too"):
        cpsgrad.grad(both, argnums=(0, 1))(layer, layer)


# --- refusals, each at its line -----------------------------------------------------------------


class Config:
    pass


CONFIG = Config()
CONFIG.scale = 1.0


def global_name_write(x):
    CONFIG.scale = x
    return x


def global_alias_write(x):
    config = CONFIG
    config.scale = x
    return config.scale * x


def argument_write(x, config):
    config.scale = x
    return config.scale * x


class Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


def slotted(x):
    return Slotted(x).w


class WithProperty:
    def __init__(self):
        self._w = 0.0

    @property
    def w(self):
        return self._w

    @w.setter
    def w(self, value):
        self._w = value


def property_write(x):
    p = WithProperty()
    p.w = x
    return p.w


def dataclass_write(x):
    a = Affine(np.ones(2))
    a.w = a.w * x
    return np.sum(a.w)


def counted_elsewhere(counter):
    return counter[0].total if isinstance(counter, list) else counter.total


def plain_call(x):
    counter = Counter()
    _ = scale_total([counter][0], x)  # a differentiable value written into it, through a container
    return counted_elsewhere([counter]) * x  # plain Python (no differentiable argument) handed it


def helper_then_call(x):
    counter = Counter()
    _ = scale_total(counter, x)  # the helper was handed counter: counter is differentiable
    return counted_elsewhere([counter]) * x  # so this call is differentiated too


def test_an_object_a_helper_wrote_is_differentiable_in_later_calls():
    check_grad(helper_then_call, 0.7)
    assert cpsgrad.grad(helper_then_call)(0.7) == pytest.approx(1.4, rel=1e-12)


def same(value):
    return value


def exposed(x):
    fresh = Counter()
    other = same(fresh)  # plain Python (no differentiable argument) could keep it
    other.total = x
    return other.total


def reached_behind(x):
    counters = [Counter()]
    first = counters[0]
    _ = scale_total(first, x)
    return counters[0].total


def scale_total(counter, x):
    counter.total = counter.total + x


def augmented_array(x):
    holder = Base(x * 1.0)
    kept = holder.w
    holder.w += x  # Python adds into the array kept holds too
    return np.sum(kept * holder.w)


def through_dict(x):
    holder = Base(x)
    attributes = holder.__dict__
    return attributes["w"] * x


def loop_target(x):
    holder = Config()
    for holder.value in (x, 2.0 * x):
        pass
    return x


REFUSALS = [
    (global_name_write, (0.5,), "assignment to an attribute of a global or free variable", 1),
    (global_alias_write, (0.5,), "assignment of a differentiable value (or an object holding one) to .scale", 2),
    (slotted, (0.5,), "call of the class", 1),
    (property_write, (0.5,), "assignment to .w of a WithProperty object", 2),
    (dataclass_write, (0.5,), "assignment to .w of a Affine object", 2),
    (plain_call, (0.5,), "call of counted_elsewhere", 3),
    (loop_target, (0.5,), "loop target that is an attribute", 2),
    (exposed, (0.5,), "assignment of a differentiable value to .total of a Counter object", 3),
    (augmented_array, (np.ones(2),), "augmented assignment to .w holding a ndarray", 3),
]


@pytest.mark.parametrize(
    ("function", "arguments", "construct", "offset"), REFUSALS, ids=[r[0].__name__ for r in REFUSALS]
)
def test_refusals_name_the_line_and_the_construct(function, arguments, construct, offset):
    with pytest.raises(UnsupportedError) as raised:
        cpsgrad.grad(function)(*arguments)
    assert raised.value.construct.startswith(construct)
    assert raised.value.location.line == inspect.getsourcelines(function)[1] + offset
    assert raised.value.location.filename == __file__


def test_an_objects_dict_is_refused():
    with pytest.raises(NoRuleError, match=r"\.__dict__") as raised:
        cpsgrad.grad(through_dict)(0.5)
    assert raised.value.location.line == inspect.getsourcelines(through_dict)[1] + 2


def test_a_write_into_an_argument_that_is_not_differentiated_is_refused():
    with pytest.raises(UnsupportedError, match="not built by the differentiated function") as raised:
        cpsgrad.grad(argument_write)(0.5, Config())
    assert raised.value.location.line == inspect.getsourcelines(argument_write)[1] + 1


def test_an_object_a_helper_wrote_is_read_through_its_container():
    """The object written by a helper it was handed (`scale_total(first, x)`), then read through
    the container it came from: the helper's call makes `first`, and so `counters`, differentiable
    (transforms/attributes.receivers), and the read gets the gradient."""
    check_grad(reached_behind, 0.5)
    assert cpsgrad.grad(reached_behind)(0.5) == pytest.approx(1.0, rel=1e-12)


def weight_of(s):
    return s.w


def test_an_object_of_a_class_that_is_not_plain_is_not_a_differentiated_argument():
    with pytest.raises(ArgumentError, match="it is Slotted"):
        cpsgrad.grad(weight_of)(Slotted(1.0))


def read_in_an_inactive_branch(x, flag):
    counters = [Counter()]
    first = counters[0]
    _ = scale_total(first, x)
    y = 0.0
    if flag:  # an if of inactive names only, kept as Python's if: its reads are checked too
        y = counters[0].total
    return x + y


def test_an_object_a_helper_wrote_is_read_in_a_branch():
    assert cpsgrad.grad(read_in_an_inactive_branch)(0.5, False) == 1.0
    check_grad(read_in_an_inactive_branch, 0.5, True)
    assert cpsgrad.grad(read_in_an_inactive_branch)(0.5, True) == pytest.approx(2.0, rel=1e-12)


def read_by_a_closure(x):
    counters = [Counter()]
    first = counters[0]
    _ = scale_total(first, x)
    counter = counters[0]
    total = lambda: counter.total  # noqa: E731
    return x + total()


def test_a_closure_reading_an_object_a_helper_wrote():
    """The helper was handed `first`: `counters`, `counter` and the closure over it are
    differentiable, so the closure's read gets the gradient (it was refused before)."""
    check_grad(read_by_a_closure, 0.5)
    assert cpsgrad.grad(read_by_a_closure)(0.5) == pytest.approx(2.0, rel=1e-12)


class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def combine(self, u, v):
        return self.a * u + self.b * v


def used_twice(x):
    pair = Pair(x, x)  # one value in two attributes
    _ = pair.combine(x, x)  # a result discarded
    other = pair
    return pair.combine(x, x) * other.combine(1.0, x)


def test_a_value_in_two_attributes_and_an_argument_passed_twice():
    check_grad(used_twice, 0.6)
    x = 0.6
    assert cpsgrad.grad(used_twice)(x) == pytest.approx(2.0 * 2.0 * x * (x + x * x) + 2.0 * x * x * (1.0 + 2.0 * x))


def object_and_its_array(model, w):
    return np.sum(model.w * w) + np.sum(model.w)


def test_an_object_and_its_attributes_array_as_two_differentiated_arguments():
    w = RNG.normal(size=3)
    model = Base(w)
    gradient_model, gradient_w = cpsgrad.grad(object_and_its_array, argnums=(0, 1))(model, w)
    np.testing.assert_allclose(gradient_model.w, w + 1.0, rtol=1e-12)
    np.testing.assert_allclose(gradient_w, w, rtol=1e-12)


class Scaled:
    factor = 3.0  # a class attribute: a constant

    def __init__(self, w):
        self.w = w

    def __getattr__(self, name):
        return self.w * 2.0


def class_attribute(x):
    s = Scaled(x)
    return s.w * s.factor


def computed_attribute(x):
    s = Scaled(x)
    return s.other * x


def test_a_class_attribute_is_a_constant_and_one_computed_by_getattr_is_refused():
    assert cpsgrad.grad(class_attribute)(0.5) == 3.0
    with pytest.raises(UnsupportedError, match="other is computed by __getattr__") as raised:
        cpsgrad.grad(computed_attribute)(0.5)
    assert raised.value.location.line == inspect.getsourcelines(computed_attribute)[1] + 2


class Vector:
    def __init__(self, w):
        self.w = w

    def __add__(self, other):  # Python would run it as plain code on the attributes
        return Vector(self.w + other.w)


def operator_class(x):
    return (Vector(x) + Vector(2.0 * x)).w


class Managed:
    def __init__(self, w):
        self.w = w

    def __enter__(self):
        return self.w

    def __exit__(self, *error):
        return False


def manager_holding_a_gradient(x):
    managed = Managed(x)
    with managed as w:
        y = w * x
    return y


def test_classes_computing_values_implicitly_and_managers_holding_gradients_are_refused():
    with pytest.raises(UnsupportedError, match="it defines __add__") as raised:
        cpsgrad.grad(operator_class)(0.5)
    assert raised.value.location.line == inspect.getsourcelines(operator_class)[1] + 1
    with pytest.raises(NoRuleError, match="exit_of") as raised:  # a differentiable manager: no rule
        cpsgrad.grad(manager_holding_a_gradient)(0.5)
    assert raised.value.location.line == inspect.getsourcelines(manager_holding_a_gradient)[1] + 2


def through_a_partial(model, x):
    forward = functools.partial(model.forward)  # a partial of a bound method: its instance is not differentiated
    return forward(x)


def test_a_differentiated_objects_attribute_read_where_no_gradient_reaches_is_refused():
    model = Model([Layer(np.eye(3), np.zeros(3))])
    with pytest.raises(UnsupportedError, match=r"read of \.layers of a Model object"):
        cpsgrad.grad(through_a_partial)(model, np.ones(3))
