"""Specs of cpsgrad/rules/numpy/contractions.py and signals.py, and cpsgrad/rules/scipy/signal.py:
einsum, tensordot, kron, cross, convolve and correlate (numpy's and scipy.signal's). All are
multilinear: no kinks, so no KINKS beyond a check of einsum's diagonals against JAX."""

import numpy as np
import pytest
import scipy.signal

from tests.specs import FLOAT, Kink, S


def _jnp():
    return pytest.importorskip("jax.numpy")


SPECS = [
    # einsum: explicit, implicit, ellipses, diagonals, traces, several operands, interleaved
    S("einsum matmul", lambda x, y, w: np.sum(np.einsum("ij,jk->ik", x, y) * w), [(2, 3), (3, 4)]),
    S("einsum implicit", lambda x, y, w: np.sum(np.einsum("ij,jk", x, y) * w), [(2, 3), (3, 4)]),
    S("einsum implicit transposes", lambda x, w: np.sum(np.einsum("ba", x) * w), [(2, 3)]),
    S("einsum trace", lambda x, w: np.einsum("ii", x) * w, [(3, 3)]),
    S("einsum diagonal", lambda x, w: np.sum(np.einsum("ii->i", x) * w), [(3, 3)]),
    S("einsum partial diagonal", lambda x, w: np.sum(np.einsum("iji->ij", x) * w), [(2, 3, 2)]),
    S("einsum sum all", lambda x, w: np.einsum("ij->", x) * w, [(2, 3)]),
    S("einsum outer", lambda x, y, w: np.sum(np.einsum("i,j->ij", x, y) * w), [(3,), (4,)]),
    S("einsum three operands", lambda x, y, z, w: np.einsum("ij,jk,ik", x, y, z) * w, [(2, 3), (3, 4), (2, 4)]),
    S("einsum optimize", lambda x, y, z, w: np.sum(np.einsum("ij,jk,kl->il", x, y, z, optimize=True) * w),
      [(2, 3), (3, 4), (4, 2)]),
    S("einsum ellipsis", lambda x, y, w: np.sum(np.einsum("...ij,...jk->...ik", x, y) * w), [(2, 2, 3), (3, 2)]),
    S("einsum implicit ellipsis", lambda x, y, w: np.sum(np.einsum("...j,j", x, y) * w), [(2, 3, 4), (4,)]),
    S("einsum broadcast size-1", lambda x, y, w: np.sum(np.einsum("...i,...i->...", x, y) * w), [(2, 1, 3), (4, 3)]),
    S("einsum label only here", lambda x, y, w: np.sum(np.einsum("ij,k->k", x, y) * w), [(2, 3), (4,)]),
    S("einsum float", lambda a, y, w: np.sum(np.einsum(",i->i", a, y) * w), [FLOAT, (3,)]),
    S("einsum interleaved", lambda x, y, w: np.sum(np.einsum(x, [0, 1], y, [1, 2], [0, 2]) * w), [(2, 3), (3, 4)]),
    S("einsum interleaved implicit", lambda x, y, w: np.sum(np.einsum(x, [1, 0], y, [1, 2]) * w), [(3, 2), (3, 4)]),
    S("einsum interleaved ellipsis", lambda x, w: np.sum(np.einsum(x, [Ellipsis, 0, 0], [Ellipsis, 0]) * w),
      [(2, 3, 3)]),
    # tensordot
    S("tensordot default", lambda x, y, w: np.tensordot(x, y) * w, [(2, 3), (2, 3)]),
    S("tensordot int", lambda x, y, w: np.sum(np.tensordot(x, y, 1) * w), [(2, 3), (3, 4)]),
    S("tensordot 0", lambda x, y, w: np.sum(np.tensordot(x, y, axes=0) * w), [(2,), (3,)]),
    S("tensordot pairs", lambda x, y, w: np.sum(np.tensordot(x, y, axes=([0, 2], [2, 0])) * w), [(2, 3, 4), (4, 2, 2)]),
    S("tensordot ints", lambda x, y, w: np.sum(np.tensordot(x, y, axes=(1, 0)) * w), [(2, 3), (3, 2)]),
    # kron
    S("kron matrices", lambda x, y, w: np.sum(np.kron(x, y) * w), [(2, 3), (3, 2)]),
    S("kron vector matrix", lambda x, y, w: np.sum(np.kron(x, y) * w), [(3,), (2, 2)]),
    S("kron float", lambda a, y, w: np.sum(np.kron(a, y) * w), [FLOAT, (2, 3)]),
    # cross
    S("cross 3-vectors", lambda x, y, w: np.sum(np.cross(x, y) * w), [(4, 3), (4, 3)]),
    S("cross broadcast", lambda x, y, w: np.sum(np.cross(x, y) * w), [(4, 3), (3,)]),
    S("cross 2-vectors", lambda x, y, w: np.sum(np.cross(x, y) * w), [(4, 2), (4, 2)]),
    S("cross 2 by 3", lambda x, y, w: np.sum(np.cross(x, y) * w), [(2,), (4, 3)]),
    S("cross axes", lambda x, y, w: np.sum(np.cross(x, y, axisa=0, axisb=1, axisc=0) * w), [(3, 4), (4, 3)]),
    S("cross axis", lambda x, y, w: np.sum(np.cross(x, y, axis=0) * w), [(3, 2), (3, 2)]),
    # numpy's 1-d signals, both inputs differentiable, either one longer
    S("convolve full", lambda x, y, w: np.sum(np.convolve(x, y) * w), [(5,), (3,)]),
    S("convolve same", lambda x, y, w: np.sum(np.convolve(x, y, "same") * w), [(5,), (4,)]),
    S("convolve same shorter first", lambda x, y, w: np.sum(np.convolve(x, y, mode="same") * w), [(2,), (6,)]),
    S("convolve valid", lambda x, y, w: np.sum(np.convolve(x, y, "valid") * w), [(3,), (6,)]),
    S("correlate valid", lambda x, y, w: np.sum(np.correlate(x, y) * w), [(6,), (3,)]),
    S("correlate full", lambda x, y, w: np.sum(np.correlate(x, y, "full") * w), [(3,), (5,)]),
    S("correlate same", lambda x, y, w: np.sum(np.correlate(x, y, "same") * w), [(6,), (3,)]),
    S("correlate same shorter first", lambda x, y, w: np.sum(np.correlate(x, y, "same") * w), [(2,), (7,)]),
    # scipy.signal: n-d, modes, methods
    S("signal.convolve full", lambda x, y, w: np.sum(scipy.signal.convolve(x, y) * w), [(4, 5), (2, 3)]),
    S("signal.convolve same", lambda x, y, w: np.sum(scipy.signal.convolve(x, y, "same") * w), [(4, 5), (3, 2)]),
    S("signal.convolve same larger second", lambda x, y, w: np.sum(scipy.signal.convolve(x, y, mode="same") * w),
      [(2, 3), (4, 4)]),
    S("signal.convolve valid direct", lambda x, y, w: np.sum(scipy.signal.convolve(x, y, "valid", method="direct") * w),
      [(4, 5), (2, 3)]),
    S("signal.convolve valid fft", lambda x, y, w: np.sum(scipy.signal.convolve(x, y, "valid", "fft") * w),
      [(2, 3), (4, 5)]),
    S("signal.convolve 1-d", lambda x, y, w: np.sum(scipy.signal.convolve(x, y, "same", "direct") * w), [(6,), (3,)]),
    S("signal.correlate full", lambda x, y, w: np.sum(scipy.signal.correlate(x, y) * w), [(4, 5), (2, 3)]),
    S("signal.correlate same fft", lambda x, y, w: np.sum(scipy.signal.correlate(x, y, "same", method="fft") * w),
      [(3, 4), (2, 2)]),
    S("signal.correlate valid", lambda x, y, w: np.sum(scipy.signal.correlate(x, y, "valid", "direct") * w),
      [(2, 2, 3), (3, 3, 4)]),
]

