"""Calls of cpsgrad's numpy/scipy rules for the program generator (forms.py; `programs(rules=True)`).

The calls are rule_calls.py's catalogue: elementwise ufuncs on their domains, reductions along an
axis and with keepdims, scans, sorting, arrangements, padding, indexing by integers, einsum,
tensordot and kron, convolution, linear algebra on well-conditioned matrices, fft, scipy.special
and scipy.stats.norm. They are drawn in two ways:

- inside expressions (`vector_call`, `matrix_call`, `float_call`, which generator/arrays.py offers
  among its vector, matrix and reduction forms), so they compose with everything else the program
  draws: loops, branches, helpers, closures, the final return; their operands are any of the
  program's vector, matrix and float expressions;
- as a statement (`rule`), whose result is discarded (`unused = np.linalg.det(...)`), used twice
  (`a = np.cumsum(w); b = a * a`), or passed twice to a generated helper with two parameters of
  its kind (`b = h0(a, a)`).

`import scipy.special` (and stats, linalg, signal) go at the top of the module where a call needs them.
"""

from __future__ import annotations

from hypothesis import strategies as st

from cpsgrad.testing import rule_calls
from cpsgrad.testing.rule_calls import CALLS, FLOAT, MATRIX, VECTOR

KINDS = ("rule",)


def kinds(builder) -> list[str]:
    return ["rule"] if builder.forms.on("rules") and builder.numpy and builder.has_vectors() else []


def call(builder, kind: str, depth: int) -> str:
    """A drawn call of the catalogue whose value is of `kind` (FLOAT, VECTOR or MATRIX), its
    operands drawn `depth` deep."""
    construct, family, template = builder.choose(list(CALLS[kind]))
    builder.note("rules", f"rules-{family}", construct)
    for module in rule_calls.SCIPY_MODULES:
        if module + "." in template:
            builder.forms.need(module)
    depth = max(depth, 0)

    def operand(operand_kind: str) -> str:
        if operand_kind == VECTOR:
            return builder.vector_expression(depth)
        if operand_kind == MATRIX:
            return builder.matrix_expression(depth)
        return builder.expression(depth)

    return rule_calls.fill(template, operand)


def vector_call(builder, depth: int) -> str:
    return call(builder, VECTOR, depth)


def matrix_call(builder, depth: int) -> str:
    return call(builder, MATRIX, depth)


def float_call(builder, depth: int) -> str:
    return call(builder, FLOAT, depth)


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    """`rule`: a call's result discarded, used twice, or passed twice to a helper."""
    fn = builder.function
    result = builder.choose([VECTOR, MATRIX, FLOAT])
    value = call(builder, result, builder.max_depth - 1)
    twice = [
        h for h in builder.helpers if h.name != fn.name and h.kinds and h.kinds.count(result) >= 2
    ]
    form = builder.draw(st.integers(0, 3 if twice else 2))
    if form == 0:
        builder.note("rules-discarded")
        return [f"{indent}{builder.fresh('unused')} = {value}"]
    name = builder.fresh("a" if result == FLOAT else "w" if result == VECTOR else "m")
    fn.scopes[-1][name] = variable(result)
    lines = [f"{indent}{name} = {value}"]
    used = builder.fresh("a")
    if form == 3:
        builder.note("rules-passed-twice", "repeated-argument")
        helper = builder.choose(twice)
        positions = [p for p, k in enumerate(helper.kinds) if k == result][:2]
        arguments = [name if p in positions else builder.argument(k, builder.max_depth - 1)
                     for p, k in enumerate(helper.kinds)]
        lines.append(f"{indent}{used} = {helper.name}({', '.join(arguments)})")
        fn.scopes[-1][used] = variable(helper.returns)
        return lines
    builder.note("rules-used-twice")
    if result == FLOAT:
        lines.append(f"{indent}{used} = {name} * {name}")
        fn.scopes[-1][used] = variable(FLOAT)
    elif form == 1:
        lines.append(f"{indent}{used} = np.sum({name} * {name})")
        fn.scopes[-1][used] = variable(FLOAT)
    else:
        lines.append(f"{indent}{used} = {name} {builder.choose(['+', '*'])} {name}")
        fn.scopes[-1][used] = variable(result)
    return lines
