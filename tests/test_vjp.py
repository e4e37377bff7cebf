"""vjp and jacrev (cpsgrad/vjp.py): pullbacks of outputs of any structure, checked against central
finite differences, and Jacobians against analytic ones."""

import typing

import numpy as np
import pytest

import cpsgrad
from cpsgrad import pytree
from cpsgrad.vjp import jacrev, vjp

STEP = 1e-6


def _pairing(cotangent, out) -> float:
    """<cotangent, out> over the parts that have a gradient (a None cotangent pairs with nothing)."""
    total = 0.0
    for c, o in zip(pytree.leaves(cotangent), pytree.leaves(out), strict=True):
        if c is not None and np.asarray(o).dtype.kind == "f":
            total += float(np.vdot(np.asarray(c, np.float64), np.asarray(o, np.float64)))
    return total


def numeric_vjp(function, primals, position, cotangent):
    """The gradient of <cotangent, function(*primals)> in primal `position`, by central differences
    in float64 (the primal's own shape)."""
    x = np.array(primals[position], dtype=np.float64)
    gradient = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        values = []
        for sign in (1.0, -1.0):
            moved = x.copy()
            moved[index] += sign * STEP
            args = list(primals)
            args[position] = float(moved) if isinstance(primals[position], float) else moved
            values.append(_pairing(cotangent, function(*args)))
        gradient[index] = (values[0] - values[1]) / (2 * STEP)
    return gradient


def assert_pullback_matches(function, primals, cotangent, argnums=None, rtol=1e-6):
    out, pullback = vjp(function, *primals, argnums=argnums)
    positions = range(len(primals)) if argnums is None else (argnums,) if isinstance(argnums, int) else argnums
    gradients = pullback(cotangent)
    assert type(gradients) is tuple and len(gradients) == len(positions)
    for position, gradient in zip(positions, gradients, strict=True):
        assert np.shape(gradient) == np.shape(primals[position])
        expected = numeric_vjp(function, primals, position, cotangent)
        np.testing.assert_allclose(gradient, expected, rtol=rtol, atol=1e-8)
    return out, gradients


rng = np.random.default_rng(7)


# ----------------------------------------------------------------------------- functions under test


def cubic(x, y):
    return x * x * y + np.sin(y)


def elementwise(x):
    return np.sin(x) * x**2 + np.exp(-x)


def layer(W, X):
    return np.tanh(W @ X)


def pair(a, b):
    return (a * b, np.sin(a))


def record(x, w):
    return {"scaled": x * w, "summary": [np.sum(x**2), np.cos(w)], "count": 3, "label": None}


def iterate(x, n):
    y = x
    i = 0
    while i < n:
        if np.sum(y) > 0:
            y = np.sin(y) * x
        else:
            y = y * y + 0.5 * x
        i = i + 1
    return y, np.sum(y * y)


def folded(x, depth):
    if depth == 0:
        return x
    return folded(np.cos(x) * x, depth - 1) + x * 0.5


def recursive(x):
    return folded(x, 3) * 2.0


def filled(x):
    y = np.zeros(3)
    y[0] = x[0] * 2.0
    y[1] = x[1] * x[0]
    y[2] = np.sin(x[2])
    return y


def identity(x):
    return x


def writes_argument(x, buffer):
    buffer[0] = x * 2.0
    return buffer * x


class Pair(typing.NamedTuple):
    first: np.ndarray
    second: float


def named(x):
    return Pair(x * 3.0, np.sum(x))


LENGTH = 3


def truncated(x):
    return x[:LENGTH] * 2.0


# ------------------------------------------------------------------------------------------- vjp


def test_scalar_output_cotangent_scales_grad():
    x, y = 1.3, -0.4
    out, pullback = vjp(cubic, x, y)
    assert out == cubic(x, y)
    gx, gy = pullback(2.5)
    expected = cpsgrad.grad(cubic, argnums=(0, 1))(x, y)
    assert gx == pytest.approx(2.5 * expected[0], rel=1e-12) and gy == pytest.approx(2.5 * expected[1], rel=1e-12)
    assert_pullback_matches(cubic, (x, y), 2.5)


