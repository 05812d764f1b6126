"""Doc comments and the definitions they document, found with tree-sitter (not with the
engine's chunker), for the held-out doc-comment questions of ``doc_questions.py``.

- JavaScript/TypeScript, under a ``/** ... */`` block directly above or one blank line above: a
  function declaration, a class, a method (of a class or an object literal), a ``const f = () =>
  …``, a function assigned to a property (``res.send = function``, ``Reply.prototype.x =
  function``, ``exports.f = …``);
- Java and PHP, under a ``/** ... */`` block directly above or one blank line above: a method, a
  constructor, a function, a class, interface, enum or trait, at any depth (Java's annotations
  and PHP's attributes are part of the definition); the block's HTML (``<p>``, ``<code>``,
  entities) and inline tags (``{@code x}``, ``{@link X}``) are read as their text;
- Go, under ``//`` lines directly above: an exported function or method; the name that Go's
  convention puts first (``Execute uses the args …``) is left out of the question, which would
  otherwise be a lookup by name;
- Rust, under ``///`` lines directly above (attributes between allowed): a ``pub fn``, at the top
  level or in an ``impl`` block;
- Ruby, under ``#`` lines directly above: a method (``def m``, ``def self.m``), at any depth.

A doc's sentence is its first: up to a full stop and a space, a blank line, or an ``@tag`` or
``# Section`` line.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import tree_sitter as ts
import tree_sitter_c_sharp as tscs
import tree_sitter_go as tsgo
import tree_sitter_java as tsjava
import tree_sitter_javascript as tsjs
import tree_sitter_php as tsphp
import tree_sitter_ruby as tsruby
import tree_sitter_rust as tsrust
import tree_sitter_typescript as tsts

_JS = ts.Language(tsjs.language())
LANGS = {
    ".js": _JS,
    ".cjs": _JS,
    ".mjs": _JS,
    ".ts": ts.Language(tsts.language_typescript()),
    ".go": ts.Language(tsgo.language()),
    ".rs": ts.Language(tsrust.language()),
    ".java": ts.Language(tsjava.language()),
    ".php": ts.Language(tsphp.language_php()),
    ".cs": ts.Language(tscs.language()),
    ".rb": ts.Language(tsruby.language()),
}
# Folders whose files ask no question (their doc comments still count as copies).
SKIP_DIRS = re.compile(
    r"(^|/)(test|tests|__tests__|testdata|example|examples|benches|docs?|dist|build|"
    r"node_modules|_examples)/"
)
_FUNCS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_DEFS = frozenset(
    {"function_declaration", "generator_function_declaration", "class_declaration",
     "abstract_class_declaration", "method_definition"}
)  # fmt: skip
# Java's and PHP's definitions a ``/**`` block documents.
_BLOCK_DEFS = frozenset(
    {"method_declaration", "constructor_declaration", "class_declaration",
     "interface_declaration", "enum_declaration", "record_declaration", "function_definition",
     "trait_declaration"}
)  # fmt: skip
_COMMENTS = frozenset({"comment", "block_comment"})
# C#'s documented definitions (``///`` lines above them; attributes are inside the node).
_CS_DEFS = frozenset(
    {"method_declaration", "constructor_declaration", "class_declaration",
     "interface_declaration", "struct_declaration", "record_declaration"}
)  # fmt: skip
_XML_REF = re.compile(r"<(?:see|paramref|typeparamref)\s+\w+=\"([^\"]+)\"\s*/>")
_RUBY_DEFS = frozenset({"method", "singleton_method"})
_LINK = re.compile(r"\{@link(?:code|plain)?\s+([^}|\s]+)[^}]*\}")
_INLINE_TAG = re.compile(r"\{@(?:code|literal|link|linkplain|value)\s+([^}]*)\}")
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_SENTENCE_END = re.compile(r"\.(?:\s|$)")
_STATEMENT = re.compile(r"(statement|declaration)$")


@dataclass
class Doc:
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
    if body.type in ("block", "body_statement"):  # Go's, Rust's, Java's, Ruby's; comments aside
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


def javadoc_sentence(block: str) -> str:
    """A Java or PHP ``/**`` block's first sentence, its HTML and inline tags read as text."""
    inner = block.removeprefix("/**").removesuffix("*/").splitlines()
    lines = [_INLINE_TAG.sub(r"\1", line.strip().lstrip("*")) for line in inner]
    return first_sentence([html.unescape(_TAG.sub("", line)) for line in lines])


def block_sentence(block: str, suffix: str) -> str:
    """The first sentence of a ``/**`` block in a file with this suffix."""
    return javadoc_sentence(block) if suffix in (".java", ".php") else jsdoc_sentence(block)


