#!/usr/bin/env python3
"""Traces through a TypeScript package's build output, asked of the package's sources.

A library written in TypeScript is published compiled: its users' traces name
``node_modules/rxjs/dist/cjs/internal/operators/elementAt.js`` or one bundle
(``node_modules/mobx/dist/mobx.cjs.development.js``), while its repository holds
``src/internal/operators/elementAt.ts`` and has no build. This set asks such traces of the
sources, as a bug report reaches the library's maintainers or a user reads the library.

``built_traces/snippets.toml`` lists the packages (rxjs, ajv, effect: a build file per source
file; mobx, immer: bundles) and small programs that make them fail. Each package is installed
from npm at its pinned version into ``--work``; its workspace is the installed package without
its build folders (what the tarball ships of its sources: ``src/``, ajv's ``lib/``). Each
program runs twice with Node:

- plainly: what it prints is the question (kind ``trace``);
- with ``--enable-source-maps``, which maps every frame back to the source the package ships
  its source maps for: the gold is the innermost of those frames in the package's sources,
  past the frames that only make the error (a constructor, ``at new …``, and the package's error
  factories the TOML names: rxjs's ``_super``, mobx's and immer's ``die``), so it is the
  statement that decided to fail. Node, not the engine, labels the gold.

Where a package built from another text than the source it ships (Redux Toolkit rewrites
its ``throw`` statements first), the gold line is the shipped file's one line that reads like
the line the map points at (the map's ``sourcesContent``). A program whose mapped trace has no
such frame, or whose line cannot be found so, is reported and left out. Reported per package:
MRR@10 at file level, line@1 / line@10 (a result among the first one / ten holds the gold
line) and the two refusal numbers; ``depth`` deep, no time limit.

With ``--form sentry-mcp`` each trace is asked as Sentry's MCP server shows its issue to an
agent (``sentry_events.py``): frames oldest first, each ``path:line:col (function)``.

  python bench/built_traces.py [--work DIR] [--index-root DIR] [--form F] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

import sentry_events
from common import CACHE_ROOT, log
from held_out import place_table, write_report
from runtime_traces import ask  # a place's file and line, as runtime_traces.py asks them

SNIPPETS = Path(__file__).resolve().parent / "built_traces" / "snippets.toml"
# A V8 frame with an absolute path: ``at fn (/p/x.js:1:2)`` or ``at /p/x.js:1:2``.
_FRAME = re.compile(r"^\s*at (?:(.+?) \()?(/[^\s()]+?):(\d+):\d+\)?\s*$", re.M)


@dataclass
class Case:
    project: str
    language: str
    kind: str
    name: str
    query: str
    path: str  # gold: the first frame past the error's making, in the package's sources
    line: int


def _function(called: str | None) -> str:
    """A frame's function by its own name: ``Immer2.produce [as produce]`` → ``produce``."""
    called = re.sub(r" \[as [^\]]+\]$", "", called or "")
    return re.sub(r"^(?:async |new )", "", called).rsplit(".", 1)[-1]


def gold_frame(mapped: str, root: Path, build: list[str], factories: list[str]) -> tuple[str, int]:
    """The innermost frame of the mapped trace in the package's sources, skipping the frames
    that make the error; ``("", 0)`` when there is none."""
    prefix = str(root) + "/"
    for m in _FRAME.finditer(mapped):
        called, path, line = m.group(1) or "", m.group(2), int(m.group(3))
        if not path.startswith(prefix):
            continue
        rel = path[len(prefix) :]
        if rel.split("/", 1)[0] in build:  # no source map for this file
            continue
        if called.startswith("new ") or _function(called) in factories:
            continue
        return rel, line
    return "", 0


