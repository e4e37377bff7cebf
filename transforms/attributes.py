"""Attribute writes `obj.attr = v` and `obj.attr op= v`, and the checks on attribute reads and
calls that keep the gradients of objects' attributes from being lost (cpsgrad/runtime/objects.py).

Normalize turns `obj.w = v` into the core assignment `obj = cpsgrad_runtime.set_attribute(obj,
'w', v)`: the same object changed in place, and a new version of `obj` for the passes after (so
activity sees the object carry what was written into it). The adjoint pass gives it an
`AttributeWrite` record, whose forward saves what the attribute held and whose backward (always
emitted, active or not) takes the attribute's adjoint out of the run's books into `v`'s and puts
the old value back (transforms/adjoint/attributes.py). The adjoint of an attribute lives with
the object in the books, not in a name's version, so aliases, containers and callees that read
the object need no analysis.
"""

from __future__ import annotations

import builtins
import types

import libcst as cst

from cpsgrad.transforms import calls, effects, object_methods, rewriting, syntax, walk
from cpsgrad.transforms.naming import Namer, names_in

RUNTIME = "cpsgrad_runtime"
_SET = f"{RUNTIME}.set_attribute"


def is_attribute_write(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and syntax.dotted_name(value.func) == _SET


# -- normalize -----------------------------------------------------------------------------------


def assignment(normalizer, target: cst.Attribute, value, out: list, origin: cst.CSTNode) -> None:
    """`obj.attr = value`: the value first, then the object, as Python evaluates them."""
    atom = normalizer.atom(value, out)
    name = _object(normalizer, target, out)
    _emit(normalizer, name, target.attr.value, atom, out, origin, fresh=is_fresh(value))


def augmented(normalizer, node: cst.AugAssign, operator: cst.BaseBinaryOp, out: list) -> None:
    """`obj.attr op= value`: the object, `t = obj.attr`, the value, `t op value`, and the write."""
    target = node.target
    name = _object(normalizer, target, out)
    current = normalizer.temporary_value(cst.Attribute(cst.Name(name), target.attr), out, node)
    operand = normalizer.atom(node.value, out)
    updated = normalizer.temporary_value(cst.BinaryOperation(current, operator, operand), out, node)
    _emit(normalizer, name, target.attr.value, updated, out, node, augmented=True)


def _emit(normalizer, name: str, attribute: str, value, out: list, origin, augmented=False, fresh=False, method=None):
    """`obj = set_attribute(obj, 'attr', v)`; an augmented one says so (`..., True)`: Python would
    have changed a list or an array the attribute holds in place, which is computed as a new value
    only where the object holds that array alone, runtime/objects.py); a write of a value no other
    name holds (`self.m = np.zeros(3)`, `self.m = a * b`) says so too (`fresh=True`)."""
    arguments = [cst.Arg(cst.Name(name)), cst.Arg(cst.SimpleString(repr(attribute))), cst.Arg(value)]
    if augmented:
        arguments.append(cst.Arg(cst.Name("True")))
    if fresh:
        arguments.append(cst.Arg(cst.Name("True"), keyword=cst.Name("fresh"), equal=syntax.EQUAL))
    if method is not None:  # obj.items.append(v) (list_method)
        arguments.append(cst.Arg(cst.SimpleString(repr(method)), keyword=cst.Name("method"), equal=syntax.EQUAL))
    call = cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name("set_attribute")), arguments)
    normalizer.emit(out, syntax.assign(name, call), origin)


# -- list methods of an attribute's list ----------------------------------------------------------

_LIST_METHODS = {"append": 1, "extend": 1, "pop": 0}


