"""The functions math and numpy share have one derivative (cpsgrad/rules/elementary.py): both rules
are made from it, a change to it changes both, and where the two modules differ the difference is
explicit. Every math rule is checked against finite differences here."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import RuleError
from cpsgrad.kernels.formulas.catalog import UNARY_BY_NAME
from cpsgrad.rules import elementary
from cpsgrad.rules.module_templates import ELEMENTARY, Elementary, math_text, missing_names, numpy_slope, numpy_text
from cpsgrad.rules.registry import TABLE
from cpsgrad.testing import check_grad
from cpsgrad.transforms import persisted

# ruff: noqa: F821, F841  (the shared templates below accumulate into adjoints only the transform binds)

BY_NAME = {entry.name: entry for entry in ELEMENTARY}


def test_the_shared_functions_are_the_ones_both_modules_define():
    assert sorted(BY_NAME) == sorted(
        "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 log1p "
        "sqrt cbrt degrees radians fabs atan2".split()
    )
    for entry in ELEMENTARY:
        assert entry.math is getattr(math, entry.name)
        assert all(isinstance(function, np.ufunc) for function in entry.numpy)


@pytest.mark.parametrize("entry", ELEMENTARY, ids=lambda entry: entry.name)
def test_both_rules_come_from_the_shared_template(entry):
    (math_rule,) = [rule for rule in TABLE.rules_for(entry.math) if hasattr(rule.template, "__elementary__")]
    assert math_rule.template.__elementary__ is entry
    assert math_rule.template.__rule_source__() == math_text(entry)
    assert missing_names(math_rule.template) == []
    assert math_rule.template.__module__ == "cpsgrad.rules.math"
    for primitive in entry.numpy:
        (numpy_rule,) = TABLE.rules_for(primitive)
        assert numpy_rule.template.__elementary__ is entry
        assert numpy_rule.template.__rule_source__() == numpy_text(entry)
        assert missing_names(numpy_rule.template) == []
        assert numpy_rule.template.__module__.startswith("cpsgrad.rules.numpy.")
    # errors name the shared template's file and line; the disk cache's rule digest stamps that file
    code = math_rule.template.__code__
    assert code.co_filename == elementary.__file__
    assert math_rule.label.endswith(f"elementary.py:{code.co_firstlineno})")
    assert open(elementary.__file__).read().splitlines()[code.co_firstlineno - 1].startswith("@elementary(")


def test_the_math_rule_is_the_shared_template_with_math_for_m():
    assert math_text(BY_NAME["sin"]) == (
        "def sin(x):\n    y = math.sin(x)\n    y_d = yield y\n    x_d += y_d * math.cos(x)\n"
    )
    assert "y_d += cpsgrad_runtime.divide(z_d * x, x * x + y * y)" in math_text(BY_NAME["atan2"])


@pytest.mark.parametrize(
    "name, expected",
    [
        ("tan", "x_d += chain(y_d, 1.0 + y * y, x)"),
        ("asin", "x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, np.sqrt(1.0 - x * x)), x)"),
        ("acos", "x_d += chain(y_d, cpsgrad_runtime.array_divide(-1.0, np.sqrt(1.0 - x * x)), x)"),
        ("atan", "x_d += chain(y_d, 1.0 / (1.0 + x * x), x)"),
        ("exp2", "x_d += chain(y_d, y * math.log(2.0), x)"),
        ("log", "x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, x), x)"),
        ("log2", "x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0 / math.log(2.0), x), x)"),
        ("atanh", "x_d += chain(y_d, cpsgrad_runtime.array_divide(1.0, 1.0 - x * x), x)"),
        ("degrees", "x_d += chain(y_d, 180.0 / math.pi, x)"),
        ("fabs", "x_d += chain(y_d, array_sign(x), x)"),
        ("sin", 'x_d += elementwise_adjoint("sin", y_d, x, x)'),
        ("sqrt", 'x_d += elementwise_adjoint("sqrt", y_d, y, x)'),
        ("atan2", "x_d += chain(z_d, cpsgrad_runtime.array_divide(-y, x * x + y * y), x)"),
    ],
)
def test_the_numpy_rule_is_the_slope_chained(name, expected):
    text = numpy_text(BY_NAME[name])
    assert expected in text
    assert f"= np.{BY_NAME[name].numpy_name}(" in text


def test_a_kernel_op_below_its_threshold_multiplies_by_the_shared_slope():
    assert numpy_slope(BY_NAME["cos"]) == "lambda x: -np.sin(x)"
    assert numpy_slope(BY_NAME["tanh"]) == "lambda y: 1.0 - y * y"
    assert numpy_slope(BY_NAME["sqrt"]) == "lambda y: cpsgrad_runtime.array_divide(0.5, y)"


@pytest.mark.parametrize("entry", [e for e in ELEMENTARY if e.kernel], ids=lambda entry: entry.name)
def test_the_kernel_formula_agrees_with_the_shared_slope(entry):
    """The compiled kernels' adjoint (kernels/formulas/elementwise.py) is the same derivative."""
    from cpsgrad.rules.numpy import ufuncs

    slope = ufuncs._SLOPES[entry.kernel]
    kernel = UNARY_BY_NAME[entry.kernel]
    for x in (0.1, 0.7, 1.9, 3.3):
        saved = entry.numpy[0](x) if kernel.saves_output else x
        assert kernel.adjoint(0.8, float(saved), 0.0, 0.0) == pytest.approx(0.8 * float(slope(np.float64(saved))))


