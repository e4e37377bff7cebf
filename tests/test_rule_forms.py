"""The generator's `rules` family (cpsgrad/testing/rule_forms.py, its catalogue rule_calls.py) and
the `subclasses` family (subclass_forms.py) beyond tests/test_generator_constructs.py's switch tests:
every call of the catalogue has the shape its list says and differentiates (against finite
differences) on fixed operands, as the generator writes it; and a longer soak of programs drawn with
both families on (slow)."""

import importlib.util
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings

import cpsgrad
from cpsgrad.testing import check_grad
from cpsgrad.testing.programs import check_program, programs
from cpsgrad.testing.rule_calls import CALLS, FAMILIES, FLOAT, MATRIX, VECTOR, placeholders

_count = itertools.count()
_RNG = np.random.default_rng(20261203)
OPERANDS = {
    "v": _RNG.uniform(-2.0, 2.0, 3),
    "w": _RNG.uniform(-2.0, 2.0, 3),
    "u": _RNG.uniform(-2.0, 2.0, 3),
    "m": _RNG.uniform(-2.0, 2.0, (3, 3)),
    "p": _RNG.uniform(-2.0, 2.0, (3, 3)),
    "e": 0.37,
}
SHAPES = {VECTOR: (3,), MATRIX: (3, 3), FLOAT: ()}
ENTRIES = [(kind, template) for kind, calls in CALLS.items() for _, _, template in calls]


def _load(tmp_path, kind: str, template: str):
    """A module with `f(v, w, u, m, p, e)`, the call (its operands named by their placeholders),
    and `g`, a float of it that every element reaches, unevenly."""
    call = template.format(**{name: name for name in placeholders(template)})
    weights = "np.arange(1.0, 4.0)" if kind == VECTOR else "np.arange(1.0, 10.0).reshape(3, 3)"
    reduced = "np.sin(f(v, w, u, m, p, e))" if kind == FLOAT else f"np.sum(np.sin(f(v, w, u, m, p, e) * {weights}))"
    source = (
        "import numpy as np\nimport scipy.linalg\nimport scipy.signal\nimport scipy.special\nimport scipy.stats\n\n\n"
        f"def f(v, w, u, m, p, e):\n    return {call}\n\n\ndef g(v, w, u, m, p, e):\n    return {reduced}\n"
    )
    path = tmp_path / f"rule_call_{next(_count)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_catalogue_covers_the_families():
    assert set(FAMILIES) >= {
        "ufunc", "special", "stats", "scan", "sort", "reduction", "arrangement", "padding", "difference",
        "indexing", "contraction", "signal", "linalg", "fft",
    }
    assert len(ENTRIES) >= 150


@pytest.mark.parametrize(("kind", "template"), ENTRIES, ids=[template for _, template in ENTRIES])
def test_each_call_has_its_shape_and_differentiates(tmp_path, kind, template):
    module = _load(tmp_path, kind, template)
    arguments = tuple(OPERANDS[name] for name in "vwumpe")
    assert np.shape(module.f(*arguments)) == SHAPES[kind]
    result = check_grad(module.g, *arguments, argnums=(0, 1, 2, 3, 4, 5))
    assert not result.skipped, result.reason


@pytest.mark.slow
def test_a_longer_soak_of_the_rules_and_subclasses():
    # seeded rounds of programs with both families on (the others too), about 1-2 minutes
    checked = []
    for round_ in range(3):

        @seed(7000 + round_)
        @settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(programs(rules=True, subclasses=True, max_statements=8))
        def run(program):
            with program:
                check_program(program)
                checked.append(program.constructs)

        run()
    assert sum("rules" in c for c in checked) >= 200
    assert sum(any(k.startswith("subclass-") for k in c) for c in checked) >= 50


# --- refusals the subclasses family found (not drawn; pinned until cpsgrad differentiates them) --------


class Items0(list):
    pass


def extended_where_made(x):
    items = Items0([0.5])  # made by the function from constants
    items += [x, x * x]  # the same statement differentiates where `items` is a parameter
    return sum(items) * len(items)


def repeat_in_place(items, a):
    items += [a]
    items *= 2
    return sum(items)


def repeated_parameter(x):
    return repeat_in_place(Items0([0.5]), x)


@pytest.mark.xfail(strict=True, raises=cpsgrad.UnsupportedError, reason="x op= y on a list subclass the function made")
def test_augmented_assignment_on_a_subclass_the_function_made():
    check_grad(extended_where_made, 0.3)


@pytest.mark.xfail(strict=True, raises=cpsgrad.UnsupportedError, reason="`*=` of a list parameter holding a gradient")
def test_repetition_in_place_of_a_list_parameter():
    check_grad(repeated_parameter, 0.3)


def update_in_place(table, a):
    table |= [("k1", a)]
    return sum(table.values())


def fresh_table_where_a_list_is_extended(x):
    local = [x]
    local += (x,)  # the rewrite of this `x op= y` once lost the call's consent (tests/test_rewritten_tables.py) ...
    return update_in_place(Table0({}), sum(local))  # ... and refused the fresh Table0 handed to a writer


class Table0(dict):
    pass


def test_a_fresh_subclass_object_handed_to_a_helper_that_writes_into_it():
    check_grad(fresh_table_where_a_list_is_extended, 0.3)
