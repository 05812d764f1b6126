#!/usr/bin/env python3
"""Tokens an agent reads until the gold evidence is in hand: a scripted grep-and-read loop vs
one ``find_evidence`` call, on the dev questions.

Code-search MCP servers advertise 30-99 % fewer tokens than an agent's grep-and-read loop,
mostly unmeasured. This measures ours against a scripted baseline of that loop:

- **grep-and-read** (what an agent does without us): grep the workspace for the question's
  identifiers and content words (each grep's output, capped at ``--grep-lines`` lines as an
  agent's ``| head`` would, counts as read), rank files by how many distinct terms they match
  (then by matches), and read the top files whole, in that order, until a gold file has been
  read or ``--budget`` tokens are spent;
- **find_evidence**: one call on a running ``code-evidence mcp`` (depth deep, the default 2000
  token pack); what the model reads is the text content, the context pack. The gold is in hand
  when the pack holds code from a gold file;
- **find_evidence, then grep-and-read**: when the pack misses, the agent falls back to the
  loop; tokens add up.

Gold files are the case's files, minus the open file (the agent has it already; the scorer
ignores it too). Tokens are counted with the shipped MiniLM tokenizer for every approach (a
different tokenizer scales all rows alike).

  PYTHONPATH=server python bench/agent_tokens.py --index-root /tmp/me-idx

Results: a table on stdout and ``bench/results/agent-tokens-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import DEFAULT_SHARED, log, machine, result_path, utc_iso

# isort: split
from code_evidence.config import load_config
from code_evidence.index.scan import scan_workspace
from code_evidence.models.embedder import Embedder
from devset import DEFAULT_WS, ensure_workspace, load_cases, load_manifest
from mcp_client import call, connect, server_env, server_params

DEFAULT_DATASETS = [
    "flask-2.0.0-commits",
    "flask-2.1.0-commits",
    "flask-3.1.0-commits",
    "click-8.1.7-commits",
    "click-8.3.0-commits",
]
_STOP_TEXT = """
about above after again against also among and another any are because been before being below
between both but can cannot could does doing down during each either else ever every few from
further have having here how into its itself just like make many more most much must need never
not now off once only other our out over own same should since some still such than that the
their them then there these they this those through too under until upon very was were what
when where which while who whom why will with within without would you your use used using add
added adds fix fixed fixes support allow makes instead
"""
_STOP = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER = re.compile(r"^# (\S+?):\d+-\d+", re.M)


def terms(query: str, limit: int = 8) -> list[str]:
    """The identifiers (snake_case, CamelCase, dotted parts) and content words of a question,
    as an agent would grep them: identifiers first, at most ``limit``."""
    idents, words = [], []
    for w in _WORD.findall(query):
        if "_" in w or re.search(r"[a-z][A-Z]", w) or (w[0].isupper() and len(w) > 3):
            idents.append(w)
        elif len(w) >= 4 and w.lower() not in _STOP:
            words.append(w.lower())
    return list(dict.fromkeys([*idents, *words]))[:limit]


@dataclass
class Corpus:
    """The workspace's text files (as the index sees them), their text and token counts."""

    texts: dict[str, str]
    tokens: dict[str, int]


