"""The record a candidate chunk carries from recall through fusion, features and rerank."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..index.cochange import Partner
from ..index.store import StoredChunk


@dataclass(slots=True)
class Candidate:
    stored: StoredChunk
    ranks: dict[str, int] = field(default_factory=dict)  # channel -> 1-based rank
    channel_scores: dict[str, float] = field(default_factory=dict)  # channel -> raw score
    fused: float = 0.0  # reciprocal-rank fusion
    boost: float = 0.0  # added by hard features (in RRF units)
    factor: float = 1.0  # soft penalties multiply
    rerank: float | None = None  # the feature scorer's query coverage, when it ran
    cross: float | None = None  # the model reranker's score (cross-encoder logit or cosine)
    # Below what the model read: the factor that put this unread candidate's score under the
    # last one the model scored (``rerank.below_the_scored``); 1.0 when none was needed.
    below: float = 1.0
    score: float = 0.0  # the final ranking score
    reasons: list[str] = field(default_factory=list)
    # Documentation that lives elsewhere (a C/C++ prototype's comment in a header): second-stage
    # scorers read it with the chunk's text; results never show it.
    doc: str = ""
    # The file changed together with the open file in past commits (the co-change feature).
    cochange: Partner | None = None
    # How much of a pasted error message this chunk's best string literal explains, read as
    # a template (the message-template feature); None when none does.
    template_coverage: float | None = None
    # The cosine of a Chinese question's English rendering with this chunk's vector, when the
    # parts stage read it to order its file's parts (``parts.py``); None otherwise.
    rendering_cosine: float | None = None

    @property
    def id(self) -> int:
        return self.stored.id

    def tag(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
