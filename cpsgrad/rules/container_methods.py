"""Rules for the new contents of a container changed by a method or `del`
(cpsgrad/runtime/container_methods.py; transforms/container_methods.py writes the calls)."""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
from __future__ import annotations

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import rule


@rule(cpsgrad_runtime.with_default)
def with_default(d, key, value):
    y = cpsgrad_runtime.with_default(d, key, value)
    y_d = yield y
    d_d += cpsgrad_runtime.with_default_adjoint(d, key, y_d)
    value_d += cpsgrad_runtime.with_default_value_adjoint(d, key, y_d)


@rule(cpsgrad_runtime.without_item)
def without_item(target, key):
    y = cpsgrad_runtime.without_item(target, key)
    y_d = yield y
    target_d += cpsgrad_runtime.without_item_adjoint(target, key, y_d)


@rule(cpsgrad_runtime.without_key)
def without_key(target, key):
    y = cpsgrad_runtime.without_key(target, key)
    y_d = yield y
    target_d += cpsgrad_runtime.without_item_adjoint(target, key, y_d)
