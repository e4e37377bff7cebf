"""The documentation's examples run and stay in step with what cpsgrad prints."""

import re
from pathlib import Path

from tests.cases import golden_functions

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_readme_example_runs_and_its_comments_are_true(tmp_path):
    block = _python_blocks(ROOT / "README.md")[0]
    module = tmp_path / "readme_example.py"
    module.write_text(block)
    namespace = {"__name__": "readme_example", "__file__": str(module)}
    exec(compile(block, str(module), "exec"), namespace)
    claims = re.findall(r"^(cpsgrad\.\w+\(f\)\(0\.7, 5\))\s+# (?:.*= )?(\(?[-\d.e, ]+\)?)$", block, flags=re.MULTILINE)
    assert len(claims) == 2
    for call, expected in claims:
        assert repr(eval(call, namespace)) == expected.strip()


def test_readme_numpy_example_runs_and_its_gradient_is_right(tmp_path):
    from cpsgrad.testing import check_grad

    source = "\n".join(_python_blocks(ROOT / "README.md")[:2])
    module = tmp_path / "readme_numpy_example.py"
    module.write_text(source)
    namespace = {"__name__": "readme_numpy_example", "__file__": str(module)}
    exec(compile(source, str(module), "exec"), namespace)
    args = [namespace[name] for name in ("Wxh", "Whh", "bh", "xs", "target")]
    for gradient, argument in zip((namespace["dWxh"], namespace["dWhh"], namespace["dbh"]), args, strict=False):
        assert gradient.shape == argument.shape
    assert not check_grad(namespace["rnn_loss"], *args, argnums=(0, 1, 2)).skipped


def test_design_doc_shows_the_program_cpsgrad_generates():
    import cpsgrad

    generated = cpsgrad.show(golden_functions.design_example)
    body = "\n".join(line for line in generated.splitlines() if not line.startswith("#"))
    documented = next(b for b in _python_blocks(ROOT / "docs" / "design.md") if b.startswith("def f__program"))
    assert body.replace("design_example", "f").strip() == documented.strip()


def test_testing_doc_examples_run(tmp_path):
    source = "\n".join(_python_blocks(ROOT / "docs" / "testing.md"))
    module = tmp_path / "testing_doc_example.py"
    module.write_text(source)
    namespace = {"__name__": "testing_doc_example", "__file__": str(module)}
    exec(compile(source, str(module), "exec"), namespace)
