"""conv2d, pooling, batch_norm, dropout and recurrent cells against naive numpy references."""

import numpy as np
import pytest
from kernel_checks import check_op
from numpy.testing import assert_allclose, assert_array_equal

from cpsgrad.kernels import dispatch, nn

RNG = np.random.default_rng(7)


def naive_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    sh, sw = (stride, stride) if np.ndim(stride) == 0 else stride
    ph, pw = (padding, padding) if np.ndim(padding) == 0 else padding
    dh, dw = (dilation, dilation) if np.ndim(dilation) == 0 else dilation
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, height, width = x.shape
    f, cg, kh, kw = w.shape
    oh = (height - dh * (kh - 1) - 1) // sh + 1
    ow = (width - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, f, oh, ow))
    for image in range(n):
        for filt in range(f):
            group = filt // (f // groups)
            for i in range(oh):
                for j in range(ow):
                    patch = x[image, group * cg:(group + 1) * cg,
                              i * sh:i * sh + dh * (kh - 1) + 1:dh, j * sw:j * sw + dw * (kw - 1) + 1:dw]
                    y[image, filt, i, j] = np.sum(patch * w[filt]) + (0 if b is None else b[filt])
    return y


CONV_CASES = [
    ((1, 1, 5, 5), (2, 1, 3, 3), True, {}),
    ((2, 2, 6, 5), (2, 2, 2, 3), False, {"stride": (2, 1), "padding": 1}),
    ((1, 4, 5, 5), (4, 2, 2, 2), True, {"groups": 2, "dilation": 2, "padding": (1, 0)}),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "bias", "params"), CONV_CASES)
def test_conv2d(x_shape, w_shape, bias, params):
    args = [RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)]
    args.append(RNG.standard_normal(w_shape[0]) if bias else None)
    check_op("conv2d", args, params, naive_conv2d, atol=1e-5)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "params", "message"),
    [
        ((1, 3, 5, 5), (2, 2, 3, 3), {}, "do not fit groups"),
        ((1, 1, 2, 2), (1, 1, 3, 3), {}, "does not fit input"),
        ((1, 5, 5), (1, 1, 3, 3), {}, r"expected x \(N, C, H, W\)"),
        ((1, 1, 5, 5), (1, 1, 3, 3), {"stride": 0}, "must be positive"),
    ],
)
def test_conv2d_bad_shapes(x_shape, w_shape, params, message):
    with pytest.raises(ValueError, match=f"conv2d: .*{message}"):
        nn.conv2d(np.zeros(x_shape), np.zeros(w_shape), **params)


def naive_pool(x, kernel_size, stride=None, padding=0, reduce=np.max, fill=-np.inf):
    stride = stride or kernel_size
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)), constant_values=fill)
    oh = (x.shape[2] - kernel_size) // stride + 1
    ow = (x.shape[3] - kernel_size) // stride + 1
    y = np.empty(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            window = x[:, :, i * stride:i * stride + kernel_size, j * stride:j * stride + kernel_size]
            y[:, :, i, j] = reduce(window, axis=(2, 3))
    return y


@pytest.mark.parametrize("params", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}])
def test_pooling(params):
    x = RNG.permutation(np.arange(2 * 2 * 5 * 6) / 10.0).reshape(2, 2, 5, 6)
    check_op("max_pool2d", [x], params, naive_pool)
    check_op("avg_pool2d", [x], params, lambda x, **p: naive_pool(x, **p, reduce=np.mean, fill=0.0))
    check_op("global_avg_pool2d", [x], {}, lambda x: x.mean(axis=(2, 3)))


def test_max_pool_propagates_nan_and_rejects_big_padding():
    x = np.zeros((1, 1, 2, 2))
    x[0, 0, 1, 0] = np.nan
    assert np.isnan(nn.max_pool2d(x, 2)).all()
    with pytest.raises(ValueError, match="max_pool2d: .*padding"):
        nn.max_pool2d(x, 2, padding=2)


def naive_batch_norm(x, gamma, beta, mean, var, training=True, momentum=0.1, eps=1e-5):
    axes = (0,) if x.ndim == 2 else (0, 2, 3)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        count = x.size // x.shape[1]
        batch_mean, batch_var = x.mean(axis=axes), x.var(axis=axes)
        new_mean = (1 - momentum) * mean + momentum * batch_mean
        new_var = (1 - momentum) * var + momentum * batch_var * count / (count - 1)
    else:
        batch_mean, batch_var, new_mean, new_var = mean, var, mean, var
    y = (x - batch_mean.reshape(shape)) / np.sqrt(batch_var.reshape(shape) + eps)
    return y * gamma.reshape(shape) + beta.reshape(shape), new_mean, new_var


