"""numpy's other calls that write into an array, as writes of a known key (transforms/writes.py).

`np.add.at(x, idx, v)` (also `np.subtract.at`, `np.multiply.at`), `np.put(x, ind, v, mode=...)`,
`x.put(ind, v, mode=...)`, `np.putmask(x, mask, v)`, `np.place(x, mask, v)` and
`np.fill_diagonal(x, v, wrap=...)` of a local array `x` (a parameter's too: the caller sees the
change) become the core statement

    x = cpsgrad_runtime.written(x, cpsgrad_runtime.ufunc_at(cpsgrad_runtime.numpy.add, idx), v)

(`put_key(ind, mode)`, `putmask_key(mask)`, `place_key(mask)`, `diagonal_key(wrap)` for the
others), so the write has the `Write` record's backward like `x[key] = v`; the key does numpy's
own call forward and knows which elements it touched (cpsgrad/runtime/keyed_writes.py). The
other ufuncs' `at` and a target that is not a local name are refused with a rewrite.
"""

from __future__ import annotations

import libcst as cst
import numpy as np

from cpsgrad.transforms import syntax

RUNTIME = "cpsgrad_runtime"
_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))

# each function's parameters (numpy's names), the target first, then (key parameters, value parameter)
_FUNCTIONS = {
    np.put: ("np.put", ("a", "ind", "v", "mode"), "put_key", ("ind", "mode"), "v"),
    np.putmask: ("np.putmask", ("a", "mask", "values"), "putmask_key", ("mask",), "values"),
    np.place: ("np.place", ("arr", "mask", "vals"), "place_key", ("mask",), "vals"),
    np.fill_diagonal: ("np.fill_diagonal", ("a", "val", "wrap"), "diagonal_key", ("wrap",), "val"),
}
_AT = frozenset({"add", "subtract", "multiply"})  # the ufuncs whose `at` is differentiated


def keyed_call(normalizer, node: cst.Call, function, out: list) -> cst.BaseExpression | None:
    """One of the calls above as a write (the call's value: None), or None for any other call."""
    ufunc = getattr(function, "__self__", None)
    if isinstance(ufunc, np.ufunc) and getattr(function, "__name__", None) == "at":
        return _ufunc_at(normalizer, node, ufunc, out)
    try:
        known = function in _FUNCTIONS
    except TypeError:  # an unhashable callee
        return None
    if not known:
        return None
    label, parameters, key, key_parameters, value_parameter = _FUNCTIONS[function]
    bound = _bind(normalizer, node, node.args, parameters, label)
    _check_target(normalizer, node, node.args[bound[parameters[0]]].value if parameters[0] in bound else None, label)
    return _emit(normalizer, node, bound, parameters, key, key_parameters, value_parameter, [], out)


def method_put(normalizer, node: cst.Call, out: list) -> cst.BaseExpression:
    """`x.put(ind, v, mode=...)` of a local array `x`: `np.put(x, ind, v, mode=...)`."""
    target = node.func.value
    arguments = [cst.Arg(target)] + list(node.args)
    call = node.with_changes(args=arguments)
    _, parameters, key, key_parameters, value_parameter = _FUNCTIONS[np.put]
    bound = _bind(normalizer, call, arguments, parameters, f"{target.value}.put")
    return _emit(normalizer, call, bound, parameters, key, key_parameters, value_parameter, [], out)


def _ufunc_at(normalizer, node: cst.Call, ufunc: np.ufunc, out: list) -> cst.BaseExpression:
    name = ufunc.__name__
    label = f"np.{name}.at" if getattr(np, name, None) is ufunc else f"{name}.at"
    if name not in _AT or getattr(np, name, None) is not ufunc:  # numpy's own (not a vectorized "add")
        normalizer.reject(
            node,
            f"call that changes an array in place ({label})",
            f"cpsgrad differentiates np.add.at, np.subtract.at and np.multiply.at only; write {label} as the "
            f"loop `for j, i in enumerate(idx): x[i] = {label[:-3]}(x[i], v[j])` (an integer array idx, one "
            "value per index), or compute a new array",
        )
    bound = _bind(normalizer, node, node.args, ("a", "indices", "b"), label)
    _check_target(normalizer, node, node.args[bound["a"]].value if "a" in bound else None, label)
    if "b" not in bound:
        normalizer.reject(node, f"call {label} without its operand", f"{label}(x, indices, v) takes the value to apply")
    function = cst.Attribute(cst.Attribute(cst.Name(RUNTIME), cst.Name("numpy")), cst.Name(ufunc.__name__))
    extra = ["b"] if ufunc is np.multiply else []  # multiply's backward scales by the factors
    return _emit(normalizer, node, bound, ("a", "indices", "b"), "ufunc_at", ("indices",), "b", extra, out, function)


def _bind(normalizer, node: cst.Call, arguments, parameters: tuple, label: str) -> dict[str, int]:
    """Which argument (by position in `arguments`) each parameter receives, as numpy binds them."""
    bound: dict[str, int] = {}
    for position, argument in enumerate(arguments):
        if argument.star:
            normalizer.reject(
                node, f"call {label} with starred arguments", "pass each argument by itself: f(x, i, v), not f(*args)"
            )
        if argument.keyword is None:
            if position >= len(parameters):
                normalizer.reject(
                    node, f"call {label} with too many arguments", f"{label} takes {', '.join(parameters)}"
                )
            name = parameters[position]
        else:
            name = argument.keyword.value
            if name not in parameters or name in bound:
                normalizer.reject(
                    node, f"call {label} with the keyword {name}", f"{label} takes {', '.join(parameters)}"
                )
        bound[name] = position
    return bound


def _check_target(normalizer, node: cst.Call, first, label: str) -> None:
    if isinstance(first, cst.Name) and first.value in normalizer.locals:
        return
    normalizer.reject(
        node,
        f"call that changes an array in place ({label}) whose target is not a local variable",
        f"cpsgrad differentiates {label} into the function's own arrays and its parameters'; assign the array to "
        "a local name first (or copy it: x = x.copy()) and pass that name",
    )


def _emit(normalizer, node, bound, parameters, key, key_parameters, value_parameter, extra, out, *prefix):
    """`x = cpsgrad_runtime.written(x, cpsgrad_runtime.<key>(*prefix, key arguments), value)`, the
    arguments evaluated in the call's order."""
    order = sorted(bound.items(), key=lambda item: item[1])
    atoms = {name: normalizer.atom(node.args[position].value, out) for name, position in order}
    target = atoms[parameters[0]]
    key_arguments = [cst.Arg(p) for p in prefix]
    key_arguments += [
        cst.Arg(atoms[name], keyword=cst.Name(name), equal=_EQUAL) for name in key_parameters if name in atoms
    ]
    key_arguments += [cst.Arg(atoms[name], keyword=cst.Name("factors"), equal=_EQUAL) for name in extra]
    if value_parameter not in atoms:
        normalizer.reject(node, f"call {syntax.code(node.func)} without its value", "pass the value to write")
    call = cst.Call(
        cst.Attribute(cst.Name(RUNTIME), cst.Name("written")),
        [
            cst.Arg(target),
            cst.Arg(cst.Call(cst.Attribute(cst.Name(RUNTIME), cst.Name(key)), key_arguments)),
            cst.Arg(atoms[value_parameter]),
        ],
    )
    normalizer.emit(out, syntax.assign(target.value, call), node)
    return cst.Name("None")
