"""Helpers that generated programs call: container adjoints and the few rules' kink conventions.

Generated code refers to this module as `cpsgrad_runtime`. It holds no state.
"""

from __future__ import annotations

import builtins  # noqa: F401  (generated code reads builtins here when the user shadows them)
import dataclasses
import math
import numbers
import re
from collections.abc import Sequence

import numpy as np

from cpsgrad.errors import RuleError, SourceLocation, UnsupportedError
from cpsgrad.kernels.device_array import DeviceArray
from cpsgrad.runtime_arrays import *  # noqa: F403  (array helpers, listed in their __all__)
from cpsgrad.runtime_arrays import array_divide, array_log_for_power, array_power_slope, array_sign
from cpsgrad.runtime_closures import make_function, make_partial  # noqa: F401  (nested defs, lambdas, partials)


class SequenceAdjoint(tuple):
    """The adjoint of a tuple or list: one adjoint per element; `0.0` stands for all zeros.

    `+` adds elementwise (tuple `+` would concatenate), and `0.0 + adjoint` is the adjoint.
    """

    __slots__ = ()

    def __add__(self, other):
        if isinstance(other, SequenceAdjoint):
            return SequenceAdjoint(a + b for a, b in zip(self, other, strict=True))
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, other):
        raise TypeError("repeating a differentiable tuple or list is not supported yet")

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"SequenceAdjoint({tuple(self)!r})"


class DictAdjoint(dict):
    """The adjoint of a dict (or of a dataclass's fields): one adjoint per key read; a key that
    is absent stands for zeros, and `0.0` stands for all zeros.

    `+` merges, adding the adjoints of the keys both sides hold, and `0.0 + adjoint` is the
    adjoint. Generated code never changes one in place (`+` builds a new one).
    """

    __slots__ = ()

    def __add__(self, other):
        if isinstance(other, DictAdjoint):
            if not other:
                return self
            if not self:
                return other
            merged = DictAdjoint(self)
            for key, value in other.items():
                merged[key] = merged[key] + value if key in merged else value
            return merged
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"DictAdjoint({dict(self)!r})"


def entry(adjoint, key):
    """The adjoint of the value stored under `key` in a dict whose adjoint is `adjoint`."""
    if isinstance(adjoint, DictAdjoint):
        return adjoint.get(key, 0.0)
    return 0.0


def display_entry(adjoint, keys: tuple, position: int):
    """`entry` for element `position` of a dict display `{k0: v0, k1: v1, ...}` whose keys are
    known only at run time: a key repeated later in the display was overwritten (zero adjoint)."""
    key = keys[position]
    if any(later == key for later in keys[position + 1:]):
        return 0.0
    return entry(adjoint, key)


def values_adjoint(container, adjoint):
    """The adjoint of a dict from that of `tuple(container.values())` (`for v in d.values()`)."""
    _require_dict(container, "values")
    if isinstance(adjoint, SequenceAdjoint):
        return DictAdjoint(zip(container, adjoint, strict=True))
    return 0.0


def items_adjoint(container, adjoint):
    """The adjoint of a dict from that of `tuple(container.items())`: each pair's second part."""
    _require_dict(container, "items")
    if isinstance(adjoint, SequenceAdjoint):
        return DictAdjoint((key, item(pair, 1)) for key, pair in zip(container, adjoint, strict=True))
    return 0.0


def get_adjoint(container, key, adjoint):
    """The adjoint of a dict from that of `container.get(key, default)` (a missing key: zero)."""
    _require_dict(container, "get")
    return DictAdjoint({key: adjoint}) if key in container else 0.0


def get_default_adjoint(container, key, adjoint):
    """The adjoint of the default of `container.get(key, default)`: the result's when key is missing."""
    return 0.0 if key in container else adjoint


def _require_dict(container, method: str) -> None:
    if not isinstance(container, dict):
        raise UnsupportedError(
            None, f"method call .{method}() of a {type(container).__name__}",
            f"cpsgrad differentiates .{method}() of dicts only; call it on a dict",
        )