def test_vector_output_of_an_elementwise_function():
    x = rng.normal(size=5)
    out, _ = assert_pullback_matches(elementwise, (x,), rng.normal(size=5))
    np.testing.assert_array_equal(out, elementwise(x))


def test_matrix_output_of_a_matrix_product():
    W, X = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    out, (gW, gX) = assert_pullback_matches(layer, (W, X), rng.normal(size=(3, 2)))
    assert out.shape == (3, 2) and gW.shape == (3, 4) and gX.shape == (4, 2)


def test_tuple_output():
    a, b = rng.normal(size=4), rng.normal(size=4)
    cotangent = (rng.normal(size=4), rng.normal(size=4))
    out, _ = assert_pullback_matches(pair, (a, b), cotangent)
    assert type(out) is tuple and len(out) == 2
    _, pullback = vjp(pair, a, b)
    ga, gb = pullback((np.zeros(4), np.ones(4)))  # only sin(a): b gets nothing
    np.testing.assert_allclose(ga, np.cos(a), rtol=1e-12)
    np.testing.assert_array_equal(gb, np.zeros(4))


def test_dict_output_with_a_list_and_parts_without_gradient():
    x, w = rng.normal(size=3), 0.8
    cotangent = {"scaled": rng.normal(size=3), "summary": [1.5, -0.5], "count": None, "label": None}
    assert_pullback_matches(record, (x, w), cotangent)
    _, pullback = vjp(record, x, w)
    with_zero = pullback({**cotangent, "count": 0})  # an int part takes None or a zero
    np.testing.assert_allclose(with_zero[0], pullback(cotangent)[0], rtol=1e-15)


def test_named_tuple_output():
    x = rng.normal(size=3)
    assert_pullback_matches(named, (x,), Pair(rng.normal(size=3), 0.7))


def test_while_loop_and_if():
    for start in (np.array([0.4, 0.9, 0.3]), np.array([-0.6, -0.2, 0.1])):  # both branches
        cotangent = (rng.normal(size=3), 0.9)
        assert_pullback_matches(iterate, (start, 4), cotangent, argnums=0)


def test_recursive_helper():
    x = rng.normal(size=4)
    assert_pullback_matches(recursive, (x,), rng.normal(size=4))


def test_float32_inputs_give_float32_gradients():
    W = rng.normal(size=(3, 4)).astype(np.float32)
    X = rng.normal(size=(4, 2)).astype(np.float32)
    out, pullback = vjp(layer, W, X)
    assert out.dtype == np.float32
    cotangent = rng.normal(size=(3, 2)).astype(np.float32)
    gW, gX = pullback(cotangent)
    assert gW.dtype == np.float32 and gX.dtype == np.float32
    np.testing.assert_allclose(gW, numeric_vjp(layer, (W, X), 0, cotangent), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gX, numeric_vjp(layer, (W, X), 1, cotangent), rtol=1e-4, atol=1e-5)


