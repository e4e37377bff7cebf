"""Objects of the user's own classes holding differentiable values, and writes of their attributes.

An object's attributes change in place: every name, container and callee holding the object sees
a write at once, so the adjoint of an attribute cannot live in a name's version (as an array's
does) without an aliasing analysis through every call. It lives with the object instead, in this
run's books (`_books.adjoints`: per object, per attribute, the adjoint of the value the attribute
holds now), as Lantern's `NumR` keeps its `d` beside its `x`:

    y = obj.w                      backward: books[obj]['w'] += y_d          (`attribute_adjoint`)
    obj.w = v                      forward:  save the old value; set it
                                   backward: v_d = books[obj].pop('w'); restore the old value
                                             (`restore_attribute`)

The backward runs in exactly the reverse order of the forward (the continuations' order), so at
a write's backward the books hold the adjoint of what reads after it saw (before any later write,
whose own backward took those): whatever name, alias or callee read it. A name's own adjoint of
a plain object is the symbolic zero. The gradient of a differentiated object argument is read off
the books when the run ends (`object_gradient`).

Soundness needs every read of a differentiable attribute to be one the program records. So:
- only objects this run owns may be given a differentiable value: those the function (or a
  function it calls) constructs from a class call (`new_object`, `owned`), and differentiated
  arguments (`own_argument`); a write of a differentiable value into any other object (an argument
  that is not differentiated, something reachable from a global) is refused;
- an attribute holding a differentiable value (`_books.carriers`) read through a name the program
  does not differentiate is refused (`unseen_attribute`), and an owned object handed to code that is
  not transformed (a call without a rule, not differentiated) is refused (`unseen_objects`);
- the class must be plain: created by `object.__new__`, its instances with a `__dict__`, no custom
  `__setattr__`/`__getattribute__`, no property or other data descriptor of the attribute's name.
"""

from __future__ import annotations

import functools
import threading
import types
import weakref

import numpy as np

from cpsgrad.errors import UnsupportedError
from cpsgrad.runtime import attribute_changes
from cpsgrad.runtime.adjoints import is_zero

METHOD_ADVICE = (
    "cpsgrad differentiates the methods of numpy arrays, values/items/keys/get of dicts, update, setdefault, pop "
    "and clear of a dict, and append, pop, extend, insert, remove, sort, reverse and clear of a list, that the "
    "function builds itself (a display, list(...), dict(...)) and that is not a parameter and that no other name, "
    "container or user function sees before them; otherwise build a new list or dict "
    "(ys = xs + [v], sorted(xs), xs[::-1]); an array's in-place methods (x.sort(), x.fill(v), ...) are not "
    "differentiated: use np.sort(x)"
)
_books = threading.local()
_MISSING = object()  # an attribute the write added: restoring removes it
_IN_PLACE = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__imatmul__", "__ipow__", "__ior__", "__iand__")
_ARRAY_NAMES = frozenset(dir(np.ndarray))
_HEAP = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python
_LEAVES = frozenset({float, int, bool, np.ndarray, np.float64, np.float32, str, type(None)})
_LIBRARIES = frozenset({"numpy", "scipy", "cpsgrad", "jax", "torch"})


class _Run:
    """One run's books."""

    __slots__ = (
        "owned", "adjoints", "carriers", "written", "final", "gradients", "kept", "arguments", "exposed", "alone",
        "changed_lists",
    )

    def __init__(self):
        self.owned: dict = {}  # id -> an object this run owns
        self.adjoints: dict = {}  # id -> {attribute: the adjoint of the value it holds now}
        self.carriers: set = set()  # (id, attribute) written with a differentiable value
        self.written: dict = {}  # id -> every object an attribute write changed
        self.final: list | None = None
        self.kept: list = []  # the objects whose attributes' adjoints the books hold
        self.arguments: set = set()  # ids of the objects differentiated arguments hold
        self.exposed: dict = {}  # id -> the plain call an owned object was handed to (no writes of gradients after)
        self.gradients: dict = {}  # id of an argument's object -> its gradient (shared objects, cycles)
        self.alone: set = set()  # (id, attribute) holding a value written fresh that no name has read out since
        self.changed_lists: set = set()  # (id, attribute) whose list the write about to run changes in place