def list_method(normalizer, node: cst.Call, out: list) -> cst.BaseExpression | None:
    """`obj.items.append(v)`, `.extend(vs)`, `.pop()` on an object's list (a parameter's, `self`
    in a method, or a local built by a plain class's call): Python changes the list in place (the one the
    attribute held before the argument was evaluated; here the one it holds after), which is written
    here as a new list, `obj.items = obj.items + [v]` (`... + list(vs)`; `t = obj.items[-1]; obj.items
    = obj.items[:-1]`), as an augmented write: allowed where the object holds its list alone
    (runtime/objects.py `_in_place`; where it does not and nothing differentiable is involved, the
    list is changed in place), checked first to be a list (`attribute_list`: a deque's, an array's
    or another object's method is refused). The call's value (None, or the popped element); None for any other call."""
    callee = node.func
    if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Attribute)):
        return None
    method = callee.attr.value
    holder = syntax.strip_parentheses(callee.value.value)
    if _LIST_METHODS.get(method) != len(node.args) or any(a.star or a.keyword is not None for a in node.args):
        return None
    if not (isinstance(holder, cst.Name) and _plain_holder(normalizer, holder.value)):
        return None
    name, attribute = holder.value, callee.value.attr.value
    held = normalizer.temporary_value(cst.Attribute(cst.Name(name), cst.Name(attribute)), out, node)
    kind = normalizer.temporary_value(cst.Call(cst.Name("type"), [cst.Arg(held)]), out, node)
    check = cst.Call(
        cst.Attribute(cst.Name(RUNTIME), cst.Name("attribute_list")),
        [cst.Arg(kind), cst.Arg(cst.SimpleString(repr(attribute))), cst.Arg(cst.SimpleString(repr(method)))],
    )
    normalizer.emit(out, cst.SimpleStatementLine([cst.Expr(check)]), node)
    if method == "pop":
        current = normalizer.temporary_value(cst.Attribute(cst.Name(name), cst.Name(attribute)), out, node)
        last = cst.Subscript(
            current, [cst.SubscriptElement(cst.Index(cst.UnaryOperation(cst.Minus(), cst.Integer("1"))))]
        )
        popped = normalizer.temporary_value(last, out, node)
        upper = cst.UnaryOperation(cst.Minus(), cst.Integer("1"))
        rest = normalizer.temporary_value(
            cst.Subscript(current, [cst.SubscriptElement(cst.Slice(None, upper))]), out, node
        )
        _emit(normalizer, name, attribute, rest, out, node, augmented=True, method=method)
        return popped
    operand = normalizer.atom(node.args[0].value, out)
    if method == "append":
        added = normalizer.temporary_value(cst.List([cst.Element(operand)]), out, node)
    elif isinstance(syntax.strip_parentheses(node.args[0].value), cst.List):
        added = operand
    else:
        added = normalizer.temporary_value(cst.Call(cst.Name("list"), [cst.Arg(operand)]), out, node)
    # the list is read again after the argument (what the write's check needs right before it)
    current = normalizer.temporary_value(cst.Attribute(cst.Name(name), cst.Name(attribute)), out, node)
    updated = normalizer.temporary_value(cst.BinaryOperation(current, cst.Add(), added), out, node)
    _emit(normalizer, name, attribute, updated, out, node, augmented=True, method=method)
    return cst.Name("None")


def _plain_holder(normalizer, name: str) -> bool:
    """Whether `name` may hold an object whose list attribute `list_method` writes: a parameter
    (`self`, an object a helper is given: what it holds is checked when it runs), or a local every
    assignment of which is a plain class's call (not `logger = logging.getLogger()`)."""
    source = normalizer.source
    definition = source.definition
    positional = [*definition.params.posonly_params, *definition.params.params]
    if name in {p.name.value for p in (*positional, *definition.params.kwonly_params)}:
        return True  # `self`, or an object a helper is given (`def add(obj, v): obj.items.append(v)`)
    values = []
    for node in walk.nodes(definition.body):
        if isinstance(node, cst.Assign):
            if any(isinstance(n, cst.Name) and n.value == name for t in node.targets for n in walk.nodes(t.target)):
                if not (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)):
                    return False
                values.append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.AsName, cst.CompFor)):
            bound = getattr(node, "target", None) or getattr(node, "name", None)
            if bound is not None and any(isinstance(n, cst.Name) and n.value == name for n in walk.nodes(bound)):
                return False  # a name bound otherwise
    return bool(values) and all(_plain_class_call(normalizer, value) for value in values)


def _plain_class_call(normalizer, value: cst.BaseExpression) -> bool:
    from cpsgrad.runtime.objects import plain_class

    if not isinstance(value, cst.Call):
        return False
    kind = normalizer.resolver.resolve(value.func)
    return isinstance(kind, type) and bool(kind.__flags__ & _HEAP) and plain_class(kind) is None


_HEAP = 1 << 9  # a class defined in Python


