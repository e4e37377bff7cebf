"""One derivative, two rules: the `math.X` and the `np.X` rule of a function made from one template.

A function that `math` and numpy both define (sin, exp, log1p, atan2, ...) has its derivative
written once, in `cpsgrad/rules/elementary.py`, as an ordinary shift-style template over a
placeholder module `m` (`x_d += y_d * m.cos(x)`) and declared with `elementary(math.sin, np.sin)`.
`math_text` and `numpy_text` write the two rules' templates from it, and `make` makes each a
generator function in its rule module's namespace (cpsgrad/rules/math.py's,
cpsgrad/rules/numpy/ufuncs.py's or binary.py's, so that the helpers it reads are those modules'),
whose code points at the shared template's file and line (errors name it, and the disk cache's
digest of the rule table stamps that file: editing a shared derivative changes the key).

- The math rule is the shared template with `m` read as `math`: the scalar fast path, as written.
- The numpy rule reads `m.X` as numpy's function (`math.asin` is `np.arcsin`), and turns each
  accumulation `p_d += E` into `p_d += chain(y_d, S, p)`, where the slope `S` is `E` with the
  output's adjoint set to one: `y_d * S` gives `S`, `y_d / D` gives `1.0 / D`, `-y_d * S`
  gives `-S`, `cpsgrad_runtime.divide(y_d * c, D)` gives `cpsgrad_runtime.array_divide(c, D)`.
  `chain` sums the product back to `p`'s shape and keeps the symbolic zero. The output's adjoint
  must be the leftmost factor of `E` (a slope times the adjoint), else `numpy_text` refuses it.
  `sign` reads as `array_sign`.
- `kernel="sin"`: the numpy backward is the fused kernel of that name
  (`elementwise_adjoint("sin", y_d, x, x)`, kernels/formulas/elementwise.py), fed what its
  catalog entry saves; below the kernel's threshold it multiplies by the shared slope
  (`numpy_slope`, the lambda ufuncs.py keeps in `_SLOPES`).
- `singular_in_numpy=True`: where `math` raises (math.log(0), math.atanh(1)) numpy returns a
  value (-inf, inf) at which the slope is infinite; each `/` of the numpy slope by something
  that depends on an input then becomes `cpsgrad_runtime.array_divide` (inf, no warning). The
  math rule keeps its plain `/`: it is never reached there.

What differs between the two modules beyond this (math.pow and np.power, math.hypot's and
np.hypot's slope at the origin, math.fmod's and np.fmod's adjoint forms) is written in each
module's own rules, not here.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import re
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from cpsgrad import source_lines
from cpsgrad.errors import RuleError
from cpsgrad.kernels.formulas.catalog import UNARY_BY_NAME
from cpsgrad.rules.registry import rule

MODULE = "m"  # the placeholder a shared template calls the module by

#: math's names that numpy spells differently.
NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
               "atanh": "arctanh", "atan2": "arctan2"}
#: helpers a shared template calls, and the numpy rule's name for each.
NUMPY_HELPERS = {"sign": "array_sign"}
_DIVIDE = ("cpsgrad_runtime", "divide")
_ARRAY_DIVIDE = ("cpsgrad_runtime", "array_divide")


@dataclass(frozen=True, eq=False)
class Elementary:
    """A function `math` and numpy share, with its derivative written once (`template`)."""

    template: Callable
    math: object
    numpy: tuple
    kernel: str | None = None
    singular_in_numpy: bool = False

    @property
    def name(self) -> str:
        return self.template.__name__

    @property
    def numpy_name(self) -> str:
        return self.numpy[0].__name__

    @functools.cached_property
    def lines(self) -> list[str]:
        """The shared template's source lines from its `def` (its decorator left out), dedented."""
        found = source_lines.definition_text(self.template)  # its code ends in accumulations: none cut
        lines = textwrap.dedent(found[0] if found else inspect.getsource(self.template)).splitlines()
        return lines[next(i for i, line in enumerate(lines) if line.startswith("def ")):]

    @property
    def arity(self) -> int:
        return len(inspect.signature(self.template).parameters)


ELEMENTARY: list[Elementary] = []


def elementary(math_function, *numpy_functions, kernel: str | None = None, singular_in_numpy: bool = False):
    """Declare the shared template of `math_function` and `numpy_functions` (see this module's
    docstring); registers nothing: cpsgrad/rules/math.py and the numpy rule modules do."""

    def record(template: Callable) -> Callable:
        ELEMENTARY.append(Elementary(template, math_function, numpy_functions, kernel, singular_in_numpy))
        return template

    return record


# ---- the two readings -------------------------------------------------------------------------


_PLACEHOLDER = re.compile(r"(?<![\w.])" + MODULE + r"\.(\w+)")
_HELPER = re.compile(r"(?<![\w.])(" + "|".join(NUMPY_HELPERS) + r")\(")
_SHIFT = re.compile(r"^\s+(\w+) = yield \w+$")
_ACCUMULATION = re.compile(r"^(\s+)(\w+)_d \+= (.+)$")


