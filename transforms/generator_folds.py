"""A generator function as a fold: the program a consumer's loop over it calls (transforms/generators.py).

A module-level generator `def gen(xs, w): for x in xs: yield x * w` consumed by `for v in
gen(xs, w): <body>` runs lazily, interleaved with the body: each `yield` hands one value to the
body, and the generator resumes only when the body asks for the next. So the generator drives
the loop: it becomes an ordinary function taking the loop body as a function (`consumer`), the
body's read-only values (`consumer_env`) and the loop state the body changes (`consumer_state`):

    def gen(consumer, consumer_env, consumer_state, xs, w):
        for x in xs:
            consumer_flag, consumer_state, consumer_value = consumer(x * w, consumer_env, consumer_state)
            if consumer_flag:
                return consumer_flag, consumer_state, consumer_value
        return 0, consumer_state, None

The body returns flag 0 (next value, please), 1 (`break`) or 2 (`return consumer_value` from
the consumer's function); a flag stops the generator where it is, as Python leaves a generator
suspended. Every call here is an ordinary call of a user function, so gradients flow through
the yielded values to what the generator read (the calls' protocol, docs/design.md).
`yield from xs` is a loop yielding each element (a call of a generator: its own fold, through
the consumer's rewrite in the fold's normalize).
"""

from __future__ import annotations

import collections
import dataclasses
import dis
import inspect
import types
import weakref

import libcst as cst

from cpsgrad.errors import SourceLocation, UnsupportedError
from cpsgrad.runtime import generators as runtime_generators
from cpsgrad.runtime.closures import DEFINITIONS, Definition
from cpsgrad.transforms import source as source_module
from cpsgrad.transforms import syntax
from cpsgrad.transforms.bindings import ends_in_jump
from cpsgrad.transforms.generator_scopes import Preserving
from cpsgrad.transforms.naming import Namer, names_in

ATTRIBUTE = "__cpsgrad_fold__"
_NESTED = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def is_generator_function(value) -> bool:
    return isinstance(value, types.FunctionType) and inspect.isgeneratorfunction(value)


@dataclasses.dataclass(frozen=True)
class LocalGenerator:
    """A generator function defined by a `def` of the transformed function (its only binding)."""

    __name__: str


#: a Definition -> the names its programs receive (captured values, parameters) that hold generator
#: functions a transformed function defined with a `def` (their folds are found at run time)
GENERATOR_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def mark(definition: Definition, names) -> None:
    """Record that `names` of `definition`'s programs hold local generator functions."""
    names = frozenset(names)
    if names:
        GENERATOR_NAMES[definition] = GENERATOR_NAMES.get(definition, frozenset()) | names


def defined_names(definition: cst.FunctionDef) -> set[str]:
    """The names `definition` binds with a nested `def` or `class` (outside nested functions)."""
    return {node.name.value for node in _definitions(definition.body) if not isinstance(node, cst.Lambda)}


def local_generators(definition: cst.FunctionDef, code: types.CodeType) -> dict[str, LocalGenerator]:
    """The generator functions `definition` defines with a nested `def` (outside nested functions)
    and binds nowhere else (its code stores the name once)."""
    nested = DEFINITIONS.get(code)
    found = {name: LocalGenerator(name) for name in GENERATOR_NAMES.get(nested, ())} if nested is not None else {}
    for statement in _definitions(definition.body):
        if isinstance(statement, cst.FunctionDef) and any(True for _ in _yields(statement.body)):
            found[statement.name.value] = LocalGenerator(statement.name.value)
    if not found:
        return found
    # (a name its program receives is stored once: by the unpacking of the environment)
    stores = collections.Counter(
        i.argval for i in dis.get_instructions(code) if i.opname in ("STORE_FAST", "STORE_DEREF", "STORE_NAME")
    )
    return {name: value for name, value in found.items() if stores[name] <= 1}


