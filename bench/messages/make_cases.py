#!/usr/bin/env python3
"""Build the message groups that sit beside the frozen ``bench/failures`` cases.

* ``message-template`` (Python, flask and click): the frozen ``message`` cases, relabelled at
  the **template**: the gold is every place in the workspace's non-test source whose string
  literal produces the message (an f-string, a ``%``/``.format`` string or a plain literal,
  read with Python's own ``ast``; a placeholder matches any value), widened to its statement.
  A message no literal produces (raised in werkzeug, built from pieces) gets no case.
* ``message-mined`` (JavaScript, TypeScript, Go, Rust, Java): **mined from the source**, not
  from running it (node, rustc and javac exist here but the projects' dependencies do not, and
  go does not): each ``throw new XError("...")``, fastify ``createError('FST_..', '...')``,
  Go ``errors.New`` / ``fmt.Errorf`` / ``panic("...")``, Rust ``panic!`` / ``assert!`` /
  ``.expect("...")``, Java ``throw new XException("...")`` / ``checkArgument(.., "...")`` with
  a literal message of at least three words. Placeholders are filled with fixed sample values
  and the message is written the way the runtime prints it (``TypeError: ...``,
  ``panic: ...``, ``thread 'main' panicked at '...'``, ``Exception in thread "main"
  java.lang.IllegalArgumentException: ...``), without a file or line. The gold is the line(s)
  of every site with the same message.

The cases are written to ``cases/<dataset>.jsonl`` in the shared format (``kind`` is the group,
``variant`` ``a``, ``open_file`` null) with ``dataset`` and ``site`` labels.

  python bench/messages/make_cases.py --ws ~/.cache/code-evidence-bench/ws-history
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
FAILURES = BENCH / "failures" / "cases"
PYTHON_DATASETS = (
    "flask-2.0.0-commits",
    "flask-3.1.0-commits",
    "click-8.1.7-commits",
    "click-8.3.0-commits",
)
OTHER_DATASETS = {
    "fastify-v4.24.0-commits": "js",
    "zod-v3.22.0-commits": "ts",
    "gin-v1.9.0-commits": "go",
    "bytes-v1.4.0-commits": "rust",
    "javapoet-1.9.0-commits": "java",
}
EXTENSIONS = {"js": (".js",), "ts": (".ts",), "go": (".go",), "rust": (".rs",), "java": (".java",)}
SKIP_PARTS = {"test", "tests", "__tests__", "benchmarks", "bench", "examples", "example", "docs"}
MAX_PER_DATASET = 40
MIN_WORDS = 3


# ------------------------------------------------------------------------------ Python templates


def _pattern_of(node: ast.AST) -> tuple[str, int] | None:
    """A string node as a regex (placeholders: any value) and its literal length."""
    if isinstance(node, ast.JoinedStr):
        parts = [
            re.escape(v.value) if isinstance(v, ast.Constant) else "(.+?)" for v in node.values
        ]
        fixed = sum(len(v.value) for v in node.values if isinstance(v, ast.Constant))
        return "".join(parts), fixed
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        pieces = re.split(r"%(?:\([\w]+\))?[-+ #0]*\d*(?:\.\d+)?[sdrfix]|\{[^{}]*\}", text)
        return "(.+?)".join(re.escape(p) for p in pieces), sum(len(p) for p in pieces)
    return None


def python_sites(ws: Path) -> Iterator[tuple[str, int, int, str, int]]:
    """(path, first line, last line of the statement, regex, literal length) of every string
    literal in the workspace's non-test Python source."""
    for f in sorted((ws / "src").rglob("*.py")):
        rel = f.relative_to(ws).as_posix()
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for stmt in ast.walk(tree):
            if not isinstance(stmt, ast.stmt) or isinstance(
                stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module
            ):
                continue
            if isinstance(stmt, ast.If | ast.For | ast.While | ast.With | ast.Try):
                continue  # their bodies are statements of their own
            for node in ast.walk(stmt):
                got = _pattern_of(node)
                if got and got[1] >= 8:
                    end = stmt.end_lineno or stmt.lineno
                    yield rel, stmt.lineno, end, got[0], got[1]


