"""Writes in place for the program generator (`programs(mutation=True)`, cpsgrad/testing/generator/).

A statement drawn here makes a buffer the function owns (`b3 = np.zeros(3)`, `w.copy()`, ...)
or writes into one in one of the forms cpsgrad differentiates: an element, a slice, a mask, an
integer array with a repeated position, `b[i] += e`, `b *= w`, a loop filling it from its own
previous element, `b.fill(e)`, `np.copyto(b, w)`, `out=b`, `np.add.at`/`np.subtract.at`/
`np.multiply.at` (repeated indices, an int, a slice, a mask), `np.put` (repeated positions, a
mode, v shorter than the indices), `np.putmask` and `np.place` (v repeated), a slot of `list([b, w])` (the list
copied, the original still read), a nested helper writing into the buffer in a loop that reads it
first (the next pass reads what the call wrote: refused), a module-level helper writing into it
that the caller goes on reading (for its effect, for its result, in a loop: differentiated
through the helper's variant, transforms/written_arguments.py), the buffer stored in a dict and read
back through it after a write or `b *= e` (refused) or only before it, maybe with a list extended by a
tuple display after it (that `+=`'s rewrite once lost the refusal). Buffers are vectors like any other
afterwards, so later statements read them, view them, alias them (`w5 = b3`, `w6 = b3[::-1]`)
and pass them to helpers; a write after such an alias is read again is one cpsgrad refuses
(transforms/analysis/aliasing.py), and check_program accepts exactly that refusal. Rarely the write is
into the vector argument itself (refused the same way).
"""

from __future__ import annotations

from hypothesis import strategies as st

VECTOR = "vector"
LENGTH = 3


def write_statement(builder, indent: str, variable) -> list[str]:
    """One buffer or one write (the caller has checked that vectors exist); `variable` makes a
    variable of a kind (generator.grammar.Variable)."""
    builder.variable = variable
    fn = builder.function
    buffers = [b for b in fn.variables(VECTOR) if b in builder.buffers and b not in fn.captured]
    if not buffers or builder.chance(2):
        made = _buffer(builder, indent)  # a new buffer, written at once
        return made + _write(builder, indent, builder.last_buffer)
    target = builder.choose(buffers)
    if builder.draw(st.integers(0, 15)) == 0 and "v" in fn.variables(VECTOR) and fn.name != "f":
        # a helper writing into its vector parameter: the caller's, refused at the call where the
        # caller reads it again (the entry's own argument would change between check_grad's calls)
        builder.note("write-argument")
        target = "v"
    return _write(builder, indent, target)


