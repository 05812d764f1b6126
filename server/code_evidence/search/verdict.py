"""The verdict: how far an answer can be trusted, as a calibrated probability.

``confidence`` is the probability that the first result's file is the right one, read by a
small logistic model from signals the answer already carries: how close the best chunks are to
the question in embedding space, whether the first file leads in several recall channels at
once, how far it stands above the next file, verbatim matches (identifier, quoted text, path,
stack frame, error message), how many of the question's names and words the top results hold,
what the workspace does not know at all (names no chunk holds, rare words, how much of the
question's information the first result, the best single result and the best file explain, how
specific its words are here), whether the recall channels agree on the first file, the
cross-encoder's own score, whether the
question is Chinese and the English-only models sat it out, the kind of question and whether
a file is open. The weights are fitted leave-one-project-out
on the dev set (``bench/confidence_fit.py`` refits them from a ``bench/quality.py`` report and
writes ``confidence_model.json`` beside this module), so an answer scored 0.7 is right about
seven times in ten on a project the weights never saw. The answer is flagged insufficient
under ``[ranking] insufficient_below`` (its default is the line fitted with the weights, kept
in the model file too), and always when a quoted phrase, or an error code in a failure report,
is in no top result.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..api import Evidence
from . import crosslingual
from .query import QueryAnalysis


@dataclass(frozen=True, slots=True)
class Verdict:
    confidence: float
    insufficient: bool
    reason: str | None


MODEL_PATH = Path(__file__).with_name("confidence_model.json")
TOP = 10  # the results the signals read
VERBATIM_TAGS = (
    "exact-identifier",
    "must-match",
    "path-match",
    "innermost-frame",
    "error-message",
    "message-template",
)
# Channels other than the two text channels: the code graph, stack frames, co-change.
_TEXT_CHANNELS = ("bm25", "vector")
_WORD_RE = re.compile(r"[a-z0-9]+")
MAX_TERMS = 40  # the question's terms looked up in the index, at most
_STEM = 5  # letters a word is matched on in explained()
RARE = 2  # a term in at most this many chunks is rare in the workspace
# A quoted phrase that must be found: words in double or single quotes (not an apostrophe's
# span, not code: a change request quotes code that may not exist yet).
_PHRASE_RE = re.compile(r"(?<!\w)\"([^\"\n]{8,200})\"|(?<!\w)'([^'\n]{8,200})'(?!\w)")
_CODE_CHARS = re.compile(r"[<>:=()\[\]{}$&|/\\]")


def must_find(qa: QueryAnalysis) -> list[str]:
    """What no answer may lack: a quoted phrase of two or more words the user typed, and an
    error code of a pasted error line or trace."""
    phrases = [
        p
        for m in _PHRASE_RE.finditer(qa.raw)
        for p in m.groups()
        if p
        and p in qa.quoted
        and len(re.findall(r"[A-Za-z]{2,}", p)) >= 2
        and not _CODE_CHARS.search(p)
    ]
    if qa.intent == "fix-failure" and (qa.messages or qa.frames):
        phrases += qa.error_codes
    return list(dict.fromkeys(phrases))


def _squash(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, x))))


def _inverse_rank(scores: Mapping[str, float], channel: str) -> float:
    rank = scores.get(f"{channel}_rank")
    return 1.0 / rank if rank else 0.0


def _agreement(top: Sequence[Evidence]) -> float:
    """The share of the recall channels that put the first file at their best rank among the
    top results (the bm25 channel's best result here is in the first file, the vectors' too,
    ...): an answer several channels lead to on their own is likelier this project's."""
    best: dict[str, tuple[float, str]] = {}
    for e in top:
        for k, v in e.scores.items():
            if k.endswith("_rank") and v and (k not in best or v < best[k][0]):
                best[k] = (v, e.path)
    if not best:
        return 0.0
    return sum(1 for _, path in best.values() if path == top[0].path) / len(best)


def _weight(df: int) -> float:
    """How much a term says about where the answer is: 1 for a word no chunk holds, falling
    with the number of chunks that hold it (an inverse document frequency that needs no
    corpus size)."""
    return 1.0 / math.log2(2 + df)


def _stems(words: Iterable[str]) -> set[str]:
    """Words as :func:`explained` matches them: their first :data:`_STEM` letters."""
    return {w[:_STEM] for w in words}


