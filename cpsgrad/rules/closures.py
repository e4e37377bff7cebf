"""The rule of `make_function`: a nested def or lambda made from its environment (the captured
values, then the defaults; `transforms/closures.py`). A made function's adjoint is a
`SequenceAdjoint` aligned with that environment, which the tuple's own rule hands back to
each captured value and default."""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
from __future__ import annotations

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import rule


@rule(cpsgrad_runtime.make_function)
def make_function(definition, environment):
    y = cpsgrad_runtime.make_function(definition, environment)
    y_d = yield y
    environment_d += y_d


@rule(cpsgrad_runtime.make_partial)
def make_partial(function, arguments, names, values):
    y = cpsgrad_runtime.make_partial(function, arguments, names, values)
    y_d = yield y
    function_d += cpsgrad_runtime.item(y_d, 0)
    arguments_d += cpsgrad_runtime.item(y_d, 1)
    values_d += cpsgrad_runtime.item(y_d, 2)


@rule(cpsgrad_runtime.generator_fold)
def generator_fold(definition, generator):
    # the fold's adjoint is laid out as the generator's environment (transforms/generator_folds.py)
    y = cpsgrad_runtime.generator_fold(definition, generator)
    y_d = yield y
    generator_d += y_d
