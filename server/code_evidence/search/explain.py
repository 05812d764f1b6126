"""Why each result ranked where it did, in one line a person can check.

Built only from what every result already carries (``scores`` and ``reasons``), so the CLI's
``--explain`` and the language server's ``codeEvidence/explain`` say the same thing and cannot
drift from the ranking that produced the answer.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ..api import Evidence, FindResult
from .templates import trusted

CHANNELS = ("bm25", "vector", "structural", "cochange", "frames", "named")
FEATURE_TAGS = {
    "exact-identifier",
    "mentions-identifier",
    "member-named",
    "path-match",
    "scope-match",
    "must-match",
    "imports",
    "imported-by",
    "same-dir",
    "caller",
    "callee",
    "innermost-frame",
    "stack-frame",
    "named-line",
    "error-message",
    "co-change",
    "often-changed",
    "message-template",
    "raises",
    "open-file",
}
PENALTY_TAGS = {
    *("test", "outside-source", "declaration", "open-file", "deprecated", "build-variant"),
    "exception-class",
}


def explain_result(r: Evidence) -> str:
    s = r.scores
    found = []
    for channel in CHANNELS:
        rank = s.get(f"{channel}_rank")
        if rank is None:
            continue
        raw = ""
        if channel == "bm25" and "bm25" in s:
            raw = f" bm25 {s['bm25']:.2f}"
        elif channel == "vector" and "cosine" in s:
            raw = f" cos {s['cosine']:.3f}"
        found.append(f"{channel} #{int(rank)}{raw}")
    if "cochange_count" in s:
        last = datetime.fromtimestamp(s.get("cochange_last", 0.0), UTC).date().isoformat()
        count = int(s["cochange_count"])
        found.append(f"changed with the open file in {count} commits, last {last}")
    if "template_coverage" in s:
        share = round(100 * s["template_coverage"])
        found.append(f"a string literal here writes {share}% of the pasted message's text")
    parts = [", ".join(found) or "no channel"]
    parts.append(f"fused {s.get('fused', 0.0):.4f}")
    if "declared-in-header" in r.reasons:
        parts[-1] += " (its declaration's)"
    boosts = [t for t in r.reasons if t in FEATURE_TAGS]
    if s.get("boost"):
        parts.append(f"+ {s['boost']:.4f} ({', '.join(boosts) or 'features'})")
    penalties = [t for t in r.reasons if t in PENALTY_TAGS]
    factor = s.get("factor", 1.0)
    if factor != 1.0:
        parts.append(f"x {factor:.2f} ({', '.join(penalties) or 'non-code'})")
    if "rerank" in s:
        parts.append(f"x (1 + rerank {s['rerank']:.2f})")
    if "cross" in s and trusted(s.get("template_coverage")):
        parts.append(f"(model {s['cross']:.2f}, not counted: the literal writes the message)")
    elif "cross" in s:
        parts.append(f"x exp(blend * (model {s['cross']:.2f} - best model score))")
    if "below_read" in s:
        parts.append(f"x {s['below_read']:.2f} (under the last result the model read)")
    if "member-first" in r.reasons:
        parts.append("(traded places and scores with its type's header)")
    elif "after-member" in r.reasons:
        parts.append("(traded places and scores with its member)")
    if "rendering-order" in r.reasons:
        cosine = s.get("rendering_cosine", 0.0)
        parts.append(
            f"(placed among its file's parts by the rendering's cosine {cosine:.3f}, with the "
            "score of that place)"
        )
    parts.append(f"= {r.score:.4f}")
    return "; ".join(parts[:1]) + " -> " + " ".join(parts[1:])


def _opens(r: Evidence) -> str:
    """Where a result opens past its first line (``focus.py``), said after its place."""
    return f" (opens at {r.line})" if r.line != r.start else ""


def explain(result: FindResult) -> list[str]:
    """The English rendering the models read (a Chinese question), one line per ranked
    result, then what the assembler dropped and why."""
    lines = [f"rendering: {result.rendering}"] if result.rendering else []
    lines += [
        f"{i:>2}. {r.path}:{r.start}-{r.end} {r.symbol or '-'}{_opens(r)}: {explain_result(r)}"
        for i, r in enumerate(result.results, 1)
    ]
    stages = ", ".join(f"{k} {v.candidates} in {v.ms:.1f} ms" for k, v in result.trace.items())
    lines.append(f"stages: {stages}")
    for d in result.context.dropped:
        lines.append(f"not in context: {d.path}:{d.start}-{d.end} ({d.reason})")
    return lines
