"""The package's shape, read from the source: capability packages with few modules at the top, no
import cycle among benchcast modules (imports inside functions included), modules a reader can hold,
and the old module names still importing for one release."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import benchcast

SRC = Path(benchcast.__file__).resolve().parent


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the benchcast modules it imports anywhere in its source (functions, TYPE_CHECKING
    blocks), ``from package import module`` counted as the module."""
    mods = modules()
    graph = {name: set() for name in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_among_benchcast_modules_imports_in_functions_included():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle_through_an_import_inside_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


ARCHITECTURE = SRC.parents[1] / "docs" / "architecture.md"


def declared_layers() -> list[list[str]]:
    """The packages from the ground up, as docs/architecture.md's "Layers" block declares them."""
    text = ARCHITECTURE.read_text()
    block = text.split("<!-- layers: top to bottom -->", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return [[name.strip() for name in line.split(",")] for line in reversed(block.strip().splitlines())]


def package_of(module: str) -> str:
    """``benchcast.data.io`` -> ``data``; the root package (the facade of ``benchcast.select``) is ``benchcast``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "benchcast"


def against_layers(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """Every import of a package on its own line or a higher one (the root package may import any)."""
    floor = {name: k for k, line in enumerate(layers) for name in line}
    bad = []
    for module, targets in sorted(graph.items()):
        source = package_of(module)
        for target in sorted(targets):
            dest = package_of(target)
            if source in ("benchcast", dest) or dest == "benchcast":
                continue
            if floor[dest] >= floor[source]:
                bad.append(f"{module} imports {target} ({dest} is not below {source})")
    return bad


def test_every_package_is_declared_in_one_layer():
    declared = [name for line in declared_layers() for name in line]
    assert len(declared) == len(set(declared)), declared
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    packages |= {p.stem for p in SRC.glob("*.py") if p.name != "__init__.py"}
    assert set(declared) == packages


def test_no_import_against_the_declared_layers_imports_in_functions_included():
    assert against_layers(import_graph(), declared_layers()) == []


def test_the_layer_check_finds_an_upward_import_inside_a_function_and_one_between_neighbours():
    layers = [["errors"], ["data"], ["stats", "irt"], ["methods"]]
    graph = {
        "benchcast.data.io": {"benchcast.errors"},  # down: allowed
        "benchcast.data.item_level": {"benchcast.methods.state"},  # up (in a function, as the graph counts it)
        "benchcast.stats.mdad": {"benchcast.irt.fit"},  # sideways
        "benchcast": {"benchcast.methods"},  # the facade
    }
    assert against_layers(graph, layers) == [
        "benchcast.data.item_level imports benchcast.methods.state (methods is not below data)",
        "benchcast.stats.mdad imports benchcast.irt.fit (irt is not below stats)",
    ]


def test_at_most_six_modules_at_the_top_and_none_over_600_lines():
    top = sorted(p.name for p in SRC.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 6, top
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > 600}
    assert long == {}


@pytest.mark.parametrize("old", sorted(benchcast.RENAMED))
def test_a_renamed_module_imports_under_its_old_name_with_a_deprecation_warning(old):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(benchcast.RENAMED[old])
    assert any(issubclass(w.category, DeprecationWarning) and benchcast.RENAMED[old] in str(w.message) for w in caught)
    # the new module keeps its own spec, so its package data is still found under the new name
    assert module.__spec__.name == benchcast.RENAMED[old] and module.__spec__.origin.endswith(".py")


def test_importing_an_old_name_leaves_the_new_packages_data_readable():
    code = (
        "import warnings; warnings.simplefilter('ignore'); import benchcast.deploy; "
        "from benchcast.new_model.facts import load_facts; assert load_facts()['provenance'] is not None"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def repository_python_files() -> list[Path]:
    root = SRC.parents[1]
    folders = ("src", "workflow", "scripts", "tests", "docs", "resources")
    return sorted(p for folder in folders for p in (root / folder).rglob("*.py") if "site-packages" not in p.parts)


def test_every_name_imported_from_benchcast_anywhere_in_the_repository_exists():
    """Workflow scripts, tools and tests import from the library; a name a move left behind fails
    here, not in the middle of a run (``from benchcast.workflow.dag import plan`` did)."""
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for path in repository_python_files():
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("benchcast"):
                    module = importlib.import_module(node.module)
                    for alias in node.names:
                        if alias.name != "*" and not hasattr(module, alias.name):
                            try:
                                importlib.import_module(f"{node.module}.{alias.name}")
                            except ImportError:
                                missing.append(f"{path}: from {node.module} import {alias.name}")
    assert missing == []


@pytest.mark.parametrize(
    "module, old", sorted((m, old) for m, names in benchcast.RENAMED_NAMES.items() for old in names)
)
def test_a_renamed_name_still_works_with_a_deprecation_warning(module, old):
    mod = importlib.import_module(module)
    new = benchcast.RENAMED_NAMES[module][old]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(mod, old)
    assert value is getattr(mod, new)
    assert any(issubclass(w.category, DeprecationWarning) and f"{module}.{new}" in str(w.message) for w in caught)
    assert not hasattr(mod, "no_such_name_at_all")