def corpus(ws: Path, count: Any) -> Corpus:
    scan = scan_workspace(ws, load_config(ws).index)
    texts: dict[str, str] = {}
    for entry in scan.files:
        try:
            texts[entry.path] = (ws / entry.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return Corpus(texts, {p: count(t) for p, t in texts.items()})


def grep_and_read(
    c: Corpus, query: str, gold: set[str], count: Any, budget: int, grep_lines: int
) -> tuple[bool, int, int]:
    """(gold reached, tokens read, files read) for the scripted loop."""
    spent = 0
    hits: dict[str, dict[str, int]] = {}
    for term in terms(query):
        pattern = re.compile(re.escape(term), 0 if "_" in term or term[0].isupper() else re.I)
        shown: list[str] = []
        for path, text in c.texts.items():
            for n, line in enumerate(text.splitlines(), 1):
                if pattern.search(line):
                    hits.setdefault(path, {}).setdefault(term, 0)
                    hits[path][term] += 1
                    if len(shown) < grep_lines:
                        shown.append(f"{path}:{n}:{line.strip()[:200]}")
        spent += count("\n".join(shown)) if shown else 0
    ranked = sorted(hits, key=lambda p: (-len(hits[p]), -sum(hits[p].values()), p))
    read = 0
    for path in ranked:
        if spent >= budget:
            break
        spent += c.tokens[path]
        read += 1
        if path in gold:
            return True, spent, read
    return False, min(spent, budget) if ranked else spent, read


def pack_paths(text: str) -> set[str]:
    return set(_HEADER.findall(text))


async def ours(ws: Path, index_dir: Path, cases: list[Any]) -> list[tuple[str, float]]:
    """(text content, ms) of find_evidence for each case, on one running server."""
    out = []
    async with connect(server_params(ws, index_dir)) as session:
        for case in cases:
            args: dict[str, Any] = {"query": case.query, "depth": "deep"}
            if case.open_file:
                args["open_file"] = case.open_file
            answer = await call(session, "find_evidence", args)
            if answer.is_error:
                raise SystemExit(f"find_evidence failed: {answer.text}")
            out.append((answer.text, answer.ms))
    return out


def row(name: str, reached: list[bool], tokens: list[int]) -> dict[str, Any]:
    got = [t for t, r in zip(tokens, reached, strict=True) if r]
    return {
        "approach": name,
        "questions": len(reached),
        "reached": sum(reached),
        "reached_pct": round(100 * sum(reached) / max(1, len(reached)), 1),
        "median_tokens_when_reached": int(statistics.median(got)) if got else None,
        "mean_tokens_per_question": int(statistics.fmean(tokens)) if tokens else None,
    }


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| approach | questions | gold reached | median tokens until reached "
        "| mean tokens per question |"
    )
    lines = [head, "| --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(
            f"| {r['approach']} | {r['questions']} | {r['reached']} ({r['reached_pct']} %) | "
            f"{r['median_tokens_when_reached']} | {r['mean_tokens_per_question']} |"
        )
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    p.add_argument("--dataset", action="append")
    p.add_argument("--index-root", type=Path, required=True)
    p.add_argument("--cases", type=int, default=None)
    p.add_argument("--budget", type=int, default=50_000, help="tokens the loop may spend")
    p.add_argument("--grep-lines", type=int, default=30, help="lines of each grep shown")
    args = p.parse_args()
    embedder = Embedder()
    count = embedder.count_tokens
    manifest = {d["name"]: d for d in load_manifest(args.shared)}
    per_case: list[dict[str, Any]] = []
    for name in args.dataset or DEFAULT_DATASETS:
        dataset = manifest[name]
        ws = ensure_workspace(args.shared, DEFAULT_WS["sdist"], dataset, history=False)
        index_dir = args.index_root / name
        subprocess.run(
            [sys.executable, "-m", "code_evidence.cli", "index", "--quiet", "--workspace",
             str(ws), "--index-dir", str(index_dir)],
            check=True, env=server_env(),
        )  # fmt: skip
        cases = load_cases(args.shared, dataset, args.cases)
        log(f"{name}: {len(cases)} questions")
        c = corpus(ws, count)
        answers = asyncio.run(ours(ws, index_dir, cases))
        for case, (text, ms) in zip(cases, answers, strict=True):
            gold = set(case.gold) - {case.open_file}
            if not gold:
                continue
            hit, spent, files = grep_and_read(
                c, case.query, gold, count, args.budget, args.grep_lines
            )
            per_case.append(
                {
                    "id": case.id,
                    "grep_reached": hit,
                    "grep_tokens": spent,
                    "grep_files_read": files,
                    "ours_reached": bool(pack_paths(text) & gold),
                    "ours_tokens": count(text),
                    "ours_ms": round(ms, 1),
                }
            )
    g_hit = [c["grep_reached"] for c in per_case]
    g_tok = [c["grep_tokens"] for c in per_case]
    o_hit = [c["ours_reached"] for c in per_case]
    o_tok = [c["ours_tokens"] for c in per_case]
    both_hit = [o or g for o, g in zip(o_hit, g_hit, strict=True)]
    both_tok = [c["ours_tokens"] + (0 if c["ours_reached"] else c["grep_tokens"]) for c in per_case]
    rows = [
        row("grep-and-read (scripted)", g_hit, g_tok),
        row("find_evidence (one call)", o_hit, o_tok),
        row("find_evidence, then grep-and-read if it missed", both_hit, both_tok),
    ]
    print(table(rows))
    out = {
        "rows": rows,
        "cases": per_case,
        "settings": {"budget": args.budget, "grep_lines": args.grep_lines},
        "meta": {**machine(), "utc": utc_iso()},
    }
    path = result_path("agent-tokens")
    path.write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
