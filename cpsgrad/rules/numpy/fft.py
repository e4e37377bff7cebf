"""Derivative rules for numpy.fft: `fft ifft fft2 ifft2 fftn ifftn` (complex to complex), `rfft
rfft2 rfftn ihfft` (real to complex), `irfft irfft2 irfftn hfft` (complex to real), with `n`/`s`,
`axis`/`axes` and `norm`, and `fftshift`/`ifftshift`.

JAX's convention (docs/design.md, "Complex numbers"): a linear map's cotangent is its transpose,
never its conjugate transpose. The DFT matrix is symmetric, so the transpose of `fft` (of any
`norm`) is `fft` itself with the same `norm`, applied to the cotangent and cut or zero-padded
back to the input's length where `n` padded or cut it; `ifft`'s is `ifft`. `rfft` keeps the first
n//2 + 1 bins of `fft`: its transpose pads the cotangent with zeros to n and applies `fft` (the
real part reaches the real input). `irfft(x, n)` is (1/n) sum_k c_k Re(x_k w^(jk)) with c_k = 2
but for the bins 0 and n/2, which count once: its cotangent is c_k ifft(t)_k of the real part of
the output's cotangent t. `hfft` is `irfft` of conj(x) and `ihfft` conj(rfft(x)), each with the
`norm` direction swapped, as numpy defines them. The shifts are permutations: each one's
transpose is the other.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

LAST_TWO = (-2, -1)  # the 2-d transforms' axes (a name: a template's default is inlined as written)

# ---- complex to complex -----------------------------------------------------------------------


@rule(np.fft.fft)
def fft(a, n=None, axis=-1, norm=None):
    y = np.fft.fft(a, n, axis, norm)
    y_d = yield y
    a_d += transform_adjoint(np.fft.fftn, y_d, a, (axis,), norm)


@rule(np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None):
    y = np.fft.ifft(a, n, axis, norm)
    y_d = yield y
    a_d += transform_adjoint(np.fft.ifftn, y_d, a, (axis,), norm)


@rule(np.fft.fft2)
def fft2(a, s=None, axes=LAST_TWO, norm=None):
    y = np.fft.fft2(a, s, axes, norm)
    y_d = yield y
    a_d += transform_adjoint(np.fft.fftn, y_d, a, cooked_axes(a, s, axes), norm)


@rule(np.fft.ifft2)
def ifft2(a, s=None, axes=LAST_TWO, norm=None):
    y = np.fft.ifft2(a, s, axes, norm)
    y_d = yield y
    a_d += transform_adjoint(np.fft.ifftn, y_d, a, cooked_axes(a, s, axes), norm)


@rule(np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None):
    y = np.fft.fftn(a, s, axes, norm)
    y_d = yield y
    a_d += transform_adjoint(np.fft.fftn, y_d, a, cooked_axes(a, s, axes), norm)


@rule(np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None):
    y = np.fft.ifftn(a, s, axes, norm)
    y_d = yield y
    a_d += transform_adjoint(np.fft.ifftn, y_d, a, cooked_axes(a, s, axes), norm)


# ---- real to complex and back -----------------------------------------------------------------


@rule(np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None):
    y = np.fft.rfft(a, n, axis, norm)
    y_d = yield y
    a_d += real_transform_adjoint(y_d, a, (n,), (axis,), norm)


@rule(np.fft.rfft2)
def rfft2(a, s=None, axes=LAST_TWO, norm=None):
    y = np.fft.rfft2(a, s, axes, norm)
    y_d = yield y
    a_d += real_transform_adjoint(y_d, a, s, axes, norm)


@rule(np.fft.rfftn)
def rfftn(a, s=None, axes=None, norm=None):
    y = np.fft.rfftn(a, s, axes, norm)
    y_d = yield y
    a_d += real_transform_adjoint(y_d, a, s, axes, norm)


@rule(np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None):
    y = np.fft.irfft(a, n, axis, norm)
    y_d = yield y
    a_d += inverse_real_adjoint(y_d, a, y, (axis,), norm)


@rule(np.fft.irfft2)
def irfft2(a, s=None, axes=LAST_TWO, norm=None):
    y = np.fft.irfft2(a, s, axes, norm)
    y_d = yield y
    a_d += inverse_real_adjoint(y_d, a, y, cooked_axes(a, s, axes), norm)


@rule(np.fft.irfftn)
def irfftn(a, s=None, axes=None, norm=None):
    y = np.fft.irfftn(a, s, axes, norm)
    y_d = yield y
    a_d += inverse_real_adjoint(y_d, a, y, cooked_axes(a, s, axes), norm)


@rule(np.fft.hfft)
def hfft(a, n=None, axis=-1, norm=None):
    y = np.fft.hfft(a, n, axis, norm)
    y_d = yield y
    a_d += hermitian_adjoint(y_d, a, y, axis, norm)


@rule(np.fft.ihfft)
def ihfft(a, n=None, axis=-1, norm=None):
    y = np.fft.ihfft(a, n, axis, norm)
    y_d = yield y
    a_d += inverse_hermitian_adjoint(y_d, a, n, axis, norm)


# ---- shifts -----------------------------------------------------------------------------------


@rule(np.fft.fftshift)
def fftshift(x, axes=None):
    y = np.fft.fftshift(x, axes)
    y_d = yield y
    x_d += shift_adjoint(np.fft.ifftshift, y_d, x, axes)


@rule(np.fft.ifftshift)
def ifftshift(x, axes=None):
    y = np.fft.ifftshift(x, axes)
    y_d = yield y
    x_d += shift_adjoint(np.fft.fftshift, y_d, x, axes)


# ---- helpers ----------------------------------------------------------------------------------


def cooked_axes(a, s, axes) -> tuple[int, ...]:
    """The axes numpy's n-d transforms run along (numpy's `_cook_nd_args`): `axes`, else the
    last len(s) axes, else all of them."""
    ndim = np.ndim(a)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    return tuple(int(axis) % ndim for axis in axes)


def _host(a, name: str):
    if type(a) is DeviceArray:
        raise UnsupportedError(None, f"{name} of a DeviceArray", "numpy.fft runs on the host: pass cpsgrad.to_host(x)")
    return np.asarray(a)


def _resized(g, shape: tuple, axes) -> np.ndarray:
    """`g` cut or zero-padded along `axes` to the lengths of `shape` (the transpose of the cut or
    padding `n`/`s` made of the input)."""
    for axis in axes:
        length = shape[axis]
        if g.shape[axis] > length:
            g = np.take(g, np.arange(length), axis=axis)
        elif g.shape[axis] < length:
            widths = [(0, 0)] * g.ndim
            widths[axis] = (0, length - g.shape[axis])
            g = np.pad(g, widths)
    return g


def transform_adjoint(transform, adjoint, a, axes, norm):
    """`fft`/`ifft` (any number of axes) backward: the same transform of the cotangent along
    `axes`, resized to `a`'s lengths."""
    if is_zero(adjoint):
        return 0.0
    x = _host(a, transform.__name__)
    axes = tuple(int(axis) % x.ndim for axis in axes)
    g = transform(np.asarray(adjoint), None, axes, norm)
    return unbroadcast(_resized(g, x.shape, axes), a)