def explained(weighted: Sequence[tuple[float, Set[str]]], words: Iterable[str]) -> float:
    """The share of the question's information (``weighted``: each term's :func:`_weight` and
    its words' stems) that results holding ``words`` hold: an answer that matches only the
    question's common words ("fix", "default") explains little of it, whatever its rank.
    Words match on their first :data:`_STEM` letters ("blueprints" and "blueprint"), as cheap
    as a set lookup."""
    total = sum(w for w, _ in weighted)
    if not total:
        return 0.0
    stems = _stems(words)
    return sum(w for w, need in weighted if need <= stems) / total


def vocabulary(
    qa: QueryAnalysis,
    doc_freq: Callable[[str], int] | None,
    first: Set[str] = frozenset(),
    top: Set[str] = frozenset(),
    chunks: Sequence[Set[str]] = (),
    files: Sequence[Set[str]] = (),
) -> dict[str, float]:
    """How much of the question the workspace's text knows at all: the share of its BM25 terms,
    and of its names, that some chunk holds; the share of the names it holds nowhere (0 for a
    question naming nothing: unlike ``known_names`` it is not 1 by default, so a named
    identifier missing everywhere weighs on its own); and the share of its terms that are rare
    here (in at most :data:`RARE` chunks, or none). Another project's question is mostly words
    this one never uses, whatever the ranking makes of the rest. And how much of the
    question's information the first result and the top results hold (:func:`explained`;
    ``first`` and ``top``: their words, lowercased). Each distinct word is looked up once.
    Where the question's words meet: the most of its information one result (``chunks``: each
    top result's words) or one file (``files``: the words of its top results together) holds;
    an answerable question's words usually meet in the gold file, another project's are
    scattered over files that each hold a few. And how specific the question is here: the mean
    weight of its terms (1 for words no chunk holds, falling as they get common).
    Without the lexical index: everything known, and half explained."""
    terms = list(dict.fromkeys(t for t in qa.terms if len(t) >= 3))[:MAX_TERMS]
    names = list(dict.fromkeys(n.lower() for n in qa.names))[:MAX_TERMS]
    if doc_freq is None:
        return {
            "known_terms": 1.0,
            "known_names": 1.0,
            "names_missing": 0.0,
            "rare_terms": 0.0,
            "explained_first": 0.5,
            "explained_top": 0.5,
            "explained_chunk": 0.5,
            "explained_file": 0.5,
            "specific": 0.5,
        }
    df = {w: doc_freq(w) for w in dict.fromkeys([*terms, *names])}
    # Each term weighed and cut into stems once, for every result and file it is matched on.
    weighted = [(_weight(df[t]), _stems(_WORD_RE.findall(t.lower()))) for t in terms]
    missing = sum(1 for n in names if df[n] == 0) / len(names) if names else 0.0
    return {
        "known_terms": sum(1 for t in terms if df[t] > 0) / len(terms) if terms else 1.0,
        "known_names": 1.0 - missing if names else 1.0,
        "names_missing": missing,
        "rare_terms": sum(1 for t in terms if df[t] <= RARE) / len(terms) if terms else 0.0,
        "explained_first": explained(weighted, first),
        "explained_top": explained(weighted, top),
        "explained_chunk": max((explained(weighted, c) for c in chunks), default=0.0),
        "explained_file": max((explained(weighted, f) for f in files), default=0.0),
        "specific": sum(w for w, _ in weighted) / len(terms) if terms else 0.0,
    }


