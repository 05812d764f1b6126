#!/usr/bin/env python3
"""JavaScript, TypeScript, Go and Rust asked the shared docstring way, of packages no rule was
tuned on.

The dev set's cases in these languages are commit questions on one project each; nothing held
out asks such a code base what a function does. This set does, the way the shared docstring
sets ask Python (``shared/bench/README.md``, "Docstring cases"): a doc comment's first sentence
is the question, the comment is blanked in a copy of the package (its characters turned to
spaces, so line numbers hold; every identical copy of it too, such as a bundle's), and gold is
the definition it documents, from its first line to its last.

The definitions are found with tree-sitter here, not with the engine's chunker:
- JavaScript/TypeScript, under a ``/** ... */`` block directly above or one blank line above: a
  function declaration, a class, a method (of a class or an object literal), a ``const f = () =>
  …``, a function assigned to a property (``res.send = function``, ``Reply.prototype.x =
  function``, ``exports.f = …``);
- Go, under ``//`` lines directly above: an exported function or method; the name that Go's
  convention puts first (``Execute uses the args …``) is left out of the question, which would
  otherwise be a lookup by name;
- Rust, under ``///`` lines directly above (attributes between allowed): a ``pub fn``, at the top
  level or in an ``impl`` block.
Kept where the first sentence (up to a full stop and a space, a blank line, or an ``@tag`` or
``# Section`` line; ``{@link X}`` read as ``X``) has six words or more and occurs in no other
doc comment, and the body holds three statements or more (a class: three members); outside
tests, examples, docs and ``dist``/``build`` copies; a seeded sample of up to
``--per-package`` a package.

Packages, chosen before any was measured, unpacked into one folder as ``NAME-VERSION``:
- npm tarballs (``npm pack NAME@VERSION``): express 4.21.2, commander 12.1.0, axios 1.7.9 (its
  ``dist`` bundles stay in the workspace, as a user has them), koa 2.15.3, body-parser 1.20.3,
  ws 8.18.0, send 0.19.1 (JavaScript) and rxjs 7.8.1 (TypeScript sources beside their builds);
- Debian's source packages of Go and Rust libraries (``apt-get download PKG``, ``dpkg-deb -x``):
  the folder under ``usr/share/gocode/src/github.com/`` of golang-github-go-chi-chi-dev 5.0.7,
  -gorilla-mux-dev 1.8.0, -sirupsen-logrus-dev 1.9.0, -spf13-cobra-dev 1.6.1, -spf13-pflag-dev
  1.0.6 (as ``chi-5.0.7`` …), and the crate under ``usr/share/cargo/registry/`` of
  librust-anyhow-dev 1.0.69, -regex-dev 1.7.1, -semver-dev 1.0.14, -serde-json-dev 1.0.87,
  -url-dev 2.3.1.

Reported per package: MRR@10 at file level; chunk@10 as the shared scorer counts it (a result
among the first ten overlaps the gold lines, which a window of 200 lines around the definition
does too); pointed@10 and pointed@1 (a result among the first ten, or the first, overlaps them
and is at most twice the definition's length plus ten lines: it points at the definition);
refused (flagged insufficient); ``depth`` deep, no time limit.

  python bench/doc_questions.py --packages DIR [--work DIR] [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import tree_sitter as ts
import tree_sitter_go as tsgo
import tree_sitter_javascript as tsjs
import tree_sitter_rust as tsrust
import tree_sitter_typescript as tsts

from common import CACHE_ROOT
from held_out import answers, write_report

# The npm packages (js_runtime_errors.py asks the same ones), then Go's and Rust's.
JS_PACKAGES = (
    "express-4.21.2",
    "commander-12.1.0",
    "axios-1.7.9",
    "koa-2.15.3",
    "body-parser-1.20.3",
    "ws-8.18.0",
    "send-0.19.1",
    "rxjs-7.8.1",
)
PACKAGES = (
    *JS_PACKAGES,
    "chi-5.0.7",
    "mux-1.8.0",
    "logrus-1.9.0",
    "cobra-1.6.1",
    "pflag-1.0.6",
    "anyhow-1.0.69",
    "regex-1.7.1",
    "semver-1.0.14",
    "serde_json-1.0.87",
    "url-2.3.1",
)
_JS = ts.Language(tsjs.language())
_LANGS = {
    ".js": _JS,
    ".cjs": _JS,
    ".mjs": _JS,
    ".ts": ts.Language(tsts.language_typescript()),
    ".go": ts.Language(tsgo.language()),
    ".rs": ts.Language(tsrust.language()),
}
_SKIP_DIRS = re.compile(
    r"(^|/)(test|tests|__tests__|testdata|example|examples|benches|docs?|dist|build|"
    r"node_modules|_examples)/"
)
_FUNCS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_DEFS = frozenset(
    {"function_declaration", "generator_function_declaration", "class_declaration",
     "abstract_class_declaration", "method_definition"}
)  # fmt: skip
_LINK = re.compile(r"\{@link(?:code|plain)?\s+([^}|\s]+)[^}]*\}")
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
_STATEMENT = re.compile(r"(statement|declaration)$")


@dataclass
class Case:
    project: str
    query: str
    path: str
    start: int  # 1-based, inclusive: the definition's lines
    end: int


@dataclass
class _Doc:
    path: str
    block: str  # the comment's text, as in the file: blanked wherever it occurs
    sentence: str
    start: int
    end: int
    statements: int
    comment: tuple[int, int]  # 1-based lines of the comment itself


def _definition(node: ts.Node) -> ts.Node | None:
    """The JavaScript definition ``node`` is, or None: the node whose body counts."""
    if node.type == "export_statement":
        inner = node.child_by_field_name("declaration")
        return _definition(inner) if inner is not None else None
    if node.type in _DEFS:
        return node
    if node.type in ("lexical_declaration", "variable_declaration"):
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        value = decls[0].child_by_field_name("value") if len(decls) == 1 else None
        return value if value is not None and value.type in _FUNCS else None
    if node.type == "expression_statement" and node.named_children:
        expr = node.named_children[0]
        if expr.type == "assignment_expression":
            value = expr.child_by_field_name("right")
            while value is not None and value.type == "assignment_expression":
                value = value.child_by_field_name("right")
            if value is not None and value.type in _FUNCS | {"class"}:
                return value
    if node.type == "pair":
        value = node.child_by_field_name("value")
        return value if value is not None and value.type in _FUNCS else None
    return None


def _statements(defn: ts.Node) -> int:
    body = defn.child_by_field_name("body")
    if body is None:
        return 0
    if body.type == "class_body":
        return len(body.named_children)
    if (
        body.type == "block"
        and body.named_children
        and body.named_children[0].type == ("statement_list")
    ):  # Go
        body = body.named_children[0]
    if body.type == "block":  # Go's statements and Rust's, comments aside
        return sum(1 for c in body.named_children if "comment" not in c.type)
    return sum(1 for c in body.named_children if _STATEMENT.search(c.type))


def first_sentence(lines: list[str]) -> str:
    """The first sentence of a comment's lines (markers stripped): to a full stop, a blank
    line, or an ``@tag`` or ``# Section`` line."""
    kept: list[str] = []
    for raw in lines:
        line = raw.strip()
        if line.startswith(("@", "# ")):
            break
        if not line:
            if kept:
                break
            continue
        kept.append(line)
    text = _LINK.sub(r"\1", " ".join(kept))
    m = _SENTENCE_END.search(text)
    return (text[: m.start() + 1] if m else text).strip()