# numpy's functions whose result is always a new array (never a view of an argument)
_FRESH_CALLS = frozenset(
    {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "copy", "array",
     "arange", "linspace", "eye", "identity"}
)
_CONSUMING_CALLS = frozenset(
    {"sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "dot", "matmul", "inner", "outer", "vdot",
     "exp", "log", "log1p", "expm1", "sqrt", "square", "abs", "absolute", "sin", "cos", "tan", "tanh", "sinh", "cosh",
     "maximum", "minimum", "clip", "where", "sign", "power", "multiply", "add", "subtract", "divide", "negative",
     "allclose", "isfinite", "any", "all", "argmax", "argmin", "norm", "copy", "array", "zeros_like", "ones_like"}
)
_NUMPY = ("np", "numpy")


def _numpy_function(func: cst.BaseExpression, names: frozenset) -> bool:
    dotted = syntax.dotted_name(func) or ""
    head, _, last = dotted.rpartition(".")
    return last in names and head.split(".", 1)[0] in _NUMPY


def is_fresh(value: cst.BaseExpression) -> bool:
    """A value no other name can hold: an arithmetic result or a numpy constructor's (a write of it
    leaves the object holding its array alone, so a later `obj.attr op= v` may compute a new one)."""
    value = syntax.strip_parentheses(value)
    if isinstance(value, (cst.BinaryOperation, cst.List, cst.ListComp, cst.Dict, cst.DictComp)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("list", "dict"):
        return True
    if isinstance(value, cst.UnaryOperation) and not isinstance(value.operator, cst.Not):
        return True
    if isinstance(value, cst.Call) and not any(a.keyword is not None and a.keyword.value == "copy" for a in value.args):
        if _numpy_function(value.func, _FRESH_CALLS):
            return True
        func = value.func
        return isinstance(func, cst.Attribute) and func.attr.value == "copy" and not value.args
    return False


def consumed_names(definition: cst.FunctionDef, lists: bool = False, resolver=None) -> set[str]:
    """The names of the normalized function that are assigned once and used only in the
    statements right after, in the same block, with nothing between that could change an object
    (a call other than numpy's that never returns a view, a compound statement), and only to
    compute new values (an operand of an arithmetic operation or of such a numpy function): a read
    `t = obj.m` into one shares the attribute's array with nothing that sees a later change. With
    `lists`, an index or a slice counts as computing a new value too (as it does of a list). Builtins
    that only read what they are given at once (`len`, `sum`, `type`, ...) count where `resolver`
    says the name is the builtin."""
    uses: dict[str, int] = {}
    consumed: dict[str, int] = {}
    for node in walk.nodes(definition):
        if isinstance(node, cst.Name):
            uses[node.value] = uses.get(node.value, 0) + 1
        for operand in _operands(node, lists, resolver):
            if isinstance(operand, cst.Name):
                consumed[operand.value] = consumed.get(operand.value, 0) + 1
        if isinstance(node, cst.Assign):  # the targets are not uses
            for target in node.targets:
                for name in walk.nodes(target.target):
                    if isinstance(name, cst.Name):
                        consumed[name.value] = consumed.get(name.value, 0) + 1
    candidates = {name for name, count in consumed.items() if count == uses.get(name, 0)}
    found: set[str] = set()
    for node in walk.nodes(definition):
        if isinstance(node, (cst.IndentedBlock, cst.Module)):
            found |= _used_at_once(list(node.body), candidates, uses, resolver)
    return found


def _operands(node: cst.CSTNode, lists: bool = False, resolver=None) -> list:
    if lists and isinstance(node, cst.Subscript):
        return [node.value]
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.Comparison):
        return [node.left, *(c.comparator for c in node.comparisons)]
    if isinstance(node, cst.Call) and (
        _numpy_function(node.func, _CONSUMING_CALLS) or _reading_builtin(node, resolver)
    ):
        return [a.value for a in node.args if a.keyword is None]
    return []


# builtins that read their argument at once, keep nothing of it and run no code of a plain class's
# (not iter, enumerate, zip: lazy; not min, max, sorted, any, all: a class's __lt__ or __bool__)
_READING = ("type", "len", "sum", "list", "tuple", "abs", "float")


def _reading_builtin(node: cst.Call, resolver) -> bool:
    if not (isinstance(node.func, cst.Name) and node.func.value in _READING):
        return False
    if resolver is None:
        return node.func.value == "type" and len(node.args) == 1  # list_method's own check
    return resolver.resolve(node.func) is getattr(builtins, node.func.value)