def _read_as(text: str, module: str) -> str:
    """`text` with `m.X` read as `module.X`; for numpy, with numpy's names (`np.arcsin`),
    `array_divide` for `divide` and the helpers' numpy versions (`array_sign`). Text-level, as
    the names are: the template is parsed once, when the transform reads it (a libcst round
    here would double the first transform's cost for these rules)."""
    if module == "math":
        return _PLACEHOLDER.sub(r"math.\1", text)
    text = _PLACEHOLDER.sub(lambda found: "np." + NUMPY_NAMES.get(found.group(1), found.group(1)), text)
    text = re.sub(r"(?<![\w.])cpsgrad_runtime\.divide\(", "cpsgrad_runtime.array_divide(", text)
    return _HELPER.sub(lambda found: NUMPY_HELPERS[found.group(1)] + "(", text)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _dotted(node) -> tuple[str, ...] | None:
    if isinstance(node, cst.Name):
        return (node.value,)
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return None if base is None else (*base, node.attr.value)
    return None


def _mentions(node: cst.CSTNode, names) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Name(self, name):
            if name.value in names:
                found.append(name)

    node.visit(Finder())
    return bool(found)


def math_text(entry: Elementary) -> str:
    """The math rule's template: the shared one with `m` read as `math`."""
    return _read_as("\n".join(entry.lines) + "\n", "math")


def numpy_text(entry: Elementary) -> str:
    """The numpy rule's template: `m` read as numpy, each accumulation `p_d += E` written as
    `p_d += chain(y_d, slope, p)` (or the kernel's `elementwise_adjoint`)."""
    adjoint, parameters, shift = _backward(entry)
    lines = [f"def {entry.numpy_name}(" + entry.lines[0].split("(", 1)[1], *entry.lines[1:shift + 1]]
    for line in entry.lines[shift + 1:]:
        indent, parameter, expression = _ACCUMULATION.match(line).groups()
        if entry.kernel is not None:
            value = f'elementwise_adjoint("{entry.kernel}", {adjoint}, {_saved(entry)}, {parameter})'
        else:
            value = f"chain({adjoint}, {_slope_text(entry, expression, adjoint, parameters)}, {parameter})"
        lines.append(f"{indent}{parameter}_d += {value}")
    return _read_as("\n".join(lines) + "\n", "numpy")


def numpy_slope(entry: Elementary) -> str:
    """`lambda s: S`, the numpy slope of a kernel op from what its kernel saves (`s`: the input,
    or the output when the catalog entry saves it), for the sizes below the kernel's threshold."""
    adjoint, parameters, shift = _backward(entry)
    (line,) = entry.lines[shift + 1:]
    slope = _read_as(_slope_text(entry, _ACCUMULATION.match(line).group(3), adjoint, parameters), "numpy")
    saved = _saved(entry)
    if _mentions(cst.parse_expression(slope), (set(parameters) | {"y"}) - {saved}):
        raise RuleError(f"shared rule {entry.name}: its kernel saves {saved}, but its slope {slope} reads more")
    return f"lambda {saved}: {slope}"


def slopes(entry: Elementary, module: str) -> dict[str, str]:
    """Each parameter's slope (its accumulation with the output's adjoint set to one), read as
    `module` ("math" or "numpy"): forward mode's tangent is the sum of `p_t * slope`
    (cpsgrad/rules/tangents.py)."""
    adjoint, parameters, shift = _backward(entry)
    found = {}
    for line in entry.lines[shift + 1:]:
        _, parameter, expression = _ACCUMULATION.match(line).groups()
        found[parameter] = _read_as(_slope_text(entry, expression, adjoint, parameters), module)
    return found


def _slope_text(entry: Elementary, expression: str, adjoint: str, parameters: list[str]) -> str:
    singular = parameters if entry.singular_in_numpy else ()
    return _code(_slope(cst.parse_expression(expression), adjoint, singular))


def _saved(entry: Elementary) -> str:
    return "y" if UNARY_BY_NAME[entry.kernel].saves_output else list(inspect.signature(entry.template).parameters)[0]


def _backward(entry: Elementary) -> tuple[str, list[str], int]:
    """(the output's adjoint, the parameters, the line of `yield`); a RuleError unless every
    line after it is an accumulation `p_d += ...` into a parameter's adjoint, on one line."""
    parameters = list(inspect.signature(entry.template).parameters)
    shift = next((i for i, line in enumerate(entry.lines) if _SHIFT.match(line)), None)
    if shift is None:
        raise RuleError(f"shared rule {entry.name}: one output, `y_d = yield y`")
    for line in entry.lines[shift + 1:]:
        accumulation = _ACCUMULATION.match(line)
        if accumulation is None or accumulation.group(2) not in parameters:
            raise RuleError(f"shared rule {entry.name}: after yield, only accumulations `x_d += ...`, one a line")
    return _SHIFT.match(entry.lines[shift]).group(1), parameters, shift


