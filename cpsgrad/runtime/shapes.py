"""The adjoints of shape changes: reshape, transpose, axis moves, `np.array` of a sequence,
concatenation and stacking, splitting, `np.linspace`.
"""

from __future__ import annotations

import numpy as np

from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime import device as _device
from cpsgrad.runtime.adjoints import SequenceAdjoint, is_zero, item
from cpsgrad.runtime.broadcasting import unbroadcast


def reshape_adjoint(adjoint, x, order="C"):
    """The adjoint of `x` from that of a reshaped `x` (reshape, ravel, squeeze, expand_dims)."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.reshape(adjoint, np.shape(x), order=order), x)


def transpose_adjoint(adjoint, x, axes):
    """`np.transpose(x, axes)` backward: the inverse permutation (axes None reverses them)."""
    if is_zero(adjoint):
        return 0.0
    inverse = None if axes is None else np.argsort([int(a) % np.ndim(x) for a in axes])
    return unbroadcast(np.transpose(adjoint, inverse), x)


def swapaxes_adjoint(adjoint, x, axis1, axis2):
    """`np.swapaxes` backward: the same swap."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.swapaxes(adjoint, axis1, axis2), x)


def moveaxis_adjoint(adjoint, x, source, destination):
    """`np.moveaxis` backward: the axes moved back."""
    if is_zero(adjoint):
        return 0.0
    return unbroadcast(np.moveaxis(adjoint, destination, source), x)


def array_adjoint(adjoint, x, result):
    """The adjoint of `x` from that of `result`, an array made from it (`np.array`, `np.asarray`,
    `astype`, copies and casts): cast back to `x`'s dtype; for a nested tuple or list of floats and
    arrays, a `SequenceAdjoint` of their adjoints; zero when `result` is not a float array."""
    if is_zero(adjoint) or (result.dtype if type(result) is DeviceArray else np.asarray(result).dtype).kind not in "fc":
        return 0.0
    return unbroadcast(adjoint, x)


def _parts(adjoint, sizes: list[int], axis: int) -> list:
    """`adjoint` cut along `axis` into consecutive pieces of `sizes`."""
    if type(adjoint) is DeviceArray:
        return _device.pieces(adjoint, sizes, axis)
    return np.split(adjoint, np.cumsum(sizes)[:-1], axis=axis)


def concatenate_adjoint(adjoint, arrays, axis):
    """`np.concatenate(arrays, axis)` backward: each array's piece (axis None: of the flat result)."""
    if is_zero(adjoint):
        return 0.0
    if axis is None:
        pieces = _parts(adjoint, [np.size(a) for a in arrays], 0)
    else:
        pieces = _parts(adjoint, [np.shape(a)[axis] for a in arrays], axis)
    return SequenceAdjoint(unbroadcast(np.reshape(p, np.shape(a)), a) for p, a in zip(pieces, arrays, strict=True))


def stack_adjoint(adjoint, arrays, axis):
    """`np.stack(arrays, axis)` backward: each array's slice along the new axis."""
    if is_zero(adjoint):
        return 0.0
    slices = np.moveaxis(adjoint, axis, 0)
    return SequenceAdjoint(unbroadcast(s, a) for s, a in zip(slices, arrays, strict=True))


def hstack_adjoint(adjoint, arrays):
    """`np.hstack` backward: pieces along axis 0 for 1-d inputs, axis 1 otherwise."""
    if is_zero(adjoint):
        return 0.0
    shapes = [np.shape(np.atleast_1d(a)) for a in arrays]
    axis = 0 if len(shapes[0]) == 1 else 1
    pieces = _parts(adjoint, [s[axis] for s in shapes], axis)
    return SequenceAdjoint(unbroadcast(np.reshape(p, np.shape(a)), a) for p, a in zip(pieces, arrays, strict=True))


def vstack_adjoint(adjoint, arrays):
    """`np.vstack` backward: pieces along axis 0 of the inputs made at least 2-d."""
    if is_zero(adjoint):
        return 0.0
    pieces = _parts(adjoint, [np.shape(np.atleast_2d(a))[0] for a in arrays], 0)
    return SequenceAdjoint(unbroadcast(np.reshape(p, np.shape(a)), a) for p, a in zip(pieces, arrays, strict=True))


def split_adjoint(adjoint, pieces, x, axis):
    """`np.split(x, ..., axis)` backward: the pieces' adjoints (zeros where symbolic) joined again."""
    if is_zero(adjoint):
        return 0.0
    parts = [np.zeros(np.shape(p), np.asarray(p).dtype) if is_zero(item(adjoint, i)) else item(adjoint, i) for i, p in enumerate(pieces)]
    return unbroadcast(np.concatenate(parts, axis=axis), x)


def linspace_adjoint(adjoint, start, stop, num, endpoint, axis, part: str):
    """`np.linspace` backward for `part` ("start" or "stop"): the adjoint weighted by each
    sample's distance from the other end."""
    if is_zero(adjoint):
        return 0.0
    fraction = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    weight = 1.0 - fraction if part == "start" else fraction
    weighted = np.sum(np.moveaxis(adjoint, axis, -1) * weight, axis=-1)
    return unbroadcast(weighted, start if part == "start" else stop)
