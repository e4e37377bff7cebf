"""Forward mode by hand-written programs (tests/corpus/forward_programs.py): `cpsgrad.jvp`,
`jacfwd`, `show(mode="forward")` and the CLI.

Dtypes, the structure of tangents, writes through aliases and views, recursion, loops with
data-dependent trip counts and early exits, keyword arguments, one numpy operation of each
tangent kind against `jax.jvp`, argument errors, Jacobians against `jacrev` and finite
differences, the higher-order refusal. `BUGS` are minimal reproductions of what forward mode
gets wrong (found by tests/test_forward_mode_corpus.py), each xfail(strict=True).
"""

import copy
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import jax.scipy.special
import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import ArgumentError, HigherOrderError, UnsupportedError
from tests.corpus import forward_programs as fp

ROOT = Path(__file__).resolve().parent.parent
JAX_RTOL, JAX_ATOL = 1e-10, 1e-12
FD_RTOL, FD_ATOL = 1e-7, 1e-9


def _map(function, *trees):
    first = trees[0]
    if isinstance(first, dict):
        assert all(isinstance(t, dict) and list(t) == list(first) for t in trees), trees
        return {key: _map(function, *(t[key] for t in trees)) for key in first}
    if isinstance(first, (tuple, list)):
        assert all(type(t) is type(first) and len(t) == len(first) for t in trees), trees
        return type(first)(_map(function, *parts) for parts in zip(*trees, strict=True))
    return function(*trees)


def _numeric(function, primals, tangents, step=1e-4):
    """The derivative of t -> function(primals + t * tangents) at 0: central differences,
    Richardson-extrapolated (steps h and h/2), over each leaf of the output."""

    def at(t):
        moved = tuple(p if isinstance(p, int) else p + t * v for p, v in zip(primals, tangents, strict=True))
        return function(*copy.deepcopy(moved))

    def central(h):
        return _map(lambda a, b: (np.asarray(a, np.float64) - np.asarray(b, np.float64)) / (2 * h), at(h), at(-h))

    return _map(lambda coarse, fine: (4 * fine - coarse) / 3, central(step), central(step / 2))


def _close(got, expected, rtol=FD_RTOL, atol=FD_ATOL):
    _map(lambda g, e: np.testing.assert_allclose(np.asarray(g, np.float64), e, rtol=rtol, atol=atol), got, expected)


def _check(function, primals, tangents):
    """jvp's primal is the function's exactly, its tangent finite differences'; returns the tangent."""
    value, tangent = cpsgrad.jvp(function, copy.deepcopy(primals), copy.deepcopy(tangents))
    expected = function(*copy.deepcopy(primals))
    _map(lambda v, e: np.testing.assert_array_equal(v, e, strict=True), value, expected)
    _close(tangent, _numeric(function, primals, tangents))
    return tangent


# --- dtypes and structures -----------------------------------------------------------------------


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    tW, tx = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    value, tangent = cpsgrad.jvp(fp.float32_layer, (W, x), (tW, tx))
    assert value.dtype == np.float32 and tangent.dtype == np.float32 and tangent.shape == (3,)
    np.testing.assert_array_equal(value, fp.float32_layer(W, x), strict=True)
    _, double = cpsgrad.jvp(fp.float32_layer, (W.astype(float), x.astype(float)), (tW.astype(float), tx.astype(float)))
    np.testing.assert_allclose(tangent, double, rtol=1e-5, atol=1e-6)


def test_a_python_float_has_a_python_float_tangent():
    value, tangent = cpsgrad.jvp(fp.power, (1.5, 4), (1.0, 0))
    assert type(value) is float and type(tangent) is float
    assert (value, tangent) == (1.5**4, 4 * 1.5**3)


@pytest.mark.parametrize(
    ("function", "primals", "tangents"),
    [
        (fp.tuple_output, (2.0, 3.0), (1.0, -0.5)),
        (fp.dict_output, (2.0, 3.0), (0.25, 1.0)),
        (fp.list_output, (np.array([0.5, -1.0, 2.0]),), (np.array([1.0, 0.5, -2.0]),)),
    ],
    ids=["tuple", "dict", "list"],
)
def test_the_tangent_mirrors_the_output(function, primals, tangents):
    tangent = _check(function, primals, tangents)  # _map asserts the same types, keys and lengths
    value = function(*primals)
    _map(lambda t, v: None if np.shape(t) == np.shape(v) else pytest.fail(f"{np.shape(t)} != {np.shape(v)}"),
         tangent, value)


