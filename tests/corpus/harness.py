"""What the corpus tests share: parametrizing cases with their expected failures, the phases
hypothesis runs for them, and argnums as positions."""

import pytest
from hypothesis import Phase

# The phases hypothesis runs: a case expected to fail is not shrunk (each try costs seconds).
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
PHASES_OF_XFAIL = (Phase.explicit, Phase.reuse, Phase.generate)


def params(cases, xfail: dict[str, str]):
    """One pytest param per case, marked xfail(strict=True) with its reason where it is in `xfail`."""
    return [
        pytest.param(case, id=case.name, marks=[pytest.mark.xfail(strict=True, reason=xfail[case.name])] if case.name in xfail else [])
        for case in cases
    ]


def phases(case, xfail: dict[str, str]):
    return PHASES_OF_XFAIL if case.name in xfail else PHASES


def positions(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def parts(gradient, argnums):
    return (gradient,) if isinstance(argnums, int) else tuple(gradient)


def check_against_jax(case, reference, xfail: dict[str, str], examples: int, rtol: float, atol: float) -> None:
    """cpsgrad's gradient of `case` against `jax.grad` of its jax.numpy transcription
    `reference`, on hypothesis inputs; gradients of containers compared leaf by leaf."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    import cpsgrad

    where = positions(case.argnums)

    @settings(max_examples=examples, phases=phases(case, xfail))
    @given(st.tuples(*case.arguments))
    def check(arguments):
        gradient = parts(cpsgrad.grad(case.function, argnums=case.argnums)(*arguments), case.argnums)
        with jax.enable_x64(True):
            inputs = tuple(
                jax.tree_util.tree_map(jnp.asarray, argument) if i in where else argument
                for i, argument in enumerate(arguments)
            )
            expected = jax.grad(reference, argnums=where)(*inputs)
        for position, ours, theirs in zip(where, gradient, expected, strict=True):
            ours_leaves, ours_tree = jax.tree_util.tree_flatten(ours)
            theirs_leaves, theirs_tree = jax.tree_util.tree_flatten(theirs)
            assert ours_tree == theirs_tree, (position, ours_tree, theirs_tree)
            for mine, leaf in zip(ours_leaves, theirs_leaves, strict=True):
                np.testing.assert_allclose(mine, np.asarray(leaf), rtol=rtol, atol=atol, err_msg=f"argument {position}")

    check()
