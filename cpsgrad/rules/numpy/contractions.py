"""Derivative rules for numpy's contractions: `np.einsum` (every subscript form), `np.tensordot`,
`np.kron` and `np.cross`. All are multilinear: each operand's adjoint is the contraction of the
output's adjoint with the other operands.
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
import string

import numpy as np

from cpsgrad.rules.registry import rule
from cpsgrad.runtime.adjoints import is_zero
from cpsgrad.runtime.broadcasting import unbroadcast

# ---- contractions -----------------------------------------------------------------------------


# `np.einsum(subscripts, *operands)` and the interleaved `np.einsum(x, [0, 1], y, [1, 2], [0, 2])`:
# a template cannot read `*args`, so it names ten argument slots; the backward tells operands from
# subscripts by position. `out=` is not taken (it writes in place): such a call has no rule.
@rule(np.einsum)
def einsum(a0, a1, a2=None, a3=None, a4=None, a5=None, a6=None, a7=None, a8=None, a9=None, *,
           optimize=False, dtype=None, order="K", casting="safe"):
    y = np.einsum(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, optimize=optimize, dtype=dtype, order=order, casting=casting)
    y_d = yield y
    a0_d += einsum_adjoint(0, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a1_d += einsum_adjoint(1, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a2_d += einsum_adjoint(2, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a3_d += einsum_adjoint(3, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a4_d += einsum_adjoint(4, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a5_d += einsum_adjoint(5, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a6_d += einsum_adjoint(6, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a7_d += einsum_adjoint(7, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a8_d += einsum_adjoint(8, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)
    a9_d += einsum_adjoint(9, y_d, (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9), optimize)


@rule(np.tensordot)
def tensordot(a, b, axes=2):
    y = np.tensordot(a, b, axes)
    y_d = yield y
    a_d += tensordot_left(y_d, a, b, axes)
    b_d += tensordot_right(y_d, a, b, axes)


@rule(np.kron)
def kron(a, b):
    y = np.kron(a, b)
    y_d = yield y
    a_d += kron_adjoint(y_d, a, b, 0)
    b_d += kron_adjoint(y_d, a, b, 1)


@rule(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    y = np.cross(a, b, axisa, axisb, axisc, axis)
    y_d = yield y
    a_d += cross_adjoint(y_d, a, b, axisa, axisb, axisc, axis, 0)
    b_d += cross_adjoint(y_d, a, b, axisa, axisb, axisc, axis, 1)


# ---- helpers ----------------------------------------------------------------------------------

_LABELS = string.ascii_uppercase + string.ascii_lowercase  # in ASCII order, as numpy sorts labels


def _sublist_labels(sublist) -> str:
    """An interleaved form's sublist (ints, Ellipsis) as subscript letters."""
    return "".join("..." if s is Ellipsis else _LABELS[int(s)] for s in sublist)


