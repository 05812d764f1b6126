#!/usr/bin/env python3
"""Crash and corruption campaign (issue 8): the long version of ``tests/test_crash.py``.

Kill loop: SIGKILL a real ``code-evidence index`` subprocess at random delays, ``--runs`` times,
cycling through three modes on generated workspaces: vectors off with the index wiped first
(kills land in the first build: chunking, SQLite, Tantivy), vectors off after changing a share
of the files (incremental pass), vectors on after changing files (kills land in embedding and
USearch saves; the embedding cache starts cold). After each kill the index is reopened
in-process and checked (SQLite ids == Tantivy ids, USearch keys a subset), one pass is run,
then checked again against the chunks the workspace should produce (data lost), and queried.

Corruption: each index file is truncated and overwritten with noise in turn; the reopened
engine must rebuild and answer.

Framing: random corruptions of the LSP byte stream (bench/framing.py): after each damaged
message a clean request must still be answered (counts of deaf and dead servers).

Storm: a real ``code-evidence serve`` over stdio (bench/lsp_client.py) gets ``--storm`` new
files at once (a mass checkout); figures: index passes it took, seconds until ``find`` answers
with the last file, and whether every ``find`` sent meanwhile answered. Soak: ``--soak`` rounds
of edit, find and hover from the open file, then save, against one server, sampling its RSS
(/proc VmRSS); growth over the second half near zero means memory stays bounded. Figures only:
nothing here asserts a time or a size. Fuzz: the hypothesis properties of
tests/test_lsp_fuzz.py with ``--fuzz`` malformed requests per kind instead of 50; that phase runs
the test suite, so it needs the dev extras and is skipped, saying so, without them.

  PYTHONPATH=server python bench/stress.py              # 60 kills, ~5 minutes on 2 cores
  PYTHONPATH=server python bench/stress.py --runs 6 --files 100
  PYTHONPATH=server python bench/stress.py --only storm,soak     # ~2 minutes
  PYTHONPATH=server python bench/stress.py --only fuzz --fuzz 1000
  PYTHONPATH=server python bench/stress.py --only framing --framing 300
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from lsprotocol import types

from common import REPO, RESULTS, result_path  # first: puts this checkout's server/ on sys.path

# isort: split
import lsp_client as lsp
from crash import (
    RunResult,
    check_after_kill,
    make_workspace,
    mutate,
    one_run,
    run_indexer,
    timed_full_run,
)
from framing import framing_run

# The fuzz phase runs tests/test_lsp_fuzz.py under pytest: the dev extras, not a bench need.
FUZZ_NEEDS = ("pytest", "pytest_lsp", "hypothesis")

# Where the kills land: named points (crash_hook.py) and timed kills, by mode.
POINTS_PLAIN = (
    "timed",
    "timed",
    "chunk",
    "sqlite",
    "store-commit",
    "tantivy",
    "tantivy-after",
)  # no usearch points: with vectors off no pass rewrites the vector file
POINTS_VECTORS = (
    "timed", "embed", "usearch", "usearch-replace", "journal", "store-commit", "tantivy"
)  # fmt: skip
MODES = (
    ("off-wipe", False, True),
    ("off-incremental", False, False),
    ("on-incremental", True, False),
)


def kill_loop(root: Path, runs: int, files: int, seed: int) -> list[RunResult]:
    rnd = random.Random(seed)
    cache = root / "cache"
    spaces: dict[bool, tuple[Path, Path, float]] = {}
    for vectors in (False, True):
        ws, idx = root / f"ws-{vectors}", root / f"idx-{vectors}"
        n = files if not vectors else max(20, files // 3)
        make_workspace(ws, n, vectors)
        full = timed_full_run(ws, idx, cache)
        if vectors:  # an incremental pass is what the vector runs kill: time one
            mutate(ws, rnd, rev=10_000)
            full = timed_full_run(ws, idx, cache)
        spaces[vectors] = (ws, idx, full)
        print(f"vectors {'on' if vectors else 'off'}: {n} files, a pass takes {full:.2f}s")
    out: list[RunResult] = []
    for i in range(runs):
        name, vectors, wipe = MODES[i % len(MODES)]
        ws, idx, full = spaces[vectors]
        delay = rnd.uniform(0.35, 1.05) * full
        point = rnd.choice(POINTS_VECTORS if vectors else POINTS_PLAIN)
        crash_at = None
        if point != "timed":
            # n: which hit of the point dies (passes touch ~60 files; saves happen 2-3 times)
            n = rnd.randint(1, 50) if point in ("chunk", "sqlite") else 1
            n = (
                rnd.randint(1, 2)
                if point in ("usearch", "usearch-replace", "journal") and vectors
                else n
            )
            n = 2 if point == "store-commit" and wipe else n
            crash_at = f"{point}:{n}"
        r = one_run(
            i, ws, idx, cache, delay, vectors=vectors, wipe=wipe, rnd=rnd, crash_at=crash_at
        )
        out.append(r)
        flag = "ok" if r.consistent_on_open and r.complete_after_pass and not r.lost else "BAD"
        print(
            f"run {i:3d} {name:<16} {crash_at or f'kill@{delay:.2f}s':<18} killed={r.killed!s:<5} "
            f"chunks={r.check['chunks']} repaired={r.repaired!s:<5} lost={r.lost} {flag}",
            flush=True,
        )
    return out


def corrupt_loop(root: Path, seed: int) -> list[dict[str, object]]:
    """Truncate and overwrite each index file in turn; reopen, pass, query."""
    rnd = random.Random(seed)
    ws, idx, cache = root / "ws-corrupt", root / "idx-corrupt", root / "cache"
    make_workspace(ws, 30, vectors=True)
    run_indexer(ws, idx, cache, None)
    out: list[dict[str, object]] = []
    for way in ("truncate", "noise"):
        for name in (
            "store.sqlite",
            "vectors.usearch",
            "lexical/meta.json",
            "lexical/*.idx",
            "lexical/*.store",
            "embeddings.sqlite",
        ):
            base = cache if name == "embeddings.sqlite" else idx
            targets = sorted(base.glob(name))
            if not targets:
                continue
            target = targets[0]
            data = target.read_bytes()
            if way == "truncate":
                target.write_bytes(data[: len(data) // 3])
            else:
                at = rnd.randrange(0, max(1, len(data) - 64))
                target.write_bytes(data[:at] + os.urandom(64) + data[at + 64 :])
            try:
                on_open, after, lost, find_ok, notes = check_after_kill(ws, idx, vectors=True)
                # Detected on open or at the first failed read; either way whole after it.
                ok = after.complete and lost == 0 and find_ok
                out.append(
                    {
                        "file": name,
                        "way": way,
                        "ok": ok,
                        "detected_on_open": not on_open.consistent or bool(notes),
                        "lost": lost,
                        "notes": notes,
                    }
                )
            except Exception as exc:  # a crash here is the finding: record it, go on
                out.append({"file": name, "way": way, "ok": False, "error": repr(exc)})
                shutil.rmtree(idx, ignore_errors=True)
                run_indexer(ws, idx, cache, None)
            print(f"corrupt {way:<8} {name:<20} {'ok' if out[-1]['ok'] else 'BAD'}", flush=True)
    return out


# -- storm and soak: the real language server over stdio (lsp_client.py) --------------------

SERVE_WAIT_S = 240.0  # a 10k-file pass on 2 cores; the figures say how long it really took
LSP_FILES = 8  # modules of the served workspace before the storm (or the soak) starts


def _rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` (VmRSS in /proc), in MiB; 0 where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def _lsp_workspace(root: Path) -> Path:
    """A small served workspace, vectors off: the generated modules of the kill loop."""
    ws = root / "served"
    make_workspace(ws, LSP_FILES, vectors=False)
    return ws.resolve()


def _write_storm(folder: Path, n: int) -> float:
    """``n`` new files as fast as Python writes them (a mass checkout); seconds taken."""
    t0 = time.perf_counter()
    folder.mkdir()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for i in range(n):  # raw calls: pathlib's overhead would stretch the burst past a second
        text = f"def storm_handler_{i}(event: dict) -> int:\n    return len(event) + {i}\n"
        fd = os.open(folder / f"storm_{i:05d}.py", flags, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    return time.perf_counter() - t0


async def _storm(root: Path, n: int) -> dict[str, object]:
    """Write ``n`` files into a served workspace within about a second; count the passes it
    took, how long until ``find`` answers with the last storm file, and whether every
    ``find`` sent meanwhile answered."""
    ws = _lsp_workspace(root / "storm")
    client = await lsp.start(root / "storm-idx")
    try:
        await lsp.initialize(client, ws)
        base = await lsp.ready(client)
        before = len(client.statuses)
        last = f"storm_handler_{n - 1}"
        done = asyncio.Event()
        finds = {"answered": 0, "failed": 0}
        seen: dict[str, float] = {}
        t0 = time.perf_counter()

        async def ask() -> None:
            while not done.is_set():
                try:
                    answer = await lsp.find(client, {"query": last, "limit": 5})
                    finds["answered"] += 1
                    paths = [r["path"] for r in answer["results"]]
                    if any(p.startswith("generated_storm/") for p in paths):
                        seen.setdefault("first storm file answered", time.perf_counter() - t0)
                    if paths and paths[0] == f"generated_storm/storm_{n - 1:05d}.py":
                        seen.setdefault("last storm file answered", time.perf_counter() - t0)
                except Exception:  # a timeout or an error answer: the figure counts it
                    finds["failed"] += 1
                await asyncio.sleep(0.05)

        asker = asyncio.create_task(ask())
        write_s = await asyncio.to_thread(_write_storm, ws / "generated_storm", n)
        want = (base["files"] or 0) + n
        final = await lsp.wait_status(
            client,
            lambda s: lsp.settled(s) and (s["files"] or 0) >= want,
            after=before,
            timeout=SERVE_WAIT_S,
        )
        all_indexed = time.perf_counter() - t0
        while "last storm file answered" not in seen and time.perf_counter() - t0 < SERVE_WAIT_S:
            await asyncio.sleep(0.05)
        done.set()
        await asyncio.wait_for(asyncio.shield(asker), lsp.WAIT_S)
        after = client.statuses[before:]
        passes = [s for s in after if s["state"] == "indexing"]
        changed, running = 0, False
        for s in after:  # the settled status that ends each pass carries its report
            if s["state"] == "indexing":
                running = True
            elif running and lsp.settled(s):
                changed += (s["lastPass"] or {}).get("files_changed", 0)
                running = False
        return {
            "files": n,
            "write s": round(write_s, 2),
            "index passes": len(passes),
            "files changed over those passes": changed,
            "s to first storm file in an answer": round(
                seen.get("first storm file answered", -1), 2
            ),
            "s to all indexed (status)": round(all_indexed, 2),
            "s to consistent (last file answered)": round(
                seen.get("last storm file answered", -1), 2
            ),
            "files indexed after": final["files"],
            "finds answered": finds["answered"],
            "finds failed": finds["failed"],
        }
    finally:
        await lsp.stop(client)


async def _soak(root: Path, iterations: int, every: int) -> dict[str, object]:
    """Edit, save, find and hover one file ``iterations`` times against one server; sample
    its RSS every ``every`` iterations. Bounded memory shows as growth near zero over the
    second half (the first half includes warm-up: caches, the first passes)."""
    ws = _lsp_workspace(root / "soak")
    client = await lsp.start(root / "soak-idx")
    try:
        await lsp.initialize(client, ws)
        await lsp.ready(client)
        pid = client._server.pid  # type: ignore[union-attr]  # the serve process itself
        path = ws / "pkg" / "soak.py"
        path.write_text("def soak_fn_0(x: int) -> int:\n    return x\n")
        uri = lsp.open_doc(client, path)
        before = len(client.statuses)
        samples: list[float] = [_rss_mib(pid)]
        ok = {"finds answered": 0, "finds fresh": 0, "hovers answered": 0, "failed": 0}
        t0 = time.perf_counter()
        for i in range(1, iterations + 1):
            text = (
                f"def soak_fn_{i}(x: int) -> int:\n    return x + {i}\n\n\n"
                f"class SoakHolder{i % 7}:\n    value = {i}\n"
            )
            lsp.replace_doc(client, uri, text, version=i + 1)  # typed, not yet saved
            try:
                # From the open file, as an editor asks: the server first indexes the buffer.
                where = {"uri": uri}, {"line": 0, "character": 6}
                params = {"query": f"soak_fn_{i}", "limit": 5}
                params.update(textDocument=where[0], position=where[1])
                answer = await lsp.find(client, params)
                ok["finds answered"] += 1
                top = answer["results"][0]["symbol"] if answer["results"] else None
                ok["finds fresh"] += top == f"soak_fn_{i}"
                await asyncio.wait_for(lsp.hover(client, path, 0, 6), lsp.WAIT_S)
                ok["hovers answered"] += 1
            except Exception:  # a timeout or an error answer: the figure counts it
                ok["failed"] += 1
            path.write_text(text)  # saved: the watcher's pass reads it from disk
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), text=text
                )
            )
            if i % every == 0:
                samples.append(_rss_mib(pid))
        elapsed = time.perf_counter() - t0
        # After the last save the index must settle on the disk copy (no buffer involved).
        last, settle_s, t1 = f"soak_fn_{iterations}", -1.0, time.perf_counter()
        while time.perf_counter() - t1 < lsp.WAIT_S:
            answer = await lsp.find(client, {"query": last, "limit": 3})
            if answer["results"] and answer["results"][0]["symbol"] == last:
                settle_s = time.perf_counter() - t1
                break
            await asyncio.sleep(0.05)
        passes = sum(s["state"] == "indexing" for s in client.statuses[before:])
        half = samples[len(samples) // 2 :]
        return {
            "iterations": iterations,
            "s": round(elapsed, 1),
            "index passes": passes,
            **ok,
            "s to consistent after the last save": round(settle_s, 2),
            "RSS samples": len(samples),
            "RSS start MiB": round(samples[0], 1),
            "RSS max MiB": round(max(samples), 1),
            "RSS end MiB": round(samples[-1], 1),
            "RSS growth over 2nd half MiB": round(half[-1] - half[0], 1),
            "RSS trend over 2nd half MiB per 1k rounds": round(_slope(half) * 1000 / every, 1),
            "rss": [round(s, 1) for s in samples],
        }
    finally:
        await lsp.stop(client)


def _slope(ys: list[float]) -> float:
    """Least-squares slope per sample: endpoints alone are noisy (the allocator breathes)."""
    n = len(ys)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in enumerate(ys)) / sum((x - mx) ** 2 for x in range(n))


def _table(figures: dict[str, object]) -> None:
    print("\n| figure | value |\n| --- | --- |")
    for k, v in figures.items():
        if not isinstance(v, list):
            print(f"| {k} | {v} |")


PHASES = ("kill", "corrupt", "framing", "storm", "soak", "fuzz")


def fuzz_run(examples: int) -> dict[str, object]:
    """The protocol fuzzing of tests/test_lsp_fuzz.py against the real server, with
    ``examples`` per request kind instead of the test suite's bounded 50. It runs the test
    suite, so without the dev extras it is skipped: the figure says so, nothing fails."""
    missing = [m for m in FUZZ_NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        print(f"fuzz: skipped, needs the dev extras ({', '.join(missing)} missing)", flush=True)
        return {"skipped": f"needs the dev extras: {', '.join(missing)} not installed"}
    env = dict(lsp.server_env(), CODE_EVIDENCE_FUZZ_EXAMPLES=str(examples))
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(REPO / "tests" / "test_lsp_fuzz.py"),
            "-k",
            "fuzzed",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    return {
        "request kinds": 2,
        "examples per kind": examples,
        "property failures": 0 if proc.returncode == 0 else 1,
        "pytest": tail,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--storm", type=int, default=10_000, help="files in the storm")
    ap.add_argument("--soak", type=int, default=2000, help="soak iterations")
    ap.add_argument("--rss-every", type=int, default=100, help="soak iterations per RSS sample")
    ap.add_argument("--fuzz", type=int, default=1000, help="fuzzed requests per request kind")
    ap.add_argument("--framing", type=int, default=300, help="damaged LSP messages")
    ap.add_argument(
        "--only",
        default=",".join(PHASES),
        help=f"comma-separated phases to run, of {','.join(PHASES)}",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    only = {p.strip() for p in args.only.split(",") if p.strip()}
    if not only or only - set(PHASES):
        ap.error(f"--only takes some of {','.join(PHASES)}")
    t0 = time.perf_counter()
    runs: list[RunResult] = []
    corrupt: list[dict[str, object]] = []
    storm: dict[str, object] = {}
    soak: dict[str, object] = {}
    fuzz: dict[str, object] = {}
    framing: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="ce-stress-") as tmp:
        root = Path(tmp)
        os.environ["CODE_EVIDENCE_CACHE_DIR"] = str(root / "cache")
        if "kill" in only:
            runs = kill_loop(root, args.runs, args.files, args.seed)
        if "corrupt" in only:
            corrupt = corrupt_loop(root, args.seed)
        if "framing" in only:
            print(f"framing: {args.framing} damaged messages to a served workspace", flush=True)
            ws = _lsp_workspace(root / "framing")
            framing = framing_run(root, ws, lsp.server_env(), args.framing, args.seed)
        if "storm" in only:
            print(f"storm: {args.storm} files into a served workspace", flush=True)
            storm = asyncio.run(_storm(root, args.storm))
        if "soak" in only:
            print(f"soak: {args.soak} edit/save/find/hover rounds", flush=True)
            soak = asyncio.run(_soak(root, args.soak, max(1, args.rss_every)))
        if "fuzz" in only:
            print(f"fuzz: {args.fuzz} malformed requests per kind", flush=True)
            fuzz = fuzz_run(args.fuzz)
    figures: dict[str, object] = {}
    if "kill" in only:
        figures.update(
            {
                "runs": len(runs),
                "killed mid-pass": sum(r.killed for r in runs),
                "kill points": dict(Counter(r.point.split(":")[0] for r in runs if r.killed)),
                "inconsistent on reopen": sum(not r.consistent_on_open for r in runs),
                "auto-repaired (rebuild noted)": sum(r.repaired for r in runs),
                "incomplete after one pass": sum(not r.complete_after_pass for r in runs),
                "chunks lost or stale": sum(r.lost for r in runs),
                "find failed": sum(not r.find_ok for r in runs),
            }
        )
    if "corrupt" in only:
        figures["corruptions tried"] = len(corrupt)
        figures["corruptions not recovered"] = sum(not c["ok"] for c in corrupt)
    for table in (
        figures,
        {f"storm: {k}": v for k, v in storm.items()},
        {f"soak: {k}": v for k, v in soak.items()},
        {f"fuzz: {k}": v for k, v in fuzz.items()},
        {f"framing: {k}": v for k, v in framing.items()},
    ):
        if table:
            _table(table)
    print(f"\n{time.perf_counter() - t0:.0f}s")
    path = result_path("stress", args.out)
    path.write_text(
        json.dumps(
            {
                "args": {k: str(v) for k, v in vars(args).items()},
                "figures": figures,
                "runs": [asdict(r) for r in runs],
                "corrupt": corrupt,
                "storm": storm,
                "soak": soak,
                "fuzz": fuzz,
                "framing": framing,
            },
            indent=1,
        )
    )
    print(f"wrote {path}")
    bad = int(figures.get("inconsistent on reopen", 0)) + int(
        figures.get("chunks lost or stale", 0)
    )
    bad += int(figures.get("find failed", 0)) + int(figures.get("corruptions not recovered", 0))
    bad += int(storm.get("finds failed", 0)) + int(soak.get("failed", 0))  # type: ignore[call-overload]
    bad += int(fuzz.get("property failures", 0))  # type: ignore[call-overload]
    bad += len(framing.get("deaf after") or {}) + int(framing.get("died after", "-") != "-")  # type: ignore[arg-type]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
