"""Specs of the numpy.fft rules (cpsgrad/rules/numpy/fft.py): every transform with `n`/`s`,
`axis`/`axes` (negative too) and each `norm`, and the shifts. SPECS run on real inputs against
finite differences (tests/test_rules_arrays.py; a complex result is read through
np.real(y * C), both of its parts); KINKS run each transform on complex inputs (real ones for the
real-input transforms) against jax.grad of the jax.numpy.fft transcription, to 1e-12.
"""

import numpy as np

from tests.specs import Kink as K
from tests.specs import S, unused


def J():
    import jax.numpy

    return jax.numpy


C = 0.6 - 0.8j  # reads both parts of a complex result
_rng = np.random.default_rng(7)
X1, X2, X3 = _rng.normal(size=8), _rng.normal(size=(4, 6)), _rng.normal(size=(3, 4, 5))
X45 = _rng.normal(size=(4, 5))
Z1, Z2, Z3 = X1 + 1j * _rng.normal(size=8), X2 + 1j * _rng.normal(size=(4, 6)), X3 + 1j * _rng.normal(size=(3, 4, 5))
Z45 = X45 + 1j * _rng.normal(size=(4, 5))
W = _rng.normal(size=256)  # weights: the first elements, one per output element


def _weights(y):
    return np.reshape(W[: np.size(y)], np.shape(y))


SPECS = [
    S("fft: fft", lambda x, w: np.sum(np.real(np.fft.fft(x) * C) * w), [(8,)]),
    S("fft: fft n shorter", lambda x, w: np.sum(np.real(np.fft.fft(x, 5) * C) * w), [(8,)]),
    S("fft: fft n longer ortho", lambda x, w: np.sum(np.real(np.fft.fft(x, 11, norm="ortho") * C) * w), [(8,)]),
    S("fft: fft axis 0 keyword n", lambda x, w: np.sum(np.real(np.fft.fft(x, n=3, axis=0) * C) * w), [(4, 3)]),
    S("fft: ifft forward", lambda x, w: np.sum(np.real(np.fft.ifft(x, norm="forward") * C) * w), [(8,)]),
    S("fft: ifft n", lambda x, w: np.sum(np.real(np.fft.ifft(x, 6) * C) * w), [(8,)]),
    S("fft: fft2", lambda x, w: np.sum(np.real(np.fft.fft2(x) * C) * w), [(4, 6)]),
    S("fft: ifft2 s", lambda x, w: np.sum(np.real(np.fft.ifft2(x, s=(3, 8)) * C) * w), [(4, 6)]),
    S("fft: fftn", lambda x, w: np.sum(np.real(np.fft.fftn(x) * C) * w), [(3, 4, 5)]),
    S("fft: fftn axes negative", lambda x, w: np.sum(np.real(np.fft.fftn(x, axes=(0, -1)) * C) * w), [(3, 4, 5)]),
    S("fft: ifftn s", lambda x, w: np.sum(np.real(np.fft.ifftn(x, s=(5, 3)) * C) * w), [(3, 4, 5)]),
    S("fft: rfft", lambda x, w: np.sum(np.real(np.fft.rfft(x) * C) * w), [(8,)]),
    S("fft: rfft n odd", lambda x, w: np.sum(np.real(np.fft.rfft(x, 7) * C) * w), [(8,)]),
    S(
        "fft: rfft n longer ortho axis 0",
        lambda x, w: np.sum(np.real(np.fft.rfft(x, 6, axis=0, norm="ortho") * C) * w),
        [(4, 3)],
    ),
    S("fft: rfft2", lambda x, w: np.sum(np.real(np.fft.rfft2(x) * C) * w), [(4, 6)]),
    S("fft: rfftn s", lambda x, w: np.sum(np.real(np.fft.rfftn(x, s=(4, 6)) * C) * w), [(3, 4, 5)]),
    S("fft: rfftn odd last axis", lambda x, w: np.sum(np.real(np.fft.rfftn(x) * C) * w), [(3, 4, 5)]),
    S("fft: irfftn odd s", lambda x, w: np.sum(np.fft.irfftn(x, s=(3, 4, 9)) * w), [(3, 4, 5)]),
    S("fft: irfft", lambda x, w: np.sum(np.fft.irfft(x) * w), [(8,)]),
    S("fft: irfft n odd", lambda x, w: np.sum(np.fft.irfft(x, 9) * w), [(8,)]),
    S("fft: irfft n longer forward", lambda x, w: np.sum(np.fft.irfft(x, 20, norm="forward") * w), [(8,)]),
    S("fft: irfft2", lambda x, w: np.sum(np.fft.irfft2(x) * w), [(4, 6)]),
    S("fft: irfftn s axes", lambda x, w: np.sum(np.fft.irfftn(x, s=(3, 7), axes=(0, 1)) * w), [(3, 4, 5)]),
    S("fft: hfft", lambda x, w: np.sum(np.fft.hfft(x) * w), [(8,)]),
    S("fft: hfft n odd ortho", lambda x, w: np.sum(np.fft.hfft(x, 9, norm="ortho") * w), [(8,)]),
    S("fft: ihfft", lambda x, w: np.sum(np.real(np.fft.ihfft(x) * C) * w), [(8,)]),
    S("fft: ihfft n", lambda x, w: np.sum(np.real(np.fft.ihfft(x, 6) * C) * w), [(8,)]),
    S("fft: fftshift", lambda x, w: np.sum(np.real(np.fft.fftshift(x) * C) * w), [(4, 5)]),
    S("fft: ifftshift axes", lambda x, w: np.sum(np.fft.ifftshift(x, axes=0) * w), [(4, 5)]),
    S("fft: fftshift axes tuple", lambda x, w: np.sum(np.real(np.fft.fftshift(x, axes=(0, 1)) * C) * w), [(3, 4)]),
]