def _text(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text else ""


def _js_walk(nodes: list[ts.Node], path: str, out: list[Doc]) -> None:
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
            out.append(Doc(path, text, sentence, *rows, _statements(defn), comment))


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


def _lines_doc(path: str, group: list[ts.Node], node: ts.Node, prefix: str, name: str) -> Doc:
    lines = [_text(c)[len(prefix) :].rstrip("\n") for c in group]
    sentence = first_sentence(lines)
    words = sentence.split()
    if words and words[0] == name:  # Go: "Execute uses the args ..."
        sentence = " ".join(words[1:])
    block = "\n".join(_text(c).rstrip("\n") for c in group)
    rows = (node.start_point[0] + 1, node.end_point[0] + 1)
    comment = (group[0].start_point[0] + 1, _last_row(group[-1]) + 1)
    return Doc(path, block, sentence, *rows, _statements(node), comment)


def _go_walk(nodes: list[ts.Node], path: str, out: list[Doc]) -> None:
    for i, node in enumerate(nodes):
        if node.type not in ("function_declaration", "method_declaration"):
            continue
        name = _text(node.child_by_field_name("name"))
        group = _line_group(nodes, i, "//", frozenset())
        if group and name[:1].isupper():
            out.append(_lines_doc(path, group, node, "//", name))


_RUST_SKIP = frozenset({"attribute_item"})


def _rust_walk(nodes: list[ts.Node], path: str, out: list[Doc]) -> None:
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


def _block_walk(nodes: list[ts.Node], path: str, out: list[Doc]) -> None:
    """Java's and PHP's documented definitions, at any depth (a class's methods, a nested
    class's, a PHP namespace block's)."""
    for prev, node in zip([None, *nodes], nodes, strict=False):
        if node.type in _BLOCK_DEFS and prev is not None and prev.type in _COMMENTS:
            text = _text(prev)
            gap = node.start_point[0] - _last_row(prev)
            if text.startswith("/**") and text[3:4] in (" ", "\n", "\t") and gap <= 2:
                rows = (node.start_point[0] + 1, node.end_point[0] + 1)
                comment = (prev.start_point[0] + 1, _last_row(prev) + 1)
                sentence = javadoc_sentence(text)
                out.append(Doc(path, text, sentence, *rows, _statements(node), comment))
        if node.named_children:
            _block_walk(list(node.named_children), path, out)


def xml_doc_sentence(lines: list[str]) -> str:
    """The first sentence of a C# ``<summary>``: its references (``<see cref="T:X"/>``) and
    inline tags (``<c>x</c>``) read as their text."""
    text = " ".join(lines)
    m = re.search(r"<summary>(.*?)(?:</summary>|$)", text, re.S)
    inner = _XML_REF.sub(lambda r: r.group(1).split(":")[-1], m.group(1) if m else "")
    inner = html.unescape(_TAG.sub("", inner))
    return first_sentence([inner])


def _cs_walk(nodes: list[ts.Node], path: str, out: list[Doc]) -> None:
    """C#'s documented definitions, at any depth (namespaces, classes, ``#if`` blocks)."""
    for i, node in enumerate(nodes):
        if node.type in _CS_DEFS:
            group = _line_group(nodes, i, "///", frozenset())
            if group:
                lines = [_text(c)[3:].strip() for c in group]
                block = "\n".join(_text(c).rstrip("\n") for c in group)
                rows = (node.start_point[0] + 1, node.end_point[0] + 1)
                comment = (group[0].start_point[0] + 1, _last_row(group[-1]) + 1)
                sentence = xml_doc_sentence(lines)
                out.append(Doc(path, block, sentence, *rows, _statements(node), comment))
        if node.named_children:
            _cs_walk(list(node.named_children), path, out)


def _ruby_walk(nodes: list[ts.Node], path: str, out: list[Doc], lines: list[str]) -> None:
    """Ruby's documented methods: ``#`` lines directly above a ``def``, read from the file's
    lines (tree-sitter puts the comments above a class's first method outside its body)."""
    for node in nodes:
        if node.type in _RUBY_DEFS:
            row = node.start_point[0]
            top = row
            while top > 0 and lines[top - 1].lstrip().startswith("#"):
                top -= 1
            group = [lines[r].strip() for r in range(top, row)]
            if group and not group[0].startswith("#!"):
                sentence = first_sentence([g.lstrip("#").removeprefix(" ") for g in group])
                rows = (row + 1, node.end_point[0] + 1)
                block = "\n".join(group)
                out.append(Doc(path, block, sentence, *rows, _statements(node), (top + 1, row)))
        _ruby_walk(list(node.named_children), path, out, lines)


def _walk(suffix: str, tree: ts.Tree, data: bytes, path: str, out: list[Doc]) -> None:
    nodes = list(tree.root_node.named_children)
    if suffix == ".rb":
        _ruby_walk(nodes, path, out, data.decode("utf-8", "replace").split("\n"))
    elif suffix in (".java", ".php"):
        _block_walk(nodes, path, out)
    elif suffix == ".cs":
        _cs_walk(nodes, path, out)
    else:
        {".go": _go_walk, ".rs": _rust_walk}.get(suffix, _js_walk)(nodes, path, out)


def read_docs(root: Path) -> tuple[list[Doc], dict[str, int]]:
    """Every qualifying doc comment of the package's sources, and how often each first
    sentence occurs among all the package's doc comments (copies in ``dist`` included)."""
    docs: list[Doc] = []
    seen: dict[str, set[str]] = defaultdict(set)  # sentence -> distinct blocks saying it
    for path in sorted(root.rglob("*")):
        lang = LANGS.get(path.suffix)
        rel = path.relative_to(root).as_posix()
        if lang is None or not path.is_file() or rel.endswith(".d.ts") or ".min." in rel:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        tree = ts.Parser(lang).parse(data)
        found: list[Doc] = []
        _walk(path.suffix, tree, data, rel, found)
        for text in re.findall(rb"/\*\*[\s\S]*?\*/", data):
            block = text.decode("utf-8", "replace")
            seen[block_sentence(block, path.suffix)].add(re.sub(r"\s+", " ", block))
        for doc in found:
            seen[doc.sentence].add(re.sub(r"\s+", " ", doc.block))
        low = rel.lower()
        if not SKIP_DIRS.search(rel) and "test" not in low:
            docs.extend(found)
    counts = {s: len(blocks) for s, blocks in seen.items()}
    return docs, counts
