"""LSTM and GRU gate math of one (batch row, hidden unit) element, shared by the CPU loops and
the CUDA kernels (PyTorch's gate order: LSTM i, f, g, o; GRU r, z, n).

The arguments are gate pre-activations (the CPU passes the summed BLAS products and bias, the
CUDA kernels add theirs first); the results are what each device stores.
"""

import math


def logistic(v):
    """The sigmoid, without overflow for either sign of ``v``."""
    if v >= 0:
        return 1 / (1 + math.exp(-v))
    e = math.exp(v)
    return e / (1 + e)


def lstm_state(i_pre, f_pre, g_pre, o_pre, c):
    """``(i, f, g, o, c_new, tanh(c_new), h_new)`` from the pre-activations and the cell state."""
    i, f, g, o = logistic(i_pre), logistic(f_pre), math.tanh(g_pre), logistic(o_pre)
    c_new = f * c + i * g
    tanh_c = math.tanh(c_new)
    return i, f, g, o, c_new, tanh_c, o * tanh_c


def lstm_adjoints(i, f, g, o, c, tanh_c, grad_h, grad_c):
    """``(grad_i, grad_f, grad_g, grad_o, grad_c_prev)``: adjoints of the gate pre-activations and
    of the previous cell state from the adjoints of ``h_new`` and ``c_new``."""
    total = grad_c + grad_h * o * (1 - tanh_c * tanh_c)
    return (
        total * g * i * (1 - i),
        total * c * f * (1 - f),
        total * i * (1 - g * g),
        grad_h * tanh_c * o * (1 - o),
        total * f,
    )


def gru_state(r_input, r_hidden, z_input, z_hidden, n_input, n_hidden, h):
    """``(r, z, candidate, h_new)`` from the input and hidden gate values (bias included)."""
    r = logistic(r_input + r_hidden)
    z = logistic(z_input + z_hidden)
    candidate = math.tanh(n_input + r * n_hidden)
    return r, z, candidate, (1 - z) * candidate + z * h


def gru_adjoints(r, z, candidate, n_hidden, h, grad_h):
    """``(grad_r, grad_z, grad_candidate)``: adjoints of the r and z pre-activations and of the
    candidate's pre-activation, from the adjoint of ``h_new``."""
    grad_candidate = grad_h * (1 - z) * (1 - candidate * candidate)
    grad_r = grad_candidate * n_hidden * r * (1 - r)
    grad_z = grad_h * (h - candidate) * z * (1 - z)
    return grad_r, grad_z, grad_candidate
