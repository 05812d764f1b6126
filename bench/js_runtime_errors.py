#!/usr/bin/env python3
"""Messages Node's V8 writes itself, asked of npm packages no rule was tuned on.

``TypeError: req.acceptsEncoding is not a function``, ``ReferenceError: compileTrust is not
defined``, ``The requested module './utils.js' does not provide an export named 'x'``: no
``throw`` in the workspace wrote them, and the names they hold are the program's. Built from
the JavaScript packages of ``doc_questions.py`` (express, commander, axios's ``lib``, koa,
body-parser, ws, send; rxjs's TypeScript ``src``), seeded, with tree-sitter (not the engine's
chunker), outside tests, examples and builds. A name counts when one file alone defines it (a
function declaration, a class, a class method, a function assigned to a property):

- ``not-defined``: ``ReferenceError: NAME is not defined``; gold = its file.
- ``not-a-function``: ``TypeError: obj.NAME is not a function``; gold = its file.
- ``cannot-read``: ``TypeError: Cannot read properties of undefined (reading 'NAME')``; gold =
  its file.
- ``class-new``: ``TypeError: Class constructor NAME cannot be invoked without 'new'``; gold =
  the class's file.
- ``missing-export``: ``SyntaxError: The requested module './m.js' does not provide an export
  named 'NAME'``, a module and a name another file defines; gold = the module's file, and
  ``home@2`` says how often it and the name's home are both in the first two.

Ranked at file level (MRR@10), ``depth`` deep, no time limit.

  python bench/js_runtime_errors.py --packages DIR [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import posixpath
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter as ts
import tree_sitter_javascript as tsjs
import tree_sitter_typescript as tsts

from common import CACHE_ROOT
from doc_questions import JS_PACKAGES as PACKAGES
from held_out import message_rows, message_table, write_report

KINDS = ("not-defined", "not-a-function", "cannot-read", "class-new", "missing-export")
_JS = ts.Language(tsjs.language())
_LANGS = {".js": _JS, ".cjs": _JS, ".mjs": _JS, ".ts": ts.Language(tsts.language_typescript())}
_SKIP = re.compile(r"(^|/)(test|tests|__tests__|example|examples|docs?|dist|build|node_modules)/")
_RECEIVERS = ("this", "app", "req", "res", "ctx", "client", "instance", "obj")


@dataclass
class Case:
    project: str
    kind: str
    query: str
    gold: list[str]
    home: list[str] = field(default_factory=list)  # missing-export: where the name lives


def _text(node: ts.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _defined(root: ts.Node) -> tuple[set[str], set[str], set[str]]:
    """Functions, classes and methods a file defines at its top level and in its classes."""
    funcs: set[str] = set()
    classes: set[str] = set()
    methods: set[str] = set()
    for node in root.named_children:
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        if node.type == "function_declaration":
            funcs.add(_text(node.child_by_field_name("name")))
        elif node.type == "class_declaration":
            classes.add(_text(node.child_by_field_name("name")))
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else ():
                if member.type == "method_definition":
                    methods.add(_text(member.child_by_field_name("name")))
        elif node.type == "expression_statement" and node.named_children:
            expr = node.named_children[0]
            right = expr.child_by_field_name("right")
            left = expr.child_by_field_name("left")
            prop = left.child_by_field_name("property") if left is not None else None
            functions = ("function_expression", "arrow_function", "function")
            if prop is not None and right is not None and right.type in functions:
                methods.add(_text(prop))
    good = re.compile(r"[A-Za-z_$][\w$]{3,}$")
    pick = lambda names: {n for n in names if good.match(n) and n != "constructor"}  # noqa: E731
    return pick(funcs), pick(classes), pick(methods)


def build_cases(root: Path, project: str, per_kind: int, rng: random.Random) -> list[Case]:
    where: dict[str, dict[str, set[str]]] = {"func": defaultdict(set), "class": defaultdict(set)}
    where["method"] = defaultdict(set)
    modules: list[str] = []
    for path in sorted(root.rglob("*")):
        lang = _LANGS.get(path.suffix)
        rel = path.relative_to(root).as_posix()
        if lang is None or not path.is_file() or rel.endswith(".d.ts") or ".min." in rel:
            continue
        if _SKIP.search(rel) or "test" in rel.lower():
            continue
        funcs, classes, methods = _defined(ts.Parser(lang).parse(path.read_bytes()).root_node)
        for kind, names in (("func", funcs), ("class", classes), ("method", methods)):
            for n in names:
                where[kind][n].add(rel)
        modules.append(rel)
    homes: dict[str, set[str]] = defaultdict(set)
    for table in where.values():
        for n, files in table.items():
            homes[n] |= files
    single = {k: sorted(n for n, f in t.items() if len(homes[n]) == 1) for k, t in where.items()}

    def sample(items: list[str], k: int) -> list[str]:
        items = list(items)
        rng.shuffle(items)
        return items[:k]

    cases: list[Case] = []
    for n in sample(single["func"] + single["class"], per_kind):
        query = f"ReferenceError: {n} is not defined"
        cases.append(Case(project, "not-defined", query, [*homes[n]]))
    for n in sample(single["func"] + single["method"], per_kind):
        recv = rng.choice(_RECEIVERS)
        query = f"TypeError: {recv}.{n} is not a function"
        cases.append(Case(project, "not-a-function", query, [*homes[n]]))
    for n in sample(single["method"], per_kind):
        query = f"TypeError: Cannot read properties of undefined (reading '{n}')"
        cases.append(Case(project, "cannot-read", query, [*homes[n]]))
    for n in sample(single["class"], per_kind):
        query = f"TypeError: Class constructor {n} cannot be invoked without 'new'"
        cases.append(Case(project, "class-new", query, [*homes[n]]))
    names = single["func"] + single["class"]
    for module in sample(modules, per_kind):
        others = [n for n in names if module not in homes[n]]
        if not others:
            continue
        n = rng.choice(others)
        spec = "./" + posixpath.basename(module).rsplit(".", 1)[0] + ".js"
        query = f"SyntaxError: The requested module '{spec}' does not provide an export named '{n}'"
        cases.append(Case(project, "missing-export", query, [module], sorted(homes[n])))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", type=Path, required=True, help="the npm packages, unpacked")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "js-runtime-errors-idx")
    ap.add_argument("--per-kind", type=int, default=6, help="cases per kind and package")
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    missing = [p for p in PACKAGES if not (args.packages / p).is_dir()]
    if missing:
        raise SystemExit(f"not unpacked in {args.packages}: {', '.join(missing)}")
    rng = random.Random(args.seed)
    cases = [c for p in PACKAGES for c in build_cases(args.packages / p, p, args.per_kind, rng)]
    rows = message_rows(args.packages, args.index_root, cases)
    print(message_table(rows, KINDS))
    write_report(rows, "js-runtime-errors", args.out)


if __name__ == "__main__":
    main()
