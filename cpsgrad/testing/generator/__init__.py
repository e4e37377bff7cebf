"""The program generator behind `cpsgrad.testing.programs`, one concern a module.

- `grammar`: the kinds of values, the constants drawn, and the records of what is in scope
  (`Variable`, `Helper`, `Function`).
- `builder`: `Builder`, which draws one module; its choices, and the draws of each part from:
  `expressions` (float expressions, calls of helpers and closures, conditions), `arrays`
  (vector and matrix expressions, views), `statements` (statements, loops, closures),
  `functions` (helpers, the recursive helper, module globals, the module).
- `program`: `Program`, a drawn module and the call of its entry function.
- `checking`: `check_program`, one program through cpsgrad against the original and finite
  differences.
- `soak`: the soak runner.

The statement families of the later waves live beside it (`cpsgrad/testing/forms.py` and its
modules, `mutations.py`). `cpsgrad.testing.programs` is the public face: `programs(...)`,
`Program`, `check_program`, `soak` and the command line.
"""
