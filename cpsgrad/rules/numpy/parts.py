"""Derivative rules for the parts of numbers, on real values: `np.real` (and `x.real`,
`np.real_if_close`) and `np.conj` are the identity, `np.imag` (`x.imag`) is zero and `np.angle`
is 0 or pi, neither with a gradient (JAX gives NaN for the angle's derivative at 0, as
arctan2(0, 0)'s; a step function's derivative is 0 there, as np.sign's).

Complex values are not differentiated yet: a complex value reaching one of these is refused
(its real and imaginary parts would need an adjoint each), never given a real-valued answer.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import refuse_complex, unbroadcast


@rule(np.real)
def real(val):
    y = np.real(val)
    y_d = yield y
    val_d += real_part_adjoint(y_d, val, "np.real")


@rule(np.ndarray.real)
def ndarray_real(a):
    y = a.real
    y_d = yield y
    a_d += real_part_adjoint(y_d, a, "x.real")


@rule(np.real_if_close)
def real_if_close(a, tol=100):
    y = np.real_if_close(a, tol)
    y_d = yield y
    a_d += real_part_adjoint(y_d, a, "np.real_if_close")


@rule(np.conjugate)
def conjugate(x):
    y = np.conjugate(x)
    y_d = yield y
    x_d += real_part_adjoint(y_d, x, "np.conjugate")


@rule(np.ndarray.conj)
@rule(np.ndarray.conjugate)
def ndarray_conjugate(a):
    y = a.conjugate()
    y_d = yield y
    a_d += real_part_adjoint(y_d, a, "x.conjugate")


@rule(np.imag)
def imag(val):
    y = np.imag(val)
    y_d = yield y
    val_d += constant_part_adjoint(y_d, val, "np.imag")


@rule(np.ndarray.imag)
def ndarray_imag(a):
    y = a.imag
    y_d = yield y
    a_d += constant_part_adjoint(y_d, a, "x.imag")


@rule(np.angle)
def angle(z, deg=False):
    y = np.angle(z, deg)
    y_d = yield y
    z_d += constant_part_adjoint(y_d, z, "np.angle")


# ---- helpers ----------------------------------------------------------------------------------


def real_part_adjoint(adjoint, x, name: str):
    """`np.real`/`np.conj` backward on a real `x`: the identity."""
    refuse_complex(x, f"{name} of a complex value")
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(adjoint, x)


def constant_part_adjoint(adjoint, x, name: str):
    """`np.imag`/`np.angle` backward on a real `x`: no gradient (0 everywhere; the angle's jump
    at 0 has derivative 0 as JAX's)."""
    refuse_complex(x, f"{name} of a complex value")
    return 0.0
