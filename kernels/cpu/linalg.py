"""matmul (vector, 2-D, batched with broadcasting), outer and transpose, on numpy's BLAS.

The products already run in BLAS, so these entries are numpy calls; the backward follows
numpy's promotion of 1-D operands and sums broadcast batch axes away.
"""

import numpy as np

from cpsgrad.kernels.cpu.shapes import unbroadcast


def matmul_forward(a, b):
    try:
        return np.matmul(a, b), (a, b)
    except ValueError:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned") from None


def matmul_backward(grad, saved):
    a, b = saved
    if a.ndim == 1 and b.ndim == 1:
        return grad * b, grad * a
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    grad2 = grad
    if a.ndim == 1:
        grad2 = np.expand_dims(grad2, -2)
    if b.ndim == 1:
        grad2 = np.expand_dims(grad2, -1)
    grad_a = np.matmul(grad2, np.swapaxes(b2, -1, -2))
    grad_b = np.matmul(np.swapaxes(a2, -1, -2), grad2)
    return (
        unbroadcast(grad_a, a2.shape, a.dtype).reshape(a.shape),
        unbroadcast(grad_b, b2.shape, b.dtype).reshape(b.shape),
    )


def outer_forward(a, b):
    return np.outer(a, b), (a, b)


def outer_backward(grad, saved):
    a, b = saved
    return (grad @ np.ravel(b)).reshape(a.shape), (np.ravel(a) @ grad).reshape(b.shape)


def transpose_forward(x, axes=None):
    order = tuple(reversed(range(x.ndim))) if axes is None else tuple(axes)
    try:
        return np.transpose(x, order), order
    except ValueError as error:
        raise ValueError(f"transpose: axes {axes} invalid for shape {x.shape} ({error})") from None


def transpose_backward(grad, saved):
    return (np.asarray(np.transpose(grad, np.argsort(saved)), order="C"),)
