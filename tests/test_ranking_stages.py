"""The ranking stages one at a time, on hand-made candidates: word splitting, fusion, features,
the feature rerank, diversity and the verdict. No index, no model: each rule is checked where
it lives, so a change in one stage shows up here before it blurs into a benchmark number."""

from __future__ import annotations

import math

import pytest

from code_evidence.api import Chunk
from code_evidence.config import Config
from code_evidence.index.generated import GeneratedFiles
from code_evidence.index.store import StoredChunk
from code_evidence.index.terms import code_terms, path_terms, split_identifier
from code_evidence.search import (
    assemble,
    declarations,
    explain,
    features,
    focus,
    fuse,
    parts,
    rerank,
    verdict,
)
from code_evidence.search.candidate import Candidate
from code_evidence.search.pipeline import evidence
from code_evidence.search.query import QueryAnalysis, analyze
from code_evidence.search.recall import EditorState

K = 60
VOTE = 1 / (K + 1)


def chunk(
    cid: int,
    path: str = "src/app.py",
    symbol: str = "run",
    text: str | None = None,
    start: int = 1,
    kind: str = "function",
    language: str = "python",
    **flags: bool,
) -> StoredChunk:
    # By default the code defines its symbol's name, as a definition's text spells it.
    text = text if text is not None else f"def {symbol.rsplit('.', 1)[-1]}():\n    pass"
    end = start + text.count("\n")
    ch = Chunk(path, start, end, symbol, kind, language, text, f"h{cid}", **flags)
    return StoredChunk(cid, ch, None)


def cand(sc: StoredChunk, fused: float = VOTE, **kw: object) -> Candidate:
    return Candidate(stored=sc, fused=fused, **kw)  # type: ignore[arg-type]


class Chunks:
    """The one store read fusion makes (``get_chunks``), over a fixed set of chunks."""

    def __init__(self, *chunks: StoredChunk) -> None:
        self.by_id = {sc.id: sc for sc in chunks}

    def get_chunks(self, ids: object) -> dict[int, StoredChunk]:
        return {i: self.by_id[i] for i in ids if i in self.by_id}  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- terms


def test_identifiers_split_into_parts_and_stay_whole() -> None:
    assert split_identifier("HTTPServerError2") == ["http", "server", "error", "2"]
    assert split_identifier("_private_name") == ["private", "name"]
    assert code_terms("getUserName(x)") == ["getusername", "get", "user", "name", "x"]
    assert code_terms("plain words here") == ["plain", "words", "here"]
    assert path_terms("src/flask/json/provider.py") == ["src", "flask", "json", "provider", "py"]


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("store data per request, e.g. a db connection", []),
        ("i.e. the user.name field, a.k.a. Console.print", ["user.name", "Console.print"]),
        ("why does rich.progress flicker", ["rich.progress"]),
    ],
)
def test_prose_abbreviations_are_not_names(question: str, names: list[str]) -> None:
    # "e.g" read as a dotted name made flask's `g` a definition of what the question names.
    assert analyze(question).identifiers == names


# --------------------------------------------------------------------------- fusion


def test_fusion_adds_weighted_reciprocal_ranks_and_drops_unknown_ids() -> None:
    a, b, c = chunk(1), chunk(2, symbol="b"), chunk(3, symbol="c")
    channels = {
        "bm25": [(1, 9.0), (2, 5.0), (99, 1.0)],  # 99: ahead in a derived index, not stored
        "vector": [(2, 0.8), (3, 0.7)],
    }
    out = fuse.fuse(channels, Chunks(a, b, c), K, {"bm25": 1.0, "vector": 2.0})  # type: ignore[arg-type]
    by_id = {x.id: x for x in out}
    assert set(by_id) == {1, 2, 3}
    assert by_id[1].fused == pytest.approx(1 / (K + 1))
    assert by_id[2].fused == pytest.approx(1 / (K + 2) + 2 / (K + 1))
    assert by_id[3].fused == pytest.approx(2 / (K + 2))
    assert [x.id for x in out] == [2, 3, 1]
    assert by_id[2].ranks == {"bm25": 2, "vector": 1}
    assert by_id[2].channel_scores == {"bm25": 5.0, "vector": 0.8}


def test_channel_weights_come_from_the_ranking_settings() -> None:
    rc = Config().changed(ranking={"vector_weight": 1.5}).ranking
    weights = fuse.channel_weights(rc)
    assert weights["vector"] == 1.5 and weights["structural"] == rc.structural_weight
    assert weights["frames"] == 1.0  # a stack frame is a fact: never tuned down


# --------------------------------------------------------------------------- features


def featured(
    cands: list[Candidate],
    query: str,
    open_file: str | None = None,
    relations: dict[int, set[str]] | None = None,
    cfg: Config | None = None,
    **kw: object,
) -> dict[int, Candidate]:
    out = features.apply_features(
        cands,
        analyze(query),
        EditorState(open_file, None),
        relations or {},
        cfg or Config(),
        **kw,  # type: ignore[arg-type]
    )
    return {c.id: c for c in out}


def test_exact_identifier_outvotes_a_mention() -> None:
    defines = cand(chunk(1, symbol="Cart.apply_voucher"))
    mentions = cand(chunk(2, symbol="checkout", text="cart.apply_voucher(code)"))
    out = featured([defines, mentions], "where is apply_voucher handled")
    assert "exact-identifier" in out[1].reasons
    assert out[1].boost == pytest.approx(Config().ranking.exact_symbol_boost * VOTE)
    assert "mentions-identifier" in out[2].reasons
    assert out[2].boost == pytest.approx(features.W_MENTIONS * VOTE)


