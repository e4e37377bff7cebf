"""A dict's adjoint (`DictAdjoint`) is added into in place where nothing else refers to it
(runtime/accumulation.py: `accumulate_index` of a dict read, `merge_into` of a callee's): chains of
helpers that pass a dict on in every way a caller can (the same dict twice, one entry under two
keys, a copy, a new dict of its entries, nested in another, by keyword), read its entries several
times, return dicts their callers read again and capture it in closures must give exactly the
gradient finite differences give. A shared adjoint changed in place would show here as a wrong
gradient: the sceptic's counterpart of tests/test_loan_call_graphs.py for containers."""

import importlib.util
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cpsgrad
from cpsgrad.runtime.accumulation import accumulate, accumulate_index
from cpsgrad.runtime.adjoints import DictAdjoint
from cpsgrad.testing import check_grad

# How a helper holding a dict `p` (entries "a" and "b", arrays of 3) and an array `q` calls its
# callee `h(p, q)`.
ARGUMENTS = (
    "{p}, {q}",
    "{p}, {p}['a']",
    "{{'a': {p}['b'], 'b': {p}['a']}}, {q}",
    "{{'a': {p}['a'], 'b': {p}['a']}}, {p}['a']",
    "dict({p}), {q}",
    "{{'a': {p}['a'] * 2.0, 'b': {q}}}, {q}",
    "q={q}, p={p}",
    "{{'a': {p}['a'][:], 'b': {p}['b'] + 0.0}}, {q}[:]",
    "{{'a': {p}['a'], 'b': {p}['b'], 'c': {p}['a']}}, {q}",
)
# What a helper computes from its parameters.
RESULTS = (
    "np.sum({p}['a'])",
    "np.sum({p}['a'] * {p}['a']) + np.sum({q})",
    "np.dot({p}['a'], {q}) + np.sum({p}['b'] * {p}['a'])",
    "np.sum(np.tanh({p}['b'])) * np.sum({p}['b'])",
    "np.sum(make({p}, {q})['a'] * make({p}, {q})['b'])",
    "read_twice(make({p}, {q}))",
    "nested({{'inner': {p}, 'x': {q}}})",
    "closure({p}, {q})",
    "aliased({p}, {q})",
    "np.sum(same({p})['a'] * {p}['a']) + np.sum(same({p})['b'])",
    "looped({p}, {q})",
    "np.sum(pair({p}, {q})[0]['a'] * pair({p}, {q})[1]['a'])",
)
USES = ("discarded", "added", "multiplied")

PRELUDE = '''import numpy as np


def make(p, q):
    """A dict built from p, returned: its adjoint comes back from the caller's reads."""
    return {"a": p["a"] * q, "b": p["b"], "p": p}


def read_twice(r):
    return np.sum(r["a"]) + np.sum(r["a"] * r["b"]) + np.sum(r["p"]["a"] * r["p"]["b"])


def nested(outer):
    inner = outer["inner"]
    return np.sum(outer["inner"]["a"] * outer["x"]) + np.sum(inner["b"] * inner["a"])


def closure(p, q):
    def weighted(x):
        return np.sum(p["a"] * x) + np.sum(p["b"])

    return weighted(q) + weighted(p["b"]) * weighted(p["a"])


def aliased(p, q):
    first = np.sum(p["b"] * q)
    r = p
    s = r
    return first * np.sum(r["a"]) + np.sum(s["a"] * p["a"]) + np.sum(s["b"])


def same(p):
    return p


def looped(p, q):
    total = 0.0
    for step in range(3):
        total = total + np.sum(p["a"] * q) * step + np.sum(p["b"] * p["a"])
    return total


def pair(p, q):
    return p, {"a": p["a"] * q, "b": p["a"]}

'''

CALL = st.tuples(st.sampled_from(ARGUMENTS), st.sampled_from(USES))
HELPER = st.tuples(st.lists(CALL, max_size=2), st.sampled_from(RESULTS))


