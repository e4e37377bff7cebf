"""calls.bound_parameters: the one place an argument of a call is matched to the parameter Python
binds it to (callee_writes.writes_into, written_arguments and sharing.relate_variant read it)."""

import libcst as cst

from cpsgrad.transforms import calls


def _bind(function, text):
    call = cst.parse_expression(text)
    bound = calls.bound_parameters(function.__code__, call)
    return None if bound is None else [(parameter, cst.Module([]).code_for_node(a.value)) for parameter, a in bound]


def f(a, b, c=1.0, *, d=2.0):
    return a + b + c + d


def g(a, *rest, **options):
    return a


def test_positional_then_keywords_in_the_order_the_call_counts_them():
    assert _bind(f, "f(x, y, d=w, c=v)") == [("a", "x"), ("b", "y"), ("d", "w"), ("c", "v")]
    assert _bind(f, "f(b=y, a=x)") == [("b", "y"), ("a", "x")]


def test_what_no_named_parameter_takes_is_none():
    assert _bind(f, "f(x, y, z, t)") == [("a", "x"), ("b", "y"), ("c", "z"), (None, "t")]
    assert _bind(f, "f(x, y, e=t)") == [("a", "x"), ("b", "y"), (None, "t")]
    assert _bind(g, "g(x, y, k=z)") == [("a", "x"), (None, "y"), (None, "z")]  # *rest, **options


def test_a_starred_argument_leaves_the_binding_unknown():
    assert _bind(f, "f(*xs)") is None
    assert _bind(f, "f(x, **kw)") is None
