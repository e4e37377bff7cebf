"""Chains of helpers that hand one array on in every pattern a caller can (the same array twice, a
view of it, a new array, by keyword), results used or discarded: the loan protocol
(runtime/loans.py: lend, borrow, merge) must give exactly the gradient finite differences give.
Written after a generated program's d/dv came out doubled: a helper passed an array whose adjoint
it had borrowed twice to a callee, and that site ended its caller's loan."""

import importlib.util
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.testing import check_grad

# How a caller holding arrays `a` and `b` passes two of them on (positional or by keyword).
ARGUMENTS = (
    "{a}, {a}",
    "{a}, {b}",
    "{b}, {a}",
    "{a}, {a}[:]",
    "{a}[:], {a}",
    "{a} * 1.0, {a}",
    "{a}, {a} * 0.5",
    "v={a}, u={a}",
    "v={b}, u={a}.reshape(-1)",
    "u={a}, v={a}",
)
# What the helper returns, from its parameters and the callee's result `t`.
RESULTS = ("np.sum({u})", "np.sum({u} * {v})", "np.sum({v}) + np.sum({u}[1:])", "np.dot({u}, {v})")
USES = ("discarded", "added", "multiplied")

CALL = st.tuples(st.sampled_from(ARGUMENTS), st.sampled_from(USES))
HELPER = st.tuples(st.lists(CALL, max_size=2), st.sampled_from(RESULTS))


def _body(calls, callee: str, a: str, b: str, result: str) -> list[str]:
    lines, total = [], result
    for index, (arguments, use) in enumerate(calls):
        name = f"t{index}"
        lines.append(f"    {name} = {callee}({arguments.format(a=a, b=b)})")
        if use == "added":
            total = f"{total} + {name}"
        elif use == "multiplied":
            total = f"({total}) * {name}"
    return [*lines, f"    return {total}"]


def _source(helpers, top) -> str:
    lines = ["import numpy as np", ""]
    for level, (calls, result) in enumerate(helpers):
        lines.append(f"def h{level}(u, v):")
        callee_calls = calls if level else []  # h0 calls nothing
        lines += _body(callee_calls, f"h{level - 1}", "u", "v", result.format(u="u", v="v"))
        lines.append("")
    lines.append("def f(v):")
    lines.append("    w = v * 0.5")
    lines += _body(top, f"h{len(helpers) - 1}", "v", "w", "np.sum(v)")
    return "\n".join(lines) + "\n"


_counter = itertools.count()


def _load(tmp_path, source: str):
    path = tmp_path / f"loan_graph_{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@settings(max_examples=150)
@given(helpers=st.lists(HELPER, min_size=1, max_size=3), top=st.lists(CALL, min_size=1, max_size=3))
def test_a_chain_of_helpers_gets_the_gradient_finite_differences_give(tmp_path_factory, helpers, top):
    source = _source(helpers, top)
    f = _load(tmp_path_factory.mktemp("graphs"), source)
    v = np.array([-0.34, 0.042, -0.69])
    value, _ = cpsgrad.value_and_grad(f)(v)
    assert value == f(v), source
    try:
        check_grad(f, v)
    except AssertionError as error:
        raise AssertionError(f"{error}\n\nthe program:\n{source}") from None


def test_the_chains_draw_the_pattern_that_was_wrong(tmp_path):
    """The shape of the case that was wrong is among the draws: a helper passing its parameter twice
    to its callee, its result discarded, called from f by a view."""
    source = _source([([], RESULTS[0]), ([(ARGUMENTS[0], "discarded")], RESULTS[0])], [(ARGUMENTS[3], "discarded")])
    assert "    t0 = h0(u, u)\n" in source and "    t0 = h1(v, v[:])\n" in source
    check_grad(_load(tmp_path, source), np.array([-0.34, 0.042, -0.69]))