def _body(calls, callee: str, result: str) -> list[str]:
    lines, total = [], result
    for index, (arguments, use) in enumerate(calls):
        name = f"t{index}"
        lines.append(f"    {name} = {callee}({arguments.format(p='p', q='q')})")
        if use == "added":
            total = f"{total} + {name}"
        elif use == "multiplied":
            total = f"({total}) * {name}"
    return [*lines, f"    return {total}"]


def _source(helpers, top) -> str:
    lines = [PRELUDE]
    for level, (calls, result) in enumerate(helpers):
        lines.append(f"def h{level}(p, q):")
        lines += _body(calls if level else [], f"h{level - 1}", result.format(p="p", q="q"))
        lines.append("")
    lines.append("def core(p, q):")
    lines += _body(top, f"h{len(helpers) - 1}", "np.sum(p['a'] * p['b'])")
    lines += [
        "",
        "def f(v):",
        "    return core({'a': v, 'b': v * 0.5}, v * 1.5)",
        "",
        "def g(params):",
        "    return core(params, params['a'] * 1.5)",
    ]
    return "\n".join(lines) + "\n"


_counter = itertools.count()


def _load(tmp_path, source: str):
    path = tmp_path / f"dict_graph_{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


V = np.array([-0.34, 0.042, -0.69])
W = np.array([0.21, -0.5, 0.33])


def _check(module, source: str) -> None:
    value, _ = cpsgrad.value_and_grad(module.f)(V)
    assert value == module.f(V), source
    try:
        check_grad(module.f, V)
        # the dict as the differentiated argument: its gradient against finite differences of g
        # over the entries laid end to end
        flat = np.concatenate([V, W])

        def g_flat(x):
            return module.g({"a": x[:3], "b": x[3:]})

        def gradient(x):
            grads = cpsgrad.grad(module.g)({"a": x[:3], "b": x[3:]})
            assert sorted(grads) == ["a", "b"]
            return np.concatenate([grads["a"], grads["b"]])

        check_grad(g_flat, flat, gradient=gradient)
    except AssertionError as error:
        raise AssertionError(f"{error}\n\nthe program:\n{source}") from None


@settings(max_examples=120, deadline=None)
@given(helpers=st.lists(HELPER, min_size=1, max_size=3), top=st.lists(CALL, min_size=1, max_size=3))
def test_chains_of_helpers_passing_dicts_get_the_gradient_finite_differences_give(tmp_path_factory, helpers, top):
    source = _source(helpers, top)
    _check(_load(tmp_path_factory.mktemp("dict_graphs"), source), source)


@pytest.mark.parametrize("result", RESULTS)
@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_each_way_of_passing_a_dict_once(tmp_path, arguments, result):
    """Every argument pattern and every result, each drawn at least once (the draws above mix them)."""
    source = _source([([], result), ([(arguments, "added")], result)], [(arguments, "multiplied")])
    _check(_load(tmp_path, source), source)


# ---- the runtime's in-place rule, directly --------------------------------------------------------


def test_a_shared_dict_adjoint_is_never_changed():
    """Another name holding the DictAdjoint (or an entry of it) keeps its values."""
    entry = np.ones(3)
    total = DictAdjoint({"a": entry})
    alias = total
    result = accumulate_index(total, {"a": np.zeros(3)}, "a", np.full(3, 2.0))
    assert result is not alias and list(alias["a"]) == [1.0, 1.0, 1.0] and list(result["a"]) == [3.0, 3.0, 3.0]
    del alias
    held = total["a"]  # the entry referred to from outside the dict: replaced, not added into
    result = accumulate_index(total, {"a": np.zeros(3)}, "a", np.full(3, 2.0))
    assert result is total and list(held) == [1.0, 1.0, 1.0] and list(result["a"]) == [3.0, 3.0, 3.0]
    assert result["a"] is not held


