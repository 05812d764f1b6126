"""The shared dev benchmark (``../shared/bench``, see its README) as the scripts read it: the
manifest, the cases of a dataset, the local failure cases, and the materialized workspaces.

quality.py, refusal.py, rerank_latency.py and history_eval.py all run on these datasets; one
reader means they agree on what a case is and on which workspace holds it. Kept apart from
``common.py`` because it is about one data set, not about running a benchmark. Reading the
manifest needs only the standard library; building cases imports the engine's ``Case``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import BENCH, CACHE_ROOT, DEFAULT_SHARED, log

if TYPE_CHECKING:
    from code_evidence.evaluation.evaluate import Case

# Per mode: sdist workspaces and git checkouts with history never share a folder or an index.
DEFAULT_WS = {"sdist": CACHE_ROOT / "ws", "history": CACHE_ROOT / "ws-history"}
DEFAULT_INDEX_ROOT = {"sdist": CACHE_ROOT / "index", "history": CACHE_ROOT / "index-history"}
# Traceback cases built from the same workspaces (bench/failures/README.md); one file per dataset.
FAILURES_DIR = BENCH / "failures" / "cases"
# Message cases beside them: labelled at the template, and mined from other languages' sources
# (bench/messages/make_cases.py).
MESSAGES_DIR = BENCH / "messages" / "cases"
# The failures of FAILURES_DIR as pytest and unittest print them
# (bench/test_reports/make_report_cases.py).
TEST_REPORTS_DIR = BENCH / "test_reports" / "cases"


def load_manifest(shared: Path) -> list[dict[str, Any]]:
    """The datasets of ``shared/manifest.json``, in manifest order."""
    with open(shared / "manifest.json", encoding="utf-8") as f:
        return list(json.load(f)["datasets"])


def load_cases(shared: Path, dataset: dict[str, Any], cases_limit: int | None) -> list[Case]:
    """The dataset's shared cases (the first ``cases_limit`` if given)."""
    return read_cases(shared / dataset["cases"], dataset["name"], cases_limit)


def load_failure_cases(folder: Path, dataset: str, cases_limit: int | None) -> list[Case]:
    """The dataset's failure cases, if any were built for it (not every dataset has them)."""
    path = folder / f"{dataset}.jsonl"
    return read_cases(path, dataset, cases_limit) if path.is_file() else []


def read_cases(path: Path, dataset: str, cases_limit: int | None) -> list[Case]:
    """Cases of one JSONL file; only ``query`` and ``open_file`` ever reach the engine, the rest
    is labels."""
    from code_evidence.evaluation.evaluate import Case

    cases: list[Case] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            if cases_limit is not None and len(cases) >= cases_limit:
                break
            c = json.loads(line)
            gold = {
                g["path"]: tuple((int(a), int(b)) for a, b in (g.get("ranges") or []))
                for g in c["gold"]
            }
            cases.append(
                Case(
                    id=c["id"],
                    dataset=dataset,
                    kind=c["kind"],
                    variant=c["variant"],
                    query=c["query"],
                    open_file=c.get("open_file"),
                    gold=gold,
                )
            )
    return cases


def dev_cases(shared: Path, dataset: dict[str, Any]) -> list[Case]:
    """A dataset's cases as ``quality.py`` asks them by default: the shared ones, the local
    failure, message and test-report cases built for it, and variant c from its commit cases.
    One list for the scripts that read quality.py's answers or its indexes again."""
    cases = load_cases(shared, dataset, None)
    for folder in (FAILURES_DIR, MESSAGES_DIR, TEST_REPORTS_DIR):
        cases += load_failure_cases(folder, dataset["name"], None)
    return cases + variant_c_cases(cases)


def variant_c_cases(cases: list[Case]) -> list[Case]:
    """The "open file holds the answer" group, built from the commit cases of variant a: the
    user is in the file the commit changed most (most changed lines; ties by path) and the gold
    is that file's own hunks. Scored like variant a: results in the open file count."""
    from code_evidence.evaluation.evaluate import Case

    out: list[Case] = []
    for c in cases:
        ranged = {p: r for p, r in c.gold.items() if r}
        if c.kind != "commit" or c.variant != "a" or not ranged:
            continue
        path = min(ranged, key=lambda p: (-sum(b - a + 1 for a, b in ranged[p]), p))
        out.append(
            Case(
                id=f"{c.id}#c",
                dataset=c.dataset,
                kind="commit",
                variant="c",
                query=c.query,
                open_file=path,
                gold={path: ranged[path]},
            )
        )
    return out