def open_objects():
    """Start a run: owned objects, attribute adjoints and carriers of this run only."""
    outer = getattr(_books, "state", None)
    _books.state = _Run()
    return outer


def keep_final_objects() -> None:
    """The forward pass ended: what each written object holds now (the backward's restores undo it)."""
    state = getattr(_books, "state", None)
    if state is not None and state.written:
        state.final = [(target, dict(target.__dict__)) for target in state.written.values()]


def close_objects(outer) -> None:
    """End the run: every object written holds what the original left in it."""
    state = getattr(_books, "state", None)
    if state is not None and state.final is not None:
        for target, values in state.final:
            target.__dict__.clear()
            target.__dict__.update(values)
    _books.state = outer


def _state() -> _Run:
    state = getattr(_books, "state", None)
    if state is None:
        raise RuntimeError("cpsgrad.runtime.objects: no run open")
    return state


# -- the classes taken --------------------------------------------------------------------------


def plain_class(kind) -> str | None:
    """Why instances of `kind` cannot hold differentiable attributes, or None for a plain class
    (kept per class; a class changed after its first use keeps its first verdict)."""
    try:
        return _PLAIN[kind]
    except (KeyError, TypeError):
        pass
    why = _plain_class(kind)
    try:
        _PLAIN[kind] = why
    except TypeError:  # not weakly referenceable
        pass
    return why


_PLAIN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _plain_class(kind) -> str | None:
    if not isinstance(kind, type) or type(kind).__call__ is not type.__call__:
        return "its metaclass defines how it is called"
    if (getattr(kind, "__module__", None) or "").split(".", 1)[0] in _LIBRARIES:
        return f"it is a class of {kind.__module__}, a library cpsgrad has rules for"
    for base in kind.__mro__[:-1]:
        if not base.__flags__ & _HEAP:
            return f"it derives from the built-in {base.__name__}"
        if "__slots__" in base.__dict__:
            return "it defines __slots__"
    if kind.__new__ is not object.__new__:
        return "it defines __new__"
    if kind.__setattr__ is not object.__setattr__ or kind.__getattribute__ is not object.__getattribute__:
        return "it defines __setattr__ or __getattribute__"
    if kind.__delattr__ is not object.__delattr__:
        return "it defines __delattr__"
    for base in kind.__mro__[:-1]:
        defined = next((name for name in _CONVERSIONS if name in base.__dict__), None)
        if defined is not None:  # Python would run it as plain code on the object's attributes
            return f"it defines {defined}"
    return None


