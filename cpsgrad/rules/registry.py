"""The rule table: derivative rules written once, as shift-style templates the transform inlines.

A template is a generator function. Its positional parameters are differentiable inputs, its
keyword-only parameters are not; the statements before `yield` are the forward (the one that
assigns the yielded names is the primal and is replaced by the user's own call), `yield` is the
shift (the continuation runs there and the outputs' adjoints come back), and the statements after
it are the backward, accumulating with `x_d += ...` into the adjoint of parameter `x`. The backward
may also bind locals (`g = ...`, `x_g, w_g = backward(...)`) that later accumulations read: one
backward call can then serve several inputs' adjoints, and the transform emits a local only when
an accumulation it keeps reads it (see `Step`). A template without `yield` declares a primitive
whose output is not differentiable (`int`, `len`, `round`).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import textwrap
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from cpsgrad import source_lines
from cpsgrad.errors import CpsgradError, RuleError

TEMPLATE_ADJOINT_SUFFIX = "_d"  # a template accumulates into `x_d` for its parameter `x`

#: Parameters that may receive a differentiable value though a rule gives them no adjoint: the
#: result is piecewise constant in them (a sign's source, a cutoff, a looked-up key, a value only
#: compared, an array read for its shape: `like`). A differentiable value reaching any other parameter
#: without an adjoint (`np.var(x, ddof=x[0])`, batch_norm's `eps`, an axis) is refused at its call:
#: its gradient would be dropped (transforms/adjoint/forward.py).
PIECEWISE_CONSTANT = frozenset(
    {"y", "a", "like", "stop", "tol", "rcond", "cond", "atol", "rtol", "matched", "key", "index", "indices",
     "condition", "self"}
)


@dataclass(frozen=True)
class Step:
    """One statement of a template's backward: an accumulation `p_d += value` (`accumulator`
    is `p_d`), or a backward local `name = value` / `a, b = value` (`names`, bound once each).

    A local is computed where the template computes it, once, and only when an accumulation the
    transform keeps (its parameter's argument is active) reads it, directly or through another
    local: a backward call returning several inputs' adjoints runs once, or not at all."""

    value: cst.BaseExpression
    accumulator: str | None = None
    names: tuple[str, ...] = ()
    target: cst.BaseAssignTargetExpression | None = None  # a local's, as written


@dataclass
class Rule:
    """One derivative template for one primitive."""

    primitive: object
    template: Callable

    @property
    def name(self) -> str:
        return self.template.__name__

    @cached_property
    def trusted(self) -> bool:
        """A built-in rule (cpsgrad's own module): its backward is inlined unchecked. A user's
        rule gets its contributions checked (runtime.rule_contribution)."""
        return (getattr(self.template, "__module__", None) or "").split(".")[0] == "cpsgrad"

    @cached_property
    def label(self) -> str:
        """`name (file:line)`, how errors about this rule name it."""
        code = getattr(self.template, "__code__", None)
        where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
        return f"{self.template.__name__}{where}"

    @cached_property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.template)

    @cached_property
    def differentiable_parameters(self) -> list[str]:
        return [
            p.name for p in self.signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]

    @cached_property
    def definition(self) -> cst.FunctionDef:
        # a template made from a text carries it (cpsgrad/rules/scipy/stats.py: linecache may be cleared), or
        # a function that writes it (cpsgrad/rules/module_templates.py: the math and numpy rules of one derivative)
        source = getattr(self.template, "__rule_source__", None)
        source = source() if callable(source) else source
        module = None if source else source_lines.parsed_definition(self.template)
        if module is None:
            module = cst.parse_module(source or textwrap.dedent(inspect.getsource(self.template)))
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                return statement
        raise CpsgradError(f"rule template {self.name} has no def")

    @cached_property
    def parts(self) -> tuple[list, list[str], list[str], list]:
        """(forward statements, output names, output adjoint names, backward statements)."""
        statements = list(self.definition.body.body)
        for position, statement in enumerate(statements):
            shift = _shift(statement)
            if shift is not None:
                outputs, adjoints = shift
                return statements[:position], outputs, adjoints, statements[position + 1:]
        return statements, [], [], []

    @cached_property
    def steps(self) -> list[Step]:
        """The backward as `Step`s; a RuleError for a statement that is neither form."""
        accumulators = {p + TEMPLATE_ADJOINT_SUFFIX for p in self.signature.parameters}
        _, outputs, output_adjoints, backward = self.parts
        taken = set(self.signature.parameters) | accumulators | set(outputs) | set(output_adjoints)
        steps = []
        for statement in backward:
            one = isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            small = statement.body[0] if one else None
            if (isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign)
                    and isinstance(small.target, cst.Name) and small.target.value in accumulators):
                steps.append(Step(small.value, accumulator=small.target.value))
                continue
            names = _local_names(small, taken)
            if names is None:
                if isinstance(statement, cst.SimpleStatementLine):  # without its comment
                    statement = statement.with_changes(leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
                code = cst.Module([statement]).code.strip().splitlines()[0]
                raise RuleError(
                    f"rule {self.label}: after yield, each statement must accumulate into a parameter's "
                    f"adjoint (x_d += ...) or bind new backward locals (g = ..., a name not ending in "
                    f"{TEMPLATE_ADJOINT_SUFFIX}), not `{code}`; accumulators here: {', '.join(sorted(accumulators))}"
                )
            taken.update(names)
            steps.append(Step(small.value, names=names, target=small.targets[0].target))
        return steps

    @property
    def differentiable(self) -> bool:
        return bool(self.parts[1])

    @cached_property
    def without_adjoint(self) -> frozenset[str]:
        """The parameters its backward gives nothing that may not take a differentiable value
        (not in PIECEWISE_CONSTANT)."""
        accumulated = {step.accumulator[: -len(TEMPLATE_ADJOINT_SUFFIX)] for step in self.steps if step.accumulator}
        return frozenset(self.signature.parameters) - accumulated - PIECEWISE_CONSTANT

    @property
    def globals(self) -> dict:
        return self.template.__globals__

    def bind(self, args: tuple, kwargs: dict) -> dict | None:
        """Template parameter -> the call's argument, or None when the call does not fit."""
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            return None
        return dict(bound.arguments)


def _shift(statement: cst.BaseStatement) -> tuple[list[str], list[str]] | None:
    """For `y_d = yield y` (or `a_d, b_d = yield a, b`): (outputs, their adjoints)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or not isinstance(assign.value, cst.Yield):
        return None
    target = assign.targets[0].target
    value = assign.value.value
    adjoints = [e.value.value for e in target.elements] if isinstance(target, cst.Tuple) else [target.value]
    outputs = [e.value.value for e in value.elements] if isinstance(value, cst.Tuple) else [value.value]
    return outputs, adjoints


def _local_names(small, taken: set[str]) -> tuple[str, ...] | None:
    """The names `name = value` or `a, b = value` binds, when that is a backward local's
    statement: plain new names (not a parameter's, an accumulator's, an output's or an earlier
    local's, none ending in `_d`). None for anything else."""
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or isinstance(small.value, cst.Yield):
        return None
    target = small.targets[0].target
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    if isinstance(target, (cst.Tuple, cst.List)) and any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    if not all(isinstance(e, cst.Name) for e in elements):
        return None
    names = tuple(e.value for e in elements)
    if len(set(names)) != len(names) or any(n in taken or n.endswith(TEMPLATE_ADJOINT_SUFFIX) for n in names):
        return None
    return names


def _key(primitive: object):
    """What the table files a primitive under: its identity, or for a method bound to an object
    (`scipy.stats.norm.logpdf`, `rs.randn`: a new object at each attribute read) the object's
    identity and the function's, so that the rule declared for one read serves the next."""
    kind = type(primitive)
    if kind is types.MethodType:
        return (id(primitive.__self__), id(primitive.__func__))
    if kind is types.BuiltinMethodType:
        owner = primitive.__self__
        if owner is not None and not isinstance(owner, types.ModuleType):
            return (id(owner), primitive.__name__)
    return id(primitive)


def _check_template(rule: Rule) -> None:
    """A user's template, read and checked when it is registered (not when a program inlines
    it): its source must be readable and its backward made of `Step`s for its parameters."""
    try:
        _ = rule.parts
    except (OSError, TypeError, SyntaxError, cst.ParserSyntaxError) as error:
        raise RuleError(
            f"rule {rule.label}: cannot read its source ({error}); cpsgrad inlines a rule's "
            "source, so define the template with def in a file"
        ) from None
    _ = rule.steps  # raises the RuleError for a statement of neither form


def _initializing(name: str) -> bool:
    """Whether the module `name` is being imported right now (its body has not finished)."""
    module = sys.modules.get(name)
    return module is not None and bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


class RuleTable:
    """Primitive -> its templates (tried in order; the first whose signature fits a call wins)."""

    def __init__(self) -> None:
        self._rules: dict[int, list[Rule]] = {}
        self._primitives: dict[int, object] = {}
        self.version = 0
        self._deferred: dict[str, tuple[str, ...]] = {}  # library module -> the rule modules for it
        self._loading = threading.Lock()

    def defer(self, library: str, *modules: str) -> None:
        """Import the rule `modules` once the module `library` is imported, not before
        (scipy.stats takes a second to import): looked for at each lookup that finds no rule,
        and before a rule is added (a user's rule stays in front of the built-in ones)."""
        self._deferred[library] = modules
        self.load_deferred()

    def load_deferred(self) -> bool:
        """Import the deferred rule modules whose library is imported now; whether any were."""
        if not self._deferred or not any(library in sys.modules for library in self._deferred):
            return False
        with self._loading:
            ready = [
                library
                for library in self._deferred
                if library in sys.modules and not any(_initializing(m) for m in self._deferred[library])
            ]  # a rule module being imported now (`import cpsgrad.rules.scipy.stats`) loads its group later
            for library in ready:
                for module in self._deferred.pop(library, ()):
                    importlib.import_module(module)
        return bool(ready)

    def add(self, primitive: object, template: Callable, replace: bool = False) -> Rule:
        if self._deferred and not self._loading.locked():
            self.load_deferred()
        if not inspect.isgeneratorfunction(template) and "yield" in inspect.getsource(template):
            raise CpsgradError(f"rule template {template.__name__} must be a plain generator function")
        rule = Rule(primitive, template)
        if not rule.trusted:
            _check_template(rule)
        key = _key(primitive)
        if replace or key not in self._rules:
            self._rules[key] = []
        self._rules[key].insert(0, rule)
        self._primitives[key] = primitive
        self.version += 1
        return rule

    def remove(self, rule: Rule) -> None:
        self._rules[_key(rule.primitive)].remove(rule)
        self.version += 1

    def rules_for(self, primitive: object) -> list[Rule]:
        key = _key(primitive)
        stored = self._primitives.get(key)
        if stored is primitive or (stored is not None and type(key) is tuple and stored == primitive):
            return self._rules.get(key, [])
        if self._deferred and self.load_deferred():
            return self.rules_for(primitive)
        return []

    def __contains__(self, primitive: object) -> bool:
        return bool(self.rules_for(primitive))

    def primitives(self) -> list[object]:
        self.load_deferred()
        return [self._primitives[key] for key, rules in self._rules.items() if rules]


TABLE = RuleTable()


# ---- what to declare for a primitive without a rule ---------------------------------------------


def advice(primitive: object, label: str) -> str:
    """The advice of the NoRuleError for a call `label(...)` of `primitive` (as the call names
    it): which rule to declare, by the name it has in its library's public namespace
    (`@cpsgrad.rule(scipy.special.logsumexp)`, not `scipy.special._logsumexp.logsumexp`), and
    where one exists, the function that already has a rule to call instead (a distribution's
    method for a frozen distribution's; a function of the same name in another module)."""
    if TABLE.rules_for(primitive):
        return f"no derivative rule for {label} fits these arguments; see cpsgrad.rule to add one"
    if primitive is set or primitive is frozenset:
        return (
            "sets are not differentiable values (unordered and deduplicated, an element's gradient has no place "
            "to go); keep differentiable values in a tuple or list (a set of ints, strings or tuples of them is fine)"
        )
    owner = getattr(primitive, "__self__", None)
    if _distribution(primitive):  # scipy.stats.norm(loc, scale) with a differentiable loc or scale
        name = public_name(primitive) or label
        parameters = "loc, scale" if hasattr(primitive, "freeze") else "mean, cov"  # rv_generic or multi_rv_generic
        return (
            f"a distribution frozen from differentiable parameters ({label}(...)) is not differentiated "
            f"(a frozen distribution's methods are, in x only); pass the parameters to the method "
            f"instead: {name}.logpdf(x, {parameters}), not {name}({parameters}).logpdf(x)"
        )
    name = public_name(primitive) or label
    text = f"no derivative rule for {label}; declare one with @cpsgrad.rule({name})"
    if type(primitive) is types.MethodType and public_name(owner) is None and not isinstance(owner, type):
        function = primitive.__func__  # a method of an object with no public name: the class's function serves all
        text += (f" (this object's method), or @cpsgrad.rule({public_name(function) or function.__qualname__}) "
                 "for every instance")
    if _distribution(getattr(owner, "dist", None)):  # a frozen distribution's method
        method = getattr(owner.dist, primitive.__name__, None)
        if method is not None and TABLE.rules_for(method):
            return text + (f"; {public_name(method)} has one: call it with the parameters, "
                           f"{public_name(method)}(x, loc, scale) (shape parameters first)")
    others = sorted({public_name(p) or "" for p in TABLE.primitives() if _same_function(p, primitive)} - {"", name})
    if others:
        text += f"; {' and '.join(others[:3])} {'has' if len(others) == 1 else 'have'} one"
    return text


def public_name(value: object) -> str | None:
    """The dotted name `value` has where its library exports it (the module path without its
    private parts, `scipy.special.logsumexp`; `scipy.stats.norm.logpdf` for a method bound to
    `scipy.stats.norm`), else its defining module's; None for an object with no such name."""
    owner = getattr(value, "__self__", None)
    if (
        type(value) in (types.MethodType, types.BuiltinMethodType)
        and owner is not None
        and not isinstance(owner, types.ModuleType)
    ):
        base = public_name(owner)
        return f"{base}.{value.__name__}" if base is not None else None
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(value, types.ModuleType):
        return value.__name__
    module = getattr(value, "__module__", None)
    if isinstance(owner, types.ModuleType):
        module = module or owner.__name__
    if isinstance(qualname, str) and (hasattr(value, "__qualname__") or callable(getattr(value, "reduce", None))):
        modules = _public_modules(module) if isinstance(module, str) else ["numpy", "scipy.special"]  # a ufunc
        for candidate in modules:
            if _attribute(sys.modules.get(candidate), qualname) is value:
                return qualname if candidate == "__main__" else f"{candidate}.{qualname}"
        return (
            f"{module}.{qualname}" if isinstance(module, str) and module not in ("builtins", "__main__") else qualname
        )
    kind = type(value).__module__  # an instance (scipy.stats.norm): a public module's name for it
    for candidate in _public_modules(kind)[:-1]:
        found = sys.modules.get(candidate)
        name = (
            next((n for n, v in vars(found).items() if v is value and not n.startswith("_")), None) if found else None
        )
        if name is not None:
            return f"{candidate}.{name}"
    return None


def _public_modules(module: str) -> list[str]:
    """`module`'s public ancestors, nearest first, then `module` itself:
    scipy.special._logsumexp -> [scipy.special, scipy, scipy.special._logsumexp]."""
    parts = module.split(".")
    public = next((i for i, part in enumerate(parts) if part.startswith("_")), len(parts))
    return [".".join(parts[:n]) for n in range(public, 0, -1)] + ([module] if public < len(parts) else [])


def _attribute(owner, dotted: str):
    for part in dotted.split("."):
        if owner is None or part.startswith("<"):
            return None
        owner = getattr(owner, part, None)
    return owner


def _distribution(value) -> bool:
    """A scipy.stats distribution (`scipy.stats.norm`, not one frozen), which calling freezes."""
    classes = [getattr(sys.modules.get(module), name, None) for module, name in _DISTRIBUTIONS]
    return any(isinstance(value, kind) for kind in classes if isinstance(kind, type))


_DISTRIBUTIONS = (("scipy.stats._distn_infrastructure", "rv_generic"),
                  ("scipy.stats._multivariate", "multi_rv_generic"))


def _same_function(candidate, primitive) -> bool:
    """A function of another module with `primitive`'s name (math.erf for scipy.special.erf), not
    a method (every distribution has its logpdf)."""
    if (
        candidate is primitive
        or getattr(candidate, "__self__", None) is not None
        and not isinstance(candidate.__self__, types.ModuleType)
    ):
        return False
    name = getattr(primitive, "__name__", None)
    return (
        isinstance(name, str)
        and getattr(candidate, "__name__", None) == name
        and not isinstance(candidate, type)
        and "." not in (getattr(candidate, "__qualname__", name) or name)
    )


def not_differentiable(primitive: Callable, name: str | None = None) -> Callable:
    """Declare that `primitive`'s result carries no gradient, for any arguments (a template
    without `yield`): integers, booleans, shapes, piecewise constant functions. A call of it
    with a differentiable argument is then neither transformed nor refused for want of a rule;
    its result is a constant of the derivative program. Returns `primitive`, so it also serves
    as a decorator::

        @cpsgrad.not_differentiable
        def bucket(x):                     # piecewise constant: its derivative is 0 almost everywhere
            return float(np.searchsorted(EDGES, x))

    Like `rule`, it bumps the table's version: programs already made are made again.
    """

    def template(*args, **kwargs):
        y = primitive(*args, **kwargs)  # noqa: F841  (a template: read by the transform, never run)

    template.__name__ = name or f"{getattr(primitive, '__name__', 'primitive')}_"
    TABLE.add(primitive, template)
    return primitive


def rule(primitive: object) -> Callable[[Callable], Callable]:
    """Declare the derivative of `primitive` as a template (see this module's docstring).

    ::

        @cpsgrad.rule(mylib.softclip)
        def softclip(x):
            y = mylib.softclip(x)
            y_d = yield y
            x_d += y_d * (1.0 - y * y)

    Positional parameters are differentiable, keyword-only ones are not. After `yield`, each
    statement accumulates into a parameter's adjoint (`x_d += ...`) or binds backward locals
    that later statements read; a backward computing several adjoints at once is called once,
    and only when one of those adjoints is wanted::

        @cpsgrad.rule(mylib.scaled)
        def scaled(x, w):
            y = mylib.scaled(x, w)
            y_d = yield y
            x_g, w_g = mylib.scaled_backward(y_d, x, w)
            x_d += x_g
            w_d += w_g

    A later rule for the same primitive is tried before earlier ones; functions already
    transformed are transformed again on their next call.
    """

    def register(template: Callable) -> Callable:
        TABLE.add(primitive, template)
        return template

    return register