def signals(
    qa: QueryAnalysis,
    open_file: str | None,
    top: Sequence[Evidence],
    doc_freq: Callable[[str], int] | None = None,
) -> dict[str, float]:
    """What the model reads, each in [0, 1]: computed from the answer's own first ``TOP``
    results (``Evidence``, so ``bench/quality.py`` computes the same from what it was given)
    and, with ``doc_freq`` (the lexical index's), from the workspace's vocabulary."""
    top = list(top[:TOP])
    first = top[0]
    cosines = [e.scores["cosine"] for e in top if "cosine" in e.scores]
    other_files = [e.score for e in top if e.path != first.path]
    best = max(first.score, 1e-9)
    runner_up = other_files[0] if other_files else 0.0
    tenth = top[-1].score if len(top) > 1 else 0.0
    other_channels = [
        _inverse_rank(first.scores, k.removesuffix("_rank"))
        for k in first.scores
        if k.endswith("_rank") and k.removesuffix("_rank") not in _TEXT_CHANNELS
    ]
    channels = sum(1 for k, v in first.scores.items() if k.endswith("_rank") and v <= 3)
    names = qa.names
    texts = [e.text for e in top]
    found = sum(1 for n in names if any(n in t for t in texts))
    words = set(_WORD_RE.findall(" ".join(qa.terms).lower()))
    # Each result's text read into words once: the word and vocabulary signals share them.
    word_sets = [set(_WORD_RE.findall(t.lower())) for t in texts]
    first_words = word_sets[0]
    top_words = set().union(*word_sets)
    han = crosslingual.han_share(qa.raw)
    by_file: dict[str, set[str]] = {}
    for e, ws in zip(top, word_sets, strict=True):
        by_file.setdefault(e.path, set()).update(ws)
    crossed = [e for e in top if "cross" in e.scores]
    cross_other = [e.scores["cross"] for e in crossed if e.path != first.path]
    return {
        "cos_max": max(cosines, default=0.0),
        "cos_first": first.scores.get("cosine", 0.0),
        "no_vector": 0.0 if cosines else 1.0,
        "verbatim_first": float(any(t in first.reasons for t in VERBATIM_TAGS)),
        "verbatim_top3": float(any(t in e.reasons for e in top[:3] for t in VERBATIM_TAGS)),
        "bm25_first": _inverse_rank(first.scores, "bm25"),
        "vector_first": _inverse_rank(first.scores, "vector"),
        "graph_first": max(other_channels, default=0.0),
        "channels_first": min(1.0, channels / 3),
        "rerank_first": min(1.0, max(0.0, first.scores.get("rerank", 0.0))),
        # The cross-encoder's own reading of the first result (its logit, squashed), and how
        # far it stands above its best reading of another file: absolute, unlike the ranks.
        "cross_first": _squash(first.scores["cross"]) if "cross" in first.scores else 0.0,
        "cross_gap": _squash(first.scores["cross"] - max(cross_other))
        if "cross" in first.scores and cross_other
        else 0.0,
        "no_cross": 0.0 if crossed else 1.0,
        "margin_file": max(0.0, min(1.0, (first.score - runner_up) / best)),
        "separation": max(0.0, min(1.0, (first.score - tenth) / best)),
        "first_file_share": sum(1 for e in top[:5] if e.path == first.path) / 5,
        "open_file": float(open_file is not None),
        "first_is_open": float(open_file is not None and first.path == open_file),
        "failure": float(qa.intent == "fix-failure"),
        "explain": float(qa.intent in ("explain", "verify")),
        "python": float(first.language == "python"),
        "names": float(bool(names)),
        "names_found": found / len(names) if names else 0.0,
        "words_first": len(words & first_words) / len(words) if words else 0.0,
        "words_top": len(words & top_words) / len(words) if words else 0.0,
        "co_change_first": float("co-change" in first.reasons),
        "test_first": float("test" in first.reasons),
        # A Chinese question, and one the English-only models sat out (no cosine in the top
        # results: the pipeline's step-aside on code documented in Chinese): the signals
        # above then come from words and structure alone.
        "han": han,
        "models_aside": float(not cosines and han >= crosslingual.MODELS_HAN_SHARE),
        # How the channels agree: the share of them whose best-ranked result here is in the
        # first file, and how many files the top results spread over.
        "channels_agree": _agreement(top),
        "files_spread": (len(by_file) - 1) / max(1, len(top) - 1),
        **vocabulary(qa, doc_freq, first_words, top_words, word_sets, list(by_file.values())),
    }


# What the embedder would have said: unobserved when no top result has a cosine (vectors
# switched off, an index still embedding, or the models stepping aside for text they cannot
# read). Zeros there would read as "far from the question"; the fit saw no such answers.
VECTOR_SIGNALS = ("cos_max", "cos_first", "vector_first")
# The same for the cross-encoder: unobserved when it did not run (switched off, cut by the
# interactive clock before the first result, or stepping aside).
CROSS_SIGNALS = ("cross_first", "cross_gap")