@pytest.mark.parametrize("x_shape", [(4, 3), (2, 3, 2, 2)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(x_shape, training):
    args = [RNG.standard_normal(x_shape), RNG.standard_normal(3), RNG.standard_normal(3),
            RNG.standard_normal(3), RNG.random(3) + 0.5]
    check_op("batch_norm", args, {"training": training}, naive_batch_norm, wrt=[0, 1, 2], output=0, atol=1e-5)


def test_dropout_is_seeded_and_reuses_its_mask():
    x = np.ones((50, 40))
    kernel = dispatch("dropout", x)
    y, saved = kernel.forward(x, rate=0.25, seed=3)
    assert_array_equal(y, kernel.forward(x, rate=0.25, seed=3)[0])
    assert set(np.unique(y)) == {0.0, 4 / 3} and abs((y == 0).mean() - 0.25) < 0.05
    (grad,) = kernel.backward(np.full(x.shape, 2.0), saved)
    assert_array_equal(grad, 2 * y)
    assert_array_equal(nn.dropout(x, 0.5, training=False), x)
    with pytest.raises(ValueError, match="dropout: rate"):
        nn.dropout(x, 1.0)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def naive_lstm(x, h, c, w_ih, w_hh, b):
    i, f, g, o = np.split(x @ w_ih.T + h @ w_hh.T + b, 4, axis=1)
    c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c_new), c_new


def naive_gru(x, h, w_ih, w_hh, b_ih, b_hh):
    xr, xz, xn = np.split(x @ w_ih.T + b_ih, 3, axis=1)
    hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * h


def test_lstm_cell():
    batch, inputs, hidden = 2, 3, 4
    args = [RNG.standard_normal((batch, inputs)), RNG.standard_normal((batch, hidden)),
            RNG.standard_normal((batch, hidden)), RNG.standard_normal((4 * hidden, inputs)),
            RNG.standard_normal((4 * hidden, hidden)), RNG.standard_normal(4 * hidden)]
    check_op("lstm_cell", args, {}, naive_lstm, atol=1e-5)


def test_gru_cell():
    batch, inputs, hidden = 2, 3, 4
    args = [RNG.standard_normal((batch, inputs)), RNG.standard_normal((batch, hidden)),
            RNG.standard_normal((3 * hidden, inputs)), RNG.standard_normal((3 * hidden, hidden)),
            RNG.standard_normal(3 * hidden), RNG.standard_normal(3 * hidden)]
    check_op("gru_cell", args, {}, naive_gru, atol=1e-5)


def test_recurrent_cells_reject_mismatched_weights():
    with pytest.raises(ValueError, match=r"lstm_cell: expected .*\(8, 3\)"):
        nn.lstm_cell(np.zeros((1, 3)), np.zeros((1, 2)), np.zeros((1, 2)),
                     np.zeros((8, 3)), np.zeros((8, 3)), np.zeros(8))


def test_functional_wrappers_return_forward_outputs():
    x = RNG.standard_normal((2, 3))
    assert_allclose(nn.relu(x), np.maximum(x, 0))
    assert_allclose(nn.sigmoid(x), sigmoid(x))
    assert_allclose(nn.softplus(x), np.log1p(np.exp(x)))
    assert_allclose(nn.leaky_relu(x, 0.1), np.where(x >= 0, x, 0.1 * x))
    assert_allclose(nn.hardtanh(3 * x), np.clip(3 * x, -1, 1))
    assert_allclose(nn.softmax(x), np.exp(nn.log_softmax(x)))
    assert_allclose(nn.logsumexp(x, axis=1), np.log(np.exp(x).sum(axis=1)))
    assert_allclose(nn.embedding(x, np.array([1, 1])), x[[1, 1]])
    assert_allclose(nn.global_avg_pool2d(x[None, :, :, None]), x.mean(axis=1)[None, :])
    assert_allclose(nn.avg_pool2d(x[None, None], 1), x[None, None])


@pytest.mark.parametrize("kernel, stride", [(2, 2), (3, 1), (2, 3), (3, 2)])
def test_unpadded_max_pool_kernels_equal_the_general_ones(kernel, stride):
    """Without padding max_pool2d runs kernels with no bounds tests: the same maxima, NaNs and
    arg-max (ties and NaNs included, overlapping and skipping windows) as the general kernels."""
    from cpsgrad.kernels.cpu import pooling

    rng = np.random.default_rng(kernel * 10 + stride)
    for dtype in (np.float32, np.float64):
        x = rng.integers(-3, 3, (2, 3, 7, 8)).astype(dtype)  # many ties
        x[0, 1, 2, 3] = x[1, 2, 5, 0] = np.nan
        layout, out = pooling._windows("max_pool2d", x, kernel, stride, 0)
        general, fast = np.empty((2, 3, *out), dtype), np.empty((2, 3, *out), dtype)
        pooling._max_pool(x, *layout, general)
        pooling._max_pool_unpadded(x, *layout[:4], fast)
        assert_array_equal(fast, general)
        grad = rng.standard_normal(general.shape).astype(dtype)
        general_x, fast_x = np.zeros_like(x), np.zeros_like(x)
        pooling._max_pool_grad(grad, x, general, *layout, general_x)
        pooling._max_pool_grad_unpadded(grad, x, general, *layout[:4], fast_x)
        assert_array_equal(fast_x, general_x)
        y, saved = pooling.max_pool2d_forward(x, kernel, stride)
        assert_array_equal(y, general)
        assert_array_equal(pooling.max_pool2d_backward(grad, saved)[0], general_x)
