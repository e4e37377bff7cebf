"""cpsgrad.nn.ctc_loss: values and derivative against an enumeration of every alignment, finite
differences and torch.nn.functional.ctc_loss (when installed), on the CPU kernel, the CUDA kernels
(under the simulator here, or a GPU) and compiled to PTX.

The derivative is the true one with respect to the log-probabilities given; torch's backward adds
``exp(log_probs)`` (for ``t < input_length``), which cancels through a log_softmax, so against torch
the comparison removes that term, and through a log_softmax the gradients of the logits agree as
they are.
"""

import inspect
import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose

import cpsgrad
from cpsgrad import nn
from cpsgrad.kernels import cuda_available, dispatch, to_device, to_host

try:
    import torch
except ImportError:  # the comparisons with torch skip; the others do not need it
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (pip install torch)")

# ---- references -------------------------------------------------------------------------------


def enumerated_loss(log_probs, target, steps, blank):
    """-log of the summed probability of every path of ``steps`` symbols that collapses (repeats
    merged, blanks dropped) to ``target``: the definition, by brute force."""
    total = 0.0
    for path in itertools.product(range(log_probs.shape[-1]), repeat=steps):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(target):
            total += np.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def normalised(rng, shape):
    x = rng.standard_normal(shape)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def loss_and_gradient(log_probs, targets, input_lengths, target_lengths, adjoint=None, **params):
    kernel = dispatch("ctc_loss", log_probs)
    loss, saved = kernel.forward(log_probs, targets, input_lengths, target_lengths, **params)
    adjoint = np.ones(np.shape(loss)) if adjoint is None else adjoint
    return loss, kernel.backward(adjoint, saved)[0]


def finite_differences(function, x, eps=1e-6):
    out = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        out[index] = (function(x + step) - function(x - step)) / (2 * eps)
    return out


# ---- cases ------------------------------------------------------------------------------------

# (name, T, C, targets (padded rows), input_lengths, target_lengths, blank)
CASES = [
    ("distinct labels", 6, 4, [[1, 2, 3], [3, 1, 0]], [6, 5], [3, 2], 0),
    ("repeated labels", 7, 3, [[1, 1, 2], [2, 2, 2]], [7, 7], [3, 3], 0),
    ("empty target", 5, 3, [[1, 2], [0, 0]], [5, 3], [2, 0], 0),
    ("minimal length", 5, 4, [[1, 1, 2], [3, 3, 3]], [4, 5], [3, 3], 0),
    ("impossible", 4, 3, [[1, 1, 1], [2, 2, 1]], [4, 3], [3, 3], 0),
    ("blank last", 6, 4, [[0, 1, 2], [2, 2, 0]], [6, 6], [3, 2], 3),
    ("blank inside", 5, 4, [[0, 3, 0], [3, 3, 3]], [5, 4], [3, 1], 1),
    ("no input steps", 4, 3, [[1, 2], [1, 2]], [0, 4], [0, 2], 0),
]
IDS = [case[0] for case in CASES]


def arrays(case, seed=0, normalise=True):
    _, steps, classes, targets, inputs, lengths, blank = case
    rng = np.random.default_rng(seed)
    shape = (steps, len(targets), classes)
    log_probs = normalised(rng, shape) if normalise else rng.standard_normal(shape) - 1.0
    return log_probs, np.array(targets), np.array(inputs), np.array(lengths), blank


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_loss_is_minus_the_log_of_its_alignments_summed(case):
    log_probs, targets, inputs, lengths, blank = arrays(case)
    loss, _ = loss_and_gradient(log_probs, targets, inputs, lengths, blank=blank, reduction="none")
    expected = [
        enumerated_loss(log_probs[:, n], targets[n, :length], inputs[n], blank) for n, length in enumerate(lengths)
    ]
    assert_allclose(loss, expected, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "impossible"], ids=lambda c: c[0])
def test_the_derivative_equals_finite_differences(case, reduction):
    # not normalised: the derivative is the loss's, whatever produced the log-probabilities
    log_probs, targets, inputs, lengths, blank = arrays(case, seed=1, normalise=False)
    weights = np.random.default_rng(2).standard_normal(len(inputs)) if reduction == "none" else 0.7

    def weighted(x):
        loss, _ = loss_and_gradient(x, targets, inputs, lengths, blank=blank, reduction=reduction)
        return float(np.sum(weights * loss))

    _, gradient = loss_and_gradient(log_probs, targets, inputs, lengths, np.asarray(weights * 1.0), blank=blank,
                                    reduction=reduction)
    assert_allclose(gradient, finite_differences(weighted, log_probs), atol=1e-8)
    steps = np.arange(log_probs.shape[0])[:, None] >= inputs[None, :]
    assert np.all(gradient[steps] == 0)  # nothing past an element's input length


