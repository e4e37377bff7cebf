"""The built-in rule table; importing this package registers every built-in rule."""

from cpsgrad.rules import arrays, closures, containers, nn, scalar, subscripts  # noqa: F401
from cpsgrad.rules.registry import TABLE, rule

__all__ = ["TABLE", "rule"]
