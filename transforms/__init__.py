"""The libcst passes that turn a Python function into its CPS derivative program.

source -> fence -> normalize -> activity -> cps -> adjoint -> emit; `pipeline` runs them.
"""
