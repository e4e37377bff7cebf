"""The analyses: what the passes ask of a function, and write no code for.

`activity` (which names may carry a derivative), `kinds` (which hold Python numbers), `lists`
(which lists normalize may rewrite into new values), `aliasing` with `sharing`, `callee_analysis`
and `callee_writes` (which in-place writes the derivative program follows exactly, and which it
refuses), `static_callees` (what `cpsgrad show` can tell of a call site before the program runs).
"""