def imputed(sig: Mapping[str, float], means: Mapping[str, float]) -> Mapping[str, float]:
    """``sig`` with its unobserved model signals (no cosine, no cross-encoder score) replaced
    by ``means``: the fit reads its training answers the same way (``confidence_fit.py``)."""
    if sig.get("no_vector"):
        sig = {**sig, **{k: means[k] for k in VECTOR_SIGNALS if k in means}}
    if sig.get("no_cross"):
        sig = {**sig, **{k: means[k] for k in CROSS_SIGNALS if k in means}}
    return sig


def line_family(sig: Mapping[str, float]) -> str:
    """Which refusal line judges an answer: ``python`` when its first result is Python code,
    ``other`` otherwise (see ``ConfidenceModel.offsets``)."""
    return "python" if sig.get("python") else "other"


@dataclass(frozen=True, slots=True)
class ConfidenceModel:
    """Logistic weights over :func:`signals`, and the refusal line fitted with them.
    ``means``: each vector signal's mean over the answers the fit saw, put in its place when
    it is unobserved (mean imputation: such an answer is judged on everything else).
    ``offsets``: added to the configured line for the answers of a :func:`line_family`, when
    the fit chose one line per family (empty: one line for all)."""

    intercept: float
    weights: dict[str, float]
    line: float
    means: dict[str, float] = field(default_factory=dict)
    offsets: dict[str, float] = field(default_factory=dict)

    def line_for(self, sig: Mapping[str, float], configured: float) -> float:
        return configured + self.offsets.get(line_family(sig), 0.0)

    def probability(self, sig: Mapping[str, float]) -> float:
        sig = imputed(sig, self.means)
        z = self.intercept + sum(w * sig.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> ConfidenceModel:
        weights = data["weights"]
        means = data.get("signal_means", {})
        offsets = data.get("line_offsets", {})
        if not all(isinstance(m, dict) for m in (weights, means, offsets)):
            raise ValueError("confidence model: 'weights', 'signal_means' or 'line_offsets'")
        return cls(
            float(data["intercept"]),  # type: ignore[arg-type]
            {str(k): float(v) for k, v in weights.items()},  # type: ignore[union-attr]
            float(data["line"]),  # type: ignore[arg-type]
            {str(k): float(v) for k, v in means.items()},  # type: ignore[union-attr]
            {str(k): float(v) for k, v in offsets.items()},  # type: ignore[union-attr]
        )


@lru_cache(maxsize=1)
def shipped() -> ConfidenceModel:
    """The model fitted on the dev set, as shipped in the package."""
    return ConfidenceModel.from_json(json.loads(MODEL_PATH.read_text(encoding="utf-8")))


def judge(
    qa: QueryAnalysis,
    open_file: str | None,
    top: Sequence[Evidence],
    threshold: float,
    doc_freq: Callable[[str], int] | None = None,
    model: ConfidenceModel | None = None,
) -> Verdict:
    """The confidence of an answer whose results, best first, are ``top``; flagged insufficient
    under ``threshold``. A quoted phrase, or an error code in a
    failure report, that no top result contains is a refusal on its own (:func:`must_find`);
    quoted names and code are not, since a change request often names what does not exist
    yet, nor is what a message quotes when a result holds the literal that writes it."""
    if not top:
        return Verdict(0.0, True, "nothing in the index matches the query")
    model = model or shipped()
    sig = signals(qa, open_file, top, doc_freq)
    confidence = model.probability(sig)
    threshold = model.line_for(sig, threshold)
    strict = must_find(qa)
    if any("template_coverage" in e.scores for e in top[:TOP]):
        # The question is a message a literal among the results writes (a pasted line with no
        # type before it: ``Redirect response '301 Moved Permanently' for url '…'``): what it
        # quotes are the values formatted in, which no code holds.
        strict = [s for s in strict if s not in qa.quoted]
    if strict and not any(s in e.text for e in top[:TOP] for s in strict):
        return Verdict(
            round(min(confidence, threshold / 2), 3),
            True,
            f"no result contains {', '.join(repr(s) for s in strict[:3])}",
        )
    if confidence < threshold:
        return Verdict(round(confidence, 3), True, "weak evidence: no result stands out")
    return Verdict(round(confidence, 3), False, None)