def jsdoc_sentence(block: str) -> str:
    inner = block.removeprefix("/**").removesuffix("*/").splitlines()
    return first_sentence([line.strip().lstrip("*") for line in inner])


def _text(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text else ""


def _js_walk(nodes: list[ts.Node], path: str, out: list[_Doc]) -> None:
    for i, node in enumerate(nodes):
        if node.type in ("class_declaration", "abstract_class_declaration", "export_statement"):
            inner = node
            if node.type == "export_statement":
                inner = node.child_by_field_name("declaration")
            body = inner.child_by_field_name("body") if inner is not None else None
            if body is not None and body.type == "class_body":
                _js_walk(list(body.named_children), path, out)
        if node.type == "expression_statement" or node.type == "lexical_declaration":
            for obj in node.children:  # module.exports = { ... }: its methods
                for sub in (obj, *obj.named_children):
                    value = sub.child_by_field_name("right") or sub.child_by_field_name("value")
                    if value is not None and value.type == "object":
                        _js_walk(list(value.named_children), path, out)
        if node.type != "comment" or i + 1 >= len(nodes):
            continue
        text = _text(node)
        if not text.startswith("/**") or text[3:4] not in (" ", "\n", "\t"):
            continue
        target = nodes[i + 1]
        if target.start_point[0] - node.end_point[0] > 2:
            continue
        defn = _definition(target)
        if defn is not None:
            rows = (target.start_point[0] + 1, target.end_point[0] + 1)
            comment = (node.start_point[0] + 1, _last_row(node) + 1)
            sentence = jsdoc_sentence(text)
            out.append(_Doc(path, text, sentence, *rows, _statements(defn), comment))


def _last_row(node: ts.Node) -> int:
    """The last row ``node`` covers (Rust's line comments end at column 0 of the next row)."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def _line_group(nodes: list[ts.Node], i: int, prefix: str, skip: frozenset[str]) -> list[ts.Node]:
    """The comment lines starting with ``prefix`` directly above ``nodes[i]`` (nodes of the
    types in ``skip``, Rust's attributes, may stand between)."""
    row = nodes[i].start_point[0]
    j = i - 1
    while j >= 0 and nodes[j].type in skip and _last_row(nodes[j]) == row - 1:
        row = nodes[j].start_point[0]
        j -= 1
    group: list[ts.Node] = []
    while j >= 0 and nodes[j].type in ("comment", "line_comment"):
        text = _text(nodes[j])
        if _last_row(nodes[j]) != row - 1 or not text.startswith(prefix):
            break
        if prefix == "///" and text.startswith("////"):
            break
        group.insert(0, nodes[j])
        row = nodes[j].start_point[0]
        j -= 1
    return group


def _lines_doc(path: str, group: list[ts.Node], node: ts.Node, prefix: str, name: str) -> _Doc:
    lines = [_text(c)[len(prefix) :].rstrip("\n") for c in group]
    sentence = first_sentence(lines)
    words = sentence.split()
    if words and words[0] == name:  # Go: "Execute uses the args ..."
        sentence = " ".join(words[1:])
    block = "\n".join(_text(c).rstrip("\n") for c in group)
    rows = (node.start_point[0] + 1, node.end_point[0] + 1)
    comment = (group[0].start_point[0] + 1, _last_row(group[-1]) + 1)
    return _Doc(path, block, sentence, *rows, _statements(node), comment)


def _go_walk(nodes: list[ts.Node], path: str, out: list[_Doc]) -> None:
    for i, node in enumerate(nodes):
        if node.type not in ("function_declaration", "method_declaration"):
            continue
        name = _text(node.child_by_field_name("name"))
        group = _line_group(nodes, i, "//", frozenset())
        if group and name[:1].isupper():
            out.append(_lines_doc(path, group, node, "//", name))


_RUST_SKIP = frozenset({"attribute_item"})


def _rust_walk(nodes: list[ts.Node], path: str, out: list[_Doc]) -> None:
    for i, node in enumerate(nodes):
        if node.type == "impl_item":
            body = node.child_by_field_name("body")
            if body is not None:
                _rust_walk(list(body.named_children), path, out)
            continue
        if node.type != "function_item":
            continue
        if not any(c.type == "visibility_modifier" for c in node.named_children):
            continue
        group = _line_group(nodes, i, "///", _RUST_SKIP)
        if group:
            name = _text(node.child_by_field_name("name"))
            out.append(_lines_doc(path, group, node, "///", name))


_WALKS = {".go": _go_walk, ".rs": _rust_walk}


def read_docs(root: Path) -> tuple[list[_Doc], dict[str, int]]:
    """Every qualifying doc comment of the package's sources, and how often each first
    sentence occurs among all the package's doc comments (copies in ``dist`` included)."""
    docs: list[_Doc] = []
    seen: dict[str, set[str]] = defaultdict(set)  # sentence -> distinct blocks saying it
    for path in sorted(root.rglob("*")):
        lang = _LANGS.get(path.suffix)
        rel = path.relative_to(root).as_posix()
        if lang is None or not path.is_file() or rel.endswith(".d.ts") or ".min." in rel:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        tree = ts.Parser(lang).parse(data)
        found: list[_Doc] = []
        _WALKS.get(path.suffix, _js_walk)(list(tree.root_node.named_children), rel, found)
        for text in re.findall(rb"/\*\*[\s\S]*?\*/", data):
            block = text.decode("utf-8", "replace")
            seen[jsdoc_sentence(block)].add(re.sub(r"\s+", " ", block))
        for doc in found:
            seen[doc.sentence].add(re.sub(r"\s+", " ", doc.block))
        low = rel.lower()
        if not _SKIP_DIRS.search(rel) and "test" not in low:
            docs.extend(found)
    counts = {s: len(blocks) for s, blocks in seen.items()}
    return docs, counts


def build_cases(root: Path, project: str, per_package: int, rng: random.Random) -> list[_Doc]:
    docs, counts = read_docs(root)
    kept = [
        d
        for d in docs
        if d.statements >= 3 and len(d.sentence.split()) >= 6 and counts.get(d.sentence) == 1
    ]
    rng.shuffle(kept)
    return sorted(kept[:per_package], key=lambda d: (d.path, d.start))


def strip_copy(src: Path, dest: Path, docs: list[_Doc]) -> None:
    """``src`` copied to ``dest`` with every question's doc comment blanked where it stands,
    and a ``/** */`` block saying the same first sentence wherever else it occurs (a bundle's
    copy)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, symlinks=False)
    questions = {d.sentence for d in docs}
    lines_of: dict[str, set[int]] = defaultdict(set)
    for d in docs:
        lines_of[d.path].update(range(d.comment[0], d.comment[1] + 1))

    def blank(m: re.Match[str]) -> str:
        block = m.group(0)
        return re.sub(r"[^\n]", " ", block) if jsdoc_sentence(block) in questions else block

    for path in dest.rglob("*"):
        if path.suffix not in _LANGS or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        own = lines_of.get(path.relative_to(dest).as_posix(), set())
        lines = text.split("\n")
        for n in own:
            lines[n - 1] = " " * len(lines[n - 1])
        new = re.sub(r"/\*\*[\s\S]*?\*/", blank, "\n".join(lines))
        if new != text:
            path.write_text(new, encoding="utf-8", errors="surrogateescape")


def ask(work: Path, index_root: Path, cases: list[Case]) -> list[dict]:
    rows: list[dict] = []
    for case, res in answers(work, index_root, cases):
        files = list(dict.fromkeys(r.path for r in res.results))
        rank = next((i + 1 for i, f in enumerate(files[:10]) if f == case.path), None)
        hits = [
            r.path == case.path and r.start <= case.end and r.end >= case.start
            for r in res.results[:10]
        ]
        span = case.end - case.start + 1
        pointed = [
            hit and r.end - r.start + 1 <= 2 * span + 10
            for hit, r in zip(hits, res.results[:10], strict=False)
        ]
        rows.append(
            {
                **asdict(case),
                "rank": rank,
                "chunk@10": any(hits),
                "pointed@1": bool(pointed) and pointed[0],
                "pointed@10": any(pointed),
                "top": [f"{r.path}:{r.start}-{r.end} {r.symbol}" for r in res.results[:10]],
                "insufficient": res.insufficient,
                "confidence": res.confidence,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| package | n | MRR@10 | chunk@10 | pointed@10 | pointed@1 | refused |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for project in (*PACKAGES, "all"):
        group = [r for r in rows if project in ("all", r["project"])]
        if not group:
            continue
        n = len(group)
        mrr = sum(1 / r["rank"] for r in group if r["rank"]) / n
        chunk = sum(r["chunk@10"] for r in group) / n
        pointed = sum(r["pointed@10"] for r in group) / n
        first = sum(r["pointed@1"] for r in group) / n
        refused = sum(r["insufficient"] for r in group)
        lines.append(
            f"| {project} | {n} | {mrr:.3f} | {chunk:.3f} | {pointed:.3f} | {first:.3f} "
            f"| {refused} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", type=Path, required=True, help="the packages, unpacked")
    ap.add_argument("--work", type=Path, default=CACHE_ROOT / "jsdoc-ws")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "jsdoc-idx")
    ap.add_argument("--package", action="append", help="only these packages (repeatable)")
    ap.add_argument("--per-package", type=int, default=40)
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    unknown = sorted(set(args.package or ()) - set(PACKAGES))
    if unknown:
        raise SystemExit(f"unknown packages: {', '.join(unknown)}")
    missing = [p for p in PACKAGES if not (args.packages / p).is_dir()]
    if missing:
        raise SystemExit(f"not unpacked in {args.packages}: {', '.join(missing)}")
    rng = random.Random(args.seed)
    cases: list[Case] = []
    for project in PACKAGES:
        found = build_cases(args.packages / project, project, args.per_package, rng)
        if args.package and project not in args.package:
            continue  # drawn all the same, so a package's cases do not depend on the others
        strip_copy(args.packages / project, args.work / project, found)
        cases.extend(Case(project, d.sentence, d.path, d.start, d.end) for d in found)
    rows = ask(args.work, args.index_root, cases)
    print(table(rows))
    write_report(rows, "doc-questions", args.out)


if __name__ == "__main__":
    main()