# --- writes, aliases, views ----------------------------------------------------------------------

X3, T3 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.5, -2.0])


def test_writes_through_an_alias():
    tangent = _check(fp.aliased_writes, (X3,), (T3,))  # y = [5, 2x1, 2x2]: y * x
    np.testing.assert_array_equal(tangent, [5.0 * T3[0], 4 * X3[1] * T3[1], 4 * X3[2] * T3[2]])


def test_a_write_through_a_view():
    tangent = _check(fp.write_through_a_view, (X3,), (T3,))  # y = [x0, 3 x0, x2]: y * x
    np.testing.assert_allclose(tangent, [2 * X3[0] * T3[0], 3 * T3[0] * X3[1] + 3 * X3[0] * T3[1], 2 * X3[2] * T3[2]])


def test_a_write_into_the_argument_through_a_view_happens_as_in_python():
    x, plain = X3.copy(), X3.copy()
    expected = fp.write_into_the_argument(plain)
    value, tangent = cpsgrad.jvp(fp.write_into_the_argument, (x,), (T3.copy(),))
    np.testing.assert_array_equal(value, expected)
    np.testing.assert_array_equal(x, plain)  # the argument written as the original writes it
    np.testing.assert_array_equal(tangent, [2 * X3[0] * T3[0], 18 * X3[0] * T3[0], 2 * X3[2] * T3[2]])


# --- control flow and calls ----------------------------------------------------------------------


@pytest.mark.parametrize("x", [1.5, np.array([0.5, -2.0, 1.25])], ids=["float", "array"])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_recursion(x, n):
    tangent_in = 0.75 if isinstance(x, float) else np.array([1.0, -0.5, 2.0])
    value, tangent = cpsgrad.jvp(fp.power, (x, n), (tangent_in, 0))
    np.testing.assert_allclose(value, x**n, rtol=1e-15)
    np.testing.assert_allclose(tangent, n * x ** (n - 1) * tangent_in if n else 0.0 * tangent_in, rtol=1e-14)


@pytest.mark.parametrize("a", [0.3, 2.0, 7.0, 1e4])
def test_a_while_loop_with_a_data_dependent_trip_count(a):
    value, tangent = cpsgrad.jvp(fp.newton_sqrt, (a,), (1.0,))
    assert value == fp.newton_sqrt(a)
    assert tangent == pytest.approx(0.5 / np.sqrt(a), rel=1e-9)


@pytest.mark.parametrize(("x", "count"), [(0.5, 0), (1.5, 1), (13.0, 4), (1000.0, 10)])
def test_the_trip_count_used_as_a_value(x, count):
    assert cpsgrad.jvp(fp.halvings, (x,), (1.0,)) == (fp.halvings(x), count / 2.0**count)


@pytest.mark.parametrize("n", [0, 1, 4, 9, 15])
def test_break_and_continue(n):
    _check(fp.loop_control, (1.5, n), (1.0, 0))


@pytest.mark.parametrize("x", [1.3, -0.2, -1.0, -1.7, -3.0])
def test_early_returns(x):
    _check(fp.early_return, (x,), (0.5,))


def test_a_helper_called_with_keyword_arguments():
    value, tangent = cpsgrad.jvp(fp.keywords_by_name, (2.0, 3.0), (1.0, 0.5))
    assert value == fp.keywords_by_name(2.0, 3.0)
    assert tangent == pytest.approx(1.0 * 3.0 + 2.0 * 0.5 + (1.0 * 9.0 + 2 * 2.0 * 3.0 * 0.5), rel=1e-15)