def changed(x):
    y = m.sin(x)
    y_d = yield y
    x_d += y_d * m.cosh(x) * 3.0


def not_a_slope(x):
    y = m.sin(x)
    y_d = yield y
    x_d += m.cos(y_d)


def test_changing_the_shared_template_changes_both_rules():
    entry = dataclasses.replace(BY_NAME["sin"], template=changed, kernel=None)
    assert "x_d += y_d * math.cosh(x) * 3.0" in math_text(entry)
    assert "x_d += chain(y_d, np.cosh(x) * 3.0, x)" in numpy_text(entry)
    with pytest.raises(RuleError, match="not a slope times the adjoint y_d"):
        numpy_text(Elementary(not_a_slope, math.sin, (np.sin,)))


def test_the_disk_cache_key_stamps_the_shared_file(monkeypatch):
    before = persisted.table_digest()
    stamp = persisted._stamp
    monkeypatch.setattr(persisted, "_stamp", lambda file: ("edited",) if file == elementary.__file__ else stamp(file))
    monkeypatch.setattr(persisted, "_TABLE_DIGEST", [None, None])
    assert persisted.table_digest() != before


# ---- finite differences of every math rule ----------------------------------------------------

# math function -> the points its rule is checked at (every argument differentiated)
POINTS = {
    "sin": [(0.7,)], "cos": [(0.7,)], "tan": [(0.7,)], "asin": [(0.3,)], "acos": [(-0.4,)], "atan": [(1.7,)],
    "atan2": [(0.7, -1.3), (-0.2, 0.5)], "sinh": [(0.7,)], "cosh": [(-0.7,)], "tanh": [(0.7,)],
    "asinh": [(-1.7,)], "acosh": [(1.7,)], "atanh": [(0.4,)], "exp": [(0.7,)], "exp2": [(0.7,)],
    "expm1": [(1e-3,), (0.7,)], "log": [(0.7,), (2.5, 3.0)], "log2": [(0.7,)], "log10": [(3.7,)],
    "log1p": [(0.7,)], "sqrt": [(0.7,)], "cbrt": [(-0.7,)], "pow": [(1.7, 2.3)], "hypot": [(0.7, -1.3)],
    "fabs": [(-0.7,)], "erf": [(0.7,)], "erfc": [(0.7,)], "lgamma": [(2.7,)], "gamma": [(2.7,)],
    "degrees": [(0.7,)], "radians": [(17.0,)], "copysign": [(0.7, -1.3)], "fmod": [(5.7, 1.3)],
}
SEQUENCES = {"fsum": [(0.7, -1.3, 2.0)], "prod": [(0.7, -1.3, 2.0)], "dist": [((0.7, -1.3), (2.0, 0.5))]}


def math_primitives():
    """The math functions with a differentiable rule (floor, isclose, ... carry no gradient)."""
    return {
        p.__name__ for p in TABLE.primitives()
        if getattr(p, "__self__", None) is math and any(rule.differentiable for rule in TABLE.rules_for(p))
    }


def test_every_math_rule_has_points():
    assert math_primitives() == set(POINTS) | set(SEQUENCES)


def calls(function):
    def one(x):
        return function(x)

    def two(x, y):
        return function(x, y)

    return one, two


@pytest.mark.parametrize("name, point", [(n, p) for n, points in POINTS.items() for p in points])
def test_math_rule_matches_finite_differences(name, point):
    one, two = calls(getattr(math, name))
    f = one if len(point) == 1 else two
    check_grad(f, *point, argnums=tuple(range(len(point))))


