"""What `cpsgrad show` prints: a function's program at a stage, then the program of each function
its calls reach, each under a comment header; with `annotate`, the user's line over each block."""

from __future__ import annotations

import linecache
import types

from cpsgrad.errors import CpsgradError
from cpsgrad.transforms import calls, cps, source, syntax
from cpsgrad.transforms.analysis import kinds, static_callees
from cpsgrad.transforms.pipeline import _front, default_kinds, transform


def stage_text(
    function, argnums: tuple[int, ...], stage: str, argument_kinds: tuple[str, ...] | None = None,
    annotate: bool = False,
) -> str:
    """What `show` prints for `stage`: the function's program, then the program of each function
    its calls reach (transitively, each once per argnums and kinds), under a comment header. The
    early stages do not need the later passes to succeed. With `annotate` (final stage only), each
    block of lines made from one user statement is headed by that statement's line (`annotated`)."""
    function = source.unwrap(function)
    argument_kinds = argument_kinds or default_kinds(function)
    text, sites, definitions = _stage(function, argnums, stage, argument_kinds, False, annotate)
    parts = [text]
    seen: set = set()  # callees shown (a function's own program as a callee differs: it borrows)
    pending = [(function, sites, definitions)]
    while pending:
        caller, sites, definitions = pending.pop(0)
        for label, definition in definitions.items():
            if definition.code in seen:
                continue
            seen.add(definition.code)
            nested = _placeholder(definition)
            names = source.read(nested, lifted=True).captured + tuple(source.parameter_names(nested))
            where = f"# ---- {label} of {caller.__qualname__}: the {_described(definition)} ({definition.location})"
            try:
                every = tuple(range(len(names)))
                text, more, inner = _stage(nested, every, stage, (kinds.ANY,) * len(names), True, annotate)
            except CpsgradError as error:  # its calls raise it when they run
                parts.append(f"{where}, which cpsgrad refuses:\n# {error}\n")
                continue
            captured = f"it captures {', '.join(definition.captured)}" if definition.captured else "it captures nothing"
            parts.append(
                f"{where}; {captured}. Its program, for arguments of any kind, with respect to every parameter:\n{text}"
            )
            pending.append((nested, more, inner))
        for site in sites:
            where = f"# ---- {site.label} of {caller.__qualname__} ({site.location})"
            if calls.is_gradient(site.callee):
                parts.append(
                    f"{where} calls a gradient function, which cpsgrad refuses (higher-order differentiation)\n"
                )
                continue
            callee = static_callees.callee_of(site)
            if callee is None:
                parts.append(
                    f"{where} calls {site.callee_code}, known only at run time: its program is made on its first call\n"
                )
                continue
            if callee in seen:
                continue
            seen.add(callee)
            target, target_argnums, target_kinds = callee
            wrt = ", ".join(source.parameter_names(target)[p] for p in target_argnums)
            try:
                text, more, inner = _stage(target, target_argnums, stage, target_kinds, True, annotate)
            except CpsgradError as error:  # the call raises it when it runs
                parts.append(f"{where} runs {target.__qualname__}, which cpsgrad refuses:\n# {error}\n")
                continue
            parts.append(f"{where} runs {target.__qualname__}, with respect to {wrt}:\n{text}")
            pending.append((target, more, inner))
    return "\n".join(parts)


def _stage(
    function, argnums: tuple[int, ...], stage: str, argument_kinds: tuple[str, ...], every_parameter: bool,
    annotate: bool = False,
) -> tuple[str, list[calls.Site], dict]:
    if stage == "final":
        transformed = transform(function, argnums, argument_kinds, every_parameter)
        text = transformed.text("final")
        if annotate:
            text = annotated(text, transformed.origins)
        if transformed.loaded:  # its call sites, as the passes see them
            front = _front(source.read(function, lifted=every_parameter), argnums, argument_kinds, every_parameter)
            return text, front.sites, front.normalized.definitions
        return text, transformed.sites, transformed.definitions
    front = _front(source.read(function, lifted=every_parameter), argnums, argument_kinds, every_parameter)
    text = syntax.code(front.normalized.definition) if stage == "normalize" else cps.render(front.program)
    return text, front.sites, front.normalized.definitions


def annotated(text: str, origins: tuple) -> str:
    """`text` (a final program) with `# from line N: <the user's line>` over each block of
    consecutive lines made from one user statement (`origins`: per line, where it came from), at
    the block's indentation, so a reader finds their own line in the program. Lines from no
    statement get no comment."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    previous = None
    for number, line in enumerate(lines):
        location = origins[number][0] if number < len(origins) else None
        # a statement's parts (its operands' temporaries) carry their own columns: one line, one block
        place = (location.filename, location.line) if location is not None else None
        if place is not None and place != previous:
            indent = line[: len(line) - len(line.lstrip())]
            user = linecache.getline(*place).strip()
            out.append(f"{indent}# from line {location.line}" + (f": {user}\n" if user else "\n"))
        previous = place
        out.append(line)
    return "".join(out)


def _placeholder(definition) -> types.FunctionType:
    """A function of a nested definition's code, for `show` (its program takes what it
    captured as parameters, so the values in its cells do not matter)."""
    from cpsgrad.runtime.closures import make_function

    size = len(definition.captured) + definition.positional_defaults + len(definition.keyword_defaults)
    return make_function(definition, (None,) * size)


def _described(definition) -> str:
    return "lambda" if definition.name == "<lambda>" else f"nested def {definition.name}"
