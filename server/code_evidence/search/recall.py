"""Recall: BM25, vectors, the structural channel and co-change, each returning its own ranking.

Channels run in parallel (Tantivy and onnxruntime release the GIL). A channel that is switched
off, not built yet or failing contributes nothing instead of failing the request; the reason
lands in ``notes`` so the answer can say it degraded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..config import Config
from ..index.cochange import Partner
from ..index.lexical import LexicalView
from ..index.store import Store, StoredChunk
from ..index.vectors import VectorIndex
from ..models.embed_cache import EmbeddingCache
from ..models.embedder import Embedder
from . import calls
from .js_frames import BuiltFrames, failing_first
from .query import QueryAnalysis
from .stacktraces import map_to_workspace

Ranking = list[tuple[int, float]]  # (chunk id, channel score), best first


@dataclass(slots=True)
class RecallResult:
    channels: dict[str, Ranking] = field(default_factory=dict)
    ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Structural relations of candidates to the editor state: chunk id -> relation tags.
    relations: dict[int, set[str]] = field(default_factory=dict)
    # The open file's co-change partners (git history), by path.
    cochange: dict[str, Partner] = field(default_factory=dict)
    # The lines the question points at (a trace's frames, innermost first; ``app.py:42``), by
    # workspace path: where a result holding one opens (``focus.py``).
    lines: dict[str, list[int]] = field(default_factory=dict)


@dataclass(slots=True)
class EditorState:
    open_file: str | None
    line: int | None


_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall")


def _timed(fn: Callable[[], Ranking]) -> tuple[Ranking, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1000


def recall(
    qa: QueryAnalysis,
    editor: EditorState,
    cfg: Config,
    store: Store,
    lexical: LexicalView | None,
    vectors: VectorIndex | None,
    embedder: Embedder | None,
    cache: EmbeddingCache | None,
) -> RecallResult:
    res = RecallResult()
    k = cfg.ranking.recall_k
    futures = {}
    if cfg.stages.lexical and lexical is not None:
        futures["bm25"] = _POOL.submit(_timed, lambda: _keyword(lexical, qa, k))
    query_vec: list[np.ndarray] = []
    if cfg.stages.vectors:
        if vectors is None or embedder is None or len(vectors) == 0:
            res.notes.append("vectors unavailable: answered from BM25 and structure only")
        else:

            def _vec() -> Ranking:
                q = embedder.embed_query(qa.model_text)
                query_vec.append(q)
                return vectors.search(q, k)

            futures["vector"] = _POOL.submit(_timed, _vec)
    for name, fut in futures.items():
        try:
            ranking, ms = fut.result()
        except Exception as exc:  # a broken channel degrades the answer, never fails it
            res.notes.append(f"{name} channel failed: {exc}")
            continue
        res.channels[name] = ranking
        res.ms[name] = ms

    if cfg.stages.structural and qa.frames:
        t0 = time.perf_counter()
        res.channels["frames"] = _stack_frames(qa, store, res.relations, res.lines)
        res.ms["frames"] = (time.perf_counter() - t0) * 1000
    if cfg.stages.structural and qa.named_paths:
        t0 = time.perf_counter()
        files = named_files(qa.named_paths, store.paths_ending)
        named = [cid for path in files for cid in store.chunk_ids_of(path)]
        if named:
            ordered = _order_structural(
                named, store, cache, query_vec[0] if query_vec else None, res
            )
            # ``tree.go:120``: the chunk at a line the question points at comes first.
            pointed = _named_lines(qa, files, store, res.relations, res.lines)
            ordered = [(cid, 1.0) for cid in pointed] + [x for x in ordered if x[0] not in pointed]
            cap = cfg.ranking.structural_k
            res.channels["named"] = ordered[:cap] if cap > 0 else ordered
        res.ms["named"] = (time.perf_counter() - t0) * 1000
    if cfg.stages.structural and editor.open_file:
        t0 = time.perf_counter()
        structural = _structural(editor, store, res.relations)
        ordered = _order_structural(
            structural, store, cache, query_vec[0] if query_vec else None, res
        )
        cap = cfg.ranking.structural_k
        res.channels["structural"] = ordered[:cap] if cap > 0 else ordered
        res.ms["structural"] = (time.perf_counter() - t0) * 1000
    rc = cfg.ranking
    if cfg.stages.structural and editor.open_file and rc.cochange_k > 0:
        t0 = time.perf_counter()
        head_time = store.get_meta("history_head_time")
        partners = (
            store.cochange().partners(editor.open_file, int(head_time), rc.cochange_k)
            if head_time
            else []
        )
        res.cochange = {p.path: p for p in partners}
        if partners and rc.cochange_weight > 0:
            ids = [cid for p in partners for cid in store.chunk_ids_of(p.path)]
            ordered = _order_structural(ids, store, cache, query_vec[0] if query_vec else None, res)
            cap = rc.structural_k
            res.channels["cochange"] = ordered[:cap] if cap > 0 else ordered
        res.ms["cochange"] = (time.perf_counter() - t0) * 1000
    return res


def _keyword(lexical: LexicalView, qa: QueryAnalysis, k: int) -> Ranking:
    """BM25 over the question's terms, then the chunks that hold every literal word of a
    pasted error message, after the channel's own hits: the template that wrote the message
    is often one statement in a long function whose words the whole file shares (symfony's
    ``Command "%s" is not defined.`` in a 110-line ``Application::find``), and it earns its
    place by matching (features.py), not by its keyword rank."""
    ranking = lexical.search(qa.terms, k)
    seen = {cid for cid, _ in ranking}
    for words in qa.message_terms:
        for cid, score in lexical.search(words, k, require_all=True):
            if cid not in seen:
                seen.add(cid)
                ranking.append((cid, score))
    return ranking


def names_file(name: str, path: str) -> bool:
    """A path the question gives (``web/urls.py``, ``urls.py``) names ``path`` when it is the
    whole path or its tail (``Store.paths_ending`` asks the same of the index)."""
    return path == name or path.endswith("/" + name)


# A bare file name that many folders hold (``__init__.py``, ``utils.py``) names none of them.
MAX_NAMED_FILES = 3


def named_files(named: list[str], lookup: Callable[[str, int], list[str]]) -> list[str]:
    """The workspace files the question names (a path, its tail, or a module's file): their
    chunks are candidates even when no word of theirs matches (``module 'werkzeug' has no
    attribute '__version__'`` names ``werkzeug/__init__.py``, whose text is imports).
    ``lookup(name, limit)``: up to ``limit`` files that are ``name`` or end with ``/name``."""
    out: list[str] = []
    for p in named:
        hits = lookup(p, MAX_NAMED_FILES + 1)
        if 0 < len(hits) <= MAX_NAMED_FILES:
            out.extend(h for h in hits if h not in out)
    return out


def _named_lines(
    qa: QueryAnalysis,
    files: list[str],
    store: Store,
    relations: dict[int, set[str]],
    lines: dict[str, list[int]],
) -> list[int]:
    """The chunks at the lines the question's named files are given with (``app.py:42``),
    tagged ``named-line``: the user points there as a trace's innermost frame does. ``files``:
    what ``named_files`` found for the headline (not looked up again). Each such line is added
    to ``lines``."""
    out: list[int] = []
    for path, line in qa.path_lines.items():
        if path not in qa.named_paths:
            continue
        for file in (f for f in files if names_file(path, f)):
            lines.setdefault(file, []).append(line)
            sc = store.chunk_at(file, line)
            if sc is not None and sc.id not in out:
                out.append(sc.id)
                relations.setdefault(sc.id, set()).add("named-line")
    return out


def _stack_frames(
    qa: QueryAnalysis,
    store: Store,
    relations: dict[int, set[str]],
    lines: dict[str, list[int]],
) -> Ranking:
    """The chunks that hold the workspace frames of a pasted stack trace (or a compiler's
    places), innermost first; a frame of a build is placed in its source, and V8's frames that
    only made the error follow the one that failed (``js_frames``). The innermost workspace
    frame is tagged apart: it is usually where the fix goes. Each frame's line is added to
    ``lines`` (a build's is not: it counts the build's lines, not the source's)."""
    paths = store.paths()
    built = BuiltFrames(store, paths)
    placed: list[tuple[str, str | None, StoredChunk]] = []
    seen: set[int] = set()
    for frame in qa.frames:
        path = map_to_workspace(frame, paths)
        if path is not None:
            sc = store.chunk_at(path, frame.line)
            lines.setdefault(path, []).append(frame.line)
        else:  # a build's file: its source, by the function's name (its line is the build's)
            sc = built.chunk(frame.path, frame.function)
        if sc is None or sc.id in seen:
            continue
        seen.add(sc.id)
        placed.append((frame.path, frame.function, sc))
    ranking: Ranking = []
    for sc in failing_first(placed):
        relations.setdefault(sc.id, set()).add("innermost-frame" if not ranking else "stack-frame")
        ranking.append((sc.id, 1.0 / (len(ranking) + 1)))
    return ranking


def _structural(editor: EditorState, store: Store, relations: dict[int, set[str]]) -> list[int]:
    """Chunks of the files the open file imports and is imported by, and the 1-hop callees and
    callers of the symbol under the cursor."""
    assert editor.open_file is not None
    ids: list[int] = []

    def add(cid: int, tag: str) -> None:
        relations.setdefault(cid, set()).add(tag)
        ids.append(cid)

    # A generated copy open in the editor (a build output, a Deno mirror): its source is where
    # an edit belongs, and the source's neighbours are the ones that matter.
    anchors = [editor.open_file]
    source = store.generated_files().source_of.get(editor.open_file)
    if source is not None:
        anchors.append(source)
        for cid in store.chunk_ids_of(source):
            add(cid, "source-of-open")
    for anchor in anchors:
        for path in store.imports_of(anchor):
            for cid in store.chunk_ids_of(path):
                add(cid, "imports")
        for path in store.importers_of(anchor):
            for cid in store.chunk_ids_of(path):
                add(cid, "imported-by")
    if editor.line is not None:
        here = store.chunk_at(editor.open_file, editor.line)
        if here is not None:
            # Through the resolved imports: a qualified match where one exists (calls.py).
            for sc in calls.resolved_callees(store, here):
                add(sc.id, "callee")
            if here.name:
                for cid in calls.resolved_callers(store, here.name, [editor.open_file]):
                    if cid != here.id:
                        add(cid, "caller")
    return list(dict.fromkeys(ids))


def _order_structural(
    ids: list[int],
    store: Store,
    cache: EmbeddingCache | None,
    query_vec: np.ndarray | None,
    res: RecallResult,
) -> Ranking:
    """The structural channel has no score of its own: order its members by how close they are
    to the question (cosine of cached chunk vectors), else by how the other channels ranked
    them, so RRF gives its top ranks to the neighbours that matter."""
    if not ids:
        return []
    if query_vec is not None and cache is not None:
        keys = store.emb_keys(ids)
        vecs = cache.get_many(list(set(keys.values())))
        scored = []
        for cid in ids:
            v = vecs.get(keys.get(cid, ""))
            scored.append((cid, float(np.dot(v, query_vec)) if v is not None else -1.0))
        scored.sort(key=lambda x: -x[1])
        return scored
    other: dict[int, float] = {}
    for ranking in res.channels.values():
        for rank, (cid, _) in enumerate(ranking, 1):
            other[cid] = max(other.get(cid, 0.0), 1.0 / rank)
    return sorted(((cid, other.get(cid, 0.0)) for cid in ids), key=lambda x: -x[1])