def attribute_adjoint(value, name: str, adjoint):
    """The adjoint of a NamedTuple or a dataclass instance when only its field `name` was read:
    a `SequenceAdjoint` for a NamedTuple (its fields in order), a `DictAdjoint` of field names
    for a dataclass."""
    fields = getattr(type(value), "_fields", None)
    if isinstance(value, tuple) and fields is not None:
        parts = [0.0] * len(value)
        parts[fields.index(name)] = adjoint
        return SequenceAdjoint(parts)
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and name in _field_names(type(value)):
        return DictAdjoint({name: adjoint})
    raise UnsupportedError(
        None, f"attribute .{name} of a differentiable {type(value).__name__}",
        "cpsgrad differentiates attribute reads of NamedTuples, dataclass instances (their fields) "
        "and numpy arrays only; pass the value itself, or a tuple or dict of values",
    )


def _field_names(kind: type) -> frozenset:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = frozenset(f.name for f in dataclasses.fields(kind))
    return names


_FIELD_NAMES: dict[type, frozenset] = {}


def construct(kind: type, positional: tuple, keywords: tuple, names: tuple):
    """`kind(*positional, **dict(zip(names, keywords)))`: a NamedTuple or dataclass built
    from differentiable values (the call's form in derivative programs)."""
    return kind(*positional, **dict(zip(names, keywords, strict=True)))


def constructed_positional(kind: type, count: int, adjoint) -> SequenceAdjoint | float:
    """The adjoints of the first `count` positional arguments of `kind(...)` from the instance's."""
    if not isinstance(adjoint, (SequenceAdjoint, DictAdjoint)):
        return 0.0
    fields = kind._fields if hasattr(kind, "_fields") else [f.name for f in dataclasses.fields(kind) if f.init]
    return SequenceAdjoint([_field_adjoint(kind, adjoint, fields[i]) for i in range(count)])


def constructed_keywords(kind: type, names: tuple, adjoint) -> SequenceAdjoint | float:
    """The adjoints of the keyword arguments `names` of `kind(...)` from the instance's."""
    if not isinstance(adjoint, (SequenceAdjoint, DictAdjoint)):
        return 0.0
    return SequenceAdjoint([_field_adjoint(kind, adjoint, name) for name in names])


def _field_adjoint(kind: type, adjoint, name: str):
    if isinstance(adjoint, SequenceAdjoint):  # a NamedTuple's: its fields in order
        return adjoint[kind._fields.index(name)]
    return adjoint.get(name, 0.0)


def appended(items: list, value) -> list:
    """`items.append(value)` as a new list (cpsgrad's form of an append to a list that nothing
    else refers to: see transforms/normalize.py)."""
    return [*items, value]


def appended_adjoint(items: list, adjoint):
    """The adjoint of `items` from that of `appended(items, value)`: all but the last element's."""
    if isinstance(adjoint, SequenceAdjoint):
        return SequenceAdjoint(adjoint[: len(items)])
    return 0.0


def removed(items: list, index) -> list:
    """`items` without `items[index]` (cpsgrad's form of `items.pop(index)`; the element itself
    is read first as `items[index]`, which raises IndexError as pop would)."""
    position = range(len(items))[index]
    return [*items[:position], *items[position + 1:]]