def fold_definition(generator: types.FunctionType, at: SourceLocation | None) -> Definition:
    """The Definition of `generator`'s fold (made once per code object, kept on the function; for
    a generator defined in a transformed function, once per its Definition)."""
    nested = DEFINITIONS.get(generator.__code__)
    held = _NESTED_FOLDS.get(nested) if nested is not None else generator.__dict__.get(ATTRIBUTE)
    if held is not None and held[0] is generator.__code__:
        return held[1]
    code = generator.__code__
    own = nested.own if nested is not None else None
    read = source_module.read(generator)
    _check_captures(read, code, at)
    names = Namer(names_in(read.definition))
    fresh = {key: names.fresh(key) for key in _KEYS}
    rewriter = _Fold(read, fresh, names)
    body = read.definition.body.visit(rewriter)
    # bound before any loop of the body: a `yield from` loop's body hands them back (generators.py)
    statements = [cst.parse_statement(f"{fresh['consumer_flag']}, {fresh['consumer_value']} = 0, None"), *body.body]
    if not ends_in_jump(statements):
        statements.append(cst.parse_statement(f"return 0, {fresh['consumer_state']}, None"))
    leading = [cst.Param(cst.Name(fresh[k])) for k in ("consumer", "consumer_env", "consumer_state")]
    params = read.definition.params
    if params.posonly_params:  # the consumer's three first, as positional-only as the generator's own
        params = params.with_changes(posonly_params=(*leading, *params.posonly_params))
    else:
        params = params.with_changes(params=(*leading, *params.params))
    definition = cst.FunctionDef(cst.Name(code.co_name), params, body.with_changes(body=statements))
    compiled = _compile(definition, code.co_freevars, f"<cpsgrad fold of {generator.__qualname__}>")
    if compiled.co_freevars != code.co_freevars:  # the fold reads what the generator reads, through its cells
        raise UnsupportedError(
            at,
            f"generator {generator.__qualname__} whose free variables its fold cannot keep",
            "pass what the generator reads from the enclosing function as arguments",
        )
    kwdefaults = generator.__kwdefaults__ or {}
    made = Definition(
        code=compiled,
        globals=generator.__globals__,
        name=code.co_name,
        qualname=generator.__qualname__,
        # its program takes them first, as a nested function's does; its adjoint is laid out as
        # the generator's (captured values, then defaults: runtime.generators' rule hands it on)
        captured=tuple(n for n in compiled.co_freevars if n != own),
        own=own,
        positional_defaults=len(generator.__defaults__ or ()),
        keyword_defaults=tuple(p.name.value for p in params.kwonly_params if p.name.value in kwdefaults),
        source=dataclasses.replace(
            read,
            definition=definition,
            positions=collections.ChainMap(rewriter.moved, read.positions),
            captured=compiled.co_freevars,
        ),
        location=read.location(read.definition) or SourceLocation(read.filename, read.first_line, 1),
    )
    DEFINITIONS[compiled] = made
    if nested is not None:
        _NESTED_FOLDS[nested] = (code, made)
        mark(made, {n for n in (*GENERATOR_NAMES.get(nested, ()), own) if n in compiled.co_freevars})
    else:  # a factory's generator calling itself (or another of the factory's) through a cell
        cells = dict(zip(code.co_freevars, generator.__closure__ or (), strict=True))
        mark(made, {n for n, cell in cells.items() if is_generator_function(_contents(cell))})
        generator.__dict__[ATTRIBUTE] = (code, made)
    return made


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


#: a nested generator's Definition -> (its code, its fold's Definition), while the former is held
_NESTED_FOLDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


_KEYS = ("consumer", "consumer_env", "consumer_state", "consumer_flag", "consumer_value")


def _compile(definition: cst.FunctionDef, free: tuple[str, ...], filename: str) -> types.CodeType:
    """The code of `definition`; with `free`, compiled inside a function binding those names, so
    that it reads them as free variables (cells), as the generator does."""
    if not free:
        module = compile(cst.Module(body=[definition]).code, filename, "exec")
        return next(c for c in module.co_consts if isinstance(c, types.CodeType))
    names = Namer(names_in(definition) | set(free))
    outer = names.fresh("enclosing")
    binding = cst.parse_statement(f"{', '.join(free)} = {', '.join('None' for _ in free)}\n")
    enclosing = cst.FunctionDef(cst.Name(outer), cst.Parameters(), cst.IndentedBlock([binding, definition]))
    module = compile(cst.Module(body=[enclosing]).code, filename, "exec")
    wrapper = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    return next(c for c in wrapper.co_consts if isinstance(c, types.CodeType))