def _write(builder, indent: str, target: str) -> list[str]:
    fn = builder.function
    form = builder.draw(st.integers(0, 15))
    scalar = builder.expression(builder.max_depth - 1)
    index = builder.draw(st.integers(-LENGTH, LENGTH - 1))
    if form == 0:
        builder.note("write", "write-item")
        return [f"{indent}{target}[{index}] = {scalar}"]
    if form == 1:
        builder.note("write", "write-slice")
        low = builder.draw(st.integers(0, LENGTH - 1))
        high = builder.draw(st.integers(low + 1, LENGTH))
        value = builder.vector_expression(builder.max_depth - 1)
        return [f"{indent}{target}[{low}:{high}] = {value}[{low}:{high}]"]
    if form == 2:
        builder.note("write", "write-augmented-item")
        operator = builder.choose(["+=", "-=", "*="])
        return [f"{indent}{target}[{index}] {operator} {scalar}"]
    if form == 3:
        builder.note("write", "augmented-array")
        operator = builder.choose(["+=", "-=", "*="])
        return [f"{indent}{target} {operator} {builder.vector_expression(builder.max_depth - 1)}"]
    if form == 4:
        builder.note("write", "write-repeated-index")
        return [f"{indent}{target}[np.array([0, 2, 0])] = {builder.vector_expression(builder.max_depth - 1)}"]
    if form == 5:
        builder.note("write", "write-mask")
        return [f"{indent}{target}[{target} > 0.25] = {scalar}"]
    if form == 6:
        builder.note("write", "write-loop")
        counter = builder.fresh("j")
        return [
            f"{indent}for {counter} in range(1, {LENGTH}):",
            f"{indent}    {target}[{counter}] = {target}[{counter} - 1] * 0.5 + {scalar}",
        ]
    if form == 7:
        builder.note("write", "write-fill")
        return [f"{indent}{target}.fill({scalar})"]
    if form == 8:
        builder.note("write", "write-copyto")
        return [f"{indent}np.copyto({target}, {builder.vector_expression(builder.max_depth - 1)})"]
    if form == 9:
        builder.note("write", "write-out")
        first = builder.vector_expression(builder.max_depth - 1)
        return [f"{indent}np.multiply({first}, {builder.vector_expression(builder.max_depth - 1)}, out={target})"]
    if form == 10:  # a copy of a list holding the buffer: its slot written, the original list still read
        builder.note("write", "write-list-copy")
        pair, copied, result = builder.fresh("p"), builder.fresh("q"), builder.fresh("w")
        other = builder.vector_expression(builder.max_depth - 1)
        slot, written = builder.draw(st.integers(0, 1)), builder.vector_expression(builder.max_depth - 1)
        fn.scopes[-1][result] = builder.variable(VECTOR)  # after the expressions: they must not read it
        return [
            f"{indent}{pair} = [{target}, {other}]",
            f"{indent}{copied} = list({pair})",
            f"{indent}{copied}[{slot}] = {written}",
            f"{indent}{result} = {copied}[0] * {pair}[0] + {copied}[1] - {pair}[1]",
        ]
    if form == 11 and builder.draw(st.booleans()):  # a module-level helper writing into the buffer, read after
        return _module_helper_write(builder, indent, target, scalar)
    if form == 11:  # a helper writing into the buffer it is given, in a loop that reads the buffer first
        builder.note("write", "write-in-callee-loop")
        helper, counter, result = builder.fresh("h"), builder.fresh("j"), builder.fresh("w")
        fn.scopes[-1][result] = builder.variable(VECTOR)
        return [
            f"{indent}def {helper}(u):",
            f"{indent}    u[0] = u[1] * 0.5 + u[0]",
            f"{indent}    return u[2]",
            f"{indent}{result} = {target} * 0.5",
            f"{indent}for {counter} in range(2):",
            f"{indent}    {result} = {result} + np.sin({target})",  # the next pass reads what the call wrote
            f"{indent}    {result} = {result} * {helper}({target})",
        ]
    if form == 12:  # the buffer stored in a dict, written by its own name, maybe read back through the dict
        builder.note("write", "write-dict-item")
        holder, item, result = builder.fresh("d"), builder.fresh("e"), builder.fresh("w")
        fn.scopes[-1][result] = builder.variable(VECTOR)
        write = f"{indent}{target}[{index}] = {scalar}"
        if builder.draw(st.booleans()):  # `x op= y`: in place, so the same refusal when read back
            builder.note("write-dict-augmented")
            write = f"{indent}{target} *= {scalar}"
        lines = [
            f"{indent}{holder} = {{}}",
            f"{indent}{holder}['k'] = {target}",
            f"{indent}{item} = {holder}['k']",
            f"{indent}{result} = {item} * 0.5",
            write,
        ]
        if builder.draw(st.booleans()):  # the dict's item is the written array: refused
            lines.append(f"{indent}{result} = {result} + {holder}['k']")
        if builder.draw(st.booleans()):
            # a list extended by a tuple display after it: a rewrite of that `+=` once rebuilt every
            # statement and lost the refusal above (a wrong value), and the consents of calls
            builder.note("write-then-list-extension")
            extended = builder.fresh("l")
            lines += [
                f"{indent}{extended} = [{scalar}]",
                f"{indent}{extended} += ({scalar}, 0.5)",
                f"{indent}{result} = {result} * sum({extended})",
            ]
        return lines
    if form == 14:
        return _ufunc_at(builder, indent, target, scalar, index)
    if form == 15:
        return _put(builder, indent, target, scalar)
    builder.note("write", "write-alias")  # another name for the buffer: a later write may make it stale
    alias = builder.fresh("w")
    fn.scopes[-1][alias] = builder.variable(VECTOR)
    return [f"{indent}{alias} = {target}"]


def _ufunc_at(builder, indent: str, target: str, scalar: str, index: int) -> list[str]:
    """`np.add.at(b, idx, v)` (or subtract, multiply) with one of numpy's index forms."""
    builder.note("write", "write-ufunc-at")
    ufunc = builder.choose(["add", "add", "subtract", "multiply"])
    form = builder.draw(st.integers(0, 3))
    if form == 0:  # repeated positions, a vector value: each occurrence applied
        indices, value = "np.array([0, 2, 0])", builder.vector_expression(builder.max_depth - 1)
    elif form == 1:
        indices, value = str(index), scalar
    elif form == 2:
        indices, value = "slice(1, 3)", scalar
    else:
        indices, value = f"{target} > 0.25", scalar
    return [f"{indent}np.{ufunc}.at({target}, {indices}, {value})"]