def test_a_member_named_with_the_question_s_words_outvotes_the_type_s_constructors() -> None:
    """ "how does ArrayList grow its capacity": the type is where to look, ``grow`` and
    ``ensureCapacity`` what is asked; Java's constructors are named after the type, and are
    members like Python's ``__init__``, not its definition."""
    java = {"path": "src/ArrayList.java", "language": "java"}
    header = cand(chunk(1, symbol="ArrayList", kind="class", **java))
    ctor = cand(chunk(2, symbol="ArrayList.ArrayList", kind="method", **java))
    grow = cand(chunk(3, symbol="ArrayList.grow", kind="method", **java))
    ensure = cand(chunk(4, symbol="ArrayList.ensureCapacity", kind="method", **java))
    other = cand(chunk(5, symbol="ArrayList.trimToSize", kind="method", **java))
    both = cand(chunk(7, symbol="ArrayList.growCapacity", kind="method", **java))
    elsewhere = cand(chunk(6, path="src/Vector.java", symbol="Vector.grow", language="java"))
    question = "how does ArrayList grow its capacity"
    out = featured([header, ctor, grow, ensure, other, elsewhere, both], question)
    assert "exact-identifier" in out[1].reasons
    assert "exact-identifier" not in out[2].reasons and "mentions-identifier" in out[2].reasons
    for member in (3, 4):
        assert "member-named" in out[member].reasons
        assert out[member].boost > out[2].boost
    assert "member-named" not in out[5].reasons
    assert "member-named" not in out[6].reasons  # another type's member
    assert out[7].boost > out[3].boost  # a name holding two of the words beats one holding one


def test_a_phrasal_verb_names_the_member_it_is_fused_into() -> None:
    """ "shut down" is ``shutdown``, "roll over" ``doRollover``: code fuses the words."""
    shutdown = cand(chunk(1, symbol="ThreadPoolExecutor.shutdown"))
    submit = cand(chunk(2, symbol="ThreadPoolExecutor.submit"))
    out = featured([shutdown, submit], "how does ThreadPoolExecutor shut down its workers")
    assert "member-named" in out[1].reasons and "member-named" not in out[2].reasons
    roll = cand(chunk(3, symbol="RotatingFileHandler.doRollover"))
    assert "member-named" in featured([roll], "when does RotatingFileHandler roll over")[3].reasons


def test_a_member_s_name_part_holds_a_short_word_it_begins_with() -> None:
    """ "load" is held by ``loaded``: five letters of a longer word, all of a shorter one."""
    loaded = cand(chunk(1, path="lib/Npm.java", symbol="NpmCli.loaded", language="java"))
    other = cand(chunk(2, path="lib/Npm.java", symbol="NpmCli.exec", language="java"))
    out = featured([loaded, other], "how does NpmCli load its config")
    assert "member-named" in out[1].reasons and "member-named" not in out[2].reasons


def test_a_piece_of_a_class_that_does_not_spell_its_name_does_not_define_it() -> None:
    """A long Python class is chunked into its header and members, and the statements between
    methods (``submit.__doc__ = …``) are pieces with the class's symbol: they took the
    class's credit for its name and filled the first places."""
    header = cand(
        chunk(
            1, symbol="ThreadPoolExecutor", kind="class", text="class ThreadPoolExecutor(Executor):"
        )
    )
    piece = cand(
        chunk(
            2,
            symbol="ThreadPoolExecutor",
            kind="class",
            text="submit.__doc__ = Executor.submit.__doc__",
        )
    )
    out = featured([header, piece], "how does ThreadPoolExecutor shut down its workers")
    assert "exact-identifier" in out[1].reasons
    assert "exact-identifier" not in out[2].reasons


@pytest.mark.parametrize(
    "question",
    [
        "where is ArrayList defined",  # nothing asked of it but itself
        "where is the ArrayList class implemented",
        "how is an ArrayList constructed",
        "ArrayList: Index 3 out of bounds for length 2",  # a paste names what it printed
    ],
)
def test_a_constructor_keeps_its_name_when_the_question_asks_for_the_type(question: str) -> None:
    ctor = cand(chunk(2, symbol="ArrayList.ArrayList", kind="method", language="java"))
    grow = cand(chunk(3, symbol="ArrayList.grow", kind="method", language="java"))
    out = featured([ctor, grow], question)
    assert "member-named" not in out[3].reasons
    if not question.startswith("ArrayList:"):
        assert "exact-identifier" in out[2].reasons


NO_SUCH_OPTION = "click.exceptions.NoSuchOption: No such option: --nmae"


def exception_candidates() -> dict[str, Candidate]:
    return {
        "class": cand(
            chunk(1, "src/click/exceptions.py", "NoSuchOption", "class NoSuchOption(UsageError):")
        ),
        "init": cand(
            chunk(
                2,
                "src/click/exceptions.py",
                "NoSuchOption.__init__",
                "def __init__(self, option_name, message=None):\n    self.name = option_name",
            )
        ),
        "writes": cand(
            chunk(
                3,
                "src/click/exceptions.py",
                "NoSuchOption.format_message",
                'def format_message(self):\n    return _("No such option: {name}").format(name=x)',
            )
        ),
        "raise": cand(
            chunk(
                4,
                "src/click/parser.py",
                "_OptionParser._match_long_opt",
                "if opt not in self._long_opt:\n    raise NoSuchOption(opt, ctx=self.ctx)",
            )
        ),
    }


def test_an_exception_s_class_ranks_below_the_code_that_raises_it() -> None:
    """A pasted ``NoSuchOption: No such option: …`` asks where it was raised: the class
    (BM25's and the models' favourite, it repeats the name) and its members keep half their
    score, unless a member writes the message; the raise site gets its vote."""
    c = exception_candidates()
    out = featured(list(c.values()), NO_SUCH_OPTION)
    assert "raises" in out[4].reasons
    for demoted in (1, 2):
        assert "exception-class" in out[demoted].reasons
        assert out[demoted].factor == pytest.approx(features.EXCEPTION_CLASS_FACTOR)
    assert "message-template" in out[3].reasons and "exception-class" not in out[3].reasons
    assert out[3].factor == 1.0