def _check_captures(read, code: types.CodeType, at: SourceLocation | None) -> None:
    """Refuse a generator that rebinds a variable of the enclosing function (`nonlocal`): its fold
    reads the captured values as its program's parameters."""
    for node in _walk(read.definition.body):
        if isinstance(node, cst.Nonlocal):
            names = ", ".join(n.name.value for n in node.names)
            raise UnsupportedError(
                read.location(node) or at,
                f"nonlocal {names} in a generator",
                "pass the value in as an argument and hand the new value back through what the generator yields "
                "(or assign it in the consumer's loop)",
            )


class _Fold(Preserving):
    """`yield v` -> the consumer's call and the stop test; `return r` -> `return 0, state, r`."""

    def __init__(self, read, fresh: dict[str, str], names: Namer):
        super().__init__(read.positions, {})
        self.read = read
        self.names = names
        self.fresh = fresh
        self.guarded = 0  # try/with blocks entered

    def reject(self, node, construct: str, advice: str):
        raise UnsupportedError(self.read.location(node), construct, advice)

    def visit_FunctionDef(self, node) -> bool:
        self.reject(node, "nested function in a generator", "define it at module level and call it")
        return False

    def visit_Lambda(self, node) -> bool:
        self.reject(node, "lambda in a generator", "define a module-level function and call it")
        return False

    def visit_Try(self, node) -> None:
        self.guarded += 1

    def leave_Try(self, original, updated):
        self.guarded -= 1
        return updated

    def visit_With(self, node) -> None:
        self.guarded += 1

    def leave_With(self, original, updated):
        self.guarded -= 1
        return updated

    def visit_Yield(self, node) -> None:
        if self.guarded:
            self.reject(
                node,
                "yield inside try or with",
                "a generator stopped early would run its finally/__exit__ when it is closed, which is not modelled; "
                "move the yield out of the try/with (compute the values inside, yield them after)",
            )

    def leave_SimpleStatementLine(self, original, updated):
        out: list[cst.BaseStatement] = []
        pending: list[cst.BaseSmallStatement] = []
        for small in original.body:  # nothing in a simple statement is rewritten: the originals keep their positions
            replaced = self.small(small)
            if replaced is None:
                pending.append(small)
                continue
            if pending:
                out.append(original.with_changes(body=pending))
                pending = []
            out += replaced
        if not out:
            return updated
        if pending:
            out.append(original.with_changes(body=pending))
        return cst.FlattenSentinel(out)

    def small(self, node: cst.BaseSmallStatement) -> list | None:
        f = self.fresh
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Yield):
            value = node.value.value
            if isinstance(value, cst.From):
                item = self.names.fresh("item")  # one a loop: each is its own loop body's (generators.py)
                loop = cst.For(cst.Name(item), value.item, cst.IndentedBlock(self.handed(cst.Name(item))))
                return [loop]
            return self.handed(value if value is not None else cst.Name("None"))
        if isinstance(node, cst.Return):
            value = node.value if node.value is not None else cst.Name("None")
            state = cst.Name(f["consumer_state"])
            return [
                cst.SimpleStatementLine(
                    [cst.Return(cst.Tuple([cst.Element(cst.Integer("0")), cst.Element(state), cst.Element(value)]))]
                )
            ]
        for inner in _yields(node):
            self.reject(
                inner,
                "yield used as a value"
                if isinstance(inner, cst.Yield) and not isinstance(inner.value, cst.From)
                else "yield from used as a value",
                "a for loop sends nothing into a generator and ignores what yield from returns; "
                "write `yield v` as a statement",
            )
        return None

    def handed(self, value: cst.BaseExpression) -> list:
        f = self.fresh
        call = cst.parse_statement(
            f"{f['consumer_flag']}, {f['consumer_state']}, {f['consumer_value']} = "
            f"{f['consumer']}(VALUE, {f['consumer_env']}, {f['consumer_state']})"
        )
        call = syntax.substituted(call, {"VALUE": value})
        stop = cst.parse_statement(
            f"if {f['consumer_flag']}:\n    return {f['consumer_flag']}, {f['consumer_state']}, {f['consumer_value']}\n"
        )
        return [call, stop]


def _yields(node: cst.CSTNode):
    for inner in _walk(node):
        if isinstance(inner, cst.Yield):
            yield inner


def _definitions(node: cst.CSTNode):
    """The nested defs, lambdas and classes under `node`, not those inside them."""
    for child in node.children:
        if isinstance(child, _NESTED):
            yield child
        else:
            yield from _definitions(child)


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        if not isinstance(child, _NESTED):
            yield from _walk(child)



runtime_generators.install(fold_definition)
