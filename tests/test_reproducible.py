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
    "": "20581d9759753a05",
    "--writes": "0dd7fd3a313259ea",
    "--no-numpy": "8ba684b84fc5f4d4",
    "--no-closures": "9867e65c3a18b114",
    "--no-repeated-arguments": "766bd898b4223d20",
    "--no-views": "323c8ea351a87b45",
    "--no-aliased-containers": "899f100d97a1a274",
    "--no-discarded-results": "49a08827c2c36aac",
    "--no-captured-arguments": "eb16720c12fef54e",
    "--no-rebinding": "32330235f257c7e3",
    "--no-starred": "3b463467f47f9c1a",
    "--no-exceptions": "2b5f64a27a67ee01",
    "--no-walrus": "b67c9df5e745dd27",
    "--no-sets": "1b5d27c53f4dff61",
    "--no-effects": "867ae140d58ae14c",
    "--no-classes": "5a89aa1c557ed91c",
}


def test_the_draws_are_pinned():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    assert {flag: _digest(texts) for flag, texts in _drawn_here().items()} == PINNED



# 50 programs a set (seeds 1000, 1001, ...), recorded before programs.py was split into
# cpsgrad/testing/generator/ (the split left them byte-identical).
PINNED_50 = {
    "": "056de6ab6c892a8f",
    "--writes": "5765fa03c4012cdc",
    "--no-numpy": "87c7bf2a54439571",
    "--no-closures": "6aa33d36a08fef0b",
    "--no-repeated-arguments": "f98c1f68b7a8c489",
    "--no-views": "865441c96a39c02c",
    "--no-aliased-containers": "797293c853778e19",
    "--no-discarded-results": "5d20687290a9c40a",
    "--no-captured-arguments": "b8204f935e113eb5",
    "--no-rebinding": "e73ea9cd2e2c697d",
    "--no-starred": "5de4cf06e445909f",
    "--no-exceptions": "70f571c3271f7c6f",
    "--no-walrus": "bb377f3696428163",
    "--no-sets": "283d2d3b309bc80e",
    "--no-effects": "bb25479b9f08e0c5",
    "--no-classes": "30437b2fa8c5cb79",
}


@pytest.mark.slow
def test_fifty_programs_a_set_are_pinned():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    drawn = {flag: draw_texts(50, 1000 + k, **SETS[flag]) for k, flag in enumerate(SETS)}
    assert {flag: _digest(texts) for flag, texts in drawn.items()} == PINNED_50


if __name__ == "__main__":
    print({flag: _digest(texts) for flag, texts in _drawn_here().items()})