def _put(builder, indent: str, target: str, scalar: str) -> list[str]:
    """`np.put` (a repeated position keeps the last value), `np.putmask`, `np.place`: v repeated."""
    builder.note("write", "write-put")
    vector = builder.vector_expression(builder.max_depth - 1)
    form = builder.draw(st.integers(0, 3))
    if form == 0:
        return [f"{indent}np.put({target}, [2, 0, 2], {vector})"]
    if form == 1:
        mode = builder.choose(["wrap", "clip"])
        return [f"{indent}np.put({target}, [-1, 4, 1, 5], {vector}[:2], mode={mode!r})"]
    if form == 2:
        return [f"{indent}np.putmask({target}, {target} > 0.25, {vector}[:2])"]
    return [f"{indent}np.place({target}, {target} < 0.25, {scalar})"]


def _buffer(builder, indent: str) -> list[str]:
    fn = builder.function
    name = builder.fresh("b")
    form = builder.draw(st.integers(0, 3))
    if form == 0:
        value = f"np.zeros({LENGTH})"
    elif form == 1:
        value = f"np.ones({LENGTH}) * {builder.expression(builder.max_depth - 1)}"
    elif form == 2:
        value = f"({builder.vector_expression(builder.max_depth - 1)}).copy()"
    else:
        value = f"np.array({builder.vector_expression(builder.max_depth - 1)})"
    builder.note("write-buffer")
    fn.scopes[-1][name] = builder.variable(VECTOR)
    builder.buffers.add(name)
    builder.last_buffer = name
    return [f"{indent}{name} = {value}"]


_HELPERS = {  # module-level helpers writing into their first parameter's array, in several forms
    "wr0": ["def wr0(u, c):", "    u[0] = u[1] * c + u[0]", "    u *= 0.75", "    return u[2] * c"],
    "wr1": ["def wr1(u, c):", "    for i in range(1, len(u)):", "        u[i] = u[i - 1] * 0.5 + u[i] * c",
            "    return None"],
    "wr2": ["def wr2(u, c, depth=2):", "    u[depth % len(u)] += c * u[0]", "    if depth > 0:",
            "        wr2(u, c * 0.5, depth - 1)"],
}


def _module_helper_write(builder, indent: str, target: str, scalar: str) -> list[str]:
    """A module-level helper writing into the buffer, which the caller goes on reading: the call
    becomes one of the helper's variant returning the buffer (transforms/written_arguments.py)."""
    builder.note("write", "write-by-helper")
    name = builder.choose(sorted(_HELPERS))
    builder.forms.define(name, _HELPERS[name])
    form = builder.draw(st.integers(0, 2))
    if form == 0 or (form == 1 and name != "wr0"):  # for its effect
        return [f"{indent}{name}({target}, {scalar})"]
    result = builder.fresh("w")
    lines = [f"{indent}{result} = {name}({target}, c={scalar})"] if form == 1 else [
        f"{indent}{result} = 0.0",
        f"{indent}for {builder.fresh('j')} in range(2):",  # the next pass reads what the call wrote
        f"{indent}    {name}({target}, {scalar})",
        f"{indent}    {result} = {result} + np.sum({target})",
    ]
    builder.function.scopes[-1][result] = builder.variable("float")  # after its expressions: they must not read it
    return lines


def refused_write(constructs, error) -> bool:
    """Whether `error` is cpsgrad's refusal of a write that another name, or the caller, would see
    (transforms/analysis/aliasing.py, runtime/writes.py), in a program that writes; or of a call for its
    effect given a value the function reads again (transforms/effects.py)."""
    if "effect" in constructs and "for its effect" in error.construct and " again" in error.advice:
        return True
    return bool(constructs & {"write", "write-argument"}) and (
        "after a write into the array it shares" in error.construct
        or error.construct == "assignment into an element of an argument or a global"
        or "augmented assignment changes an array in place" in error.advice
        or "writes into the array of its parameter" in error.advice
        or "is also passed as argument" in error.advice
        or "shares memory with the array it writes into" in error.construct  # np.put(b, i, b[::-1])
    )
