"""Derivative rules for the parts of numbers: `np.real` (and `x.real`, `np.real_if_close`),
`np.imag` (`x.imag`), `np.conj` and `np.angle`, on real and complex values.

On a real value `np.real` and `np.conj` are the identity, `np.imag` is zero and `np.angle` is 0 or
pi, neither with a gradient (JAX gives NaN for the angle's derivative at 0, as arctan2(0, 0)'s; a
step function's derivative is 0 there, as np.sign's). On a complex value the cotangents are
JAX's (docs/design.md, "Complex numbers"): a real result's cotangent `t` is real (its real part
is taken), and z_ct = t for `real`, -1j * t for `imag`, conj(t) for `conj`, and
-1j * conj(z) / |z|**2 * t for `angle` (NaN at 0, as JAX).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.rules.registry import not_differentiable, rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import is_complex, unbroadcast


@rule(np.real)
def real(val):
    y = np.real(val)
    y_d = yield y
    val_d += real_part_adjoint(y_d, val)


@rule(np.ndarray.real)
def ndarray_real(a):
    y = a.real
    y_d = yield y
    a_d += real_part_adjoint(y_d, a)


@rule(np.real_if_close)
def real_if_close(a, tol=100):
    y = np.real_if_close(a, tol)
    y_d = yield y
    a_d += real_if_close_adjoint(y_d, a, y)


@rule(np.conjugate)
def conjugate(x):
    y = np.conjugate(x)
    y_d = yield y
    x_d += conjugate_adjoint(y_d, x)


@rule(np.ndarray.conj)
@rule(np.ndarray.conjugate)
def ndarray_conjugate(a):
    y = a.conjugate()
    y_d = yield y
    a_d += conjugate_adjoint(y_d, a)


@rule(np.imag)
def imag(val):
    y = np.imag(val)
    y_d = yield y
    val_d += imaginary_part_adjoint(y_d, val)


@rule(np.ndarray.imag)
def ndarray_imag(a):
    y = a.imag
    y_d = yield y
    a_d += imaginary_part_adjoint(y_d, a)


@rule(np.angle)
def angle(z, deg=False):
    y = np.angle(z, deg)
    y_d = yield y
    z_d += angle_adjoint(y_d, z, deg)


# ---- helpers ----------------------------------------------------------------------------------


def real_part_adjoint(adjoint, x):
    """`np.real` backward: the identity on a real `x`; the real part of `adjoint` (the cotangent
    of a real result), as a complex value, on a complex `x`."""
    if is_zero(adjoint):
        return 0.0
    if is_complex(x):
        return _as_complex(np.real(adjoint), x)
    return unbroadcast(adjoint, x)


def real_if_close_adjoint(adjoint, x, y):
    """`np.real_if_close` backward: `np.real`'s where the result is real, the identity where it
    kept `x` complex."""
    if is_complex(x) and is_complex(y):
        return 0.0 if is_zero(adjoint) else unbroadcast(adjoint, x)
    return real_part_adjoint(adjoint, x)


def conjugate_adjoint(adjoint, x):
    """`np.conj` backward: conj(adjoint) on a complex `x`, the identity on a real one."""
    if is_zero(adjoint):
        return 0.0
    if is_complex(x):
        return _as_complex(np.conj(adjoint), x)
    return unbroadcast(adjoint, x)


def imaginary_part_adjoint(adjoint, x):
    """`np.imag` backward: -1j * Re(adjoint) on a complex `x`; 0 on a real one (no gradient)."""
    if is_zero(adjoint) or not is_complex(x):
        return 0.0
    return _as_complex(-1j * np.real(adjoint), x)


def angle_adjoint(adjoint, z, deg: bool):
    """`np.angle` backward: 0 on a real `z`; on a complex one Re(adjoint) times
    d/dx - i d/dy of atan2(y, x), -1j * conj(z) / |z|**2 (NaN at 0, as JAX)."""
    if is_zero(adjoint) or not is_complex(z):
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = -1j * np.conj(z) / (np.real(z) ** 2 + np.imag(z) ** 2)
    if deg:
        slope = slope * (180.0 / np.pi)
    return _as_complex(np.real(adjoint) * slope, z)


def _as_complex(contribution, x):
    """`contribution` in the type of the complex `x`: a Python complex, or `x`'s shape and dtype."""
    if type(x) is complex:
        return complex(contribution)
    return unbroadcast(np.asarray(contribution).astype(np.result_type(x), copy=False), x)


for _primitive in (np.iscomplex, np.iscomplexobj, np.isreal, np.isrealobj):  # booleans: no gradient
    not_differentiable(_primitive)
