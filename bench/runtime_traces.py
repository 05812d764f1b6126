#!/usr/bin/env python3
"""Real Ruby and PHP failures, pasted whole or as their error line, asked of held-out packages.

The dev set's traces are Python's (flask's and click's, ``failures/``). This set runs
``runtime_traces/snippets.toml``: small programs that make five Ruby packages (rack, thor,
addressable, mustermann, sinatra) and five PHP packages (psr7, monolog, symfony/console,
commonmark, twig) of ``doc_questions.py`` raise, with Debian's interpreters and Debian's builds
of the same versions (``apt-get install ruby php-cli ruby-rack ruby-thor ruby-addressable
ruby-mustermann ruby-sinatra php-guzzlehttp-psr7 php-monolog php-twig php-league-commonmark
php-symfony-console``; bookworm's, the packages' .deb files were unpacked from). What the
interpreter prints is kept as it is: the installed paths (``/usr/share/rubygems-integration/
all/gems/rack-2.2.22/lib/rack/utils.rb``, ``/usr/share/php/Twig/…``) are another machine's
paths for the workspace's files, as a user's are. A program whose failure does not pass
through the package's own files, or whose installed file differs from the workspace's, is
reported and left out.

Gold: the innermost frame in the package's files (the shared rule for traces: where the fix
goes), its file and line. Two cases a failure: ``trace``, everything the interpreter printed,
and ``message``, its error line alone without the place (Ruby's ``path:line:in 'm': `` before
it, PHP's `` in path:line`` after it), as a log or a bug report quotes it. Reported per
language and kind: MRR@10 at file level, line@1 / line@10 (a result among the first one /
ten holds the gold line) and the two refusal numbers; ``depth`` deep, no time limit.

  python bench/runtime_traces.py --packages DIR [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from common import CACHE_ROOT, log
from held_out import answers, write_report

HERE = Path(__file__).resolve().parent
SNIPPETS = HERE / "runtime_traces" / "snippets.toml"
RUBY_GEMS = Path("/usr/share/rubygems-integration/all/gems")
PHP_ROOT = Path("/usr/share/php")
# Where Debian installs each PHP package's files (a Ruby gem's folder is its name-version).
PHP_DIRS = {
    "psr7-2.4.5": "GuzzleHttp/Psr7",
    "monolog-2.9.1": "Monolog",
    "symfony-console-5.4.53": "Symfony/Component/Console",
    "commonmark-2.3.9": "League/CommonMark",
    "twig-3.5.1": "Twig",
}
_RUBY_FRAME = re.compile(r"^\s*(?:from )?(\S+\.rb):(\d+):in ", re.M)
_RUBY_PLACE = re.compile(r"^\S+\.rb:\d+:in [`'][^'\n]*': ")
_PHP_FRAME = re.compile(r"(?:^#\d+ (\S+\.php)\((\d+)\)| in (\S+\.php):(\d+)$)", re.M)
_PHP_PLACE = re.compile(r" in \S+\.php:\d+$")


@dataclass
class Case:
    project: str
    language: str
    kind: str  # trace | message
    name: str
    query: str
    path: str  # gold: the innermost frame in the package's files
    line: int


def _installed(project: str, language: str) -> Path:
    return RUBY_GEMS / project if language == "ruby" else PHP_ROOT / PHP_DIRS[project]


def _innermost(output: str, language: str, root: Path) -> tuple[str, int] | None:
    """The first frame (innermost) whose file is under the package's installed folder."""
    if language == "ruby":
        frames = [(m.group(1), int(m.group(2))) for m in _RUBY_FRAME.finditer(output)]
    else:  # PHP: the throw site on the error line, then #0 (innermost) outwards
        frames = [
            (m.group(1) or m.group(3), int(m.group(2) or m.group(4)))
            for m in _PHP_FRAME.finditer(output)
        ]
    prefix = str(root) + "/"
    return next(((p[len(prefix) :], n) for p, n in frames if p.startswith(prefix)), None)


def _error_line(output: str, language: str) -> str:
    first = output.strip().splitlines()[0]
    return _RUBY_PLACE.sub("", first) if language == "ruby" else _PHP_PLACE.sub("", first)


def build_cases(packages: Path) -> list[Case]:
    snippets = tomllib.loads(SNIPPETS.read_text(encoding="utf-8"))
    cases: list[Case] = []
    for language in ("ruby", "php"):
        for s in snippets[language]:
            root = _installed(s["package"], language)
            cmd = ["ruby", "-e", s["code"]] if language == "ruby" else ["php", "-r", s["code"]]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd="/tmp")
            output = (run.stderr if language == "ruby" else run.stderr or run.stdout).strip()
            gold = _innermost(output, language, root) if run.returncode else None
            label = f"{s['package']} {s['name']}"
            if gold is None:
                log(f"left out, no frame in the package: {label}: {output[:120]!r}")
                continue
            path, line = gold  # relative to the installed folder, as to the workspace
            ours = packages / s["package"] / path
            if not ours.is_file() or ours.read_bytes() != (root / path).read_bytes():
                log(f"left out, the installed file differs from the workspace's: {label}")
                continue
            lang = "Ruby" if language == "ruby" else "PHP"
            for kind, query in (("trace", output), ("message", _error_line(output, language))):
                cases.append(Case(s["package"], lang, kind, s["name"], query, path, line))
    return cases


def ask(root: Path, index_root: Path, cases: list[Case]) -> list[dict]:
    rows = []
    for case, res in answers(root, index_root, cases):
        files = list(dict.fromkeys(r.path for r in res.results))
        rank = next((i + 1 for i, f in enumerate(files[:10]) if f == case.path), None)
        hits = [r.path == case.path and r.start <= case.line <= r.end for r in res.results[:10]]
        rows.append(
            {
                **asdict(case),
                "rank": rank,
                "line@1": bool(hits) and hits[0],
                "line@10": any(hits),
                "gold@5": case.path in files[:5],
                "top": [f"{r.path}:{r.start}-{r.end} {r.symbol}" for r in res.results[:5]],
                "intent": res.intent,
                "insufficient": res.insufficient,
                "confidence": res.confidence,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| language | kind | n | MRR@10 | line@1 | line@10 | refused while right "
        "| accepted while wrong |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for lang in ("Ruby", "PHP", "all"):
        for kind in ("trace", "message"):
            group = [r for r in rows if lang in ("all", r["language"]) and r["kind"] == kind]
            if not group:
                continue
            n = len(group)
            mrr = sum(1 / r["rank"] for r in group if r["rank"]) / n
            first = sum(r["line@1"] for r in group) / n
            ten = sum(r["line@10"] for r in group) / n
            rr = sum(r["insufficient"] and r["rank"] == 1 for r in group)
            aw = sum(not r["insufficient"] and not r["gold@5"] for r in group)
            lines.append(
                f"| {lang} | {kind} | {n} | {mrr:.3f} | {first:.3f} | {ten:.3f} | {rr} | {aw} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", type=Path, required=True, help="the packages, unpacked")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "traces-idx")
    ap.add_argument("--list", action="store_true", help="print the cases, ask nothing")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cases = build_cases(args.packages)
    if args.list:
        for c in cases:
            print(f"{c.project}\t{c.kind}\t{c.path}:{c.line}\t{c.query.splitlines()[0][:140]}")
        return
    rows = ask(args.packages, args.index_root, cases)
    print(table(rows))
    write_report(rows, "runtime-traces", args.out)


if __name__ == "__main__":
    main()
