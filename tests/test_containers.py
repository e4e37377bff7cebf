"""Containers as differentiable values: dicts, tuples, lists, NamedTuples and dataclasses as
differentiated arguments (the gradient has the argument's structure), dict displays and reads,
dict methods, append and pop, user calls and recursion with parameter dicts."""

import dataclasses
import math

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad
from tests.cases import containers_functions as cases

RNG = np.random.default_rng(7)


def normal(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


# ---- helpers: a container's leaves, and the same structure rebuilt -------------------------------


def leaves(tree) -> list:
    if isinstance(tree, dict):
        return [leaf for part in tree.values() for leaf in leaves(part)]
    if isinstance(tree, (tuple, list)):
        return [leaf for part in tree for leaf in leaves(part)]
    if dataclasses.is_dataclass(tree):
        return [leaf for field in dataclasses.fields(tree) for leaf in leaves(getattr(tree, field.name))]
    return [] if tree is None else [tree]


def rebuild(tree, values):
    if isinstance(tree, dict):
        return {key: rebuild(part, values) for key, part in tree.items()}
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        return type(tree)._make(rebuild(part, values) for part in tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(rebuild(part, values) for part in tree)
    if dataclasses.is_dataclass(tree):
        return dataclasses.replace(tree,
                                   **{f.name: rebuild(getattr(tree, f.name), values) for f in dataclasses.fields(tree)})
    return None if tree is None else next(values)


def assert_same_structure(gradient, argument):
    """Same container types and keys all the way down; leaves of the argument's type, shape, dtype."""
    assert type(gradient) is type(argument), (gradient, argument)
    if isinstance(argument, dict):
        assert list(gradient) == list(argument)
        for key in argument:
            assert_same_structure(gradient[key], argument[key])
    elif isinstance(argument, (tuple, list)):
        assert len(gradient) == len(argument)
        for g, a in zip(gradient, argument, strict=True):
            assert_same_structure(g, a)
    elif dataclasses.is_dataclass(argument):
        for field in dataclasses.fields(argument):
            assert_same_structure(getattr(gradient, field.name), getattr(argument, field.name))
    elif isinstance(argument, np.ndarray):
        assert gradient.shape == argument.shape and gradient.dtype == argument.dtype


def check_container_grad(f, args, argnum=0):
    """The value equals f's exactly; the gradient w.r.t. the container `args[argnum]` has its
    structure and matches finite differences leaf by leaf."""
    tree = args[argnum]
    value, gradient = cpsgrad.value_and_grad(f, argnums=argnum)(*args)
    expected = f(*args)
    assert value == expected or (value != value and expected != expected)
    assert_same_structure(gradient, tree)
    flat = leaves(tree)

    def with_leaves(*values):
        arguments = list(args)
        arguments[argnum] = rebuild(tree, iter(values))
        return f(*arguments)

    def gradient_of_leaves(*values):
        arguments = list(args)
        arguments[argnum] = rebuild(tree, iter(values))
        return leaves(cpsgrad.grad(f, argnums=argnum)(*arguments))

    check_grad(with_leaves, *flat, argnums=tuple(range(len(flat))), gradient=gradient_of_leaves)
    return gradient


# ---- differentiated containers ------------------------------------------------------------------

PARAMS = {"W1": normal(4, 3), "b1": normal(4), "W2": normal(2, 4), "b2": normal(2)}


def test_dict_of_arrays():
    gradient = check_container_grad(cases.mlp, (PARAMS, normal(3)))
    assert set(gradient) == set(PARAMS)


def test_tuple_and_list_of_arrays():
    check_container_grad(cases.unpacks_tuple, ((normal(3, 2), normal(3)), normal(2)))
    check_container_grad(cases.unpacks_tuple, ([normal(3, 2), normal(3)], normal(2)))


def test_dict_of_floats_and_variable_keys():
    check_container_grad(cases.scalar_dict, ({"a": 1.5, "b": -0.7, "c": 2.0},))
    gradient = check_container_grad(cases.variable_keys, ({"x": 1.5, "y": -0.5, "z": 3.0}, ("x", "y", "x")))
    assert gradient == {"x": 6.0, "y": -1.0, "z": 0.0}


def test_nested_containers():
    params = {"layers": [{"W": normal(3, 2), "b": normal(3)}, {"W": normal(2, 3), "b": normal(2)}], "scale": 0.7}
    check_container_grad(cases.nested, (params, normal(2)))
    check_container_grad(cases.list_of_tuples, ([(normal(2), 1.5), (normal(2), -0.5)], normal(2)))


def test_unread_leaves_get_zeros_of_their_type():
    p = {"used": 1.5, "unused": np.ones(3, np.float32), "also": np.float32(2.0), "nothing": None}
    gradient = cpsgrad.grad(cases.uses_one_leaf)(p)
    assert gradient["used"] == 2.0
    assert gradient["unused"].dtype == np.float32 and not gradient["unused"].any()
    assert type(gradient["also"]) is np.float32 and gradient["also"] == 0
    assert gradient["nothing"] is None


def test_gradient_leaves_never_share_arrays():
    p = {"a": normal(3), "b": normal(3)}
    gradient = cpsgrad.grad(cases.same_shape_leaves)(p)
    assert gradient["a"] is not gradient["b"]
    gradient["a"][0] = 100.0
    assert gradient["b"][0] == 3.0


def test_non_float_leaves_are_refused_with_their_path():
    with pytest.raises(cpsgrad.ArgumentError, match=r"p\['b'\]: it is int 2"):
        cpsgrad.grad(cases.scalar_dict)({"a": 1.5, "b": 2, "c": 1.0})
    with pytest.raises(cpsgrad.ArgumentError, match=r"p\['b'\]: it is an array of dtype int64"):
        cpsgrad.grad(cases.scalar_dict)({"a": 1.5, "b": np.arange(2), "c": 1.0})


# ---- dicts as values ----------------------------------------------------------------------------


def test_dict_displays():
    for x, y in ((1.5, -0.5), (0.3, 2.0)):
        check_grad(cases.dict_display, x, y, argnums=(0, 1))
        check_grad(cases.dict_display_overwritten, x, y, argnums=(0, 1))
        check_grad(cases.dict_display_variable_keys, x, y, "a", "b", argnums=(0, 1))
        check_grad(cases.dict_display_variable_keys, x, y, "a", "a", argnums=(0, 1))
        check_grad(cases.dict_display_variable_keys, x, y, "b", "a", argnums=(0, 1))
    assert cpsgrad.grad(cases.dict_display_overwritten, argnums=(0, 1))(1.5, 2.0) == (0.0, 3.0 * 4.0)


def test_dict_methods():
    check_container_grad(cases.dict_methods, ({"a": normal(3), "skip": normal(2), "c": 0.5},))
    check_grad(cases.dict_method_default, 1.5, {"b": 2.0})
    check_grad(cases.dict_method_default, 1.5, {"a": 2.0})


def test_dicts_through_user_calls():
    check_grad(cases.builds_params, 1.5)
    check_grad(cases.returns_dict, -0.7)
    params = {"l1": {"W": normal(3, 2), "b": normal(3)}, "l2": {"W": normal(2, 3), "b": normal(2)}}
    check_container_grad(cases.dict_through_helper, (params, normal(2)))
    check_container_grad(cases.split_params, ({"a": normal(2), "b": normal(2)}, normal(2)))


def test_tree_network_with_a_parameter_dict():
    params = {"W": normal(3, 6) * 0.5, "b": normal(3), "E": normal(3), "out": normal(3)}
    check_container_grad(cases.tree_loss, (params, cases.tree(3)))


def test_is_none_and_isinstance_in_control_flow():
    check_container_grad(cases.optional_bias, ({"w": 1.5, "b": 0.5, "c": None}, 0.7))
    check_container_grad(cases.optional_bias, ({"w": 1.5, "c": 2.0}, 0.7))
    check_container_grad(cases.isinstance_dispatch, ([(1.5, 2.0), normal(3), 0.5],))


def test_show_prints_dict_adjoints():
    text = cpsgrad.show(cases.dict_display, argnums=(0, 1), numbers=("x", "y"))
    assert 'd = {"x": x, "y": t1, "sum": t2}' in text
    assert 'cpsgrad_runtime.entry(d_d, "y")' in text
    assert "cpsgrad_runtime.index_adjoint(d, " in text


# ---- append and pop -----------------------------------------------------------------------------


def test_append_then_stack_or_sum():
    for n in (1, 3):
        check_grad(cases.collects_and_stacks, normal(2), n)
        check_grad(cases.collects_and_sums, 1.3, n)
    assert cpsgrad.grad(cases.collects_and_sums)(2.0, 3) == 1.0 + 2 * 2.0


def test_pop_and_append_like_a_stack():
    for x in (1.5, -0.3):
        check_grad(cases.stack_machine, x)
        check_grad(cases.appends_in_branches, x, 5)
        check_grad(cases.appends_then_returns_through_call, x)
        check_grad(cases.appends_after_loop_over_it, x)


def test_append_becomes_a_new_list_in_the_program():
    text = cpsgrad.show(cases.collects_and_sums, stage="normalize")
    assert "terms = cpsgrad_runtime.appended(terms, t" in text
    text = cpsgrad.show(cases.stack_machine, stage="normalize")
    assert "stack = cpsgrad_runtime.removed(stack, -1)" in text


@pytest.mark.parametrize(
    ("function", "arguments"),
    [
        (cases.appends_to_alias, (1.5,)),
        (cases.appends_to_parameter, (1.5, [])),
        (cases.appends_after_passing, (1.5,)),
        (cases.stores_then_appends, (1.5,)),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_append_that_others_could_see_is_refused(function, arguments):
    with pytest.raises(cpsgrad.UnsupportedError,
                       match=r"containers_functions\.py:\d+:\d+: method call values\.(append|extend)"):
        cpsgrad.grad(function)(*arguments)


def test_extend_and_reverse_of_a_list_the_function_builds_are_differentiated():
    assert cpsgrad.value_and_grad(cases.extends)(1.5) == (1.5, 1.0)
    text = cpsgrad.show(cases.extends, stage="normalize")
    assert "values = cpsgrad_runtime.extended(values, t" in text
    assert "cpsgrad_runtime.extend_in_place(values, t" in cpsgrad.show(cases.extends)


def test_refused_lists_still_run_unchanged_without_a_gradient():
    values = []
    assert cases.appends_to_parameter(1.5, values) == 1.5 and values == [1.5]
    assert cpsgrad.grad(cases.appends_to_parameter, argnums=0)  # transform is lazy: no error yet


# ---- NamedTuples and dataclasses ----------------------------------------------------------------


def test_named_tuple_gradient_is_a_named_tuple():
    p = cases.Linear(normal(3, 2), normal(3))
    gradient = check_container_grad(cases.named_tuple_params, (p, normal(2)))
    assert isinstance(gradient, cases.Linear)
    check_container_grad(cases.named_tuple_indexed, (p, normal(2)))


def test_dataclass_gradient_is_an_instance():
    layer = cases.Layer(normal(3, 2), normal(3), 0.5)
    gradient = check_container_grad(cases.dataclass_params, (layer, normal(2)))
    assert isinstance(gradient, cases.Layer) and type(gradient.scale) is float
    frozen = check_container_grad(cases.frozen_dataclass, (cases.Frozen(1.5, -2.0),))
    assert frozen == cases.Frozen(-1.0, 1.5)
    params = {"first": cases.Layer(normal(3, 2), normal(3)), "second": cases.Linear(normal(2, 3), normal(2))}
    check_container_grad(cases.dataclasses_in_a_dict, (params, normal(2)))


def test_objects_of_classes_that_are_not_plain_are_refused():
    """A plain object is differentiated (tests/test_objects.py); one with __slots__ is refused."""
    with pytest.raises(cpsgrad.ArgumentError, match=r"cannot differentiate with respect to p: it is _Slotted"):
        cpsgrad.grad(cases.frozen_dataclass)(_Slotted(1.5, 2.0))


class _Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


def test_float_results_stay_exact():
    p = {"a": 0.1, "b": 0.2, "c": 0.3}
    assert cpsgrad.value_and_grad(cases.scalar_dict)(p)[0] == cases.scalar_dict(p)
    assert math.isfinite(cpsgrad.grad(cases.scalar_dict)(p)["a"])


def test_constructing_named_tuples_and_dataclasses():
    for x in (1.5, -0.4):
        check_grad(cases.builds_named_tuple, x)
        check_grad(cases.builds_dataclass, x)
    layer = cases.Layer(normal(3, 2), normal(3))
    gradient = check_container_grad(cases.updates_params, (layer, normal(2)))
    assert gradient.scale == 0.0
