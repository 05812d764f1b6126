#!/usr/bin/env python3
"""Compiler and linter reports from CI, asked of the dev set's checkouts.

A check that fails in CI prints its diagnostics with the CI machine's absolute paths, in the
tool's own layout, and that is what gets pasted. Five real tools, run here on the dev set's
``--history`` checkouts:

- **pyright** (npm ``pyright``; flask's and click's five checkouts): the file's path alone,
  then ``  /…/app.py:218:5 - error: …`` and the lines that explain it;
- **mypy** ``--strict --show-absolute-path`` (PyPI ``mypy``; the same five, of which flask
  3.1.0 and click 8.3.0 pass):
  ``/…/app.py:42: error: … [code]``;
- **ruff** (this project's own linter, ``--select E,F,B,UP,SIM``; flask 2.0.0 and click
  8.3.0) as GitHub Actions annotations, the form linters print for CI: ``::error title=ruff
  (UP036),file=/…/cli.py,line=604,…::src/flask/cli.py:604:12: UP036 …``;
- **ESLint**'s default report (npm ``eslint`` 8, a few core rules; fastify's ``lib/``, less
  what the project keeps out of its own lint, its generated validators): the file's path
  alone, then ``  10:45  error  'x' is assigned a value but never used
  no-unused-vars``, and its count line;
- **javac** ``-Xlint:all -Xdoclint:all`` (the JDK here; javapoet's ``src/main/java``):
  ``/…/TypeName.java:243: warning: [deprecation] …`` with the code line and the caret javac
  prints under it.

Each diagnostic is asked twice, printed as the tool prints it: with the checkout's folder
replaced by a CI runner's (``/home/runner/work/flask/flask/``; ``ci``), and with paths relative
to the checkout (``local``: javac and mypy print what they were given; ESLint and pyright always
print absolute paths, so this is how a user shortens them). Up to ``--per-run`` diagnostics per
tool and workspace are drawn with a fixed seed, one per line of code. The gold is the place the
diagnostic names (its file, and a result holding its line). Reported per tool: MRR@10 at file
level, line@1 / line@10, and the two refusal numbers; ``depth`` deep, no time limit. Run
``quality.py --history`` first: the checkouts and their indexes are its.

  python bench/diagnostics.py [--tools DIR] [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from common import CACHE_ROOT, log
from devset import DEFAULT_INDEX_ROOT, DEFAULT_WS
from held_out import place_table, write_report
from runtime_traces import ask  # a place's file and line, as runtime_traces.py asks them

NPM_TOOLS = ("pyright@1.1.390", "eslint@8.57.1")
MYPY = "mypy==1.13.0"
RUFF_RULES = "E,F,B,UP,SIM"
ESLINT_RULES = ("no-unused-vars:error", "eqeqeq:error", "no-var:warn", "prefer-const:warn")
# Which tool reads which workspace, and where in it.
RUNS = (
    *(
        ("pyright", d, "src/" + d.split("-")[0])
        for d in ("flask-2.0.0-commits", "flask-2.1.0-commits")
    ),
    *(
        ("pyright", d, "src/" + d.split("-")[0])
        for d in ("flask-3.1.0-commits", "click-8.1.7-commits")
    ),
    ("pyright", "click-8.3.0-commits", "src/click"),
    *(
        ("mypy", d, "src/" + d.split("-")[0])
        for d in ("flask-2.0.0-commits", "flask-2.1.0-commits")
    ),
    *(
        ("mypy", d, "src/" + d.split("-")[0])
        for d in ("flask-3.1.0-commits", "click-8.1.7-commits")
    ),
    ("mypy", "click-8.3.0-commits", "src/click"),
    ("ruff", "flask-2.0.0-commits", "src/flask"),
    ("ruff", "click-8.3.0-commits", "src/click"),
    ("eslint", "fastify-v4.24.0-commits", "lib"),
    ("javac", "javapoet-1.9.0-commits", "src/main/java"),
)


@dataclass
class Case:
    project: str
    tool: str
    form: str  # "ci": a CI runner's absolute paths; "local": relative, run from the checkout
    query: str
    path: str  # gold: the file the diagnostic names, and its line
    line: int


def install(tools: Path) -> tuple[Path, Path]:
    """The npm tools and a virtual environment with mypy, under ``tools`` (once)."""
    bin_dir, venv = tools / "node_modules" / ".bin", tools / "venv"
    if not (bin_dir / "eslint").exists():
        log(f"npm install {' '.join(NPM_TOOLS)}")
        tools.mkdir(parents=True, exist_ok=True)
        cmd = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(tools), *NPM_TOOLS]
        subprocess.run(cmd, check=True, capture_output=True)
    if not (venv / "bin" / "mypy").exists():
        subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "--quiet", MYPY]
        subprocess.run(pip, check=True, capture_output=True)
    return bin_dir, venv


def run_tool(tool: str, ws: Path, target: Path, bin_dir: Path, venv: Path, out: Path) -> str:
    """What the tool prints for ``target`` (its diagnostics, whatever its exit status)."""
    if tool == "pyright":
        cmd = [str(bin_dir / "pyright"), str(target)]
    elif tool == "mypy":
        cmd = [str(venv / "bin" / "mypy"), "--strict", "--show-absolute-path"]
        cmd += ["--no-incremental", "--no-error-summary", "--ignore-missing-imports", str(target)]
    elif tool == "ruff":
        cmd = [str(Path(sys.executable).parent / "ruff"), "check", "--no-cache", "--isolated"]
        cmd += ["--output-format", "github", "--select", RUFF_RULES, str(target)]
    elif tool == "eslint":
        cmd = [str(bin_dir / "eslint"), "--no-eslintrc", "--env", "node,es2022"]
        cmd += ["--parser-options", "ecmaVersion:2022"]
        cmd += [a for rule in ESLINT_RULES for a in ("--rule", rule)]
        cmd += [a for glob in _lint_ignores(ws) for a in ("--ignore-pattern", glob)]
        cmd.append(str(target))
    else:
        sources = sorted(str(p) for p in target.rglob("*.java"))
        cmd = ["javac", "-Xlint:all", "-Xdoclint:all", "-Xmaxwarns", "10000", "-d", str(out)]
        cmd += sources
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ws)
    return run.stdout + run.stderr


def _lint_ignores(ws: Path) -> list[str]:
    """The files the project keeps out of its own lint (``standard``'s ``ignore`` in its
    ``package.json``: fastify's generated validators)."""
    try:
        standard = json.loads((ws / "package.json").read_text(encoding="utf-8")).get("standard")
    except (OSError, ValueError):
        return []
    ignore = standard.get("ignore", []) if isinstance(standard, dict) else []
    return [g for g in ignore if isinstance(g, str)]


def blocks(tool: str, output: str) -> list[tuple[str, int, str]]:
    """Each diagnostic as (absolute path, line, what the tool printed for it alone)."""
    out: list[tuple[str, int, str]] = []
    lines = output.split("\n")
    if tool == "pyright":
        for i, text in enumerate(lines):
            m = re.match(r"^  (/\S+?):(\d+):\d+ - (?:error|warning)", text)
            if m is None:
                continue
            more = []
            for nxt in lines[i + 1 :]:
                if not nxt.startswith("    "):
                    break
                more.append(nxt)
            out.append((m.group(1), int(m.group(2)), "\n".join([m.group(1), text, *more])))
    elif tool == "mypy":
        for text in lines:
            m = re.match(r"^(/\S+?):(\d+): error: ", text)
            if m is not None:
                out.append((m.group(1), int(m.group(2)), text))
    elif tool == "ruff":
        for text in lines:
            m = re.match(r"^::error .*?\bfile=([^,]+),line=(\d+),", text)
            if m is not None:
                out.append((m.group(1), int(m.group(2)), text))
    elif tool == "eslint":
        file = ""
        for text in lines:
            if text.startswith("/"):
                file = text.strip()
                continue
            m = re.match(r"^\s+(\d+):\d+\s+(error|warning)\s", text)
            if m is not None and file:
                error = m.group(2) == "error"
                count = f"✖ 1 problem ({int(error)} error{'' if error else 's'}, "
                count += f"{int(not error)} warning{'s' if error else ''})"
                out.append((file, int(m.group(1)), f"{file}\n{text}\n\n{count}"))
    else:
        for i, text in enumerate(lines):
            m = re.match(r"^(/\S+?\.java):(\d+): (?:warning|error): ", text)
            if m is not None:
                shown = "\n".join([text, *lines[i + 1 : i + 3]])
                out.append((m.group(1), int(m.group(2)), shown))
    return out


def build_cases(ws_root: Path, tools: Path, per_run: int, seed: int) -> list[Case]:
    bin_dir, venv = install(tools)
    cases: list[Case] = []
    for tool, dataset, folder in RUNS:
        ws = ws_root / dataset
        if not ws.is_dir():
            log(f"{dataset}: no checkout (run quality.py --history first); skipped")
            continue
        output = run_tool(tool, ws, ws / folder, bin_dir, venv, tools / "javac-out")
        found = blocks(tool, output)
        seen: set[tuple[str, int]] = set()
        unique = []
        for path, line, shown in found:
            if path.startswith(f"{ws}/") and (path, line) not in seen:
                seen.add((path, line))
                unique.append((path, line, shown))
        picked = random.Random(f"{seed}:{tool}:{dataset}").sample(unique, min(per_run, len(unique)))
        name = dataset.split("-", 1)[0]
        runner = f"/home/runner/work/{name}/{name}"
        log(f"{tool} on {dataset}: {len(found)} diagnostics, {len(picked)} asked")
        for path, line, shown in picked:
            rel = path[len(str(ws)) + 1 :]
            cases.append(Case(dataset, tool, "ci", shown.replace(str(ws), runner), rel, line))
            local = shown.replace(f"{ws}/", "")
            cases.append(Case(dataset, tool, "local", local, rel, line))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ws", type=Path, default=DEFAULT_WS["history"])
    ap.add_argument("--index-root", type=Path, default=DEFAULT_INDEX_ROOT["history"])
    ap.add_argument("--tools", type=Path, default=CACHE_ROOT / "diagnostic-tools")
    ap.add_argument("--per-run", type=int, default=20, help="diagnostics per tool and workspace")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--list", action="store_true", help="print the cases, ask nothing")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cases = build_cases(args.ws, args.tools, args.per_run, args.seed)
    if args.list:
        for c in cases:
            print(f"{c.tool}\t{c.path}:{c.line}\t{c.query.splitlines()[0][:110]}")
        return
    rows = ask(args.ws, args.index_root, cases)
    tools = [*dict.fromkeys(c.tool for c in cases), "all"]
    groups = [
        (f"{t} | {form}", lambda r, t=t, form=form: t in ("all", r["tool"]) and r["form"] == form)
        for form in ("ci", "local")
        for t in tools
    ]
    print(place_table(rows, groups, "tool | paths", "line"))
    write_report(rows, "diagnostics", args.out)


if __name__ == "__main__":
    main()
