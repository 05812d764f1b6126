#!/usr/bin/env python3
"""What the context pack holds: the dev questions' packs against their gold.

The ranked list is what ``quality.py`` scores; the pack (``context`` in the answer) is what an
agent reads through MCP and what the CLI prints under the list: best blocks first, merged,
at most ``[context] per_file_blocks`` of one file, within the token budget. This asks every
dev case on the ``quality.py --history`` indexes (configuration ``full``) and reports, per
group: how often the pack holds code of a gold file (``pack file``) and code overlapping the
gold lines (``pack chunk``, the pack's chunk@10), the blocks and tokens it holds, and how
often it left budget unused while dropping a block for the per-file quota.

Variant b's open file is left out on both sides, as ``score.py`` does (the agent has it).

  PYTHONPATH=server python bench/context_packs.py --index-root DIR [--set KEY=VALUE]

Results: a table on stdout and a JSON file (``--out``, default
``bench/results/context-packs-<UTC time>.json``) with per-case records.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import log, write_report  # first: server/ on sys.path

# isort: split
from code_evidence import config
from code_evidence.api import FindRequest, FindResult
from code_evidence.engine import Engine
from code_evidence.evaluation.evaluate import CONFIGS, GROUP_ORDER, Case, configured
from devset import add_index_options, built_index, dev_cases, ensure_workspace, load_manifest

# A block's header in the pack (assemble._header): "# path:start-end  symbol".
_HEADER = re.compile(r"^# (\S+):(\d+)-(\d+)(?:  .*)?$")


def blocks(result: FindResult) -> list[tuple[str, int, int]]:
    """The pack's blocks, read back from their headers (a header follows a blank line, or
    starts the pack: a comment line inside a block is not one)."""
    out: list[tuple[str, int, int]] = []
    prev = ""
    for i, line in enumerate(result.context.text.split("\n")):
        m = _HEADER.match(line)
        if m and (i == 0 or prev == ""):
            out.append((m.group(1), int(m.group(2)), int(m.group(3))))
        prev = line
    return out


def record(case: Case, result: FindResult) -> dict[str, Any]:
    skip = case.open_file if case.variant == "b" else None
    held = [b for b in blocks(result) if b[0] != skip]
    gold = case.gold
    file_hit = any(p in gold for p, _, _ in held)
    chunk_hit = any(p in gold and any(a <= e and s <= b for a, b in gold[p]) for p, s, e in held)
    quota = sum(1 for d in result.context.dropped if d.reason == "per-file-quota")
    # Why the gold lines' candidates stayed out (each reason once, best-ranked first).
    why = [
        d.reason
        for d in result.context.dropped
        if d.path != skip and any(a <= d.end and d.start <= b for a, b in gold.get(d.path, ()))
    ]
    return {
        "id": case.id,
        "group": case.group,
        "blocks": [f"{p}:{s}-{e}" for p, s, e in blocks(result)],
        "tokens": result.context.tokens,
        "budget": result.context.budget,
        "pack_file": file_hit,
        "pack_chunk": chunk_hit if any(gold.values()) else None,
        "quota_dropped": quota,
        "gold_dropped": list(dict.fromkeys(why)),
        "insufficient": result.insufficient,
    }


def summary(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by[r["group"]].append(r)
    order = [g for g in GROUP_ORDER if g in by] + sorted(set(by) - set(GROUP_ORDER))
    out: dict[str, dict[str, float]] = {}
    for g in order:
        rs = by[g]
        chunked = [r for r in rs if r["pack_chunk"] is not None]
        out[g] = {
            "n": len(rs),
            "pack_file": sum(r["pack_file"] for r in rs) / len(rs),
            "pack_chunk": sum(r["pack_chunk"] for r in chunked) / len(chunked) if chunked else 0,
            "blocks": statistics.median(len(r["blocks"]) for r in rs),
            "tokens": statistics.median(r["tokens"] for r in rs),
            "underfilled_quota": sum(
                1 for r in rs if r["quota_dropped"] and r["tokens"] < r["budget"] / 2
            )
            / len(rs),
        }
    return out


MISS_REASONS = ("score-gap", "budget", "weak-evidence", "max-blocks", "per-file-quota")


def misses(records: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per group, the packs without the gold lines, by why its best-ranked gold candidate
    stayed out (``unranked``: none among the candidates the pack considered)."""
    out: dict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys((*MISS_REASONS, "unranked"), 0)
    )
    for r in records:
        if r["pack_chunk"] is False:
            why = r["gold_dropped"]
            out[r["group"]][why[0] if why else "unranked"] += 1
    return dict(out)


def table(rows: dict[str, dict[str, float]]) -> str:
    head = f"{'group':<16}{'n':>6}{'pack file':>11}{'pack chunk':>12}{'blocks':>8}{'tokens':>8}"
    lines = [head + f"{'quota drop, < half full':>25}"]
    for g, r in rows.items():
        lines.append(
            f"{g:<16}{r['n']:>6}{r['pack_file']:>11.3f}{r['pack_chunk']:>12.3f}"
            f"{r['blocks']:>8.0f}{r['tokens']:>8.0f}{r['underfilled_quota']:>25.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_index_options(ap)
    ap.add_argument("--set", dest="ranking", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    ranking: dict[str, Any] = {}
    for item in args.ranking:
        key, sep, value = item.partition("=")
        if not sep:
            ap.error(f"--set {item!r}: expected KEY=VALUE")
        ranking[key] = json.loads(value)
    shared = args.shared.resolve()
    manifest = load_manifest(shared)
    datasets = [d for d in manifest if not args.dataset or d["name"] in args.dataset]
    records: list[dict[str, Any]] = []
    for d in datasets:
        ws = ensure_workspace(shared, args.ws.resolve(), d, True)
        cases = dev_cases(shared, d)
        index_dir = built_index(args.index_root, d["name"])
        eng = Engine(ws, index_dir=index_dir, config=config.Config())
        with eng, configured(eng, CONFIGS["full"], ranking):
            for case in cases:
                req = FindRequest(query=case.query, open_file=case.open_file, limit=20)
                records.append(record(case, eng.find(req, refresh=False)))
        log(f"{d['name']}: {len(cases)} cases")
    rows = summary(records)
    print(table(rows))
    why = misses(records)
    print("\npacks without the gold lines, by why the best gold candidate stayed out")
    print(f"{'group':<16}" + "".join(f"{k:>15}" for k in (*MISS_REASONS, "unranked")))
    for g in rows:
        if g in why:
            print(f"{g:<16}" + "".join(f"{v:>15}" for v in why[g].values()))
    report = {"ranking": ranking, "groups": rows, "misses": why, "cases": records}
    write_report(args.out, "context-packs", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
