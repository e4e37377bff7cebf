"""What a value may share with the values it was made from: the relations the aliasing
analysis (transforms/analysis/aliasing.py) keeps between definitions.

`same`: definitions that may be the same array or overlap in memory (a name copy, a subscript,
an attribute, a view function or method, a call cpsgrad cannot see into: its result may be an
argument); `contains`: a tuple, list or dict holding a value; `shallow`: a container's `.copy()`
or `list(c)`, `tuple(c)`, `dict(c)`, `sorted(c)`, which hold the original's elements. numpy's
functions, operators and an array's `.copy()` make new values; numbers share nothing.
"""

from __future__ import annotations

import builtins

import libcst as cst
import numpy as np

from cpsgrad.runtime.starred import spread
from cpsgrad.transforms import calls, syntax
from cpsgrad.transforms.naming import WRITTEN_ATTRIBUTE

# numpy functions and array methods whose result may share memory with an argument
_VIEW_FUNCTIONS = {
    getattr(np, name)
    for name in (
        "reshape ravel transpose swapaxes moveaxis rollaxis squeeze expand_dims broadcast_to broadcast_arrays "
        "asarray asanyarray ascontiguousarray asfortranarray asarray_chkfinite require atleast_1d atleast_2d "
        "atleast_3d diagonal diag split array_split hsplit vsplit dsplit flip fliplr flipud rot90 real imag "
        "matrix_transpose permute_dims unstack"
    ).split()
    if hasattr(np, name)
} | {np.lib.stride_tricks.as_strided, np.lib.stride_tricks.sliding_window_view}
_FRESH_METHODS = frozenset(
    "sum mean max min prod std var cumsum cumprod dot round clip argmax argmin argsort nonzero any all trace "
    "flatten tolist item conj conjugate repeat take compress searchsorted astype tobytes count index ptp".split()
)
_FRESH_BUILTINS = {
    getattr(builtins, name)
    for name in "len abs float int round sum range isinstance print bool str repr divmod pow hash id format".split()
}
_FRESH_MODULES = ("numpy", "scipy", "math", "cpsgrad.nn", "_operator", "operator")
# builtins making a new container of their argument's elements (a shallow copy: the elements are shared)
_COPYING_BUILTINS = {builtins.list, builtins.tuple, builtins.dict, builtins.sorted, builtins.set, builtins.frozenset}
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})  # not changed by a write
_GLOBAL = "global"