def template_cases(ws: Path, dataset: str) -> tuple[list[dict], int]:
    """The frozen message cases of ``dataset`` relabelled at their template; and how many had
    none."""
    path = FAILURES / f"{dataset}.jsonl"
    sites = list(python_sites(ws))
    out, missing = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["kind"] != "message":
            continue
        body = case["query"].split(": ", 1)[1] if ": " in case["query"] else case["query"]
        best: list[tuple[str, int, int]] = []
        best_len = 0
        for rel, start, end, regex, fixed in sites:
            if fixed < 0.5 * len(body) or not re.fullmatch(regex, body, re.S):
                continue
            if fixed > best_len:
                best, best_len = [(rel, start, end)], fixed
            elif fixed == best_len and (rel, start, end) not in best:
                best.append((rel, start, end))
        if not best:
            missing += 1
            continue
        gold: dict[str, list[list[int]]] = {}
        for rel, start, end in best:
            gold.setdefault(rel, []).append([start, end])
        out.append(
            {
                **{k: case[k] for k in ("repo", "ref", "query")},
                "id": case["id"].removesuffix(":message") + ":message-template",
                "kind": "message-template",
                "variant": "a",
                "open_file": None,
                "gold": [
                    {"path": p, "ranges": r, "range_quality": "exact"} for p, r in gold.items()
                ],
                "dataset": dataset,
                "site": "template",
            }
        )
    return out, missing


# ----------------------------------------------------------------------- other languages, mined