def _used_at_once(body: list, candidates: set[str], uses: dict[str, int], resolver=None) -> set[str]:
    """Of `candidates` assigned by a statement of `body`: those whose every use (`uses`, less the
    assignment) is in the statements that follow it there before any barrier (`_barrier`)."""
    found = set()
    for position, statement in enumerate(body):
        if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign)):
            continue
        targets = statement.body[0].targets
        if len(targets) != 1 or not isinstance(targets[0].target, cst.Name):
            continue
        name = targets[0].target.value
        if name not in candidates:
            continue
        remaining = uses.get(name, 0) - 1
        for later in body[position + 1:]:
            if remaining <= 0 or _barrier(later, resolver):
                break
            remaining -= sum(1 for n in walk.nodes(later) if isinstance(n, cst.Name) and n.value == name)
        if remaining == 0:
            found.add(name)
    return found


def _barrier(statement: cst.CSTNode, resolver=None) -> bool:
    """A statement that could change an object: a compound one, or one that calls anything but
    numpy's functions that never return a view."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return True
    return any(
        isinstance(node, cst.Call)
        and not _numpy_function(node.func, _CONSUMING_CALLS | _FRESH_CALLS)
        and not _reading_builtin(node, resolver)
        and syntax.dotted_name(node.func) != f"{RUNTIME}.attribute_list"
        for node in walk.nodes(statement)
    )


def _object(normalizer, target: cst.Attribute, out: list) -> str:
    """The local variable holding the object written into (a computed object gets a temporary)."""
    base = syntax.strip_parentheses(target.value)
    if isinstance(base, cst.Name) and base.value in normalizer.locals:
        return base.value
    if isinstance(base, cst.Name) or (isinstance(base, cst.Attribute) and not normalizer.local_attribute(base)):
        root = syntax.code(base)
        normalizer.reject(
            target,
            "assignment to an attribute of a global or free variable",
            f"{root} is not a local variable of the function: cpsgrad differentiates writes into the objects the "
            "function builds or is given; pass the object as an argument, or return the new value",
        )
    value = normalizer.atom(base, out)
    if isinstance(value, cst.Name):
        return value.value
    return normalizer.temporary_value(value, out, target).value


# -- after activity: methods of objects called for their effect -------------------------------


def method_effects(normalized, active: set[str], resolver) -> bool:
    """`obj.method(x)` for its effect (`opt.step(g)`, `cell.update(x)`), and `Class.method(obj, x)`
    (`Base.__init__(self, w)`), where an operand is differentiable, become `t = obj.method(x)`: a
    call of a user method like any other (its writes into `self` are the object's,
    runtime/objects.py; its own transform refuses what would keep a value elsewhere), its result
    discarded. First a user object's method named like a container's (`r.get()`) is split off as
    a bound method (transforms/object_methods.py). Whether it changed (the pipeline runs activity again)."""
    if object_methods.split(normalized, active, resolver):
        return True
    rewriter = _MethodEffects(normalized, active, resolver)
    definition = normalized.definition.visit(rewriter)
    if not rewriter.changed:
        return False
    rewriting.replace(normalized, definition)
    return True


def receivers(found: list, active: set[str], definition: cst.FunctionDef, resolver=None, stored=None) -> set[str]:
    """Names that are differentiable because of what happens to the objects they hold: a local
    object whose method is called with a differentiable argument (`t = obj.method(x)`: the method
    may keep `x` in it), one handed with a differentiable value to a user function called for its
    effect that may store into it (`stored(function, call)`: transforms/analysis/callee_stores.py),
    and the container, object or name a differentiable object written into or called a method of
    was read from (`o = objs[i]`, `layer = self.layer`, `b = a`): a later read through it must see
    the attributes' gradients."""
    local = {p.name.value for p in (*definition.params.posonly_params, *definition.params.params)}
    local |= {p.name.value for p in definition.params.kwonly_params}
    local |= {name for targets, _ in found for name in targets}
    objects = {targets[0] for targets, value in found if is_attribute_write(value)}
    extra = set()
    counts: dict[str, int] = {}
    for node in walk.nodes(definition):
        if isinstance(node, cst.Name):
            counts[node.value] = counts.get(node.value, 0) + 1
    for targets, value in found:
        discarded = len(targets) == 1 and counts.get(targets[0], 0) == 1  # a call for its effect
        handed = [_receiver(value)] if _receiver(value) is not None else []
        if not handed and discarded:
            handed = _handed(value, active, resolver, stored)
        for receiver in handed:
            if receiver not in local:
                continue
            objects.add(receiver)
            if receiver not in active and any(
                isinstance(a.value, cst.Name) and a.value.value in active for a in value.args
            ):
                extra.add(receiver)
    reached = set(active) | extra
    changed = True
    while changed:  # o = for_1_items[i]; for_1_items = as_sequence(objs): objs too
        changed = False
        for targets, value in found:
            if len(targets) != 1 or targets[0] not in objects or targets[0] not in reached:
                continue
            source = _source(value)
            if source is not None and source in local and source not in reached:
                extra.add(source)
                reached.add(source)
                objects.add(source)
                changed = True
    return extra


