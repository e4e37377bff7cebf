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

import types

import libcst as cst

from cpsgrad.transforms import calls, effects, rewriting, syntax, walk
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
    _emit(normalizer, name, target.attr.value, atom, out, origin)


def augmented(normalizer, node: cst.AugAssign, operator: cst.BaseBinaryOp, out: list) -> None:
    """`obj.attr op= value`: the object, `t = obj.attr`, the value, `t op value`, and the write."""
    target = node.target
    name = _object(normalizer, target, out)
    current = normalizer.temporary_value(cst.Attribute(cst.Name(name), target.attr), out, node)
    operand = normalizer.atom(node.value, out)
    updated = normalizer.temporary_value(cst.BinaryOperation(current, operator, operand), out, node)
    _emit(normalizer, name, target.attr.value, updated, out, node, augmented=True)


def _emit(normalizer, name: str, attribute: str, value, out: list, origin, augmented: bool = False) -> None:
    """`obj = set_attribute(obj, 'attr', v)`; an augmented one says so (`..., True)`: Python would
    have changed a list or an array the attribute holds in place, which is refused when it runs)."""
    arguments = [cst.Arg(cst.Name(name)), cst.Arg(cst.SimpleString(repr(attribute))), cst.Arg(value)]
    if augmented:
        arguments.append(cst.Arg(cst.Name("True")))
    call = cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name("set_attribute")), arguments)
    normalizer.emit(out, syntax.assign(name, call), origin)


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
    discarded. Whether it changed (the pipeline runs activity again)."""
    rewriter = _MethodEffects(normalized, active, resolver)
    definition = normalized.definition.visit(rewriter)
    if not rewriter.changed:
        return False
    rewriting.replace(normalized, definition)
    return True


def receivers(found: list, active: set[str], definition: cst.FunctionDef) -> set[str]:
    """Names that are differentiable because of what happens to the objects they hold: a local
    object whose method is called with a differentiable argument (`t = obj.method(x)`: the method
    may keep `x` in it), and the container, object or name a differentiable object written into
    or called a method of was read from (`o = objs[i]`, `layer = self.layer`, `b = a`): a later
    read through it must see the attributes' gradients."""
    local = {p.name.value for p in (*definition.params.posonly_params, *definition.params.params)}
    local |= {p.name.value for p in definition.params.kwonly_params}
    local |= {name for targets, _ in found for name in targets}
    objects = {targets[0] for targets, value in found if is_attribute_write(value)}
    extra = set()
    for _, value in found:
        receiver = _receiver(value)
        if receiver is None or receiver not in local:
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
        if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name)):
            return updated
        names = [a.value.value for a in call.args if isinstance(a.value, cst.Name)]
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


def _locals(normalized) -> set[str]:
    """The names the normalized function assigns."""
    found = set()
    for node in walk.nodes(normalized.definition):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                found |= {n.value for n in walk.nodes(target.target) if isinstance(n, cst.Name)}
    return found
