#!/usr/bin/env python3
"""Build the test-report dev cases: the failures of ``bench/failures`` as test runners print them.

Most Python developers meet a library's exception in a failing test, and paste what the runner
printed. pytest's failure section has frames as ``path:line: in func`` or a place under the
printed code, the error as ``E   Type: message``; its one-line summary is ``FAILED
test_app.py::test_app - Type: message…``, cut to the terminal's width. unittest (Django's runner
too) prints the interpreter's traceback under ``ERROR: test_app (test_app.AppTest.test_app)``.
The frozen ``bench/failures`` cases hold the interpreter's own tracebacks; these are new groups
beside them, built from the same snippets and labelled with the same gold.

Each ``trace`` case of ``bench/failures/cases`` becomes a test: its snippet, indented into
``def test_app():`` (``test_cli`` for click: a neutral name, as a user's test does not name the
library's failure), in ``test_app.py`` of an empty folder, run with the frozen generator's
environment, interpreter, pins and path rewriting (``bench/failures/make_cases.py``) plus pytest.
Up to five cases per failure, kinds:

- ``pytest-report``: the failure section of pytest's default report (``--tb=auto``: the first
  and last entries long, the rest short), from its ``____ test_app ____`` header to the line
  before the captured output;
- ``pytest-short``: the same under ``--tb=short``;
- ``pytest-summary``: the ``FAILED`` line of the short test summary, at 80 columns; only for the
  first failure with that summary line (the frozen ``message`` rule: the same message from two
  functions cannot be told apart without the trace);
- ``unittest-report``: the snippet as ``AppTest.test_app`` (``CliTest.test_cli``) of a
  ``unittest.TestCase``, run by ``python -m unittest``: its failure section, from the ``====``
  rule above ``ERROR: test_app (…)`` to the rule above ``Ran 1 test``.
- ``ipython-report``: the snippet as a cell of IPython 9.18.1 (``python -m IPython -c``, in a
  venv of its own: the target's pins and IPython's), its traceback from the first rule, as a
  notebook shows it (``File src/flask/app.py:1234, in Flask.x(…)`` over the printed code); kept
  when it names the frame, whatever the other kinds did not.

Gold: the frozen trace case's, kept only when every report prints its file and frame line (the
test ran the library the way the script did). A snippet that fails differently as a test (it
collects nothing, or raises elsewhere) is reported and left out.

  python bench/test_reports/make_report_cases.py [--ws WS-HISTORY]
  python bench/test_reports/make_report_cases.py [--ws WS-HISTORY] --check
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path.insert(0, str(BENCH))  # common.py, devset.py
sys.path.insert(0, str(BENCH / "failures"))  # the frozen generator

from make_cases import (  # noqa: E402
    SNIPPET_TIMEOUT_S,
    TARGETS,
    Rewriter,
    Setup,
    Target,
    base_env,
    ensure_venv,
    interpreter_paths,
    report_check,
    write_cases,
)

from common import CACHE_ROOT, DEFAULT_SHARED, log  # noqa: E402
from devset import load_manifest  # noqa: E402

FAILURES = BENCH / "failures" / "cases"
PYTEST = "pytest==9.0.2"  # the release current when these cases were made
# IPython and what it brings, as pip resolved them; in a venv of its own beside the pytest one,
# so the other reports run where they always ran.
IPYTHON = (
    "ipython==9.18.1",
    "asttokens==3.0.2",
    "executing==2.3.0",
    "ipython_pygments_lexers==1.1.1",
    "jedi==0.20.1",
    "matplotlib-inline==0.2.2",
    "parso==0.8.7",
    "pexpect==4.9.0",
    "prompt_toolkit==3.0.53",
    "ptyprocess==0.7.0",
    "pure_eval==0.2.4",
    "pygments==2.21.0",
    "stack-data==0.6.3",
    "traitlets==5.16.1",
    "wcwidth==0.9.4",
)
IPYTHON_RULE = re.compile(r"^-{20,}$", re.M)  # the first line of an IPython traceback
TEST_NAMES = {"flask": "test_app", "click": "test_cli"}
# unittest's rules: ``====`` above a failure's ``ERROR:``/``FAIL:`` line, ``----`` above ``Ran``.
UNITTEST_HEAD = re.compile(r"^(?:ERROR|FAIL): ")
UNITTEST_END = re.compile(r"^-{20,}$")
# pytest's section rules: ``____ test_app ____`` opens a failure, ``---- Captured stdout call
# ----`` or ``==== short test summary info ====`` ends it.
SECTION_END = re.compile(r"^(?:-{3,} Captured |={3,} )")
RELATIVE = re.compile(r"(?<![\w./])(?:\.\./)+[\w.+-]+(?:/[\w.+-]+)*")


def run_test(setup: Setup, source: str, args: list[str]) -> str | None:
    """What ``python -m ARGS`` printed (both streams) for ``source`` as ``test_app.py`` of an
    empty folder, paths rewritten; None when it timed out or a machine path is left."""
    with tempfile.TemporaryDirectory(prefix="testreport-") as tmp:
        cwd = Path(tmp).resolve()
        (cwd / "test_app.py").write_text(source, encoding="utf-8")
        try:
            cp = subprocess.run(
                [str(setup.python), "-m", *args],
                cwd=cwd,
                env=base_env(cwd, setup.pythonpath),
                capture_output=True,
                text=True,
                timeout=SNIPPET_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return None
        rewrite = Rewriter(setup.ws, setup.extra_src, setup.paths, cwd)
        text = rewrite(absolute(cp.stdout + cp.stderr, cwd))
        return None if rewrite.leaked(text) else text


def run_pytest(setup: Setup, test_name: str, snippet: str, tb: str) -> str | None:
    """pytest's report for the snippet as a test function."""
    source = f"def {test_name}():\n{textwrap.indent(snippet, '    ', lambda line: True)}"
    return run_test(
        setup, source, ["pytest", "-q", "-p", "no:cacheprovider", f"--tb={tb}", "test_app.py"]
    )


