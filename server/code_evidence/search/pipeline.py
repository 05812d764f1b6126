"""One answer, stage by stage: query analysis -> recall (BM25, vectors, structure, stack
frames) -> reciprocal-rank fusion -> features and filters -> rerank -> (the parts of each file,
when the English-only models stepped aside) -> assembly.

Each stage is a module of this folder; this one only runs them in order against one committed
index state (:class:`SearchIndex`), times them, and turns the ranked candidates into the
answer. What leaves here is masked: ranking and the verdict saw the real text.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from ..api import (
    Chunk,
    ContextPack,
    Evidence,
    FindRequest,
    FindResult,
    RequestCancelled,
    RequestControl,
    StageTiming,
)
from ..config import Config
from ..index import churn
from ..index.lexical import LexicalView
from ..index.store import Store, StoredChunk
from ..index.vectors import VectorIndex
from ..models import crossencoder
from ..models.crossencoder import ScoreCache
from ..models.embed_cache import EmbeddingCache
from ..models.embedder import Embedder
from ..secrets import shown
from . import (
    assemble,
    crosslingual,
    declarations,
    features,
    focus,
    fuse,
    joined,
    multilingual,
    parts,
    query,
    recall,
    rerank,
    subject,
    verdict,
)
from .candidate import Candidate

# Candidates the rerank stage looks at (the head of the fused and featured list).
RERANK_HEAD = 50


@dataclass(frozen=True, slots=True)
class SearchIndex:
    """What a search reads: the committed index (through the reader connection, never the
    writer's) and the models. ``vectors``, ``embedder`` and ``cache`` are None when the vector
    stage is off."""

    workspace: str
    reader: Store
    lexical: LexicalView | None
    vectors: VectorIndex | None
    embedder: Embedder
    cache: EmbeddingCache | None
    scores: ScoreCache
    read_only: bool


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def ages(reader: Store, paths: list[str]) -> dict[str, float]:
    """Days between HEAD and the newest commit touching each file (files git never saw, such
    as untracked ones, are left out)."""
    head_time = reader.get_meta("history_head_time")
    if head_time is None:
        return {}
    times = reader.commit_times(paths)
    return {p: max(0.0, (int(head_time) - t) / 86400) for p, t in times.items()}


def parent_scope(reader: Store, chunk: Chunk, max_lines: int) -> assemble.Scope | None:
    """The class around a method: every stored chunk of that class, lines in between kept
    blank (they were blank or comments between members). Masked: it goes into the pack."""
    if chunk.kind != "method" or "." not in chunk.symbol:
        return None
    owner = chunk.symbol.rsplit(".", 1)[0]
    stored = reader.scope_members(chunk.path, owner, max_lines)
    if stored is None or len(stored) < 2:
        return None  # no class around it, or too big to go in whole
    members = [sc.chunk for sc in stored]
    start = min(m.start for m in members)
    end = max(m.end for m in members)
    lines = [""] * (end - start + 1)
    for m in members:
        for i, text in enumerate(shown_text(m).split("\n")):
            lines[m.start - start + i] = text
    return start, end, owner, "\n".join(lines)


def shown_text(chunk: Chunk) -> str:
    """The chunk's text as it may leave the engine: the secret spans the index found over
    its whole file (``secrets.shown``) hidden."""
    return shown(chunk.text, chunk.start, chunk.secrets)


def rerankers(
    cfg: Config,
    index: SearchIndex,
    qa: query.QueryAnalysis,
    depth: str,
    notes: list[str],
    control: RequestControl | None = None,
) -> list[rerank.Reranker]:
    """The feature scorer, then the configured model scorer when the question is one it
    helps with, then the multilingual scorer for a question that holds Chinese. A model that
    cannot load leaves the others, with a note: the request still answers."""
    if not cfg.stages.rerank:
        return []
    out: list[rerank.Reranker] = [rerank.FeatureReranker()]
    kind = cfg.ranking.reranker if depth != "quick" else "none"
    if (
        kind == "cross-encoder"
        and cfg.ranking.cross_encoder_for == "descriptions"
        and not rerank.reads_as_description(qa)
    ):
        kind = "none"
    if kind == "cross-encoder":
        try:
            model = crossencoder.shared(crossencoder.MODEL_PATH, cfg.ranking.rerank_threads)
        except Exception as exc:  # missing or unreadable model file, onnxruntime error
            notes.append(f"cross-encoder unavailable ({exc}); feature scorer only")
        else:
            deep = depth == "deep"
            pairs = cfg.ranking.rerank_pairs_deep if deep else cfg.ranking.rerank_pairs
            blend = cfg.ranking.rerank_blend
            out.append(rerank.CrossEncoderReranker(model, index.scores, pairs, blend, control))
    elif kind == "bi-encoder" and index.cache is not None:
        out.append(rerank.BiEncoderReranker(index.embedder, index.cache, cfg.ranking.rerank_blend))
    out.extend(multilingual.rerankers(qa, depth != "quick", notes))  # questions holding Chinese
    return out


def pause(control: RequestControl | None) -> None:
    """A pause point between stages: the host lets latency-sensitive requests (a hover) run
    first. Stages are tens of milliseconds of Python each, and two threads running Python share
    one interpreter lock, so a deep find that only paused inside the cross-encoder still slowed
    every hover that arrived during its recall or features."""
    if control is not None and control.pause is not None:
        control.pause()


def answer(
    req: FindRequest,
    open_file: str | None,
    cfg: Config,
    index: SearchIndex,
    timings: dict[str, StageTiming],
    notes: list[str],
    control: RequestControl | None = None,
) -> FindResult:
    """``control``: the host's cancel and pause (``api.RequestControl``); once cancelled the
    cross-encoder starts no further pair and :class:`RequestCancelled` is raised instead of an
    answer."""
    t0 = time.perf_counter()
    qa = query.analyze(req.query, req.intent)
    about = (
        subject.subject_of(qa, index.reader, open_file, req.line)
        if open_file is not None and subject.asks_about_the_file(qa)
        else None
    )
    if about is not None:
        qa = subject.as_its_names(qa, about.names)
        notes.append(about.note)
    notes.extend(qa.reading_notes)
    words = crosslingual.han_query_terms(qa.raw)
    lexical = index.lexical if cfg.stages.lexical else None
    # The file's names are no prose: words in a row are joined in the question only.
    if (
        lexical is not None
        and about is None
        and (fused := joined.add_joined_words(qa, lexical.doc_freq))
    ):
        notes.append(f"also searched for {', '.join(fused)}: the question's words as one")
    spoken = lexical is not None and crosslingual.speaks_chinese(words, lexical.doc_freq)
    rendering = qa.rendering  # read_as_asked drops it from what the models read
    aside = False  # the English-only models stepped aside (from a vector stage that was on)
    parts_read: str | None = None  # the rendering, when it ordered the parts of files
    if qa.rendering is not None and spoken:
        qa.read_as_asked(crosslingual.says_little(lexical.doc_freq, len(lexical)))
        notes.append("the workspace's text holds the question's Chinese words: read as asked")
    if (
        lexical is not None
        and not crosslingual.models_can_read(qa.model_text)
        and crosslingual.holds_chinese(words, lexical.doc_freq)
    ):
        aside = cfg.stages.vectors
        cfg = cfg.changed(stages={"vectors": False}, ranking={"reranker": "none"})
        notes.append("the English-only models would read Chinese: ranked by words and structure")
    timings["query"] = StageTiming(len(qa.terms), _ms(t0))
    pause(control)
    editor = recall.EditorState(open_file, req.line)
    rec = recall.recall(
        qa,
        editor,
        cfg,
        index.reader,
        index.lexical if cfg.stages.lexical else None,
        index.vectors if cfg.stages.vectors else None,
        index.embedder if cfg.stages.vectors else None,
        index.cache if cfg.stages.vectors else None,
    )
    notes.extend(rec.notes)
    for name, ranking in rec.channels.items():
        timings[f"recall.{name}"] = StageTiming(len(ranking), rec.ms.get(name, 0.0))
    pause(control)
    t0 = time.perf_counter()
    weights = fuse.channel_weights(cfg.ranking)
    cands = fuse.fuse(rec.channels, index.reader, cfg.ranking.rrf_k, weights)
    if not qa.about_declarations:
        cands = declarations.credit_definitions(cands, index.reader)
    timings["fuse"] = StageTiming(len(cands), _ms(t0))
    pause(control)
    t0 = time.perf_counter()
    deprecated = [c.stored.name for c in cands if features.marked_deprecated(c)]
    cands = features.apply_features(
        cands,
        qa,
        editor,
        rec.relations,
        cfg,
        use_boosts=cfg.stages.features,
        caller_counts=index.reader.caller_counts(deprecated) if deprecated else {},
        ages=(
            ages(index.reader, [c.stored.chunk.path for c in cands])
            if cfg.ranking.freshness_weight > 0
            else {}
        ),
        cochange=rec.cochange,
        generated=index.reader.generated_files(),
        churn=churn.churn(index.reader, [c.stored.chunk.path for c in cands])
        if features.change_prior_applies(open_file, qa)
        else None,
    )
    timings["features"] = StageTiming(len(cands), _ms(t0))
    t0 = time.perf_counter()
    scorers = rerankers(cfg, index, qa, req.depth, notes, control)
    cands, scored, rerank_notes = rerank.rerank(
        cands,
        qa,
        scorers,
        top_n=RERANK_HEAD,
        budget_ms=None if req.depth == "deep" else cfg.ranking.rerank_budget_ms,
    )
    if control is not None and control.cancel.is_set():
        raise RequestCancelled(f"cancelled after scoring {scored} candidates")
    notes.extend(rerank_notes)
    timings["rerank"] = StageTiming(scored, _ms(t0))
    if aside and rendering is not None and index.cache is not None and req.depth != "quick":
        t0 = time.perf_counter()
        try:
            cosine = parts.cosines(cands, rendering, index.embedder, index.cache)
        except Exception as exc:  # an enhancement: the words' order stands
            notes.append(f"parts of a file not ordered by the rendering ({exc})")
        else:
            cands = parts.order_parts(cands, cosine)
            timings["parts"] = StageTiming(len(cosine), _ms(t0))
            parts_read = rendering
    pause(control)
    t0 = time.perf_counter()
    quota = 1 if about is not None else assemble.file_quota(cfg.ranking, open_file)
    ranked = assemble.diversify(cands, quota, cfg.ranking.distinct_margin, open_file)
    if about is not None and open_file is not None:
        ranked = subject.others_first(ranked, open_file, qa.about_tests)
    ranked = assemble.members_first(ranked, set(qa.names))
    top = [evidence(c) for c in ranked[: verdict.TOP]]
    doc_freq = index.lexical.doc_freq if index.lexical is not None else None
    t1 = time.perf_counter()
    judged = verdict.judge(qa, open_file, top, cfg.ranking.insufficient_below, doc_freq)
    timings["verdict"] = StageTiming(len(top), _ms(t1))
    # Ranking and the verdict saw the real text; what leaves the engine is masked.
    for c in ranked[: max(req.limit, 40)]:
        c.stored = dataclasses.replace(
            c.stored,
            chunk=dataclasses.replace(c.stored.chunk, text=shown_text(c.stored.chunk), secrets=()),
        )
    opens_at = focus.Focus(rec.lines, focus.LineScorer(qa.terms, qa.identifiers, qa.fragments))
    budget = req.budget_tokens if req.budget_tokens is not None else cfg.context.budget_tokens
    # Budget 0: results only. Hover and lenses show locations and never read the pack.
    context = (
        assemble.assemble_context(
            ranked,
            budget,
            index.embedder.count_tokens,
            cfg.context.per_file_blocks,
            judged,
            parent_of=lambda chunk, max_lines: parent_scope(index.reader, chunk, max_lines),
            focus=opens_at,
        )
        if budget > 0
        else ContextPack("", 0, 0)
    )
    results = [evidence(c, opens_at(c.stored.chunk)) for c in ranked[: req.limit]]
    timings["assemble"] = StageTiming(len(results), _ms(t0))
    return FindResult(
        query=req.query,
        workspace=index.workspace,
        commit=index.reader.get_meta("commit"),
        branch=index.reader.get_meta("branch"),
        results=results,
        context=context,
        confidence=judged.confidence,
        insufficient=judged.insufficient,
        insufficient_reason=judged.reason,
        trace=timings,
        intent=qa.intent,
        index_mode="read-only" if index.read_only else "read-write",
        notes=notes,
        rendering=qa.rendering or parts_read,
    )


def stored_evidence(sc: StoredChunk, reasons: list[str] | None = None, line: int = 0) -> Evidence:
    """A stored chunk as a result without scores (lookups: outline, definitions, callers);
    ``line``: where it opens (0: its start)."""
    ch = sc.chunk
    return Evidence(
        ch.path,
        ch.start,
        ch.end,
        ch.symbol,
        ch.kind,
        ch.language,
        0.0,
        reasons or [],
        shown_text(ch),
        line=line,
    )


def evidence(c: Candidate, line: int = 0) -> Evidence:
    """A candidate as a result; ``line``: where it opens (``focus.py``; 0: its start)."""
    ch = c.stored.chunk
    scores = {f"{name}_rank": float(rank) for name, rank in c.ranks.items()}
    if "bm25" in c.channel_scores:
        scores["bm25"] = c.channel_scores["bm25"]
    if "vector" in c.channel_scores:
        scores["cosine"] = c.channel_scores["vector"]
    scores.update({"fused": c.fused, "boost": c.boost, "factor": c.factor})
    if c.rerank is not None:
        scores["rerank"] = c.rerank
    if c.cross is not None:
        scores["cross"] = c.cross
    if c.below != 1.0:
        scores["below_read"] = c.below
    if c.cochange is not None:
        scores["cochange_count"] = float(c.cochange.count)
        scores["cochange_last"] = float(c.cochange.last_time)
    if c.template_coverage is not None:
        scores["template_coverage"] = c.template_coverage
    if c.rendering_cosine is not None:
        scores["rendering_cosine"] = c.rendering_cosine
    return Evidence(
        path=ch.path,
        start=ch.start,
        end=ch.end,
        symbol=ch.symbol,
        kind=ch.kind,
        language=ch.language,
        score=c.score,
        reasons=list(c.reasons),
        text=ch.text,
        scores=scores,
        line=line,
    )
