"""Fused LSTM and GRU cells (PyTorch's weight layout and gate order).

The gate pre-activations are BLAS products; all gate nonlinearities, the state update and,
in the backward, the gate adjoints are one numba pass each with no temporaries.
"""

import math

import numpy as np

from cpsgrad.kernels.cpu.jit import serial


@serial
def _sigmoid(v):
    return 1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v))


@serial
def _lstm_gates(gates, c, h_new, c_new, tanh_c):
    """Activate ``gates`` (i, f, g, o) in place and write the new states."""
    hidden = c.shape[1]
    for n in range(c.shape[0]):
        for k in range(hidden):
            i = _sigmoid(gates[n, k])
            f = _sigmoid(gates[n, hidden + k])
            g = math.tanh(gates[n, 2 * hidden + k])
            o = _sigmoid(gates[n, 3 * hidden + k])
            gates[n, k], gates[n, hidden + k] = i, f
            gates[n, 2 * hidden + k], gates[n, 3 * hidden + k] = g, o
            c_new[n, k] = f * c[n, k] + i * g
            tanh_c[n, k] = math.tanh(c_new[n, k])
            h_new[n, k] = o * tanh_c[n, k]


@serial
def _lstm_grad(gates, c, tanh_c, grad_h, grad_c, grad_gates, grad_c_prev):
    hidden = c.shape[1]
    for n in range(c.shape[0]):
        for k in range(hidden):
            i, f = gates[n, k], gates[n, hidden + k]
            g, o = gates[n, 2 * hidden + k], gates[n, 3 * hidden + k]
            t = tanh_c[n, k]
            total = grad_c[n, k] + grad_h[n, k] * o * (1 - t * t)
            grad_gates[n, k] = total * g * i * (1 - i)
            grad_gates[n, hidden + k] = total * c[n, k] * f * (1 - f)
            grad_gates[n, 2 * hidden + k] = total * i * (1 - g * g)
            grad_gates[n, 3 * hidden + k] = grad_h[n, k] * t * o * (1 - o)
            grad_c_prev[n, k] = total * f


def _check(op, x, h, w_ih, w_hh, gates, *biases):
    hidden = h.shape[-1] if h.ndim == 2 else -1
    ok = x.ndim == 2 and h.ndim == 2 and x.shape[0] == h.shape[0]
    ok = ok and w_ih.shape == (gates * hidden, x.shape[1]) and w_hh.shape == (gates * hidden, hidden)
    if not ok or any(np.shape(b) != (gates * hidden,) for b in biases):
        shapes = ", ".join(str(np.shape(a)) for a in (x, h, w_ih, w_hh, *biases))
        raise ValueError(
            f"{op}: expected x (N, I), h (N, H), w_ih ({gates}H, I), w_hh ({gates}H, H), "
            f"biases ({gates}H,); got {shapes}"
        )


def lstm_cell_forward(x, h, c, w_ih, w_hh, b):
    """One LSTM step; returns ``((h_new, c_new), saved)``. Gates are ordered i, f, g, o."""
    _check("lstm_cell", x, h, w_ih, w_hh, 4, b)
    if c.shape != h.shape:
        raise ValueError(f"lstm_cell: cell state {c.shape} does not match hidden state {h.shape}")
    gates = x @ w_ih.T + h @ w_hh.T + b
    c = np.ascontiguousarray(c, dtype=gates.dtype)
    h_new, c_new, tanh_c = (np.empty_like(c) for _ in range(3))
    _lstm_gates(gates, c, h_new, c_new, tanh_c)
    return (h_new, c_new), (x, h, c, w_ih, w_hh, gates, tanh_c)


