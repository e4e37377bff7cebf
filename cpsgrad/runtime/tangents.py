"""What forward-mode programs call (transforms/forward_mode/): zero tangents and tangents fitted to
their primal's shape and dtype.

A tangent has its primal's structure: a float's is a float, a float array's an array of its
shape and dtype, a tuple's, list's or dict's the same container of its elements' tangents. An
integer or boolean value's tangent is 0.0 (an int array's, zeros of float64), as a value that
does not vary; anything else (a string, None, an object) has the tangent None.
"""

from __future__ import annotations

import numpy as np

_ndarray = np.ndarray


def zero_tangent(value):
    """The tangent of a value that does not depend on the inputs."""
    kind = type(value)
    if kind is float or kind is int or kind is bool:
        return 0.0
    if kind is _ndarray:
        return np.zeros(value.shape, value.dtype if value.dtype.kind in "fc" else np.float64)
    if kind is complex:
        return 0j
    if isinstance(value, np.generic):
        return value.dtype.type(0) if value.dtype.kind in "fc" else 0.0
    if isinstance(value, tuple):
        zeros = [zero_tangent(v) for v in value]
        return kind(*zeros) if hasattr(value, "_fields") else tuple(zeros)
    if kind is list:
        return [zero_tangent(v) for v in value]
    if kind is dict:
        return {k: zero_tangent(v) for k, v in value.items()}
    return None


def fitted(tangent, like):
    """`tangent` in the shape and dtype of its primal `like`: a term of an elementwise rule has the
    shape of the inputs it came from (`y = x + c` of a scalar `x` and an array `c` has the tangent
    `x_t`), the primal the broadcast shape."""
    kind = type(like)
    if kind is not _ndarray:
        if kind is type(tangent):  # a number's, a numpy scalar's: the common case
            return tangent
        if kind is float and isinstance(tangent, np.generic):
            return float(tangent)
        if isinstance(like, np.generic) and like.dtype.kind in "fc" and not isinstance(tangent, _ndarray):
            return like.dtype.type(tangent)
        return tangent
    if type(tangent) is _ndarray and tangent.shape == like.shape:
        if tangent.dtype == like.dtype or like.dtype.kind not in "fc":
            return tangent
        return tangent.astype(like.dtype)
    result = np.empty(like.shape, like.dtype if like.dtype.kind in "fc" else np.float64)
    result[...] = tangent
    return result


def fresh(tangent, like):
    """`fitted(tangent, like)` never the same array as `tangent`: `y = x + 1.0` makes a new array `y`,
    so its tangent must not be `x`'s (a write into `y` would change `x`'s tangent)."""
    fit = fitted(tangent, like)
    return fit.copy() if fit is tangent and type(fit) is _ndarray else fit


def broadcast_like(value, like):
    """`value` broadcast to the shape of the array `like` (a read-only view; anything else as it
    is). An elementwise rule's backward sums its result back to its input's shape, inside helpers
    too (`select(y_d, condition, x)`); read forward with the input spread to the output's shape,
    that sum has nothing to do and the tangent keeps the output's shape."""
    if type(like) is _ndarray and np.shape(value) != like.shape:
        return np.broadcast_to(value, like.shape)
    return value