def test_repeated_calls_reuse_the_program_for_the_same_kinds_only():
    assert cpsgrad.jvp(fp.power, (2.0, 3), (1.0, 0)) == (8.0, 12.0)
    value, tangent = cpsgrad.jvp(fp.power, (np.array([2.0, 3.0]), 3), (np.array([1.0, 2.0]), 0))
    np.testing.assert_array_equal(tangent, [12.0, 54.0])
    assert cpsgrad.jvp(fp.power, (3.0, 2), (1.0, 0)) == (9.0, 6.0)


def test_integer_primals_only():
    value, tangent = cpsgrad.jvp(fp.halvings, (13,), (0,))
    assert value == fp.halvings(13) and tangent == 0


# --- one numpy operation of each tangent kind, against jax.jvp -----------------------------------


def _well_conditioned(rng, n):
    return np.eye(n) * 3.0 + 0.5 * rng.standard_normal((n, n))


OPS = [  # (program, its jax.numpy transcription, the primals from a generator)
    (fp.elementwise, lambda x, y: jnp.sin(x) * jnp.exp(y) + x**2 / (1.0 + y * y) - jnp.tanh(x * y),
     lambda r: (r.standard_normal(4), r.standard_normal(4))),
    (fp.scalar_and_array, lambda s, x: s * x + s**2 - x / (2.0 + s), lambda r: (0.7, r.standard_normal(5))),
    (fp.sum_reshape_transpose, lambda x: jnp.sum(x, axis=0) + jnp.reshape(x, (3, 2))[:, 1] * jnp.transpose(x)[:, 0],
     lambda r: (r.standard_normal((2, 3)),)),
    (fp.concatenate_and_index, lambda x: jnp.concatenate([x[0], x[1, ::2], x[:, 1]])[1:5] * x[1, 2],
     lambda r: (r.standard_normal((2, 3)),)),
    (fp.matmul, lambda A, x: A @ x, lambda r: (r.standard_normal((3, 4)), r.standard_normal(4))),
    (fp.dot, lambda A, x: jnp.dot(A, x * x), lambda r: (r.standard_normal((3, 4)), r.standard_normal(4))),
    (fp.einsum, lambda A, x: jnp.einsum("ij,j->i", A, x) * jnp.einsum("ij,ij->", A, A),
     lambda r: (r.standard_normal((3, 4)), r.standard_normal(4))),
    (fp.softmax, jax.nn.softmax, lambda r: (r.standard_normal(5),)),
    (fp.log_softmax, jax.nn.log_softmax, lambda r: (r.standard_normal(5),)),
    (fp.logsumexp, jax.scipy.special.logsumexp, lambda r: (r.standard_normal(5),)),
    (fp.inv, jnp.linalg.inv, lambda r: (_well_conditioned(r, 3),)),
    (fp.solve, jnp.linalg.solve, lambda r: (_well_conditioned(r, 3), r.standard_normal(3))),
    (fp.det, jnp.linalg.det, lambda r: (_well_conditioned(r, 3),)),
    (fp.max_with_axis, lambda x: jnp.max(x, axis=1), lambda r: (r.standard_normal((3, 4)),)),
    (fp.norm, jnp.linalg.norm, lambda r: (r.standard_normal(5),)),
    (fp.prod, jnp.prod, lambda r: (r.standard_normal(4) + 2.0,)),
]


@pytest.mark.parametrize(("function", "transcription", "draw"), OPS, ids=[op[0].__name__ for op in OPS])
def test_numpy_operations_against_jax(function, transcription, draw):
    rng = np.random.default_rng(3)
    primals = draw(rng)
    tangents = tuple(float(rng.standard_normal()) if isinstance(p, float) else rng.standard_normal(p.shape)
                     for p in primals)
    tangent = _check(function, primals, tangents)
    with jax.enable_x64(True):
        _, expected = jax.jvp(transcription, tuple(map(jnp.asarray, primals)), tuple(map(jnp.asarray, tangents)))
    assert np.shape(tangent) == expected.shape
    np.testing.assert_allclose(tangent, np.asarray(expected), rtol=JAX_RTOL, atol=JAX_ATOL)


