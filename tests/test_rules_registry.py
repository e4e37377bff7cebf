# ruff: noqa: F821, F841  (rule templates: read by the transform, their names undefined)
"""User rules (@cpsgrad.rule) that misbehave get a RuleError naming the rule and what it did;
built-in rules are inlined unchecked."""

import bisect
import subprocess
import sys

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import RuleError
from cpsgrad.rules.registry import TABLE

X = np.array([0.4, -0.9, 1.3])


def triple(x):
    return x * 3.0


def split(x):
    return x * 3.0, x * 2.0


@pytest.fixture
def register():
    """Register templates for the test only."""
    added = []

    def add(primitive, template):
        cpsgrad.rule(primitive)(template)
        added.append(TABLE.rules_for(primitive)[0])

    yield add
    for rule in added:
        TABLE.remove(rule)


def uses_triple(x):
    return np.sum(triple(x))


def uses_triple_on_number(x):
    return triple(x) * 1.0


def uses_first_half(x):
    a, b = split(x)
    return np.sum(a)


def uses_triple_in_one_branch(x):
    y = triple(x)
    if x[0] > 0:
        z = y * 2.0
    else:
        z = x * 1.0
    return np.sum(z)


def test_wrong_shape_names_the_rule_and_the_shapes(register):
    def wrong_shape(x):
        y = triple(x)
        y_d = yield y
        x_d += np.ones(5)  # noqa: F841

    register(triple, wrong_shape)
    with pytest.raises(RuleError) as raised:
        cpsgrad.grad(uses_triple)(X)
    message = str(raised.value)
    assert f"wrong_shape ({__file__}:" in message
    assert "an array of shape (5,)" in message and "shape (3,)" in message


def test_array_for_a_number_is_refused(register):
    def wrong_shape(x):
        y = triple(x)
        y_d = yield y
        x_d += np.ones(5)  # noqa: F841

    register(triple, wrong_shape)
    with pytest.raises(RuleError, match="float 0.5; a contribution must be a real scalar"):
        cpsgrad.grad(uses_triple_on_number)(0.5)


def test_none_is_refused(register):
    def contributes_none(x):
        y = triple(x)
        y_d = yield y
        x_d += None  # noqa: F841

    register(triple, contributes_none)
    with pytest.raises(RuleError, match="contributes_none .*contributed NoneType None to x_d"):
        cpsgrad.grad(uses_triple)(X)  # was a NaN gradient


def test_an_exception_in_the_backward_names_the_rule(register):
    def raises(x):
        y = triple(x)
        y_d = yield y
        x_d += y_d / 0  # noqa: F841

    register(triple, raises)
    with pytest.raises(RuleError, match="raises .*its backward raised ZeroDivisionError") as raised:
        cpsgrad.grad(uses_triple_on_number)(0.5)
    assert isinstance(raised.value.__cause__, ZeroDivisionError)


def test_symbolic_zero_reaches_a_user_rule_as_zeros(register):
    def indexes_its_adjoints(x):
        a, b = split(x)
        a_d, b_d = yield a, b
        x_d += a_d * 3.0  # noqa: F841
        x_d += np.full(3, b_d[0]) * 2.0  # noqa: F841  (b_d is zero here: nothing reads b)

    register(split, indexes_its_adjoints)
    assert np.array_equal(cpsgrad.grad(uses_first_half)(X), np.full(3, 3.0))


def test_symbolic_zero_after_a_branch(register):
    def indexes(x):
        y = triple(x)
        y_d = yield y
        x_d += y_d * 3.0 + y_d[0] * 0.0  # noqa: F841

    register(triple, indexes)
    assert np.array_equal(cpsgrad.grad(uses_triple_in_one_branch)(X), np.full(3, 6.0))
    assert np.array_equal(cpsgrad.grad(uses_triple_in_one_branch)(-X), np.ones(3))


def test_scalar_contribution_to_an_array_is_refused(register):
    def sums(x):
        y = triple(x)
        y_d = yield y
        x_d += np.sum(y_d) * 3.0  # noqa: F841

    register(triple, sums)
    with pytest.raises(RuleError, match="must have its input's shape"):
        cpsgrad.grad(uses_triple)(X)


