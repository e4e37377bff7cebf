"""The shape of the code base: no import cycles, and source files of a readable size.

An import cycle (at module level or in a function's lazy import) means two modules are one
concern split in the wrong place; the modules that generated code calls (`cpsgrad/runtime/`)
must not import the code that writes programs (`transforms/`) nor the rules (`cpsgrad/rules/`).
Imports under `if TYPE_CHECKING:` run only for type checkers and do not count.
Every import of a cpsgrad module, lazy ones included, must name a module or a name it binds: a
moved module leaves no import behind (the moves of issue 14 rewrote every import).
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = {"cpsgrad": ROOT / "cpsgrad", "cpsgrad.transforms": ROOT / "transforms", "cpsgrad.kernels": ROOT / "kernels"}
MAX_LINES = 500
# Files over MAX_LINES, each at most as long as it is: the list may only shrink. Issue 14 split the
# adjoint pass (transforms/adjoint/), normalize (transforms/normalize/), pipeline (showing.py), the
# gradient checker, the fuzzer and the program generator (cpsgrad/testing/generator/); none is left.
OVERSIZED: dict[str, int] = {}


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for base, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            parts = [part for part in path.relative_to(directory).with_suffix("").parts if part != "__init__"]
            if base == "cpsgrad" and parts and parts[0] in ("transforms", "kernels"):
                continue
            found[".".join([base, *parts])] = path
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:`."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return skipped


def _imports(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        skipped = _type_checking_only(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets = [owner(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                targets = [
                    owner(f"{base}.{alias.name}") if f"{base}.{alias.name}" in modules else owner(base)
                    for alias in node.names
                ]
            else:
                continue
            graph[name].update(target for target in targets if target and target != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# Import cycles allowed today (none): this list may only shrink.
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycles():
    assert [cycle for cycle in _cycles(_imports(_modules())) if cycle not in KNOWN_CYCLES] == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The one import of cpsgrad/rules/ the runtime makes: the call dispatcher asks the rule table
# whether a callee became a primitive (its version, `callee in TABLE`). The registry imports
# nothing of the runtime nor a template; handing the table in as the transformer is handed in
# (pipeline.py's `dispatch.install`) would remove it.
RUNTIME_READS_THE_TABLE = {"cpsgrad.runtime.dispatch": ["cpsgrad.rules.registry"]}


@pytest.mark.parametrize("written_by", ["cpsgrad.transforms", "cpsgrad.rules"])
def test_the_runtime_does_not_import_the_transforms_or_the_rules(written_by):
    """Generated code calls cpsgrad/runtime/; the transforms write that code and the rules are
    its templates (a rule's own helpers sit beside it), so neither may be imported from there."""
    graph = _imports(_modules())
    runtime = [name for name in graph if name == "cpsgrad.runtime" or name.startswith("cpsgrad.runtime.")]
    assert runtime, "cpsgrad/runtime/ not found"
    def of_theirs(target: str) -> bool:
        return target == written_by or target.startswith(f"{written_by}.")

    imported = {name: sorted(filter(of_theirs, graph[name])) for name in runtime}
    allowed = RUNTIME_READS_THE_TABLE if written_by == "cpsgrad.rules" else {}
    assert imported == {name: allowed.get(name, []) for name in runtime}


def test_the_import_check_sees_an_import_of_the_rules():
    modules = _modules()
    graph = _imports(modules)
    assert "cpsgrad.rules.registry" in graph["cpsgrad.rules.numpy.ufuncs"]


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (in `if`/`try` blocks too)."""
    names: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            pending.extend(node.body)
            pending.extend(getattr(node, "orelse", []))
            pending.extend(getattr(node, "finalbody", []))
            pending.extend(statement for handler in getattr(node, "handlers", []) for statement in handler.body)
    return names


def _stale_imports(modules: dict[str, pathlib.Path]) -> list[str]:
    """Imports of cpsgrad's own modules (at module level or lazy) that name no module and no name
    the module binds: what a moved module leaves behind where an import was not rewritten."""
    bound = {name: _top_level_names(ast.parse(path.read_text())) for name, path in modules.items()}
    stale = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names if alias.name.startswith("cpsgrad.")]
                stale += [f"{name}:{node.lineno}: import {target}" for target in wanted if target not in modules]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                if not (base == "cpsgrad" or base.startswith("cpsgrad.")):
                    continue
                if base not in modules:
                    stale.append(f"{name}:{node.lineno}: from {base} import ...")
                    continue
                for alias in node.names:
                    if alias.name != "*" and f"{base}.{alias.name}" not in modules and alias.name not in bound[base]:
                        stale.append(f"{name}:{node.lineno}: from {base} import {alias.name}")
    return stale


def test_every_import_of_cpsgrad_names_a_module_or_a_name_that_exists():
    assert _stale_imports(_modules()) == []


def test_the_stale_import_check_sees_an_import_of_a_moved_module(tmp_path):
    moved = tmp_path / "moved.py"
    moved.write_text(
        "def f():\n    from cpsgrad.transforms import aliasing\n    from cpsgrad.transforms.kinds import NUMBER\n"
    )
    modules = {**_modules(), "cpsgrad.moved": moved}
    assert _stale_imports(modules) == [
        "cpsgrad.moved:2: from cpsgrad.transforms import aliasing",
        "cpsgrad.moved:3: from cpsgrad.transforms.kinds import ...",
    ]


@pytest.mark.parametrize("directory", ["cpsgrad", "transforms", "kernels"])
def test_source_files_stay_readable(directory):
    too_long = {}
    for path in sorted((ROOT / directory).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > OVERSIZED.get(relative, MAX_LINES):
            too_long[relative] = lines
    assert too_long == {}


def test_the_oversized_list_only_names_files_still_oversized():
    """An entry for a file split below MAX_LINES (or gone) would let it grow back unnoticed."""
    lines = {
        relative: len((ROOT / relative).read_text().splitlines())
        for relative in OVERSIZED
        if (ROOT / relative).exists()
    }
    assert {relative: lines.get(relative) for relative in OVERSIZED if lines.get(relative, 0) <= MAX_LINES} == {}


def test_every_package_is_in_the_wheel():
    """pyproject.toml lists the packages explicitly (transforms/ and kernels/ install under
    cpsgrad.): a new package directory left out would be missing from a non-editable install."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for base, directory in PACKAGES.items():
        for init in directory.rglob("__init__.py"):
            parts = init.parent.relative_to(directory).parts
            if base == "cpsgrad" and parts and parts[0] in ("transforms", "kernels"):
                continue
            if "__pycache__" not in parts:
                found.add(".".join([base, *parts]))
    assert found - listed == set()


def test_every_device_array_operation_is_installed():
    """DeviceArray's methods run operations its sibling modules install when the package imports
    them (so the class imports none of them): each slot must be filled."""
    from cpsgrad.kernels.device_array.array import _ops

    assert [name for name in type(_ops).__slots__ if not hasattr(_ops, name)] == []


# docs/design.md, "Adding an nn op": an elementwise op is its public function, its rule and its
# formulas (with its catalog entry), and nothing else of cpsgrad/ or kernels/ names it. nn.silu
# was added by that recipe; were it named elsewhere, the recipe would have grown a step.
RECIPE_FILES = ["cpsgrad/nn.py", "cpsgrad/rules/nn.py", "kernels/formulas/elementwise.py"]


def test_an_nn_op_added_by_the_recipe_is_named_in_its_three_files_only():
    naming = [
        path.relative_to(ROOT).as_posix()
        for directory in ("cpsgrad", "kernels")
        for path in sorted((ROOT / directory).rglob("*.py"))
        if re.search(r"\bsilu\b", path.read_text())
    ]
    assert sorted(naming) == sorted(RECIPE_FILES)


# "Adding an nn op" for an op that is not elementwise: its public function, its rule (with its
# backward helper beside it) and one module of kernels/standalone/ holding its formulas, its CPU
# loops and its CUDA kernels, which the table and the PTX check find by the module's name.
# nn.ctc_loss was added so; were it named elsewhere, that recipe would have grown a step.
STANDALONE_RECIPE_FILES = ["cpsgrad/nn.py", "cpsgrad/rules/nn.py", "kernels/standalone/ctc_loss.py"]


def test_an_nn_op_with_kernels_of_its_own_is_named_in_its_three_files_only():
    naming = [
        path.relative_to(ROOT).as_posix()
        for directory in ("cpsgrad", "kernels", "transforms")
        for path in sorted((ROOT / directory).rglob("*.py"))
        if re.search(r"\bctc", path.read_text(), re.IGNORECASE)
    ]
    assert sorted(naming) == sorted(STANDALONE_RECIPE_FILES)