def test_an_exception_s_class_keeps_its_score_when_no_source_raises_it() -> None:
    """With no raise site among the candidates the class is the best evidence there is; a
    test that raises it (``raise NoSuchOption`` in a fixture) is not where the user's came
    from."""
    c = exception_candidates()
    alone = featured([c["class"], c["init"]], NO_SUCH_OPTION)
    assert all(x.factor == 1.0 and "exception-class" not in x.reasons for x in alone.values())
    in_test = cand(
        chunk(5, "tests/test_parser.py", "test_x", "raise NoSuchOption('x')", is_test=True)
    )
    with_test = featured([c["class"], in_test], NO_SUCH_OPTION)
    assert with_test[1].factor == 1.0


def test_tests_are_penalised_unless_the_question_is_about_tests() -> None:
    sc = chunk(1, path="tests/test_app.py", symbol="test_run", is_test=True)
    plain = featured([cand(sc)], "how does run start the server")
    assert plain[1].factor == pytest.approx(Config().ranking.test_penalty)
    about = featured([cand(sc)], "which test covers run")
    assert about[1].factor == 1.0


def test_a_change_description_is_about_its_headline_not_its_test_bullets() -> None:
    """A pasted change description names tests in its bullets (every change has some); the
    question is about tests only when its headline says so, or a pasted failure does."""
    sc = chunk(1, path="test/stream.test.js", symbol="streams", is_test=True)
    squashed = "feat: Web Stream API\n\n* feat: Web Stream API\n\n* test: skip when unavailable"
    assert featured([cand(sc)], squashed)[1].factor == pytest.approx(Config().ranking.test_penalty)
    headline = "test: cover the Web Stream API\n\n* feat: stream replies"
    assert featured([cand(sc)], headline)[1].factor == 1.0
    failure = 'Traceback (most recent call last):\n  File "tests/test_app.py", line 3\nKeyError: 1'
    assert featured([cand(sc)], failure)[1].factor == 1.0
    assert not analyze("feat: body schema per content type\n\n* fix: types").about_declarations
    assert analyze("fix(types): body schema per content type").about_declarations


def test_prototypes_rank_below_bodies_unless_declarations_are_asked_about() -> None:
    proto = chunk(1, "include/rb.h", "rb_push", "void rb_push(rb_t *rb);", kind="declaration")
    plain = featured([cand(proto)], "push a record into the ring buffer")
    assert plain[1].factor == pytest.approx(Config().ranking.declaration_factor)
    assert "declaration" in plain[1].reasons
    for asked in ("where is rb_push declared", "the prototype of rb_push in rb.h"):
        assert featured([cand(proto)], asked)[1].factor == 1.0


def test_type_declaration_files_rank_below_implementations_unless_types_are_asked() -> None:
    dts = chunk(
        1, "types/route.d.ts", "RouteOptions", "interface RouteOptions {}", language="typescript"
    )
    pyi = chunk(2, "src/app.pyi", "run", "def run() -> None: ...")
    impl = chunk(3, "lib/route.js", "route", "function route () {}", language="javascript")
    plain = featured([cand(dts), cand(pyi), cand(impl)], "register a route with options")
    assert plain[1].factor == plain[2].factor == pytest.approx(Config().ranking.declaration_factor)
    assert "declaration" in plain[1].reasons and "declaration" not in plain[3].reasons
    assert plain[3].factor == 1.0
    about = featured([cand(dts)], "fix the typings of route options")
    assert about[1].factor == 1.0


def test_generated_files_rank_below_sources_but_stay_in_answers() -> None:
    copy = chunk(1, "deno/lib/types.ts", "parse", "parse() {}", language="typescript")
    dist = chunk(2, "dist/index.js", "parse", "parse() {}", language="javascript")
    src = chunk(3, "src/types.ts", "parse", "parse() {}", language="typescript")
    found = GeneratedFiles(
        {"deno/lib/types.ts": "copy of src/types.ts", "dist/index.js": "build output"},
        {"deno/lib/types.ts": "src/types.ts"},
    )
    out = featured([cand(copy), cand(dist), cand(src)], "parse input", generated=found)
    assert set(out) == {1, 2, 3}  # demoted, never dropped
    factor = Config().ranking.generated_factor
    assert out[1].factor == out[2].factor == pytest.approx(factor)
    assert "generated" in out[1].reasons and "generated" not in out[3].reasons
    assert out[1].factor < out[3].factor  # the source of the same code wins
    # The open copy is not demoted again; its source is offered as the place to edit.
    opened = featured(
        [cand(copy), cand(src)],
        "parse input",
        open_file="deno/lib/types.ts",
        relations={3: {"source-of-open"}},
        generated=found,
    )
    assert "generated" not in opened[1].reasons
    assert "source-of-open" in opened[3].reasons
    assert opened[3].boost == pytest.approx(Config().ranking.source_of_open_boost * VOTE)
    # A copy the question names by its path is what it asks about: not demoted.
    named = featured([cand(dist), cand(copy)], "parse input in dist/index.js", generated=found)
    assert "generated" not in named[2].reasons and "path-match" in named[2].reasons
    assert "generated" in named[1].reasons


class Named(Chunks):
    """Also the store read of the declaration stage (``chunks_named``)."""

    def chunks_named(self, names: object) -> list[StoredChunk]:
        return [sc for sc in self.by_id.values() if sc.name in names]  # type: ignore[operator]


