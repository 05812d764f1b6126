#!/usr/bin/env python3
"""The same code documented in English: a Chinese-documented package's comments and docstrings
translated by the team, line for line (issue 22's "a Chinese-commented codebase answers Chinese
questions as well as an English one answers English ones", measured on one code base in both
languages instead of on different packages).

A translation file, ``bench/zh/<dataset>.en-docs.txt``, holds one line per translated source
line, as grep prints a match: ``path:line:the new line`` (the whole physical line: indentation,
quotes and any code before a comment kept). Only documentation may change: a line inside a
string statement (a docstring, or a triple-quoted block used as prose) or a line's comment.
Everything else, Chinese string literals the program uses included (log messages, labels it
reads off a screen), stays as the package ships it; so do the README and packaging files.
:func:`translate_file` proves it for every file it rewrites: the same number of lines, the same
syntax tree with every string statement emptied, and each changed line a documentation line
whose code before the comment is untouched.

  python bench/doc_translation.py extract --package werobot   # the lines to translate
  python bench/doc_translation.py check --package werobot     # the file applies cleanly
  python bench/doc_translation.py check --package jqdatasdk --file PART.txt   # one part of it
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tempfile
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

from common import BENCH, CACHE_ROOT, log
from docstring_sets import PACKAGES, dataset_name, download, materialize, unpack

_HAN = re.compile(r"[\u4e00-\u9fff]")
EN_DOCS = ".en-docs"  # the twin workspace's and its dataset's suffix


@dataclass(frozen=True, slots=True)
class DocLines:
    """A file's documentation lines: those inside string statements, and those with a comment
    (1-based line -> the column where the comment starts)."""

    strings: frozenset[int]
    comments: dict[int, int]


def translation_path(package: str) -> Path:
    return BENCH / "zh" / f"{dataset_name(package)}{EN_DOCS}.txt"


def _string_statements(tree: ast.AST) -> Iterator[ast.Constant]:
    """Every statement that is a string alone: a docstring, or prose between statements."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.value


def doc_lines(text: str) -> DocLines:
    """Where a file documents itself. A string statement's lines are documentation wherever it
    stands (a module's, a class's or a function's docstring, or a block of prose between
    statements); a comment is, wherever it starts."""
    strings: set[int] = set()
    for node in _string_statements(ast.parse(text)):
        strings.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    comments = {
        tok.start[0]: tok.start[1]
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    }
    return DocLines(frozenset(strings), comments)


def _source_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def extract(root: Path) -> list[tuple[str, int, str]]:
    """(path, line, text) of every documentation line holding Chinese in its documentation
    (a string statement, or the comment after the code): what a translator rewrites."""
    out = []
    for p in _source_files(root):
        text = p.read_text(encoding="utf-8-sig")
        try:
            docs = doc_lines(text)
        except SyntaxError:
            continue
        rel = p.relative_to(root).as_posix()
        for i, line in enumerate(text.splitlines(), 1):
            if i in docs.strings:
                prose = line
            elif i in docs.comments:
                prose = line[docs.comments[i] :]  # the code before it is the program's
            else:
                continue
            if _HAN.search(prose):
                out.append((rel, i, line))
    return out


def read_translation(path: Path) -> dict[str, dict[int, str]]:
    """path -> line -> the translated line. Malformed lines are an error, not skipped."""
    out: dict[str, dict[int, str]] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        parts = raw.split(":", 2)
        if len(parts) != 3 or not parts[0].endswith(".py") or not parts[1].isdigit():
            raise ValueError(f"{path}:{n}: expected path.py:line:text")
        rel, line, new = parts
        if int(line) in out.setdefault(rel, {}):
            raise ValueError(f"{path}:{n}: {rel}:{line} translated twice")
        out[rel][int(line)] = new
    return out


def _emptied(text: str) -> str:
    """The syntax tree with every string statement's text removed: what documentation may not
    change."""
    tree = ast.parse(text)
    for node in _string_statements(tree):
        node.value = ""
    return ast.dump(tree)


def translate_file(text: str, lines: dict[int, str], where: str) -> str:
    """``text`` with its documentation lines replaced; ``ValueError`` naming the line when a
    replacement is not documentation, changes code, or breaks the file."""
    docs = doc_lines(text)
    old = text.splitlines(keepends=True)
    new = list(old)
    for i, line in sorted(lines.items()):
        if not 1 <= i <= len(old):
            raise ValueError(f"{where}:{i}: no such line")
        if i not in docs.strings and i not in docs.comments:
            raise ValueError(f"{where}:{i}: not a docstring or comment line")
        if i not in docs.strings:
            col = docs.comments[i]
            if line[:col] != old[i - 1][:col]:
                raise ValueError(f"{where}:{i}: the code before the comment changed")
        ending = old[i - 1][len(old[i - 1].rstrip("\r\n")) :]
        new[i - 1] = line + ending
    out = "".join(new)
    try:
        same = _emptied(out) == _emptied(text)
    except SyntaxError as e:
        raise ValueError(f"{where}:{e.lineno}: the translation breaks the file: {e.msg}") from e
    if not same:
        raise ValueError(f"{where}: the translation changes code, not only documentation")
    if len(out.splitlines()) != len(old):
        raise ValueError(f"{where}: the translation changes the number of lines")
    return out


def apply(root: Path, translation: dict[str, dict[int, str]]) -> int:
    """Translate the unpacked package at ``root`` in place; returns the lines replaced."""
    count = 0
    for rel, lines in sorted(translation.items()):
        p = root / rel
        if not p.is_file():
            raise ValueError(f"{rel}: not in the package")
        p.write_text(translate_file(p.read_text(encoding="utf-8-sig"), lines, rel), "utf-8")
        count += len(lines)
    return count


def materialize_english(package: str) -> Path:
    """The stripped workspace of the package documented in English: the same cases' lines
    blanked (translation keeps line numbers, so the gold and the blanked docstring are the
    same lines)."""
    path = translation_path(package)
    translation = read_translation(path)
    # The folder is named by the translation's content: an edited translation builds anew.
    variant = f"{EN_DOCS}-{sha256(path.read_bytes()).hexdigest()[:10]}"
    return materialize(package, variant=variant, prepare=lambda root: apply(root, translation))


def _unpacked(package: str, tmp: str) -> Path:
    return unpack(package, download(package, CACHE_ROOT / "sdists"), Path(tmp) / "ws")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("action", choices=("extract", "check"))
    ap.add_argument("--package", choices=sorted(PACKAGES), required=True)
    ap.add_argument(
        "--file",
        type=Path,
        help="check this translation file (a part of the package's) instead of the package's; "
        "only the source files it names must be fully translated",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = _unpacked(args.package, tmp)
        if args.action == "extract":
            for rel, i, line in extract(root):
                print(f"{rel}:{i}:{line}")
            return 0
        try:
            translation = read_translation(args.file or translation_path(args.package))
            replaced = apply(root, translation)
        except ValueError as e:
            raise SystemExit(f"error: {e}") from None
        left = [t for t in extract(root) if not args.file or t[0] in translation]
        log(f"{replaced} lines translated; {len(left)} documentation lines still hold Chinese")
        for rel, i, line in left[:20]:
            print(f"  {rel}:{i}: {line.strip()}")
        return 0 if not left else 1


if __name__ == "__main__":
    sys.exit(main())