def mapped_sources(root: Path, build: list[str]) -> dict[str, str]:
    """What the package's source maps say each source held when it was built (their
    ``sourcesContent``), by path relative to the package."""
    out: dict[str, str] = {}
    for folder in build:
        for map_file in sorted((root / folder).rglob("*.map")):
            try:
                data = json.loads(map_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            contents = data.get("sourcesContent") or []
            for source, text in zip(data.get("sources", []), contents, strict=False):
                rel = os.path.relpath(os.path.normpath(map_file.parent / source), root)
                if isinstance(text, str) and not rel.startswith(".."):
                    out.setdefault(rel, text)
    return out


def shipped_line(built_from: str | None, shipped: str, line: int) -> int:
    """The gold line in the source file as shipped: the same, unless the package built from a
    different text (Redux Toolkit rewrites its ``throw`` statements before building): then the
    one line of the shipped file that reads like the built-from line, or holds its longest
    string literal (the message); 0 when none or several do."""
    if built_from is None or built_from == shipped:
        return line
    lines = built_from.splitlines()
    want = lines[line - 1].strip() if line <= len(lines) else ""
    literal = re.compile(r"'([^'\n]{12,})'|\"([^\"\n]{12,})\"")
    texts = sorted((a or b for a, b in literal.findall(want)), key=len, reverse=True)
    keys = [want, *texts[:1]]
    for key in (k for k in keys if k):
        same = [i for i, t in enumerate(shipped.splitlines(), 1) if key in t.strip()]
        if len(same) == 1:
            return same[0]
    return 0


def install(work: Path, packages: dict[str, dict]) -> None:
    """The pinned versions, from npm, into ``work/node_modules`` (once)."""
    wanted = {name: spec["version"] for name, spec in packages.items()}
    have = {}
    for name in wanted:
        meta = work / "node_modules" / name / "package.json"
        if meta.is_file():
            have[name] = json.loads(meta.read_text())["version"]
    if have == wanted:
        return
    work.mkdir(parents=True, exist_ok=True)
    (work / "package.json").write_text(json.dumps({"private": True, "dependencies": wanted}))
    log(f"npm install {' '.join(f'{n}@{v}' for n, v in wanted.items())}")
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--no-package-lock"],
        cwd=work,
        check=True,
        capture_output=True,
    )


def workspace(work: Path, name: str, build: list[str]) -> Path:
    """The installed package without its build folders: its sources, as its repository has."""
    ws = work / "ws" / name
    if not ws.is_dir():
        src = work / "node_modules" / name
        shutil.copytree(src, ws, ignore=lambda d, names: build if Path(d) == src else [])
    return ws


def build_cases(work: Path) -> list[Case]:
    spec = tomllib.loads(SNIPPETS.read_text(encoding="utf-8"))
    packages: dict[str, dict] = spec["packages"]
    install(work, packages)
    cases: list[Case] = []
    built_from: dict[str, dict[str, str]] = {}
    for s in spec["snippets"]:
        pkg = packages[s["package"]]
        label = f"{s['package']} {s['name']}"
        root = work / "node_modules" / s["package"]
        ws = workspace(work, s["package"], pkg["build"])
        outputs = []
        for flags in ([], ["--enable-source-maps"]):
            run = subprocess.run(
                ["node", *flags, "-e", s["code"]],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=work,
            )
            outputs.append(run.stderr.strip() if run.returncode else "")
        plain, mapped = outputs
        path, line = gold_frame(mapped, root, pkg["build"], pkg["factories"])
        if not plain or not path or not (ws / path).is_file():
            log(f"left out, no mapped frame in the package's sources: {label}")
            continue
        if s["package"] not in built_from:
            built_from[s["package"]] = mapped_sources(root, pkg["build"])
        shipped = (ws / path).read_text(encoding="utf-8")
        line = shipped_line(built_from[s["package"]].get(path), shipped, line)
        if not line:
            log(f"left out, the shipped source differs where the map points: {label}")
            continue
        cases.append(Case(s["package"], "typescript", "trace", s["name"], plain, path, line))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=CACHE_ROOT / "built-traces")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "built-traces-idx")
    ap.add_argument(
        "--form",
        choices=("pasted", "sentry-mcp"),
        default="pasted",
        help="each trace as printed, or as Sentry's MCP server shows its issue to an agent",
    )
    ap.add_argument("--list", action="store_true", help="print the cases, ask nothing")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cases = build_cases(args.work)
    if args.form == "sentry-mcp":
        cases = [
            replace(c, query=sentry_events.mcp_answer(sentry_events.v8_api_event(c.query)))
            for c in cases
        ]
    if args.list:
        for c in cases:
            print(f"{c.project}\t{c.name}\t{c.path}:{c.line}\t{c.query.splitlines()[0][:100]}")
        return
    rows = ask(args.work / "ws", args.index_root, cases)
    projects = sorted({c.project for c in cases})
    groups = [(p, lambda r, p=p: r["project"] == p) for p in projects]
    print(place_table(rows, [*groups, ("all", lambda r: True)], "package", "line"))
    write_report(rows, "built-traces", args.out)


if __name__ == "__main__":
    main()
