"""Words a name is made of, asked apart: "timing out" for ``timeout``, "set up" for
``setup``, "the task group" for ``TaskGroup`` / ``task_group``. The index holds a fused name
whole beside its parts, but BM25 matches words and the stemmer does not make "timing" ``time``,
so the question's words in a row are joined into the names code would write, and those the
workspace holds are searched too (docs/quality.md, "Words a name is made of, asked apart").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from .query import STOPWORDS, QueryAnalysis

# A phrasal verb's particle: code fuses the pair into one name (``timeout``, ``setup``,
# ``login``, ``fallback``, ``cleanup``, ``checkout``, ``plugin``) that the question splits
# ("timing out", "set up", "logging in", "falls back").
_PARTICLES = frozenset({"out", "up", "in", "down", "off", "back", "over"})
# Stopwords that are verbs (``set up``, ``get back``, ``make up``): the others are no verb.
_STOPWORD_VERBS = frozenset(
    {"set", "sets", "get", "gets", "make", "makes", "made", "use", "used", "using", "add"}
    | {"added", "adds", "fix", "fixed", "fixes", "change", "changed", "changes", "update"}
)
_PHRASE_WORDS = re.compile(r"[a-z]+")


def _verb_forms(word: str) -> list[str]:
    """The base forms an inflected verb may come from: ``timing`` -> time, ``logging`` -> log,
    ``falls`` -> fall, ``cleaned`` -> clean (over-generated; the index decides which exist)."""
    forms = [word]
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            stem = word[: -len(suffix)]
            forms += [stem, stem + "e"]
            if len(stem) > 2 and stem[-1] == stem[-2]:
                forms.append(stem[:-1])  # logging -> logg -> log
    return list(dict.fromkeys(forms))


def joined_candidates(raw: str, prose: bool = True) -> list[str]:
    """The one-word names a question's phrasal verbs may stand for ("timing out" ->
    timeout, timingout, ...), and in ``prose`` (not a pasted failure, whose words the program
    wrote) the name two words in a row may be ("task group" -> taskgroup, task_group; "file
    name" -> filename): candidates only; the pipeline keeps those the workspace holds."""
    words = _PHRASE_WORDS.findall(raw.lower())
    out: list[str] = []
    for verb, particle in pairwise(words):
        verb_like = verb not in STOPWORDS or verb in _STOPWORD_VERBS
        if particle in _PARTICLES and verb not in _PARTICLES and verb_like and len(verb) > 1:
            out.extend(form + particle for form in _verb_forms(verb))
        elif (
            prose
            and len(verb) > 2
            and len(particle) > 2
            and verb not in STOPWORDS
            and particle not in STOPWORDS
        ):
            out += [verb + particle, f"{verb}_{particle}"]
    return list(dict.fromkeys(out))


def add_joined_words(qa: QueryAnalysis, doc_freq: Callable[[str], int]) -> list[str]:
    """ "timing out" asks about ``timeout``, "task group" about ``TaskGroup``: the fused
    names of :func:`joined_candidates` the workspace holds (``doc_freq``) join the question's
    BM25 terms; returned for the answer's note."""
    prose = not (qa.messages or qa.frames)
    joined = [t for t in joined_candidates(qa.raw, prose) if t not in qa.terms and doc_freq(t)]
    qa.terms.extend(joined)
    return joined
