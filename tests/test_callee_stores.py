"""Which arguments of a user function called for its effect become differentiable in the caller
(transforms/analysis/callee_stores.py, used by transforms/attributes.receivers): only those bound
to parameters the callee may store a value into (attribute and item writes, changing methods,
passing them on to a callee that does), not every name passed beside a differentiable value."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad
from cpsgrad.transforms.analysis.callee_stores import stored_by


class Box:
    def __init__(self):
        self.w = 1.0
        self.on = False

    def set(self, v):
        self.w = v


def _note(tag, value):
    return len(type(tag).__name__) + 0 * len(str(value))


def store_weight(box, v, scale):
    box.w = v * scale


def pass_it_on(box, v):
    store_weight(box, v, 2.0)


def keep_in_list(items, d, v):
    items.append(v)
    d["v"] = v


def reads_only(box, items, v):
    return box.w + len(items) + v


def calls_its_parameter(fun, args, label):
    fun(*args)
    return label


def read_by_a_closure(box, v):
    def later():
        box.w = v

    return later


def reraise(error, fun, args, kwargs):  # the autograd shim's _crash_or_reraise
    try:
        fun(*args, **kwargs)
    except Exception:
        raise error from None
    raise RuntimeError(f"{type(error).__name__}: {error}") from error


def test_the_parameters_a_callee_stores_into():
    assert stored_by(store_weight) == {"box"}
    assert stored_by(pass_it_on) == {"box"}  # passed on to a function that stores into it
    assert stored_by(keep_in_list) == {"items", "d"}
    assert stored_by(reads_only) == frozenset()
    assert stored_by(call_with) == {"v"}  # calling fun is not a store into fun; v may be kept by it
    assert stored_by(calls_its_parameter) == {"args"}  # fun is called with args' items: they may be kept
    assert stored_by(read_by_a_closure) == {"box", "v"}  # a nested function may store into what it reads
    assert stored_by(reraise) == {"args", "kwargs"}
    assert stored_by(print) is None  # not known: every name passed may be stored into


def tagged(x):
    tag = Box()
    _note(tag, x)  # for its effect: it stores nothing into tag
    if getattr(tag, "on", False):
        return x * 2.0
    return x * 3.0 + tag.w


def test_a_name_handed_beside_a_differentiable_value_that_is_not_stored_into_stays_plain():
    # the name was taken for differentiable, and getattr of it refused: "no derivative rule for getattr"
    assert cpsgrad.grad(tagged)(0.5) == 3.0
    check_grad(tagged, 0.5)


def weight_stored(x):
    box = Box()
    store_weight(box, x * x, 2.0)
    return box.w * x


def test_what_a_callee_stores_still_reaches_the_gradient():
    check_grad(weight_stored, 0.7)
    assert cpsgrad.grad(weight_stored)(0.7) == pytest.approx(6 * 0.7**2, rel=1e-12)


def call_with(fun, v):
    fun(v)


def through_a_bound_method(x):
    box = Box()
    call_with(box.set, x * 2.0)
    return box.w * x


def test_a_bound_method_handed_in_and_called_is_followed_or_refused_never_wrong():
    """Calling a parameter is not a store into it (callee_stores.py): the instance of a bound
    method called so is the object's own, which the run's books follow (runtime/objects.py)."""
    try:
        gradient = cpsgrad.grad(through_a_bound_method)(0.7)
    except cpsgrad.UnsupportedError as error:
        assert error.location is not None and error.location.line > 0
    else:
        assert gradient == pytest.approx(4 * 0.7, rel=1e-12)
        check_grad(through_a_bound_method, 0.7)


def _run(operator, fun, args):  # the autograd shim's _run, cut down
    if getattr(fun, "__peer_gradient__", False):
        raise NotImplementedError("a derivative of a derivative")
    try:
        return operator(fun)(*args)
    except cpsgrad.CpsgradError:
        raise
    except Exception as error:  # noqa: BLE001
        reraise(error, fun, args, {})


def _cube(x):
    return x * x * x


def gradient_inside(x):
    return _run(cpsgrad.grad, _cube, (x,)) * 2.0


def test_a_gradient_called_inside_differentiated_code_is_the_higher_order_refusal():
    """autograd's grad-of-grad tests through the shim: `fun` was taken for differentiable (handed
    to reraise beside args) and getattr(fun, ...) refused with NoRuleError before the gradient's
    own refusal could be reached."""
    with pytest.raises(cpsgrad.HigherOrderError):
        cpsgrad.grad(gradient_inside)(np.float64(1.5))