def lstm_cell_backward(grad, saved):
    """Adjoints ``(x, h, c, w_ih, w_hh, b)`` from the adjoints ``(h_new, c_new)``;
    either may be None (zero)."""
    x, h, c, w_ih, w_hh, gates, tanh_c = saved
    grad_h, grad_c = (
        np.zeros_like(c) if g is None else np.ascontiguousarray(g, dtype=c.dtype) for g in grad
    )
    grad_gates = np.empty_like(gates)
    grad_c_prev = np.empty_like(c)
    _lstm_grad(gates, c, tanh_c, grad_h, grad_c, grad_gates, grad_c_prev)
    return (
        grad_gates @ w_ih,
        grad_gates @ w_hh,
        grad_c_prev,
        grad_gates.T @ x,
        grad_gates.T @ h,
        grad_gates.sum(axis=0),
    )


@serial
def _gru_gates(input_gates, hidden_gates, h, h_new, gates):
    """``gates`` receives r, z, n; ``h_new`` the new state."""
    hidden = h.shape[1]
    for n in range(h.shape[0]):
        for k in range(hidden):
            r = _sigmoid(input_gates[n, k] + hidden_gates[n, k])
            z = _sigmoid(input_gates[n, hidden + k] + hidden_gates[n, hidden + k])
            candidate = math.tanh(input_gates[n, 2 * hidden + k] + r * hidden_gates[n, 2 * hidden + k])
            gates[n, k], gates[n, hidden + k], gates[n, 2 * hidden + k] = r, z, candidate
            h_new[n, k] = (1 - z) * candidate + z * h[n, k]


@serial
def _gru_grad(gates, hidden_gates, h, grad_h, grad_input_gates, grad_hidden_gates, grad_h_prev):
    hidden = h.shape[1]
    for n in range(h.shape[0]):
        for k in range(hidden):
            r, z, candidate = gates[n, k], gates[n, hidden + k], gates[n, 2 * hidden + k]
            g = grad_h[n, k]
            grad_candidate = g * (1 - z) * (1 - candidate * candidate)
            grad_r = grad_candidate * hidden_gates[n, 2 * hidden + k] * r * (1 - r)
            grad_z = g * (h[n, k] - candidate) * z * (1 - z)
            grad_input_gates[n, k] = grad_hidden_gates[n, k] = grad_r
            grad_input_gates[n, hidden + k] = grad_hidden_gates[n, hidden + k] = grad_z
            grad_input_gates[n, 2 * hidden + k] = grad_candidate
            grad_hidden_gates[n, 2 * hidden + k] = grad_candidate * r
            grad_h_prev[n, k] = g * z


def gru_cell_forward(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step; returns ``(h_new, saved)``. Gates are ordered r, z, n."""
    _check("gru_cell", x, h, w_ih, w_hh, 3, b_ih, b_hh)
    input_gates = x @ w_ih.T + b_ih
    hidden_gates = h @ w_hh.T + b_hh
    h = np.ascontiguousarray(h, dtype=input_gates.dtype)
    h_new = np.empty_like(h)
    gates = np.empty_like(input_gates)
    _gru_gates(input_gates, hidden_gates, h, h_new, gates)
    return h_new, (x, h, w_ih, w_hh, gates, hidden_gates)


def gru_cell_backward(grad, saved):
    """Adjoints ``(x, h, w_ih, w_hh, b_ih, b_hh)``."""
    x, h, w_ih, w_hh, gates, hidden_gates = saved
    grad = np.ascontiguousarray(grad, dtype=h.dtype)
    grad_input_gates = np.empty_like(gates)
    grad_hidden_gates = np.empty_like(gates)
    grad_h_prev = np.empty_like(h)
    _gru_grad(gates, hidden_gates, h, grad, grad_input_gates, grad_hidden_gates, grad_h_prev)
    return (
        grad_input_gates @ w_ih,
        grad_hidden_gates @ w_hh + grad_h_prev,
        grad_input_gates.T @ x,
        grad_hidden_gates.T @ h,
        grad_input_gates.sum(axis=0),
        grad_hidden_gates.sum(axis=0),
    )
