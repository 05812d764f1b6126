#!/usr/bin/env python3
"""The dev set's tracebacks as an installed package prints them.

``failures/`` ran flask's and click's snippets from their checkouts, so every frame names the
workspace's own path (``File "src/click/core.py"``). A bug report from a user names the package
where pip installed it: ``File "/home/u/venv/lib/python3.12/site-packages/click/core.py"``,
without the ``src/`` the repository keeps it under. This set asks the same 188 ``trace`` cases
(labels unchanged) with each frame's ``src/`` replaced by such a site-packages folder, in the
same workspaces. Reported per dataset and pooled: MRR@10 at file level, chunk@1 (the first
result overlaps a gold range) and the two refusal numbers; ``depth`` deep.

Run ``quality.py --history`` first: it materialises the workspaces and builds the indexes this
reads (``--ws``, ``--index-root``: the same roots).

  PYTHONPATH=server python bench/installed_traces.py [--ws DIR] [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from code_evidence import config
from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from common import log
from devset import DEFAULT_INDEX_ROOT, DEFAULT_WS, FAILURES_DIR

SITE_PACKAGES = "/home/u/venv/lib/python3.12/site-packages/"


def installed(query: str) -> str:
    """A traceback's workspace frames as a non-editable install prints them."""
    return query.replace('File "src/', f'File "{SITE_PACKAGES}')


def ask(ws_root: Path, index_root: Path) -> list[dict]:
    rows: list[dict] = []
    for path in sorted(FAILURES_DIR.glob("*.jsonl")):
        dataset = path.stem
        cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        cases = [c for c in cases if c["kind"] == "trace"]
        with Engine(
            ws_root / dataset, index_dir=index_root / dataset, config=config.Config()
        ) as eng:
            for c in cases:
                res = eng.find(FindRequest(query=installed(c["query"]), depth="deep"))
                gold = {g["path"]: g["ranges"] for g in c["gold"]}
                files = list(dict.fromkeys(r.path for r in res.results))[:10]
                rank = next((i + 1 for i, f in enumerate(files) if f in gold), None)
                first = res.results[0] if res.results else None
                hit = first is not None and any(
                    first.start <= b and first.end >= a for a, b in gold.get(first.path, [])
                )
                rows.append(
                    {
                        "id": c["id"],
                        "dataset": dataset,
                        "rank": rank,
                        "chunk@1": hit,
                        "gold@5": any(f in gold for f in files[:5]),
                        "insufficient": res.insufficient,
                        "top": [f"{r.path}:{r.start}-{r.end} {r.symbol}" for r in res.results[:3]],
                    }
                )
        log(f"{dataset}: {len(cases)} cases")
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| dataset | n | MRR@10 | chunk@1 | refused while right | accepted while wrong |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name in [*dict.fromkeys(r["dataset"] for r in rows), "all"]:
        group = [r for r in rows if name in ("all", r["dataset"])]
        n = len(group)
        mrr = sum(1 / r["rank"] for r in group if r["rank"]) / n
        hit = sum(r["chunk@1"] for r in group) / n
        right = sum(r["insufficient"] and r["rank"] == 1 for r in group)
        wrong = sum(not r["insufficient"] and not r["gold@5"] for r in group)
        lines.append(f"| {name} | {n} | {mrr:.3f} | {hit:.3f} | {right} | {wrong} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ws", type=Path, default=DEFAULT_WS["history"])
    ap.add_argument("--index-root", type=Path, default=DEFAULT_INDEX_ROOT["history"])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows = ask(args.ws, args.index_root)
    print(table(rows))
    if args.out is not None:
        args.out.write_text(json.dumps({"cases": rows}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
