"""Helpers in a second module, called from tests/corpus/call_programs.py.

Module-level user functions over floats and numpy arrays: cells of recurrent networks (one
returning a tuple), a log-softmax, a helper that raises on bad input, an int-valued helper.
The programs call them by plain name (`from ... import lstm_cell`) and through the module
(`call_helpers.log_softmax(...)`).
"""

import math

import numpy as np

LEAK = 0.1


def sigmoid(z):
    """The logistic function, elementwise on an array or on a float."""
    return 1.0 / (1.0 + np.exp(-z))


def softplus(v):
    return math.log(1.0 + math.exp(v))


def log_softmax(logits):
    shifted = logits - np.max(logits)
    return shifted - np.log(np.sum(np.exp(shifted)))


def rnn_step(Wxh, Whh, b, x, h):
    """One step of a vanilla RNN: the new hidden state."""
    return np.tanh(Wxh @ x + Whh @ h + b)


def lstm_cell(W, U, bias, x, h, c):
    """One LSTM step: the new hidden state and the new cell state, as a tuple."""
    n = h.shape[0]
    z = W @ x + U @ h + bias
    gates = sigmoid(z[: 3 * n])
    candidate = np.tanh(z[3 * n :])
    c = gates[:n] * c + gates[n : 2 * n] * candidate
    h = gates[2 * n :] * np.tanh(c)
    return h, c


def checked_log(v):
    """`math.log`, raising a ValueError of its own on a value that is not positive."""
    if v <= 0.0:
        raise ValueError(f"checked_log needs a positive value, not {v!r}")
    return math.log(v)


def count_positive(values):
    """How many elements are positive: an int, whatever the values' gradients."""
    count = 0
    for value in values:
        if value > 0.0:
            count = count + 1
    return count


def leaky(v):
    """A leaky relu on a float (a kink at 0)."""
    if v > 0.0:
        return v
    return LEAK * v
