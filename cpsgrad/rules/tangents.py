"""Forward mode's half of the rule table: how each primitive's tangent is made from its rule.

Forward mode (transforms/forward_mode/) puts each statement's tangent beside it. A primitive's
tangent comes from the same rule the reverse mode inlines, by the kind of map its derivative is:

- ELEMENTWISE: the Jacobian in each input is diagonal up to broadcasting (`x * y`, `np.exp`,
  `np.maximum`, `nn.relu`): the backward `x_d += unbroadcast(y_d * S, x)` read with the output's
  adjoint replaced by the input's tangent and the un-broadcasting dropped is the tangent's term
  `x_t * S` (a diagonal map is its own transpose). The rules `math` and numpy share
  (cpsgrad/rules/elementary.py) are all of this kind.
- LINEAR: the primitive is linear in its differentiable inputs taken together (`np.sum`,
  `np.reshape`, `x[i]`, `np.concatenate`, the FFTs): the tangent is the same call on the
  inputs' tangents, the other arguments (an axis, a shape, indices) as they are.
- MULTILINEAR: linear in each differentiable input on its own (`x @ y`, `np.dot`,
  `np.einsum`): the tangent is the sum, over the inputs with a tangent, of the call with that
  input replaced by its tangent.
- an explicit tangent function (`explicit`): what is none of these (softmax, log-sum-exp, the
  reductions to an extremum, `np.linalg.inv`, ...), written as plain Python over the output,
  the call's arguments and their tangents.

Anything else with a reverse rule gets its tangent from its pullback, one backward per
element of its output (cpsgrad/runtime/tangents.py `by_pullbacks`): exact, and slow for large
outputs. Which primitive is which is declared here, beside nothing else: the rules themselves
stay written once, in the shift style. A rule module may declare its own primitives' kinds
beside their rules (cpsgrad/rules/nn.py does).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable

import numpy as np

from cpsgrad.runtime import (
    augmented,
    closures,
    comprehensions,
    container_methods,
    containers,
    indexing,
    sequences,
    starred,
    writes,
)

ELEMENTWISE = "elementwise"
LINEAR = "linear"
MULTILINEAR = "multilinear"
EXPLICIT = "explicit"

_KINDS: dict[int, tuple[object, str]] = {}
_EXPLICIT: dict[int, tuple[object, Callable]] = {}


def declare(kind: str, *primitives) -> None:
    for primitive in primitives:
        _KINDS[id(primitive)] = (primitive, kind)


def explicit(*primitives) -> Callable:
    """Declare `function(y, <the rule's parameters>..., <p>_t=...)` the tangent of `primitives`:
    called with the output, the call's arguments bound to its rule's parameter names, and the
    tangent of each differentiable argument that has one (the others' are not passed)."""

    def record(function: Callable) -> Callable:
        function.__cpsgrad_source__ = True  # the reverse mode differentiates it as a user function (hvp)
        for primitive in primitives:
            _EXPLICIT[id(primitive)] = (primitive, function)
            _KINDS[id(primitive)] = (primitive, EXPLICIT)
        return function

    return record


def kind(rule) -> str | None:
    """The tangent kind of `rule`'s primitive, or None (then: by pullbacks)."""
    if getattr(rule.template, "__elementary__", None) is not None:
        return ELEMENTWISE
    found = _KINDS.get(id(rule.primitive))
    return found[1] if found is not None and found[0] is rule.primitive else None


def explicit_tangent(rule) -> Callable | None:
    found = _EXPLICIT.get(id(rule.primitive))
    return found[1] if found is not None and found[0] is rule.primitive else None


# ---- the declarations -----------------------------------------------------------------------

declare(
    ELEMENTWISE,
    operator.mul, operator.truediv, operator.pow, operator.neg, operator.pos,
    operator.mod, builtins.abs, builtins.pow, builtins.float, math.pow, math.fmod, math.copysign, math.hypot,
    math.erf, math.erfc, math.gamma, math.lgamma,
    np.add, np.subtract, np.multiply, np.divide, np.power, np.float_power, np.negative, np.positive,
    np.absolute, np.square, np.reciprocal, np.maximum, np.minimum, np.fmax, np.fmin, np.hypot, np.logaddexp,
    np.logaddexp2, np.clip, np.sinc, np.fmod, np.remainder, np.where, np.nan_to_num, np.float32, np.float64,
)

declare(
    LINEAR,
    np.ndarray.T, np.ndarray.astype, np.ndarray.copy, np.ndarray.cumsum, np.ndarray.diagonal,
    np.ndarray.flatten, np.ndarray.ravel, np.ndarray.real, np.ndarray.imag, np.ndarray.conj,
    np.ndarray.conjugate, np.ndarray.repeat, np.ndarray.reshape, np.ndarray.squeeze, np.ndarray.sum,
    np.ndarray.mean, np.ndarray.swapaxes, np.ndarray.take, np.ndarray.trace, np.ndarray.transpose,
    np.array, np.asarray, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_to, np.column_stack,
    np.concatenate, np.conjugate, np.copy, np.cumsum, np.diag, np.diagonal, np.diff, np.dsplit, np.dstack,
    np.expand_dims, np.flip, np.fliplr, np.flipud, np.gradient, np.hsplit, np.hstack, np.mean, np.moveaxis,
    np.ravel, np.real, np.imag, np.repeat, np.reshape, np.roll, np.rollaxis, np.rot90, np.split,
    np.array_split, np.squeeze, np.stack, np.sum, np.swapaxes, np.take, np.take_along_axis, np.tile,
    np.trace, np.transpose, np.tril, np.triu, np.vsplit, np.vstack, np.full, np.append, np.choose,
    np.select, np.nansum, np.nancumsum,
    np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft, np.fft.irfft,
    np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn, np.fft.hfft, np.fft.ihfft, np.fft.fftshift,
    np.fft.ifftshift,
    operator.add, operator.sub, operator.or_, builtins.dict,  # `+` also joins tuples, `|` merges dicts
    builtins.sum, builtins.list, builtins.tuple, builtins.reversed, builtins.zip, builtins.complex,
    dict.values, dict.items, dict.get, math.fsum,
    containers.appended, containers.removed, containers.as_sequence, containers.construct,
    comprehensions.inserted, container_methods.with_default, container_methods.without_item,
    container_methods.without_key, sequences.concatenation, sequences.inserted_at,
    sequences.repetition, sequences.reversed_list, starred.joined, starred.joined_tuple,
    indexing.index_concatenate, writes.checked_view, writes.view_after_write,
    writes.alias_after_write, writes.alias_after_update, augmented.in_place_operand,
)

declare(
    MULTILINEAR,
    operator.matmul, np.matmul, np.dot, np.ndarray.dot, np.inner, np.outer, np.vdot, np.kron, np.cross,
    np.tensordot, np.einsum, np.convolve, np.correlate,
)

_ = closures  # nested functions over differentiable values: refused by forward mode for now


# ---- explicit tangents ----------------------------------------------------------------------


@explicit(np.linalg.inv)
def inv(y, a, a_t):
    return -(y @ a_t @ y)


@explicit(np.linalg.solve)
def solve(y, a, b, a_t=None, b_t=None):
    # a y = b: a_t y + a y_t = b_t
    rhs = b_t if b_t is not None else np.zeros_like(y)
    if a_t is not None:
        rhs = rhs - a_t @ y
    return np.linalg.solve(a, rhs)


@explicit(np.linalg.det)
def det(y, a, a_t):
    return y * np.trace(np.linalg.solve(a, a_t), axis1=-2, axis2=-1)
