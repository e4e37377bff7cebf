"""Generator functions for the program generator (`programs(generators=True)`, forms.py).

A generator defined by a nested `def` in the drawn function, reading the function's variables (a
closure: they are never assigned again after it, as for every drawn closure), yielding in a loop and
once after it:

    def gen3(k):
        for j3 in range(k):
            yield <expression over the function's variables and j3>
        yield <expression>

consumed where it is defined, in one of the forms cpsgrad takes: `a = sum(gen3(K))`,
`a = sum(<e over v> for v in gen3(K))` (sometimes with an `if v > c` clause), `ys = [<e> for v in
gen3(K)]` then `a = ys[0] + ys[-1]`, `a = next(gen3(K))`, or a loop `for v in gen3(K): a = a + <e>`
(sometimes stopping early with `break`).
"""

from __future__ import annotations

from hypothesis import strategies as st

from cpsgrad.testing.generator.grammar import mentions

FLOAT, INT = "float", "int"
KINDS = ("local-generator",)


def kinds(builder) -> list[str]:
    fn = builder.function
    if not builder.forms.on("generators") or len(fn.scopes) != 1 or fn.loops:
        return []
    return ["local-generator"]


def _clean(builder, draw, fallback: str) -> str:
    """An expression without lambdas or comprehensions (a generator's body and a loop body over a
    generator take neither: cpsgrad refuses them there, with a rewrite)."""
    for _ in range(3):
        text = draw()
        if "lambda" not in text and " for " not in text:
            return text
    return fallback


def statement(builder, indent: str, kind: str, variable) -> list[str]:
    fn = builder.function
    name, index, item, result = builder.fresh("gen"), builder.fresh("j"), builder.fresh("v"), builder.fresh("a")
    depth = builder.max_depth - 1
    outer = fn.scopes
    try:
        fn.scopes = [*outer, {index: variable(INT)}]
        first = _clean(builder, lambda: builder.expression(depth), f"0.5 * {index}")
        fn.scopes = outer
        last = _clean(builder, lambda: builder.expression(depth), "1.5")
        fn.scopes = [*outer, {item: variable(FLOAT)}]
        element = _clean(builder, lambda: builder.expression(depth), item)
    finally:
        fn.scopes = outer
    if not mentions(element, item):
        element = f"{item} * ({element})"
    captures = tuple(v for scope in outer for v in scope if any(mentions(t, v) for t in (first, last, element)))
    fn.captured.update(captures)
    fn.appendable -= fn.captured
    builder.note("local-generator")
    lines = [
        f"{indent}def {name}(k):",
        f"{indent}    for {index} in range(k):",
        f"{indent}        yield {first}",
        f"{indent}    yield {last}",
    ]
    call = f"{name}({builder.trips()})"
    form = builder.draw(st.integers(0, 4))
    if form == 0:
        builder.note("local-generator-sum")
        lines.append(f"{indent}{result} = sum({call})")
    elif form == 1:
        builder.note("local-generator-expression")
        condition = f" if {item} > {builder.choose(['-0.5', '0.25', '1.0'])}" if builder.chance(3) else ""
        lines.append(f"{indent}{result} = 0.5 + sum({element} for {item} in {call}{condition})")
    elif form == 2:
        builder.note("local-generator-list-comprehension")
        listed = builder.fresh("ys")
        lines += [
            f"{indent}{listed} = [{element} for {item} in {call}]",
            f"{indent}{result} = {listed}[0] + {listed}[-1]",
        ]
    elif form == 3:
        builder.note("local-generator-next")
        lines.append(f"{indent}{result} = next({call})")
    else:
        builder.note("local-generator-loop")
        lines += [
            f"{indent}{result} = 0.0",
            f"{indent}for {item} in {call}:",
            f"{indent}    {result} = {result} + {element}",
        ]
        if builder.chance(3):
            builder.note("local-generator-loop-break")
            lines += [f"{indent}    if {result} > {builder.choose(['1.0', '2.5'])}:", f"{indent}        break"]
    fn.scopes[-1][result] = variable(FLOAT)
    return lines
