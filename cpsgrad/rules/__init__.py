"""The built-in rule table; importing this package registers every built-in rule.

One module a group of primitives: `operators` (Python's operators and numeric builtins), `math`
(its functions numpy shares made from `elementary`, by `module_templates`),
`numpy/` (ufuncs, reductions, products, shapes, creation, linalg, ...), `scipy/` (signal, linalg,
integrate, special, stats), `containers`, `closures`, `subscripts`, `nn`, `tangent_helpers` (what
forward-mode programs call); `registry` is the table and the decorators that fill it.
"""

from cpsgrad.rules import (  # noqa: F401
    closures,
    container_methods,
    containers,
    math,
    nn,
    numpy,
    operators,
    scipy,
    subscripts,
    tangent_helpers,
)
from cpsgrad.rules.registry import TABLE, rule

__all__ = ["TABLE", "rule"]