# Unanswerable questions: a commit dataset's questions asked in another project's workspace,
# of the same language where the dev set has two projects in it (flask and click), else of the
# nearest one (JavaScript and TypeScript; Go, Rust and Java in a ring).
FOREIGN_PROJECT = {
    "pallets/flask": "pallets/click",
    "pallets/click": "pallets/flask",
    "fastify/fastify": "colinhacks/zod",
    "colinhacks/zod": "fastify/fastify",
    "gin-gonic/gin": "tokio-rs/bytes",
    "tokio-rs/bytes": "square/javapoet",
    "square/javapoet": "gin-gonic/gin",
}


def unanswerable_cases(
    shared: Path, manifest: list[dict[str, Any]], dataset: dict[str, Any], n: int
) -> list[Case]:
    """``n`` commit questions (variant a, no open file) of the foreign project
    (:data:`FOREIGN_PROJECT`), to be asked in ``dataset``'s workspace: the evidence is not
    there, so the right answer is a refusal. Labelled with no gold; only the verdict counts."""
    from code_evidence.evaluation.evaluate import Case

    other = FOREIGN_PROJECT.get(dataset.get("repo", ""))
    if other is None or not dataset["name"].endswith("-commits"):
        return []
    donors = [d for d in manifest if d.get("repo") == other and d["name"].endswith("-commits")]
    out: list[Case] = []
    for d in donors:
        for c in read_cases(shared / d["cases"], d["name"], None):
            if len(out) >= n:
                return out
            if c.variant == "a":
                out.append(
                    Case(
                        f"{c.id}@{dataset['name']}",
                        dataset["name"],
                        "unanswerable",
                        "a",
                        c.query,
                        None,
                        {},
                    )
                )
    return out


def in_sdist_mode(dataset: dict[str, Any]) -> bool:
    """Whether the dataset has an sdist workspace; the others exist only as git checkouts."""
    return "pypi" in dataset["source"]


def publish(built: Path, ws: Path) -> None:
    """Move a finished workspace into place; when another run put one there first, keep that
    one (same bytes) and drop ours."""
    try:
        built.rename(ws)
    except OSError:
        if not ws.is_dir():
            raise
        shutil.rmtree(built, ignore_errors=True)


def ensure_workspace(shared: Path, ws_root: Path, dataset: dict[str, Any], history: bool) -> Path:
    """Materialize with the shared script when missing, so results always use its exact bytes,
    and refuse a workspace laid out for the other mode."""
    name = dataset["name"]
    ws = ws_root / name
    if not ws.is_dir():
        ws_root.mkdir(parents=True, exist_ok=True)
        log(f"{name}: materializing into {ws_root}" + (" (--history)" if history else ""))
        # Into a scratch folder beside it, then one rename: two runs started together each
        # build their own and the first rename wins, so no run indexes a half-written tree.
        with tempfile.TemporaryDirectory(dir=ws_root, prefix=f".{name}.") as tmp:
            cmd = [sys.executable, str(shared / "materialize.py"), "--dest", tmp]
            cmd += ["--cache", str(ws_root / "_sdists"), "--dataset", name]
            subprocess.run([*cmd, *(["--history"] if history else [])], check=True)
            publish(Path(tmp) / name, ws)
    if not ws.is_dir():
        raise SystemExit(f"{ws}: workspace missing after materialize.py")
    is_git = (ws / ".git").exists()
    if history and "git" in dataset["source"] and not is_git:
        raise SystemExit(f"{ws}: not a git checkout; --history needs its own --ws root")
    if not history and is_git:
        raise SystemExit(f"{ws}: a git checkout (--history layout); sdist mode needs its own --ws")
    return ws


def add_index_options(ap: argparse.ArgumentParser) -> None:
    """The options of a script that asks again on ``quality.py --history``'s workspaces and
    indexes (context_packs.py, about_file.py)."""
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument("--ws", type=Path, default=DEFAULT_WS["history"])
    ap.add_argument("--index-root", type=Path, default=DEFAULT_INDEX_ROOT["history"])
    ap.add_argument("--dataset", action="append", help="only this dataset (repeatable)")


def built_index(index_root: Path, dataset: str) -> Path:
    """The dataset's index under ``index_root``, which quality.py built; an error if none."""
    index_dir = index_root.resolve() / dataset
    if not (index_dir / "store.sqlite").is_file():
        raise SystemExit(f"{index_dir}: no index (run quality.py --history first)")
    return index_dir
