"""The guard of a built-in rule without complex support (cpsgrad/rules/complex_support.py): a
line before its inlined backward, `cpsgrad_runtime.refuse_complex_operands("np.sort ...", y, x)`,
that refuses the call when an input or an output is complex, so that no real-only formula ever
gives a complex value a gradient."""

from __future__ import annotations

import libcst as cst

from cpsgrad.rules.complex_support import supports_complex
from cpsgrad.rules.registry import Rule
from cpsgrad.transforms.adjoint.output import Lines, call_line, runtime_call, string


def complex_guard(rule: Rule, record, mapping: dict, outputs: list[str], start: int, lines: Lines) -> None:
    """Insert the guard at `start` (before the backward's lines) unless `rule` supports complex."""
    module = getattr(rule.template, "__module__", "") or ""
    if supports_complex(module, rule.name):
        return
    operands = [cst.Name(record.target)] + [
        mapping[parameter] for parameter in rule.differentiable_parameters if parameter in record.bound
    ]
    said = string(f"{primitive_name(rule.primitive)} with a complex input or result")
    lines.insert(start, call_line(runtime_call("refuse_complex_operands", said, *operands)))


def primitive_name(primitive) -> str:
    """How a refusal names a primitive: `np.linalg.norm`, `scipy.special.gammaln`, `max`."""
    name = getattr(primitive, "__qualname__", None) or getattr(primitive, "__name__", None) or repr(primitive)
    module = getattr(primitive, "__module__", None) or ""
    if module in ("builtins", "") or "." in name and name.split(".")[0] == "ndarray":
        return f"np.{name}" if name.startswith("ndarray.") else name
    public = module.split(".")
    while len(public) > 1 and public[-1].startswith("_"):  # scipy.linalg._matfuncs: scipy.linalg
        public.pop()
    module = ".".join(public)
    if module.startswith("numpy"):
        module = "np" + module[len("numpy") :]
    return f"{module}.{name}"
