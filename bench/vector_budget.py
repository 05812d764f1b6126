#!/usr/bin/env python3
"""What the vector policy saves (issue 24): the chunks and model tokens of an indexed
workspace per kind of file, those that get a vector (``filekinds.wants_vector``) against all,
and what the model reads of each (``embed_cache.embedding_text``: docs from their
head) against the whole chunk.

The model's time is close to linear in the tokens it reads (each text truncated at the
embedder's ``max_tokens``; batches are length-sorted, so padding is small), so the share of
tokens is the share of embedding time. With ``--rate`` (tokens/s of the model on this
machine, e.g. from ``speed.py``'s embedding row) it also projects the minutes.

  PYTHONPATH=server python bench/vector_budget.py ~/.cache/code-evidence-bench/scale/index-small
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from common import log  # first: puts this checkout's server/ on sys.path

# isort: split
from code_evidence.filekinds import is_bulk_path, is_doc_path, vector_kind
from code_evidence.index.store import Store
from code_evidence.models.embed_cache import embedding_text
from code_evidence.models.embedder import Embedder


def kind(path: str, is_test: int) -> str:
    """The policy's reason for no vector, else the embed-order class of the file."""
    refused = vector_kind(path)
    if refused:
        return f"BM25 only: {refused}"
    if is_test:
        return "tests"
    if is_doc_path(path):
        return "docs"
    if is_bulk_path(path):
        return "migrations and other bulk"
    return "source and other text"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("index_dir", type=Path)
    p.add_argument("--rate", type=float, default=0.0, help="model tokens/s, for minutes")
    args = p.parse_args()
    store = Store(args.index_dir / "store.sqlite", read_only=True)
    embedder = Embedder()
    cap = embedder.max_tokens
    chunks: Counter[str] = Counter()
    tokens: Counter[str] = Counter()  # whole chunks (path, symbol, text), cut at ``cap``
    embedded: Counter[str] = Counter()  # what the model reads of them (embedding_text)
    rows = [sc.chunk for sc in store.all_chunks()]
    log(f"tokenizing {len(rows)} chunks ...")
    for ch in rows:
        k = kind(ch.path, ch.is_test)
        chunks[k] += 1
        whole = min(embedder.count_tokens(f"{ch.path}\n{ch.symbol}\n{ch.text}") + 2, cap)
        tokens[k] += whole
        if not k.startswith("BM25"):
            embedded[k] += min(embedder.count_tokens(embedding_text(ch)) + 2, cap)
    total_c, total_t = sum(chunks.values()), sum(tokens.values())
    kept = [k for k in chunks if not k.startswith("BM25")]
    kept_c, kept_t = sum(chunks[k] for k in kept), sum(tokens[k] for k in kept)
    read_t = sum(embedded.values())
    print(f"{'kind':34} {'chunks':>8} {'tokens':>11}  share  {'model reads':>11}")
    for k in sorted(chunks, key=lambda k: -tokens[k]):
        print(
            f"{k:34} {chunks[k]:8,} {tokens[k]:11,}  {tokens[k] / total_t:6.1%} {embedded[k]:11,}"
        )
    print(f"{'all chunks':34} {total_c:8,} {total_t:11,}")
    print(f"{'with a vector':34} {kept_c:8,} {kept_t:11,}  {kept_t / total_t:6.1%} {read_t:11,}")
    out = {
        "chunks": dict(chunks),
        "tokens": dict(tokens),
        "model_reads": dict(embedded),
        "max_tokens": cap,
        "all": {"chunks": total_c, "tokens": total_t},
        "embedded": {"chunks": kept_c, "tokens": kept_t, "token_share": kept_t / total_t},
        "model_reads_total": read_t,
    }
    if args.rate:
        rate = args.rate * 60
        out["minutes"] = {"all": total_t / rate, "embedded": kept_t / rate, "reads": read_t / rate}
        print(f"at {args.rate:,.0f} tokens/s: all {out['minutes']['all']:.1f} min, "
              f"with a vector {out['minutes']['embedded']:.1f} min, "
              f"what the model reads {out['minutes']['reads']:.1f} min")  # fmt: skip
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
