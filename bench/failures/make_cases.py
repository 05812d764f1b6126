#!/usr/bin/env python3
"""Build the failure dev cases: real tracebacks from the flask/click dev workspaces.

Every snippet of ``snippets.toml`` runs in a subprocess against the workspace's own ``src/``
(``PYTHONPATH``), so the library code that raises is exactly the indexed code and the line
numbers in the traceback are the workspace's. Dependencies come from a scratch venv with pinned
versions (never flask or click themselves: flask's click comes from a click workspace). The gold
is the innermost workspace frame of the final exception, widened to its enclosing function.

Paths in the stored text are rewritten so no machine path leaks and the cases are the same on
every machine: workspace frames become ``src/flask/app.py``, dependencies ``site-packages/...``,
the standard library ``/usr/lib/python3.X/...``, the snippet's working folder ``/srv/app``.
Tracebacks differ between Python minor versions (caret lines, stdlib line numbers), so the
committed cases were made with one interpreter; ``--check`` says whether a rerun matches them.

  python bench/failures/make_cases.py --ws ~/.cache/code-evidence-bench/ws
  python bench/failures/make_cases.py --ws ~/.cache/code-evidence-bench/ws --check
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # bench/: common.py, devset.py

from common import CACHE_ROOT, DEFAULT_SHARED, log  # noqa: E402
from devset import load_manifest  # noqa: E402

SNIPPETS_FILE = HERE / "snippets.toml"
SNIPPET_TIMEOUT_S = 60
FAKE_CWD = "/srv/app"
MODULE_CONTEXT = 3  # gold half-width (lines) for a frame at module level

Snippets = dict[str, tuple[tuple[str, str], ...]]  # library -> ((name, code), ...) in run order


def load_snippets(path: Path = SNIPPETS_FILE) -> Snippets:
    """The snippets of ``snippets.toml`` per library (``[[flask]]``, ``[[click]]`` tables), in
    file order, each code exactly as written between its quotes. Names must be unique within a
    library: they are part of the case ids."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    out: Snippets = {}
    for library, items in data.items():
        pairs = tuple((str(item["name"]), str(item["code"])) for item in items)
        names = [name for name, _ in pairs]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise SystemExit(f"{path}: [[{library}]] names used twice: {', '.join(repeated)}")
        out[library] = pairs
    return out


@dataclass(frozen=True, slots=True)
class Target:
    """One workspace and the interpreter setup its library needs."""

    dataset: str
    library: str  # flask | click: which snippet list, and the package that must load from src/
    deps: tuple[str, ...]  # pinned pip requirements of the scratch venv
    extra_src: tuple[str, ...] = ()  # other workspaces whose src/ is a dependency (flask -> click)


# Pins are releases current at each tag's date, so the dependency frames look like a user's.
TARGETS: tuple[Target, ...] = (
    Target(
        "flask-3.1.0-commits",
        "flask",
        (
            "werkzeug==3.1.3",
            "jinja2==3.1.4",
            "itsdangerous==2.2.0",
            "blinker==1.9.0",
            "markupsafe==3.0.2",
        ),
        ("click-8.3.0-commits",),
    ),
    Target(
        "flask-2.0.0-commits",
        "flask",
        ("werkzeug==2.0.0", "jinja2==3.0.0", "itsdangerous==2.0.0", "markupsafe==2.0.0"),
        ("click-8.1.7-commits",),
    ),
    Target("click-8.3.0-commits", "click", ()),
    Target("click-8.1.7-commits", "click", ()),
)

