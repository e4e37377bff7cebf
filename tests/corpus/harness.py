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