def test_impossible_alignments_cost_inf_with_nan_gradients_unless_zeroed():
    log_probs, targets, inputs, lengths, _ = arrays(CASES[4])  # 1 1 1 needs 5 steps, 2 2 1 needs 4
    loss, gradient = loss_and_gradient(log_probs, targets, inputs, lengths, reduction="none")
    assert np.all(loss == np.inf)
    assert np.isnan(gradient[:4, 0]).all() and np.isnan(gradient[:3, 1]).all() and np.all(gradient[3:, 1] == 0)
    one_possible = np.array([4, 4])
    loss, gradient = loss_and_gradient(log_probs, targets, one_possible, lengths, reduction="none")
    zeroed, zeroed_gradient = loss_and_gradient(
        log_probs, targets, one_possible, lengths, reduction="none", zero_infinity=True
    )
    assert loss[0] == np.inf and np.isfinite(loss[1])
    assert zeroed[0] == 0 and zeroed[1] == loss[1]
    assert np.all(zeroed_gradient[:, 0] == 0) and np.array_equal(zeroed_gradient[:, 1], gradient[:, 1])
    assert np.any(gradient[:, 1] != 0)


def test_concatenated_targets_equal_padded_ones_and_unbatched_input_works():
    log_probs, targets, inputs, lengths, blank = arrays(CASES[0])
    flat = np.concatenate([row[:n] for row, n in zip(targets, lengths, strict=True)])
    padded = loss_and_gradient(log_probs, targets, inputs, lengths, reduction="none")
    concatenated = loss_and_gradient(log_probs, flat, list(inputs), tuple(lengths), reduction="none")
    for a, b in zip(padded, concatenated, strict=True):
        assert_allclose(a, b, rtol=0)
    loss, gradient = loss_and_gradient(log_probs[:, 1], targets[1], inputs[1], lengths[1], reduction="none")
    assert loss.shape == () and gradient.shape == log_probs[:, 1].shape
    assert_allclose(loss, padded[0][1], rtol=0)
    assert_allclose(gradient, padded[1][:, 1], rtol=0)


def test_float32_stays_float32_and_agrees_with_float64():
    log_probs, targets, inputs, lengths, blank = arrays(CASES[1])
    loss64, gradient64 = loss_and_gradient(log_probs, targets, inputs, lengths)
    loss32, gradient32 = loss_and_gradient(log_probs.astype(np.float32), targets, inputs, lengths)
    assert loss32.dtype == gradient32.dtype == np.float32 and loss32.shape == ()
    assert_allclose(loss32, loss64, rtol=1e-5)
    assert_allclose(gradient32, gradient64, atol=1e-6)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reduction": "average"}, "reduction must be one of"),
        ({"blank": 4}, r"blank must lie in \[0, 4\)"),
        ({"targets": [[1, 2, 0], [3, 1, 0]], "target_lengths": [3, 2]}, r"\[0, 4\) and differ from the blank 0"),
        ({"targets": [[1, 2, 4], [3, 1, 0]]}, r"target labels must lie in \[0, 4\)"),
        ({"input_lengths": [7, 5]}, "at most T = 6"),
        ({"input_lengths": [6, -1]}, "non-negative"),
        ({"target_lengths": [4, 2]}, "at most the padded width 3"),
        ({"target_lengths": [3]}, r"one entry per batch element \(2\)"),
        ({"targets": [1, 2, 3, 3]}, r"sum\(target_lengths\) = 5"),
        ({"input_lengths": [6.0, 5.0]}, "input_lengths must be integers"),
    ],
)
def test_bad_arguments_raise_naming_the_op(change, message):
    log_probs, targets, inputs, lengths, _ = arrays(CASES[0])
    args = {"targets": targets, "input_lengths": inputs, "target_lengths": lengths, **change}
    with pytest.raises((ValueError, TypeError), match=f"ctc_loss: .*{message}"):
        nn.ctc_loss(log_probs, **args)


# ---- inside differentiated programs -----------------------------------------------------------


def test_a_program_with_log_softmax_then_ctc_loss_matches_finite_differences():
    rng = np.random.default_rng(3)
    logits, w = rng.standard_normal((7, 3, 5)), rng.standard_normal((5, 4))
    targets, inputs, lengths = np.array([[1, 2, 2], [3, 0, 0], [1, 3, 1]]), [7, 6, 5], [3, 1, 3]

    def loss(logits, w):
        return nn.ctc_loss(nn.log_softmax(np.tanh(logits @ w), axis=-1), targets, inputs, lengths)

    grad_logits, grad_w = cpsgrad.grad(loss, (0, 1))(logits, w)
    assert_allclose(grad_logits, finite_differences(lambda x: loss(x, w), logits), atol=1e-8)
    assert_allclose(grad_w, finite_differences(lambda x: loss(logits, x), w), atol=1e-8)


