"""Generators consumed by derivative programs (transforms/generators.py, generator_folds.py)."""

from __future__ import annotations

import types

from cpsgrad.runtime.closures import Definition, make_function


def generator_fold(definition: Definition, generator: types.FunctionType) -> types.FunctionType:
    """The fold of `generator` (the function its consumer's loop calls), with its defaults as they are now."""
    defaults = generator.__defaults__ or ()
    keywords = generator.__kwdefaults__ or {}
    return make_function(definition, (*defaults, *(keywords[name] for name in definition.keyword_defaults)))