def einsum_arguments(arguments: tuple) -> tuple[list[str], str, list]:
    """(each operand's labels, the output's labels, the operands) of an einsum call's positional
    arguments, with ellipses spelt out as letters of their own and an implicit output made
    explicit (numpy's: the labels seen once, sorted, after the broadcast axes)."""
    arguments = list(arguments)
    while arguments and arguments[-1] is None:
        arguments.pop()
    if isinstance(arguments[0], str):
        text = arguments[0].replace(" ", "")
        operands = arguments[1:]
        inputs, arrow, output = text.partition("->")
        terms = inputs.split(",")
        explicit = output if arrow else None
    else:  # interleaved: operand, sublist, operand, sublist, ..., [output sublist]
        operands = arguments[0::2][: len(arguments) // 2]
        terms = [_sublist_labels(s) for s in arguments[1::2][: len(operands)]]
        explicit = _sublist_labels(arguments[-1]) if len(arguments) % 2 else None
    used = set("".join(terms) + (explicit or "")) - {"."}
    spare = [c for c in _LABELS if c not in used]
    broadcast = max(
        (np.ndim(o) - len(t.replace("...", "")) for o, t in zip(operands, terms, strict=True) if "..." in t), default=0
    )
    extra = "".join(spare[:broadcast])
    labels = []
    for operand, term in zip(operands, terms, strict=True):
        if "..." in term:
            count = np.ndim(operand) - len(term.replace("...", ""))
            term = term.replace("...", extra[broadcast - count:] if count else "")
        labels.append(term)
    if explicit is None:
        seen = "".join(t.replace("...", "") for t in terms)
        explicit = ("..." if any("..." in t for t in terms) else "") + "".join(
            sorted(c for c in set(seen) if seen.count(c) == 1)
        )
    return labels, explicit.replace("...", extra), operands


def einsum_adjoint(position: int, adjoint, arguments: tuple, optimize=False):
    """The adjoint of the positional argument `position` of `np.einsum(*arguments)`: the output's
    adjoint contracted with the other operands onto this operand's distinct labels; labels found
    nowhere else are broadcast, size-1 axes broadcast against others summed, and a label repeated
    in the operand (a diagonal, a trace) puts the adjoint on that diagonal, zero elsewhere."""
    if is_zero(adjoint):
        return 0.0
    labels, output, operands = einsum_arguments(arguments)
    string_form = isinstance(arguments[0], str)
    index = position - 1 if string_form else position // 2
    if (position == 0 if string_form else position % 2) or index >= len(operands):
        return 0.0  # a subscript string or sublist: not differentiable
    x = operands[index]
    mine = labels[index]
    distinct = "".join(dict.fromkeys(mine))
    sizes = {label: np.shape(x)[axis] for axis, label in enumerate(mine)}
    elsewhere = set(output).union(*(set(t) for i, t in enumerate(labels) if i != index))
    reached = "".join(label for label in distinct if label in elsewhere)
    others = [o for i, o in enumerate(operands) if i != index]
    spec = ",".join([output] + [t for i, t in enumerate(labels) if i != index]) + "->" + reached
    dtype = np.result_type(x, 1.0)
    contracted = np.asarray(np.einsum(spec, np.asarray(adjoint), *others, optimize=optimize))
    for axis, label in enumerate(reached):  # an axis of size 1 broadcast against a longer one
        if sizes[label] == 1 and contracted.shape[axis] != 1:
            contracted = contracted.sum(axis=axis, keepdims=True)
    expanded = contracted.reshape([sizes[label] if label in reached else 1 for label in distinct])
    full = np.broadcast_to(expanded, [sizes[label] for label in distinct])
    if len(distinct) == len(mine):
        gradient = np.transpose(full, [distinct.index(label) for label in mine])
    else:  # repeated labels: the adjoint on the diagonal they select
        gradient = np.zeros(np.shape(x), dtype)
        grids = np.indices(full.shape, sparse=True)
        gradient[tuple(grids[distinct.index(label)] for label in mine)] = full
    return unbroadcast(np.asarray(gradient, dtype), x)


def _tensordot_axes(axes, a_ndim: int, b_ndim: int) -> tuple[list[int], list[int]]:
    """`np.tensordot`'s `axes` (an int, or a pair of ints or sequences) as two lists of axes >= 0."""
    if isinstance(axes, (int, np.integer)):
        return list(range(a_ndim - int(axes), a_ndim)), list(range(int(axes)))
    first, second = axes
    first = [first] if isinstance(first, (int, np.integer)) else list(first)
    second = [second] if isinstance(second, (int, np.integer)) else list(second)
    return [int(i) % a_ndim for i in first], [int(i) % b_ndim for i in second]


def tensordot_left(adjoint, a, b, axes):
    """The adjoint of `a` in `np.tensordot(a, b, axes)`: the adjoint contracted with b's free axes."""
    if is_zero(adjoint):
        return 0.0
    a_axes, b_axes = _tensordot_axes(axes, np.ndim(a), np.ndim(b))
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    free_positions = list(range(len(a_free), len(a_free) + len(b_free)))
    summed = np.tensordot(adjoint, b, axes=(free_positions, b_free))  # a_free, then b's contracted axes in order
    met = [a_axes[b_axes.index(j)] for j in sorted(b_axes)]
    return unbroadcast(np.transpose(summed, np.argsort(a_free + met)), a)


def tensordot_right(adjoint, a, b, axes):
    """The adjoint of `b` in `np.tensordot(a, b, axes)`."""
    if is_zero(adjoint):
        return 0.0
    a_axes, b_axes = _tensordot_axes(axes, np.ndim(a), np.ndim(b))
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    # a's contracted axes in order, then b_free
    summed = np.tensordot(a, adjoint, axes=(a_free, list(range(len(a_free)))))
    met = [b_axes[a_axes.index(i)] for i in sorted(a_axes)]
    return unbroadcast(np.transpose(summed, np.argsort(met + b_free)), b)


def kron_adjoint(adjoint, a, b, which: int):
    """The adjoint of `a` (which 0) or `b` (which 1) in `np.kron(a, b)`: the adjoint read as
    blocks (a's axis, b's axis interleaved), multiplied by the other factor, summed over its axes."""
    if is_zero(adjoint):
        return 0.0
    ndim = max(np.ndim(a), np.ndim(b))
    a_shape = (1,) * (ndim - np.ndim(a)) + np.shape(a)
    b_shape = (1,) * (ndim - np.ndim(b)) + np.shape(b)
    blocks = np.reshape(adjoint, [size for pair in zip(a_shape, b_shape, strict=True) for size in pair])
    a_labels = _LABELS[:ndim]
    b_labels = _LABELS[ndim : 2 * ndim]
    block_labels = "".join(x + y for x, y in zip(a_labels, b_labels, strict=True))
    if which == 0:
        gradient = np.einsum(f"{block_labels},{b_labels}->{a_labels}", blocks, np.reshape(b, b_shape))
        return unbroadcast(np.reshape(gradient, np.shape(a)), a)
    gradient = np.einsum(f"{block_labels},{a_labels}->{b_labels}", blocks, np.reshape(a, a_shape))
    return unbroadcast(np.reshape(gradient, np.shape(b)), b)


def _three(vectors, size: int):
    """Vectors along the last axis as 3-vectors (a 2-vector's third component 0)."""
    if size == 3:
        return vectors
    return np.concatenate([vectors, np.zeros(vectors.shape[:-1] + (1,), vectors.dtype)], axis=-1)


def cross_adjoint(adjoint, a, b, axisa, axisb, axisc, axis, which: int):
    """The adjoint of `a` (which 0) or `b` (which 1) in `np.cross`: b x c_d for a, c_d x a for b,
    with 2-vectors as 3-vectors of third component 0 (a 2-vector by 2-vector product is the
    third component alone)."""
    if is_zero(adjoint):
        return 0.0
    if axis is not None:
        axisa = axisb = axisc = axis
    left = np.moveaxis(np.asarray(a), axisa, -1)
    right = np.moveaxis(np.asarray(b), axisb, -1)
    sizes = (left.shape[-1], right.shape[-1])
    upstream = np.asarray(adjoint)
    if sizes == (2, 2):  # the output is the third component alone
        upstream = np.stack([np.zeros_like(upstream), np.zeros_like(upstream), upstream], axis=-1)
    else:
        upstream = np.moveaxis(upstream, axisc, -1)
    left3, right3 = _three(left, sizes[0]), _three(right, sizes[1])
    if which == 0:
        gradient = np.cross(right3, upstream)[..., : sizes[0]]
        return unbroadcast(np.moveaxis(_summed_to(gradient, left.shape), -1, axisa), a)
    gradient = np.cross(upstream, left3)[..., : sizes[1]]
    return unbroadcast(np.moveaxis(_summed_to(gradient, right.shape), -1, axisb), b)


def _summed_to(gradient, shape: tuple):
    """`gradient` summed over the axes broadcasting added, to `shape` (before the axis moves back)."""
    extra = gradient.ndim - len(shape)
    if extra:
        gradient = gradient.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, size in enumerate(shape) if size == 1 and gradient.shape[i] != 1)
    return gradient.sum(axis=axes, keepdims=True) if axes else gradient
