"""CTC loss (connectionist temporal classification) on the CPU and on CUDA, in one module.

For batch element ``n`` with ``T_n`` input steps and target ``l`` of length ``L``, the extended
target is ``l' = (blank, l_1, blank, l_2, ..., l_L, blank)`` of width ``W = 2L + 1``. In log
space, with ``lp = log_probs[:, n, :]``:

* ``alpha[t, s] = lp[t, l'_s] + log(exp alpha[t-1, s] + exp alpha[t-1, s-1] + exp alpha[t-1, s-2])``,
  the last term only where ``l'_s`` is a label differing from ``l'_{s-2}``; ``alpha[0, 0] =
  lp[0, blank]``, ``alpha[0, 1] = lp[0, l_1]``;
* the loss is ``-log(exp alpha[T_n-1, W-1] + exp alpha[T_n-1, W-2])`` (``+inf`` when no alignment
  fits: ``T_n`` too short for the target and its repeats);
* ``beta`` is the same recursion run backwards from ``t = T_n - 1``, each cell including its own
  emission, so ``alpha[t, s] + beta[t, s] - lp[t, l'_s]`` is the log-probability of the paths
  through ``(t, s)``;
* the derivative of the loss with respect to ``lp[t, c]`` (``t < T_n``) is minus the posterior
  occupancy of ``c`` at ``t``: ``-exp(log(sum over s with l'_s = c of exp(alpha[t, s] + beta[t, s]))
  + loss - lp[t, c])``; zero for ``t >= T_n``. This is the derivative with respect to the
  log-probabilities as given. (PyTorch's ``ctc_loss`` backward adds ``exp(lp[t, c])`` to it, the
  term that vanishes when ``lp`` is a ``log_softmax`` output; through a ``log_softmax`` both give
  the same gradient of the logits.)

The scalar formulas below are plain Python, compiled for the CPU (``numba.njit``, inlined) and for
CUDA (device functions); the CPU loops run the batch in parallel (``prange``) on large problems
(``PARALLEL_CELLS``), the CUDA kernels run one block a batch element (threads over ``s``, one
barrier a step) for alpha and beta and one thread an element of the gradient. Recursions and
residuals are float64 for either input dtype.

Targets are padded ``(N, S)`` or concatenated 1-D (``sum(target_lengths)`` long); both become a
flat int64 array and one offset an element, checked on the host (lengths, labels in ``[0, C)`` and
not the blank). They, and the lengths, may be numpy arrays, sequences or (for CUDA) device arrays.
"""

import functools
import math
import sys

import numpy as np
from numba import njit, prange

from cpsgrad.kernels.cpu.jit import inline
from cpsgrad.kernels.formulas import compile_each

OP = "ctc_loss"
PARALLEL_CELLS = 200_000
"""The CPU loops run the batch in parallel (``prange``, one element a thread) from this many alpha
cells (N x T x W) and with two elements or more; below, serially: waking numba's threads costs
more than the recursion there (a 6 x 2 x 7 problem took 48 ms in parallel against 23 us serially,
on 2 cores shared with other work)."""
REDUCTIONS = ("none", "sum", "mean")

# ---- formulas (both devices) -------------------------------------------------------------------


def log_add(a, b):
    """``log(exp(a) + exp(b))`` without overflow; ``-inf`` is its identity."""
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


