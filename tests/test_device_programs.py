"""Whole differentiated programs on the device: `cpsgrad.DeviceArray` in, DeviceArray gradients out.

Each program runs twice, on numpy arrays and on the same values moved with `cpsgrad.to_device`;
the gradients must be DeviceArrays of each argument's shape and dtype and equal the host ones.
Under the CUDA simulator (tests/conftest.py) a simulated thread costs about 100 us, so inputs are
tiny and launches small (32-thread blocks, 8-thread rows, 4 x 4 matmul tiles).
"""

import numpy as np
import pytest

import cpsgrad
from cpsgrad import nn
from cpsgrad.kernels import DeviceArray, cuda_available

if cuda_available() is None:
    pytest.skip("no CUDA device and NUMBA_ENABLE_CUDASIM is not set", allow_module_level=True)

TOLERANCE = {np.float64: 1e-10, np.float32: 1e-4}


@pytest.fixture(autouse=True)
def small_launches(monkeypatch):
    from cpsgrad.kernels.cuda import jit

    for name, value in (("THREADS", 32), ("ROW_THREADS", 8), ("TILE", 4)):
        monkeypatch.setattr(jit, name, value)


def normal(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape)


def on_device(values):
    return [cpsgrad.to_device(v) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v for v in values]


def check_program(function, args, argnums, dtype=np.float64, device_args=None):
    """Value and gradients on the device equal those on the host; gradients are DeviceArrays."""
    host = [a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args]
    device = on_device(host) if device_args is None else device_args(host)
    value, gradients = cpsgrad.value_and_grad(function, argnums)(*device)
    expected_value, expected = cpsgrad.value_and_grad(function, argnums)(*host)
    rtol = TOLERANCE[dtype]
    assert isinstance(value, DeviceArray) and value.shape == () and value.dtype == dtype
    np.testing.assert_allclose(float(value), float(expected_value), rtol=rtol)
    for position, gradient, wanted in zip(argnums, gradients, expected, strict=True):
        assert type(gradient) is DeviceArray, (position, type(gradient))
        assert gradient.shape == wanted.shape and gradient.dtype == wanted.dtype == dtype, position
        np.testing.assert_allclose(cpsgrad.to_host(gradient), wanted, rtol=rtol, atol=rtol * 1e-2,
                                   err_msg=str(position))
    return gradients


# ---- programs --------------------------------------------------------------------------------------