def removed_adjoint(items: list, index, adjoint):
    """The adjoint of `items` from that of `removed(items, index)`: a zero where the element was."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    position = range(len(items))[index]
    return SequenceAdjoint([*adjoint[:position], 0.0, *adjoint[position:]])


def item(adjoint, position: int):
    """The adjoint of element `position` of a container whose adjoint is `adjoint`."""
    if isinstance(adjoint, SequenceAdjoint):
        return adjoint[position]
    return 0.0


def one_hot(container: Sequence, index, adjoint) -> SequenceAdjoint | float:
    """The adjoint of `container` when only `container[index]` was read (an index or a slice)."""
    length = len(container)
    positions = range(length)[index]
    parts = [0.0] * length
    if isinstance(positions, range):
        for source, value in zip(positions, item_list(adjoint, len(positions)), strict=True):
            parts[source] = parts[source] + value
    else:
        parts[positions] = adjoint
    return SequenceAdjoint(parts)


def item_list(adjoint, length: int) -> list:
    if isinstance(adjoint, SequenceAdjoint):
        return list(adjoint)
    return [0.0] * length


def reverse(adjoint):
    """The adjoint of `xs` from that of `reversed(xs)` (element order turned back)."""
    return SequenceAdjoint(adjoint[::-1]) if isinstance(adjoint, SequenceAdjoint) else adjoint


def unpacked(adjoints: Sequence) -> SequenceAdjoint:
    """The adjoint of a container unpacked into names whose adjoints are `adjoints`."""
    return SequenceAdjoint(adjoints)


def repeated(length: int, adjoint) -> SequenceAdjoint:
    """The adjoint of a container each of whose `length` elements was added once (`sum`)."""
    return SequenceAdjoint([adjoint] * length)


def split_ties(values: Sequence, chosen, adjoint) -> SequenceAdjoint:
    """`max`/`min` backward: the adjoint split equally among the elements equal to the result."""
    ties = [value == chosen for value in values]
    if not any(ties):  # the result is NaN: so is every element's share
        return SequenceAdjoint([math.nan] * len(ties))
    share = adjoint / sum(ties)
    return SequenceAdjoint([share if tie else 0.0 for tie in ties])


def divide(numerator, denominator):
    """`numerator / denominator` with IEEE results at 0 (inf, or nan for 0/0) instead of raising,
    for derivatives that are singular where the function is not (sqrt'(0) = inf, as JAX)."""
    if _numpy(numerator) or _numpy(denominator):
        return array_divide(numerator, denominator)
    try:
        return numerator / denominator
    except ZeroDivisionError:
        if numerator == 0 or numerator != numerator:
            return math.nan
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def power_slope(base, exponent):
    """d(b**e)/db = e * b**(e-1); 0 where e == 0, and +-inf at b == 0 for e < 1 (as JAX)."""
    if _numpy(base) or _numpy(exponent):
        return array_power_slope(base, exponent)
    if exponent == 0:
        return 0.0
    if base == 0 and exponent < 1:
        return math.inf if exponent > 0 else -math.inf
    try:
        return exponent * base ** (exponent - 1)
    except OverflowError:  # |base| tiny and exponent - 1 negative, or |base| huge: infinite slope
        negative = base < 0 and float(exponent - 1).is_integer() and int(exponent - 1) % 2 == 1
        return math.copysign(math.inf, exponent) * (-1.0 if negative else 1.0)


def product_adjoint(values: Sequence, adjoint) -> SequenceAdjoint:
    """`math.prod` backward: each element's adjoint is the product of the others (zeros allowed)."""
    parts = []
    for position in range(len(values)):
        others = 1.0
        for other, value in enumerate(values):
            if other != position:
                others = others * value
        parts.append(adjoint * others)
    return SequenceAdjoint(parts)


def distance_adjoint(point: Sequence, other: Sequence, distance, adjoint) -> SequenceAdjoint:
    """`math.dist` backward for one point: (point - other) / distance, scaled."""
    return SequenceAdjoint(divide(adjoint * (a - b), distance) for a, b in zip(point, other, strict=True))


def log_for_power(base) -> float:
    """d(b**e)/de = log(b) * b**e; 0 at b == 0 (the limit for e > 0), NaN for b < 0."""
    if _numpy(base):
        return array_log_for_power(base)
    if base > 0:
        return math.log(base)
    return 0.0 if base == 0 else math.nan


def sign(x) -> float:
    """The derivative of abs: 1.0 at x >= 0, -1.0 below (abs'(0) = 1, as JAX), NaN at NaN."""
    if _numpy(x):
        return array_sign(x)
    if x >= 0:
        return 1.0
    return -1.0 if x < 0 else math.nan


def refuse_in_place(value, where: str, rewrite: str) -> None:
    """Augmented assignment (`c += b`) on an array changes it in place, and every name sharing the
    array sees the change; the derivative program computes `c = c + b` instead, so it refuses."""
    if isinstance(value, np.ndarray):
        # `where` is "file:line:col: statement" (adjoint.guard_in_place): the error is located
        found = re.match(r"(.*?):(\d+):(\d+): (.*)", where, flags=re.DOTALL)
        location = SourceLocation(found[1], int(found[2]), int(found[3])) if found else None
        raise UnsupportedError(
            location, f"{found[4] if found else where} (an array)",
            "augmented assignment changes an array in place (every name sharing it sees the change), "
            f"which cpsgrad does not differentiate; write a new value: {rewrite}",
        )


def _numpy(value) -> bool:
    return isinstance(value, _ARRAY_TYPES)


_ARRAY_TYPES = (np.ndarray, np.generic, DeviceArray)


def zip_length(strict: bool, *lengths: int) -> int:
    """How many items `zip(..., strict=strict)` yields over sequences of these lengths."""
    if strict and len(set(lengths)) > 1:
        raise ValueError(f"zip() arguments have different lengths {lengths}")
    return min(lengths)


def sequence_adjoint(iterable, adjoint):
    """The adjoint of `iterable` from that of `list(iterable)` (or `tuple`, or a loop's snapshot):
    the same, but for a dict, whose items there are its keys (no gradient)."""
    return 0.0 if isinstance(iterable, dict) else adjoint


def as_sequence(iterable) -> Sequence:
    """Something indexable with the same items: ranges, lists and tuples as they are."""
    if isinstance(iterable, (list, tuple, range, np.ndarray)):
        return iterable
    return tuple(iterable)


def digamma(x) -> float:
    """The derivative of lgamma (scipy's digamma, imported on first use)."""
    from scipy.special import digamma as scipy_digamma

    return float(scipy_digamma(x))


class Unbound:
    """Passed for a variable not bound on the path taken; any use raises as Python would."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<unbound {self.name}>"

    def _raise(self, *args):
        raise UnboundLocalError(f"cannot access local variable '{self.name}' where it is not associated with a value")

    __bool__ = __float__ = __int__ = __index__ = __iter__ = __len__ = __getitem__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _raise
    __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __lt__ = __le__ = __gt__ = __ge__ = _raise
    __eq__ = __ne__ = __contains__ = __round__ = __trunc__ = __floor__ = __ceil__ = _raise
    __matmul__ = __rmatmul__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _raise
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __invert__ = __divmod__ = __rdivmod__ = _raise
    __call__ = __str__ = __format__ = __complex__ = __reversed__ = _raise
    __array_ufunc__ = __array_function__ = _raise  # np.sin(v), np.sum(v)
    __hash__ = None

    def __getattr__(self, attribute: str):  # only attributes it lacks: v.real, v.shape
        if attribute.startswith("__") and attribute.endswith("__"):  # copy, pickle, numpy probing
            raise AttributeError(attribute)
        self._raise()

    def check(self):
        """Raise: the program's result is this unbound variable."""
        self._raise()


def unbound(name: str) -> Unbound:
    return Unbound(name)


def check_bound(value) -> None:
    """A continuation's read of a parameter some jump passes unbound (the sentinel): raise as
    Python would, where it reads the variable."""
    if type(value) is Unbound:
        value._raise()


def unbound_read(name: str):
    """A read of a local variable that no path has bound yet: raise as Python would, at the read."""
    Unbound(name)._raise()


# ---- comprehensions and the builtin higher-order functions (transforms/comprehensions.py) ------


def inserted(container: dict, key, value) -> dict:
    """`container` with `key` set to `value`, as a new dict (cpsgrad's form of the insert a dict
    comprehension makes into the dict it builds)."""
    return {**container, key: value}


def inserted_adjoint(key, adjoint):
    """The adjoint of `d` from that of `inserted(d, key, value)`: all but `key`'s (overwritten)."""
    if isinstance(adjoint, DictAdjoint) and key in adjoint:
        return DictAdjoint((k, v) for k, v in adjoint.items() if k != key)
    return adjoint


def _require_sized(items, function: str) -> None:
    if not hasattr(items, "__len__"):
        raise UnsupportedError(
            None, f"{function}() of an iterator of differentiable values",
            f"make it a list first: {function}(list(...))",
        )


def sorted_adjoint(items, key, reverse: bool, adjoint):
    """The adjoint of `items` from that of `sorted(items, key=key, reverse=reverse)`: each
    element's adjoint goes back through the permutation (the same stable sort, of positions)."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    _require_sized(items, "sorted")
    order = sorted(range(len(items)), key=_keyed(items, key), reverse=reverse)
    parts = [0.0] * len(items)
    for position, source in enumerate(order):
        parts[source] = adjoint[position]
    return SequenceAdjoint(parts)


def chosen_adjoint(items, key, extremum, chosen, adjoint):
    """The adjoint of `items` from that of `max(items, key=key)` (`extremum` is max or min):
    all of it to the element returned, the first of the best as Python chooses; without a key,
    split among ties as `max(items)` does."""
    if key is None:
        return split_ties(items, chosen, adjoint)
    _require_sized(items, extremum.__name__)
    position = extremum(range(len(items)), key=_keyed(items, key))
    parts = [0.0] * len(items)
    parts[position] = adjoint
    return SequenceAdjoint(parts)


def _keyed(items, key):
    if key is None:
        return items.__getitem__
    return lambda position: key(items[position])


def zipped_adjoint(items, position: int, adjoint):
    """The adjoint of argument `position` of `zip(...)` from that of the pairs it yielded."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    _require_sized(items, "zip")
    parts = [item(pair, position) for pair in adjoint]
    return SequenceAdjoint(parts + [0.0] * (len(items) - len(parts)))


def enumerated_adjoint(adjoint):
    """The adjoint of `items` from that of `enumerate(items)`: each pair's second part."""
    if not isinstance(adjoint, SequenceAdjoint):
        return 0.0
    return SequenceAdjoint(item(pair, 1) for pair in adjoint)


# ---- user rules (@cpsgrad.rule): their backwards run checked (transforms/adjoint.inline_rule) ----


def rule_adjoint(adjoint, value):
    """A user rule's output adjoint: the symbolic zero `0.0` standing for an array's zeros
    becomes those zeros, so that the rule may index it, read its shape, ..."""
    if type(adjoint) is float and adjoint == 0.0:
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            return np.zeros_like(value)
        if isinstance(value, np.floating):
            return value.dtype.type(0.0)
    return adjoint


def _described(value) -> str:
    if isinstance(value, (np.ndarray, DeviceArray)):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.generic):
        return f"a numpy {value.dtype} scalar"
    return f"{type(value).__name__} {value!r}"[:120]


