"""What every benchmark script needs, written once: where results and caches go, what a run
records about itself, running git, percentiles, and logging.

A script in ``bench/`` imports this module before anything from ``code_evidence``: importing it
puts this checkout's ``server/`` first on ``sys.path``, so a benchmark measures the engine of the
tree it sits in, not whichever copy an environment happens to have installed. Standard library
only: a benchmark run needs the runtime dependencies and nothing else (no dev extras), and
``failures/make_cases.py`` runs with an interpreter that has not even those.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
SERVER = REPO / "server"
if str(SERVER) not in sys.path:
    sys.path.insert(0, str(SERVER))

# One file per run, never overwritten, so runs can be compared later (git-ignored).
RESULTS = BENCH / "results"
# Downloads, workspaces, indexes and venvs the benchmarks make: big, slow to make, kept between
# runs and shared by the scripts (quality.py's workspaces are refusal.py's and history_eval.py's).
CACHE_ROOT = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "code-evidence-bench"
# The shared dev benchmark (manifest, cases, materialize.py, score.py), beside this checkout.
DEFAULT_SHARED = REPO.parent / "shared" / "bench"

STAMP_FORMAT = "%Y%m%d-%H%M%S"


# --------------------------------------------------------------------------- run metadata


def stamp() -> str:
    """The UTC time as ``20250131-142501``: result file names, and quality.py's ``created``.
    Sorts as text in time order."""
    return datetime.now(UTC).strftime(STAMP_FORMAT)


def utc_iso() -> str:
    """The UTC time as ISO 8601 to the second: the ``utc``/``created`` field of the speed,
    lsp-latency and rerank-latency reports."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def result_path(kind: str, folder: Path = RESULTS) -> Path:
    """``<folder>/<kind>-<UTC stamp>.json`` (``bench/results/`` by default, made if missing):
    one file per run, so runs never overwrite each other and can be diffed later."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{kind}-{stamp()}.json"


def write_report(out: Path | None, kind: str, fields: dict[str, Any]) -> Path:
    """Write a run's report as JSON, its ``created`` time first, to ``out`` or a new
    :func:`result_path` of ``kind``; log and return where."""
    path = out or result_path(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"created": utc_iso(), **fields}, indent=1) + "\n")
    log(f"wrote {path}")
    return path


def machine() -> dict[str, Any]:
    """What a timing depends on besides the code: CPU count and Python version, recorded with
    every latency figure so two runs on different machines are not mistaken for a change."""
    return {"cpus": os.cpu_count(), "python": sys.version.split()[0]}


def git_state() -> dict[str, Any]:
    """This checkout's commit and whether it had uncommitted changes, so a result can be traced
    to the code that made it (None where git or the repository is missing)."""
    try:
        commit: str | None = git(REPO, "rev-parse", "HEAD")
        status: str | None = git(REPO, "status", "--porcelain")
    except (OSError, subprocess.CalledProcessError):
        commit = status = None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


# --------------------------------------------------------------------------- git


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in ``root`` and return its stripped stdout; raise on failure. ``env`` adds to
    (does not replace) this process's environment, e.g. commit dates.

    The benchmarks run git on repositories they made themselves (or on this checkout), in a
    cache folder that may belong to another user: ``safe.directory=*`` keeps git from refusing
    them. Never point this at a repository someone else controls.
    """
    return subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **env} if env else None,
    ).stdout.strip()


def init_repo(root: Path, user: str = "bench") -> None:
    """``git init`` on ``main`` with a fixed author and no signing: the repositories the
    benchmarks make commit the same way on every machine, whatever the user's git config."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", user)
    git(root, "config", "commit.gpgsign", "false")


# --------------------------------------------------------------------------- percentiles


def percentile(values: list[float], q: float) -> float:
    """Linearly interpolated percentile (``numpy.percentile``'s default); NaN when empty.
    The latency summaries of lsp_latency.py and speed.py use it (their p50 is the median)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def nearest_rank(values: list[float], q: float) -> float:
    """Nearest-rank percentile: the smallest value with at least ``q`` of the values at or
    below it, always one of the measured values. The rule of the engine's own eval latency
    (``code_evidence.evaluation.evaluate.latency``, which quality.py reports), so figures that
    sit beside it (rerank_latency.py) mean the same thing; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def summary(ms: list[float]) -> dict[str, float]:
    """``n``, ``p50_ms``, ``p95_ms``, ``mean_ms``, ``max_ms`` of latencies in milliseconds,
    rounded to 0.1 ms (interpolated percentiles): the row shape of every lsp-latency and speed
    timing."""
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 0.5), 1),
        "p95_ms": round(percentile(ms, 0.95), 1),
        "mean_ms": round(statistics.fmean(ms), 1) if ms else float("nan"),
        "max_ms": round(max(ms), 1) if ms else float("nan"),
    }


# --------------------------------------------------------------------------- logging


def log(msg: str) -> None:
    """Progress to stderr, flushed at once: stdout carries the report (tables, the result
    path), so it stays clean when piped, and progress shows live when it is not."""
    print(msg, file=sys.stderr, flush=True)
