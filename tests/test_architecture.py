"""The floor plan: the layers hold (read from every module's imports), and docs/architecture.md
names exactly the modules the package has, with the pipeline's stages where the table says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from support import ROOT

PACKAGE = ROOT / "server" / "code_evidence"
DOC = ROOT / "docs" / "architecture.md"
BASE = {"api", "config", "paths", "secrets", "filekinds", "git", "requestlog"}
# The command line's modules: parsing and dispatch, and what it prints.
CLI = {"cli", "cli_args", "cli_output"}
# Stages a reader of the pipeline expects to find in the table.
STAGES = {
    "listing files",
    "loading",
    "chunking",
    "index pass",
    "store",
    "lexical",
    "vectors",
    "embedding",
    "embedding cache",
    "query analysis",
    "recall",
    "fusion",
    "features",
    "rerank",
    "assembly",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, top_level_only: bool) -> set[str]:
    """The package's modules this one imports (package-relative dotted names). With
    ``top_level_only``, imports inside functions (lazy ones) are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = module_name(path)
    is_pkg = path.name == "__init__.py"
    package = own.split(".") if is_pkg else own.split(".")[:-1]
    if own == "":
        package = []
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            elif node.module and node.module.startswith("code_evidence"):
                target = node.module.removeprefix("code_evidence").lstrip(".")
            else:
                continue
            found.add(target)
            for alias in node.names:  # `from . import x` names modules
                found.add(f"{target}.{alias.name}" if target else alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("code_evidence."):
                    found.add(alias.name.removeprefix("code_evidence."))
    known = set(modules()) - {""}  # the package's own __init__ holds only the version
    return {m for m in found if m in known and m != own}


def layer(mod: str) -> str:
    head = mod.split(".")[0]
    if mod in BASE:
        return "base"
    if mod in CLI:
        return "cli"
    return head


# layer -> layers it may import (besides itself)
ALLOWED = {
    "base": {"base"},
    "models": {"base"},
    "index": {"base", "models"},
    "search": {"base", "models", "index"},
    "engine": {"base", "models", "index", "search"},
    "evaluation": {"base", "models", "index", "search", "engine"},
    "live": {"base", "models", "index", "search", "engine"},
    "lsp": {"base", "models", "index", "search", "engine", "live"},
    "mcp": {"base", "models", "index", "search", "engine", "live"},
    "cli": {"base", "engine", "evaluation", "lsp", "mcp", "search", "index", "models", "live"},
    "": {"base"},
}


def test_layers_hold() -> None:
    wrong = []
    for mod, path in modules().items():
        mine = layer(mod)
        for dep in imports_of(path, top_level_only=False):
            theirs = layer(dep)
            if theirs == mine:
                continue
            lazy_ok = mine == "cli" and dep not in imports_of(path, top_level_only=True)
            if theirs not in ALLOWED[mine] and not lazy_ok:
                wrong.append(f"{mod} ({mine}) imports {dep} ({theirs})")
    assert wrong == []


def test_nothing_imports_the_shells() -> None:
    offenders = []
    for mod, path in modules().items():
        for dep in imports_of(path, top_level_only=True):
            shell = dep.split(".")[0]
            if dep == "cli" or (shell in ("lsp", "mcp") and layer(mod) != shell):
                offenders.append(f"{mod} imports {dep}")
    assert offenders == []


def test_no_import_cycles() -> None:
    graph = {mod: imports_of(path, top_level_only=True) for mod, path in modules().items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(mod: str, stack: list[str]) -> None:
        state[mod] = 1
        for dep in sorted(graph[mod]):
            # A package's __init__ importing its own submodules is not a cycle of concern.
            if mod and dep.startswith(mod + "."):
                continue
            if state.get(dep) == 1:
                cycles.append([*stack[stack.index(dep) :], dep] if dep in stack else [mod, dep])
            elif state.get(dep) is None:
                visit(dep, [*stack, dep])
        state[mod] = 2

    for mod in sorted(graph):
        if mod not in state:
            visit(mod, [mod])
    assert cycles == []


def test_no_module_is_over_500_lines() -> None:
    long = {
        mod: n
        for mod, path in modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}


def documented_paths(text: str) -> set[str]:
    """Module paths the page names: in full (``search/fuse.py``), or relative to the folder
    inside that folder's paragraph (one that starts with the folder's name in bold)."""
    named: set[str] = set()
    for paragraph in text.split("\n\n"):
        folder = re.match(r"\*\*`(\w+)/`\*\*", paragraph.strip())
        for name in re.findall(r"`([\w/]+\.py)`", paragraph):
            if name.startswith(("bench/", "tests/", "training/", "server/")):
                continue  # another file of the repository, not a module of the package
            named.add(f"{folder.group(1)}/{name}" if folder else name)
    return named


def test_architecture_doc_names_every_module_and_only_real_ones() -> None:
    named = documented_paths(DOC.read_text(encoding="utf-8"))
    real = {
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" or p.parent.name == "chunk"
    }
    assert sorted(real - named) == [], "modules missing from docs/architecture.md"
    assert sorted(named - real) == [], "docs/architecture.md names modules that do not exist"


def test_stage_table_maps_each_stage_to_a_real_module() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("| stage | module |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| ([^|]+?) \| `([\w/]+\.py)` \|", table, re.M)
    stages = {stage: module for stage, module in rows}
    assert set(stages) >= STAGES
    for stage, module in stages.items():
        assert (PACKAGE / module).is_file(), f"{stage}: {module} does not exist"


@pytest.mark.parametrize("broken", ["missing", "phantom"])
def test_the_doc_check_fails_on_drift(broken: str, tmp_path: Path) -> None:
    """The check above is not vacuous: a doctored copy fails it."""
    text = DOC.read_text(encoding="utf-8")
    if broken == "missing":
        text = re.sub(r"`(search/)?fuse\.py`", "the fusion module", text)
    else:
        text += "\n`search/nowhere.py`\n"
    named = documented_paths(text)
    real = {
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" or p.parent.name == "chunk"
    }
    assert (real - named) or (named - real)