_ONE, _MINUS_ONE = "one", "minus one"


def _slope(expression: cst.BaseExpression, adjoint: str, singular: tuple | list) -> cst.BaseExpression:
    """`expression` (an accumulation's value) with the output's adjoint set to one, simplified."""
    slope = _unit(expression, adjoint, singular, expression)
    if slope in (_ONE, _MINUS_ONE):
        return cst.Float("1.0") if slope == _ONE else cst.UnaryOperation(cst.Minus(), cst.Float("1.0"))
    return slope.with_changes(lpar=[], rpar=[]) if hasattr(slope, "lpar") else slope


def _unit(node, adjoint, singular, whole):
    def refuse():
        return RuleError(f"shared rule: `{_code(whole)}` is not a slope times the adjoint {adjoint}, "
                         f"which must be its leftmost factor")

    if isinstance(node, cst.Name) and node.value == adjoint:
        return _ONE
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _unit(node.expression, adjoint, singular, whole)
        if inner in (_ONE, _MINUS_ONE):
            return _MINUS_ONE if inner == _ONE else _ONE
        return node.with_changes(expression=inner)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
        if _mentions(node.right, {adjoint}) or not _mentions(node.left, {adjoint}):
            raise refuse()
        left = _unit(node.left, adjoint, singular, whole)
        right = node.right
        if isinstance(node.operator, cst.Multiply):
            if left in (_ONE, _MINUS_ONE):
                if left == _ONE:
                    return right
                if isinstance(right, cst.BinaryOperation) and not right.lpar:
                    right = right.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                return cst.UnaryOperation(cst.Minus(), right)
            return node.with_changes(left=left)
        numerator = _number(left) if left in (_ONE, _MINUS_ONE) else left
        if singular and _mentions(right, set(singular)):
            divide = cst.Attribute(cst.Name(_ARRAY_DIVIDE[0]), cst.Name(_ARRAY_DIVIDE[1]))
            return cst.Call(divide, [cst.Arg(numerator), cst.Arg(right.with_changes(lpar=[], rpar=[]))])
        return node.with_changes(left=numerator)
    if isinstance(node, cst.Call) and _dotted(node.func) == _DIVIDE and len(node.args) == 2:
        if _mentions(node.args[1].value, {adjoint}):
            raise refuse()
        numerator = _unit(node.args[0].value, adjoint, singular, whole)
        numerator = _number(numerator) if numerator in (_ONE, _MINUS_ONE) else numerator
        return node.with_changes(args=[node.args[0].with_changes(value=numerator), node.args[1]])
    raise refuse()


def _number(unit: str) -> cst.BaseExpression:
    return cst.Float("1.0") if unit == _ONE else cst.UnaryOperation(cst.Minus(), cst.Float("1.0"))


# ---- making the templates ---------------------------------------------------------------------


def make(entry: Elementary, namespace: dict, module: str) -> Callable:
    """The `module` ("math" or "numpy") rule's template of `entry`, a function in `namespace` (that
    rule module's globals, so the helpers it reads are the module's). Its code is the shared
    template's (its signature; errors about the rule name elementary.py's line); its text, what the
    transform reads, is written on first use (`__rule_source__`, a callable): libcst would cost
    importing cpsgrad a second for the fifty templates."""
    name = entry.name if module == "math" else entry.numpy_name
    template = types.FunctionType(entry.template.__code__, namespace, name)
    template.__qualname__ = name
    template.__rule_source__ = functools.cache(functools.partial(math_text if module == "math" else numpy_text, entry))
    template.__elementary__ = entry
    return template


def register(entries, namespace: dict, module: str) -> list[Callable]:
    """Register the `module` ("math" or "numpy") rule of each of `entries`, made in `namespace`."""
    made = []
    for entry in entries:
        template = make(entry, namespace, module)
        for primitive in (entry.math,) if module == "math" else reversed(entry.numpy):
            rule(primitive)(template)
        namespace[template.__name__] = template
        made.append(template)
    return made


def missing_names(template: Callable) -> list[str]:
    """The names a made template's text reads that its module does not define (an import a linter
    took for unused): tests/test_rules_elementary.py checks that there are none."""
    namespace = template.__globals__
    return sorted(n for n in _free_names(template.__rule_source__()) if n not in namespace and not hasattr(builtins, n))


def _free_names(text: str) -> set[str]:
    """The names a template's text reads that it does not bind (its globals)."""
    tree = ast.parse(text)
    bound = {argument.arg for node in ast.walk(tree) if isinstance(node, ast.arguments) for argument in node.args}
    bound |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)} - bound