def total(function):
    def of_list(xs):
        return function([xs[0], xs[1], xs[2]]) * 1.5

    def of_points(p, q):
        return function([p[0], p[1]], [q[0], q[1]])

    return of_list, of_points


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_math_rule_of_a_sequence_matches_finite_differences(name):
    of_list, of_points = total(getattr(math, name))
    (point,) = SEQUENCES[name]
    if name == "dist":
        gradient = cpsgrad.grad(of_points, argnums=(0, 1))(np.array(point[0]), np.array(point[1]))
        check_grad(of_points, np.array(point[0]), np.array(point[1]), argnums=(0, 1))
        assert all(g.shape == (2,) for g in gradient)
    else:
        check_grad(of_list, np.array(point))


def summed(function):
    def one(x):
        return np.sum(function(x))

    def two(x, y):
        return np.sum(function(x, y))

    return one, two


@pytest.mark.parametrize("entry", ELEMENTARY, ids=lambda entry: entry.name)
def test_numpy_rule_matches_finite_differences(entry):
    points = POINTS[entry.name][0]
    one, two = summed(entry.numpy[0])
    arrays = [np.array([p, p * 0.9, p * 1.05]) for p in points]
    check_grad(one if len(points) == 1 else two, *arrays, argnums=tuple(range(len(points))))


# ---- where math and numpy differ --------------------------------------------------------------


def log_of(x):
    return math.log(x)


def atanh_of(x):
    return math.atanh(x)


def sqrt_of(x):
    return math.sqrt(x)


def np_log_of(x):
    return np.sum(np.log(x))


def np_atanh_of(x):
    return np.sum(np.arctanh(x))


def np_sqrt_of(x):
    return np.sum(np.sqrt(x))


@pytest.mark.parametrize("function, point", [(log_of, 0.0), (log_of, -1.0), (atanh_of, 1.0)])
def test_math_refuses_where_numpy_is_singular(function, point):
    with pytest.raises(ValueError, match="math domain error"):
        cpsgrad.grad(function)(point)


@pytest.mark.parametrize(
    "function, point, slope",
    [(np_log_of, 0.0, math.inf), (np_atanh_of, 1.0, math.inf), (np_sqrt_of, 0.0, math.inf), (np_log_of, -1.0, -1.0)],
)
def test_numpy_slope_is_infinite_at_its_singular_points_without_a_warning(function, point, slope):
    x = np.array([point, 0.5])
    with warnings.catch_warnings(record=True) as primal:
        warnings.simplefilter("always")
        function(x)  # np.log(0) and np.arctanh(1) warn themselves
    with warnings.catch_warnings(record=True) as derivative:
        warnings.simplefilter("always")
        gradient = cpsgrad.grad(function)(x)
    assert [str(w.message) for w in derivative] == [str(w.message) for w in primal]
    assert gradient[0] == slope


def test_math_sqrt_at_zero_has_an_infinite_slope_not_a_zero_division():
    assert cpsgrad.grad(sqrt_of)(0.0) == math.inf


def hypot_x(x):
    return math.hypot(x, 0.0)


def np_hypot_x(x):
    return np.hypot(x, 0.0)


def test_hypot_at_the_origin_differs_between_math_and_numpy():
    """Today's behaviour, kept: np.hypot's rule gives 0.5 at the origin (as JAX), math.hypot's
    0 / 0 = nan. Written separately in each module, not shared."""
    assert math.isnan(cpsgrad.grad(hypot_x)(0.0))
    assert cpsgrad.grad(np_hypot_x)(0.0) == 0.5
    assert "__elementary__" not in vars(TABLE.rules_for(math.hypot)[0].template)
    assert "__elementary__" not in vars(TABLE.rules_for(np.hypot)[0].template)


def math_pow_of(x):
    return math.pow(x, 2.0)


def test_math_pow_and_np_power_are_separate_rules():
    assert cpsgrad.grad(math_pow_of)(3.0) == 6.0
    assert "__elementary__" not in vars(TABLE.rules_for(math.pow)[0].template)
    assert "__elementary__" not in vars(TABLE.rules_for(np.power)[0].template)


def exp_of_int_times(x):
    return math.exp(2) * x + math.sin(x)


def test_an_int_argument_of_a_shared_math_function_is_a_constant():
    assert cpsgrad.grad(exp_of_int_times)(0.5) == pytest.approx(math.exp(2) + math.cos(0.5))