def test_an_unused_loss_gives_no_gradient():
    log_probs, targets, inputs, lengths, _ = arrays(CASES[0])

    def either(x, use_ctc):
        loss = nn.ctc_loss(x, targets, inputs, lengths)
        return loss if use_ctc else np.sum(x)

    assert np.all(cpsgrad.grad(either)(log_probs, False) == 1)
    assert_allclose(cpsgrad.grad(either)(log_probs, True), loss_and_gradient(log_probs, targets, inputs, lengths)[1])


# ---- against torch ----------------------------------------------------------------------------


def torch_loss_and_gradient(log_probs, targets, inputs, lengths, **params):
    x = torch.tensor(log_probs, requires_grad=True)
    loss = torch.nn.functional.ctc_loss(x, torch.tensor(targets), torch.tensor(inputs), torch.tensor(lengths),
                                        **params)
    (gradient,) = torch.autograd.grad(loss.sum(), x)
    return loss.detach().numpy(), gradient.numpy()


@needs_torch
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_torch_loss_and_gradient_less_its_exp_term(case, reduction, zero_infinity):
    log_probs, targets, inputs, lengths, blank = arrays(case, seed=4)
    params = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
    loss, gradient = loss_and_gradient(log_probs, targets, inputs, lengths, **params)
    expected, torch_gradient = torch_loss_and_gradient(log_probs, targets, inputs, lengths, **params)
    assert_allclose(loss, expected, rtol=1e-12)
    # torch's backward is ours plus exp(log_probs) times each element's loss adjoint, for t < T_n
    infinite = np.isinf(
        torch_loss_and_gradient(log_probs, targets, inputs, lengths, blank=blank, reduction="none")[0]
    )
    scale = np.ones(len(inputs)) / ((np.maximum(lengths, 1) * len(inputs)) if reduction == "mean" else 1)
    scale = np.where(infinite & zero_infinity, 0.0, scale)
    live = np.arange(log_probs.shape[0])[:, None] < inputs[None, :]
    assert_allclose(gradient, torch_gradient - np.exp(log_probs) * (scale * live)[:, :, None], atol=1e-12)


@needs_torch
def test_through_log_softmax_the_logits_gradient_equals_torch():
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((30, 4, 8))
    targets = rng.integers(1, 8, (4, 10))
    inputs, lengths = np.array([30, 25, 28, 12]), np.array([10, 7, 9, 4])

    def loss(x):
        return nn.ctc_loss(nn.log_softmax(x, axis=-1), targets, inputs, lengths)

    x = torch.tensor(logits, requires_grad=True)
    expected = torch.nn.functional.ctc_loss(x.log_softmax(-1), torch.tensor(targets), torch.tensor(inputs),
                                            torch.tensor(lengths))
    expected.backward()
    value, gradient = cpsgrad.value_and_grad(loss)(logits)
    assert_allclose(value, expected.item(), rtol=1e-12)
    assert_allclose(gradient, x.grad.numpy(), atol=1e-12)


@needs_torch
def test_float32_against_torch_on_a_longer_batch():
    rng = np.random.default_rng(6)
    log_probs = normalised(rng, (50, 6, 12)).astype(np.float32)
    targets, inputs = rng.integers(1, 12, (6, 15)), rng.integers(30, 51, 6)
    lengths = rng.integers(0, 16, 6)
    loss, gradient = loss_and_gradient(log_probs, targets, inputs, lengths, reduction="sum")
    expected, torch_gradient = torch_loss_and_gradient(log_probs, targets, inputs, lengths, reduction="sum")
    live = np.arange(50)[:, None, None] < inputs[None, :, None]
    assert_allclose(loss, expected, rtol=1e-5)  # torch computes in float32, the kernel in float64
    assert_allclose(gradient, torch_gradient - np.exp(log_probs) * live, atol=1e-4)


# ---- CUDA: simulator (or GPU) and PTX ---------------------------------------------------------

needs_cuda = pytest.mark.skipif(cuda_available() is None, reason="no CUDA device and NUMBA_ENABLE_CUDASIM is not set")


@pytest.fixture
def small_launches(monkeypatch):
    """Small blocks, so the tiny cases still run several threads a block and several blocks."""
    from cpsgrad.kernels.cuda import jit

    monkeypatch.setattr(jit, "THREADS", 32)
    monkeypatch.setattr(jit, "ROW_THREADS", 4)


