"""Fused LSTM and GRU cells (PyTorch's weight layout and gate order).

The gate pre-activations are BLAS products; all gate nonlinearities, the state update and,
in the backward, the gate adjoints are one numba pass each with no temporaries, over the gate
formulas of ``cpsgrad.kernels.formulas.recurrent`` (shared with the CUDA kernels).
"""

import numpy as np

from cpsgrad.kernels.cpu.jit import compile_formulas, serial
from cpsgrad.kernels.formulas import recurrent

_gates = compile_formulas(recurrent)
_lstm_state, _lstm_adjoints = _gates.lstm_state, _gates.lstm_adjoints
_gru_state, _gru_adjoints = _gates.gru_state, _gates.gru_adjoints


@serial
def _lstm_gates(gates, c, h_new, c_new, tanh_c):
    """Activate ``gates`` (i, f, g, o) in place and write the new states."""
    hidden = c.shape[1]
    for n in range(c.shape[0]):
        for k in range(hidden):
            i, f, g, o, c_new[n, k], tanh_c[n, k], h_new[n, k] = _lstm_state(
                gates[n, k], gates[n, hidden + k], gates[n, 2 * hidden + k], gates[n, 3 * hidden + k], c[n, k]
            )
            gates[n, k], gates[n, hidden + k] = i, f
            gates[n, 2 * hidden + k], gates[n, 3 * hidden + k] = g, o


@serial
def _lstm_grad(gates, c, tanh_c, grad_h, grad_c, grad_gates, grad_c_prev):
    hidden = c.shape[1]
    for n in range(c.shape[0]):
        for k in range(hidden):
            (
                grad_gates[n, k],
                grad_gates[n, hidden + k],
                grad_gates[n, 2 * hidden + k],
                grad_gates[n, 3 * hidden + k],
                grad_c_prev[n, k],
            ) = _lstm_adjoints(
                gates[n, k], gates[n, hidden + k], gates[n, 2 * hidden + k], gates[n, 3 * hidden + k],
                c[n, k], tanh_c[n, k], grad_h[n, k], grad_c[n, k],
            )


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
            q, m = hidden + k, 2 * hidden + k
            gates[n, k], gates[n, q], gates[n, m], h_new[n, k] = _gru_state(
                input_gates[n, k], hidden_gates[n, k], input_gates[n, q], hidden_gates[n, q],
                input_gates[n, m], hidden_gates[n, m], h[n, k],
            )


@serial
def _gru_grad(gates, hidden_gates, h, grad_h, grad_input_gates, grad_hidden_gates, grad_h_prev):
    hidden = h.shape[1]
    for n in range(h.shape[0]):
        for k in range(hidden):
            q, m = hidden + k, 2 * hidden + k
            r = gates[n, k]
            grad_r, grad_z, grad_candidate = _gru_adjoints(
                r, gates[n, q], gates[n, m], hidden_gates[n, m], h[n, k], grad_h[n, k]
            )
            grad_input_gates[n, k] = grad_hidden_gates[n, k] = grad_r
            grad_input_gates[n, q] = grad_hidden_gates[n, q] = grad_z
            grad_input_gates[n, m] = grad_candidate
            grad_hidden_gates[n, m] = grad_candidate * r
            grad_h_prev[n, k] = grad_h[n, k] * gates[n, q]


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