ZERO_CASES = [
    (op, unused(op), (X2,))
    for op in (
        np.fft.fft,
        np.fft.ifft,
        np.fft.fft2,
        np.fft.ifft2,
        np.fft.fftn,
        np.fft.ifftn,
        np.fft.rfft,
        np.fft.rfft2,
        np.fft.rfftn,
        np.fft.irfft,
        np.fft.irfft2,
        np.fft.irfftn,
        np.fft.hfft,
        np.fft.ihfft,
        np.fft.fftshift,
        np.fft.ifftshift,
    )
]

KINKS = [
    K(
        "fft: rfftn odd last axis of X3",
        lambda x: np.sum(np.real(np.fft.rfftn(x) * C) * _weights(np.fft.rfftn(x))),
        lambda x: J().sum(J().real(J().fft.rfftn(x) * C) * _weights(J().fft.rfftn(x))),
        (X3,),
    ),
    K(
        "fft: irfftn odd s of Z3",
        lambda x: np.sum(np.fft.irfftn(x, s=(3, 4, 9)) * _weights(np.fft.irfftn(x, s=(3, 4, 9)))),
        lambda x: J().sum(J().fft.irfftn(x, s=(3, 4, 9)) * _weights(J().fft.irfftn(x, s=(3, 4, 9)))),
        (Z3,),
    ),
    K(
        "fft: fft of Z1",
        lambda x: np.sum(np.real(np.fft.fft(x) * C) * _weights(np.real(np.fft.fft(x) * C))),
        lambda x: J().sum(J().real(J().fft.fft(x) * C) * _weights(J().real(J().fft.fft(x) * C))),
        (Z1,),
    ),
    K(
        "fft: fft n shorter of Z1",
        lambda x: np.sum(np.real(np.fft.fft(x, 5) * C) * _weights(np.real(np.fft.fft(x, 5) * C))),
        lambda x: J().sum(J().real(J().fft.fft(x, 5) * C) * _weights(J().real(J().fft.fft(x, 5) * C))),
        (Z1,),
    ),
    K(
        "fft: fft n longer ortho of Z1",
        lambda x: np.sum(
            np.real(np.fft.fft(x, 11, norm="ortho") * C) * _weights(np.real(np.fft.fft(x, 11, norm="ortho") * C))
        ),
        lambda x: J().sum(
            J().real(J().fft.fft(x, 11, norm="ortho") * C) * _weights(J().real(J().fft.fft(x, 11, norm="ortho") * C))
        ),
        (Z1,),
    ),
    K(
        "fft: fft axis 0 keyword n of Z2[:, :3]",
        lambda x: np.sum(np.real(np.fft.fft(x, n=3, axis=0) * C) * _weights(np.real(np.fft.fft(x, n=3, axis=0) * C))),
        lambda x: J().sum(
            J().real(J().fft.fft(x, n=3, axis=0) * C) * _weights(J().real(J().fft.fft(x, n=3, axis=0) * C))
        ),
        (Z2[:, :3],),
    ),
    K(
        "fft: ifft forward of Z1",
        lambda x: np.sum(
            np.real(np.fft.ifft(x, norm="forward") * C) * _weights(np.real(np.fft.ifft(x, norm="forward") * C))
        ),
        lambda x: J().sum(
            J().real(J().fft.ifft(x, norm="forward") * C) * _weights(J().real(J().fft.ifft(x, norm="forward") * C))
        ),
        (Z1,),
    ),
    K(
        "fft: ifft n of Z1",
        lambda x: np.sum(np.real(np.fft.ifft(x, 6) * C) * _weights(np.real(np.fft.ifft(x, 6) * C))),
        lambda x: J().sum(J().real(J().fft.ifft(x, 6) * C) * _weights(J().real(J().fft.ifft(x, 6) * C))),
        (Z1,),
    ),
    K(
        "fft: fft2 of Z2",
        lambda x: np.sum(np.real(np.fft.fft2(x) * C) * _weights(np.real(np.fft.fft2(x) * C))),
        lambda x: J().sum(J().real(J().fft.fft2(x) * C) * _weights(J().real(J().fft.fft2(x) * C))),
        (Z2,),
    ),
    K(
        "fft: ifft2 s of Z2",
        lambda x: np.sum(np.real(np.fft.ifft2(x, s=(3, 8)) * C) * _weights(np.real(np.fft.ifft2(x, s=(3, 8)) * C))),
        lambda x: J().sum(
            J().real(J().fft.ifft2(x, s=(3, 8)) * C) * _weights(J().real(J().fft.ifft2(x, s=(3, 8)) * C))
        ),
        (Z2,),
    ),
    K(
        "fft: fftn of Z3",
        lambda x: np.sum(np.real(np.fft.fftn(x) * C) * _weights(np.real(np.fft.fftn(x) * C))),
        lambda x: J().sum(J().real(J().fft.fftn(x) * C) * _weights(J().real(J().fft.fftn(x) * C))),
        (Z3,),
    ),
    K(
        "fft: fftn axes negative of Z3",
        lambda x: np.sum(
            np.real(np.fft.fftn(x, axes=(0, -1)) * C) * _weights(np.real(np.fft.fftn(x, axes=(0, -1)) * C))
        ),
        lambda x: J().sum(
            J().real(J().fft.fftn(x, axes=(0, -1)) * C) * _weights(J().real(J().fft.fftn(x, axes=(0, -1)) * C))
        ),
        (Z3,),
    ),
    K(
        "fft: ifftn s of Z3",
        lambda x: np.sum(np.real(np.fft.ifftn(x, s=(5, 3)) * C) * _weights(np.real(np.fft.ifftn(x, s=(5, 3)) * C))),
        lambda x: J().sum(
            J().real(J().fft.ifftn(x, s=(5, 3)) * C) * _weights(J().real(J().fft.ifftn(x, s=(5, 3)) * C))
        ),
        (Z3,),
    ),
    K(
        "fft: rfft of X1",
        lambda x: np.sum(np.real(np.fft.rfft(x) * C) * _weights(np.real(np.fft.rfft(x) * C))),
        lambda x: J().sum(J().real(J().fft.rfft(x) * C) * _weights(J().real(J().fft.rfft(x) * C))),
        (X1,),
    ),
    K(
        "fft: rfft n odd of X1",
        lambda x: np.sum(np.real(np.fft.rfft(x, 7) * C) * _weights(np.real(np.fft.rfft(x, 7) * C))),
        lambda x: J().sum(J().real(J().fft.rfft(x, 7) * C) * _weights(J().real(J().fft.rfft(x, 7) * C))),
        (X1,),
    ),
    K(
        "fft: rfft n longer ortho axis 0 of X2[:, :3]",
        lambda x: np.sum(
            np.real(np.fft.rfft(x, 6, axis=0, norm="ortho") * C)
            * _weights(np.real(np.fft.rfft(x, 6, axis=0, norm="ortho") * C))
        ),
        lambda x: J().sum(
            J().real(J().fft.rfft(x, 6, axis=0, norm="ortho") * C)
            * _weights(J().real(J().fft.rfft(x, 6, axis=0, norm="ortho") * C))
        ),
        (X2[:, :3],),
    ),
    K(
        "fft: rfft2 of X2",
        lambda x: np.sum(np.real(np.fft.rfft2(x) * C) * _weights(np.real(np.fft.rfft2(x) * C))),
        lambda x: J().sum(J().real(J().fft.rfft2(x) * C) * _weights(J().real(J().fft.rfft2(x) * C))),
        (X2,),
    ),
    K(
        "fft: rfftn s of X3",
        lambda x: np.sum(np.real(np.fft.rfftn(x, s=(4, 6)) * C) * _weights(np.real(np.fft.rfftn(x, s=(4, 6)) * C))),
        lambda x: J().sum(
            J().real(J().fft.rfftn(x, s=(4, 6)) * C) * _weights(J().real(J().fft.rfftn(x, s=(4, 6)) * C))
        ),
        (X3,),
    ),
    K(
        "fft: irfft of Z1",
        lambda x: np.sum(np.fft.irfft(x) * _weights(np.fft.irfft(x))),
        lambda x: J().sum(J().fft.irfft(x) * _weights(J().fft.irfft(x))),
        (Z1,),
    ),
    K(
        "fft: irfft n odd of Z1",
        lambda x: np.sum(np.fft.irfft(x, 9) * _weights(np.fft.irfft(x, 9))),
        lambda x: J().sum(J().fft.irfft(x, 9) * _weights(J().fft.irfft(x, 9))),
        (Z1,),
    ),
    K(
        "fft: irfft n longer forward of Z1",
        lambda x: np.sum(np.fft.irfft(x, 20, norm="forward") * _weights(np.fft.irfft(x, 20, norm="forward"))),
        lambda x: J().sum(J().fft.irfft(x, 20, norm="forward") * _weights(J().fft.irfft(x, 20, norm="forward"))),
        (Z1,),
    ),
    K(
        "fft: irfft2 of Z2",
        lambda x: np.sum(np.fft.irfft2(x) * _weights(np.fft.irfft2(x))),
        lambda x: J().sum(J().fft.irfft2(x) * _weights(J().fft.irfft2(x))),
        (Z2,),
    ),
    K(
        "fft: irfftn s axes of Z3",
        lambda x: np.sum(np.fft.irfftn(x, s=(3, 7), axes=(0, 1)) * _weights(np.fft.irfftn(x, s=(3, 7), axes=(0, 1)))),
        lambda x: J().sum(
            J().fft.irfftn(x, s=(3, 7), axes=(0, 1)) * _weights(J().fft.irfftn(x, s=(3, 7), axes=(0, 1)))
        ),
        (Z3,),
    ),
    K(
        "fft: hfft of Z1",
        lambda x: np.sum(np.fft.hfft(x) * _weights(np.fft.hfft(x))),
        lambda x: J().sum(J().fft.hfft(x) * _weights(J().fft.hfft(x))),
        (Z1,),
    ),
    K(
        "fft: hfft n odd ortho of Z1",
        lambda x: np.sum(np.fft.hfft(x, 9, norm="ortho") * _weights(np.fft.hfft(x, 9, norm="ortho"))),
        lambda x: J().sum(J().fft.hfft(x, 9, norm="ortho") * _weights(J().fft.hfft(x, 9, norm="ortho"))),
        (Z1,),
    ),
    K(
        "fft: ihfft of X1",
        lambda x: np.sum(np.real(np.fft.ihfft(x) * C) * _weights(np.real(np.fft.ihfft(x) * C))),
        lambda x: J().sum(J().real(J().fft.ihfft(x) * C) * _weights(J().real(J().fft.ihfft(x) * C))),
        (X1,),
    ),
    K(
        "fft: ihfft n of X1",
        lambda x: np.sum(np.real(np.fft.ihfft(x, 6) * C) * _weights(np.real(np.fft.ihfft(x, 6) * C))),
        lambda x: J().sum(J().real(J().fft.ihfft(x, 6) * C) * _weights(J().real(J().fft.ihfft(x, 6) * C))),
        (X1,),
    ),
    K(
        "fft: fftshift of Z45",
        lambda x: np.sum(np.real(np.fft.fftshift(x) * C) * _weights(x)),
        lambda x: J().sum(J().real(J().fft.fftshift(x) * C) * _weights(x)),
        (Z45,),
    ),
    K(
        "fft: ifftshift axes of X45",
        lambda x: np.sum(np.fft.ifftshift(x, axes=0) * _weights(np.fft.ifftshift(x, axes=0))),
        lambda x: J().sum(J().fft.ifftshift(x, axes=0) * _weights(J().fft.ifftshift(x, axes=0))),
        (X45,),
    ),
    K(
        "fft: fftshift axes tuple of Z2[:3, :4]",
        lambda x: np.sum(np.real(np.fft.fftshift(x, axes=(0, 1)) * C) * _weights(x)),
        lambda x: J().sum(J().real(J().fft.fftshift(x, axes=(0, 1)) * C) * _weights(x)),
        (Z2[:3, :4],),
    ),
]
