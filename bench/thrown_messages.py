#!/usr/bin/env python3
"""Messages the held-out packages throw, pasted the way each runtime prints them.

The dev set's mined messages (``messages/make_cases.py``) come from one project per language
and no PHP, Ruby or C# at all. This set asks the thirty-two packages of ``doc_questions.py``
(no rule was tuned on them) for the place that wrote a message: each ``throw``/``raise``/
``panic`` site of the non-test source whose message is a literal of three words or more,
placeholders filled with fixed sample values (``#{x}``, ``${x}``, ``{0}``, ``%s``, PHP's
``$x``), written as the runtime prints an uncaught one, without a file or line:

- JavaScript/TypeScript ``throw new XError('…')``: ``TypeError: …``;
- Go ``errors.New`` / ``fmt.Errorf``: ``Error: …``; ``panic("…")``: ``panic: …``;
- Rust ``panic!`` / ``assert!`` / ``.expect``: ``thread 'main' panicked at '…'``;
- Java ``throw new XException("…")`` (also through ``String.format``): ``Exception in thread
  "main" java.lang.IllegalArgumentException: …`` (the type's package from ``java.lang``/
  ``java.io``, the file's imports or its own package);
- PHP ``throw new \\XException('…')`` (also through ``sprintf``): ``PHP Fatal error:  Uncaught
  Ns\\XException: …`` (the name resolved as PHP does: a leading ``\\``, a ``use``, else the
  file's namespace);
- Ruby ``raise X, "…"`` / ``raise X.new("…")`` / ``raise "…"``: ``… (X)`` (a bare ``raise``
  of a string is a ``RuntimeError``), the end of the line Ruby prints for an uncaught error;
- C# ``throw new XException("…")`` / ``throw XException.Create(reader, "…")``: ``Unhandled
  exception. System.ArgumentException: … (Parameter 'p')`` (the namespace of a ``System``
  type, or of the workspace file that declares the class; Newtonsoft's ``Create`` with a reader
  adds the JSON path it was at).

A site whose literal is followed by ``+`` or PHP's ``.`` (concatenation: the runtime prints
more than the literal) is left out. Gold: every site of the same message. Up to
``--per-package`` messages a package, seeded. Reported per language: MRR@10 at file level,
site@1 / site@10 (a result among the first one / ten overlaps a site's lines), and the two
refusal numbers (refused while the first file is right; accepted with no gold file among the
first five); ``depth`` deep, no time limit.

  python bench/thrown_messages.py --packages DIR [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from common import CACHE_ROOT
from doc_questions import ALL_PACKAGES, LANGUAGES
from held_out import place_rows, place_table, write_report

_DQ = r'"((?:[^"\\\n]|\\.){8,300})"'
_SQ = r"'((?:[^'\\\n]|\\.){8,300})'"
_TPL = r"`((?:[^`\\\n]|\\.){8,300})`"
MIN_WORDS = 3
# Folders and files that are not the library's own source: tests, examples, builds.
_SKIP_DIR = re.compile(
    r"(^|/)([^/]*tests?|__tests__|spec|specs|examples?|samples?|docs?|dist|build|bench\w*"
    r"|node_modules|vendor|target)/",
    re.I,
)
_SKIP_FILE = re.compile(r"(_test\.go|\.test\.[jt]s|\.spec\.[jt]s|Test\.java|Tests?\.cs|_spec\.rb)$")

# Sample values for placeholders, in order (Ruby's #{..} before a bare {..}).
_FILL = (
    (re.compile(r"#\{[^}]*\}"), "myValue"),
    (re.compile(r"\$\{[^}]*\}"), "myValue"),
    (re.compile(r"\{\$[^}]*\}"), "myValue"),  # PHP "{$x->y}"
    (re.compile(r"\{[^{}]*\}"), "42"),
    (re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[dxXob]"), "42"),
    (re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[svqTfegEGcpw]"), "myValue"),
)
_PHP_VAR = re.compile(r"\$[A-Za-z_]\w*(?:->\w+)*")

JAVA_BUILTIN = {
    **dict.fromkeys(
        (
            "IllegalArgumentException",
            "IllegalStateException",
            "NullPointerException",
            "UnsupportedOperationException",
            "IndexOutOfBoundsException",
            "ArrayIndexOutOfBoundsException",
            "StringIndexOutOfBoundsException",
            "ClassCastException",
            "ArithmeticException",
            "NumberFormatException",
            "RuntimeException",
            "CloneNotSupportedException",
            "AssertionError",
            "Error",
        ),
        "java.lang",
    ),
    **dict.fromkeys(
        ("IOException", "UncheckedIOException", "FileNotFoundException", "EOFException"),
        "java.io",
    ),
}
CSHARP_BUILTIN = {
    **dict.fromkeys(
        (
            "Exception",
            "ArgumentException",
            "ArgumentNullException",
            "ArgumentOutOfRangeException",
            "InvalidOperationException",
            "NotSupportedException",
            "FormatException",
            "OverflowException",
            "InvalidCastException",
            "IndexOutOfRangeException",
            "ObjectDisposedException",
        ),
        "System",
    ),
    "KeyNotFoundException": "System.Collections.Generic",
    "SerializationException": "System.Runtime.Serialization",
}


@dataclass
class Case:
    project: str
    language: str
    query: str
    gold: dict[str, list[list[int]]] = field(default_factory=dict)  # path -> [[first, last]]


@dataclass(frozen=True)
class Site:
    path: str
    start: int
    end: int
    query: str


def fill(literal: str, php_double: bool = False) -> str:
    """The message a literal prints, with fixed sample values where values go."""
    text = re.sub(r"\\(.)", lambda m: " " if m.group(1) in "nt" else m.group(1), literal)
    for pattern, value in _FILL:
        text = pattern.sub(value, text)
    if php_double:
        text = _PHP_VAR.sub("myValue", text)
    return text.replace("%%", "%")


def literal_words(message: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", message.replace("myValue", " ")))


def _closed(text: str, end: int, php: bool) -> bool:
    """The literal is the whole message: not followed by a concatenation (``+``, Ruby's
    ``<<``, PHP's ``.``; elsewhere ``.`` is a method of the string, C#'s ``.FormatWith``)."""
    after = text[end : end + 40].lstrip()
    ends = ("+", "<<", ". ", ".\n", "\\")  # "\\": Ruby's line continuation joins the next
    return not after.startswith(ends) and not (php and after.startswith("."))


def _in_comment(text: str, at: int) -> bool:
    """The site is on a comment line (a doc comment's example, ``# raise …`` in Ruby)."""
    line = text[text.rfind("\n", 0, at) + 1 : at].lstrip()
    return line.startswith(("//", "/*", "*", "#"))


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


# ------------------------------------------------------------------ per language: sites, names

_JS = re.compile(r"throw new (\w*Error)\(\s*(?:" + _DQ + "|" + _SQ + "|" + _TPL + ")")
_GO = (
    (re.compile(r"errors\.New\(()" + _DQ + r"\)"), "Error: {m}"),
    (re.compile(r"fmt\.Errorf\(()" + _DQ), "Error: {m}"),
    (re.compile(r"\bpanic\(()" + _DQ + r"\)"), "panic: {m}"),
)
_RUST = (
    re.compile(r"\bpanic!\(\s*" + _DQ),
    re.compile(r"\bassert!\([^;]*?,\s*" + _DQ),  # assert_eq!'s literals are compared values
    re.compile(r"\.expect\(" + _DQ + r"\)"),
)
_JAVA = re.compile(r"throw new (\w+(?:Exception|Error))\(\s*(?:String\.format\(\s*)?" + _DQ)
_PHP = re.compile(
    r"throw new (\\?[A-Za-z_][\w\\]*)\(\s*(?:\\?sprintf\(\s*)?(?:" + _SQ + "|" + _DQ + ")"
)
_RUBY = re.compile(
    r"\b(?:raise|fail)\s+(?:([A-Z][\w:]*)(?:\.new\(\s*|\s*,\s*))?(?:format\(\s*)?"
    r"(?:" + _DQ + "|" + _SQ + ")"
)
_CSHARP = re.compile(
    r"throw (?:new (\w+Exception)\(|(\w+Exception)\.Create\(\s*\w+\s*,)\s*\$?"
    + _DQ
    + r"(?:\s*,\s*\"(\w+)\")?"
)


def _java_name(text: str, name: str) -> str:
    if name in JAVA_BUILTIN:
        return f"{JAVA_BUILTIN[name]}.{name}"
    m = re.search(rf"^import ([\w.]+\.{name});", text, re.M)
    if m:
        return m.group(1)
    pkg = re.search(r"^package ([\w.]+);", text, re.M)
    return f"{pkg.group(1)}.{name}" if pkg else name


def _php_name(text: str, name: str) -> str:
    if name.startswith("\\"):
        return name[1:]
    first = name.split("\\", 1)[0]
    for m in re.finditer(r"^\s*use ([\w\\]+)(?: as (\w+))?;", text, re.M):
        alias = m.group(2) or m.group(1).rsplit("\\", 1)[-1]
        if alias == first:
            return m.group(1) + name[len(first) :]
    ns = re.search(r"^namespace ([\w\\]+)\s*[;{]", text, re.M)
    return f"{ns.group(1)}\\{name}" if ns else name


def sites(rel: str, text: str, declared: dict[str, str], bare: bool = False) -> Iterator[Site]:
    """The message sites of one file, each with the message as the runtime prints it (a form
    whose ``{m}`` the message fills), or with ``bare`` the message alone."""
    suffix = Path(rel).suffix
    found: list[tuple[int, int, str]] = []  # start, end offsets, query

    def add(m: re.Match[str], literal: str, form: str, php_double: bool = False) -> None:
        if not _closed(text, m.end(), suffix == ".php") or _in_comment(text, m.start()):
            return
        message = fill(literal, php_double)
        if literal_words(message) >= MIN_WORDS:
            found.append((m.start(), m.end(), message if bare else form.replace("{m}", message)))

    if LANGUAGES[suffix] == "JS/TS":
        for m in _JS.finditer(text):
            add(m, m.group(2) or m.group(3) or m.group(4), m.group(1) + ": {m}")
    elif suffix == ".go":
        for pattern, form in _GO:
            for m in pattern.finditer(text):
                add(m, m.group(2), form)
    elif suffix == ".rs":
        for pattern in _RUST:
            for m in pattern.finditer(text):
                add(m, m.group(1), "thread 'main' panicked at '{m}'")
    elif suffix == ".java":
        for m in _JAVA.finditer(text):
            name = _java_name(text, m.group(1))
            add(m, m.group(2), f'Exception in thread "main" {name}: ' + "{m}")
    elif suffix == ".php":
        for m in _PHP.finditer(text):
            form = f"PHP Fatal error:  Uncaught {_php_name(text, m.group(1))}: " + "{m}"
            if m.group(2):
                add(m, m.group(2), form)
            else:
                add(m, m.group(3), form, php_double=True)
    elif suffix == ".rb":
        for m in _RUBY.finditer(text):
            add(m, m.group(2) or m.group(3), "{m} (" + (m.group(1) or "RuntimeError") + ")")
    elif suffix == ".cs":
        for m in _CSHARP.finditer(text):
            name = m.group(1) or m.group(2)
            ns = CSHARP_BUILTIN.get(name) or declared.get(name)
            tail = ""
            if m.group(4) and name.startswith("Argument"):
                tail = f" (Parameter '{m.group(4)}')"
            elif m.group(2) in ("JsonReaderException", "JsonSerializationException"):
                tail = " Path 'data', line 1, position 5."
            full = f"{ns}.{name}" if ns else name
            add(m, m.group(3), f"Unhandled exception. {full}: " + "{m}" + tail)
    for start, end, query in found:
        yield Site(rel, _line(text, start), _line(text, end), query)


def build_cases(
    root: Path, project: str, per_package: int, rng: random.Random, bare: bool = False
) -> list[Case]:
    files: dict[str, str] = {}
    for f in sorted(root.rglob("*")):
        rel = f.relative_to(root).as_posix()
        if f.suffix not in LANGUAGES or not f.is_file() or f.name.endswith(".d.ts"):
            continue
        if _SKIP_DIR.search(rel) or _SKIP_FILE.search(f.name):
            continue
        files[rel] = f.read_text(encoding="utf-8", errors="replace")
    # C#: the namespace that declares each class, for the name .NET prints.
    declared: dict[str, str] = {}
    for rel, text in files.items():
        if rel.endswith(".cs"):
            ns = re.search(r"^\s*namespace ([\w.]+)", text, re.M)
            for m in re.finditer(r"\bclass (\w+)", text):
                if ns:
                    declared.setdefault(m.group(1), ns.group(1))
    by_query: dict[str, Case] = {}
    for rel, text in files.items():
        for site in sites(rel, text, declared, bare):
            case = by_query.setdefault(
                site.query, Case(project, LANGUAGES[Path(rel).suffix], site.query)
            )
            case.gold.setdefault(site.path, []).append([site.start, site.end])
    kept = [by_query[q] for q in sorted(by_query)]
    rng.shuffle(kept)
    return kept[:per_package]


def ask(root: Path, index_root: Path, cases: list[Case]) -> list[dict]:
    return place_rows(
        root,
        index_root,
        cases,
        lambda c: list(c.gold),
        lambda c, r: any(r.start <= b and r.end >= a for a, b in c.gold.get(r.path, [])),
        "site",
    )


def table(rows: list[dict]) -> str:
    groups = [
        (lang, lambda r, lang=lang: lang in ("all", r["language"]))
        for lang in (*dict.fromkeys(LANGUAGES.values()), "all")
    ]
    return place_table(rows, groups, "language", "site")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", type=Path, required=True, help="the packages, unpacked")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "thrown-idx")
    ap.add_argument("--package", action="append", help="only these packages (repeatable)")
    ap.add_argument("--per-package", type=int, default=15)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--list", action="store_true", help="print the cases, ask nothing")
    ap.add_argument(
        "--bare",
        action="store_true",
        help="ask the message alone, as a log, a response body or a dialog shows it",
    )
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cases: list[Case] = []
    for project in args.package or ALL_PACKAGES:
        if not (args.packages / project).is_dir():
            raise SystemExit(f"not unpacked in {args.packages}: {project}")
        rng = random.Random(f"{args.seed}:{project}")
        cases.extend(
            build_cases(args.packages / project, project, args.per_package, rng, args.bare)
        )
    if args.list:
        for c in cases:
            print(f"{c.project}\t{c.query}\t{sorted(c.gold)}")
        return
    rows = ask(args.packages, args.index_root, cases)
    print(table(rows))
    write_report(rows, "thrown-messages", args.out)


if __name__ == "__main__":
    main()
