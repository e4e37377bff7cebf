"""All naming conventions of generated code, in one place, deterministic and collision-free.

Generated names never collide with a user's: every name a function mentions is reserved first.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from cpsgrad.transforms import walk

ADJOINT_SUFFIX = "_d"  # y -> y_d (switched to _adj, _adj2, ... if the user's names collide)
CONTINUATION = "k"  # the function's own continuation parameter
RESULT = "out"  # the program's final value, threaded back through every continuation
TEMPORARY = "t"  # t1, t2, ... made by normalize


def cps_function(function: str) -> str:
    return f"{function}__cps"


def program_wrapper(function: str) -> str:
    return f"{function}__program"


def loop_label(kind: str, number: int) -> str:
    """`while_1`, `for_2`: a loop's continuation, and the prefix of its state (`for_2_index`)."""
    return f"{kind}_{number}"


def loop_state(label: str, role: str) -> str:
    """`for_2_items`, `for_2_index`, `for_2_next`, `while_1_completed`."""
    return f"{label}_{role}"


def loop_exit(label: str) -> str:
    return f"after_{label}"


def region_name(label: str, role: str) -> str:
    """A try/with region's continuations and names (regions.py): `try_1_else`, `try_1_except`,
    `try_1_finally`, `try_1_raised`, `try_1_error_next` (the rest after a deep guard),
    `try_1_error_caught`."""
    return f"{label}_{role}"


def region_after(label: str) -> str:
    """`after_try_1`: the rest after a try/with region, its finally body first."""
    return f"after_{label}"


def try_error(number: int) -> str:
    """`try_1_error`: the exception of a try without a handler (the finally's region)."""
    return f"try_{number}_error"


def try_label(error: str) -> str:
    """`try_1` of `try_1_error` (the normalized except's), `with_1` of `with_1_error`."""
    return error.removesuffix("_error")


def join(number: int) -> str:
    return f"if_{number}_join"


def call_label(number: int) -> str:
    """`call_1`: the Nth call of a user function; it names the three below."""
    return f"call_{number}"


def call_continuation(label: str) -> str:
    """`after_call_1`: the rest of the caller, the callee's continuation."""
    return f"after_{label}"


def call_adapter(label: str) -> str:
    """`call_1_k`: the closure handed to the callee as its `k`, packing the caller's adjoints."""
    return f"{label}_k"


def call_site(label: str) -> str:
    """`call_1_site`: the run-time dispatcher of the call (`runtime.dispatch.CallSite`)."""
    return f"{label}_site"


def call_returned(label: str) -> str:
    """`call_1_returned`: what a call's adapter got back, held while it passes loans on."""
    return f"{label}_returned"


def call_part(label: str, adjoint: str) -> str:
    """`call_1_x_d`: the callee's contribution to `x_d` where `x_d` already had one: added after."""
    return f"{label}_{adjoint}"


def version(variable: str, counter: int) -> str:
    """`y_1`, `y_2`, ...: a variable's later values in one continuation."""
    return f"{variable}_{counter}"


def adjoint_suffix(attempt: int) -> str:
    """`_d`, then `_adj`, `_adj2`, ... while a user's name ends with the suffix tried."""
    if attempt == 0:
        return ADJOINT_SUFFIX
    return f"_adj{attempt if attempt > 1 else ''}"


def backward_local(target: str, name: str) -> str:
    """`y_g`: a rule's backward local `g` in the backward of `y = f(x)`."""
    return f"{target}_{name}"


def overwritten(target: str) -> str:
    """`x_1_overwritten`: what the write making version `x_1` overwrote, restored in its backward."""
    return f"{target}_overwritten"


def list_length(target: str) -> str:
    """`xs_1_length`: a list's length before the extend making version `xs_1`."""
    return f"{target}_length"


def list_popped(target: str) -> str:
    """`xs_1_popped`: the (position, element) the pop making version `xs_1` removed."""
    return f"{target}_popped"


def call_entered(label: str) -> str:
    """`call_1_k_entered`: whether the callee of a guarded call entered its continuation."""
    return f"{call_adapter(label)}_entered"


def rule_global(name: str) -> str:
    """`np__rule`: a module name a rule's template reads, where the user's program shadows it."""
    return f"{name}__rule"


def written_variant(function: str) -> str:
    """A user function that also returns the arrays it writes into (transforms/written_arguments.py)."""
    return f"{function}__written"


WRITTEN_ATTRIBUTE = "__cpsgrad_written__"  # a written-argument variant's: (function, parameters it returns, text)


def written_result() -> str:
    """What a written-argument variant's `return e` evaluated, before its parameters are read."""
    return "result"


def region_part(kind: str, number: int, role: str) -> str:
    """A try's or with's own variable (exceptions.py): `try_1_error`, `with_2_exit`, `with_2_open`."""
    return f"{kind}_{number}_{role}"


def generator_loop(callee: str) -> str:
    """The label of a loop over a generator function's call (generators.py): `for_gen`, `for_m_gen`."""
    return "for_" + callee.replace(".", "_")


def generator_part(label: str, role: str) -> str:
    """A variable of a generator's loop or object (`for_gen_item`, `g_phase`, `sum_g`)."""
    return f"{label}_{role}"


def generator_definition(label: str) -> str:
    """A nested def's label (closures.py: `def_g`), or one lifted out of a generator's loop
    (generators.py: `def_for_gen`, `def_fold_gen`)."""
    return f"def_{label}"


def lambda_label(number: int) -> str:
    """The label of the function's `number`th lambda (closures.py): `lambda_1`."""
    return f"lambda_{number}"


def hoisted_consumer(form: str, generator: str) -> str:
    """A generator's consumer taken out of an expression (generator_hoist.py): `sum_gen`."""
    return f"{form}_" + generator.replace(".", "_")


def read_before(target: str) -> str:
    """A target read before a hoisted consumer runs (generator_hoist.py): `before_x`."""
    return f"before_{target}"


def accumulator(form: str) -> str:
    """What a fold over a generator carries (`sum_1`, `max_1`)."""
    return f"{form}_1"


def zipped(name: str) -> str:
    """A sequence zipped with a generator's items (`zip_ys`)."""
    return f"zip_{name}"


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier mentioned anywhere in `node` (names and attribute names)."""
    return walk.names(node)


class Namer:
    """Hands out fresh names: `base` if free, else `base_1`, `base_2`, ... skipping taken ones."""

    def __init__(self, reserved: Iterable[str] = ()):
        self.taken: set[str] = set(reserved)
        self.counters: dict[str, int] = {}

    def reserve(self, name: str) -> str:
        self.taken.add(name)
        return name

    def fresh(self, base: str) -> str:
        """`base` itself if it is free, else the next `base_N` that is."""
        if base not in self.taken:
            return self.reserve(base)
        return self.numbered(base)

    def numbered(self, base: str, separator: str = "_") -> str:
        """The next `base<separator>N` (N from 1) that is free."""
        counter = self.counters.get(base, 0)
        while True:
            counter += 1
            name = f"{base}{separator}{counter}"
            if name not in self.taken:
                self.counters[base] = counter
                return self.reserve(name)

    def temporary(self) -> str:
        """A temporary of the normalized program: t1, t2, ..."""
        return self.numbered(TEMPORARY, separator="")
