"""Row formulas of softmax, log_softmax and softmax cross-entropy, shared by the CPU loops (a
row at a time) and the CUDA kernels (a block a row, sums by block reductions).

A row is shifted by its maximum (by 0 when the maximum is not finite, so an all -inf row gives
nan as numpy does rather than a spurious number); ``total`` is the sum of ``exp(x - shift)``.
"""

import math


def stable_shift(top):
    """The shift of a row whose maximum is ``top``."""
    return top if math.isfinite(top) else 0.0


def log_normalizer(shift, total):
    """``log(sum(exp(x)))`` of the row: log_softmax is ``x`` minus it."""
    return shift + math.log(total)


def probability(x, shift, total):
    """One softmax output."""
    return math.exp(x - shift) / total


def adjoint_part(g, y, log):
    """One term of the row sum the softmax adjoint subtracts (``g * y``; ``g`` for log_softmax)."""
    return g if log else g * y


def adjoint(g, y, total, log):
    """One input adjoint from the output ``y``, its adjoint ``g`` and the row's ``total`` of
    ``adjoint_part``."""
    if log:
        return g - math.exp(y) * total
    return y * (g - total)


def cross_entropy_loss(shift, total, picked):
    """One row's negative log-likelihood; ``picked`` is the labelled logit."""
    return log_normalizer(shift, total) - picked


def cross_entropy_adjoint(p, share, is_label):
    """One logit's adjoint: its probability times the row's ``share`` of the loss adjoint, less
    the share at the label."""
    return p * share - (share if is_label else 0.0)