class Sets:
    """Union-find over definitions (hashable keys)."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, item):
        parent = self.parent.setdefault(item, item)
        if parent != item:
            parent = self.parent[item] = self.find(parent)
        return parent

    def union(self, a, *others) -> None:
        for b in others:
            self.parent[self.find(a)] = self.find(b)



class Sharing:
    """The relations of the _Analysis (reads `same`, `contains`, `shallow`, `displays`, `copies`, `containers`,
    `numbers`, `locals`, `origin_of`, `resolver`, `fresh_callee`)."""

    def relate(self, definition, value: cst.BaseExpression, state: dict) -> None:
        """Record what `definition = value` may share with the definitions reaching it."""
        if isinstance(value, cst.Name) or (
            isinstance(value, cst.Attribute) and value.attr.value not in _STATIC_ATTRIBUTES
        ):
            for source in self.reaching_root(value, state):
                self.same.union(definition, source)
        elif isinstance(value, cst.Subscript):
            position = _constant_position(value)
            for whole in self.reaching_root(value.value, state):
                self.element_of(definition, whole, position)
        elif isinstance(value, (cst.Tuple, cst.List, cst.Dict)):
            self.containers.add(definition)
            elements = [e.value for e in value.elements]
            parts = [self.reaching_root(e, state) for e in elements]
            if not isinstance(value, cst.Dict):
                self.displays[definition] = parts
            for part in parts:
                for element in part:
                    self.contains.add((definition, element))
        elif isinstance(value, cst.Call):
            self.relate_call(definition, value, state)

    def relate_call(self, definition, call: cst.Call, state: dict) -> None:
        arguments = [d for a in call.args for d in self.reaching_root(a.value, state)]
        callee = call.func
        primitive = self.resolver.resolve(callee)
        if primitive is spread and call.args:  # `cpsgrad_runtime.spread(f, args, ...)`: the call `f(*args, ...)`
            self.relate_spread(definition, call, state)
            return
        if primitive is not None:
            if primitive in _COPYING_BUILTINS and not any(a.keyword for a in call.args):
                self.copies[definition] = arguments
                self.containers.add(definition)
                for argument in arguments:
                    self.shallow.add((definition, argument))
                return
            if primitive in _VIEW_FUNCTIONS or (primitive is np.array and any(a.keyword for a in call.args)):
                for argument in arguments:
                    self.same.union(definition, argument)
                return
            if _fresh(primitive) or self.returns_fresh(primitive):
                return
            variant_of = getattr(primitive, "__dict__", {}).get(WRITTEN_ATTRIBUTE) if callable(primitive) else None
            if variant_of is not None:  # a written-argument variant: (result, *the arrays it was given)
                self.relate_variant(definition, call, primitive, variant_of, arguments, state)
                return
        elif isinstance(callee, cst.Attribute) and _root(callee) is not None:  # x.method(...) of a local value
            method = callee.attr.value
            receiver = self.reaching_root(callee.value, state)
            if method == "copy":  # an array's copy is new; a list's or a dict's holds the same elements
                self.shallow.update((definition, original) for original in receiver)
                return
            if method in _FRESH_METHODS and not (method == "astype" and any(a.keyword for a in call.args)):
                return
            arguments += receiver
        else:
            arguments += self.reaching_root(callee, state)  # a function value: it may return what it holds
        for argument in arguments:  # what cpsgrad cannot see into may return an argument or a part of one
            self.element_of(definition, argument, None)

    def relate_variant(self, definition, call: cst.Call, variant, variant_of: tuple, arguments: list, state) -> None:
        """`definition = f__written(...)` (transforms/written_arguments.py): a tuple whose first
        element is f's result (new where f returns new values, else any argument or part of one)
        and whose others are the very arrays passed for the written parameters."""
        function, written = variant_of[:2]
        self.containers.add(definition)
        result = (definition, "result")
        if not (_fresh(function) or self.returns_fresh(function)):
            for argument in arguments:
                self.element_of(result, argument, None)
        bound = calls.bound_parameters(variant.__code__, call) or []
        given = {parameter: argument.value for parameter, argument in bound if parameter is not None}
        parts = [[result]] + [list(self.reaching_root(given[p], state)) if p in given else [] for p in written]
        self.displays[definition] = parts
        for part in parts:
            for element in part:
                self.contains.add((definition, element))

    def relate_spread(self, definition, call: cst.Call, state: dict) -> None:
        """`definition = spread(f, args, *mappings)`: a new value if `f` returns new values, else
        any argument: one of the elements of `args` and of the mappings, or what `f` holds."""
        primitive = self.resolver.resolve(call.args[0].value)
        if primitive is not None and (_fresh(primitive) or self.returns_fresh(primitive)):
            return
        for argument in call.args:
            for packed in self.reaching_root(argument.value, state):
                self.element_of(definition, packed, None)

    def element_of(self, definition, whole, position: int | None) -> None:
        """`definition` is `whole[position]` (any element where `position` is None): one of the
        display's elements, or, of anything else, a part (an array's view) or any element."""
        originals = self.copies.get(whole)
        if originals is not None:  # an item of `list(c)` is an item of c (not a view of the list)
            for original in originals:
                self.element_of(definition, original, None)
            return
        parts = self.displays.get(whole)
        if parts is not None and position is not None and -len(parts) <= position < len(parts):
            for element in parts[position]:
                self.same.union(definition, element)
            return
        if parts is None and whole not in self.containers:  # an array's item may be a view of it; a list's is not
            self.same.union(definition, whole)
        for element in self.elements(whole):
            self.same.union(definition, element)

    def elements(self, whole, seen=None) -> set:
        """The definitions a container (any definition the same as `whole`) may hold."""
        root = self.same.find(whole)
        seen = set() if seen is None else seen
        if root in seen:
            return set()
        seen.add(root)
        found = {e for c, e in self.contains if self.same.find(c) == root}
        for copy, original in self.shallow:
            if self.same.find(copy) == root:
                found |= self.elements(original, seen)
        return found

    def reaching_root(self, node: cst.BaseExpression, state: dict) -> list:
        """The definitions reaching the variable an atom or attribute read starts from."""
        root = _root(node)
        return [] if root is None or root in self.numbers else self.reaching(root, state)

    def reaching(self, name: str, state: dict) -> list:
        if name in state:
            return [definition for definition, _ in state[name]]
        if name in self.locals:
            return []  # a local read before it is bound: Python raises
        if name in syntax.KEYWORD_CONSTANTS:
            return []  # `z = y if c else None`: no array of anyone's
        definition = (_GLOBAL, name)
        self.origin_of[definition] = (_GLOBAL, name)
        return [definition]

    # -- writes ----------------------------------------------------------------------------------

def _constant_position(value: cst.Subscript) -> int | None:
    """`t[1]`, `t[-1]`: the constant position a subscript reads, else None."""
    if len(value.slice) != 1 or not isinstance(value.slice[0].slice, cst.Index):
        return None
    literal = syntax.literal_value(value.slice[0].slice.value)
    return literal if type(literal) is int else None


def _fresh(primitive) -> bool:
    """Whether a library function's result is a new value (numpy, scipy, math, operators, len, ...)."""
    if primitive in _FRESH_BUILTINS or isinstance(primitive, np.ufunc):
        return True
    module = getattr(primitive, "__module__", None) or ""
    return callable(primitive) and module.startswith(_FRESH_MODULES)


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