def test_a_correct_rule_gives_its_gradient(register):
    def right(x):
        y = triple(x)
        y_d = yield y
        x_d += y_d * 3.0  # noqa: F841

    register(triple, right)
    assert np.array_equal(cpsgrad.grad(uses_triple)(X), np.full(3, 3.0))
    assert cpsgrad.grad(uses_triple_on_number)(0.5) == 3.0
    assert "rule_contribution" in cpsgrad.show(uses_triple)


def test_built_in_rules_are_not_checked():
    def sine(x):
        return np.sum(np.sin(x))

    assert "rule_contribution" not in cpsgrad.show(sine) and "rule_adjoint" not in cpsgrad.show(sine)


def test_a_backward_that_does_not_accumulate_is_refused_at_registration():
    def assigns(x):
        y = triple(x)
        y_d = yield y
        z_d = y_d * 3.0  # noqa: F841

    with pytest.raises(RuleError,
                       match=r"assigns \(.*\): after yield, each statement must accumulate .*`z_d = y_d \* 3.0`"):
        cpsgrad.rule(triple)(assigns)
    assert not TABLE.rules_for(triple)


def test_a_template_without_source_is_refused_at_registration():
    namespace = {"triple": triple}
    exec("def hidden(x):\n    y = triple(x)\n    y_d = yield y\n    x_d += y_d\n", namespace)
    with pytest.raises(RuleError, match="hidden .*cannot read its source"):
        cpsgrad.rule(triple)(namespace["hidden"])
    assert not TABLE.rules_for(triple)


# ---- backward locals: one backward call for several adjoints --------------------------------------

CALLS = []


def weighted(x, w):
    return x * w


def weighted_backward(y_d, x, w):
    """Both adjoints of `weighted` at once; counts its calls."""
    CALLS.append("weighted")
    return y_d * w, y_d * x


def weighted_rule(x, w):
    y = weighted(x, w)
    y_d = yield y
    x_g, w_g = weighted_backward(y_d, x, w)
    x_d += x_g
    w_d += w_g


def uses_weighted(x, w):
    return np.sum(weighted(x, w))


def uses_weighted_on_constants(x):
    return np.sum(weighted(np.ones(3), 2.0)) + np.sum(x)


W = np.array([2.0, -1.0, 0.5])


def test_a_backward_local_serves_several_adjoints_with_one_call(register):
    register(weighted, weighted_rule)
    CALLS.clear()
    x_grad, w_grad = cpsgrad.grad(uses_weighted, argnums=(0, 1))(X, W)
    np.testing.assert_array_equal(x_grad, W)
    np.testing.assert_array_equal(w_grad, X)
    assert CALLS == ["weighted"]


def test_an_inactive_input_drops_its_accumulation_and_keeps_the_call(register):
    register(weighted, weighted_rule)
    CALLS.clear()
    np.testing.assert_array_equal(cpsgrad.grad(uses_weighted, argnums=1)(X, W), X)
    assert CALLS == ["weighted"]
    shown = cpsgrad.show(uses_weighted, argnums=1)
    assert "weighted_backward(" in shown and "x_d" not in shown


def test_no_active_input_no_backward_call(register):
    register(weighted, weighted_rule)
    CALLS.clear()
    np.testing.assert_array_equal(cpsgrad.grad(uses_weighted_on_constants)(X), np.ones(3))
    assert CALLS == []
    assert "weighted_backward" not in cpsgrad.show(uses_weighted_on_constants)


def test_a_local_read_only_by_dropped_accumulations_is_not_computed(register):
    def two_calls(x, w):
        y = weighted(x, w)
        y_d = yield y
        x_g = y_d * w
        x_d += x_g
        w_g, _ = weighted_backward(y_d, w, x)
        w_d += w_g

    register(weighted, two_calls)
    CALLS.clear()
    np.testing.assert_array_equal(cpsgrad.grad(uses_weighted, argnums=0)(X, W), W)
    assert CALLS == []
    np.testing.assert_array_equal(cpsgrad.grad(uses_weighted, argnums=1)(X, W), X)
    assert CALLS == ["weighted"]


def test_a_local_that_rebinds_a_parameter_is_refused_at_registration():
    def rebinds(x, w):
        y = weighted(x, w)
        y_d = yield y
        x = y_d * w
        x_d += x

    with pytest.raises(RuleError, match=r"rebinds \(.*\): after yield, .*or bind new backward locals.*`x = y_d \* w`"):
        cpsgrad.rule(weighted)(rebinds)
    assert not TABLE.rules_for(weighted)