def test_a_prototype_lends_its_score_and_comment_to_the_body() -> None:
    doc = "/** Append one record; the oldest is dropped when full. */"
    proto = chunk(
        1, "include/rb.h", "rb_push", f"{doc}\nvoid rb_push(rb_t *rb);", kind="declaration"
    )
    body = chunk(2, "src/rb.c", "rb_push", "void rb_push(rb_t *rb)\n{\n}", kind="function")
    test = chunk(3, "tests/t.c", "rb_push", "void rb_push(void) {}", is_test=True)
    other = chunk(4, "src/pool.c", "pool_give", "void pool_give(void *b) {}")
    store = Named(proto, body, test, other)
    # Recall found the prototype and the decoy, not the body.
    found = declarations.credit_definitions(
        [cand(proto, 2 * VOTE), cand(other, 1.5 * VOTE)],
        store,  # type: ignore[arg-type]
    )
    by_id = {c.id: c for c in found}
    assert [c.id for c in found] == [1, 2, 4]  # the body joins with the prototype's score
    assert by_id[2].fused == pytest.approx(2 * VOTE) and "declared-in-header" in by_id[2].reasons
    assert by_id[2].doc == doc and 3 not in by_id  # a test's definition gains nothing
    # The feature scorer reads the comment with the body.
    qa = analyze("drop the oldest record when full")
    rerank.FeatureReranker().score(qa, [by_id[2]], math.inf)
    assert by_id[2].rerank is not None and by_id[2].rerank > 0


def test_editor_state_the_open_file_its_neighbours_and_its_folder() -> None:
    own = cand(chunk(1, path="src/app.py"))
    imported = cand(chunk(2, path="lib/util.py", symbol="helper"))
    sibling = cand(chunk(3, path="src/other.py", symbol="other"))
    stranger = cand(chunk(4, path="docs/x.py", symbol="x"))
    rc = Config().ranking
    out = featured(
        [own, imported, sibling, stranger],
        "start the server",
        open_file="src/app.py",
        relations={2: {"imports"}},
    )
    assert out[1].factor == pytest.approx(rc.open_file_factor) and "open-file" in out[1].reasons
    assert out[2].boost == pytest.approx(rc.neighbour_boost * VOTE)
    assert out[3].boost == pytest.approx(rc.same_dir_boost * VOTE)
    assert out[4].boost == 0.0


def test_the_open_file_is_not_hidden_when_the_text_finds_it() -> None:
    # Variant c: the answer is in the file one is in. Its chunk found by BM25 keeps its score
    # and gains the open-file votes, so a neighbour with only relations does not bury it.
    own = cand(chunk(1, path="src/app.py"), ranks={"bm25": 1})
    neighbour = cand(chunk(2, path="src/other.py", symbol="other"), ranks={"structural": 1})
    rc = Config().ranking
    out = featured([own, neighbour], "start the server", open_file="src/app.py")
    assert rc.open_file_factor == 1.0 and out[1].factor == 1.0
    assert out[1].boost == pytest.approx(rc.open_file_boost * VOTE) and rc.open_file_boost > 0
    assert out[1].boost > out[2].boost
    unfound = featured([cand(chunk(3, path="src/app.py"))], "x", open_file="src/app.py")
    assert unfound[3].boost == 0.0  # only what a text channel found


def test_dead_deprecated_code_sinks_and_generated_code_is_filtered() -> None:
    old = cand(chunk(1, symbol="legacy", text="@deprecated\ndef legacy():\n    pass"))
    used = cand(chunk(2, symbol="still_used", text="@deprecated\ndef still_used():\n    pass"))
    generated = cand(chunk(3, path="gen/api_pb2.py", symbol="gen", is_generated=True))
    out = featured(
        [old, used, generated],
        "run the legacy path",
        caller_counts={"still_used": 3},
    )
    assert out[1].factor == pytest.approx(features.DEPRECATED_FACTOR)
    assert out[2].factor == 1.0
    assert 3 not in out  # filtered by policy, not ranked low
    assert features.marked_deprecated(old) and not features.marked_deprecated(cand(chunk(4)))


@pytest.mark.parametrize(
    "text",
    [
        "@Deprecated\npublic void old() {}",
        "warnings.warn('gone', DeprecationWarning)",
        "/** @deprecated use next() */",
        "This is deprecated.",
        "Deprecated in 2.0",  # capitalised, no @: not a mark
        "undeprecated_helper()",  # inside a word: not a mark
        "DEPRECATED",
        "def plain():\n    return 1",
    ],
)
def test_the_deprecation_precheck_agrees_with_the_pattern(text: str) -> None:
    """The substring check before the pattern must never hide one of its matches."""
    got = features.marked_deprecated(cand(chunk(1, text=text)))
    assert got == (features._DEPRECATED.search(text) is not None)


def test_docs_rank_below_code_unless_the_question_asks_for_an_explanation() -> None:
    doc = chunk(1, path="docs/guide.md", symbol="", kind="window", language="text")
    assert featured([cand(doc)], "server port setting")[1].factor == features.NON_CODE_FACTOR
    assert featured([cand(doc)], "why does the server pick a port")[1].factor == 1.0


def test_boosts_off_keeps_the_filters() -> None:
    vendored = cand(chunk(1, path="vendor/x.py", is_vendor=True))
    named = cand(chunk(2, symbol="run"))
    out = featured([vendored, named], "run", use_boosts=False)
    assert set(out) == {2} and out[2].boost == 0.0


# --------------------------------------------------------------------------- rerank


