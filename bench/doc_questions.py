#!/usr/bin/env python3
"""JavaScript, TypeScript, Go, Rust, Java, PHP, Ruby and C# asked the shared docstring way,
of packages no rule was tuned on.

The dev set's cases in these languages are commit questions on one project each (PHP and Ruby
have none); nothing held out asks such a code base what a function does. This set does, the
way the shared docstring sets ask Python (``shared/bench/README.md``, "Docstring cases"): a doc
comment's first sentence is the question, the comment is blanked in a copy of the package (its
characters turned to spaces, so line numbers hold; every identical copy of it too, such as a
bundle's), and gold is the definition it documents, from its first line to its last. Which
comments document which definitions, per language: ``doc_comments.py``.

Kept where the first sentence has six words or more and occurs in no other doc comment, and
the body holds three statements or more (a class: three members); outside tests, examples,
docs and ``dist``/``build`` copies; a seeded sample of up to ``--per-package`` a package (the
first eighteen packages from one stream in order, each later one from a stream of its own).

Packages, chosen before any was measured, unpacked into one folder as ``NAME-VERSION``:
- npm tarballs (``npm pack NAME@VERSION``): express 4.21.2, commander 12.1.0, axios 1.7.9 (its
  ``dist`` bundles stay in the workspace, as a user has them), koa 2.15.3, body-parser 1.20.3,
  ws 8.18.0, send 0.19.1 (JavaScript) and rxjs 7.8.1 (TypeScript sources beside their builds);
- Debian's binary packages of Go and Rust libraries (``apt-get download PKG``, ``dpkg-deb -x``):
  the folder under ``usr/share/gocode/src/github.com/`` of golang-github-go-chi-chi-dev 5.0.7,
  -gorilla-mux-dev 1.8.0, -sirupsen-logrus-dev 1.9.0, -spf13-cobra-dev 1.6.1, -spf13-pflag-dev
  1.0.6 (as ``chi-5.0.7`` …), and the crate under ``usr/share/cargo/registry/`` of
  librust-anyhow-dev 1.0.69, -regex-dev 1.7.1, -semver-dev 1.0.14, -serde-json-dev 1.0.87,
  -url-dev 2.3.1;
- Java, the upstream tarballs of Debian's source packages (a ``deb-src`` line for bookworm,
  ``apt-get source --download-only PKG``, the ``.orig.tar`` unpacked, its top folder renamed):
  libcommons-lang3-java 3.12.0 (``commons-lang3-3.12.0``), commons-io 2.11.0, jsoup 1.15.3, the
  whole source tree (tests included, as a clone has them);
- PHP, the folder under ``usr/share/php/`` of Debian's php-guzzlehttp-psr7 2.4.5
  (``GuzzleHttp/Psr7`` as ``psr7-2.4.5``), php-monolog 2.9.1, php-symfony-console 5.4.53,
  php-league-commonmark 2.3.9 and php-twig 3.5.1;
- Ruby, the gem folder under ``usr/share/rubygems-integration/all/gems/`` of Debian's ruby-rack
  2.2.22, ruby-thor 1.2.1, ruby-sinatra 3.0.5, ruby-mustermann 3.0.0 and ruby-addressable 2.8.1;
- C#, the upstream tarball of Debian's newtonsoft-json source package (6.0.8, its
  ``newtonsoft-json-6.0.8`` folder: the library, its tests and samples).

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

from common import CACHE_ROOT
from doc_comments import LANGS, Doc, block_sentence, read_docs
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
# Java, PHP and Ruby, added later: after the others, so their cases are drawn as before.
LATER_PACKAGES = (
    "commons-lang3-3.12.0",
    "commons-io-2.11.0",
    "jsoup-1.15.3",
    "psr7-2.4.5",
    "monolog-2.9.1",
    "symfony-console-5.4.53",
    "commonmark-2.3.9",
    "twig-3.5.1",
    "rack-2.2.22",
    "thor-1.2.1",
    "sinatra-3.0.5",
    "mustermann-3.0.0",
    "addressable-2.8.1",
    "newtonsoft-json-6.0.8",
)
ALL_PACKAGES = (*PACKAGES, *LATER_PACKAGES)
# The rows per language, by the gold file's suffix.
LANGUAGES = dict.fromkeys((".js", ".cjs", ".mjs", ".ts"), "JS/TS") | {
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".php": "PHP",
    ".rb": "Ruby",
    ".cs": "C#",
}


@dataclass
class Case:
    project: str
    query: str
    path: str
    start: int  # 1-based, inclusive: the definition's lines
    end: int


def build_cases(root: Path, project: str, per_package: int, rng: random.Random) -> list[Doc]:
    docs, counts = read_docs(root)
    kept = [
        d
        for d in docs
        if d.statements >= 3 and len(d.sentence.split()) >= 6 and counts.get(d.sentence) == 1
    ]
    rng.shuffle(kept)
    return sorted(kept[:per_package], key=lambda d: (d.path, d.start))


def strip_copy(src: Path, dest: Path, docs: list[Doc]) -> None:
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
        same = block_sentence(block, suffix) in questions
        return re.sub(r"[^\n]", " ", block) if same else block

    for path in dest.rglob("*"):
        suffix = path.suffix
        if suffix not in LANGS or not path.is_file():
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
    for project in (*ALL_PACKAGES, *dict.fromkeys(LANGUAGES.values()), "all"):
        group = [
            r
            for r in rows
            if project in ("all", r["project"], LANGUAGES.get(Path(r["path"]).suffix, ""))
        ]
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
    wanted = set(args.package or ALL_PACKAGES)
    unknown = sorted(wanted - set(ALL_PACKAGES))
    if unknown:
        raise SystemExit(f"unknown packages: {', '.join(unknown)}")
    # The first packages are drawn from one stream, in order, as they always were: asking any
    # of them needs them all. A later package is drawn from a stream of its own.
    needed = [p for p in ALL_PACKAGES if p in wanted or (p in PACKAGES and wanted & set(PACKAGES))]
    missing = [p for p in needed if not (args.packages / p).is_dir()]
    if missing:
        raise SystemExit(f"not unpacked in {args.packages}: {', '.join(missing)}")
    stream = random.Random(args.seed)
    cases: list[Case] = []
    for project in needed:
        rng = stream if project in PACKAGES else random.Random(f"{args.seed}:{project}")
        found = build_cases(args.packages / project, project, args.per_package, rng)
        if project not in wanted:
            continue  # drawn all the same, so a package's cases do not depend on the others
        strip_copy(args.packages / project, args.work / project, found)
        cases.extend(Case(project, d.sentence, d.path, d.start, d.end) for d in found)
    rows = ask(args.work, args.index_root, cases)
    print(table(rows))
    write_report(rows, "doc-questions", args.out)


if __name__ == "__main__":
    main()