def rule_contribution(contribution, like, rule: str, parameter: str):
    """A user rule's contribution to the adjoint of its input `like` (parameter `parameter`),
    checked: not None; of `like`'s shape for an array, a real scalar for a number."""
    problem = None
    if contribution is None:
        problem = "needs a value"
    elif isinstance(like, (np.ndarray, DeviceArray)):
        shape = getattr(contribution, "shape", None)
        if isinstance(contribution, numbers.Number) and not isinstance(contribution, numbers.Real) or (
            isinstance(contribution, (np.ndarray, np.generic)) and contribution.dtype.kind not in "fiub"
        ):
            problem = "must be real"
        elif shape is None and not isinstance(contribution, numbers.Real):
            problem = f"must be an array of shape {like.shape}"
        elif shape is not None and tuple(shape) != like.shape or shape is None and like.shape != ():
            problem = f"must have its input's shape {like.shape}"
    elif isinstance(like, numbers.Real) and not isinstance(like, bool):
        if isinstance(contribution, (np.ndarray, DeviceArray)):
            if contribution.shape != () or contribution.dtype.kind not in "fiub":
                problem = "must be a real scalar"
        elif not isinstance(contribution, numbers.Real) or isinstance(contribution, bool):
            problem = "must be a real scalar"
    if problem is not None:
        raise RuleError(
            f"rule {rule}: its backward contributed {_described(contribution)} to {parameter}_d, "
            f"the adjoint of {parameter}, which is {_described(like)}; a contribution {problem}"
        )
    return contribution


def rule_failed(rule: str, error: Exception):
    """A user rule's backward raised `error`: raise a RuleError naming the rule (a RuleError
    from rule_contribution as it is)."""
    if isinstance(error, RuleError):
        raise error
    raise RuleError(f"rule {rule}: its backward raised {type(error).__name__}: {error}") from error