def unittest_section(setup: Setup, test_name: str, snippet: str) -> str | None:
    """unittest's failure section for the snippet as a TestCase's test method."""
    source = (
        f"import unittest\n\n\nclass {test_name.removeprefix('test_').title()}Test"
        f"(unittest.TestCase):\n    def {test_name}(self):\n"
        f"{textwrap.indent(snippet, ' ' * 8, lambda line: True)}"
    )
    text = run_test(setup, source, ["unittest", "test_app"])
    lines = (text or "").splitlines()
    head = next((i for i, s in enumerate(lines) if UNITTEST_HEAD.match(s)), None)
    if head is None:
        return None
    end = next((i for i in range(head + 2, len(lines)) if UNITTEST_END.match(lines[i])), None)
    return "\n".join(lines[max(0, head - 1) : end]).rstrip("\n")


def ipython_traceback(setup: Setup, snippet: str) -> str | None:
    """IPython's traceback for the snippet run as a cell (``python -m IPython -c``, as a
    notebook shows it), from its first rule."""
    text = run_test(setup, "", ["IPython", "--colors=nocolor", "--no-banner", "-c", snippet])
    rule = IPYTHON_RULE.search(text or "")
    return None if rule is None or text is None else text[rule.start() :].rstrip("\n")


def absolute(report: str, cwd: Path) -> str:
    """pytest prints a path relative to where it ran when that is shorter (``../venv/lib/…``);
    made absolute, the frozen rewriting maps it like the interpreter's own paths."""
    return RELATIVE.sub(lambda m: os.path.normpath(cwd / m.group(0)), report)


def failure_section(report: str, test_name: str) -> str | None:
    lines = report.splitlines()
    head = next((i for i, s in enumerate(lines) if re.fullmatch(rf"_+ {test_name} _+", s)), None)
    if head is None:
        return None
    end = next((i for i in range(head + 1, len(lines)) if SECTION_END.match(lines[i])), len(lines))
    return "\n".join(lines[head:end]).rstrip("\n")


