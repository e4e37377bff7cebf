"""Calls of user functions that write into an array of the caller's that the caller reads again.

    def bump(y, v):                     def f(x, v):
        y[0] = y[0] * v                     y = x * 2.0
        y += v                              bump(y, v)
                                            return np.sum(y * y)

`bump` writes into the array the caller passed, and the caller reads it after the call: the
gradient of what it reads there must flow back through bump's writes (to `y` before the call and
to `v`). The adjoint of a call gives its arguments' adjoints at the call, not the adjoint of what an
argument became, so the call is rewritten into one of a variant of the callee that also returns
the arrays it writes into, and the caller's names for them are bound to those again:

    t1 = bump__written(y, v)
    t2, y = t1

`bump__written` is bump's own source, read again (its lines where they are in the user's file),
with every `return e` made `result = e; return result, y` (on its line) and a `return None, y` at
its end: the array the call
received, the very object (bump never rebinds `y`: a function that does is left alone), so the
program's values are Python's (the caller's `y` is bound to the object it already held). The
caller's reads of `y` after the call are then reads of the variant's result, and the variant's
program takes their adjoint back through its writes (runtime/writes.py), as it does for any
function returning an array it wrote into. Another name of the caller's for the same array, read
after the call, is still refused by the consent (runtime/writes.py, `consent`); so is one array
passed for two written parameters.

Rewritten: a core call statement `f(atoms)` or `name = f(atoms)` of a module-level user function
(no closure, no decorators, plain parameters) that transforms/analysis/callee_writes.py says
writes into the parameters that names of the caller are passed for, each name once (the
analysis runs this rewrite on what it analyses, so that a chain of such calls is seen whole). Anything else
is left as it was (the run-time consent refuses what it cannot follow, saying why).
"""

from __future__ import annotations

import inspect
import linecache
import types

import libcst as cst

from cpsgrad.errors import CpsgradError
from cpsgrad.transforms import bindings, calls, naming, rewriting, source, syntax, walk

_VARIANTS: dict = {}  # (code, parameters) -> (function, its variant)


def rewrite(normalized, resolver, written_by) -> dict[str, types.FunctionType]:
    """Rewrite `normalized` in place; the variants its calls now name (name -> function), for the
    program's namespace and the resolver (`resolver.extra`). `written_by(function)`: the parameters
    a user function writes into (transforms/analysis/callee_writes.py, which runs this rewrite too
    on the functions it analyses, so that it sees what their programs will do)."""
    rewriter = _Calls(normalized, resolver, written_by)
    definition = normalized.definition.visit(rewriter)
    if rewriter.variants:
        rewriting.replace(normalized, definition)
        resolver.extra.update(rewriter.variants)
        resolver.local_names |= rewriter.namer.taken - rewriter.reserved - set(rewriter.variants)  # the temporaries
    return rewriter.variants


class _Calls(rewriting.Rewriter):
    def __init__(self, normalized, resolver, written_by):
        super().__init__(normalized)
        self.resolver = resolver
        self.written_by = written_by
        self.reserved = naming.names_in(normalized.definition)
        self.namer = naming.Namer(self.reserved)
        self.variants: dict[str, types.FunctionType] = {}
        self.caller_names = set(normalized.parameters) | resolver.local_names

    def leave_SimpleStatementLine(self, original, updated):
        small = updated.body[0]
        if len(updated.body) != 1:
            return updated
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call, target = small.value, None
        elif (
            isinstance(small, cst.Assign)
            and isinstance(small.value, cst.Call)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
        ):
            call, target = small.value, small.targets[0].target.value
        else:
            return updated
        found = self._written(call)
        if found is None:
            return updated
        function, parameters, names = found
        variant_name = self._variant_name(function, parameters)
        if variant_name is None:
            return updated
        result = self.namer.temporary()
        kept = target if target is not None else self.namer.temporary()
        statements = [
            syntax.assign(result, call.with_changes(func=cst.Name(variant_name))),
            syntax.unpack([kept, *names], cst.Name(result)),
        ]
        origin = self.normalized.origins.get(id(original))
        if origin is not None:
            for statement in statements:
                self.normalized.origins[id(statement)] = origin
        return cst.FlattenSentinel(statements)

    def _written(self, call: cst.Call):
        """(function, written parameters, the caller's names passed for them) for a call to rewrite, else None."""
        if any(a.star for a in call.args) or not isinstance(call.func, cst.Name):
            return None
        if call.func.value in self.resolver.local_names:
            return None
        function = self.resolver.resolve(call.func)
        if not _plain(function) or calls.classify(call.func, self.resolver) != calls.USER:
            return None
        written = self.written_by(function)
        if not written:
            return None
        bound = calls.bound_parameters(function.__code__, call)
        if bound is None or any(parameter is None and argument.keyword is None for parameter, argument in bound):
            return None  # a positional argument past the parameters: the call raises as Python's would
        parameters, names = [], []
        for parameter, argument in bound:
            if parameter not in written or not isinstance(argument.value, cst.Name):
                continue
            name = argument.value.value
            if name not in self.caller_names:
                continue
            parameters.append(parameter)
            names.append(name)
        if not names or len(set(names)) != len(names):
            return None  # nothing of the caller's written into; `h(a, a)`: refused when it runs
        return function, tuple(parameters), names

    def _variant_name(self, function: types.FunctionType, parameters: tuple[str, ...]) -> str | None:
        variant = variant_of(function, parameters)
        if variant is None:
            return None
        for name, known in self.variants.items():
            if known is variant:
                return name
        name = self.namer.fresh(naming.written_variant(function.__name__))
        self.variants[name] = variant
        return name