def _source(value: cst.BaseExpression) -> str | None:
    """The name a value was read from: `c` of `c`, `c[i]`, `c.attr`, `as_sequence(c)`."""
    if isinstance(value, cst.Call) and syntax.dotted_name(value.func) == f"{RUNTIME}.as_sequence":
        value = value.args[0].value
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        value = value.value
    return value.value if isinstance(value, cst.Name) else None


def _handed(value: cst.BaseExpression, active: set[str], resolver, stored=None) -> list[str]:
    """The names a call of a user function (not a method) `f(obj, x)` is handed beside a
    differentiable value that it may write that value into: those `stored(f, call)` names, or
    every name passed where that is not known."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)) or resolver is None:
        return []
    if calls.classify(value.func, resolver) != calls.USER:
        return []
    names = [a.value.value for a in value.args if isinstance(a.value, cst.Name)]
    if not any(n in active for n in names):
        return []
    function = resolver.resolve(value.func)
    kept = stored(function, value) if stored is not None and function is not None else None
    return [n for n in names if n not in active and (kept is None or n in kept)]


def _receiver(value: cst.BaseExpression) -> str | None:
    """`obj` of a call `obj.method(...)` of a user method (not an array's, list's or dict's)."""
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Name)
        and calls.user_method(value.func.attr.value)
    ):
        return value.func.value.value
    return None


class _MethodEffects(rewriting.Rewriter):
    def __init__(self, normalized, active: set[str], resolver):
        super().__init__(normalized)
        self.active = active
        self.resolver = resolver
        self.namer = Namer(names_in(normalized.definition))
        self.changed = False

    def leave_SimpleStatementLine(self, original, updated):
        small = updated.body[0]
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return updated
        call = small.value
        callee = call.func
        names = [a.value.value for a in call.args if isinstance(a.value, cst.Name)]
        if isinstance(callee, cst.Name):
            return self._function_effect(updated, call, names)
        if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name)):
            return updated
        function = self.resolver.resolve(callee)
        if function is not None:  # Class.method(obj, x): a function defined in a class
            if not (isinstance(function, types.FunctionType) and "." in function.__qualname__):
                return updated
            if calls.classify(callee, self.resolver) != calls.USER:
                return updated
        elif not calls.user_method(callee.attr.value) or effects.of_library_result(self, callee):
            return updated  # a library object's method (logging.getLogger(...).debug(x)): effects.py's
        elif callee.value.value in self.normalized.parameters or callee.value.value in _locals(self.normalized):
            names.append(callee.value.value)
        else:
            return updated
        if not any(name in self.active for name in names):
            return updated
        self.changed = True
        return syntax.assign(self.namer.temporary(), call)


    def _function_effect(self, updated, call: cst.Call, names: list[str]):
        """`setm(obj, x)` for its effect, a module-level user function handed a local object and a
        differentiable value: a user call like a method's (its writes into `obj` are the object's),
        its result discarded; `receivers` makes the objects it was handed differentiable."""
        function = self.resolver.resolve(call.func)
        if not isinstance(function, types.FunctionType) or calls.classify(call.func, self.resolver) != calls.USER:
            return updated
        objects = set(self.normalized.parameters) | _locals(self.normalized)
        if not any(name in self.active for name in names) or not any(
            n in objects and n not in self.active for n in names
        ):
            return updated
        self.changed = True
        return syntax.assign(self.namer.temporary(), call)


def _locals(normalized) -> set[str]:
    """The names the normalized function assigns."""
    found = set()
    for node in walk.nodes(normalized.definition):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                found |= {n.value for n in walk.nodes(target.target) if isinstance(n, cst.Name)}
    return found
