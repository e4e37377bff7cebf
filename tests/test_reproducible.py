"""A seed draws the same programs everywhere: the generator's programs are a function of its
switches, the seed and hypothesis's version alone.

Until session 13 they were not: `_Builder.choose` drew `st.sampled_from(options)`, which
hypothesis labels by the hash of the options (the ids of the lambdas and bound methods offered,
which move with whatever the process allocated before), and hypothesis's generator mutates a
draw by copying choices between spans of one label; so two processes, pytest and plain python,
or one process before and after other draws, drew different programs from one seed after the
first dozen or so (a failure CI saw might not come back on a developer's machine). Choices are
now drawn as indices (`cpsgrad.testing.soaking.pick`).

Here every switch set the soak's command line accepts draws the same texts in two fresh
processes (other PYTHONHASHSEEDs, one of them after importing more modules and drawing other
programs first, in another order) and in this one after other draws; and the texts are pinned
by digest (for the hypothesis version they were recorded with), so that a change of the
generator that changes its draws is seen and made on purpose.
"""

import functools
import hashlib
import json
import os
import subprocess
import sys

import hypothesis
import pytest

from cpsgrad.testing.programs import draw_texts, switch_sets

COUNT = 14  # programs per set: the old code's draws parted after about a dozen
SETS = switch_sets()
SEEDS = {flag: 100 + k for k, flag in enumerate(SETS)}  # one seed a set, a different one each

_DRAW = """
import json, sys
for module in sys.argv[4:]:
    __import__(module)
from cpsgrad.testing.programs import draw_texts, switch_sets
sets = switch_sets()
flags = json.loads(sys.argv[1])
if sys.argv[2] == "after-other-draws":
    draw_texts(12, 99, writes=True)
count = int(sys.argv[3])
print(json.dumps({flag: draw_texts(count, seed, **sets[flag]) for flag, seed in flags}))
"""


def _start(flags: list[tuple[str, int]], hash_seed: str, mode: str, *modules: str) -> subprocess.Popen:
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
    return subprocess.Popen(
        [sys.executable, "-c", _DRAW, json.dumps(flags), mode, str(COUNT), *modules],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def _finish(process: subprocess.Popen) -> dict[str, list[str]]:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return json.loads(out)


def _digest(texts: list[str]) -> str:
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]


def _first_difference(flag: str, expected: list[str], got: list[str], where: str) -> str:
    for k, (a, b) in enumerate(zip(expected, got, strict=False)):
        if a != b:
            return f"set {flag or '(defaults)'!r}, program {k} drawn {where}:\n{b}\ninstead of\n{a}"
    return f"set {flag or '(defaults)'!r}: {len(got)} programs drawn {where} instead of {len(expected)}"


@functools.cache
def _drawn_here() -> dict[str, list[str]]:
    return {flag: draw_texts(COUNT, seed, **SETS[flag]) for flag, seed in SEEDS.items()}


def test_a_seed_draws_the_same_programs_in_every_process():
    flags = list(SEEDS.items())
    plain = _start(flags, "1", "fresh")
    other = _start(flags[::-1], "2", "after-other-draws", "email.mime.text", "xml.dom.minidom", "pytest", "json")
    draw_texts(12, 98, numpy=False)  # draws before, in this process (and the suite's before them)
    here = _drawn_here()
    for where, texts in (("in a fresh process", _finish(plain)), ("in a process that did more first", _finish(other))):
        for flag in SEEDS:
            assert texts[flag] == here[flag], _first_difference(flag, here[flag], texts[flag], where)
    assert all(len(texts) == COUNT for texts in here.values())


# The digests of the programs above, drawn with this hypothesis version (its draws change with its
# version: tests/drawing.py). Regenerate with `python tests/test_reproducible.py` only for a change
# of the generator meant to change its draws (say so in the commit).
PINNED_WITH = "6.170.17"
PINNED = {
    "": "2c95b515886aec53",
    "--writes": "b299c54d0d2bea15",
    "--no-numpy": "2998238f2b821822",
    "--no-closures": "cbe979822ce377e3",
    "--no-repeated-arguments": "6ba67cf83091497f",
    "--no-views": "9fb4712673f687fa",
    "--no-aliased-containers": "b3aac96bf1e760fb",
    "--no-discarded-results": "5fe03baeddf5dddd",
    "--no-captured-arguments": "b4289de3f04d0182",
    "--no-rebinding": "791b38874faa606f",
    "--no-starred": "c2ebe4b4320a696b",
    "--no-exceptions": "4d0c445b4303553c",
    "--no-walrus": "94a539965eb50e64",
    "--no-sets": "e50e13480d1027e7",
    "--no-effects": "ce1bb9acff924f8d",
    "--no-classes": "686cf162faf2975f",
    "--no-rules": "b5ff3573b4380dd0",
    "--no-subclasses": "993dca49c2c54901",
    "--no-generators": "fdb4a322bd42a53d",
}


def test_the_draws_are_pinned():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    assert {flag: _digest(texts) for flag, texts in _drawn_here().items()} == PINNED



# The digests of the defaults' and --writes' programs before the rules, subclasses and generators
# families: with the three off, the draws are those (every draw of the families is behind its
# switch). --writes re-pinned when the mutation form write-by-helper came (a module-level helper
# writing into the buffer the caller reads again).
BEFORE_THE_RULES = {"": "20581d9759753a05", "--writes": "78cf82002d3dc7cb"}


def test_the_rules_and_subclasses_off_draw_what_was_drawn_before_them():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    drawn = {
        flag: _digest(draw_texts(COUNT, SEEDS[flag], **SETS[flag], rules=False, subclasses=False, generators=False))
        for flag in BEFORE_THE_RULES
    }
    assert drawn == BEFORE_THE_RULES


# 50 programs a set (seeds 1000, 1001, ...), recorded before programs.py was split into
# cpsgrad/testing/generator/ (the split left them byte-identical); re-recorded when the rules and
# subclasses families came, on by default (with both off a seed draws what it drew before them),
# and again for the generators family and the write-by-helper mutation form.
PINNED_50 = {
    "": "39d5c1215fbc4386",
    "--writes": "2ab06349aac40aeb",
    "--no-numpy": "c8d53ef8848b8400",
    "--no-closures": "a601de7947c8b391",
    "--no-repeated-arguments": "c29faf20b5c7c798",
    "--no-views": "5d5157fe6470442e",
    "--no-aliased-containers": "c1b5a99fcaabc5b8",
    "--no-discarded-results": "36dfbcd512a153a9",
    "--no-captured-arguments": "3403458158924715",
    "--no-rebinding": "a3ae90cb3080706f",
    "--no-starred": "cfb377fbfded25f5",
    "--no-exceptions": "1bb2ba5a1ee0ba71",
    "--no-walrus": "c6c79bcb284f57ef",
    "--no-sets": "cb292bcbdda37bc5",
    "--no-effects": "c9cf201f387a1867",
    "--no-classes": "b266ff389009aa86",
    "--no-rules": "02369495dcc8f490",
    "--no-subclasses": "de2209cd6fdd6d93",
    "--no-generators": "710ad9e2bde1f26a",
}


@pytest.mark.slow
def test_fifty_programs_a_set_are_pinned():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    drawn = {flag: draw_texts(50, 1000 + k, **SETS[flag]) for k, flag in enumerate(SETS)}
    assert {flag: _digest(texts) for flag, texts in drawn.items()} == PINNED_50


if __name__ == "__main__":
    print({flag: _digest(texts) for flag, texts in _drawn_here().items()})