def test_feature_rerank_rewards_covering_every_term() -> None:
    qa = analyze("parse the config file")
    whole = cand(chunk(1, symbol="parse_config_file", text="def parse_config_file(): ..."))
    part = cand(chunk(2, symbol="parse", text="def parse(): ..."), fused=1.5 * VOTE)
    ordered, scored, notes = rerank.rerank(
        [part, whole], qa, [rerank.FeatureReranker()], top_n=10, budget_ms=None
    )
    assert scored == 2 and notes == []
    assert [c.id for c in ordered] == [1, 2]
    assert ordered[0].rerank == pytest.approx(1.0) and "covers-query" in ordered[0].reasons


class SlowModel:
    """A model scorer that stops at the deadline, as the cross-encoder does."""

    name = "model"
    cut_by_deadline = True

    def wanted(self, qa: QueryAnalysis, head: int) -> int:
        return head

    def score(self, qa: object, cands: list[Candidate], deadline: float) -> int:
        return sum(1 for _ in cands) if deadline == math.inf else 0

    def combine(self, scored: list[Candidate]) -> None:
        for c in scored:
            c.score *= 2


def test_a_reranker_out_of_time_says_so_and_keeps_the_order() -> None:
    qa = analyze("parse the config file")
    first, second = cand(chunk(1), fused=2 * VOTE), cand(chunk(2, symbol="x"))
    ordered, scored, notes = rerank.rerank([first, second], qa, [SlowModel()], 10, budget_ms=-1)
    assert scored == 0 and [c.id for c in ordered] == [1, 2]
    assert notes == ["model rerank budget reached after 0 of 2"]


def test_only_the_model_is_cut_by_the_deadline_never_the_feature_scorer() -> None:
    # An exhausted budget (a busy machine) leaves the feature scorer whole: the answer is the
    # one an idle machine gives, less only the model's refinement.
    qa = analyze("parse the config file")
    whole = cand(chunk(1, symbol="parse_config_file", text="def parse_config_file(): ..."))
    part = cand(chunk(2, symbol="parse", text="def parse(): ..."), fused=1.5 * VOTE)
    scorers = [rerank.FeatureReranker(), SlowModel()]
    ordered, _, notes = rerank.rerank([part, whole], qa, scorers, 10, budget_ms=-1)
    assert [c.id for c in ordered] == [1, 2] and all(c.rerank is not None for c in ordered)
    assert notes == ["model rerank budget reached after 0 of 2"]
    assert (
        not rerank.FeatureReranker.cut_by_deadline and rerank.CrossEncoderReranker.cut_by_deadline
    )


def test_a_question_of_stopwords_leaves_the_feature_scorer_out_without_a_budget_note() -> None:
    # "what else must change" (asked with a file open) has no word a chunk can cover: the
    # feature scorer has nothing to do, which is not a budget cut ("features rerank budget
    # reached after 0 of 50" was printed on an idle machine), and the model still runs.
    qa = analyze("what else must change")
    first, second = cand(chunk(1), fused=2 * VOTE), cand(chunk(2, symbol="x"))
    scorers = [rerank.FeatureReranker(), SlowModel()]
    ordered, scored, notes = rerank.rerank([second, first], qa, scorers, 10, budget_ms=None)
    assert notes == [] and scored == 2
    assert [c.id for c in ordered] == [1, 2] and all(c.rerank is None for c in ordered)
    ordered, scored, notes = rerank.rerank([first, second], qa, scorers[:1], 10, budget_ms=None)
    assert notes == [] and scored == 0


class DoubtingModel:
    """A model scorer that reads only the first ``reach`` candidates (a deadline) and believes
    only the first of them: it lowers the others, as the cross-encoder's blend does."""

    name = "model"
    cut_by_deadline = True

    def __init__(self, reach: int) -> None:
        self.reach = reach

    def wanted(self, qa: QueryAnalysis, head: int) -> int:
        return head

    def score(self, qa: object, cands: list[Candidate], deadline: float) -> int:
        return min(self.reach, len(cands))

    def combine(self, scored: list[Candidate]) -> None:
        for c in scored[1:]:
            c.score *= 0.1


def test_scores_follow_the_order_when_the_model_lowers_what_it_read() -> None:
    # Before: the two the model read and doubted kept a tenth of their score while the three it
    # never reached kept theirs, so the pack's score-gap cut kept the unread and dropped the read.
    qa = analyze("parse the config file")
    cands = [cand(chunk(i, symbol=f"f{i}"), fused=(10 - i) * VOTE) for i in range(5)]
    ordered, scored, _ = rerank.rerank(cands, qa, [DoubtingModel(reach=3)], 10, budget_ms=100)
    assert scored == 3 and [c.id for c in ordered] == [0, 1, 2, 3, 4]
    scores = [c.score for c in ordered]
    assert scores == sorted(scores, reverse=True)
    assert scores[3] == pytest.approx(scores[2])  # the tail starts level with the last read
    assert scores[4] / scores[3] == pytest.approx(6 / 7)  # and keeps its own ratios
    # The factor is on the candidate, so the answer's scores and --explain can show it.
    assert [c.below for c in ordered[:3]] == [1.0, 1.0, 1.0]
    assert ordered[3].below == pytest.approx(scores[3] / rerank.base_score(ordered[3]))
    assert ordered[4].below == ordered[3].below
    line = explain.explain_result(evidence(ordered[3]))
    assert f"x {ordered[3].below:.2f} (under the last result the model read)" in line
    assert line.endswith(f"= {scores[3]:.4f}")
    assert "under the last" not in explain.explain_result(evidence(ordered[2]))


# --------------------------------------------------------------------------- assembly


