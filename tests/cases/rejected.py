"""One function per construct the fence rejects; REJECTED maps each to (construct, line offset)."""

import math


def uses_try_star(x):
    try:
        y = x * 2
    except* ValueError:
        y = x
    return y


def uses_bare_raise_in_finally(x):
    try:
        y = x * 2
    finally:
        raise
    return y


def uses_except_name_outside(x):
    try:
        y = x * 2
    except ValueError as e:  # noqa: F841
        y = x
    return y if e else x  # noqa: F821


def uses_return_assigned_in_finally(x):
    y = x * 2
    try:
        return y
    finally:
        y = x


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


BUFFER = [0.0]


def writes_into_a_global(x):
    BUFFER[0] = x
    return x


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

REJECTED = {
    "uses_try_star": ("try/except* statement", 1),
    "uses_bare_raise_in_finally": ("bare raise in a finally clause", 4),
    "uses_except_name_outside": ("the name e of `except ... as e` used outside its handler", 5),
    "uses_return_assigned_in_finally": ("return of y, which the finally clause assigns", 3),
    "uses_yield": ("yield", 1),
    "uses_global": ("global statement", 1),
    "uses_nonlocal": ("nonlocal statement", 2),
    "uses_del": ("del statement", 2),
    "uses_import": ("import statement", 1),
    "writes_into_a_global": ("assignment into an element of a global or free variable", 1),
    "writes_through_an_element": ("assignment into an element of an element (x[i][j] = v)", 2),
    "uses_attribute_assignment": ("assignment to an attribute of a global or free variable", 1),
    "uses_class": ("class definition", 1),
    "uses_match": ("match statement", 1),
    "uses_async": ("async def", 0),
}