def test_an_owned_dict_adjoint_takes_reads_and_callees_adjoints_in_place():
    total = DictAdjoint({"a": np.ones(3)})
    entry_id = id(total["a"])
    total = accumulate_index(total, {"a": np.zeros(3), "b": 0}, "a", np.full(3, 2.0))
    total = accumulate_index(total, {"a": np.zeros(3), "b": 0}, "b", 5.0)
    assert id(total["a"]) == entry_id and list(total["a"]) == [3.0, 3.0, 3.0] and total["b"] == 5.0
    other = DictAdjoint({"a": np.ones(3), "c": np.ones(2)})
    before = id(total)
    total = accumulate(total, other)
    assert id(total) == before and list(total["a"]) == [4.0, 4.0, 4.0] and list(other["a"]) == [1.0, 1.0, 1.0]
    # "c" came from `other` and is still its entry: the next contribution must not change it
    total = accumulate(total, DictAdjoint({"c": np.ones(2)}))
    assert list(other["c"]) == [1.0, 1.0] and list(total["c"]) == [2.0, 2.0]


def test_a_view_or_a_broadcast_entry_is_replaced_not_written():
    base = np.ones(6)
    total = DictAdjoint({"a": base[:3], "s": np.ones(1)})
    total = accumulate_index(total, {"a": np.zeros(3), "s": np.zeros(3)}, "a", np.ones(3))
    total = accumulate_index(total, {"a": np.zeros(3), "s": np.zeros(3)}, "s", np.ones(3))
    assert list(base) == [1.0] * 6 and list(total["a"]) == [2.0] * 3 and list(total["s"]) == [2.0] * 3


def test_a_nested_dict_adjoint_is_merged_in_place_only_when_owned():
    inner = DictAdjoint({"w": np.ones(2)})
    total = DictAdjoint({"inner": inner})
    total = accumulate(total, DictAdjoint({"inner": DictAdjoint({"w": np.ones(2)})}))
    assert list(inner["w"]) == [1.0, 1.0] and list(total["inner"]["w"]) == [2.0, 2.0]  # `inner` was shared
    del inner
    owned = total["inner"]
    owned_id = id(owned)
    del owned
    total = accumulate(total, DictAdjoint({"inner": DictAdjoint({"w": np.ones(2)})}))
    assert id(total["inner"]) == owned_id and list(total["inner"]["w"]) == [3.0, 3.0]


# ---- programs whose adjoints do share an entry while it is added into ----------------------------

SHARING = {
    # the adjoint of `a` is the entry params["a"] gets at line 3 and also `w`'s (an addition hands
    # one array to both operands); line 2's read adds into the entry while `w`'s is still to come
    "an entry shared with a live adjoint": '''
def f(params):
    w = params["b"] * 1.0
    u = params["a"] * 3.0
    a = params["a"] + w
    return np.sum(a * a) + np.sum(u)
''',
    # the same, one level down: the inner dict's adjoint is an entry of the outer one's
    "a nested dict's adjoint shared with a live adjoint": '''
def f(params):
    outer = {"in": params, "k": params["b"]}
    w = outer["in"]["b"] * 1.0
    u = outer["in"]["a"] * 3.0
    a = outer["in"]["a"] + w
    return np.sum(a * a) + np.sum(u) + np.sum(outer["k"] * a)
''',
    "a dict read in a loop, its adjoint aliased by the loop's carried value": '''
def f(params):
    h = params["b"]
    for step in range(3):
        h = np.tanh(params["a"] + h) + params["a"] * 0.5
    return np.sum(h * h)
''',
}


@pytest.mark.parametrize("name", SHARING)
def test_programs_that_share_an_adjoint_entry(tmp_path, name):
    source = "import numpy as np\n" + SHARING[name]
    path = tmp_path / f"sharing_{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    flat = np.concatenate([V, W])

    def f_flat(x):
        return module.f({"a": x[:3], "b": x[3:]})

    def gradient(x):
        grads = cpsgrad.grad(module.f)({"a": x[:3], "b": x[3:]})
        return np.concatenate([grads["a"], grads["b"]])

    check_grad(f_flat, flat, gradient=gradient)
