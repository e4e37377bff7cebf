"""What the analyses record by node id survives the passes after them.

transforms/analysis/aliasing.py records, by the id of a core statement, why an `x op= y` may not be
computed as `x = x op y` (`Normalized.in_place`: refused where it runs) and which arguments of a
user call may be written into (`Normalized.consumable`: the run-time consent). A pass after it
that rewrites anything (augmented.guard_operands for a list's `l += (a, b)`) rebuilds every node
it visits; the tables once kept only the origins, so the refusal of `c += x` went missing (a wrong
value and gradient: Python changes the array `d["a"]` holds, the program did not) and a call given
a fresh list to write into was refused. Found by the mutation soak (seed 240000); the generator's
dict-item write now draws `x op= y` and a list extended by a tuple display after it."""

import types

import numpy as np
import pytest

import cpsgrad
from cpsgrad.errors import UnsupportedError
from cpsgrad.testing import check_grad
from cpsgrad.transforms import walk
from cpsgrad.transforms.analysis import aliasing

X = np.linspace(0.1, 0.9, 3)
G = np.ones(3)


def shared_through_a_dict_then_a_list_extension(x):
    c = x * 1.0
    d = {"a": c}
    c += x
    extended = [x]
    extended += (x, 2.0)
    return np.sum(d["a"] * x)


def global_array_then_a_list_extension(x):
    c = G
    c += x
    extended = [x]
    extended += (x, 2.0)
    return np.sum(c * x)


class Items(list):
    pass


def _extend(it, a, b):
    it += (b, a)
    return it[-1] * len(it)


def fresh_list_written_by_a_helper_then_a_list_extension(u, v):
    result = _extend(Items([]), u, 1.0)
    extended = [u]
    extended += (v, 2.0)
    return result * v + sum(extended)


@pytest.mark.parametrize("function", [shared_through_a_dict_then_a_list_extension, global_array_then_a_list_extension])
def test_a_shared_update_stays_refused_after_a_later_rewrite(function):
    before = G.copy()
    with pytest.raises(UnsupportedError, match="augmented assignment changes an array in place"):
        cpsgrad.value_and_grad(function)(X.copy())
    np.testing.assert_array_equal(G, before)  # refused before it ran: the global is as it was


def test_a_call_given_a_fresh_list_to_write_into_differentiates_after_a_later_rewrite():
    value, gradient = cpsgrad.value_and_grad(fresh_list_written_by_a_helper_then_a_list_extension, argnums=(0, 1))(
        0.3, 0.7
    )
    assert value == fresh_list_written_by_a_helper_then_a_list_extension(0.3, 0.7)
    check_grad(fresh_list_written_by_a_helper_then_a_list_extension, 0.3, 0.7, argnums=(0, 1))
    assert gradient[0] == pytest.approx(2 * 0.7 + 1.0)  # it[-1] * len(it) is 2u; the list adds u


def test_the_tables_name_statements_of_the_final_definition(monkeypatch):
    """After the analysis and the rewrites after it, each core `x = x op y` of a user's `x op= y` on an
    array and each call of a user function in the definition the later passes read has its entry."""
    import libcst as cst

    from cpsgrad.transforms import pipeline

    missing, checked = [], []
    original = aliasing.check

    def check(normalized, *arguments, **keywords):
        result = original(normalized, *arguments, **keywords)
        checked.append(normalized)
        for node in walk.nodes(normalized.definition):
            if not (isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Assign)):
                continue
            value, origin = node.body[0].value, normalized.origins.get(id(node))
            update = isinstance(origin, cst.AugAssign) and isinstance(value, cst.BinaryOperation)
            if update and origin.target.value == "c" and id(node) not in normalized.in_place:
                missing.append(("in_place", cst.Module([]).code_for_node(node).strip()))
            called = isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
            if called and value.func.value.startswith("_extend") and id(node) not in normalized.consumable:
                missing.append(("consumable", cst.Module([]).code_for_node(node).strip()))
        return result

    monkeypatch.setattr(pipeline.aliasing, "check", check)
    monkeypatch.setenv("CPSGRAD_CACHE_DIR", "off")  # transformed here, not loaded from the disk cache
    for function in (shared_through_a_dict_then_a_list_extension, global_array_then_a_list_extension):
        with pytest.raises(UnsupportedError):
            cpsgrad.value_and_grad(_fresh(function))(X.copy())
    cpsgrad.value_and_grad(_fresh(fresh_list_written_by_a_helper_then_a_list_extension))(0.3, 0.7)
    assert len(checked) == 3 and not missing


def _fresh(function):
    """A new function object of the same code: transformed again (programs are cached per function)."""
    return types.FunctionType(function.__code__, function.__globals__, function.__name__)
