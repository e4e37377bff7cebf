"""Fusion: groups of forward statements whose backward is one operation.

The chain rule through each statement of a softmax written out in numpy,

    m = np.max(y); z = y - m; e = np.exp(z); s = np.sum(e); p = e / s

takes about fifteen numpy calls; the softmax's own adjoint is one expression,
`y_d += p * (p_d - sum(p_d * p))` (`cpsgrad_runtime.softmax_adjoint`). Where the softmax is
read only as the log of picked elements, `q = p[t]; l = np.log(q)` (a class's log-likelihood),
the group extends to them: `y_d += picked_log_softmax_adjoint(l_d, p, t, axis)` (`onehot - p`).
A log-sum-exp, `e = np.exp(z); s = np.sum(e); l = np.log(s)` (the normaliser of a log-softmax
written out, `z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))`), gets
`z_d += e * (l_d / s)` (`logsumexp_adjoint`). The forward statements stay as the user wrote
them; only their backward is replaced, and only where that is exact:

- the records are the table's own rules (a rule a user replaced is never fused);
- the intermediate values (`e`, `s`, with the shift `m` and `z`, with the pick `p` and `q`) are
  read by nothing outside the group (no other statement, branch test, continuation argument or
  closure);
- the sum, and the shift, broadcast back along the axes they reduced: no axis (everything),
  `keepdims=True`, or axis 0;
- the shift `m` is constant along the summed axes (a reduction over everything, or over the
  same axes as the sum), so the softmax does not depend on it: its adjoint is exactly zero
  (the chain rule through `np.max` gives zero up to rounding), as JAX's `stop_gradient` in
  `jax.nn.softmax` has it. A shift that is not private is left to its own rules and the group
  starts at `np.exp`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from cpsgrad.rules import math as math_rules
from cpsgrad.rules import operators
from cpsgrad.rules.numpy import binary, reductions, ufuncs
from cpsgrad.transforms import syntax
from cpsgrad.transforms.adjoint.records import Index, RuleCall

_EXP = (ufuncs.exp,)
_SUM = (reductions.sum_,)
_DIVIDE = (operators.truediv, binary.divide)
_SUBTRACT = (operators.sub, binary.subtract)
_EXTREMUM = (reductions.extremum,)
_LOG = (ufuncs.log, math_rules.log)
_EVERYTHING = ("everything",)
LAST = (*_DIVIDE, *_LOG)  # the templates a group ends with: a block without them has nothing to fuse


@dataclass
class Softmax:
    """One fused softmax: `members` (forward records, in program order) have one backward,
    `output`'s adjoint into `logits`' adjoint, along `axis` (code, or None for every axis).
    With `picked` (the record of `p[index]`), the output is `log(p[index])`: the log-likelihood
    of a class, whose adjoint needs neither the division by `p[index]` nor a full softmax
    backward (`picked_log_softmax_adjoint`)."""

    members: list
    output: object
    logits: cst.Name
    axis: str | None
    picked: object = None
    axis_node: cst.BaseExpression | None = None  # the axis as written (None: every axis)


@dataclass
class Logsumexp:
    """One fused log-sum-exp `output = log(sum(exp(logits)))`: `members` (the exp, the sum and
    the log records) have one backward, from the `exponentials` and their `total`."""

    members: list
    output: object
    logits: cst.Name
    exponentials: str
    total: str


def groups(records: list, private: Callable[[str, list], bool]) -> list[Softmax | Logsumexp]:
    """The groups with one backward among one block's backward records, none sharing a record.
    `private(version, members)` says whether nothing but `members` reads `version`."""
    by_target = {record.target: record for record in records if isinstance(record.target, str)}
    found: list[Softmax | Logsumexp] = []
    taken: set[int] = set()
    for record in records:
        group = _softmax(record, by_target, private)
        if group is not None:
            group = _picked_log(group, records, private) or group
        else:
            group = _logsumexp(record, by_target, private)
        if group is not None and not any(id(member) in taken for member in group.members):
            taken |= {id(member) for member in group.members}
            found.append(group)
    return found


def _logsumexp(log, by_target: dict, private) -> Logsumexp | None:
    """`l = log(s)` with `s = sum(e)` and `e = exp(z)`, `e` and `s` read by nothing else."""
    if not _is(log, _LOG):
        return None
    found = _summed_exponentials(_name(log.bound.get("x")), by_target)
    if found is None:
        return None
    exponential, total, logits, _ = found
    members = [exponential, total, log]
    if not (private(exponential.target, members) and private(total.target, members)):
        return None
    return Logsumexp(members, log, logits, exponential.target, total.target)


def _softmax(divide, by_target: dict, private) -> Softmax | None:
    """`p = e / s` with `s = sum(e)` and `e = exp(z)` (and `z = y - max(y)`: `_unshifted`),
    `e` and `s` read by nothing else."""
    if not _is(divide, _DIVIDE):
        return None
    found = _summed_exponentials(_name(divide.bound.get("y")), by_target)
    if found is None:
        return None
    exponential, total, logits, axis = found
    if exponential.target != _name(divide.bound.get("x")):
        return None
    members = [exponential, total, divide]
    if not (private(exponential.target, members) and private(total.target, members)):
        return None
    shifted = _unshifted(logits, by_target, axis, private, members)
    if shifted is not None:
        logits, shift_members = shifted
        members = shift_members + members
    if axis == _EVERYTHING:
        return Softmax(members, divide, logits, None)
    return Softmax(members, divide, logits, axis[0], axis_node=total.bound["axis"])


def _summed_exponentials(name: str | None, by_target: dict) -> tuple | None:
    """For `s = np.sum(e, ...)` named `name` with `e = np.exp(z)`: (the exp's record, the sum's,
    `z`, the summed axes); None when the sum has a dtype or does not broadcast back along what
    it reduced (`_reduced_axes`), or `z` is not a variable."""
    total = by_target.get(name)
    if not _is(total, _SUM) or "dtype" in total.bound:
        return None
    axis = _reduced_axes(total)
    exponential = by_target.get(_name(total.bound.get("a")))
    if axis is None or not _is(exponential, _EXP):
        return None
    logits = exponential.bound.get("x")
    return (exponential, total, logits, axis) if isinstance(logits, cst.Name) else None


def _picked_log(group: Softmax, records: list, private) -> Softmax | None:
    """The group extended by `q = p[index]; l = log(q)` when those read `p` and `q` alone."""
    probabilities = group.output.target
    for picked in records:
        if not isinstance(picked, Index) or _name(picked.container) != probabilities:
            continue
        for log in records:
            if _is(log, _LOG) and _name(log.bound.get("x")) == picked.target:
                members = [*group.members, picked, log]
                if private(probabilities, members) and private(picked.target, members):
                    return Softmax(members, log, group.logits, group.axis, picked, group.axis_node)
    return None


def _unshifted(shifted: cst.Name, by_target: dict, axis: tuple, private, members: list):
    """For `z = y - m` with `m = np.max(y, ...)` constant along `axis`, both read only by the
    group: (`y`, [the max's record, the subtraction's]); otherwise None."""
    subtract = by_target.get(shifted.value)
    if not _is(subtract, _SUBTRACT):
        return None
    logits, shift = subtract.bound.get("x"), _name(subtract.bound.get("y"))
    extremum = by_target.get(shift)
    if (
        not isinstance(logits, cst.Name)
        or not _is(extremum, _EXTREMUM)
        or _name(extremum.bound.get("a")) != logits.value
    ):
        return None
    shift_axis = _reduced_axes(extremum)
    if shift_axis is None or (shift_axis != _EVERYTHING and shift_axis != axis):
        return None
    extended = [extremum, subtract, *members]
    if not (private(shifted.value, extended) and private(shift, extended)):
        return None
    return logits, [extremum, subtract]


def _reduced_axes(record) -> tuple | None:
    """`_EVERYTHING` for a reduction over every axis; `(axis code,)` for one whose result
    broadcasts back along the axes it reduced (`keepdims=True`, or axis 0); else None."""
    axis = record.bound.get("axis")
    if axis is None or (isinstance(axis, cst.Name) and axis.value == "None"):
        return _EVERYTHING
    keepdims = record.bound.get("keepdims")
    kept = isinstance(keepdims, cst.Name) and keepdims.value == "True"
    leading = isinstance(axis, cst.Integer) and axis.evaluated_value == 0
    if not (kept or leading) or not _constant(axis):
        return None
    return (syntax.code(axis),)


def _constant(node: cst.BaseExpression) -> bool:
    """An axis written as a literal (`1`, `-1`, `(0, 1)`): the same code means the same axes."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, cst.Integer)
    if isinstance(node, cst.Tuple):
        return all(_constant(element.value) for element in node.elements)
    return False


def _is(record, templates: tuple) -> bool:
    return isinstance(record, RuleCall) and record.rule.template in templates


def _name(node) -> str | None:
    return node.value if isinstance(node, cst.Name) else None
