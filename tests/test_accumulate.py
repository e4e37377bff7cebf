"""`cpsgrad_runtime.accumulate`: in place only when nothing else can see the array."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.runtime.accumulation import accumulate


def test_an_array_held_only_by_the_caller_is_added_in_place():
    total = np.zeros(3) + 1.0
    identity = id(total)
    total = accumulate(total, np.ones(3))
    assert id(total) == identity
    np.testing.assert_array_equal(total, [2.0, 2.0, 2.0])


def test_a_shared_array_is_never_changed():
    total = np.zeros(3) + 1.0
    shared = total
    result = accumulate(total, np.ones(3))
    np.testing.assert_array_equal(shared, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(result, [2.0, 2.0, 2.0])


def test_views_broadcasting_and_dtype_changes_are_added_out_of_place():
    base = np.zeros((2, 3))
    view = base[0]
    result = accumulate(view, np.ones(3))
    assert result is not view and not base.any()
    total = np.zeros(3)
    widened = accumulate(total, np.ones((2, 3)))
    assert widened.shape == (2, 3)
    single = np.zeros(3, np.float32)
    mixed = accumulate(single, np.ones(3))
    assert mixed.dtype == np.float64 and not single.any()


def shared_adjoints(x, y):
    z = x + y  # z's adjoint reaches x and y as the same array
    w = z * 2.0
    s = z + x
    return np.sum(w * s) + np.sum(x * y)


def test_gradients_with_shared_adjoints_are_right():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    dx, dy = cpsgrad.grad(shared_adjoints, argnums=(0, 1))(x, y)
    z = x + y
    # d/dx sum(2z * (z + x)) = 2(z + x) + 2z + 2z ... written out:
    expected_dx = 2.0 * (z + x) + 2.0 * z * 2.0 + y
    expected_dy = 2.0 * (z + x) + 2.0 * z + x
    np.testing.assert_allclose(dx, expected_dx)
    np.testing.assert_allclose(dy, expected_dy)
    assert dx is not dy


def sum_read_after_an_earlier_use(x, w):
    u = np.sin(x)  # its backward adds into x's adjoint after z's has made it w's array too
    z = x + w  # z's adjoint becomes x's and w's: one array, three names
    return np.sum(z * z) + np.sum(u)


def sum_of_three_names(x, w):
    u = np.cos(w)
    v = np.sin(x)
    z = np.add(w, x)
    return np.sum(z * z) + np.sum(u * v)


def sum_after_an_indexed_read(x, w):
    u = x[1] * 3.0  # accumulate_index adds into x's adjoint in place where nothing else holds it
    z = x + w
    return np.sum(z * z) + u * u


def sum_after_a_product(W, V):
    h = np.array([0.5, -1.0, 2.0])
    u = W @ h  # accumulate_matmul_left: a BLAS update into W's adjoint where nothing else holds it
    z = W + V
    return np.sum(z * z) + np.sum(np.tanh(u))


@pytest.mark.parametrize(
    "function", [sum_read_after_an_earlier_use, sum_of_three_names, sum_after_an_indexed_read, sum_after_a_product]
)
def test_an_adjoint_two_names_share_is_not_added_into_in_place(function):
    # accumulate (and accumulate_index, accumulate_matmul_left) must count references exactly
    # (== 3): a weaker guard (>= 3) adds the earlier use's contribution into the array that is w's
    # adjoint too, and w's gradient is wrong
    shape = (2, 3) if function is sum_after_a_product else (3,)
    size = int(np.prod(shape))
    x, w = np.linspace(0.1, 0.5, size).reshape(shape), np.linspace(-1.0, 1.0, size).reshape(shape)
    dx, dw = cpsgrad.grad(function, argnums=(0, 1))(x, w)
    eps = 1e-6
    for argument, gradient in ((0, dx), (1, dw)):
        numeric = np.zeros(shape)
        for i in np.ndindex(shape):
            plus, minus = [x.copy(), w.copy()], [x.copy(), w.copy()]
            plus[argument][i] += eps
            minus[argument][i] -= eps
            numeric[i] = (function(*plus) - function(*minus)) / (2 * eps)
        np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("steps", [1, 5])
def test_loop_carried_adjoints_accumulate_right(steps):
    gradient = cpsgrad.grad(loop_sum, argnums=(0, 1))
    W, h = np.eye(2) * 0.5, np.array([1.0, 2.0])
    dW, _ = gradient(W, h, steps)
    eps = 1e-6
    numeric = np.zeros_like(W)
    for index in np.ndindex(W.shape):
        plus, minus = W.copy(), W.copy()
        plus[index] += eps
        minus[index] -= eps
        numeric[index] = (loop_sum(plus, h, steps) - loop_sum(minus, h, steps)) / (2 * eps)
    np.testing.assert_allclose(dW, numeric, rtol=1e-6, atol=1e-9)


def loop_sum(W, h, steps):
    total = 0.0
    for _ in range(steps):
        h = np.tanh(W @ h)
        total = total + np.sum(h)
    return total


# -- the list adjoints' helpers (runtime/list_changes.py): in place only where nothing else holds
# the adjoint. Programs cpsgrad accepts give them unshared adjoints (transforms/analysis/lists.py
# refuses a changed list another name or container sees), so these call them as generated code
# does, `xs_d = helper(xs_d, ...)`, once with the adjoint held only by that variable and once
# with a second holder, which must never see the change.


def test_truncated_adjoint_cuts_in_place_only_an_unshared_list_adjoint():
    from cpsgrad.runtime.list_changes import ListAdjoint, truncated_adjoint

    xs_d = ListAdjoint([1.0, 2.0, 3.0])
    identity = id(xs_d)
    xs_d = truncated_adjoint(xs_d, 2)
    assert id(xs_d) == identity and xs_d == [1.0, 2.0]
    xs_d = ListAdjoint([1.0, 2.0, 3.0])
    other = xs_d
    xs_d = truncated_adjoint(xs_d, 2)
    assert xs_d == [1.0, 2.0] and other == [1.0, 2.0, 3.0] and xs_d is not other


def test_reinserted_adjoint_inserts_in_place_only_into_an_unshared_list_adjoint():
    from cpsgrad.runtime.list_changes import ListAdjoint, reinserted_adjoint

    xs_d = ListAdjoint([1.0, 3.0])
    identity = id(xs_d)
    xs_d = reinserted_adjoint(xs_d, (1, "popped"))
    assert id(xs_d) == identity and xs_d == [1.0, 0.0, 3.0]
    xs_d = ListAdjoint([1.0, 3.0])
    other = xs_d
    xs_d = reinserted_adjoint(xs_d, (1, "popped"))
    assert xs_d == [1.0, 0.0, 3.0] and other == [1.0, 3.0] and xs_d is not other


def test_accumulate_index_adds_into_an_unshared_list_adjoint_in_place_and_never_a_shared_one():
    from cpsgrad.runtime.accumulation import accumulate_index
    from cpsgrad.runtime.list_changes import ListAdjoint

    container = [np.zeros(2), np.zeros(2)]
    xs_d = ListAdjoint([np.ones(2), 0.0])
    identity = id(xs_d)
    xs_d = accumulate_index(xs_d, container, 1, np.full(2, 5.0))
    assert id(xs_d) == identity
    np.testing.assert_array_equal(xs_d[1], [5.0, 5.0])
    xs_d = ListAdjoint([np.ones(2), 0.0])
    other = xs_d
    xs_d = accumulate_index(xs_d, container, 0, np.full(2, 5.0))
    np.testing.assert_array_equal(xs_d[0], [6.0, 6.0])
    np.testing.assert_array_equal(other[0], [1.0, 1.0])
    assert other[1] == 0.0 and xs_d is not other