# --- argument errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("function", "primals", "tangents", "message"),
    [
        (fp.norm, (np.ones(3),), (np.ones(4),), "shape"),
        (fp.norm, (np.ones(3),), (1.0,), "array of shape"),
        (fp.power, (1.5, 4), (np.ones(2), 0), "real number"),
        (fp.power, (1.5, 4), (1.0, 1), "integer"),
        (fp.power, (1.5, 4), (1.0,), "2 primals and 1 tangents"),
        (fp.norm, np.ones(3), np.ones(3), "tuples"),
        (fp.norm, (np.ones(3), np.ones(3)), (np.ones(3), np.ones(3)), "takes 1 arguments"),
        (fp.tuple_output, (2.0, "a"), (1.0, 0.0), "str"),
    ],
    ids=["shape", "float-for-array", "array-for-float", "int-nonzero", "lengths", "not-tuples", "too-many", "str"],
)
def test_argument_errors(function, primals, tangents, message):
    with pytest.raises(ArgumentError, match=message):
        cpsgrad.jvp(function, primals, tangents)


# --- show and the CLI ----------------------------------------------------------------------------


def test_show_prints_the_tangent_program():
    text = cpsgrad.show(fp.elementwise, mode="forward", argnums=(0, 1))
    assert "def elementwise__jvp(x, y, x_t, y_t):" in text
    assert "t1_t = " in text and "x_t" in text
    compile(text, "<show>", "exec")
    only_x = cpsgrad.show(fp.elementwise, mode="forward", argnums=0)
    assert "def elementwise__jvp(x, y, x_t):" in only_x and "y_t" not in only_x


