"""Adjoints lent to callees (cpsgrad_runtime.lend/borrow/merge): a callee adds into its caller's
buffer only where the parameter is exactly the argument's; gradients stay exact everywhere."""

import numpy as np
import pytest

import cpsgrad
from cpsgrad.runtime import books as loan_books
from cpsgrad.runtime import loans
from cpsgrad.testing import check_grad
from tests.cases import loan_functions as lf

RNG = np.random.default_rng(0)
W = RNG.normal(size=(3, 3)) * 0.5
X = RNG.normal(size=(3, 3))
H = RNG.normal(size=3)
TREE = ((0, 1), (2, (1, 0)))


@pytest.mark.parametrize(
    ("name", "arguments", "argnums"),
    [
        ("dup", (W, X), (0, 1)),  # the same array as two arguments: not lent
        ("alias", (W, X), (0, 1)),  # two names for one array: not lent
        ("via_partial", (W, X), (0, 1)),  # a partial's bound argument is the same array
        ("closure_alias", (W, X), (0, 1)),  # a closure captured the array it is called with
        ("rec", (W, H, 4), (0, 1)),  # linear recursion: lent down every level
        ("tree_loss", (W, TREE), 0),  # tree recursion
    ],
)
def test_gradients_with_loans_match_finite_differences(name, arguments, argnums):
    function = getattr(lf, name)
    value, _ = cpsgrad.value_and_grad(function, argnums=argnums)(*arguments)
    assert value == function(*arguments)
    check_grad(function, *arguments, argnums=argnums)


def test_a_recursive_callee_borrows_and_the_site_takes_back():
    text = cpsgrad.show(lf.rec, example=(W, H, 3), argnums=(0, 1))
    assert "cpsgrad_runtime.lend(W_d, W, (W, h2, t6))" in text  # the caller's adapter offers W's adjoint
    assert "cpsgrad_runtime.borrow(W)" in text  # the callee's first contribution takes it
    assert "W_d = cpsgrad_runtime.merge(W_d, call_1_W_d, W)" in text


def test_loans_do_not_outlive_a_run():
    cpsgrad.grad(lf.rec, argnums=(0, 1))(W, H, 3)
    offered, lent, frames = loan_books._loans()
    assert not offered and not lent and not frames
    with pytest.raises(ValueError, match="stop"):
        cpsgrad.grad(lf.failing)(W, 3)
    offered, lent, frames = loan_books._loans()
    assert not offered and not lent and not frames


def test_a_shared_adjoint_is_never_lent():
    shared = np.ones(3)
    keep = shared  # noqa: F841  (a second reference)
    argument = np.zeros(3)
    loans.lend(shared, argument, (argument,))
    loans.claim((argument,))
    assert loans.borrow(argument) == 0.0
    loan_books.clear_loans()


def test_an_offer_is_claimed_once_and_only_by_the_parameters_it_was_made_for():
    buffer, argument, other = np.zeros(3) + 1.0, np.zeros(3), np.zeros(3)
    try:
        loans.lend(buffer, argument, (argument, other))
        loans.claim((argument, argument))  # the same array in two parameters: neither takes it
        assert loans.borrow(argument) == 0.0
        assert not loan_books._loans()[0]  # and the offer is void
        loans.release()
        loans.lend(buffer, argument, (argument, argument))  # passed twice: not lent
        assert not loan_books._loans()[0]
        loans.lend(buffer, argument, (argument, other))
        loans.claim((other,))  # a program not given the argument voids the offer
        loans.claim((argument,))  # so a program deeper down cannot take it
        assert loans.borrow(argument) == 0.0
    finally:
        loan_books.clear_loans()


def test_a_run_inside_a_run_keeps_the_outer_loans():
    """A gradient run from inside another (a key function, say) gets its own loan books."""
    books = loan_books.open_loans()
    try:
        buffer, argument = np.zeros(3) + 1.0, np.zeros(3)
        loans.lend(buffer, argument, (argument,))
        cpsgrad.grad(lf.rec, argnums=(0, 1))(W, H, 2)
        loans.claim((argument,))
        assert loans.borrow(argument) is buffer
    finally:
        loan_books.close_loans(books)


def test_a_parameter_only_handed_on_passes_its_loan_down(monkeypatch):
    """An inner node that adds nothing to W's adjoint passes its caller's loan on to its child
    (pass_on), so every leaf but the first to run backward adds into one buffer."""
    tree = ((0, 1), (2, (0, 2)))
    weights = np.arange(12.0).reshape(3, 4) / 10.0
    taken = []
    borrow = cpsgrad.runtime.borrow

    def counting(argument):
        loan = borrow(argument)
        taken.append(type(loan) is not float)  # not the array: a reference would stop the lending
        return loan

    gradient = cpsgrad.grad(lf.passes_through_loss)
    expected = gradient(weights, tree)
    monkeypatch.setattr(cpsgrad.runtime, "borrow", counting)
    assert np.array_equal(gradient(weights, tree), expected)
    assert taken.count(True) == len(taken) - 1  # five leaves, one buffer
    check_grad(lf.passes_through_loss, weights, tree)


def test_a_number_is_never_lent():
    """Only arrays are lent: around a call with a Python number the program adds its adjoint back
    as a number (no lend, no merge), and the gradient is the array program's, element by element."""
    scalar = cpsgrad.show(lf.squares, example=(1.5,))
    assert "lend(" not in scalar and "merge(" not in scalar
    assert "x_d += call_1_x_d" in scalar and "x_d += call_2_x_d" in scalar
    array = cpsgrad.show(lf.squares, example=(H,))
    assert "cpsgrad_runtime.lend(x_d, x, (x,))" in array
    assert "x_d = cpsgrad_runtime.merge(x_d, call_1_x_d, x)" in array
    derivative = 2 * 1.5 + 3 * 1.5**2 + 1
    assert cpsgrad.grad(lf.squares)(1.5) == pytest.approx(derivative, rel=1e-15)
    assert cpsgrad.grad(lf.squares_total)(np.full(3, 1.5)) == pytest.approx(np.full(3, derivative), rel=1e-15)
