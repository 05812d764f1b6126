#!/usr/bin/env python3
"""Held out: failures of four Python packages no rule was tuned on, pasted as pytest, IPython
and Rich print them.

The dev groups of this folder (``make_report_cases.py``) are flask's and click's failures. This
set runs ``held_out.toml``: small user mistakes that make arrow, marshmallow, requests and rich
raise inside their own code (the workspaces of ``docstring_sets.py``'s English sets, made by
``docstring_sets.materialize``), each first as a script (its traceback's innermost frame in the
package is the gold: file and line), then as ``def test_app():`` under pytest 9.0.2 (its default
``--tb=auto``), then as a cell of IPython 9.18.1 (``python -m IPython -c``, as Jupyter shows it).
and as a script again with Rich's tracebacks installed (``rich.traceback.install()``, as Typer
shows an uncaught error). Four cases a failure: ``report`` (the failure section, as
``make_report_cases.py`` cuts it), ``summary`` (its ``FAILED`` line at 80 columns), ``ipython``
(IPython's traceback, from its first rule) and ``rich`` (Rich's box and the error under it); the
last two kept when they name the gold frame. The snippets run with a scratch
venv of the packages' pinned dependencies (``make_cases.ensure_venv``). Reported per kind:
MRR@10 at file level, line@1 / line@10 and the two refusal numbers; ``depth`` deep.

  python bench/test_reports/held_out_reports.py [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path.insert(0, str(BENCH / "failures"))  # the frozen generator
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(BENCH))  # common.py first: it puts server/ on sys.path

from make_cases import SNIPPET_TIMEOUT_S, ensure_venv  # noqa: E402
from make_report_cases import IPYTHON, IPYTHON_RULE, PYTEST, SECTION_END  # noqa: E402

from common import CACHE_ROOT, log  # noqa: E402
from docstring_sets import dataset_name, materialize  # noqa: E402
from held_out import place_rows, place_table, write_report  # noqa: E402

SNIPPETS = HERE / "held_out.toml"
# The packages' dependencies and pytest, pinned: the releases current when the set was made.
DEPS = (
    PYTEST,
    "python-dateutil==4.0.0",
    "urllib3==2.8.0",
    "idna==3.20",
    "charset-normalizer==3.5.3",
    "certifi==2026.10.19.post1",
    "markdown-it-py==4.3.0",
    *IPYTHON,  # pygments among them
    "rich==15.0.0",  # its tracebacks; rich's own snippets run the workspace's, first on the path
)
# What makes a script's uncaught exception Rich's traceback (Typer's default display).
RICH_INSTALL = "from rich.traceback import install\ninstall()\n"
_FRAME = re.compile(r'^  File "([^"]+)", line (\d+)', re.M)
HEADER = re.compile(r"_+ test_app _+")


@dataclass
class Case:
    project: str  # the workspace's folder name (held_out.answers indexes root / project)
    kind: str  # report | summary | ipython | rich
    name: str
    query: str
    path: str  # gold: the innermost frame in the package's files
    line: int


def run(
    python: Path, src: Path, args: list[str], code: str, cwd: Path
) -> subprocess.CompletedProcess:
    """``python ARGS`` in ``cwd`` with the package's sources first on the path, ``code`` on
    stdin; a fixed environment, as the frozen generator's."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(src),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": str(cwd),
        "TERM": "dumb",
        "COLUMNS": "80",
    }
    return subprocess.run(
        [str(python), *args],
        input=code,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=SNIPPET_TIMEOUT_S,
    )


def build_cases(python: Path) -> tuple[Path, list[Case]]:
    snippets = tomllib.loads(SNIPPETS.read_text(encoding="utf-8"))
    cases: list[Case] = []
    root = Path()
    for package, items in snippets.items():
        ws = materialize(package)
        root = ws.parent
        src = ws / "src" if (ws / "src").is_dir() else ws
        for item in items:
            name, code = item["name"], item["code"]
            with tempfile.TemporaryDirectory(prefix="heldout-") as tmp:
                cwd = Path(tmp)
                script = run(python, src, ["-"], code, cwd)
                frames = [
                    (Path(p), int(n))
                    for p, n in _FRAME.findall(script.stderr)
                    if Path(p).is_relative_to(src)
                ]
                if script.returncode == 0 or not frames:
                    log(f"left out, no frame in the package: {package} {name}")
                    continue
                path, line = frames[-1]
                (cwd / "test_app.py").write_text(
                    "def test_app():\n" + textwrap.indent(code, "    "), encoding="utf-8"
                )
                args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"]
                lines = run(python, src, args, "", cwd).stdout.splitlines()
                ipython = ["-m", "IPython", "--colors=nocolor", "--no-banner", "-c", code]
                shown = run(python, src, ipython, "", cwd).stdout
                boxed = run(python, src, ["-"], RICH_INSTALL + code, cwd).stderr
            head = next((i for i, s in enumerate(lines) if HEADER.fullmatch(s)), None)
            summary = next((s for s in lines if s.startswith("FAILED ")), None)
            if head is None or summary is None:
                log(f"left out, pytest printed no failure: {package} {name}")
                continue
            end = next(
                (i for i in range(head + 1, len(lines)) if SECTION_END.match(lines[i])), len(lines)
            )
            gold = str(path.relative_to(ws))
            project = dataset_name(package)
            cases.append(Case(project, "report", name, "\n".join(lines[head:end]), gold, line))
            cases.append(Case(project, "summary", name, summary, gold, line))
            rule = IPYTHON_RULE.search(shown)
            if rule is not None and f"{path}:{line}" in shown:
                cases.append(
                    Case(project, "ipython", name, shown[rule.start() :].strip(), gold, line)
                )
            else:
                log(f"left out of ipython, it printed another failure: {package} {name}")
            box = boxed.find("╭")
            # The box wraps a long place onto the next line: its lines joined, it is whole.
            if box >= 0 and f"{path}:{line}" in re.sub(r"\s*│\n│ ", "", boxed):
                cases.append(Case(project, "rich", name, boxed[box:].strip(), gold, line))
            else:
                log(f"left out of rich, it printed another failure: {package} {name}")
    return root, cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "test-reports-idx")
    ap.add_argument("--venv-root", type=Path, default=CACHE_ROOT / "failures-venv")
    ap.add_argument("--python", default=sys.executable, help="base interpreter for the venv")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    python = ensure_venv(args.venv_root.expanduser(), args.python, DEPS)
    root, cases = build_cases(python)
    rows = place_rows(
        root,
        args.index_root,
        cases,
        lambda c: [c.path],
        lambda c, r: r.path == c.path and r.start <= c.line <= r.end,
        "line",
    )
    kinds = [
        (kind, lambda r, kind=kind: r["kind"] == kind)
        for kind in ("report", "summary", "ipython", "rich")
    ]
    print(place_table(rows, kinds, "kind", "line"))
    write_report(rows, "test-reports-held-out", args.out)


if __name__ == "__main__":
    main()