def mlp_squares(x, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    y = h @ w2 + b2
    return np.sum(y * y)


def mlp_cross_entropy(x, w1, b1, w2, b2, labels):
    logits = np.tanh(x @ w1 + b1) @ w2 + b2
    return nn.softmax_cross_entropy(logits, labels)


def rnn(w, u, b, xs, h):
    for t in range(len(xs)):
        h = np.tanh(w @ h + u @ xs[t] + b)
    return np.sum(h**2)


def broadcast_reductions(x, w, s):
    z = x * w - w.mean(axis=0, keepdims=True) + s
    rows = z.sum(axis=1)
    scaled = z / (1.0 + np.abs(s))
    return np.max(rows) + np.mean(np.exp(scaled), axis=(0, 1)) + (z.T @ z).sum() - np.min(z, axis=0).sum()


def elementwise_mix(x, y):
    a = np.maximum(x, y) + np.minimum(x, 0.5) * np.sqrt(y * y + 1.0)
    b = np.where(x > 0, np.log1p(x * x), -x) + np.clip(y, -0.3, 0.3)
    c = np.sin(a) * np.cos(b) + np.square(a - b) / (2.0 - np.exp(-np.abs(x))) - 3.0 ** (y * 0.1)
    total = np.sum(c[1:] ** 2) + np.sum(x[:, 0]) - np.mean(y.reshape(-1)[[0, 2, 2]])
    for row in x:  # iterating an array: its adjoint is one adjoint a row
        total = total + np.sum(row * y[0])
    return total


def softmax_written_out(y, w):  # one backward for the group of statements (transforms/fusion.py)
    z = y @ w
    p = np.exp(z - np.max(z, axis=1, keepdims=True))
    p = p / np.sum(p, axis=1, keepdims=True)
    q = np.exp(z - np.max(z))
    q = q / np.sum(q)
    return -np.sum(np.log(p[:, 0])) + np.sum(q * q)


def char_rnn(Wxh, Whh, Why, bh, by, inputs, targets, h):
    """min-char-rnn's loss (benchmarks/rnn.py): a column read, the softmax and its picked log
    fused into one backward."""
    loss = 0.0
    for t in range(len(inputs)):
        h = np.tanh(Wxh[:, inputs[t]] + Whh @ h + bh)
        y = Why @ h + by
        p = np.exp(y - np.max(y))
        p = p / np.sum(p)
        loss = loss - np.log(p[targets[t]])
    return loss


def subtree(tree, W, U, b):
    """(h, loss) of a nested tuple (label, word vector) or (label, left, right): recursion, the
    parameters' adjoints lent down the calls (runtime.loans.lend)."""
    if len(tree) == 2:
        label, x = tree
        h = np.tanh(W @ x + b)
        below = 0.0
    else:
        label, left, right = tree
        left_h, left_loss = subtree(left, W, U, b)
        right_h, right_loss = subtree(right, W, U, b)
        h = np.tanh(U @ np.concatenate((left_h, right_h)) + b)
        below = left_loss + right_loss
    m = np.max(h)
    return h, below + m + np.log(np.sum(np.exp(h - m))) - h[label]


def tree_loss(W, U, b, tree):
    _, loss = subtree(tree, W, U, b)
    return loss


def layers(x, params):
    for w, b in params:
        x = np.tanh(np.dot(x, w) + b)
    return np.sum(np.concatenate([x, np.stack([x[:, 0], x[:, 1]], axis=1)], axis=1) ** 2)


# ---- values and gradients against the host -----------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mlp_with_sum_of_squares(dtype):
    args = (normal(4, 3), normal(3, 5), normal(5), normal(5, 2), normal(2))
    check_program(mlp_squares, args, (0, 1, 2, 3, 4), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mlp_with_softmax_cross_entropy(dtype):
    labels = np.array([0, 2, 1, 2])

    def device_args(host):
        return [*on_device(host[:5]), cpsgrad.to_device(labels)]

    args = (normal(4, 3), normal(3, 5), normal(5), normal(5, 3), normal(3), labels)
    check_program(mlp_cross_entropy, args, (1, 2, 3, 4), dtype, device_args)


def test_rnn_loop():
    args = (normal(4, 4) / 2, normal(4, 3), normal(4), normal(3, 3), np.zeros(4))
    check_program(rnn, args, (0, 1, 2, 3, 4))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_broadcasting_and_reductions_with_axes(dtype):
    check_program(broadcast_reductions, (normal(3, 4), normal(1, 4), normal(3, 1)), (0, 1, 2), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_elementwise_ops_selection_and_indexing(dtype):
    check_program(elementwise_mix, (normal(3, 3), normal(3, 3, seed=1)), (0, 1), dtype)


def test_min_char_rnn_with_its_fused_log_likelihood():
    args = (normal(3, 4) / 4, normal(3, 3) / 4, normal(4, 3) / 4, normal(3), normal(4), [1, 3], [3, 0],
            np.tanh(normal(3)))
    check_program(char_rnn, args, (0, 1, 2, 3, 4))


def test_a_recursion_over_a_tree():
    tree = (1, (0, normal(2)), (2, normal(2, seed=1)))

    def device_args(host):
        def moved(node):
            if len(node) == 2:
                return node[0], cpsgrad.to_device(node[1])
            return node[0], moved(node[1]), moved(node[2])

        return [*on_device(host[:3]), moved(tree)]

    check_program(tree_loss, (normal(3, 2) / 2, normal(3, 6) / 2, normal(3), tree), (0, 1, 2), np.float64, device_args)


def test_softmax_written_out_in_numpy():
    check_program(softmax_written_out, (normal(3, 4), normal(4, 4)), (0, 1))


def test_a_list_of_layers_with_dot_concatenate_and_stack():
    params = [(normal(3, 4), normal(4)), (normal(4, 2), normal(2))]

    def device_args(host):
        return [cpsgrad.to_device(host[0]), [tuple(map(cpsgrad.to_device, pair)) for pair in params]]

    x = normal(2, 3)
    (gradient,) = cpsgrad.grad(layers, (1,))(*device_args([x]))
    (expected,) = cpsgrad.grad(layers, (1,))(x, params)
    for (device_w, device_b), (w, b) in zip(gradient, expected, strict=True):
        for got, wanted in ((device_w, w), (device_b, b)):
            assert type(got) is DeviceArray and got.shape == wanted.shape
            np.testing.assert_allclose(cpsgrad.to_host(got), wanted, rtol=1e-10)


def activations(params, x):
    h = nn.relu(x @ params["w"] + params["b"])
    h = nn.sigmoid(h) + nn.leaky_relu(h - 0.5) + nn.softplus(h) * nn.hardtanh(h)
    return np.mean(nn.log_softmax(h, axis=1)) + nn.logsumexp(h, axis=0).sum() + x.item(4) * np.sum(nn.softmax(h))


def test_nn_activations_with_a_dict_of_parameters():
    params, x = {"w": normal(3, 4), "b": normal(4)}, normal(2, 3)
    gradient = cpsgrad.grad(activations, (0, 1))({k: cpsgrad.to_device(v) for k, v in params.items()},
                                                 cpsgrad.to_device(x))
    expected = cpsgrad.grad(activations, (0, 1))(params, x)
    for got, wanted in (
        (gradient[0]["w"], expected[0]["w"]),
        (gradient[0]["b"], expected[0]["b"]),
        (gradient[1], expected[1]),
    ):
        assert type(got) is DeviceArray and got.shape == wanted.shape
        np.testing.assert_allclose(cpsgrad.to_host(got), wanted, rtol=1e-10)


def test_an_argument_without_contribution_gets_device_zeros():
    def only_x(x, y):
        return np.sum(x * x)

    gradient_x, gradient_y = cpsgrad.grad(only_x, (0, 1))(*on_device([normal(3), normal(2, 2).astype(np.float32)]))
    assert type(gradient_y) is DeviceArray and gradient_y.shape == (2, 2) and gradient_y.dtype == np.float32
    np.testing.assert_array_equal(cpsgrad.to_host(gradient_y), np.zeros((2, 2), np.float32))
    np.testing.assert_allclose(cpsgrad.to_host(gradient_x), 2 * normal(3))


# ---- wiring: the CUDA kernels ran, no CPU kernel did, nothing came back to the host -----------------


def test_the_program_runs_on_the_cuda_kernels_only(monkeypatch):
    from cpsgrad.kernels import Kernel, lookup, table

    def fail(*args, **params):
        raise AssertionError("a CPU kernel ran in a device program")

    ran = []

    def counted(kernel):
        def forward(*args, **params):
            ran.append(kernel.op)
            return kernel.forward(*args, **params)

        return Kernel(kernel.op, kernel.device, forward, kernel.backward, kernel.dtypes)

    monkeypatch.setattr(table, "_fast", {})
    for op, devices in table._table.items():  # other tests may have registered ops on one device
        if "cpu" in devices:
            monkeypatch.setattr(devices["cpu"], "kernel", Kernel(op, "cpu", fail, fail, devices["cpu"].dtypes))
        if "cuda" in devices:
            monkeypatch.setattr(devices["cuda"], "kernel", counted(lookup(op, "cuda")))
    args = on_device([normal(4, 3), normal(3, 5), normal(5), normal(5, 2), normal(2)])

    def no_host_copy(self, *args, **kwargs):
        raise AssertionError("a device array was copied to the host")

    monkeypatch.setattr(type(args[0].raw), "copy_to_host", no_host_copy)
    value, gradients = cpsgrad.value_and_grad(mlp_squares, (1, 2, 3, 4))(*args)
    monkeypatch.undo()
    assert {"matmul", "add", "tanh", "mul", "sum"} <= set(ran)
    assert all(type(g) is DeviceArray for g in (value, *gradients))


# ---- errors --------------------------------------------------------------------------------------


def test_a_host_array_mixed_in_names_the_op_and_to_device():
    x, w = cpsgrad.to_device(normal(2, 3)), normal(3, 2)
    with pytest.raises(TypeError,
                       match=r"matmul: a numpy \(host\) array mixed with a DeviceArray; .*cpsgrad\.to_device"):
        cpsgrad.grad(lambda x, w: np.sum(x @ w))(x, w)
    with pytest.raises(TypeError, match=r"numpy\.multiply: a numpy \(host\) array .*to_device"):
        normal(2, 3) * x
    with pytest.raises(TypeError, match=r"add: .*to_device"):
        x + normal(3)


def test_an_unsupported_numpy_function_names_it_and_to_host():
    x = cpsgrad.to_device(normal(4))
    with pytest.raises(TypeError, match=r"numpy\.sort is not supported on a DeviceArray .*cpsgrad\.to_host"):
        np.sort(x)
    with pytest.raises(TypeError, match=r"numpy\.arctan is not supported on a DeviceArray .*cpsgrad\.to_host"):
        cpsgrad.grad(lambda x: np.sum(np.arctan(x)))(x)
    with pytest.raises(TypeError, match=r"numpy cannot read a DeviceArray .*cpsgrad\.to_host"):
        np.asarray(x)
    with pytest.raises(TypeError, match="truth value"):
        bool(x[0] > 0)


def test_a_non_scalar_result_is_refused():
    with pytest.raises(cpsgrad.NonScalarOutputError, match=r"a DeviceArray of shape \(4,\)"):
        cpsgrad.grad(lambda x: x * 2.0)(cpsgrad.to_device(normal(4)))


# ---- DeviceArray itself ----------------------------------------------------------------------------


def test_to_device_and_to_host_round_trip():
    for value in (normal(2, 3), np.array(2.5, np.float32), np.arange(4)):
        moved = cpsgrad.to_device(value)
        assert type(moved) is DeviceArray and moved.shape == value.shape and moved.dtype == value.dtype
        assert moved.ndim == value.ndim and moved.size == value.size
        back = cpsgrad.to_host(moved)
        assert isinstance(back, np.ndarray) and back.dtype == value.dtype
        np.testing.assert_array_equal(back, value)
        assert cpsgrad.to_device(moved) is moved and cpsgrad.to_host(value) is value
    raw = cpsgrad.kernels.to_device(normal(3))
    assert type(raw) is not DeviceArray and cpsgrad.to_device(raw).raw is raw
    assert float(cpsgrad.to_device(np.array(1.5))) == 1.5 and len(cpsgrad.to_device(normal(5, 2))) == 5


X, Y = normal(3, 4), normal(1, 4, seed=5)
CASES = {
    "operators": lambda np, x, y: ((x + y) * 2.0 - y / 3.0) ** 2 + (-x) @ y.T,
    "reflected": lambda np, x, y: 1.0 - 2.0 / (3.0 + abs(x)) + 0.5 * y,
    "ufuncs": lambda np, x, y: np.tanh(np.exp(x)) + np.log(np.square(x) + 1.0) - np.negative(np.minimum(x, y)),
    "reductions": lambda np, x, y: np.concatenate(
        [x.sum(axis=0), np.mean(x, axis=1), x.max(axis=(0, 1), keepdims=True).reshape(1), np.min(x, axis=-1)]
    ),
    "shapes": lambda np, x, y: (
        np.transpose(np.expand_dims(x, 0), (2, 0, 1)).reshape(4, -1) + np.swapaxes(x, 0, 1)[:, None, 1]
    ),
    "selection": lambda np, x, y: np.where(x > y, x, y) + np.clip(x, -0.5, None) + (x == x.max()),
    "indexing": lambda np, x, y: x[1] + x[-1, ::2].sum() + x[[2, 0, 2]][..., 1:3].sum(axis=1, keepdims=True).T[0, 1],
    "products": lambda np, x, y: np.outer(x[0], y) @ np.dot(x.T, x[:, :1]) + np.stack([y[0], y[0] * 2]).sum(),
    "likes": lambda np, x, y: np.zeros_like(x) + np.ones_like(y) * 2.0 + np.full_like(x, 3.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_device_array_operations_match_numpy(name):
    import numpy

    expected = CASES[name](numpy, X, Y)
    result = CASES[name](numpy, cpsgrad.to_device(X), cpsgrad.to_device(Y))
    assert type(result) is DeviceArray and result.shape == expected.shape
    np.testing.assert_allclose(cpsgrad.to_host(result), expected, rtol=1e-12)


def test_float32_stays_float32_and_mixed_floats_promote():
    x32 = cpsgrad.to_device(X.astype(np.float32))
    assert (x32 * 2.0 + np.float64(1.0)).dtype == np.float32
    assert (x32 + cpsgrad.to_device(X)).dtype == np.float64
    assert x32.astype(np.float64).dtype == np.float64
    assert np.where(x32 > 0, x32, 0.5).dtype == np.float32  # a number takes the array choice's dtype
    both = np.where(x32 > 0, 1.5, -2.0)  # two numbers: float64, as numpy
    assert both.dtype == np.float64
    np.testing.assert_array_equal(cpsgrad.to_host(both), np.where(X > 0, 1.5, -2.0))
