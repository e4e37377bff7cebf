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
    "": "9a20833424a3e274",
    "--writes": "1ef2b4129781a49c",
    "--no-numpy": "21740659f4c36cef",
    "--no-closures": "51d4176e0bbf0c3c",
    "--no-repeated-arguments": "50f7cf4f3053ba71",
    "--no-views": "5d7bb6712aaa841e",
    "--no-aliased-containers": "3a98dc00a7183efe",
    "--no-discarded-results": "138ad00e517eaa17",
    "--no-captured-arguments": "c9f1968c4c7b0609",
    "--no-rebinding": "02567e6b4e389bde",
    "--no-starred": "e598de8e92bdb86c",
    "--no-exceptions": "76c27a8c1f3352a6",
    "--no-walrus": "49dfc083d3fdbadf",
    "--no-sets": "5e399427471ca964",
    "--no-effects": "c2e0ce0c29148f02",
    "--no-classes": "70a7dca6f2b1eba7",
    "--no-rules": "cb14dc2fd65b3799",
    "--no-subclasses": "2636eb28d9bcd150",
}


def test_the_draws_are_pinned():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    assert {flag: _digest(texts) for flag, texts in _drawn_here().items()} == PINNED



# The digests of the defaults' and --writes' programs before the rules and subclasses families:
# with both off, the draws are those (every draw of the two families is behind its switch).
BEFORE_THE_RULES = {"": "20581d9759753a05", "--writes": "0dd7fd3a313259ea"}


def test_the_rules_and_subclasses_off_draw_what_was_drawn_before_them():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    drawn = {
        flag: _digest(draw_texts(COUNT, SEEDS[flag], **SETS[flag], rules=False, subclasses=False))
        for flag in BEFORE_THE_RULES
    }
    assert drawn == BEFORE_THE_RULES


# 50 programs a set (seeds 1000, 1001, ...), recorded before programs.py was split into
# cpsgrad/testing/generator/ (the split left them byte-identical); re-recorded when the rules and
# subclasses families came, on by default (with both off a seed draws what it drew before them).
PINNED_50 = {
    "": "76d871b00f01b164",
    "--writes": "fe6b47e9defc946e",
    "--no-numpy": "a0c16aa7c2acbeca",
    "--no-closures": "826b42adb603672a",
    "--no-repeated-arguments": "518452e7bf63a0a5",
    "--no-views": "9aadc2770f060581",
    "--no-aliased-containers": "17e2278c8d7b569e",
    "--no-discarded-results": "645cea6051de5621",
    "--no-captured-arguments": "c9a4c036d2462adf",
    "--no-rebinding": "1d65ecbbf04c001d",
    "--no-starred": "07bac3e1c5953c44",
    "--no-exceptions": "7fcf284d13271feb",
    "--no-walrus": "b84e67ae90ad49b3",
    "--no-sets": "36f38c44d5f6e3d3",
    "--no-effects": "fadab69b1b2e806f",
    "--no-classes": "aab4ad7be9e08123",
    "--no-rules": "d61e3ca1ee7e10ec",
    "--no-subclasses": "5bf49a972f4228f9",
}


@pytest.mark.slow
def test_fifty_programs_a_set_are_pinned():
    if hypothesis.__version__ != PINNED_WITH:
        pytest.skip(f"digests pinned with hypothesis {PINNED_WITH}, this is {hypothesis.__version__}")
    drawn = {flag: draw_texts(50, 1000 + k, **SETS[flag]) for k, flag in enumerate(SETS)}
    assert {flag: _digest(texts) for flag, texts in drawn.items()} == PINNED_50


if __name__ == "__main__":
    print({flag: _digest(texts) for flag, texts in _drawn_here().items()})