def test_pullback_called_twice_with_different_cotangents():
    W, X = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    first, second = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    _, pullback = vjp(layer, W, X)
    one = pullback(first)
    kept = [g.copy() for g in one]
    two = pullback(second)
    for position in (0, 1):
        np.testing.assert_allclose(one[position], numeric_vjp(layer, (W, X), position, first), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(two[position], numeric_vjp(layer, (W, X), position, second), rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(one[position], kept[position])  # the second run left the first alone
        assert not np.allclose(one[position], two[position])
    both = pullback(first + second)  # linear in the cotangent
    np.testing.assert_allclose(both[0], one[0] + two[0], rtol=1e-12, atol=1e-14)


def test_out_is_not_changed_by_later_pullbacks_nor_gradients_by_the_cotangent():
    x = rng.normal(size=3)
    out, pullback = vjp(filled, x)
    expected = filled(x)
    for _ in range(2):
        pullback(rng.normal(size=3))
    np.testing.assert_array_equal(out, expected)  # the backward's restores went into the runs' own arrays
    cotangent = np.ones(3)
    (gradient,) = vjp(identity, x)[1](cotangent)
    cotangent[:] = 5.0
    np.testing.assert_array_equal(gradient, np.ones(3))


@pytest.mark.parametrize(
    ("cotangent", "message"),
    [
        ((np.ones(4), np.ones(3)), r"out\[0\] it must be an array of shape \(3,\) and dtype float64, not .* \(4,\)"),
        ((np.ones(3, np.float32), np.ones(3)), r"out\[0\] .* dtype float64, not an array .* dtype float32"),
        ([np.ones(3), np.ones(3)], "for out it must be a tuple of length 2, not a list of length 2"),
        ((np.ones(3),), "for out it must be a tuple of length 2, not a tuple of length 1"),
        (np.ones(3), "for out it must be a tuple of length 2, not an array"),
        ((np.ones(3), "x"), r"for out\[1\] it must be an array of shape \(3,\)"),
    ],
)
def test_cotangent_mismatches_are_refused_naming_the_part(cotangent, message):
    _, pullback = vjp(pair, np.ones(3), np.ones(3))
    with pytest.raises(cpsgrad.ArgumentError, match=message):
        pullback(cotangent)


def test_dict_and_constant_cotangent_mismatches():
    _, pullback = vjp(record, np.ones(3), 0.5)
    good = {"scaled": np.ones(3), "summary": [1.0, 1.0], "count": None, "label": None}
    with pytest.raises(cpsgrad.ArgumentError, match="keys 'count', 'label', 'scaled', 'summary', not a dict with"):
        pullback({key: value for key, value in good.items() if key != "label"})
    with pytest.raises(cpsgrad.ArgumentError, match=r"out\['count'\] it must be None or zeros .* not int 2"):
        pullback({**good, "count": 2})
    with pytest.raises(cpsgrad.ArgumentError, match=r"out\['summary'\]\[0\] it must be a real number, not bool"):
        pullback({**good, "summary": [True, 1.0]})
    with pytest.raises(cpsgrad.ArgumentError, match="it must be a real number"):
        vjp(cubic, 1.0, 2.0)[1](np.ones(2))


def test_argnums_variants():
    a, b = rng.normal(size=3), rng.normal(size=3)
    cotangent = (rng.normal(size=3), rng.normal(size=3))
    both = vjp(pair, a, b)[1](cotangent)
    assert len(both) == 2
    (only_b,) = vjp(pair, a, b, argnums=1)[1](cotangent)
    np.testing.assert_allclose(only_b, both[1], rtol=1e-15)
    swapped = vjp(pair, a, b, argnums=(1, 0))[1](cotangent)
    np.testing.assert_allclose(swapped[0], both[1], rtol=1e-15)
    np.testing.assert_allclose(swapped[1], both[0], rtol=1e-15)
    assert_pullback_matches(pair, (a, b), cotangent, argnums=(1,))
    with pytest.raises(cpsgrad.ArgumentError, match="cannot differentiate with respect to n"):
        vjp(iterate, a, 3)  # by default every argument, and an int has no gradient
    with pytest.raises(cpsgrad.ArgumentError, match="argnums"):
        vjp(pair, a, b, argnums="0")


def test_refusals():
    with pytest.raises(cpsgrad.HigherOrderError, match="vjp of a cpsgrad gradient"):
        vjp(cpsgrad.grad(cubic), 1.0, 2.0)
    with pytest.raises(cpsgrad.HigherOrderError, match="jacrev of a cpsgrad gradient"):
        jacrev(jacrev(elementwise))
    with pytest.raises(cpsgrad.HigherOrderError, match="vjp of a cpsgrad gradient"):
        vjp(vjp(elementwise, np.ones(2))[1], np.ones(2))
    with pytest.raises(cpsgrad.UnsupportedError, match="writes into its parameter buffer"):
        vjp(writes_argument, 2.0, np.ones(3), argnums=0)
    with pytest.raises(cpsgrad.ArgumentError, match="complex outputs are not supported"):
        vjp(identity, np.ones(2) * 1j)
    with pytest.raises(cpsgrad.ArgumentError, match="at least one primal"):
        vjp(lambda: 1.0)


def test_an_output_that_changes_between_runs_is_refused(monkeypatch):
    x = rng.normal(size=4)
    _, pullback = vjp(truncated, x)
    monkeypatch.setattr(f"{__name__}.LENGTH", 2)
    with pytest.raises(cpsgrad.ArgumentError, match="another structure, shape or dtype"):
        pullback(np.ones(3))


# ---------------------------------------------------------------------------------------- jacrev


def tanh_map(x, A):
    return A @ np.tanh(x)


def test_jacrev_vector_to_vector_against_the_analytic_jacobian():
    x, A = rng.normal(size=4), rng.normal(size=(3, 4))
    jacobian = jacrev(tanh_map)(x, A)
    assert jacobian.shape == (3, 4)
    np.testing.assert_allclose(jacobian, A * (1 - np.tanh(x) ** 2)[None, :], rtol=1e-12)
    np.testing.assert_allclose(jacrev(elementwise)(x), np.diag(np.cos(x) * x**2 + 2 * x * np.sin(x) - np.exp(-x)),
                               rtol=1e-12, atol=1e-15)


def test_jacrev_shapes_are_output_shape_then_input_shape():
    W, X = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    dW, dX = jacrev(lambda W, X: W @ X, argnums=(0, 1))(W, X)
    assert dW.shape == (3, 2, 3, 4) and dX.shape == (3, 2, 4, 2)
    expected_dW = np.einsum("ik,lj->ijkl", np.eye(3), X)  # d(WX)[i, j] / dW[k, l] = delta_ik X[l, j]
    expected_dX = np.einsum("ik,jl->ijkl", W, np.eye(2))  # d(WX)[i, j] / dX[k, l] = W[i, k] delta_jl
    np.testing.assert_allclose(dW, expected_dW, rtol=1e-12)
    np.testing.assert_allclose(dX, expected_dX, rtol=1e-12)
    assert jacrev(cubic)(1.5, 2.0).shape == ()  # float to float


def test_jacrev_of_a_scalar_function_equals_grad():
    x = rng.normal(size=5)
    scalar = lambda x: np.sum(np.sin(x) * x)
    np.testing.assert_allclose(jacrev(scalar)(x), cpsgrad.grad(scalar)(x), rtol=1e-14)
    assert float(jacrev(cubic, argnums=1)(1.5, 2.0)) == pytest.approx(cpsgrad.grad(cubic, argnums=1)(1.5, 2.0))


def test_jacrev_of_structured_outputs_and_arguments():
    a, b = rng.normal(size=3), rng.normal(size=3)
    (da_prod, db_prod), (da_sin, db_sin) = jacrev(pair, argnums=(0, 1))(a, b)  # output structure outside
    np.testing.assert_allclose(da_prod, np.diag(b), rtol=1e-14)
    np.testing.assert_allclose(db_prod, np.diag(a), rtol=1e-14)
    np.testing.assert_allclose(da_sin, np.diag(np.cos(a)), rtol=1e-14)
    np.testing.assert_array_equal(db_sin, np.zeros((3, 3)))
    jacobians = jacrev(record)(a, 0.8)
    assert jacobians["count"] is None and jacobians["label"] is None
    np.testing.assert_allclose(jacobians["scaled"], 0.8 * np.eye(3), rtol=1e-14)
    np.testing.assert_allclose(jacobians["summary"][0], 2 * a, rtol=1e-14)
    np.testing.assert_array_equal(jacobians["summary"][1], np.zeros(3))
    params = {"w": rng.normal(size=3), "b": 0.3}
    inside = jacrev(lambda p: p["w"] * p["b"])(params)  # argument structure inside
    assert set(inside) == {"w", "b"} and inside["w"].shape == (3, 3) and inside["b"].shape == (3,)
    np.testing.assert_allclose(inside["w"], 0.3 * np.eye(3), rtol=1e-14)
    np.testing.assert_allclose(inside["b"], params["w"], rtol=1e-14)


def test_jacrev_agrees_with_finite_differences_through_a_loop():
    x = np.array([0.4, 0.9, 0.3])
    jacobian, _ = jacrev(iterate)(x, 3)
    for row in range(3):
        basis = (np.eye(3)[row], 0.0)
        np.testing.assert_allclose(jacobian[row], numeric_vjp(iterate, (x, 3), 0, basis), rtol=1e-6, atol=1e-8)
