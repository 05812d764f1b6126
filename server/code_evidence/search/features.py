"""Hard features from the editor state and the query, and the filters.

Boosts are expressed in RRF units (one first-place vote is ``1 / (k + 1)``) so they compose with
fusion without calibration. Every boost leaves a reason tag: an answer must say why it ranked.
"""

from __future__ import annotations

import math
import posixpath
import re

from ..config import Config
from ..filekinds import file_flags, is_declaration_path, is_outside_source, is_prose_path
from ..index.cochange import Partner
from ..index.generated import BUILD_VARIANT, GeneratedFiles
from ..index.terms import split_identifier
from . import templates
from .candidate import Candidate
from .declarations import DECLARATION_KIND
from .joined import joined_candidates
from .query import STOPWORDS, QueryAnalysis, headline
from .recall import EditorState, names_file

# Votes, in first-place RRF votes.
W_MENTIONS = 0.3
W_PATH = 1.0
W_MUST_MATCH = 0.5
W_INNERMOST_FRAME = 3.0  # the frame that raised: where a fix usually goes
W_FRAME = 1.0
W_ERROR_MESSAGE = 1.5  # holds a literal fragment of the pasted error message
# Holds the template that produced the pasted message (placeholders matching the values),
# scaled by how much of the message it explains: the raise with the sentence, not the class.
W_TEMPLATE = 2.0
# A member of a type the question names whose own name is made of the question's other words
# ("how does ArrayList grow its capacity": ``ArrayList.grow``, ``ensureCapacity``), for each
# word it holds, up to two ("which executor runs async tasks by default": ``defaultExecutor``
# holds two, each ``…Async`` one).
W_MEMBER_WORDS = 1.0
W_RAISES = 1.0  # raises or throws the exception type the error line names
# The class of that exception (and its members), when code that raises it is a candidate: the
# place that raised is what the message asks for, the class is secondary evidence.
EXCEPTION_CLASS_FACTOR = 0.5
FRESH_HALF_LIFE_DAYS = 90.0
FRESH_TAG_DAYS = 30.0
DEPRECATED_FACTOR = 0.6  # marked deprecated and called by nothing in the workspace
NON_CODE_FACTOR = 0.4  # docs and config rank below code unless the question is "explain"
# Examples, benchmarks, docs folders and packaging glue (``filekinds.is_outside_source``) are not
# where a change goes: secondary to the code they show, as tests are (``outside_source_factor``),
# unless the question's headline asks about them or it asks how something works.
_OUTSIDE_WORDS = frozenset(
    {"example", "examples", "demo", "demos", "benchmark", "benchmarks", "bench", "doc", "docs"}
    | {"documentation", "readme", "setup", "conftest", "noxfile", "fabfile", "packaging"}
)


_DEPRECATED = re.compile(r"@[Dd]eprecated|\bDeprecationWarning\b|\bdeprecated\b|@deprecated")


def marked_deprecated(c: Candidate) -> bool:
    """The chunk says it is deprecated (a decorator, a warning, a docstring word). Every match
    of the pattern holds "eprecat", and a substring test is ~50x cheaper than the pattern's
    search (its ``\\b`` alternatives try every position): on Django's chunks, 60 µs a chunk
    for each of a question's ~150 candidates, twice, was a tenth of a find's median."""
    text = c.stored.chunk.text
    return "eprecat" in text and _DEPRECATED.search(text) is not None


def owner_of(symbol: str) -> str | None:
    """The type a member belongs to (``Take.advance`` -> ``Take``), None for a top-level name."""
    parts = symbol.rsplit(".", 2)
    return parts[-2] if len(parts) > 1 else None


def qualified_names(
    cands: list[Candidate], qa: QueryAnalysis
) -> tuple[dict[str, set[str]], set[str]]:
    """For the question's ``Type.member`` names: member -> the types it was named with, and
    the members some candidate defines on one of those types. Where that qualified definition
    exists, a same-named member of another type is only a mention (``Bytes::split_to`` is not
    ``BytesMut::split_to``); where none does, the bare name is the fallback."""
    owners: dict[str, set[str]] = {}
    for owner, member in qa.qualified:
        owners.setdefault(member, set()).add(owner)
    defined = {
        c.stored.name
        for c in cands
        if c.stored.name in owners and owner_of(c.stored.chunk.symbol) in owners[c.stored.name]
    }
    return owners, defined


# Words that ask for the type itself (where it is defined, how one is made): its header and
# its constructors keep the name.
_ITSELF = (
    *("defin", "declar", "locat", "class", "type", "construct", "creat", "instanti"),
    *("initiali", "implement"),
)