def test_the_cli_shows_the_tangent_program(tmp_path):
    target = f"{ROOT / 'tests' / 'corpus' / 'forward_programs.py'}:power"
    result = subprocess.run([sys.executable, "-m", "cpsgrad", "show", target, "--mode", "forward"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "def power__jvp(" in result.stdout and "_t =" in result.stdout
    wrong = subprocess.run([sys.executable, "-m", "cpsgrad", "show", target, "--mode", "sideways"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr


# --- Jacobians -------------------------------------------------------------------------------------


def _numeric_jacobian(function, args, position):
    columns = []
    for index in np.ndindex(np.shape(args[position])):
        direction = np.zeros_like(args[position])
        direction[index] = 1.0
        tangents = tuple(direction if i == position else np.zeros_like(a) for i, a in enumerate(args))
        columns.append(_numeric(function, args, tangents))
    out = np.shape(columns[0])
    return np.stack(columns, axis=-1).reshape(out + np.shape(args[position]))


def test_jacfwd_of_a_vector_function():
    x = np.array([0.3, -1.2, 0.8])
    jacobian = cpsgrad.jacfwd(fp.vector_to_vector)(x)
    assert jacobian.shape == (4, 3)
    np.testing.assert_allclose(jacobian, cpsgrad.jacrev(fp.vector_to_vector)(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jacobian, _numeric_jacobian(fp.vector_to_vector, (x,), 0), rtol=1e-7, atol=1e-9)


def test_jacfwd_of_a_matrix_argument_has_shape_output_plus_input():
    rng = np.random.default_rng(5)
    W, v = rng.standard_normal((4, 2)), rng.standard_normal(2)
    jacobian_W, jacobian_v = cpsgrad.jacfwd(fp.matrix_to_vector, argnums=(0, 1))(W, v)
    assert jacobian_W.shape == (4, 4, 2) and jacobian_v.shape == (4, 2)
    reverse_W, reverse_v = cpsgrad.jacrev(fp.matrix_to_vector, argnums=(0, 1))(W, v)
    np.testing.assert_allclose(jacobian_W, reverse_W, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jacobian_v, reverse_v, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jacobian_W, _numeric_jacobian(fp.matrix_to_vector, (W, v), 0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacobian_v, _numeric_jacobian(fp.matrix_to_vector, (W, v), 1), rtol=1e-7, atol=1e-9)


# --- refusals --------------------------------------------------------------------------------------


def test_jvp_of_a_gradient_is_refused():
    with pytest.raises(HigherOrderError):
        cpsgrad.jvp(fp.SQUARE_GRADIENT, (2.0,), (1.0,))
    with pytest.raises(HigherOrderError):
        cpsgrad.jvp(fp.calls_a_gradient, (2.0,), (1.0,))


@pytest.mark.parametrize(
    ("function", "construct"),
    [
        (fp.with_a_try, "try statement"),
        pytest.param(fp.with_a_nested_def, "nested functions", marks=pytest.mark.xfail(
            strict=True, reason="the refusal of a nested def names no file:line (error.location is None)")),
    ],
    ids=["try", "nested-def"],
)
def test_refusals_name_their_place(function, construct):
    with pytest.raises(UnsupportedError, match=construct) as refused:
        cpsgrad.jvp(function, (2.0,), (1.0,))
    assert refused.value.location is not None and refused.value.location.line > 0


# --- bugs: minimal reproductions, xfail(strict=True) -----------------------------------------------

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
BUGS = [  # (program, primals, tangents, expected value, expected tangent, what goes wrong)
    (fp.keyword_only, (2.0, 3.0), (1.0, 1.0), 15.0, 9.0,
     "ArgumentError: a differentiated keyword-only parameter (refused clearly, not differentiated)"),
    (fp.updated_by_pairs, (0.7, -1.3), (1.0, 0.5), -1.3, 0.5,
     "WRONG VALUE: d.update([(k, y)]) keeps the old tangent (1.0)"),
    (fp.dict_of_pairs, (0.7, -1.3), (1.0, 0.5), 0.7 * -1.3, -1.3 + 0.35, "KeyError 'p' in the tangent of dict(pairs)"),
    (fp.sorted_list, (0.7, -1.3), (1.0, 0.5), -1.3, 0.5, "NoRuleError: forward mode of sorted: its output is a list"),
    (fp.removes_from_a_list, (0.7, -1.3), (1.0, 0.5), 0.7 * -1.3, -1.3 + 0.35,
     "NoRuleError: forward mode of removed_value: its output is a list"),
    (fp.det, (SINGULAR,), (np.eye(2),), np.linalg.det(SINGULAR), 5.0, "LinAlgError: det's tangent solves"),
    (fp.calls_a_partial, (2.0,), (1.0,), 6.0, 3.0, "UnsupportedError: call of partial"),
    (fp.sets_an_attribute, (2.0,), (1.0,), 6.0, 3.0, "NoRuleError: cpsgrad_runtime.set_attribute"),
    (fp.constructs_an_object, (2.0,), (1.0,), 6.0, 3.0, "UnsupportedError: call of Box (a class)"),
    (fp.calls_an_object, (2.0,), (1.0,), 6.0, 3.0, "UnsupportedError: call of Box (its __call__)"),
    (fp.methods_of_fixed_objects, (2.0, 3.0), (1.0, 0.0), 6.0, 3.0,
     "UnsupportedError: layer.forward of a fixed object refused as a closure over differentiated values"),
    (fp.tuple_of_a_generator, (2.0,), (1.0,), 4.0, 4.0, "UnsupportedError: builtin tuple refused as a closure"),
    (fp.list_of_a_generator, (2.0,), (1.0,), 4.0, 4.0, "UnsupportedError: a generator refused as a nested def"),
    (fp.with_a_context_manager, (2.0,), (1.0,), 4.0, 2.0, "UnsupportedError: a with statement refused as a try"),
]


@pytest.mark.parametrize(
    ("function", "primals", "tangents", "value", "tangent"),
    [pytest.param(*bug[:5], id=bug[0].__name__, marks=pytest.mark.xfail(strict=True, reason=bug[5])) for bug in BUGS],
)
def test_bugs(function, primals, tangents, value, tangent):
    got_value, got_tangent = cpsgrad.jvp(function, primals, tangents)
    np.testing.assert_array_equal(got_value, value)
    assert np.shape(got_tangent) == np.shape(tangent)
    np.testing.assert_allclose(got_tangent, tangent, rtol=1e-12)


@pytest.mark.xfail(strict=True, reason="sqrt's tangent at 0 is computed (0 * inf: a RuntimeWarning) for a "
                                       "value only compared; the original warns nothing")
def test_a_value_only_compared_needs_no_tangent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fp.sqrt_in_a_condition(np.zeros(3))
        assert cpsgrad.jvp(fp.sqrt_in_a_condition, (np.zeros(3),), (np.ones(3),)) == (0.0, 1.0)
