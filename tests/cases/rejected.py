"""One function per construct the fence rejects; REJECTED maps each to (construct, line offset)."""

import math


def uses_try(x):
    try:
        return x * 2
    except ValueError:
        return x


def uses_with(x):
    with open("f") as handle:
        return x + len(handle.read())


def uses_yield(x):
    yield x


def uses_global(x):
    global COUNTER
    COUNTER = x
    return x


def uses_nonlocal(x):
    def inner():
        nonlocal x
    return x


def uses_del(x):
    y = x
    del y
    return x


def uses_import(x):
    import os  # noqa: F401
    return x


def uses_dict_unpacking(x):
    table = {**DEFAULTS, "a": x}
    return table["a"]


def writes_into_parameter(x):
    x[0] = 2.0
    return x[0]


def writes_through_an_element(x):
    rows = [[x], [x]]
    rows[0][0] = 2.0
    return rows[0][0]


def uses_attribute_assignment(x):
    math.tau = x
    return x


def uses_class(x):
    class Local:
        pass
    return x


def uses_match(x):
    match x:
        case 1.0:
            return x
    return x


async def uses_async(x):
    return x


# function name -> (construct named in the message, line of the construct relative to the def)
DEFAULTS = {"b": 1.0}

REJECTED = {
    "uses_try": ("try statement", 1),
    "uses_with": ("with statement", 1),
    "uses_yield": ("yield", 1),
    "uses_global": ("global statement", 1),
    "uses_nonlocal": ("nonlocal statement", 2),
    "uses_del": ("del statement", 2),
    "uses_import": ("import statement", 1),
    "uses_dict_unpacking": ("dict display with **", 1),
    "writes_into_parameter": ("assignment into an element of an argument or a global", 1),
    "writes_through_an_element": ("assignment into an element of an element (x[i][j] = v)", 2),
    "uses_attribute_assignment": ("assignment to an attribute", 1),
    "uses_class": ("class definition", 1),
    "uses_match": ("match statement", 1),
    "uses_async": ("async def", 0),
}
