"""Fused LSTM and GRU cells on the device (PyTorch's weight layout and gate order).

The gate pre-activation products go through the tiled matmul (``linalg.product``, reading the
weights transposed in place); one elementwise kernel adds the products and biases, applies every
gate nonlinearity and writes the new states (the gate formulas of
``cpsgrad.kernels.formulas.recurrent``, shared with the CPU loops), and in the backward one kernel writes all gate
adjoints. Weight adjoints are products again and bias adjoints block sums over the batch.
"""

from types import SimpleNamespace

from numba import cuda

from cpsgrad.kernels.cpu.recurrent import _check
from cpsgrad.kernels.cuda.arrays import adjoint, contiguous, empty, operand, zeros
from cpsgrad.kernels.cuda.jit import compile_formulas, kernel, launch
from cpsgrad.kernels.cuda.layout import sum_to_shape
from cpsgrad.kernels.cuda.linalg import product
from cpsgrad.kernels.formulas import recurrent

_M = "{f}[:, ::1]"
_V = "{f}[::1]"


_gates = compile_formulas(recurrent)
_lstm_state, _lstm_adjoints = _gates.lstm_state, _gates.lstm_adjoints
_gru_state, _gru_adjoints = _gates.gru_state, _gates.gru_adjoints


@kernel(f"void({_M}, {_M}, {_V}, {_M}, {_M}, {_M}, {_M}, {_M})")
def _lstm_gates(input_part, hidden_part, bias, c, gates, h_new, c_new, tanh_c):
    """``gates`` receives the activated i, f, g, o; the new states and tanh(c_new) are written."""
    hidden = c.shape[1]
    for index in range(cuda.grid(1), c.size, cuda.gridsize(1)):
        n, k = index // hidden, index % hidden
        f_at, g_at, o_at = hidden + k, 2 * hidden + k, 3 * hidden + k
        i, f, g, o, c_new[n, k], tanh_c[n, k], h_new[n, k] = _lstm_state(
            input_part[n, k] + hidden_part[n, k] + bias[k],
            input_part[n, f_at] + hidden_part[n, f_at] + bias[f_at],
            input_part[n, g_at] + hidden_part[n, g_at] + bias[g_at],
            input_part[n, o_at] + hidden_part[n, o_at] + bias[o_at],
            c[n, k],
        )
        gates[n, k], gates[n, f_at], gates[n, g_at], gates[n, o_at] = i, f, g, o


@kernel(f"void({_M}, {_M}, {_M}, {_M}, {_M}, {_M}, {_M})")
def _lstm_grad(gates, c, tanh_c, grad_h, grad_c, grad_gates, grad_c_prev):
    hidden = c.shape[1]
    for index in range(cuda.grid(1), c.size, cuda.gridsize(1)):
        n, k = index // hidden, index % hidden
        f_at, g_at, o_at = hidden + k, 2 * hidden + k, 3 * hidden + k
        (
            grad_gates[n, k], grad_gates[n, f_at], grad_gates[n, g_at], grad_gates[n, o_at], grad_c_prev[n, k]
        ) = _lstm_adjoints(
            gates[n, k], gates[n, f_at], gates[n, g_at], gates[n, o_at],
            c[n, k], tanh_c[n, k], grad_h[n, k], grad_c[n, k],
        )


@kernel(f"void({_M}, {_M}, {_V}, {_V}, {_M}, {_M}, {_M}, {_M})")
def _gru_gates(input_part, hidden_part, b_ih, b_hh, h, h_new, gates, hidden_gates):
    """``gates`` receives r, z, n; ``hidden_gates`` the hidden products with their bias."""
    hidden = h.shape[1]
    for index in range(cuda.grid(1), h.size, cuda.gridsize(1)):
        n, k = index // hidden, index % hidden
        q = hidden + k
        m = 2 * hidden + k
        hidden_gates[n, k] = hidden_part[n, k] + b_hh[k]
        hidden_gates[n, q] = hidden_part[n, q] + b_hh[q]
        hidden_gates[n, m] = hidden_part[n, m] + b_hh[m]
        gates[n, k], gates[n, q], gates[n, m], h_new[n, k] = _gru_state(
            input_part[n, k] + b_ih[k], hidden_gates[n, k], input_part[n, q] + b_ih[q], hidden_gates[n, q],
            input_part[n, m] + b_ih[m], hidden_gates[n, m], h[n, k],
        )


@kernel(f"void({_M}, {_M}, {_M}, {_M}, {_M}, {_M})")
def _gru_grad(gates, hidden_gates, h, grad_h, grad_input_gates, grad_hidden_gates):
    hidden = h.shape[1]
    for index in range(cuda.grid(1), h.size, cuda.gridsize(1)):
        n, k = index // hidden, index % hidden
        q = hidden + k
        m = 2 * hidden + k
        r = gates[n, k]
        grad_r, grad_z, grad_candidate = _gru_adjoints(
            r, gates[n, q], gates[n, m], hidden_gates[n, m], h[n, k], grad_h[n, k]
        )
        grad_input_gates[n, k] = grad_r
        grad_hidden_gates[n, k] = grad_r
        grad_input_gates[n, q] = grad_z
        grad_hidden_gates[n, q] = grad_z
        grad_input_gates[n, m] = grad_candidate
        grad_hidden_gates[n, m] = grad_candidate * r