def member_words(qa: QueryAnalysis) -> tuple[set[str], set[str]]:
    """What "how does ConcurrentHashMap resize its table" asks for: a member of the type made
    of the question's other words (``resizeStamp``, ``initTable``), not the type, and not its
    constructors, whose name is the type's. Returns the types (capitalised names with inner
    capitals) and the first five letters of the other words (a member's name part that starts
    with one holds it: "load" ``loaded``). Nothing when a word of the headline asks for the
    type itself (defined, class, constructed …; a change description's body says more than
    its ask), or for a paste: it names the types it printed, not one it asks about."""
    if qa.frames or qa.messages or qa.intent == "fix-failure":
        return set(), set()
    types = {n for n in qa.names if n[:1].isupper() and not n.isupper()}
    if not types:
        return set(), set()
    own = {t.lower() for t in types} | {p for t in types for p in split_identifier(t)}
    words = [
        w for w in re.findall(r"[a-z]{3,}", qa.raw.lower()) if w not in STOPWORDS and w not in own
    ]
    asked = re.findall(r"[a-z]{3,}", headline(qa.raw).lower())
    if not words or any(w.startswith(_ITSELF) for w in asked):
        return set(), set()
    # "shut down" is ``shutdown``, "roll over" ``doRollover``: the words code fuses them into.
    fused = joined_candidates(qa.raw, prose=False)  # the phrasal verbs only
    return types, {w[:5] for w in [*words, *fused]}


def in_scope(path: str, scopes: list[str]) -> bool:
    """``path`` is the component a scope names: its file stem (``router`` → ``router.go``,
    ``routes`` → ``route.js``), one of its folders (``binding`` → ``binding/*.go``), or the
    path without extension ending with a scope that has folders (``lib/hooks``)."""
    if not scopes:
        return False
    lower = path.lower()
    folders = lower.split("/")
    stem = folders.pop().split(".", 1)[0]
    plain = lower.rsplit(".", 1)[0]
    for scope in scopes:
        if "/" in scope:
            if plain == scope or plain.endswith("/" + scope):
                return True
        elif scope in (stem, stem + "s") or scope in folders:
            return True
    return False


def asks_outside_source(qa: QueryAnalysis) -> bool:
    """The headline names examples, benchmarks, docs or packaging, or the question is an
    explanation (where an example is good evidence of how a thing is used)."""
    if qa.intent == "explain":
        return True
    return bool(set(re.findall(r"[a-z]+", headline(qa.raw).lower())) & _OUTSIDE_WORDS)


def change_prior_applies(open_file: str | None, qa: QueryAnalysis) -> bool:
    """The change-frequency prior is for a question in words without an open file: with one,
    its co-change partners are the sharper use of the same history; a pasted error or stack
    trace names its place by its own text, and how often a file changed says nothing about
    where a message is raised. (The pipeline reads the churn counts only when this holds.)"""
    return not open_file and qa.intent != "fix-failure" and not qa.frames and not qa.messages


def change_prior(
    churn: dict[str, float] | None, editor: EditorState, qa: QueryAnalysis
) -> dict[str, float]:
    """path -> its churn on a log scale between the candidates' least changed file (0) and
    their most changed (1); nothing when they all changed alike (a one-commit repository), since
    a vote every candidate gets says nothing and only flattens the scores; nothing where
    :func:`change_prior_applies` does not hold."""
    if not churn or not change_prior_applies(editor.open_file, qa):
        return {}
    low = math.log1p(min(churn.values()))
    span = math.log1p(max(churn.values())) - low
    if span <= 0:
        return {}
    return {p: (math.log1p(n) - low) / span for p, n in churn.items()}