KINKS = [
    Kink(
        "einsum diagonal and trace",
        lambda x: np.sum(np.einsum("ii->i", x) * np.array([1.0, -2.0, 0.5])) + np.einsum("ii", x),
        lambda x: _jnp().sum(_jnp().einsum("ii->i", x) * np.array([1.0, -2.0, 0.5])) + _jnp().einsum("ii", x),
        (np.arange(9.0).reshape(3, 3),),
    ),
    Kink(
        "convolve of zeros",
        lambda x, y: np.sum(np.convolve(x, y, "same") * np.array([1.0, -2.0, 0.5, 3.0])),
        lambda x, y: _jnp().sum(_jnp().convolve(x, y, "same") * np.array([1.0, -2.0, 0.5, 3.0])),
        (np.zeros(4), np.array([1.0, 0.0, -1.0])),
        (0, 1),
    ),
]

X = np.array([[0.0, 0.25, 1.0], [0.75, 0.5, 0.0]])
V = np.array([0.25, 0.5, 0.75])
V4 = np.array([0.25, 0.5, 0.75, 1.0])


def _unused_einsum(x, z, flag):
    y = np.einsum("ij,jk->ik", x, z)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_tensordot(x, z, flag):
    y = np.tensordot(x, z, 1)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_kron(x, z, flag):
    y = np.kron(x, z)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_cross(x, z, flag):
    y = np.cross(x, z)
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_convolve(x, z, flag):
    y = np.convolve(x, z, "same")
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_correlate(x, z, flag):
    y = np.correlate(x, z, "full")
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_signal_convolve(x, z, flag):
    y = scipy.signal.convolve(x, z, "valid")
    if flag:
        return np.sum(y)
    return np.sum(x)


def _unused_signal_correlate(x, z, flag):
    y = scipy.signal.correlate(x, z, "same")
    if flag:
        return np.sum(y)
    return np.sum(x)


ZERO_CASES = [
    (np.einsum, _unused_einsum, (X, X.T)),
    (np.tensordot, _unused_tensordot, (X, X.T)),
    (np.kron, _unused_kron, (X, V)),
    (np.cross, _unused_cross, (X, X[::-1])),
    (np.convolve, _unused_convolve, (V4, V)),
    (np.correlate, _unused_correlate, (V4, V)),
    (scipy.signal.convolve, _unused_signal_convolve, (X, X[:1, :2])),
    (scipy.signal.correlate, _unused_signal_correlate, (X, X[:1, :2])),
]
