#!/usr/bin/env python3
"""Messages the Python interpreter writes itself, asked of packages no rule was tuned on.

``AttributeError: 'Request' object has no attribute 'is_xhr'``, ``TypeError: f() got an
unexpected keyword argument 'k'``, ``ImportError: cannot import name 'x' from 'pkg.mod'``: no
``raise`` in the workspace wrote them, and the names they quote are the program's. The dev
message groups hold few of them (14 of the frozen 179), so this set is built from the source
of six held-out sdists (arrow 1.4.0, jinja2 3.1.6, marshmallow 4.4.0, requests 2.34.2, rich
15.0.0, werkzeug 3.1.9), seeded, by Python's own ``ast`` (not the engine's reading), outside
tests, docs and examples:

- ``no-attribute``: a public class and a public method name of another class it lacks; gold =
  the class's file.
- ``unexpected-keyword``: a public function or method (``Class.method`` as Python 3.10+ prints
  it) without ``**kwargs`` and a parameter name of the package it lacks; gold = its file.
- ``missing-argument``: the same, its last required positional parameter; gold = its file.
- ``module-name``: a public module and a top-level name of another module it lacks, as
  ``ImportError: cannot import name 'x' from 'pkg.mod' (/…/site-packages/pkg/mod.py)`` or
  ``AttributeError: module 'pkg.mod' has no attribute 'x'``; gold = the module's file. Where
  the name does live is evidence too (the user imported it from the wrong place): ``home@2``
  says how often the module and that file are both in the first two.

Ranked at file level (MRR@10), ``depth`` deep, no time limit.

  # the sdists unpacked into one folder (pip download --no-deps --no-binary :all: rich==15.0.0)
  python bench/runtime_errors.py --sdists DIR [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import ast
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from common import CACHE_ROOT
from held_out import message_rows, message_table, write_report

PACKAGES = (
    "arrow-1.4.0",
    "jinja2-3.1.6",
    "marshmallow-4.4.0",
    "requests-2.34.2",
    "rich-15.0.0",
    "werkzeug-3.1.9",
)
KINDS = ("no-attribute", "unexpected-keyword", "missing-argument", "module-name")


@dataclass
class Case:
    project: str
    kind: str
    query: str
    gold: list[str]
    home: list[str] = field(default_factory=list)  # module-name: where the name does live


@dataclass
class _Source:
    """What one package defines, read with ``ast``."""

    classes: list[tuple[str, str, set[str]]] = field(default_factory=list)
    funcs: list[tuple[str, str, ast.FunctionDef]] = field(default_factory=list)
    modules: list[tuple[str, str, set[str]]] = field(default_factory=list)
    params: set[str] = field(default_factory=set)
    defined_in: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))


def _excluded(rel: str) -> bool:
    low = rel.lower()
    return "test" in low or low.startswith(("docs/", "doc/")) or "example" in low


def _module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    if parts[0] == "src":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def read_source(root: Path) -> _Source:
    src = _Source()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if _excluded(rel):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
                src.defined_in[node.name].add(rel)
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                methods = {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
                src.classes.append((node.name, rel, methods))
                for m in node.body:
                    public = isinstance(m, ast.FunctionDef) and not m.name.startswith("_")
                    if public and len(m.args.args) >= 2:
                        src.funcs.append((f"{node.name}.{m.name}", rel, m))
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                src.funcs.append((node.name, rel, node))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                args = node.args.args + node.args.kwonlyargs
                src.params.update(a.arg for a in args if a.arg not in ("self", "cls"))
        module = _module_name(rel)
        if module and not any(p.startswith("_") for p in module.split(".")):
            src.modules.append((module, rel, names))
    return src


def build_cases(root: Path, project: str, per_kind: int, rng: random.Random) -> list[Case]:
    src = read_source(root)
    members = sorted({m for _, _, ms in src.classes for m in ms if not m.startswith("_")})
    top_names = sorted({n for _, _, ns in src.modules for n in ns if not n.startswith("_")})
    params = sorted(src.params)

    def sample(items: list, k: int) -> list:
        items = list(items)
        rng.shuffle(items)
        return items[:k]

    cases: list[Case] = []
    for name, rel, methods in sample(src.classes, per_kind):
        attr = rng.choice([m for m in members if m not in methods])
        query = f"AttributeError: '{name}' object has no attribute '{attr}'"
        cases.append(Case(project, "no-attribute", query, [rel]))
    for name, rel, fn in sample(src.funcs, per_kind):
        if fn.args.kwarg:
            continue  # takes any keyword
        own = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        key = rng.choice([p for p in params if p not in own])
        query = f"TypeError: {name}() got an unexpected keyword argument '{key}'"
        cases.append(Case(project, "unexpected-keyword", query, [rel]))
    for name, rel, fn in sample(src.funcs, per_kind):
        args = [a.arg for a in fn.args.args if a.arg not in ("self", "cls")]
        required = args[: len(args) - len(fn.args.defaults)]
        if required:
            query = f"TypeError: {name}() missing 1 required positional argument: '{required[-1]}'"
            cases.append(Case(project, "missing-argument", query, [rel]))
    for module, rel, names in sample(src.modules, per_kind):
        name = rng.choice([n for n in top_names if n not in names])
        if rng.random() < 0.5:
            site = f"/home/dev/app/.venv/lib/python3.12/site-packages/{rel.removeprefix('src/')}"
            query = f"ImportError: cannot import name '{name}' from '{module}' ({site})"
        else:
            query = f"AttributeError: module '{module}' has no attribute '{name}'"
        home = sorted(src.defined_in[name])
        cases.append(Case(project, "module-name", query, [rel], home))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sdists", type=Path, required=True, help="the six sdists, unpacked")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "runtime-errors-idx")
    ap.add_argument("--per-kind", type=int, default=8, help="cases per kind and package")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    missing = [p for p in PACKAGES if not (args.sdists / p).is_dir()]
    if missing:
        raise SystemExit(f"not unpacked in {args.sdists}: {', '.join(missing)}")
    rng = random.Random(args.seed)
    cases = [c for p in PACKAGES for c in build_cases(args.sdists / p, p, args.per_kind, rng)]
    rows = message_rows(args.sdists, args.index_root, cases)
    print(message_table(rows, KINDS))
    write_report(rows, "runtime-errors", args.out)


if __name__ == "__main__":
    main()