def apply_features(
    cands: list[Candidate],
    qa: QueryAnalysis,
    editor: EditorState,
    relations: dict[int, set[str]],
    cfg: Config,
    use_boosts: bool = True,
    caller_counts: dict[str, int] | None = None,
    ages: dict[str, float] | None = None,
    cochange: dict[str, Partner] | None = None,
    generated: GeneratedFiles | None = None,
    churn: dict[str, float] | None = None,
) -> list[Candidate]:
    """Filters always apply (they are policy, not ranking); boosts only when ``use_boosts``.
    Data the caller read for these candidates: ``caller_counts`` (name -> how many chunks call
    it, for the names of :func:`marked_deprecated` candidates) lets dead deprecated code sink;
    ``ages`` (path -> days since its last commit) feeds freshness; ``generated`` (the index
    pass's build outputs and twins) demotes copies below their sources; ``cochange`` (path ->
    the open file's co-change partner) feeds the co-change feature; ``churn`` (path -> how often
    git changed it, ``index/churn.py``) the change-frequency prior."""
    rc = cfg.ranking
    vote = 1.0 / (rc.rrf_k + 1)
    names = set(qa.names)
    qualified, defined = qualified_names(cands, qa)
    types = {owner for owner, _ in qa.qualified}
    lower_names = {n.lower() for n in names}
    open_dir = posixpath.dirname(editor.open_file) if editor.open_file else None
    strict = [*qa.quoted, *qa.error_codes]
    called = caller_counts or {}
    dead = {
        c.id
        for c in cands
        if marked_deprecated(c) and c.stored.name and not called.get(c.stored.name)
    }
    fresh_weight = cfg.ranking.freshness_weight
    age = (ages or {}) if fresh_weight > 0 else {}
    # A workspace of build output only (a published package) has no source to rank above it.
    built = generated.reasons if generated is not None and generated.sources else {}
    # The open file is source (not a test) and the question is not about tests.
    plain_open = (
        editor.open_file is not None
        and not file_flags(editor.open_file, "")[0]
        and not qa.about_tests
    )
    often = change_prior(churn, editor, qa)
    # The candidates' files the question names by path (or tail), and whether one is a source.
    paths = {c.stored.chunk.path for c in cands} if qa.paths else set()
    path_named = {path for path in paths if any(names_file(p, path) for p in qa.paths)}
    source_named = any(path not in built for path in path_named)
    outside_ok = asks_outside_source(qa)
    owner_types, owner_words = member_words(qa)
    raisers = {
        c.id
        for c in cands
        if any(templates.raises(c.stored.chunk.text, t) for t in qa.exception_types)
    }
    # The exception classes to rank below their raise sites: only when source code raises.
    error_types = (
        set(qa.exception_types)
        if any(not c.stored.chunk.is_test for c in cands if c.id in raisers)
        else set()
    )
    out: list[Candidate] = []
    for c in cands:
        ch = c.stored.chunk
        # A file that declares itself generated is left out, unless a frame or a diagnostic
        # the question pastes points into it: the question is about that file.
        framed = bool(relations.get(c.id, set()) & {"innermost-frame", "stack-frame"})
        if (ch.is_generated and not cfg.index.include_generated and not framed) or (
            ch.is_vendor and not cfg.index.include_vendor
        ):
            continue
        for channel in c.ranks:
            c.tag(channel)
        if ch.is_generated:
            c.tag("generated")  # kept for a frame: say what it is (the fix goes to its maker)
        if ch.is_test and not qa.about_tests:
            c.factor *= cfg.ranking.test_penalty
            c.tag("test")
        elif not outside_ok and ch.language != "text" and is_outside_source(ch.path):
            c.factor *= rc.outside_source_factor
            c.tag("outside-source")
        # A C/C++ prototype (its score lent to the definition first: ``declarations.py``) or a
        # type declaration file ranks below the implementation unless the question asks about
        # declarations, headers or types.
        if (
            ch.kind == DECLARATION_KIND or is_declaration_path(ch.path)
        ) and not qa.about_declarations:
            c.factor *= rc.declaration_factor
            c.tag("declaration")
        # Build outputs and generated copies: below the source of the same code, never
        # dropped (``include_generated`` drops only what declares itself generated), and not
        # demoted when the question names the file by its path, unless it names a source too
        # (``./never.js`` of a TypeScript import names rxjs's three builds and ``never.ts``).
        named = ch.path in path_named
        wanted = named and not source_named
        if ch.path in built and ch.path != editor.open_file and not wanted:
            if built[ch.path] != BUILD_VARIANT:
                c.factor *= rc.generated_factor
                c.tag("generated")
            elif posixpath.dirname(ch.path) != open_dir:
                # Beside the open file its variants are kept in step with it: not demoted.
                c.factor *= rc.build_variant_factor
                c.tag("build-variant")
        if not use_boosts:
            out.append(c)
            continue
        boost = 0.0
        name = c.stored.name
        owner = owner_of(ch.symbol)
        other_type = name in defined and owner not in qualified[name] if name else False
        # A constructor named after its type (Java, C#, C++) is one of its members, as
        # Python's ``__init__`` is: when the question asks for a member, the type's header
        # defines the name it gives.
        constructor = name is not None and owner == name
        if constructor and name in owner_types:
            boost += W_MENTIONS
            c.tag("mentions-identifier")
        elif (
            name
            and (name in names or name.lower() in lower_names)
            and not other_type
            and name.lower() in ch.text.lower()
        ):
            # The piece that spells the name defines it: a class's other pieces (statements
            # between its methods, ``submit.__doc__ = …``) carry its symbol, not its definition.
            boost += rc.exact_symbol_boost
            c.tag("exact-identifier")
        elif name in types and "." not in ch.symbol:
            # The type a qualified name is on: where its new or changed member goes.
            boost += rc.exact_symbol_boost
            c.tag("exact-identifier")
        elif other_type or (qa.identifiers and any(i in ch.text for i in qa.identifiers)):
            boost += W_MENTIONS
            c.tag("mentions-identifier")
        parts = split_identifier(name) if name and owner in owner_types and not constructor else []
        held = sum(1 for w in owner_words if any(part.startswith(w) for part in parts))
        if held:
            boost += W_MEMBER_WORDS * min(held, 2)
            c.tag("member-named")
        if named:
            boost += W_PATH
            c.tag("path-match")
        elif rc.scope_boost > 0 and in_scope(ch.path, qa.scopes):
            boost += rc.scope_boost
            c.tag("scope-match")
        if strict and any(s in ch.text for s in strict):
            boost += W_MUST_MATCH
            c.tag("must-match")
        rel = relations.get(c.id, set())
        if "innermost-frame" in rel:
            boost += W_INNERMOST_FRAME
            c.tag("innermost-frame")
        elif "stack-frame" in rel:
            boost += W_FRAME
            c.tag("stack-frame")
        elif "named-line" in rel:  # "tree.go:120 returns …": the user points there, as the
            boost += W_INNERMOST_FRAME  # innermost frame of a trace does
            c.tag("named-line")
        # A test that holds the pasted message expects it (``pytest.raises(match=...)``, an
        # assertion on ``str(e)``): where the message comes from is the code under test. The
        # tags still say what the test holds; the votes go to the code that produces it.
        produces = not (ch.is_test and not qa.about_tests)
        if qa.fragments and any(f in ch.text for f in qa.fragments):
            boost += W_ERROR_MESSAGE if produces else 0.0
            c.tag("error-message")
        # Only code produces messages: a README or changelog that quotes the text is not where
        # it comes from (the demo's README quotes its own question).
        match = (
            templates.best_template(ch.text, qa.message_bodies)
            if qa.message_bodies and not is_prose_path(ch.path)
            else None
        )
        if match is not None:
            boost += W_TEMPLATE * match.coverage if produces else 0.0
            c.template_coverage = match.coverage
            c.tag("message-template")
        if c.id in raisers:
            boost += W_RAISES
            c.tag("raises")
        elif match is None and ((name in error_types and owner is None) or owner in error_types):
            # Not a member that writes the message (``format_message``): that produced it.
            c.factor *= EXCEPTION_CLASS_FACTOR
            c.tag("exception-class")
        if editor.open_file:
            if ch.path == editor.open_file:
                c.factor *= rc.open_file_factor
                if c.ranks.keys() & {"bm25", "vector"}:
                    boost += rc.open_file_boost
                c.tag("open-file")
            elif "source-of-open" in rel:
                boost += rc.source_of_open_boost
                c.tag("source-of-open")
            elif ch.is_test and plain_open:
                # A test imports what it tests and Go keeps it beside the code: with a source
                # file open and a question not about tests, it is no neighbour.
                pass
            elif rel & {"imports", "imported-by"}:
                boost += rc.neighbour_boost
                c.tag("imports" if "imports" in rel else "imported-by")
            elif posixpath.dirname(ch.path) == open_dir:
                boost += rc.same_dir_boost
                c.tag("same-dir")
            for tag in ("caller", "callee"):
                if tag in rel:
                    boost += rc.call_boost
                    c.tag(tag)
            partner = (cochange or {}).get(ch.path)
            if partner is not None:
                boost += rc.cochange_boost * partner.strength
                c.cochange = partner
                c.tag("co-change")
        share = often.get(ch.path, 0.0)
        if share > 0:
            boost += rc.change_prior_boost * share
            if share >= 0.5:
                c.tag("often-changed")
        days = age.get(ch.path)
        if days is not None:
            # Half the vote at 90 days: code that just changed is more likely to change again.
            boost += fresh_weight * 2 ** (-days / FRESH_HALF_LIFE_DAYS)
            if days <= FRESH_TAG_DAYS:
                c.tag("recent")
        if c.id in dead and "deprecat" not in qa.raw.lower():
            c.factor *= DEPRECATED_FACTOR
            c.tag("deprecated")
        if ch.language == "text" and qa.intent != "explain":
            c.factor *= NON_CODE_FACTOR
        c.boost = boost * vote
        out.append(c)
    return out