def test_the_pack_fills_left_over_budget_with_a_files_held_back_blocks() -> None:
    """The per-file quota keeps room for other files; when the others are in (or under the
    score gap) and budget is left, the held-back blocks of a file go in, in ranking order."""
    ranked = [
        cand(chunk(i, path="types.ts", symbol=f"f{i}", start=i * 10 + 1), score=1.0 - i / 10)
        for i in range(4)
    ]
    ranked.insert(3, cand(chunk(9, path="errors.ts", symbol="E"), score=0.75))
    ok = verdict.Verdict(0.9, False, None)

    def tokens(text: str) -> int:
        return len(text.split())

    def heads(text: str) -> list[str]:
        return [line.split()[1] for line in text.split("\n") if line.startswith("# ")]

    pack = assemble.assemble_context(ranked, 1000, tokens, per_file_blocks=2, verdict=ok)
    assert heads(pack.text) == ["types.ts:1-2", "types.ts:11-12", "types.ts:21-22",
                                "errors.ts:1-2", "types.ts:31-32"]  # fmt: skip
    assert pack.dropped == []
    # Without budget to spare the quota holds: the held-back blocks are what did not fit.
    one_each = tokens(pack.text) // 5 + 1
    tight = assemble.assemble_context(ranked, 3 * one_each, tokens, 2, ok)
    assert heads(tight.text) == ["types.ts:1-2", "types.ts:11-12", "errors.ts:1-2"]
    assert [(d.start, d.reason) for d in tight.dropped] == [(21, "budget"), (31, "budget")]
    # A weak answer keeps its single best block.
    weak = assemble.assemble_context(ranked, 1000, tokens, 2, verdict.Verdict(0.1, True, "weak"))
    assert heads(weak.text) == ["types.ts:1-2"]


def test_a_block_too_large_for_the_budget_goes_in_as_its_best_lines() -> None:
    """The first result, 300 lines of error codes, no longer leaves the pack for lesser
    blocks: once the blocks that fit whole are in, it goes in as the lines around what the
    question matches, its header saying what it was cut from."""
    codes = "\n".join(f"  ERR_{i}: create('ERR_{i}', 'message number {i}')," for i in range(300))
    big = cand(chunk(1, path="errors.js", symbol="", text=codes, start=5), score=1.0)
    small = cand(chunk(2, path="app.js", symbol="run", start=1), score=0.9)
    ok = verdict.Verdict(0.9, False, None)

    def tokens(text: str) -> int:
        return len(text.split())

    score = focus.LineScorer(["err_120", "err", "120"], ["ERR_120"], ["message number 120"])
    opens_at = focus.Focus({}, score)
    pack = assemble.assemble_context([big, small], 400, tokens, 2, ok, focus=opens_at)
    head, *rest = pack.text.split("\n")
    assert head.startswith("# errors.js:") and head.endswith("  (cut from 5-304)")
    lines = head.split()[1].split(":")[1]
    start, end = (int(x) for x in lines.split("-"))
    assert start < 125 < end and end - start < 60  # line 125 holds ERR_120; 40 % of 400
    assert "  ERR_120: create('ERR_120', 'message number 120')," in rest
    assert "# app.js:1-2  run" in pack.text  # the whole block that fits went in first
    assert 0 < pack.tokens <= 400 and not pack.dropped
    # Without a scorer (or without room for a useful cut) the block stays out, as before.
    plain = assemble.assemble_context([big, small], 400, tokens, 2, ok)
    assert plain.text.startswith("# app.js:1-2") and [d.reason for d in plain.dropped] == ["budget"]
    assert assemble.window(big.stored.chunk, 3, tokens, 125) is None


def test_diversify_moves_a_files_extra_chunks_behind_the_rest() -> None:
    same = [
        cand(chunk(i, path="a.py", symbol=f"f{i}", start=i * 10), fused=1.0 - i / 10)
        for i in range(4)
    ]
    other = cand(chunk(9, path="b.py", symbol="g"), fused=0.1)
    out = assemble.diversify([*same, other], per_file=2)
    assert [c.id for c in out] == [0, 1, 9, 2, 3]
    # The open file keeps twice as many before the others (which part of it is the question).
    out = assemble.diversify([*same, other], per_file=1, open_file="a.py")
    assert [c.id for c in out] == [0, 1, 9, 2, 3]


def test_a_place_shows_more_of_its_file_than_an_open_files_partners() -> None:
    """Asked from nowhere, a question is about a place whose near-twins share its file: five
    chunks of one file come before the others'. Asked from an open file, it is about that file's
    partners: three, the open file itself six."""
    ranking = Config().ranking
    assert assemble.file_quota(ranking, None) == 5
    assert assemble.file_quota(ranking, "a.py") == 3
    same = [
        cand(chunk(i, path="a.py", symbol=f"f{i}", start=i * 10), fused=1.0 - i / 10)
        for i in range(7)
    ]
    other = cand(chunk(9, path="b.py", symbol="g"), fused=0.1)
    out = assemble.diversify([*same, other], assemble.file_quota(ranking, None))
    assert [c.id for c in out] == [0, 1, 2, 3, 4, 9, 5, 6]
    out = assemble.diversify([*same, other], assemble.file_quota(ranking, "c.py"), open_file="c.py")
    assert [c.id for c in out] == [0, 1, 2, 9, 3, 4, 5, 6]
    out = assemble.diversify([*same, other], assemble.file_quota(ranking, "a.py"), open_file="a.py")
    assert [c.id for c in out] == [0, 1, 2, 3, 4, 5, 9, 6]


