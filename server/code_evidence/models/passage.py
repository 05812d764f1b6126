"""How a (query, code) pair is laid out for the cross-encoder.

Training (``training/``) and the runtime reranker both build their inputs here, so the model
sees at run time exactly the layout it was trained on. It needs only numpy: the training
machine imports this module without the rest of the package.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

QUERY_TOKENS = 48  # longer questions are cut: their first words carry the intent
PASSAGE_TOKENS = 144  # the interactive budget scores about a dozen pairs of this length


def passage_text(path: str, symbol: str, code: str) -> str:
    """Path and symbol lead the code: a name the question mentions is then inside the window
    even when the code is cut."""
    head = f"{path} {symbol}".strip()
    return f"{head}\n{code}" if head else code


def pair_ids(
    cls_id: int,
    sep_id: int,
    query_ids: Sequence[int],
    passage_ids: Sequence[int],
    query_tokens: int = QUERY_TOKENS,
    passage_tokens: int = PASSAGE_TOKENS,
) -> tuple[list[int], list[int]]:
    """BERT pair layout ``[CLS] q [SEP] p [SEP]``; returns (input ids, token type ids)."""
    q = list(query_ids[:query_tokens])
    p = list(passage_ids[:passage_tokens])
    ids = [cls_id, *q, sep_id, *p, sep_id]
    types = [0] * (len(q) + 2) + [1] * (len(p) + 1)
    return ids, types


def pad_pairs(pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> dict[str, np.ndarray]:
    """Right-padded int64 batch (pad id 0) of ``pair_ids`` outputs, keyed by model input."""
    width = max(len(ids) for ids, _ in pairs)
    ids = np.zeros((len(pairs), width), dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for r, (i, t) in enumerate(pairs):
        ids[r, : len(i)] = i
        types[r, : len(t)] = t
        mask[r, : len(i)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