# ---- cpsgrad.not_differentiable ------------------------------------------------------------------

EDGES = [-1.0, 0.0, 1.0]


def bucket(x):
    """Piecewise constant: which interval of EDGES holds x (bisect has no rule)."""
    return float(bisect.bisect(EDGES, x))


def uses_bucket(x):
    return bucket(x) * x


def test_a_declared_piecewise_constant_function_carries_no_gradient():
    with pytest.raises(cpsgrad.NoRuleError, match="bisect"):
        cpsgrad.grad(uses_bucket)(0.5)
    assert cpsgrad.not_differentiable(bucket) is bucket
    try:
        assert cpsgrad.grad(uses_bucket)(0.5) == 2.0  # d/dx bucket(x) * x = bucket(x)
        assert cpsgrad.grad(uses_bucket)(-3.0) == 0.0
        assert cpsgrad.value_and_grad(uses_bucket)(1.5) == (4.5, 3.0)
        assert "t1 = bucket(x)" in cpsgrad.show(uses_bucket)  # a call of the primitive, not transformed
    finally:
        TABLE.remove(TABLE.rules_for(bucket)[0])
    with pytest.raises(cpsgrad.NoRuleError, match="bisect"):
        cpsgrad.grad(uses_bucket)(0.5)


def test_not_differentiable_as_a_decorator_on_arrays():
    @cpsgrad.not_differentiable
    def levels(x):
        return np.array([bisect.bisect(EDGES, value) for value in x.tolist()])

    def loss(x):
        return np.sum(levels(x) * x)

    try:
        np.testing.assert_array_equal(cpsgrad.grad(loss)(X), np.array([2.0, 1.0, 3.0]))
    finally:
        TABLE.remove(TABLE.rules_for(levels)[0])


def scaled_tile(x, reps=(2, 1), scale=-1.0, shift=1.0 - 3.0):
    return np.tile(x, reps) * scale + shift


def uses_scaled_tile(x):
    return np.sum(scaled_tile(x) * np.arange(6.0).reshape(2, 3))


def test_a_template_default_stands_in_as_one_value(register):
    """An omitted argument's default is put where the template reads its parameter: a tuple
    `(2, 1)` read as `reps[0]`, a negative number or an operation under `**` keep their meaning
    (they were pasted bare: `2, 1[0]` raised, and `-1.0 ** 2` gave the gradient the wrong sign)."""

    def backward(x, reps=(2, 1), scale=-1.0, shift=1.0 - 3.0):
        y = scaled_tile(x, reps, scale, shift)
        y_d = yield y
        x_d += np.sum(np.reshape(y_d, (reps[0], x.shape[0])), axis=0) * scale**2 / scale * (shift**2 / 4.0)  # noqa: F841

    register(scaled_tile, backward)
    expected = -np.arange(6.0).reshape(2, 3).sum(axis=0)
    assert np.array_equal(cpsgrad.grad(uses_scaled_tile)(X), expected)
    assert "(-1.0)" in cpsgrad.show(uses_scaled_tile) and "(2, 1)" in cpsgrad.show(uses_scaled_tile)



@pytest.mark.parametrize(
    "module",
    [
        "cpsgrad.rules.scipy.signal",
        "cpsgrad.rules.scipy.linalg_decompositions",
        "cpsgrad.rules.scipy.special_bessel",
        "cpsgrad.rules.scipy.stats",
        "cpsgrad.rules.scipy.stats_multivariate",
        "cpsgrad.rules.scipy.integrate",
    ],
)
def test_a_deferred_rule_module_imported_first_loads_its_group_afterwards(module):
    """`import cpsgrad.rules.scipy.stats` in a new process imports scipy.stats, which made the
    registry load the group's other module (stats_multivariate) while stats was half-initialised:
    a circular ImportError. Each module imported first, in a fresh process, then the rules work."""
    code = (
        f"import {module}\n"
        "import scipy.special, scipy.stats\n"
        "from cpsgrad.rules.registry import TABLE\n"
        "assert scipy.stats.multivariate_normal.logpdf in TABLE and scipy.special.gammaln in TABLE\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
