"""batch_norm's arithmetic, shared by the CPU kernel (which applies these to whole numpy arrays,
where they broadcast) and the CUDA kernel (a block a channel, applied to numbers): so both are
plain arithmetic of their arguments, nothing that works on only one of the two."""


def normalize(x, mean, inv_std):
    return (x - mean) * inv_std


def scale_shift(normalized, gamma, beta):
    return normalized * gamma + beta


def running_statistic(running, batch, momentum):
    """The running mean or variance moved by ``momentum`` towards the batch's."""
    return (1 - momentum) * running + momentum * batch


def unbiased(var, count):
    """The unbiased variance of ``count`` values from their biased one (PyTorch's running var)."""
    return var * (count / (count - 1))


def training_input_adjoint(g, normalized, scale, sum_g, sum_gn, count):
    """The adjoint of one input in training mode (the batch statistics depend on it too):
    ``scale`` is ``gamma * inv_std``, ``sum_g`` and ``sum_gn`` the channel's sums of ``g`` and
    ``g * normalized``."""
    return scale * (g - sum_g / count - normalized * (sum_gn / count))
