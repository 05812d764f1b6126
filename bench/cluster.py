#!/usr/bin/env python3
"""Embedding through Ray against the bare model, on this machine (issue 23).

The same chunk texts (this repository's own engine, or ``--workspace``, chunked as an index pass
chunks it) are embedded four ways:

- **local, bare**: one ``Embedder`` in this process, all physical cores, blocks of 256 as an
  index pass embeds them (the floor: what ``code-evidence index`` does without a cluster);
- **local, 1 thread**: the same with one intra-op thread, what one Ray actor has;
- **Ray, 1 actor** and **Ray, 2 actors** (``models/cluster.EmbeddingPool``, one thread each) on
  a local Ray instance started here, into a cold embedding cache, as ``index --cluster`` does.

For each: texts/s and the ratio to the bare model; for Ray also the bytes sent and received
per text, the driver's CPU per part (what bounds how many nodes one driver can feed), and the
round trip of an empty call (Ray's own cost per part). Vectors are compared with the local
ones (max abs difference). From those figures it extrapolates to N nodes.

  PYTHONPATH=server python bench/cluster.py --texts 600

Results: a table on stdout and ``bench/results/cluster-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from code_evidence.config import load_config  # noqa: E402
from code_evidence.index.chunk import chunk_file  # noqa: E402
from code_evidence.index.load import SkipFile, load_text  # noqa: E402
from code_evidence.index.scan import scan_workspace  # noqa: E402
from code_evidence.models import cluster  # noqa: E402
from code_evidence.models.embed_cache import EmbeddingCache, embedding_text, to_stored  # noqa: E402
from code_evidence.models.embedder import Embedder  # noqa: E402

BLOCK = 256  # embed_with_cache's block


def sample_texts(workspace: Path | None, limit: int) -> list[str]:
    """Distinct embedded texts of ``workspace`` (scanned, read and chunked as an index pass
    does; default: this repository's engine), in a fixed order."""
    root = workspace or ROOT / "server" / "code_evidence"
    cfg = load_config(root).index
    texts: list[str] = []
    for entry in sorted(scan_workspace(root, cfg).files, key=lambda e: e.path):
        try:
            text = load_text(root, entry.path, cfg).text
        except SkipFile:
            continue
        texts += [embedding_text(c) for c in chunk_file(entry.path, text, cfg)]
        if len(set(texts)) >= limit:
            break
    return list(dict.fromkeys(texts))[:limit]


def local(texts: list[str], threads: int | None) -> tuple[float, np.ndarray]:
    embedder = Embedder(threads=threads)
    embedder.embed(texts[:8])  # the session loads outside the timing
    t0 = time.perf_counter()
    parts = [embedder.embed(texts[i : i + BLOCK]) for i in range(0, len(texts), BLOCK)]
    seconds = time.perf_counter() - t0
    return seconds, np.stack([to_stored(v) for v in np.concatenate(parts)])


def through_ray(ray: Any, texts: list[str], actors: int, model_id: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    pool = cluster.EmbeddingPool(model_id, actors=actors, threads=1)
    pool.start()
    startup = time.perf_counter() - t0
    try:
        # Ray's own cost per call: an empty part's round trip, after a warm-up.
        ray.get([a.embed.remote([]) for a in pool.actors])
        t1 = time.perf_counter()
        for _ in range(50):
            ray.get(pool.actors[0].embed.remote([]))
        round_trip_ms = (time.perf_counter() - t1) / 50 * 1000
        with tempfile.TemporaryDirectory() as tmp, EmbeddingCache(Path(tmp) / "c.sqlite") as c:
            keys = {f"{i:08d}": t for i, t in enumerate(texts)}
            got: dict[str, np.ndarray] = {}
            cpu0, t2 = time.process_time(), time.perf_counter()
            for stored in pool.embed_stream(c, keys):
                got.update(stored)
            seconds = time.perf_counter() - t2
            driver_cpu = time.process_time() - cpu0
        stats = pool.stats
    finally:
        pool.close()
    return {
        "actors": actors,
        "startup_s": round(startup, 2),
        "seconds": seconds,
        "vectors": np.stack([got[f"{i:08d}"] for i in range(len(texts))]),
        "round_trip_ms": round(round_trip_ms, 2),
        "parts": stats.parts_done,
        "driver_cpu_ms_per_part": round(driver_cpu / max(1, stats.parts_done) * 1000, 2),
        "driver_cpu_ms_per_text": round(driver_cpu / len(texts) * 1000, 3),
        "bytes_sent_per_text": round(stats.bytes_sent / len(texts), 1),
        "bytes_received_per_text": round(stats.bytes_received / len(texts), 1),
        "providers": sorted(set(stats.providers)),
    }


def extrapolate(
    per_actor: float, driver_ms_per_text: float, bytes_per_text: float
) -> tuple[float, list[dict[str, Any]]]:
    """Texts/s with N nodes of C one-thread actors each: the actors' sum, capped by what one
    driver can take in (its CPU per text); the network a driver needs at that rate."""
    driver_cap = 1000 / driver_ms_per_text if driver_ms_per_text else float("inf")
    rows = []
    for nodes in (1, 4, 16, 64):
        for cores in (8, 32):
            rate = min(nodes * cores * per_actor, driver_cap)
            rows.append(
                {
                    "nodes": nodes,
                    "cores_per_node": cores,
                    "texts_per_s": round(rate, 1),
                    "hours_for_500k": round(500_000 / rate / 3600, 2),
                    "driver_mb_per_s": round(rate * bytes_per_text / 1e6, 2),
                    "driver_bound": rate == driver_cap,
                }
            )
    return driver_cap, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=600, help="chunk texts to embed")
    ap.add_argument("--workspace", type=Path, help="take the texts from this workspace")
    ap.add_argument("--out", help="JSON report (default bench/results/cluster-<time>.json)")
    args = ap.parse_args()
    texts = sample_texts(args.workspace, args.texts)
    model_id = Embedder().model_id
    bare_s, bare_vecs = local(texts, None)
    one_s, _ = local(texts, 1)
    ray = cluster.import_ray()
    ray.init(**cluster.init_args("local", num_cpus=2))
    try:
        runs = [through_ray(ray, texts, n, model_id) for n in (1, 2)]
    finally:
        ray.shutdown()
    n = len(texts)
    rows = [
        {"way": "local, bare model (all cores)", "texts_per_s": n / bare_s},
        {"way": "local, 1 thread", "texts_per_s": n / one_s},
    ]
    for r in runs:
        rows.append(
            {
                "way": f"Ray, {r['actors']} actor(s) x 1 thread",
                "texts_per_s": n / r["seconds"],
                "max_abs_diff_vs_local": float(np.abs(r.pop("vectors") - bare_vecs).max()),
                **{k: v for k, v in r.items() if k != "seconds"},
            }
        )
    for row in rows:
        row["texts_per_s"] = round(row["texts_per_s"], 1)
        row["ratio_to_bare"] = round(row["texts_per_s"] / rows[0]["texts_per_s"], 2)
    one_actor = runs[0]
    per_actor = rows[2]["texts_per_s"]
    cap, table = extrapolate(
        per_actor,
        max(r["driver_cpu_ms_per_text"] for r in runs),
        one_actor["bytes_sent_per_text"] + one_actor["bytes_received_per_text"],
    )
    report = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "workspace": str(args.workspace or "server/code_evidence"),
        "texts": n,
        "mean_chars": round(sum(map(len, texts)) / n, 1),
        "load_average_1m": round(os.getloadavg()[0], 2),  # the machine is shared: say how busy
        "rows": rows,
        "driver_cap_texts_per_s": round(cap, 1),
        "extrapolation": table,
    }
    for row in rows:
        print(json.dumps(row))
    for row in table:
        print(json.dumps(row))
    out = (
        Path(args.out)
        if args.out
        else ROOT / "bench" / "results" / (f"cluster-{report['when'].replace(':', '')}.json")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