def _real_lengths(x, s, axes):
    axes = cooked_axes(x, None if s is None or s[0] is None else s, axes)
    lengths = [x.shape[axis] for axis in axes] if s is None or s[0] is None else list(s)
    return axes, lengths


def real_transform_adjoint(adjoint, a, s, axes, norm):
    """`rfft`/`rfftn` backward: the last axis's bins zero-padded to its length n and transformed
    by `fft`, then `fft` along the other axes; resized to `a`'s lengths (the real part reaches
    a real `a`)."""
    if is_zero(adjoint):
        return 0.0
    x = _host(a, "np.fft.rfft")
    axes, lengths = _real_lengths(x, s, axes)
    g = np.asarray(adjoint)
    last = axes[-1]
    g = _resized(g, g.shape[:last] + (lengths[-1],) + g.shape[last + 1 :], (last,))
    g = np.fft.fftn(g, None, axes, norm)
    return unbroadcast(_resized(g, x.shape, axes), a)


def inverse_real_adjoint(adjoint, a, y, axes, norm):
    """`irfft`/`irfftn` backward: c_k ifft(t)_k along the last axis (t the real part of the
    cotangent, c_k = 2 but for the bins 0 and n/2), the first n//2 + 1 bins kept, then `ifft`
    along the other axes; resized to `a`'s lengths."""
    if is_zero(adjoint):
        return 0.0
    x = _host(a, "np.fft.irfft")
    axes = tuple(int(axis) % x.ndim for axis in axes)
    last = axes[-1]
    n = np.shape(y)[last]
    g = np.fft.ifftn(np.real(adjoint), None, axes, norm)
    bins = n // 2 + 1
    g = np.take(g, np.arange(bins), axis=last)
    weights = np.full(bins, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    g = g * weights.reshape((-1,) + (1,) * (g.ndim - 1 - last))
    return unbroadcast(_resized(g, x.shape, axes), a)


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hermitian_adjoint(adjoint, a, y, axis, norm):
    """`hfft` backward: hfft(a) = irfft(conj(a)) with the norm direction swapped, so conj of
    irfft's backward."""
    if is_zero(adjoint):
        return 0.0
    return np.conj(inverse_real_adjoint(adjoint, np.conj(a), y, (axis,), _SWAPPED[norm]))


def inverse_hermitian_adjoint(adjoint, a, n, axis, norm):
    """`ihfft` backward: ihfft(a) = conj(rfft(a)) with the norm direction swapped."""
    if is_zero(adjoint):
        return 0.0
    return real_transform_adjoint(np.conj(adjoint), a, (n,), (axis,), _SWAPPED[norm])


def shift_adjoint(inverse, adjoint, x, axes):
    """`fftshift`/`ifftshift` backward: the other shift of the cotangent."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(inverse(np.asarray(adjoint), axes), x)
