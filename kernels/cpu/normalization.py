"""batch_norm (training with running statistics, and eval) and seeded dropout.

Both are a handful of whole-array numpy passes (reductions over batch and spatial axes, one
mask), so they stay in numpy; batch_norm's arithmetic is ``cpsgrad.kernels.formulas.normalization``'s,
applied to whole arrays here and to numbers in the CUDA kernel.
"""

import numpy as np

from cpsgrad.kernels.formulas import normalization as formulas


def _channel_axes(op, x, *per_channel):
    if x.ndim not in (2, 4):
        raise ValueError(f"{op}: expected x (N, C) or (N, C, H, W), got {x.shape}")
    for array in per_channel:
        if np.shape(array) != (x.shape[1],):
            raise ValueError(f"{op}: per-channel shape {np.shape(array)} does not match x {x.shape}")
    return (0,) if x.ndim == 2 else (0, 2, 3)


def batch_norm_forward(
    x, gamma, beta, running_mean, running_var, training=True, momentum=0.1, eps=1e-5
):
    """Returns ``((y, new_running_mean, new_running_var), saved)``.

    Training normalises with the batch statistics (biased variance) and moves the running
    statistics by ``momentum`` towards them (unbiased variance, as PyTorch does); eval uses the
    running statistics and leaves them unchanged. The backward takes the adjoint of ``y`` only.
    """
    normalized, new_mean, new_var, saved = batch_norm_normalized(
        x, gamma, beta, running_mean, running_var, training, momentum, eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = formulas.scale_shift(normalized, gamma.reshape(shape), beta.reshape(shape))
    return (y, new_mean, new_var), saved


def batch_norm_statistics(x, running_mean, running_var, momentum=0.1):
    """The running statistics after a training step on ``x``, as ``batch_norm_forward`` moves
    them (the same arithmetic), without normalising ``x``."""
    axes = _channel_axes("batch_norm", x, running_mean, running_var)
    _, _, new_mean, new_var = _statistics(x, axes, running_mean, running_var, momentum)
    return new_mean.astype(x.dtype, copy=False), new_var.astype(x.dtype, copy=False)


def _statistics(x, axes, running_mean, running_var, momentum):
    count = x.size // x.shape[1]
    if count < 2:
        raise ValueError(f"batch_norm: training needs more than one value a channel, got {x.shape}")
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    new_mean = formulas.running_statistic(running_mean, mean, momentum)
    new_var = formulas.running_statistic(running_var, formulas.unbiased(var, count), momentum)
    return mean, var, new_mean, new_var


def batch_norm_normalized(x, gamma, beta, running_mean, running_var, training=True, momentum=0.1, eps=1e-5):
    """``batch_norm_forward`` less its last scale and shift: ``(normalized, new_running_mean,
    new_running_var, saved)``; what the backward needs (a rule's backward builds it again)."""
    axes = _channel_axes("batch_norm", x, gamma, beta, running_mean, running_var)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var, new_mean, new_var = _statistics(x, axes, running_mean, running_var, momentum)
    else:
        mean, var = running_mean, running_var
        new_mean, new_var = running_mean, running_var
    inv_std = 1 / np.sqrt(var + eps)
    normalized = formulas.normalize(x, mean.reshape(shape), inv_std.reshape(shape))
    new_mean, new_var = new_mean.astype(x.dtype, copy=False), new_var.astype(x.dtype, copy=False)
    return normalized, new_mean, new_var, (normalized, gamma, inv_std, axes, training)


def batch_norm_backward(grad, saved):
    """Adjoints ``(x, gamma, beta)`` from the adjoint of ``y``."""
    normalized, gamma, inv_std, axes, training = saved
    shape = (1, -1) + (1,) * (normalized.ndim - 2)
    grad_gamma = (grad * normalized).sum(axis=axes)
    grad_beta = grad.sum(axis=axes)
    scale = (gamma * inv_std).reshape(shape)
    if training:
        count = normalized.size // normalized.shape[1]
        grad_x = formulas.training_input_adjoint(
            grad, normalized, scale, grad_beta.reshape(shape), grad_gamma.reshape(shape), count
        )
    else:
        grad_x = grad * scale
    return grad_x.astype(normalized.dtype, copy=False), grad_gamma, grad_beta


def dropout_forward(x, rate=0.5, seed=0, training=True):
    """Zero each element with probability ``rate`` and scale the rest by ``1 / (1 - rate)``.

    The mask comes from ``numpy.random.default_rng(seed)``, so a seed reproduces it; the
    backward reuses the saved mask.
    """
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must lie in [0, 1), got {rate}")
    if not training or rate == 0:
        return x, (None,)
    keep = np.random.default_rng(seed).random(x.shape) >= rate
    mask = keep * x.dtype.type(1 / (1 - rate))
    return x * mask, (mask,)


def dropout_backward(grad, saved):
    (mask,) = saved
    return (grad if mask is None else grad * mask,)