# methods Python calls implicitly that compute a value from the attributes (as plain code, whose
# result's gradient would not reach them): `a + b`, `float(obj)`, `for v in obj`, `np.sum(obj)`
_CONVERSIONS = (
    *(f"__{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "divmod")),
    *(f"__r{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "divmod")),
    *(f"__i{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")),
    "__neg__",
    "__pos__",
    "__abs__",
    "__float__",
    "__complex__",
    "__round__",
    "__trunc__",
    "__floor__",
    "__ceil__",
    "__iter__",
    "__reversed__",
    "__next__",
    "__array__",
    "__array_ufunc__",
    "__array_function__",
)


def _descriptor(kind: type, name: str):
    for base in kind.__mro__:
        if name in base.__dict__:
            value = base.__dict__[name]
            if hasattr(type(value), "__set__") or hasattr(type(value), "__delete__"):
                return value
            return None
    return None


def _refuse_class(value, why: str, what: str):
    raise UnsupportedError(
        None,
        f"{what} of a {type(value).__name__} object",
        f"cpsgrad differentiates the attributes of objects of plain classes, and {type(value).__name__} is not one "
        f"({why}); keep the differentiable values in a plain class, a dataclass, a tuple or a dict",
    )


def _check_attribute(value, name: str, what: str) -> None:
    why = plain_class(type(value))
    if why is None and _descriptor(type(value), name) is not None:
        why = f"{name} is a property or another data descriptor"
    if why is None and name.startswith("__"):
        why = f"{name} is a special attribute"
    if why is not None:
        _refuse_class(value, why, what)


def is_plain_object(value) -> bool:
    """An instance of a plain user class (neither a dataclass nor a NamedTuple: those are records)."""
    kind = type(value)
    return (
        kind.__flags__ & _HEAP
        and not isinstance(value, type)
        and "__dataclass_fields__" not in kind.__dict__
        and not hasattr(kind, "__dataclass_fields__")
        and not isinstance(value, (tuple, list, dict, np.ndarray, BaseException, types.FunctionType))
        and plain_class(kind) is None
    )


# -- ownership: what a differentiable value may be written into --------------------------------


def new_object(kind: type):
    """`kind.__new__(kind)` for a class called with differentiable values (its `__init__`
    is then differentiated as a method): an object this run owns."""
    why = plain_class(kind)
    if why is not None:
        raise UnsupportedError(
            None,
            f"call of the class {kind.__qualname__} with differentiable values",
            f"cpsgrad constructs objects of plain classes (and NamedTuples and dataclasses), and {kind.__qualname__} "
            f"is not one ({why}); pass the values themselves (in a tuple, a dict or a dataclass)",
        )
    value = object.__new__(kind)
    _state().owned[id(value)] = value
    return value


def owned(value):
    """The result of a class call the function makes with no differentiable value: owned by this
    run when it is an object of a plain class (so that differentiable values may be written into it)."""
    state = getattr(_books, "state", None)
    if state is not None and is_plain_object(value):
        state.owned[id(value)] = value
        state.alone |= attribute_changes.held_alone(value)  # its __init__ ran as plain Python
    return value




def own_arguments(values: tuple) -> None:
    """Differentiated arguments: each and every plain object it holds are owned by this run; an
    object that two of them hold is refused (its attributes' adjoints could not be told apart)."""
    everything: set = set()
    for position, value in enumerate(values):
        reached: set = set()
        own_argument(value, reached)
        shared = {i for i in reached & everything if i in _state().owned}
        if shared:
            raise UnsupportedError(
                None,
                f"differentiated argument {position + 1}",
                "it holds an object another differentiated argument holds too; pass it once, or a copy",
            )
        everything |= reached


def own_argument(value, seen: set | None = None) -> None:
    """A differentiated argument: it and every plain object it holds are owned by this run."""
    if type(value) in _LEAVES:
        return
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if is_plain_object(value):
        state = _state()
        state.owned[id(value)] = value
        state.arguments.add(id(value))
        parts = value.__dict__.values()
    elif isinstance(value, (list, tuple)):
        parts = value
    elif isinstance(value, dict):
        parts = value.values()
    else:
        return
    for part in list(parts):
        own_argument(part, seen)


# -- attribute reads and writes ----------------------------------------------------------------


def attribute_adjoint(value, name: str, adjoint) -> float:
    """The backward of `y = value.name` for a plain object: `adjoint` added to the attribute's
    adjoint in the books; the name's own adjoint of the object gets nothing (0.0)."""
    if is_zero(adjoint):
        return 0.0
    _check_attribute(value, name, f"attribute read .{name}")
    if name not in value.__dict__:
        if any(name in base.__dict__ for base in type(value).__mro__):
            return 0.0  # a class attribute: a constant (writes into a class are refused)
        _refuse_class(value, f"{name} is computed by __getattr__", f".{name}")
    state = _state()
    adjoints = state.adjoints.get(id(value))
    if adjoints is None:
        adjoints = state.adjoints[id(value)] = {}
        state.kept.append(value)  # alive for the run: its id stays its own
    adjoints[name] = adjoints[name] + adjoint if name in adjoints else adjoint
    return 0.0


def set_attribute(target, name: str, value, augmented: bool = False, fresh: bool = False, method=None):
    """`target.name = value`, then `target` (the same object); `augmented` for `target.name op= v`,
    whose value `overwritten_attribute` checked; `fresh` for a value no other name holds."""
    state = _books.state
    if augmented and state.changed_lists and attribute_changes.changed_in_place(state, target, name, value):
        return target
    setattr(target, name, value)
    return target


def overwritten_attribute(target, name: str, value, active: bool, augmented=False, fresh=False, method=None):
    """What `target.name = ...` is about to overwrite (MISSING where it adds the attribute), once the
    write is checked: into an object of a plain class; a differentiable value, or an object this run
    owns, only into an object this run owns; `op=` (`augmented`) and `.append(v)` and the others
    (`method`) on an array or a list as runtime/attribute_changes.py says."""
    state = _state()
    if method is not None and not active and not attribute_changes.carries(state, target, name):
        held = getattr(target, name, None)
        if type(held) is list and type(value) is list:  # nothing differentiable: in place, as Python
            state.changed_lists.add((id(target), name))
            return held
    owned = id(target) in state.owned
    if not is_plain_object(target):
        why = "it is a dataclass or a NamedTuple: build a new one with dataclasses.replace"
        if isinstance(target, type) or "__dataclass_fields__" not in type(target).__dict__:
            why = plain_class(type(target)) or "it is a class, a function or a module"
        _refuse_class(target, why, f"assignment to .{name}")
    _check_attribute(target, name, f"assignment to .{name}")
    if augmented and any(hasattr(type(target.__dict__.get(name)), special) for special in _IN_PLACE):
        attribute_changes.in_place(state, target, name, value, active)
    elif fresh:
        state.alone.add((id(target), name))
    else:
        state.alone.discard((id(target), name))
    if not owned and not active and _reach(value, state.owned, set()) is not None:
        active = True  # an object the run owns kept where code cpsgrad does not see could read it
    if active and name in _ARRAY_NAMES:
        _refuse_class(
            target,
            f"{name} is the name of a numpy array attribute, which cpsgrad takes for the array's",
            f"assignment to .{name}",
        )
    if active and owned and id(target) in state.exposed:
        raise UnsupportedError(
            None,
            f"assignment of a differentiable value to .{name} of a {type(target).__name__} object",
            f"the object was handed to {state.exposed[id(target)]}, which ran as plain Python and could have kept "
            "it where a later read would not see the gradient; write the differentiable value before that call, "
            "or pass that call a differentiable value too (it is then differentiated)",
        )
    if active and not owned:
        raise UnsupportedError(
            None,
            f"assignment of a differentiable value (or an object holding one) to .{name} of a "
            f"{type(target).__name__} object",
            "the object was not built by the differentiated function (nor is it a differentiated argument): it may be "
            "an argument that is not differentiated or be reachable from a global, where code cpsgrad does not see "
            "could read the value without its gradient; build the object in the function (a class call), or "
            "differentiate the argument",
        )
    state.written.setdefault(id(target), target)
    if active:
        state.carriers.add((id(target), name))
    return target.__dict__.get(name, _MISSING)


def attribute_escapes(value, name: str, unless_list: bool = False) -> None:
    """`y = value.name` into a name that may keep it: not alone (`unless_list`: a list only indexed stays)."""
    state = getattr(_books, "state", None)
    if state is not None and state.alone:
        if not (unless_list and type(getattr(value, "__dict__", {}).get(name)) is list):
            state.alone.discard((id(value), name))


def restore_attribute(target, name: str, saved):
    """The backward of `target.name = v`: the attribute's adjoint now (what reads after the write
    contributed) is v's, taken out of the books; the old value is put back."""
    adjoints = _state().adjoints.get(id(target))
    adjoint = adjoints.pop(name, 0.0) if adjoints is not None else 0.0
    if saved is _MISSING:
        target.__dict__.pop(name, None)
    elif getattr(target, name, _MISSING) is not saved:  # (a list changed in place is left as it is)
        target.__dict__[name] = saved
    return adjoint


# -- the checks that keep every read recorded --------------------------------------------------


def unseen_attribute(value, name: str, escapes: bool = False, unless_list: bool = False) -> None:
    """`y = value.name` read through a name the program does not differentiate: refused where
    the attribute holds a differentiable value (its gradient would be lost); `escapes` where the
    name may keep what it read (`attribute_escapes`)."""
    state = getattr(_books, "state", None)
    if escapes and state is not None and state.alone:
        attribute_escapes(value, name, unless_list)
    if state is not None and name == "__dict__" and id(value) in state.owned:
        _refuse_class(value, "its __dict__ would change its attributes behind cpsgrad's back", ".__dict__")
    if state is None or not (state.carriers or state.arguments):
        return
    if (
        (id(value), name) in state.carriers
        or (id(value) in state.arguments and name in value.__dict__)  # a differentiated argument's attribute
        or (name.startswith("__") and any(i == id(value) for i, _ in state.carriers))
    ):
        raise UnsupportedError(
            None,
            f"read of .{name} of a {type(value).__name__} object",
            f".{name} holds a differentiable value, and this name for the object is one cpsgrad does not "
            "differentiate (it was reached through a container or a name that no differentiable value reaches): "
            "read it through the name the function wrote it with, or pass the object to the calls that use it",
        )


def unseen_objects(values: tuple, label: str) -> None:
    """An untransformed call (no rule, no differentiable argument) handed `values`: refused where
    one holds (or is) an object this run owns that holds a differentiable value (an attribute
    written with one, or a differentiated argument's), which that code would read or change
    without the gradient; any other owned object it reaches is exposed from here: that code could
    keep it, so no differentiable value may be written into it later (`overwritten_attribute`)."""
    state = getattr(_books, "state", None)
    if state is None or not state.owned:
        return
    reached: list = []
    _collect(values, state.owned, set(), reached)
    carrying = {i for i, _ in state.carriers} | state.arguments
    found = next((value for value in reached if id(value) in carrying), None)
    for value in reached:
        state.exposed.setdefault(id(value), label)
        if state.alone:  # that code could keep the arrays the object holds
            state.alone.difference_update({(id(value), name) for name in vars(value)})
    if found is not None:
        raise UnsupportedError(
            None,
            f"call of {label}",
            f"it receives a {type(found).__name__} object the differentiated function built (or differentiates), "
            "and runs as plain Python (no differentiable argument reaches it), where a differentiable attribute "
            "would be read without its gradient; pass a differentiable value to it as well, or read the attributes "
            "it needs first and pass those",
        )


def _collect(value, owned: dict, seen: set, found: list) -> None:
    """Every object of `owned` reachable from `value` (through containers, objects, closures)."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if id(value) in owned:
        found.append(value)
    for part in _parts(value):
        _collect(part, owned, seen, found)


def _parts(value) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    if is_plain_object(value) or hasattr(type(value), "__dataclass_fields__"):
        return list(vars(value).values()) if hasattr(value, "__dict__") else []
    if isinstance(value, types.FunctionType):  # a closure: what it captured, its defaults
        parts = [c.cell_contents for c in value.__closure__ or () if _filled(c)] + list(value.__defaults__ or ())
        return parts + list((value.__kwdefaults__ or {}).values())
    if isinstance(value, types.MethodType):
        return [value.__self__, value.__func__]
    if isinstance(value, functools.partial):
        return [value.func, *value.args, *value.keywords.values()]
    return []


def _reach(value, owned: dict, seen: set):
    """The first object of `owned` reachable from `value`, or None."""
    found: list = []
    _collect(value, owned, seen, found)
    return found[0] if found else None


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:  # an empty cell
        return False
    return True