def label(targets, offset, s, blank):
    """Symbol ``s`` of the extended target: the blank at even ``s``, label ``s // 2`` at odd."""
    if s % 2 == 0:
        return blank
    return targets[offset + s // 2]


def skips_back(targets, offset, s):
    """Whether a path may move from ``s - 2`` to ``s`` (over a blank, between two different labels)."""
    return s % 2 == 1 and s >= 2 and targets[offset + s // 2] != targets[offset + s // 2 - 1]


def skips_forward(targets, offset, s, width):
    """Whether a path may move from ``s`` to ``s + 2``."""
    return s % 2 == 1 and s + 2 < width and targets[offset + s // 2] != targets[offset + s // 2 + 1]


def alpha_start(log_probs, n, s, targets, offset, blank, width):
    """``alpha[0, s]``: a path starts at the first blank or the first label."""
    if s == 0:
        return float(log_probs[0, n, blank])
    if s == 1 and width > 1:
        return float(log_probs[0, n, targets[offset]])
    return -math.inf


def beta_start(log_probs, n, last, s, targets, offset, blank, width):
    """``beta[last, s]``: a path ends at the last label or the last blank."""
    if s >= width - 2:
        return float(log_probs[last, n, label(targets, offset, s, blank)])
    return -math.inf


def alpha_cell(alpha, n, t, s, skip):
    """The log-probability of the paths into ``(t, s)`` from step ``t - 1`` (before emitting)."""
    total = alpha[n, t - 1, s]
    if s >= 1:
        total = log_add(total, alpha[n, t - 1, s - 1])
    if skip:
        total = log_add(total, alpha[n, t - 1, s - 2])
    return total


def beta_cell(beta, n, t, s, width, skip):
    """The log-probability of the paths out of ``(t, s)`` to step ``t + 1`` and on to the end."""
    total = beta[n, t + 1, s]
    if s + 1 < width:
        total = log_add(total, beta[n, t + 1, s + 1])
    if skip:
        total = log_add(total, beta[n, t + 1, s + 2])
    return total


def negative_log_likelihood(alpha, n, last, width):
    """The loss of element ``n`` from the last alpha row (``last = T_n - 1``)."""
    total = alpha[n, last, width - 1]
    if width > 1:
        total = log_add(total, alpha[n, last, width - 2])
    return -total


def empty_input_loss(width):
    """The loss of an element with no input steps: 0 for an empty target, else impossible."""
    return 0.0 if width == 1 else math.inf


def loss_value(nll, length, mean, zero_infinity):
    """What element ``n`` contributes to the reduced loss (divided by its target length for
    "mean", as PyTorch does; zero for an impossible alignment under ``zero_infinity``)."""
    if zero_infinity and nll == math.inf:
        return 0.0
    if mean:
        return nll / max(length, 1)
    return nll


def adjoint_scale(g, nll, length, mean, batch, zero_infinity):
    """The factor of element ``n``'s gradient: its loss adjoint ``g`` (divided as "mean" divides);
    0 for an impossible alignment under ``zero_infinity``, nan without it (the loss is inf)."""
    if nll == math.inf:
        return 0.0 if zero_infinity else math.nan
    if mean:
        return g / (max(length, 1) * batch)
    return g


def adjoint_cell(log_occupancy, nll, log_prob, scale):
    """The adjoint of one log-probability: ``-scale * exp(log_occupancy + nll - log_prob)``; 0
    where no path passes (also where ``log_prob`` is ``-inf``), nan for a nan ``scale``."""
    if scale == 0.0 or log_occupancy == -math.inf:
        return 0.0 * scale
    return -math.exp(log_occupancy + nll - log_prob) * scale


FORMULAS = (
    "log_add label skips_back skips_forward alpha_start beta_start alpha_cell beta_cell negative_log_likelihood "
    "empty_input_loss loss_value adjoint_scale adjoint_cell"
).split()

# ---- host side: checking and flattening the targets --------------------------------------------


def _host_integers(name, value, host):
    array = np.asarray(host(value))
    if array.dtype.kind not in "iu" and not (array.size == 0 and array.dtype.kind == "f"):
        raise TypeError(f"{OP}: {name} must be integers, got {array.dtype}")
    return array.astype(np.int64)


def _prepare(shape, targets, input_lengths, target_lengths, blank, reduction, host):
    """The checked problem: ``(batched, targets_flat, offsets, input_lengths, target_lengths)``."""
    if len(shape) not in (2, 3):
        raise ValueError(f"{OP}: log_probs must be (T, N, C) or unbatched (T, C), got shape {shape}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"{OP}: reduction must be one of {REDUCTIONS}, got {reduction!r}")
    steps, classes = shape[0], shape[-1]
    batched = len(shape) == 3
    batch = shape[1] if batched else 1
    if not 0 <= blank < classes:
        raise ValueError(f"{OP}: blank must lie in [0, {classes}), got {blank}")
    targets = _host_integers("targets", targets, host)
    inputs = _host_integers("input_lengths", input_lengths, host).reshape(-1)
    lengths = _host_integers("target_lengths", target_lengths, host).reshape(-1)
    for name, array in (("input_lengths", inputs), ("target_lengths", lengths)):
        if array.shape != (batch,):
            raise ValueError(f"{OP}: {name} must have one entry per batch element ({batch}), got {array.size}")
        if array.size and array.min() < 0:
            raise ValueError(f"{OP}: {name} must be non-negative, got {array.min()}")
    if inputs.size and inputs.max() > steps:
        raise ValueError(f"{OP}: input_lengths must be at most T = {steps}, got {inputs.max()}")
    if (targets.ndim == 2 and batched and targets.shape[0] == batch) or (targets.ndim == 1 and not batched):
        padded = targets.reshape(batch, -1)
        if lengths.size and lengths.max() > padded.shape[1]:
            raise ValueError(f"{OP}: target_lengths must be at most the padded width {padded.shape[1]}")
        flat, offsets = padded.reshape(-1), np.arange(batch, dtype=np.int64) * padded.shape[1]
    elif targets.ndim == 1:
        if targets.size != lengths.sum():
            raise ValueError(
                f"{OP}: concatenated targets must have sum(target_lengths) = {lengths.sum()} labels, "
                f"got {targets.size}"
            )
        flat, offsets = targets, np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    else:
        raise ValueError(f"{OP}: targets must be (N, S) padded or 1-D concatenated, got shape {targets.shape}")
    used = np.concatenate([flat[o : o + n] for o, n in zip(offsets, lengths, strict=True)] + [flat[:0]])
    if used.size and (used.min() < 0 or used.max() >= classes or (used == blank).any()):
        raise ValueError(f"{OP}: target labels must lie in [0, {classes}) and differ from the blank {blank}")
    return batched, np.ascontiguousarray(flat), offsets, inputs, lengths


# ---- CPU loops (compiled below, beside the formulas they call) ---------------------------------


def cpu_alpha(log_probs, targets, offsets, input_lengths, target_lengths, blank, mean, zero_infinity, alpha, nll,
              losses):
    for n in prange(log_probs.shape[1]):
        steps, width, offset = input_lengths[n], 2 * target_lengths[n] + 1, offsets[n]
        if steps == 0:
            nll[n] = empty_input_loss(width)
        else:
            for s in range(width):
                alpha[n, 0, s] = alpha_start(log_probs, n, s, targets, offset, blank, width)
            for t in range(1, steps):
                for s in range(width):
                    emit = log_probs[t, n, label(targets, offset, s, blank)]
                    alpha[n, t, s] = emit + alpha_cell(alpha, n, t, s, skips_back(targets, offset, s))
            nll[n] = negative_log_likelihood(alpha, n, steps - 1, width)
        losses[n] = loss_value(nll[n], target_lengths[n], mean, zero_infinity)


def cpu_gradient(log_probs, targets, offsets, input_lengths, target_lengths, blank, mean, zero_infinity, alpha, nll,
                 g, beta, out):
    batch, classes = log_probs.shape[1], log_probs.shape[2]
    for n in prange(batch):
        steps, width, offset = input_lengths[n], 2 * target_lengths[n] + 1, offsets[n]
        out[:, n, :] = 0.0
        if steps == 0:
            continue
        g_n = g[n] if g.size > 1 else g[0]
        scale = adjoint_scale(g_n, nll[n], target_lengths[n], mean, batch, zero_infinity)
        last = steps - 1
        for s in range(width):
            beta[n, last, s] = beta_start(log_probs, n, last, s, targets, offset, blank, width)
        for t in range(last - 1, -1, -1):
            for s in range(width):
                emit = log_probs[t, n, label(targets, offset, s, blank)]
                beta[n, t, s] = emit + beta_cell(beta, n, t, s, width, skips_forward(targets, offset, s, width))
        occupancy = np.empty(classes)  # log-sums over the s of each class, at one t
        for t in range(steps):
            occupancy[:] = -np.inf
            for s in range(width):
                c = label(targets, offset, s, blank)
                occupancy[c] = log_add(occupancy[c], alpha[n, t, s] + beta[n, t, s])
            for c in range(classes):
                out[t, n, c] = adjoint_cell(occupancy[c], nll[n], log_probs[t, n, c], scale)


# ---- CUDA kernels (compiled by cuda_kernels, below) ---------------------------------------------

# `cuda` in the kernels is numba.cuda, bound when cuda_kernels builds them: importing numba.cuda
# takes seconds, which the CPU path does not pay.
cuda = None


def cuda_alpha(log_probs, targets, offsets, input_lengths, target_lengths, blank, mean, zero_infinity, alpha, nll,
               losses):
    """One block a batch element, threads over the extended target, a barrier a step."""
    for n in range(cuda.blockIdx.x, log_probs.shape[1], cuda.gridDim.x):
        steps, width, offset = input_lengths[n], 2 * target_lengths[n] + 1, offsets[n]
        if steps > 0:
            for s in range(cuda.threadIdx.x, width, cuda.blockDim.x):
                alpha[n, 0, s] = alpha_start(log_probs, n, s, targets, offset, blank, width)
            cuda.syncthreads()
            for t in range(1, steps):
                for s in range(cuda.threadIdx.x, width, cuda.blockDim.x):
                    emit = log_probs[t, n, label(targets, offset, s, blank)]
                    alpha[n, t, s] = emit + alpha_cell(alpha, n, t, s, skips_back(targets, offset, s))
                cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            if steps > 0:
                nll[n] = negative_log_likelihood(alpha, n, steps - 1, width)
            else:
                nll[n] = empty_input_loss(width)
            losses[n] = loss_value(nll[n], target_lengths[n], mean, zero_infinity)


def cuda_beta(log_probs, targets, offsets, input_lengths, target_lengths, blank, mean, zero_infinity, beta):
    """The beta recursion, laid out as ``cuda_alpha``."""
    for n in range(cuda.blockIdx.x, log_probs.shape[1], cuda.gridDim.x):
        steps, width, offset = input_lengths[n], 2 * target_lengths[n] + 1, offsets[n]
        if steps > 0:
            last = steps - 1
            for s in range(cuda.threadIdx.x, width, cuda.blockDim.x):
                beta[n, last, s] = beta_start(log_probs, n, last, s, targets, offset, blank, width)
            cuda.syncthreads()
            for t in range(last - 1, -1, -1):
                for s in range(cuda.threadIdx.x, width, cuda.blockDim.x):
                    emit = log_probs[t, n, label(targets, offset, s, blank)]
                    beta[n, t, s] = emit + beta_cell(beta, n, t, s, width, skips_forward(targets, offset, s, width))
                cuda.syncthreads()


def cuda_gradient(log_probs, targets, offsets, input_lengths, target_lengths, blank, mean, zero_infinity, alpha, nll,
                  g, beta, out):
    """One thread an element of the adjoint, summing the occupancy of its class over ``s``."""
    steps_all, batch, classes = log_probs.shape[0], log_probs.shape[1], log_probs.shape[2]
    for i in range(cuda.grid(1), steps_all * batch * classes, cuda.gridsize(1)):
        t, n, c = i // (batch * classes), (i // classes) % batch, i % classes
        value = 0.0
        if t < input_lengths[n]:
            width, offset, length = 2 * target_lengths[n] + 1, offsets[n], target_lengths[n]
            g_n = g[n] if g.size > 1 else g[0]
            scale = adjoint_scale(g_n, nll[n], length, mean, batch, zero_infinity)
            occupancy = -math.inf
            for s in range(0 if c == blank else 1, width, 2):
                if c == blank or targets[offset + s // 2] == c:
                    occupancy = log_add(occupancy, alpha[n, t, s] + beta[n, t, s])
            value = adjoint_cell(occupancy, nll[n], log_probs[t, n, c], scale)
        out[t, n, c] = value


_PROBLEM = "{f}[:, :, ::1], int64[::1], int64[::1], int64[::1], int64[::1], int64, boolean, boolean, "
_RECURSION = _PROBLEM + "float64[:, :, ::1], float64[::1]"
CUDA_SIGNATURES = {
    "cuda_alpha": f"void({_RECURSION}, {{f}}[::1])",
    "cuda_beta": f"void({_PROBLEM}float64[:, :, ::1])",
    "cuda_gradient": f"void({_RECURSION}, {{f}}[::1], float64[:, :, ::1], {{f}}[:, :, ::1])",
}

_MODULE = sys.modules[__name__]


def _loop(**options):
    """numba's decorator for a CPU loop; the loop's name tells the serial and parallel builds
    apart in numba's disk cache (which keys on the name, not on the options)."""

    def decorate(function):
        function.__qualname__ += "_parallel" if options.get("parallel") else "_serial"
        return njit(nogil=True, cache=True, error_model="numpy", **options)(function)

    return decorate


def _cpu_loops(**options):
    loops = dict.fromkeys(("cpu_alpha", "cpu_gradient"), _loop(**options))
    return compile_each(_MODULE, {**dict.fromkeys(FORMULAS, inline), **loops})


_SERIAL, _PARALLEL = _cpu_loops(), _cpu_loops(parallel=True)


def _cpu(alpha):
    batch, steps, width = alpha.shape
    return _PARALLEL if batch > 1 and batch * steps * width >= PARALLEL_CELLS else _SERIAL


@functools.cache
def cuda_kernels():
    """The CUDA kernels by name, built on first use and recorded for the PTX check (numba
    compiles them for the argument types at their first launch)."""
    from numba import cuda as numba_cuda

    from cpsgrad.kernels.cuda.jit import device, kernel

    decorators = {**dict.fromkeys(FORMULAS, device), **{k: kernel(v) for k, v in CUDA_SIGNATURES.items()}}
    return compile_each(_MODULE, decorators, {"cuda": numba_cuda})


def _reduce_host(losses, reduction, dtype):
    if reduction == "none":
        return losses.astype(dtype)
    total = losses.sum() / (losses.size if reduction == "mean" else 1)
    return np.asarray(total, dtype)


def cpu_forward(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The loss (reduced as ``reduction`` says) and the residuals: alpha, the losses, the problem."""
    batched, flat, offsets, inputs, lengths = _prepare(
        log_probs.shape, targets, input_lengths, target_lengths, blank, reduction, np.asarray
    )
    lp = np.ascontiguousarray(log_probs if batched else log_probs[:, None, :])
    width = 2 * int(lengths.max(initial=0)) + 1
    alpha = np.full((lp.shape[1], lp.shape[0], width), -np.inf)
    nll, losses = np.empty(lp.shape[1]), np.empty(lp.shape[1])
    mean = reduction == "mean"
    _cpu(alpha).cpu_alpha(lp, flat, offsets, inputs, lengths, blank, mean, zero_infinity, alpha, nll, losses)
    loss = _reduce_host(losses, reduction, lp.dtype)
    loss = loss if batched or reduction != "none" else loss.reshape(())
    return loss, (lp, batched, (flat, offsets, inputs, lengths, blank, mean, zero_infinity), alpha, nll, loss.shape)


def cpu_backward(grad, saved):
    """The adjoint of ``log_probs`` (targets and lengths get none)."""
    lp, batched, problem, alpha, nll, shape = saved
    g = np.asarray(grad, np.float64)
    if g.shape != shape:
        raise ValueError(f"{OP}: adjoint shape {g.shape} does not match output {shape}")
    out = np.empty_like(lp)
    beta = np.full_like(alpha, -np.inf)
    _cpu(alpha).cpu_gradient(lp, *problem, alpha, nll, np.ascontiguousarray(g.reshape(-1)), beta, out)
    return (out if batched else out[:, 0, :],)


# ---- CUDA host side ----------------------------------------------------------------------------


def _to_host(value):
    return value.copy_to_host() if hasattr(value, "copy_to_host") else value


def cuda_forward(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """``cpu_forward`` on the device: ``log_probs`` a C-contiguous device array (the targets and
    lengths are checked on the host and copied over, a few small transfers)."""
    from numba import cuda

    from cpsgrad.kernels.cuda.arrays import contiguous, empty, full
    from cpsgrad.kernels.cuda.jit import launch_rows
    from cpsgrad.kernels.cuda.rows import SUM, reduce_rows

    shape = tuple(log_probs.shape)
    batched, *problem = _prepare(shape, targets, input_lengths, target_lengths, blank, reduction, _to_host)
    lp = contiguous(OP, log_probs)
    lp = lp if batched else lp.reshape((shape[0], 1, shape[1]))
    batch = lp.shape[1]
    width = 2 * int(problem[3].max(initial=0)) + 1
    flat, offsets, inputs, lengths = (cuda.to_device(a) for a in problem)
    problem = (flat, offsets, inputs, lengths, blank, reduction == "mean", zero_infinity)
    alpha = full((batch, lp.shape[0], width), np.float64, -np.inf)
    nll, losses = empty((batch,), np.float64), empty((batch,), lp.dtype)
    launch_rows(cuda_kernels().cuda_alpha, batch, lp, *problem, alpha, nll, losses)
    if reduction == "none":
        loss = losses if batched else losses.reshape(())
    else:
        loss = reduce_rows(losses.reshape((1, batch)), SUM, 1.0 / batch if reduction == "mean" else 1.0).reshape(())
    return loss, (lp, batched, problem, alpha, nll, tuple(loss.shape))


def cuda_backward(grad, saved):
    """``cpu_backward`` on the device."""
    from cpsgrad.kernels.cuda.arrays import adjoint, empty, full
    from cpsgrad.kernels.cuda.jit import launch, launch_rows

    kernels = cuda_kernels()
    lp, batched, problem, alpha, nll, shape = saved
    g = adjoint(OP, grad, shape, lp.dtype)
    g = g.reshape((max(g.size, 1),))
    beta = full(alpha.shape, np.float64, -np.inf)
    launch_rows(kernels.cuda_beta, lp.shape[1], lp, *problem, beta)
    out = empty(lp.shape, lp.dtype)
    launch(kernels.cuda_gradient, out.size, lp, *problem, alpha, nll, g, beta, out)
    return (out if batched else out.reshape((lp.shape[0], lp.shape[2])),)
