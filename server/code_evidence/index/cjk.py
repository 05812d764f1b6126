"""Chinese word segmentation for the lexical index and for questions.

Chinese is written without spaces, so a run of Han characters must be cut into words before
BM25 can match 解析 in a comment with 解析 in a question. Two segmenters, chosen by
:data:`SEGMENTER` and measured against each other in ``docs/quality.md`` ("Chinese questions");
bigrams are the default: they did as well on English code and better on code documented in
Chinese (the segmented-BM25 reference 0.663 against jieba's 0.614), with no dictionary.

- ``jieba`` (jieba 0.42, the ``jieba`` extra; its own dictionary only, so a text is cut the
  same way whatever ran before; search mode: a long word also yields the shorter words inside
  it, so 请求上下文 matches a question that says 请求 or 上下文). Its prefix-dictionary cache
  is written to the private cache root (``paths.private_cache_root``), never to ``/tmp``.
- ``bigrams``: every pair of neighbouring characters (a lone character stays itself). No
  dictionary and no dependency; recall is high, precision lower.
- ``both``: the bigrams, then jieba's words longer than two characters (a two-character word
  is one of the bigrams already), so a whole long word (龙虎榜, 二维码) adds a match of its
  own. Measured against bigrams alone in ``docs/quality.md`` (issue 22, third pass).

Both sides of BM25 must cut alike, so the index records :data:`ANALYSIS_VERSION` and rebuilds
its lexical part when the version (or the segmenter) changes. ASCII text never reaches this
module: identifiers inside Chinese text are split by ``terms.code_terms`` as code.
"""

from __future__ import annotations

import logging
import re
import threading

# Han ideographs: CJK Unified (with extension A), compatibility ideographs, extensions B+.
HAN_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")

SEGMENTERS = ("jieba", "bigrams", "both")
SEGMENTER = "bigrams"
# Bump when the segmentation changes what terms a text yields: indexes rebuild their lexical part.
_ANALYSIS_REVISION = "1"

_lock = threading.Lock()
_tokenizer = None  # jieba.Tokenizer, built on first use (loading its dictionary takes ~1 s)


def analysis_version() -> str:
    """What the lexical index must have been built with to be searched with this code."""
    return f"{_ANALYSIS_REVISION}-{SEGMENTER}"


def has_han(text: str) -> bool:
    return HAN_RUN_RE.search(text) is not None


def _jieba():  # -> jieba.Tokenizer
    global _tokenizer
    with _lock:
        if _tokenizer is None:
            import jieba

            from ..paths import cache_root, private_cache_root

            jieba.setLogLevel(logging.WARNING)  # it logs every dictionary load at INFO
            tk = jieba.Tokenizer()
            try:
                tk.tmp_dir = str(private_cache_root())
            except OSError:
                # No cache root: jieba's write there fails (it logs and goes on with the
                # dictionary in memory); it must not fall back to the shared temp folder.
                tk.tmp_dir = str(cache_root())
            tk.initialize()
            _tokenizer = tk
        return _tokenizer


def bigrams(run: str) -> list[str]:
    """``请求上下文`` -> ``请求 求上 上下 下文``; one character stays itself."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def segment(run: str) -> list[str]:
    """The words of one run of Han characters, in text order."""
    if SEGMENTER == "bigrams":
        return bigrams(run)
    if SEGMENTER == "both":
        return bigrams(run) + [w for w in _jieba().cut_for_search(run, HMM=True) if len(w) > 2]
    return [w for w in _jieba().cut_for_search(run, HMM=True) if w.strip()]


def han_terms(text: str) -> list[str]:
    """The segmented words of every Han run in ``text``, in order."""
    out: list[str] = []
    for m in HAN_RUN_RE.finditer(text):
        out.extend(segment(m.group(0)))
    return out