def test_distinct_places_first_unless_a_repeat_is_clearly_better() -> None:
    def c(cid: int, path: str, score: float) -> Candidate:
        out = cand(chunk(cid, path=path, symbol=f"s{cid}", start=cid * 10))
        out.score = score
        return out

    ranked = [c(1, "a.py", 1.0), c(2, "a.py", 0.9), c(3, "a.py", 0.3), c(4, "b.py", 0.5)]
    ranked += [c(5, "c.py", 0.2)]
    out = assemble.diversify(ranked, per_file=3, margin=1.5)
    # a.py's 0.9 beats b.py's 0.5 by more than 1.5x: it stays; its 0.3 waits for the others.
    assert [x.id for x in out] == [1, 2, 4, 5, 3]
    # Files appear in the same order as without the rule; margin 1 is the plain order.
    plain = assemble.diversify(ranked, per_file=3, margin=1.0)
    assert [x.id for x in plain] == [1, 2, 3, 4, 5]
    firsts = lambda xs: list(dict.fromkeys(x.stored.chunk.path for x in xs))  # noqa: E731
    assert firsts(out) == firsts(plain)


def test_a_members_close_score_puts_it_before_its_types_header() -> None:
    def c(cid: int, path: str, symbol: str, kind: str, score: float) -> Candidate:
        out = cand(chunk(cid, path=path, symbol=symbol, kind=kind, start=cid * 10))
        out.score = score
        return out

    def ranked() -> list[Candidate]:
        return [
            c(1, "net/Retry.kt", "RetryPolicy", "class", 0.045),
            c(2, "net/Retry.kt", "RetryPolicy.nextDelay", "method", 0.043),
            c(3, "ui/Fade.kt", "FadeAnimation.frameDelay", "method", 0.011),
        ]

    out = assemble.members_first(ranked(), named=set())
    assert [x.id for x in out] == [2, 1, 3]
    # Places and scores trade: still in score order, the file's best score unchanged.
    assert [x.score for x in out] == [0.045, 0.043, 0.011]
    assert "member-first" in out[0].reasons and "after-member" in out[1].reasons
    # The question names the type: its header is what was asked for.
    assert [x.id for x in assemble.members_first(ranked(), named={"RetryPolicy"})] == [1, 2, 3]
    # A member far below (under MEMBER_MARGIN of the header), another file's result between
    # them, or a function that merely shares the name's start: nothing moves.
    far = ranked()
    far[1].score = 0.02
    assert [x.id for x in assemble.members_first(far, named=set())] == [1, 2, 3]
    between = [*ranked()[:1], c(4, "b.kt", "other", "function", 0.044), *ranked()[1:]]
    assert [x.id for x in assemble.members_first(between, named=set())] == [1, 4, 2, 3]
    # A header moves once, behind its best member, not behind every member.
    two = [*ranked()[:2], c(6, "net/Retry.kt", "RetryPolicy.shouldRetry", "method", 0.042)]
    assert [x.id for x in assemble.members_first(two, named=set())] == [2, 1, 6]
    lookalike = [c(1, "a.kt", "Retry", "class", 0.045), c(5, "a.kt", "RetryPolicy", "class", 0.044)]
    assert [x.id for x in assemble.members_first(lookalike, named=set())] == [1, 5]


def test_pieces_of_one_symbol_merge_into_one_result() -> None:
    top = cand(chunk(1, symbol="big", text="a\nb\nc", start=1))
    tail = cand(chunk(2, symbol="big", text="c\nd", start=3))
    [merged] = assemble.merge_pieces([top, tail])
    assert (merged.stored.chunk.start, merged.stored.chunk.end) == (1, 4)
    assert merged.stored.chunk.text == "a\nb\nc\nd" and "merged" in merged.reasons


def test_windows_of_no_symbol_merge_only_into_a_place_of_modest_size() -> None:
    """Two 150-line windows of one object literal stay two results (their union would cite
    290 lines for one entry); two short windows of a README still merge."""

    def text(n: int) -> str:
        return "\n".join(f"line {i}" for i in range(n))

    first = cand(chunk(1, path="errors.js", symbol="", kind="module", text=text(150), start=1))
    second = cand(chunk(2, path="errors.js", symbol="", kind="module", text=text(150), start=141))
    assert [c.id for c in assemble.merge_pieces([second, first])] == [2, 1]
    a = cand(chunk(3, path="README.md", symbol="", kind="window", text=text(60), start=1))
    b = cand(chunk(4, path="README.md", symbol="", kind="window", text=text(60), start=51))
    [merged] = assemble.merge_pieces([a, b])
    assert (merged.stored.chunk.start, merged.stored.chunk.end) == (1, 110)


def test_a_test_is_no_neighbour_of_an_open_source_file() -> None:
    src = chunk(1, "debug.go", "debugPrint", "func debugPrint() {}", language="go")
    test = chunk(2, "mode_test.go", "TestMode", "func TestMode() {}", language="go", is_test=True)
    out = featured(
        [cand(src), cand(test)], "print debug output", "mode.go", relations={2: {"imported-by"}}
    )
    assert "same-dir" in out[1].reasons and "same-dir" not in out[2].reasons
    assert "imported-by" not in out[2].reasons and out[2].boost == 0.0
    # Asking about tests, or with a test open, the test is next door again.
    out = featured([cand(test)], "which test covers the mode", open_file="mode.go")
    assert "same-dir" in out[2].reasons
    out = featured([cand(test)], "print debug output", open_file="debug_test.go")
    assert "same-dir" in out[2].reasons


