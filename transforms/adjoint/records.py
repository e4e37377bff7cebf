"""The backward records: what the backward of one forward statement needs, one type per kind of
statement. The forward pass (forward.py) makes them; backward.py writes each one's backward for
the Python tier. Records hold renamed operands (libcst atoms) and version names only, no code: a
second tier (compiled, forward mode) renders the same records its own way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from cpsgrad.rules.registry import Rule


@dataclass
class Record:
    """A forward statement with a backward: its target version, the adjoints its active operands
    accumulate into, where its forward lines are in the block's output, and the user's line."""

    target: str | list[str] = ""
    adjoints: dict[str, str] = field(default_factory=dict)  # active operand version -> adjoint
    lines: range = range(0)  # the forward's lines in the block's output
    origin: object = None  # the user's statement's SourceLocation (Lines: provenance)

    def source(self, atom) -> str | None:
        """The adjoint an operand accumulates into, or None when it is inactive or constant."""
        return self.adjoints.get(atom.value) if isinstance(atom, cst.Name) else None


@dataclass
class Copy(Record):
    """`y = x`."""

    value: cst.BaseExpression | None = None


@dataclass
class Display(Record):
    """`y = (a, b)` / `[a, b]`."""

    elements: list = field(default_factory=list)


@dataclass
class DictDisplay(Record):
    """`y = {k: a, ...}`: keys are not differentiable."""

    values: list = field(default_factory=list)
    keys: list = field(default_factory=list)


@dataclass
class Field(Record):
    """`y = p.W`: a field of a NamedTuple or a dataclass instance."""

    owner: cst.BaseExpression | None = None
    name: str = ""


@dataclass
class Index(Record):
    """`y = x[i]`, `x[i:j, k]`: `index` is the subscript's elements (cst.Index / cst.Slice)."""

    container: cst.BaseExpression | None = None
    index: list = field(default_factory=list)


@dataclass
class Unpack(Record):
    """`a, b = t`: `target` is the list of the new versions."""

    value: cst.BaseExpression | None = None


@dataclass
class RuleCall(Record):
    """A primitive with a derivative rule: the rule and the call's atoms bound to its parameters."""

    rule: Rule | None = None
    bound: dict = field(default_factory=dict)


@dataclass
class Write(Record):
    """`x_1 = cpsgrad_runtime.written(x, key, v)` (transforms/writes.py): `x_1` is `x`, changed in
    place; `saved` names what the write overwrote, which its backward restores."""

    container: cst.BaseExpression | None = None
    key: cst.BaseExpression | None = None
    value: cst.BaseExpression | None = None
    saved: str = ""
    update: bool = False  # `updated(x, v)` of `x op= y` into a caller's array: all of x, or a number rebound


@dataclass
class AttributeWrite(Record):
    """`obj_1 = cpsgrad_runtime.set_attribute(obj, 'w', v)` (transforms/attributes.py)."""

    container: cst.BaseExpression | None = None
    name: cst.BaseExpression | None = None
    value: cst.BaseExpression | None = None
    saved: str = ""


@dataclass
class Softmax(Record):
    """A softmax written out (transforms/fusion.py), one backward: `target` is its output;
    with `index`, the output is `log(probabilities[index])`."""

    logits: cst.BaseExpression | None = None
    axis: cst.BaseExpression | None = None  # the axis as written, or the name None: every axis
    statements: list = field(default_factory=list)  # the fused statements' targets
    probabilities: cst.BaseExpression | None = None
    index: cst.BaseExpression | None = None


@dataclass
class Logsumexp(Record):
    """`log(sum(exp(logits)))` written out (transforms/fusion.py), one backward."""

    logits: cst.BaseExpression | None = None
    exponentials: str = ""
    total: str = ""
    statements: list = field(default_factory=list)


def index_node(record: Index) -> cst.BaseExpression:
    """The index of an `Index` record as an expression: `i`, or `(slice(None, None, None), j)`."""
    parts = [i.value if isinstance(i, cst.Index) else _slice_call(i) for i in record.index]
    return parts[0] if len(parts) == 1 else cst.Tuple([cst.Element(part) for part in parts])


def _slice_call(index: cst.Slice) -> cst.Call:
    bounds = (index.lower, index.upper, index.step)
    return cst.Call(cst.Name("slice"), [cst.Arg(cst.Name("None") if bound is None else bound) for bound in bounds])
