"""Adjoint: inline each primitive's rule into the continuation program and emit the final source.

Per continuation, straight-line statements are emitted forward, then the tail (the shift: a
continuation call that returns the program's result and the adjoints of what it was handed), then
each statement's backward in reverse, inline. Variables reassigned in one frame get versions
(`y`, `y_1`, ...) so the backward reads the values the forward saw; adjoints are `<version>_d`.
An adjoint that nothing contributed to is never materialized (a symbolic zero), and backward code
whose output adjoint is zero is skipped. Branches merge their adjoints before the shared backward.

One job a module: generator.py (programs, continuations, blocks), frames.py (versions), forward.py
(forward statements and their records), records.py (the typed backward records), inactive.py
(inactive ifs), tails.py (returns, jumps, branches), user_calls.py (calls of user functions),
fused.py (fusion), backward.py (each record's backward), rule_inlining.py (rules' templates),
accumulation.py (adding into adjoints), output.py (the statement tree: builders, provenance,
rendering once).
"""

from cpsgrad.transforms.adjoint.generator import Generator
from cpsgrad.transforms.adjoint.output import Lines

__all__ = ["Generator", "Lines"]
