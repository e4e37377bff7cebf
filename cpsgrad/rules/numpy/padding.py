"""The derivative rule for `np.pad`: every mode whose result is linear in the array (and in
`constant_values` / `end_values`, also differentiable), and `maximum` / `minimum`, piecewise.

Modes whose padding copies elements (constant, empty, edge, wrap, reflect and symmetric with the
default even reflect_type) are undone by padding an array of element numbers the same way and
adding the adjoint back at each number. The others (odd reflect_type, linear_ramp, mean, maximum,
minimum) are undone one axis at a time, last axis first, as numpy pads them one axis at a time
(each axis padded over the others' padded extent). `median` is refused: a median of an even
count averages two middle values whose ties JAX and numpy do not resolve alike.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast


@rule(np.pad)
def pad(array, pad_width, mode="constant", constant_values=0, end_values=0, *, stat_length=None, reflect_type="even"):
    y = np.pad(array, pad_width, mode, constant_values=constant_values)
    y_d = yield y
    array_g, constant_values_g, end_values_g = pad_adjoint(y_d, array, pad_width, mode, constant_values, end_values,
                                                           stat_length, reflect_type)
    array_d += array_g
    constant_values_d += constant_values_g
    end_values_d += end_values_g


# ---- helpers ----------------------------------------------------------------------------------

_COPYING = ("constant", "empty", "edge", "wrap", "reflect", "symmetric")
_EXTREMA = ("maximum", "minimum")
_BY_AXIS = ("reflect", "symmetric", "linear_ramp", "mean", *_EXTREMA)


def pad_adjoint(adjoint, x, pad_width, mode, constant_values, end_values, stat_length, reflect_type):
    """`np.pad` backward: (the array's adjoint, constant_values', end_values')."""
    if not isinstance(mode, str) or mode not in _COPYING + _BY_AXIS:
        raise UnsupportedError(
            None, f"np.pad with mode {mode!r}",
            "cpsgrad differentiates the modes constant, empty, edge, reflect, symmetric, wrap, linear_ramp, "
            "mean, maximum and minimum (median is piecewise, with ties between two middle values that "
            "have no agreed derivative; a function mode is not read): pad with one of those, or build "
            "the padding with np.median and np.concatenate",
        )
    if is_zero(adjoint):
        return 0.0, 0.0, 0.0
    adjoint = np.asarray(adjoint)
    ndim = np.ndim(x)
    if mode in _COPYING and reflect_type != "odd":
        array_adjoint, sides = _copied(adjoint, np.shape(x), pad_width, mode)
        array_adjoint = unbroadcast(array_adjoint, x)
        return array_adjoint, (unbroadcast(sides, constant_values) if mode == "constant" else 0.0), 0.0
    array_adjoint, ends = _by_axis(adjoint, np.asarray(x), _pairs(pad_width, ndim), mode, stat_length, reflect_type)
    return unbroadcast(array_adjoint, x), 0.0, (unbroadcast(ends, end_values) if mode == "linear_ramp" else 0.0)


def _copied(adjoint, shape, pad_width, mode):
    """The backward of a mode that copies elements: (the array's adjoint, the adjoint of each
    axis's (before, after) constants, for mode constant)."""
    numbers = np.arange(int(np.prod(shape))).reshape(shape)
    sides = 2 * len(shape)
    if mode in ("constant", "empty"):  # axis a's constants numbered -1 - 2a (before), -2 - 2a (after)
        padded = np.pad(numbers, pad_width, "constant", constant_values=-1 - np.arange(sides).reshape(-1, 2)) + sides
    else:
        padded = np.pad(numbers, pad_width, mode) + sides
    sums = np.bincount(np.ravel(padded), np.ravel(adjoint), minlength=numbers.size + sides)
    return sums[sides:].reshape(shape).astype(adjoint.dtype), sums[:sides][::-1].reshape(len(shape), 2)


def _pairs(value, ndim: int) -> list[tuple[int, int]]:
    """A width in every form np.pad takes (an int, (n,), (before, after), one pair per axis, or
    a dict from axis to an int or a pair) as one (before, after) per axis."""
    if isinstance(value, dict):
        pairs = [(0, 0)] * ndim
        for axis, width in value.items():
            before, after = np.broadcast_to(width, (2,)).tolist()
            pairs[axis % ndim] = (int(before), int(after))
        return pairs
    widths = np.asarray(value)
    if widths.size == 2 and widths.shape != (2, 1):
        widths = widths.ravel()
    return [(int(b), int(a)) for b, a in np.broadcast_to(widths, (ndim, 2)).tolist()]


def _by_axis(adjoint, values, pairs, mode, stat_length, reflect_type):
    """The backward of the modes padded one axis at a time, from the last axis to the first:
    (the array's adjoint, the adjoint of each axis's (before, after) end_values)."""
    stats = [(None, None)] * values.ndim if stat_length is None else _pairs(stat_length, values.ndim)
    stages = [values]  # the array before each axis's padding: the extrema read it
    if mode in _EXTREMA:
        for axis, widths in enumerate(pairs[:-1]):
            stages.append(np.pad(stages[-1], [widths if a == axis else (0, 0) for a in range(values.ndim)], mode,
                                 stat_length=None if stat_length is None else [stats[axis]] * values.ndim))
    ends = np.zeros((values.ndim, 2))
    for axis in reversed(range(values.ndim)):
        before, after = pairs[axis]
        if before == after == 0:
            continue
        moved = np.moveaxis(adjoint, axis, 0)
        length = values.shape[axis]
        if mode in _EXTREMA:
            moved = _extremum_adjoint(moved, np.moveaxis(stages[axis], axis, 0), before, after, mode, stats[axis])
        else:
            if mode == "linear_ramp":
                for side, end in enumerate(((1.0, 0.0), (0.0, 1.0))):
                    ramp = np.pad(np.zeros(length), (before, after), mode, end_values=end)
                    ends[axis, side] = np.sum(np.tensordot(ramp, moved, 1))
                options = {"end_values": 0.0}
            elif mode == "mean":
                options = {"stat_length": None if stat_length is None else (stats[axis], (1, 1))}
            else:
                options = {"reflect_type": reflect_type}
            matrix = np.pad(np.eye(length), ((before, after), (0, 0)), mode, **options)  # column j: e_j padded
            moved = np.tensordot(matrix.T, moved, 1).astype(adjoint.dtype, copy=False)
        adjoint = np.moveaxis(moved, 0, axis)
    return adjoint, ends


def _extremum_adjoint(adjoint, values, before, after, mode, stat):
    """One axis (axis 0) of mode maximum/minimum backward: each side's padded adjoint, summed,
    shared equally among the tied extrema of that side's window (as JAX's max)."""
    length = values.shape[0]
    result = adjoint[before : before + length].copy()
    for side, (count, window) in enumerate(((before, stat[0]), (after, stat[1]))):
        if count == 0:
            continue
        window = length if window is None else min(int(window), length)
        part = slice(0, window) if side == 0 else slice(length - window, length)
        padded = adjoint[:before] if side == 0 else adjoint[before + length :]
        chosen = values[part]
        extreme = np.max(chosen, axis=0) if mode == "maximum" else np.min(chosen, axis=0)
        hit = chosen == extreme
        result[part] += (hit / np.sum(hit, axis=0)) * np.sum(padded, axis=0)
    return result
