"""cpsgrad.hvp and cpsgrad.hessian (reverse over forward: cpsgrad/higher_order.py) against JAX and
against finite differences of cpsgrad's own gradient; second derivatives through loops, branches,
calls and recursion; third derivatives are not offered yet (no grad of a gradient)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import cpsgrad
from cpsgrad import nn
from cpsgrad.errors import ArgumentError, HigherOrderError

jax.config.update("jax_enable_x64", True)


def _hessian_by_differences(function, x, step=1e-5):
    """Central differences of cpsgrad's gradient, column by column."""
    gradient = cpsgrad.grad(function)
    if isinstance(x, float):
        return (gradient(x + step) - gradient(x - step)) / (2 * step)
    columns = []
    for element in range(x.size):
        e = np.zeros(x.size)
        e[element] = step
        e = e.reshape(x.shape)
        columns.append((gradient(x + e) - gradient(x - e)) / (2 * step))
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape)


def tanh_energy(x):
    return np.sum(np.tanh(x) ** 2) * x[0]


def tanh_energy_jax(x):
    return jnp.sum(jnp.tanh(x) ** 2) * x[0]


def looped(x):
    y = x
    i = 0
    while i < 5:
        y = np.sin(y) * x
        i = i + 1
    if np.sum(y) > 0:
        return np.sum(y * y)
    return -np.sum(y)


def cube(x):
    return x * x * x


def through_a_call(x):
    return np.sum(cube(x)) + np.sum(cube(x * 2.0))


def factorial_power(x, n):
    if n <= 1:
        return x
    return x * factorial_power(x, n - 1)


def recursive(x):
    return factorial_power(x, 4) + math.sin(x)


def scalar_loop(a):
    for _ in range(20):
        a = 0.99 * a + 0.01 * a * a
    return a


def kinks(x):
    return (
        np.sum(np.abs(x) * x**2)
        + np.sum(np.where(x > 0, x * x, 2 * x))
        + np.sum(nn.relu(x) ** 2)
        + np.sum(np.maximum(x, 0.1) ** 2)
    )


def network(W):
    h = np.tanh(W @ np.array([0.5, -1.0, 2.0]))
    return np.sum(nn.softmax(h) * np.array([1.0, 2.0, 3.0])) + np.sum(W**3) / 3.0


X = np.array([0.3, -0.2, 0.5])


def test_hvp_matches_jax():
    v = np.array([1.0, 0.5, -2.0])
    expected = jax.jvp(jax.grad(tanh_energy_jax), (X,), (v,))[1]
    np.testing.assert_allclose(cpsgrad.hvp(tanh_energy, (X,), (v,)), expected, rtol=1e-10)


@pytest.mark.parametrize("function", [tanh_energy, looped, through_a_call, kinks])
def test_hessian_matches_differences_of_the_gradient(function):
    hessian = cpsgrad.hessian(function)(X)
    assert hessian.shape == (3, 3)
    np.testing.assert_allclose(hessian, _hessian_by_differences(function, X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hessian, hessian.T, atol=1e-10)  # a Hessian is symmetric


def test_hessian_of_a_matrix_argument_has_shape_I_plus_I():
    W = np.arange(9.0).reshape(3, 3) / 10
    hessian = cpsgrad.hessian(network)(W)
    assert hessian.shape == (3, 3, 3, 3)
    np.testing.assert_allclose(hessian, _hessian_by_differences(network, W), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("function, x", [(recursive, 0.4), (scalar_loop, 0.7)])
def test_second_derivatives_through_recursion_and_loops(function, x):
    second = cpsgrad.hessian(function)(x)
    assert np.ndim(second) == 0
    np.testing.assert_allclose(second, _hessian_by_differences(function, x), rtol=1e-6)


def test_second_derivative_of_a_polynomial_in_closed_form():
    # d2/dx2 x**4 = 12 x**2, through the recursion x * x * x * x
    assert cpsgrad.hessian(lambda x: factorial_power(x, 4))(1.5) == pytest.approx(12 * 1.5**2, rel=1e-12)


def test_hvp_of_several_primals_gives_one_part_each():
    def f(x, y):
        return np.sum(x * x * y) + np.sum(np.sin(y))

    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    tx, ty = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    hx, hy = cpsgrad.hvp(f, (x, y), (tx, ty))
    # H = [[2y, 2x], [2x, -sin y]] (diagonal blocks), applied to (tx, ty)
    np.testing.assert_allclose(hx, 2 * y * tx + 2 * x * ty)
    np.testing.assert_allclose(hy, 2 * x * tx - np.sin(y) * ty)


def test_hvp_refuses_what_it_cannot_do():
    with pytest.raises(ArgumentError, match="real scalar"):
        cpsgrad.hvp(lambda x: x * 2.0, (X,), (X,))
    with pytest.raises(ArgumentError, match="tuples"):
        cpsgrad.hvp(tanh_energy, X, X)
    with pytest.raises(HigherOrderError):
        cpsgrad.hvp(cpsgrad.grad(tanh_energy), (X,), (X,))
    with pytest.raises(ArgumentError, match="integer"):
        cpsgrad.hvp(factorial_power, (1.0, 3), (1.0, 0))


def test_the_higher_order_page_runs(tmp_path):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "higher-order.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)
    assert len(blocks) == 3
    for number, block in enumerate(blocks):
        module = tmp_path / f"higher_order_example_{number}.py"
        module.write_text(block)  # cpsgrad reads the functions' source from their file
        exec(compile(block, str(module), "exec"), {"__name__": module.stem, "__file__": str(module)})