FRAME_RE = re.compile(r'^  File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
TRACEBACK_HEAD = "Traceback (most recent call last):"
# Object reprs carry memory addresses that change every run; one fixed address keeps reruns equal.
ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")
FIXED_ADDRESS = " at 0x7f3a2c1b9d40"


@dataclass(frozen=True, slots=True)
class Frame:
    path: str  # as rewritten: workspace-relative for workspace files
    line: int
    func: str


@dataclass(frozen=True, slots=True)
class Failure:
    name: str
    snippet: str
    trace: str  # rewritten traceback text
    message: str  # the exception line ("Type: first line of the message")
    path: str
    start: int
    end: int
    frame_line: int
    symbol: str


# --------------------------------------------------------------------------- interpreter


def ensure_venv(root: Path, base_python: str, deps: tuple[str, ...]) -> Path:
    """A venv with exactly ``deps``, keyed by interpreter version and pins; made once."""
    version = subprocess.run(
        [base_python, "-c", "import sys; print(sys.version)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    key = hashlib.sha256("\n".join([version, *deps]).encode()).hexdigest()[:12]
    venv = root / f"venv-{key}"
    python = venv / "bin" / "python"
    done = venv / ".complete"  # written last: a half-made venv (interrupted pip) is redone
    if done.is_file():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    if deps:
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, *deps], check=True)
    done.write_text("\n".join(deps) + "\n", encoding="utf-8")
    return python


def base_env(cwd: Path, pythonpath: list[Path]) -> dict[str, str]:
    """A fixed environment: nothing from the caller's shell (FLASK_APP, colours...) leaks in."""
    return {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join(str(p) for p in pythonpath),
        "PYTHONDONTWRITEBYTECODE": "1",  # never write __pycache__ into a workspace
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(cwd),
        "TMPDIR": str(cwd),
        "TERM": "dumb",
        "COLUMNS": "80",
    }


def interpreter_paths(python: Path) -> dict[str, str]:
    code = "import json, sys, sysconfig; print(json.dumps([sysconfig.get_paths(), sys.version]))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    paths, version = json.loads(out.stdout)
    return {
        "stdlib": paths["stdlib"],
        "platstdlib": paths["platstdlib"],
        "purelib": paths["purelib"],
        "platlib": paths["platlib"],
        "version": version,
    }


# --------------------------------------------------------------------------- tracebacks


class Rewriter:
    """Machine paths -> stable, neutral ones; longest prefix first so nested folders win."""

    def __init__(self, ws: Path, extra_src: list[Path], paths: dict[str, str], cwd: Path):
        major_minor = ".".join(paths["version"].split(".")[:2])
        stdlib = f"/usr/lib/python{major_minor}/"
        pairs = {f"{ws}/": "", f"{cwd}/": f"{FAKE_CWD}/", str(cwd): FAKE_CWD}
        for src in extra_src:
            pairs[f"{src}/"] = "site-packages/"
        for key in ("purelib", "platlib"):
            pairs[f"{paths[key]}/"] = "site-packages/"
        for key in ("stdlib", "platstdlib"):
            pairs[f"{paths[key]}/"] = stdlib
        self.pairs = sorted(pairs.items(), key=lambda kv: -len(kv[0]))
        self.leaks = sorted({"/root", "/tmp", "/home", str(Path.home()), str(ws.parent)})

    def __call__(self, text: str) -> str:
        for old, new in self.pairs:
            text = text.replace(old, new)
        return ADDRESS_RE.sub(FIXED_ADDRESS, text)

    def leaked(self, text: str) -> list[str]:
        return [s for s in self.leaks if s in text]


def last_traceback(text: str) -> tuple[list[Frame], str] | None:
    """Frames of the final exception (after any chained ones) and its exception line."""
    lines = text.rstrip("\n").splitlines()
    heads = [i for i, line in enumerate(lines) if line == TRACEBACK_HEAD]
    if not heads:
        return None
    frames: list[Frame] = []
    after = heads[-1] + 1
    for i in range(heads[-1] + 1, len(lines)):
        m = FRAME_RE.match(lines[i])
        if m:
            frames.append(Frame(m["path"], int(m["line"]), m["func"]))
            after = i + 1
    # Source, caret and SyntaxError location lines are indented; the exception line is not.
    message = next((line for line in lines[after:] if line and not line[0].isspace()), None)
    if not frames or message is None:
        return None
    return frames, message


def enclosing_function(source: str, line: int) -> tuple[int, int, str] | None:
    """Innermost def containing ``line``: (first decorator line, end line, qualified name)."""
    best: tuple[int, int, str] | None = None

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    end = child.end_lineno or child.lineno
                    if start <= line <= end and (best is None or start >= best[0]):
                        best = (start, end, name)
                name += "."
            visit(child, name)

    visit(ast.parse(source), "")
    return best


def gold_frame(frames: list[Frame], ws: Path) -> Frame | None:
    """Innermost workspace frame outside tests/, if nothing the snippet wrote ran after it."""
    for i in range(len(frames) - 1, -1, -1):
        f = frames[i]
        if f.path.startswith(("/", "<", "site-packages/")) or f.path.startswith("tests/"):
            continue
        if not (ws / f.path).is_file():
            continue
        later = frames[i + 1 :]
        if any(g.path.startswith(("<stdin>", FAKE_CWD)) for g in later):
            return None  # the snippet's own code raised (a callback it defined)
        return f
    return None


# --------------------------------------------------------------------------- running


@dataclass(frozen=True, slots=True)
class Setup:
    """How snippets run against one workspace."""

    python: Path  # the scratch venv's interpreter
    ws: Path
    extra_src: list[Path]  # dependency workspaces' src/ (rewritten to site-packages/)
    paths: dict[str, str]  # the interpreter's stdlib / site-packages folders and version

    @property
    def pythonpath(self) -> list[Path]:
        return [self.ws / "src", *self.extra_src]


def run_snippet(setup: Setup, name: str, code: str) -> Failure | str:
    """Run one snippet; a Failure, or why it does not make a case."""
    python, ws = setup.python, setup.ws
    with tempfile.TemporaryDirectory(prefix="failcase-") as tmp:
        cwd = Path(tmp).resolve()
        try:
            cp = subprocess.run(
                [str(python), "-"],
                input=code,
                cwd=cwd,
                env=base_env(cwd, setup.pythonpath),
                capture_output=True,
                text=True,
                timeout=SNIPPET_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return "timed out"
        rewrite = Rewriter(ws, setup.extra_src, setup.paths, cwd)
        text = rewrite(cp.stderr)
        leaks = rewrite.leaked(text)
    if cp.returncode == 0:
        return "did not raise"
    start = text.find(TRACEBACK_HEAD)
    if start < 0:
        return f"no traceback (exit {cp.returncode}): {text.strip()[-120:]!r}"
    text = text[start:].rstrip("\n")
    if leaks:
        return f"machine path left in the text: {leaks}"
    parsed = last_traceback(text)
    if parsed is None:
        return "could not parse the traceback"
    frames, message = parsed
    frame = gold_frame(frames, ws)
    if frame is None:
        return f"no library frame raised it ({message})"
    source = (ws / frame.path).read_text(encoding="utf-8")
    n_lines = len(source.splitlines())
    found = enclosing_function(source, frame.line)
    if found is None:  # module level: a window around the line
        start_line, end_line = max(1, frame.line - MODULE_CONTEXT), frame.line + MODULE_CONTEXT
        found = (start_line, min(n_lines, end_line), "<module>")
    start_line, end_line, symbol = found
    if symbol != "<module>" and symbol.rsplit(".", 1)[-1] != frame.func:
        log(f"    note: {name}: frame says {frame.func!r}, ast says {symbol!r}")
    return Failure(name, code, text, message, frame.path, start_line, end_line, frame.line, symbol)


def check_gold(ws: Path, f: Failure) -> None:
    """The gold must be a real span of a real workspace file; a violation is a generator bug."""
    path = ws / f.path
    if not path.is_file():
        raise AssertionError(f"{f.name}: gold file {f.path} missing from {ws}")
    n = len(path.read_text(encoding="utf-8").splitlines())
    if not 1 <= f.start <= f.frame_line <= f.end <= n:
        raise AssertionError(f"{f.name}: gold {f.start}-{f.end} (frame {f.frame_line}) vs {n}")


def cases_for(
    failure: Failure, target: Target, manifest_entry: dict[str, Any], kinds: tuple[str, ...]
) -> list[dict]:
    gold = [
        {"path": failure.path, "ranges": [[failure.start, failure.end]], "range_quality": "exact"}
    ]
    out = []
    queries = {"trace": failure.trace, "message": failure.message}
    for kind in kinds:
        query = queries[kind]
        out.append(
            {
                "id": f"{target.dataset}:{failure.name}:{kind}",
                "repo": manifest_entry["repo"],
                "ref": manifest_entry["ref"],
                "kind": kind,
                "variant": "a",
                "query": query,
                "open_file": None,
                "gold": gold,
                "dataset": target.dataset,
                "symbol": failure.symbol,
                "frame_line": failure.frame_line,
                "snippet": failure.snippet,
            }
        )
    return out


def build_target(
    target: Target,
    snippets: Snippets,
    ws_root: Path,
    venv_root: Path,
    base_python: str,
    entry: dict[str, Any],
    verbose: bool,
) -> list[dict]:
    ws = (ws_root / target.dataset).resolve()
    extra = [(ws_root / d / "src").resolve() for d in target.extra_src]
    for p in [ws, *extra]:
        if not p.is_dir():
            raise SystemExit(f"{p}: missing; materialize it with shared/bench/materialize.py")
    python = ensure_venv(venv_root, base_python, target.deps)
    setup = Setup(python, ws, extra, interpreter_paths(python))
    # The library must load from the workspace, or the traceback lines would be someone else's.
    probe = f"import {target.library}; print({target.library}.__file__)"
    loaded = subprocess.run(
        [str(python), "-c", probe],
        env=base_env(ws, setup.pythonpath),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(loaded).resolve().is_relative_to(ws / "src"):
        raise SystemExit(f"{target.library} loads from {loaded}, not from {ws / 'src'}")
    version = setup.paths["version"].split()[0]
    log(f"{target.dataset}: python {version}, {target.library} from {loaded}")

    cases: list[dict] = []
    seen: dict[tuple[str, int, int, str], str] = {}
    messages: dict[str, str] = {}  # message line -> first failure that asked it
    skipped = 0
    for name, code in snippets[target.library]:
        result = run_snippet(setup, name, code)
        if isinstance(result, str):
            skipped += 1
            log(f"  skip {name}: {result}")
            continue
        key = (result.path, result.start, result.end, result.message)
        if key in seen:
            skipped += 1
            log(f"  skip {name}: same gold and message as {seen[key]}")
            continue
        seen[key] = name
        check_gold(ws, result)
        if verbose:
            log(
                f"  ok   {name}: {result.path}:{result.frame_line} {result.symbol} | "
                f"{result.message}"
            )
        # The same message raised from two functions (one context error behind several helpers)
        # cannot be told apart without the trace: only the first becomes a message case.
        kinds: tuple[str, ...] = ("trace",)
        if result.message in messages:
            log(f"  note {name}: message already asked by {messages[result.message]}; trace only")
        else:
            messages[result.message] = name
            kinds = ("trace", "message")
        cases += cases_for(result, target, entry, kinds)
    log(f"{target.dataset}: {len(seen)} failures ({len(cases)} cases), {skipped} snippets skipped")
    return cases


def render(cases: list[dict]) -> str:
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)


def write_cases(out: Path, cases: list[dict], check: bool) -> bool:
    """Write ``cases`` to ``out``, or with ``check`` only compare; True when the file differs."""
    text = render(cases)
    if check:
        return (out.read_text(encoding="utf-8") if out.is_file() else None) != text
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    log(f"wrote {out}")
    return False


def report_check(differ: list[str], check: bool) -> int:
    """The exit status of a run: 1 when ``--check`` found case files that differ."""
    if differ:
        log("differs from the committed cases: " + ", ".join(differ))
        return 1
    if check:
        log("all case files match")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ws", type=Path, default=CACHE_ROOT / "ws", help="materialized workspaces")
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared bench folder")
    ap.add_argument("--out", type=Path, default=HERE / "cases", help="where the JSONL files go")
    ap.add_argument("--dataset", action="append", help="only these datasets (repeatable)")
    ap.add_argument("--venv-root", type=Path, default=CACHE_ROOT / "failures-venv")
    ap.add_argument("--python", default=sys.executable, help="base interpreter for the venvs")
    ap.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    ap.add_argument("-v", "--verbose", action="store_true", help="log every kept failure")
    args = ap.parse_args(argv)

    manifest = {d["name"]: d for d in load_manifest(args.shared)}
    snippets = load_snippets()
    known = [t.dataset for t in TARGETS]
    unknown = sorted(set(args.dataset or []) - set(known))
    if unknown:
        raise SystemExit(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(known)}")
    targets = [t for t in TARGETS if not args.dataset or t.dataset in args.dataset]
    differ = []
    for t in targets:
        cases = build_target(
            t,
            snippets,
            args.ws,
            args.venv_root.expanduser(),
            args.python,
            manifest[t.dataset],
            args.verbose,
        )
        out = args.out / f"{t.dataset}.jsonl"
        if write_cases(out, cases, args.check):
            differ.append(str(out))
    return report_check(differ, args.check)


if __name__ == "__main__":
    sys.exit(main())