_STR = r'"((?:[^"\\\n]|\\.){8,300})"'
_SQ = r"'((?:[^'\\\n]|\\.){8,300})'"
_TPL = r"`((?:[^`\\\n]|\\.){8,300})`"
JS_RULES = (
    (re.compile(r"throw new (\w*Error)\(\s*(?:" + _STR + "|" + _SQ + "|" + _TPL + ")"), "{0}: {m}"),
    (
        re.compile(r"createError\(\s*'(FST_\w+)',\s*(?:" + _SQ + "|" + _STR + ")"),
        "FastifyError [{0}]: {m}",
    ),
)
GO_RULES = (
    (re.compile(r"errors\.New\(()" + _STR + r"\)"), "Error: {m}"),
    (re.compile(r"fmt\.Errorf\(()" + _STR), "Error: {m}"),
    (re.compile(r"\bpanic\(()" + _STR + r"\)"), "panic: {m}"),
)
RUST_RULES = (
    (re.compile(r"\bpanic!\(()\s*" + _STR), "thread 'main' panicked at '{m}'"),
    (re.compile(r"\bassert(?:_eq|_ne)?!\([^;]*?,()\s*" + _STR), "thread 'main' panicked at '{m}'"),
    (re.compile(r"\.expect\(()" + _STR + r"\)"), "thread 'main' panicked at '{m}'"),
)
JAVA_RULES = (
    (re.compile(r"throw new (\w+(?:Exception|Error))\(\s*" + _STR), "{0}"),
    (re.compile(r"\bcheckArgument\([^;]*?,()\s*" + _STR), "IllegalArgumentException"),
    (re.compile(r"\bcheckState\([^;]*?,()\s*" + _STR), "IllegalStateException"),
    (re.compile(r"\bcheckNotNull\([^;]*?,()\s*" + _STR), "NullPointerException"),
)
RULES = {"js": JS_RULES, "ts": JS_RULES, "go": GO_RULES, "rust": RUST_RULES, "java": JAVA_RULES}
JAVA_PACKAGES = {
    "IllegalArgumentException": "java.lang",
    "IllegalStateException": "java.lang",
    "NullPointerException": "java.lang",
    "UnsupportedOperationException": "java.lang",
    "AssertionError": "java.lang",
    "IOException": "java.io",
    "UncheckedIOException": "java.io",
}
# Fixed sample values for placeholders, so the cases are the same on every run.
_FILL = (
    (re.compile(r"\$\{[^}]*\}"), "myValue"),
    (re.compile(r"\{[^{}]*\}"), "42"),
    (re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[dxXob]"), "42"),
    (re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[svqTfegEGcpw]"), "myValue"),
)


def fill(template: str) -> str:
    text = re.sub(r"\\(.)", lambda m: " " if m.group(1) in "nt" else m.group(1), template)
    for pattern, value in _FILL:
        text = pattern.sub(value, text)
    return text.replace("%%", "%")


def literal_words(template: str) -> int:
    bare = template
    for pattern, _ in _FILL:
        bare = pattern.sub(" ", bare)
    return len(re.findall(r"[A-Za-z]{2,}", bare))


def mined_sites(ws: Path, lang: str) -> Iterator[tuple[str, int, int, str]]:
    """(path, first line, last line, query) of each message site of the non-test source."""
    for f in sorted(ws.rglob("*")):
        rel = f.relative_to(ws)
        if not f.is_file() or not f.name.endswith(EXTENSIONS[lang]):
            continue
        if (
            set(p.lower() for p in rel.parts) & SKIP_PARTS
            or f.name.endswith(("_test.go", ".test.js", ".test.ts", "Test.java"))
            or rel.parts[0] in ("node_modules", "vendor", "target", "build")
            or f.name.endswith(".d.ts")
        ):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        for pattern, form in RULES[lang]:
            for m in pattern.finditer(text):
                literal = next((g for g in m.groups()[1:] if g), None)
                if literal is None or literal_words(literal) < MIN_WORDS:
                    continue
                kind = m.group(1)
                message = fill(literal)
                if lang == "java":
                    name = kind or form
                    package = JAVA_PACKAGES.get(name)
                    qualified = f"{package}.{name}" if package else name
                    query = f'Exception in thread "main" {qualified}: {message}'
                else:
                    query = form.format(kind, m=message)
                start = text.count("\n", 0, m.start()) + 1
                end = text.count("\n", 0, m.end()) + 1
                yield rel.as_posix(), start, end, query


def mined_cases(ws: Path, dataset: str, lang: str, repo: dict) -> list[dict]:
    by_query: dict[str, dict[str, list[list[int]]]] = {}
    for path, start, end, query in mined_sites(ws, lang):
        by_query.setdefault(query, {}).setdefault(path, []).append([start, end])
    out = []
    for i, (query, gold) in enumerate(sorted(by_query.items())):
        out.append(
            {
                "id": f"{dataset}:mined-{i:03d}:message-mined",
                **repo,
                "kind": "message-mined",
                "variant": "a",
                "query": query,
                "open_file": None,
                "gold": [
                    {"path": p, "ranges": r, "range_quality": "exact"} for p, r in gold.items()
                ],
                "dataset": dataset,
                "site": f"mined ({lang})",
            }
        )
    if len(out) > MAX_PER_DATASET:  # an even spread over the sorted messages, not the first
        step = len(out) / MAX_PER_DATASET
        out = [out[int(i * step)] for i in range(MAX_PER_DATASET)]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ws", type=Path, required=True, help="the materialized --history workspaces")
    ap.add_argument("--shared", type=Path, default=Path("/work/shared/bench"))
    args = ap.parse_args(argv)
    manifest = {
        d["name"]: d for d in json.loads((args.shared / "manifest.json").read_text())["datasets"]
    }
    (HERE / "cases").mkdir(exist_ok=True)
    for dataset in PYTHON_DATASETS:
        cases, missing = template_cases(args.ws / dataset, dataset)
        write(dataset, cases)
        print(f"{dataset}: {len(cases)} message-template cases ({missing} with no template)")
    for dataset, lang in OTHER_DATASETS.items():
        d = manifest[dataset]
        repo = {"repo": d.get("repo"), "ref": d.get("ref")}
        cases = mined_cases(args.ws / dataset, dataset, lang, repo)
        write(dataset, cases)
        print(f"{dataset}: {len(cases)} message-mined cases")
    return 0


def write(dataset: str, cases: list[dict]) -> None:
    path = HERE / "cases" / f"{dataset}.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
