"""Forward mode: each statement's tangent beside it (render.py), from the same rules as the
reverse mode (rule_tangents.py, cpsgrad/rules/tangents.py). `cpsgrad.jvp` runs it."""

from cpsgrad.transforms.forward_mode.program import TangentProgram, tangent_call, transform

__all__ = ["TangentProgram", "tangent_call", "transform"]