@kernel(f"void({_M}, {_M}, {_M}, {_M})")
def _gru_grad_h(product_part, grad_h, gates, out):
    """``out = product_part + grad_h * z``: the adjoint of ``h`` from both of its paths."""
    hidden = out.shape[1]
    for index in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        n, k = index // hidden, index % hidden
        out[n, k] = product_part[n, k] + grad_h[n, k] * gates[n, hidden + k]


def _matrix(x):
    """A 2-D device array as a batch of one for ``product``."""
    return x.reshape(1, *x.shape)


def _times_transposed(a, w):
    """``a @ w.T`` for 2-D device arrays (``w`` read transposed in place)."""
    return product(_matrix(a), _matrix(w), transpose_b=True).reshape(a.shape[0], w.shape[0])


def _times(a, w):
    return product(_matrix(a), _matrix(w)).reshape(a.shape[0], w.shape[1])


def _transposed_times(a, b):
    """``a.T @ b``."""
    return product(_matrix(a), _matrix(b), transpose_a=True).reshape(a.shape[1], b.shape[1])


def _shapes(*arrays):
    """Shape-only stand-ins for the CPU shape check (the simulator's shapes reject ``[-1]``)."""
    return [SimpleNamespace(ndim=a.ndim, shape=tuple(a.shape)) for a in arrays]


def _operands(op, x, *rest):
    x = contiguous(op, x)
    return (x, *(operand(op, a, x.dtype) for a in rest))


def lstm_cell_forward(x, h, c, w_ih, w_hh, b):
    """One LSTM step; returns ``((h_new, c_new), saved)``. Gates are ordered i, f, g, o."""
    _check("lstm_cell", *_shapes(x, h, w_ih, w_hh), 4, *_shapes(b))
    if tuple(c.shape) != tuple(h.shape):
        raise ValueError(f"lstm_cell: cell state {c.shape} does not match hidden state {h.shape}")
    x, h, c, w_ih, w_hh, b = _operands("lstm_cell", x, h, c, w_ih, w_hh, b)
    input_part = _times_transposed(x, w_ih)
    hidden_part = _times_transposed(h, w_hh)
    gates = empty(input_part.shape, x.dtype)
    h_new, c_new, tanh_c = (empty(c.shape, x.dtype) for _ in range(3))
    launch(_lstm_gates, c.size, input_part, hidden_part, b, c, gates, h_new, c_new, tanh_c)
    return (h_new, c_new), (x, h, c, w_ih, w_hh, gates, tanh_c)


def lstm_cell_backward(grad, saved):
    """Adjoints ``(x, h, c, w_ih, w_hh, b)`` from the adjoints ``(h_new, c_new)``;
    either may be None (zero)."""
    x, h, c, w_ih, w_hh, gates, tanh_c = saved
    grad_h, grad_c = (
        zeros(c.shape, c.dtype) if g is None else adjoint("lstm_cell", g, c.shape, c.dtype)
        for g in grad
    )
    grad_gates = empty(gates.shape, gates.dtype)
    grad_c_prev = empty(c.shape, c.dtype)
    launch(_lstm_grad, c.size, gates, c, tanh_c, grad_h, grad_c, grad_gates, grad_c_prev)
    return (
        _times(grad_gates, w_ih),
        _times(grad_gates, w_hh),
        grad_c_prev,
        _transposed_times(grad_gates, x),
        _transposed_times(grad_gates, h),
        sum_to_shape(grad_gates, (gates.shape[1],)),
    )


def gru_cell_forward(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step; returns ``(h_new, saved)``. Gates are ordered r, z, n."""
    _check("gru_cell", *_shapes(x, h, w_ih, w_hh), 3, *_shapes(b_ih, b_hh))
    x, h, w_ih, w_hh, b_ih, b_hh = _operands("gru_cell", x, h, w_ih, w_hh, b_ih, b_hh)
    input_part = _times_transposed(x, w_ih)
    hidden_part = _times_transposed(h, w_hh)
    h_new = empty(h.shape, x.dtype)
    gates = empty(input_part.shape, x.dtype)
    hidden_gates = empty(input_part.shape, x.dtype)
    launch(_gru_gates, h.size, input_part, hidden_part, b_ih, b_hh, h, h_new, gates, hidden_gates)
    return h_new, (x, h, w_ih, w_hh, gates, hidden_gates)


def gru_cell_backward(grad, saved):
    """Adjoints ``(x, h, w_ih, w_hh, b_ih, b_hh)``."""
    x, h, w_ih, w_hh, gates, hidden_gates = saved
    grad = adjoint("gru_cell", grad, h.shape, h.dtype)
    grad_input_gates = empty(gates.shape, gates.dtype)
    grad_hidden_gates = empty(gates.shape, gates.dtype)
    launch(_gru_grad, h.size, gates, hidden_gates, h, grad, grad_input_gates, grad_hidden_gates)
    grad_h = empty(h.shape, h.dtype)
    launch(_gru_grad_h, h.size, _times(grad_hidden_gates, w_hh), grad, gates, grad_h)
    return (
        _times(grad_input_gates, w_ih),
        grad_h,
        _transposed_times(grad_input_gates, x),
        _transposed_times(grad_hidden_gates, h),
        sum_to_shape(grad_input_gates, (gates.shape[1],)),
        sum_to_shape(grad_hidden_gates, (gates.shape[1],)),
    )