def _plain(function) -> bool:
    """A module-level Python function with plain parameters, read from source, no decorators known."""
    if not isinstance(function, types.FunctionType) or function.__closure__:
        return False
    code = function.__code__
    unplain = (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR | inspect.CO_COROUTINE
               | inspect.CO_ITERABLE_COROUTINE | inspect.CO_ASYNC_GENERATOR)
    return not code.co_flags & unplain and "<" not in function.__qualname__ and "." not in function.__qualname__


def variant_of(function: types.FunctionType, parameters: tuple[str, ...]) -> types.FunctionType | None:
    """`function` that also returns the arrays its `parameters` were called with: `return e`
    becomes `return (e), p, ...` (cached per code object and parameters); None for a function
    whose source cannot be read again as it is (decorated, a method's) or that rebinds one of them."""
    key = (function.__code__, parameters)
    cached = _VARIANTS.get(key)
    if cached is not None and cached[0] is function:
        return cached[1]
    try:
        read = source.read(function)
    except CpsgradError:
        return None
    definition = read.definition
    if definition.decorators or read.indent or set(parameters) & _rebound(definition.body):
        return None
    result = naming.Namer(naming.names_in(definition)).fresh(naming.written_result())
    body = definition.body.visit(_Returns(list(parameters), result))
    last = [cst.SimpleStatementLine([_return(None, list(parameters))])]
    body = body.with_changes(body=[*body.body, *last])
    name = naming.written_variant(function.__name__)
    definition = definition.with_changes(name=cst.Name(name), body=body)
    text = "\n" * (read.first_line - 1) + cst.Module([definition]).code  # the user's line numbers
    return variant_from_text(function, parameters, text)


def variant_from_text(function: types.FunctionType, parameters: tuple[str, ...], text: str) -> types.FunctionType:
    """The variant `variant_of` wrote as `text` (its source), compiled in `function`'s globals
    (and cached): the disk cache keeps the text beside the callers' programs
    (transforms/persisted.py, which checks that `function`'s source is still the one it was made
    from)."""
    name = naming.written_variant(function.__name__)
    filename = f"{function.__code__.co_filename} <cpsgrad: {function.__qualname__} returning {', '.join(parameters)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict = {}
    exec(compile(text, filename, "exec"), function.__globals__, namespace)  # noqa: S102 - the user's own source
    variant = namespace[name]
    variant.__defaults__ = function.__defaults__
    variant.__kwdefaults__ = function.__kwdefaults__
    variant.__qualname__ = name
    variant.__module__ = function.__module__
    # what the analyses (sharing.py) and the disk cache read of it: (f, the parameters it also returns, its text)
    variant.__dict__[naming.WRITTEN_ATTRIBUTE] = (function, parameters, text)
    _VARIANTS[(function.__code__, parameters)] = (function, variant)
    return variant


def _rebound(body: cst.BaseSuite) -> set[str]:
    """Names bound anywhere in `body` other than by `x op= y` (which keeps an array itself)."""
    found: set[str] = set()
    for node in walk.nodes(body):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor)):
            found |= bindings.bound(node.target)
        elif isinstance(node, cst.AsName):
            found |= bindings.bound(node.name)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            found |= {item.name.value for item in node.names}
        elif isinstance(node, cst.Del):
            found |= naming.names_in(node.target)
    return found


def _return(value: cst.BaseExpression | None, parameters: list[str]) -> cst.Return:
    if value is None:
        value = cst.Name("None")
    elif isinstance(value, cst.Tuple) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    elements = [cst.Element(value), *(cst.Element(cst.Name(p)) for p in parameters)]
    return cst.Return(cst.Tuple(elements, lpar=[], rpar=[]))


class _Returns(cst.CSTTransformer):
    """Every `return e` of the function itself (not of a def, lambda or class inside it) becomes
    `result = e; return result, p, ...` on its line: `e` is evaluated, calls and all, before the
    written parameters are read (a call in `e` may be one that writes into them)."""

    def __init__(self, parameters: list[str], result: str):
        self.parameters = parameters
        self.result = result

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def leave_SimpleStatementLine(self, original, updated):
        if not any(isinstance(small, cst.Return) for small in updated.body):
            return updated
        body = []
        for small in updated.body:
            if isinstance(small, cst.Return) and small.value is not None:
                body.append(cst.Assign([cst.AssignTarget(cst.Name(self.result))], small.value))
                body.append(_return(cst.Name(self.result), self.parameters))
            elif isinstance(small, cst.Return):
                body.append(_return(None, self.parameters))
            else:
                body.append(small)
        return updated.with_changes(body=body)
