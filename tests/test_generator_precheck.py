"""transforms/generators.py looks for loops over generators only where the function may call one
(`may_call_a_generator`, a test on the code objects that keeps the pass off most functions): it
must never say no where the full pass would find a generator function, however it is reached."""

import math
import types

import numpy as np

import cpsgrad
from cpsgrad.testing import check_grad
from cpsgrad.transforms.generator_precheck import may_call_a_generator


def squares(n, x):
    for i in range(n):
        yield x * i


class Holder:
    @staticmethod
    def stepped(x):
        yield x
        yield 2.0 * x


holder = Holder()
module = types.SimpleNamespace(inner=types.SimpleNamespace(squares=squares))


def by_global(x):
    return sum(squares(3, x))


def by_static_method(x):
    return sum(Holder.stepped(x))


def by_instance_static_method(x):
    return sum(holder.stepped(x))


def by_nested_attributes(x):
    return sum(module.inner.squares(2, x))


def by_local_def(x):
    def local(y):
        yield y * y

    return sum(local(x))


def by_closure():
    gen = squares

    def inner(x):
        return sum(gen(4, x))

    return inner


def plain(x):
    total = 0.0
    for i in range(3):
        total = total + math.sin(x * i) + np.sum(np.ones(2)) + sum(v for v in (x, x))  # a genexpr is not one
    return total


def test_every_way_of_reaching_a_generator_function_is_seen():
    for function in (by_global, by_static_method, by_instance_static_method, by_nested_attributes, by_local_def,
                     by_closure()):
        assert may_call_a_generator(function), function.__name__


def test_a_function_calling_none_is_passed_over():
    assert not may_call_a_generator(plain)
    check_grad(plain, 0.4)


def test_the_generators_found_differentiate():
    for function in (by_global, by_static_method, by_instance_static_method, by_nested_attributes, by_local_def,
                     by_closure()):
        value, _ = cpsgrad.value_and_grad(function)(0.7)
        assert value == function(0.7)
        check_grad(function, 0.7)


def bound_by_a_walrus_before_the_loop(v):
    a6 = math.tanh(b5 := 2.0) * b5

    def gen(k):
        for j in range(k):
            yield j * 0.5
        yield b5 * v

    total = 0.0
    for item in gen(4):
        total = total + item * (-a6 - b5)
    return a6 + total


def test_a_name_an_assignment_expression_bound_before_the_loop_is_read_in_it():
    # found by the mutation soak (seed 240001): the loop's body refused b5 as unbound
    check_grad(bound_by_a_walrus_before_the_loop, 0.3)