@needs_cuda
@pytest.mark.parametrize(
    ("case", "reduction", "zero_infinity", "dtype"),
    [
        (CASES[1], "none", False, np.float64),  # repeated labels
        (CASES[2], "mean", False, np.float32),  # an empty target
        (CASES[4], "sum", True, np.float64),  # impossible alignments, zeroed
        (CASES[6], "mean", False, np.float64),  # blank not 0
        (CASES[7], "none", False, np.float64),  # no input steps
    ],
    ids=["repeats", "empty-float32", "impossible", "blank-1", "no-steps"],
)
def test_cuda_kernels_match_the_cpu_kernel(small_launches, case, reduction, zero_infinity, dtype):
    log_probs, targets, inputs, lengths, blank = arrays(case, seed=7)
    log_probs = log_probs.astype(dtype)
    params = {"blank": blank, "reduction": reduction, "zero_infinity": zero_infinity}
    loss, gradient = loss_and_gradient(log_probs, targets, inputs, lengths, **params)
    kernel = dispatch("ctc_loss", to_device(log_probs))
    assert kernel.device == "cuda"
    device_targets = to_device(targets) if reduction == "none" else targets  # host or device integers
    device_loss, saved = kernel.forward(to_device(log_probs), device_targets, inputs, lengths, **params)
    adjoint = np.random.default_rng(8).standard_normal(np.shape(loss)).astype(dtype)
    (device_gradient,) = kernel.backward(to_device(adjoint), saved)
    _, expected_gradient = loss_and_gradient(log_probs, targets, inputs, lengths, adjoint, **params)
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    assert device_loss.dtype == device_gradient.dtype == dtype and device_loss.shape == np.shape(loss)
    assert_allclose(to_host(device_loss), loss, rtol=tolerance)
    assert_allclose(to_host(device_gradient), expected_gradient, rtol=tolerance, atol=tolerance)


@needs_cuda
def test_a_device_program_gives_the_host_gradient(small_launches):
    rng = np.random.default_rng(9)
    logits = rng.standard_normal((6, 2, 4))
    targets, inputs, lengths = np.array([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2]

    def loss(x):
        return nn.ctc_loss(nn.log_softmax(x, axis=-1), targets, inputs, lengths)

    value, gradient = cpsgrad.value_and_grad(loss)(logits)
    device_value, device_gradient = cpsgrad.value_and_grad(loss)(cpsgrad.to_device(logits))
    assert type(device_gradient) is cpsgrad.DeviceArray
    assert_allclose(cpsgrad.to_host(device_value), value, rtol=1e-12)
    assert_allclose(cpsgrad.to_host(device_gradient), gradient, atol=1e-12)


def test_the_ptx_check_compiles_the_cuda_kernels():
    """tests/kernels/test_cuda_ptx.py compiles every recorded kernel for sm_90 (in a subprocess,
    about 20 s); this checks that ctc_loss's kernels are among those it records."""
    from cpsgrad.kernels.cuda.jit import KERNELS
    from cpsgrad.kernels.cuda.ptx import compile_all
    from cpsgrad.kernels.standalone import ctc_loss, names

    assert "ctc_loss" in names() and "standalone.names()" in inspect.getsource(compile_all)
    ctc_loss.cuda_kernels()
    recorded = {function.__name__ for function, _ in KERNELS if function.__module__ == ctc_loss.__name__}
    assert recorded == {"cuda_alpha", "cuda_beta", "cuda_gradient"}


@pytest.mark.slow  # compiling the parallel loops takes 10-35 s on 2 cores (cached on disk after)
def test_large_batches_run_in_parallel_with_the_serial_results(monkeypatch):
    from cpsgrad.kernels.standalone import ctc_loss

    log_probs, targets, inputs, lengths, _ = arrays(CASES[0])
    serial = loss_and_gradient(log_probs, targets, inputs, lengths, reduction="none")
    monkeypatch.setattr(ctc_loss, "PARALLEL_CELLS", 2 * 6 * 7)
    assert ctc_loss._cpu(np.empty((2, 6, 7))) is ctc_loss._PARALLEL
    assert ctc_loss._cpu(np.empty((2, 6, 6))) is ctc_loss._cpu(np.empty((1, 90, 7))) is ctc_loss._SERIAL
    parallel = loss_and_gradient(log_probs, targets, inputs, lengths, reduction="none")
    assert ctc_loss._PARALLEL.cpu_alpha.signatures and ctc_loss._PARALLEL.cpu_gradient.signatures
    for a, b in zip(serial, parallel, strict=True):
        assert_allclose(a, b, rtol=0)