def test_a_conventional_commit_scope_names_a_file_or_folder() -> None:
    """``type(scope): subject``: the scope is a section of the codebase (a file stem, a
    folder, a path), worth half an explicit path; a headline without one names nothing."""
    assert analyze("fix(binding, render): empty values\n\n* fix(tree): x").scopes == [
        "binding",
        "render",
    ]
    assert analyze("fix(reply.send): Uint8Array").scopes == ["reply.send", "reply"]
    assert analyze("fix: nothing scoped (here)").scopes == []
    router = chunk(1, path="router.go", symbol="addRoute", language="go")
    form = chunk(2, path="binding/form.go", symbol="mapForm", language="go")
    hooks = chunk(3, path="lib/hooks.js", symbol="hookRunner", language="javascript")
    other = chunk(4, path="context.go", symbol="Bind", language="go")
    out = featured([cand(router), cand(form), cand(hooks), cand(other)], "fix(router): panic")
    assert "scope-match" in out[1].reasons and "scope-match" not in out[4].reasons
    assert out[1].boost == pytest.approx(Config().ranking.scope_boost * VOTE)
    assert "scope-match" in featured([cand(form)], "feat(binding): arrays")[2].reasons
    assert "scope-match" in featured([cand(hooks)], "refactor(lib/hooks): typeof")[3].reasons
    off = Config().changed(ranking={"scope_boost": 0.0})
    assert "scope-match" not in featured([cand(router)], "fix(router): panic", cfg=off)[1].reasons


def test_a_qualified_name_prefers_its_own_type_and_falls_back_to_the_bare_name() -> None:
    """``Bytes::split_to``: the member of ``Bytes`` is the definition; ``BytesMut``'s member of
    the same name is only a mention while the qualified one is among the candidates, and the
    bare name again when it is not. The type itself is where a new member goes."""
    assert analyze("Bytes::split_to and CodeBlock.join, os.path").qualified == [
        ("Bytes", "split_to"),
        ("CodeBlock", "join"),
    ]
    rs = {"language": "rust", "kind": "method"}
    own = chunk(1, "src/bytes.rs", "Bytes.split_to", "fn split_to() {}", **rs)  # type: ignore[arg-type]
    other = chunk(2, "src/bytes_mut.rs", "BytesMut.split_to", "fn split_to() {}", **rs)  # type: ignore[arg-type]
    out = featured([cand(own), cand(other)], "Bytes::split_to - check fast path first")
    assert "exact-identifier" in out[1].reasons
    assert "mentions-identifier" in out[2].reasons and out[2].boost < out[1].boost
    alone = featured([cand(other)], "Bytes::split_to - check fast path first")
    assert "exact-identifier" in alone[2].reasons
    java = {"language": "java", "kind": "class"}
    block = chunk(3, "CodeBlock.java", "CodeBlock", "final class CodeBlock {}", **java)  # type: ignore[arg-type]
    util = chunk(4, "Util.java", "Util.join", "static String join() {}", language="java")
    out = featured([cand(block), cand(util)], "Implement CodeBlock.join")
    assert "exact-identifier" in out[3].reasons and "exact-identifier" in out[4].reasons


def test_a_member_named_the_javadoc_way_is_a_qualified_name() -> None:
    """``CodeBlock.Builder#clear`` (Javadoc, JSDoc, Ruby) names a member as ``.`` does; ``C#``,
    ``PR#12`` and a page's ``#anchor`` are no names."""
    qa = analyze("Add CodeBlock.Builder#clear method, then String#gsub")
    assert qa.identifiers == ["CodeBlock.Builder.clear", "String.gsub"]
    assert qa.qualified == [("CodeBlock", "Builder"), ("String", "gsub")]
    assert "clear" in qa.names
    plain = analyze("port the C# client, see PR#12 and docs/index.html#install")
    assert plain.qualified == [] and plain.identifiers == []
    page = analyze("see https://example.com/Index?type=web&code=SH688686#Holders-0")
    assert page.qualified == [] and "SH688686.Holders" not in page.identifiers
    java = {"language": "java", "kind": "method"}
    gsub = chunk(1, "String.java", "String.gsub", "String gsub() {}", **java)  # type: ignore[arg-type]
    assert "exact-identifier" in featured([cand(gsub)], "String#gsub drops groups")[1].reasons


def test_a_readme_quoting_a_message_is_not_its_template() -> None:
    """Only code produces messages: the README that quotes the text gets no template vote."""
    message = "Unable to render the request body as JSON"
    raise_site = chunk(1, "src/app/render.py", "render", f'    raise ValueError("{message}")')
    readme = chunk(2, "README.md", "", f'If you see "{message}", check the body.', kind="text")
    out = featured([cand(raise_site), cand(readme)], f"ValueError: {message}")
    assert "message-template" in out[1].reasons
    assert "message-template" not in out[2].reasons


# --------------------------------------------------------------------------- parts


def test_the_rendering_orders_only_a_files_later_parts_among_their_own_places() -> None:
    a1, a2, a3, a4 = (chunk(i, "a.py", f"a{i}", start=10 * i) for i in (1, 2, 3, 4))
    b1, b2 = (chunk(i, "b.py", f"b{i}", start=10 * i) for i in (5, 6))
    cands = [cand(sc) for sc in (a1, b1, a2, b2, a3, a4)]
    for score, c in zip((0.9, 0.8, 0.7, 0.6, 0.5, 0.4), cands, strict=True):
        c.score = score
    # a4 reads most like the rendering, a1 (the file's first) least; a3 has no vector.
    cosine = {1: 0.1, 2: 0.3, 4: 0.7, 5: 0.2, 6: 0.9}
    out = parts.order_parts(cands, cosine)
    assert [c.stored.chunk.symbol for c in out] == ["a1", "b5", "a4", "b6", "a3", "a2"]
    assert [c.score for c in out] == [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]  # places keep scores
    moved = {c.stored.chunk.symbol for c in out if "rendering-order" in c.reasons}
    assert moved == {"a4", "a2"}
    assert out[2].rendering_cosine == 0.7 and out[4].rendering_cosine is None
    assert evidence(out[2]).scores["rendering_cosine"] == 0.7
    assert "rendering's cosine 0.700" in explain.explain_result(evidence(out[2]))