def summary_line(report: str) -> str | None:
    return next((s for s in report.splitlines() if s.startswith("FAILED test_app.py::")), None)


def cases_for_target(
    target: Target, ws_root: Path, venv_root: Path, base_python: str, entry: dict[str, Any]
) -> list[dict]:
    ws = (ws_root / target.dataset).resolve()
    extra = [(ws_root / d / "src").resolve() for d in target.extra_src]
    for p in [ws, *extra]:
        if not p.is_dir():
            raise SystemExit(f"{p}: missing; materialize it with shared/bench/materialize.py")
    python = ensure_venv(venv_root, base_python, (*target.deps, PYTEST))
    setup = Setup(python, ws, extra, interpreter_paths(python))
    ipython_python = ensure_venv(venv_root, base_python, (*target.deps, *IPYTHON))
    ipython = Setup(ipython_python, ws, extra, interpreter_paths(ipython_python))
    frozen = [
        json.loads(line)
        for line in (FAILURES / f"{target.dataset}.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    test_name = TEST_NAMES[target.library]
    out: list[dict] = []
    summaries: dict[str, str] = {}
    for case in frozen:
        if case["kind"] != "trace":
            continue
        name = case["id"].split(":")[1]
        gold = case["gold"][0]
        place = f"{gold['path']}:{case['frame_line']}:"
        queries: dict[str, str] = {}
        why = ""
        for kind, tb in (("pytest-report", "auto"), ("pytest-short", "short")):
            report = run_pytest(setup, test_name, case["snippet"], tb)
            section = failure_section(report, test_name) if report else None
            if section is None:
                why = f"no failure section under --tb={tb}"
                break
            if place not in section:
                why = f"--tb={tb} does not print {place}"
                break
            queries[kind] = section
            if tb == "auto":
                line = summary_line(report or "")
                if line is not None and line not in summaries:
                    summaries[line] = name
                    queries["pytest-summary"] = line
        if not why:
            section = unittest_section(setup, test_name, case["snippet"])
            frame = f'"{gold["path"]}", line {case["frame_line"]},'
            if section is None or frame not in section:
                why = f"unittest does not print {place}"
            else:
                queries["unittest-report"] = section
            shown = ipython_traceback(ipython, case["snippet"])
            if shown is not None and f"{gold['path']}:{case['frame_line']}," in shown:
                queries["ipython-report"] = shown
            else:
                log(f"  no ipython-report for {name}: IPython does not print {place}")
        if why:
            log(f"  skip {name}: {why}")
            continue
        for kind, query in queries.items():
            out.append(
                {
                    "id": f"{target.dataset}:{name}:{kind}",
                    "repo": case["repo"],
                    "ref": entry["ref"],
                    "kind": kind,
                    "variant": "a",
                    "query": query,
                    "open_file": None,
                    "gold": case["gold"],
                    "dataset": target.dataset,
                    "symbol": case["symbol"],
                    "frame_line": case["frame_line"],
                    "snippet": case["snippet"],
                }
            )
    kept = sum(1 for c in out if c["kind"] == "pytest-report")
    log(f"{target.dataset}: {kept} of {sum(c['kind'] == 'trace' for c in frozen)} failures kept")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--ws", type=Path, default=CACHE_ROOT / "ws-history", help="materialized workspaces"
    )
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared bench folder")
    ap.add_argument("--out", type=Path, default=HERE / "cases", help="where the JSONL files go")
    ap.add_argument("--venv-root", type=Path, default=CACHE_ROOT / "failures-venv")
    ap.add_argument("--python", default=sys.executable, help="base interpreter for the venvs")
    ap.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    args = ap.parse_args(argv)

    manifest = {d["name"]: d for d in load_manifest(args.shared)}
    differ = []
    for t in TARGETS:
        cases = cases_for_target(
            t, args.ws, args.venv_root.expanduser(), args.python, manifest[t.dataset]
        )
        out = args.out / f"{t.dataset}.jsonl"
        if write_cases(out, cases, args.check):
            differ.append(str(out))
    return report_check(differ, args.check)


if __name__ == "__main__":
    sys.exit(main())
