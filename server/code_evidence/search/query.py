"""Query analysis: what in the question is a name, a path, quoted text or an error code.

Identifiers, paths, quoted strings and error codes are kept verbatim and carried as must-match
evidence or strong boosts. Natural language is never rewritten into names that may not exist;
it only loses stop words before BM25.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ..index import cjk
from ..index.terms import code_terms, split_identifier
from . import crosslingual, programs
from .ci_runners import step_output
from .fetched_logs import log_text
from .log_prefixes import without_prefixes
from .log_records import unfolded
from .runtime_messages import runtime_names
from .stacktraces import (
    Frame,
    error_lines,
    literal_text,
    message_fragments,
    parse_frames,
    plain,
    test_report,
    typed_text,
    unqualified,
)
from .templates import message_body
from .tracker_reports import reported

_STOPWORD_TEXT = """
    a an the and or but if then else when while of to in on at by for from with without into
    onto over under about as is are was were be been being do does did done doing have has had
    this that these those it its it's there here which who whom whose what where why how can
    could should would will shall may might must not no nor only own same so than too very just
    also any all each every some such more most other another both either neither once again
    further we you they he she i me my our your their them us use used using make makes made
    get gets set sets instead now new add added adds fix fixed fixes remove removed removes
    change changed changes update updated updates allow allows allowed support supports
    supported
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_QUOTED_RE = re.compile(r"`([^`\n]{2,200})`|\"([^\"\n]{2,200})\"|'([^'\n]{3,200})'")
_PATH_RE = re.compile(
    r"(?<![\w/.])((?:[\w.\-]+/)+[\w.\-]+|[\w\-]+\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|"
    r"c|h|cc|cpp|hpp|hh|cxx|rb|php|cs|kt|kts|scala|swift|md|rst|toml|yaml|yml|json|cfg|ini|txt|html|css|sh)"
    # The extension ends the name: ``package.json`` is not ``package.js``, and a dotted module
    # (``jinja2.constants``, ``flask.helpers``) is not a C file or a header. The line follows a
    # colon, or comes first in parentheses as tsc and the C# compiler write it: ``a.ts(12,5)``.
    r"(?![\w\-]))(?::(\d+)|\((\d+),\d+\))?"
)
_ERROR_CODE_RE = re.compile(
    r"\b([A-Z]{1,5}[0-9]{3,5}|ERR_[A-Z0-9_]+|E(?:NO|ACCES|EXIST|PERM|CONN|TIMEDOUT|PIPE|AGAIN"
    r"|INVAL|ADDR|NOTDIR|ISDIR|MFILE|BADF|BUSY|HOSTUNREACH|NETUNREACH)[A-Z]*)\b"
)
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")
_TEST_WORDS = frozenset({"test", "tests", "testing", "pytest", "unittest", "fixture", "fixtures"})
# A question about declarations (C/C++ prototypes) rather than what a function does.
_DECLARATION_WORDS = frozenset(
    {"header", "headers", "declaration", "declarations", "declared", "declare", "prototype"}
    | {"prototypes", "signature", "signatures", "forward"}
    # Type declaration files (.d.ts, .pyi): a question about typings wants them.
    | {"types", "typings", "typing", "typedef", "typedefs", "stub", "stubs"}
)
_HEADER_EXTS = (".h", ".hh", ".hpp", ".hxx", ".h++", ".d.ts", ".pyi")
# Error words that name no type a workspace raises.
_GENERIC_ERRORS = frozenset({"Error", "ERROR", "FATAL", "Exception"})


@dataclass(slots=True)
class QueryAnalysis:
    raw: str
    intent: str
    identifiers: list[str] = field(default_factory=list)  # verbatim names: snake, camel, dotted
    paths: list[str] = field(default_factory=list)
    named_paths: list[str] = field(default_factory=list)  # the files it is about (recalled)
    path_lines: dict[str, int] = field(default_factory=dict)  # "app.py:42" -> {"app.py": 42}
    quoted: list[str] = field(default_factory=list)
    error_codes: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)  # BM25 terms (repeats weigh more)
    about_tests: bool = False
    about_declarations: bool = False  # asks about headers/prototypes: they are not demoted
    frames: list[Frame] = field(default_factory=list)  # pasted stack trace, innermost first
    messages: list[str] = field(default_factory=list)  # error lines ("KeyError: 'x'")
    fragments: list[str] = field(default_factory=list)  # literal parts of those messages
    # What a message template in the code may have produced: the bodies of the error lines,
    # or a short one-line question that may be a message pasted without its type; and an
    # error line whose prefix the program may have written itself (:func:`_own_prefix`).
    message_bodies: list[str] = field(default_factory=list)
    # The words every error line's literal text holds (values formatted in left out): a chunk
    # that holds them all may be the template, however the keyword channel ranks it.
    message_terms: list[list[str]] = field(default_factory=list)
    exception_types: list[str] = field(default_factory=list)  # named in error lines ("KeyError")
    # English rendering of a question that holds Chinese (crosslingual.py); None for others.
    rendering: str | None = None
    # The BM25 terms in ``terms`` the glossary gave: from the rendered first word of each
    # matched term, and from its other alternatives (see read_as_asked).
    glossary_firsts: list[str] = field(default_factory=list)
    glossary_others: list[str] = field(default_factory=list)
    # The component a change description's headline names, Conventional Commits style
    # ("fix(router): ...", "refactor(lib/hooks): ..."), lowercased: a file or folder name.
    scopes: list[str] = field(default_factory=list)
    # Members named with their type, ``Type.member`` or Rust's ``Type::member``: (type, member).
    qualified: list[tuple[str, str]] = field(default_factory=list)
    # How a paste was read other than as sent (a log's per-line prefixes left out, a trace
    # taken out of a JSON record): the answer's notes say so.
    reading_notes: list[str] = field(default_factory=list)

    @property
    def model_text(self) -> str:
        """What the embedder and the cross-encoder read: the English rendering of a Chinese
        question, else the question itself."""
        return self.rendering or self.raw

    def read_as_asked(self, says_little: Callable[[str], bool] = lambda term: False) -> None:
        """The code speaks the question's Chinese (``crosslingual.speaks_chinese``): the models
        read the question as written, not the rendering (which would send them after English
        names sharing its generic words: 获取 get, 数据 data), and in BM25 the glossary's other
        alternatives and its words that ``says_little`` rejects (common in the workspace)
        weigh half of everything else (every other term counts twice). The Chinese words
        find the code's own text; there the glossary's English is a bridge to names only, and
        an alternative or a common word mostly matched unrelated short names (信息 info or
        message: ``on_message``; get data: ``_get_data``). Nothing is removed, so what reads
        the question's words (the coverage scorer, the verdict) sees the same words. Measured
        in ``docs/quality.md`` ("Chinese questions", third pass)."""
        self.rendering = None
        weak = Counter(self.glossary_others)
        weak.update(t for t in self.glossary_firsts if says_little(t))
        weighted: list[str] = []
        for t in reversed(self.terms):  # the glossary's terms were appended last
            if weak[t] > 0:
                weak[t] -= 1
                weighted.append(t)
            else:
                weighted.extend((t, t))
        self.terms = weighted[::-1]

    @property
    def names(self) -> list[str]:
        """The last component of each identifier: what a definition's symbol would end with."""
        return list(
            dict.fromkeys(i.removesuffix("()").rsplit(".", 1)[-1] for i in self.identifiers)
        )


def _looks_like_identifier(word: str) -> bool:
    """Code-shaped: snake_case, camelCase, PascalCase with inner capitals, dotted, a leading
    underscore, or a call. Not prose's dotted abbreviations (``e.g.``, ``i.e.``, ``a.k.a.``):
    read as a name, ``e.g`` made flask's ``g`` a definition of the question's name."""
    core = word.removesuffix("()")
    if "." in core and all(len(part) <= 1 for part in core.split(".")):
        return False
    if word.endswith("()") or "." in core:
        return True
    if "_" in core.strip("_"):
        return True
    if core.startswith("_") and any(ch.isalpha() for ch in core):
        return True  # a private name (`_paired`, `__init__`): prose never starts a word so
    # inner capital after a lower-case letter: camelCase / PascalCase compound
    return bool(re.search(r"[a-z][A-Z]", core)) or bool(re.fullmatch(r"[A-Z]{2,}[a-z]+\w*", core))


def classify_intent(raw: str, has_trace: bool) -> str:
    """``has_trace``: the question holds a stack trace or an error line (``Type: message``),
    which makes it a failure question whatever the words around it; so does a compiler's
    diagnostic (``error TS2345:``, ``error CS0103:``)."""
    text = raw.strip().lower()
    if has_trace or re.search(
        r"traceback|exception|error:|panicked at|stack trace|failed with"
        r"|\berror [a-z]{2,4}\d{3,5}:",
        text,
    ):
        return "fix-failure"
    if re.match(r"(is it true|does|do|is|are|did|can)\b.*\?$", text) or text.startswith(
        ("verify", "check whether", "check if", "is it true")
    ):
        return "verify"
    if re.match(r"(why|how does|how do|how is|how are|explain|what does|what is)\b", text):
        return "explain"
    if re.match(r"(where|which file|find|locate|show me)\b", text):
        return "find-file"
    return "find-file"


def literal_terms(body: str) -> list[str]:
    """The distinct search words of a message body's literal text: what a template that
    produced it must hold, the values formatted into it (quoted names, numbers, paths) left
    out."""
    words = code_terms(literal_text(body))
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS and len(w) > 1))


# A message wraps the error it reports after ": " (Go's ``fmt.Errorf("invalid argument %q for
# %q flag: %v", …, err)``, click's ``Invalid value for {hint}: {message}``): each part was
# written by a template of its own, so each part's words are searched for on their own too.
MAX_WRAPPED_PARTS = 4
MIN_PART_WORDS = 2


def message_word_sets(bodies: list[str]) -> list[list[str]]:
    """The word sets a template that wrote (part of) these message bodies must hold: each
    body's literal words, then those of each ": "-separated part of it with at least
    ``MIN_PART_WORDS`` (``mux`` alone is no template's text)."""
    out: list[tuple[str, ...]] = []
    for body in bodies:
        out.append(tuple(literal_terms(body)))
        parts = body.split(": ")
        if len(parts) > 1:
            words = (tuple(literal_terms(part)) for part in parts[:MAX_WRAPPED_PARTS])
            out.extend(w for w in words if len(w) >= MIN_PART_WORDS)
    return [list(words) for words in dict.fromkeys(out) if words]


def _own_prefix(message: str) -> bool:
    """A lower-case word before the colon (``error: required option '…' not specified``,
    commander's; a Go package's ``gin: …``) is a prefix the program may have written in the
    same literal as the text, so the whole line is matched against templates too; Go's and
    Rust's ``panic:`` is the runtime's."""
    head, sep, _ = message.partition(": ")
    head = head.strip()
    return bool(sep) and head != "panic" and re.fullmatch(r"[a-z][a-z0-9_-]*", head) is not None


def _exception_type_names(message: str) -> list[str]:
    """``click.exceptions.BadParameter: ...`` -> the qualified name and its last part (parts
    joined by dots, Ruby's ``::`` or PHP's backslash)."""
    m = re.match(r"\s*((?:[\w$]+(?:\.|::|\\))*[\w$]+)(?:\[\w+\])?(?: \[[\w-]+\])?:", message)
    if m is None:
        return []
    return [m.group(1), unqualified(m.group(1))]


# A type (capitalised: ``os.path`` is a module) and one of its members, ``.`` or ``::``.
_QUALIFIED_RE = re.compile(r"\b([A-Z]\w*)(?:\.|::)([A-Za-z_]\w*)\b")
# Javadoc's, JSDoc's and Ruby's way to name a member: ``CodeBlock.Builder#clear``,
# ``String#gsub`` (a capitalised type, so ``C# code`` and ``PR#12`` are left alone).
_MEMBER_REF_RE = re.compile(r"\b([A-Z]\w*)#([A-Za-z_]\w*)")


def _dotted_members(text: str) -> str:
    """``Type#member`` written ``Type.member``, the way the names are read; not inside an
    address or a path (``…?code=SH688686#section`` is a page's anchor). Only the matches'
    own words are looked at: a long pasted log costs one scan."""

    def dotted(m: re.Match[str]) -> str:
        start, end = m.start(), m.end()
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        while end < len(text) and not text[end].isspace():
            end += 1
        word = text[start:end]
        return m.group(0) if "/" in word or "=" in word else f"{m.group(1)}.{m.group(2)}"

    return _MEMBER_REF_RE.sub(dotted, text)


# ``type(scope): subject`` or ``type(scope)!: subject`` at the start of the headline.
_SCOPE_RE = re.compile(r"^\s*[A-Za-z]+\(([\w./\- ,]{1,80})\)!?:\s")


def commit_scopes(headline: str) -> list[str]:
    """The Conventional Commits scope of a headline, split on commas and spaces: the spec's
    "section of the codebase" (a package, a module, a file stem), lowercased."""
    m = _SCOPE_RE.match(headline)
    if m is None:
        return []
    parts = [p.strip().lower().strip("./") for p in re.split(r"[,\s]+", m.group(1))]
    # "reply.send" names reply's send, "lib/hooks.js" the file: the part before the dot.
    parts += [p.split(".", 1)[0] for p in parts if "." in p]
    return [p for p in dict.fromkeys(parts) if len(p) > 1]


def headline(raw: str) -> str:
    """The first non-empty line: what a question of several lines asks. A pasted change
    description ("feat: stream replies" and then "* test: skip when unavailable" among its
    bullets) is about the feature; its bullets name tests because every change has some."""
    return next((line for line in raw.splitlines() if line.strip()), "")


def _paths(text: str) -> tuple[list[str], dict[str, int]]:
    """The file paths in ``text`` (with a slash, or a name with a known extension) and the
    line each names (``app.py:42``)."""
    paths: list[str] = []
    path_lines: dict[str, int] = {}
    for m in _PATH_RE.finditer(text):
        # ``./main.go`` (Go's compiler, a relative import) is ``main.go``; a sentence's full
        # stop is not part of the name, a hidden folder's dot (``.github/``) is.
        p = re.sub(r"^(?:\.{1,2}/)+", "", m.group(1)).rstrip(".")
        if "/" not in p and "." not in p:
            continue
        paths.append(p)
        line = m.group(2) or m.group(3)
        if line:
            path_lines[p] = int(line)
    return paths, path_lines


def _lines(raw: str) -> tuple[str, list[str]]:
    """``raw``'s lines as a terminal shows them (LF line ends, no escape sequences), without a
    log's line prefixes, and a note naming the prefixes taken off."""
    text, taken_off = without_prefixes(plain(raw.replace("\r\n", "\n").replace("\r", "\n")))
    note = f"read without a log's line prefixes: {', '.join(taken_off)}"
    return text, [note] if taken_off else []


def read_paste(raw: str) -> tuple[str, list[str]]:
    """The question as the user meant it, and notes on how it was read when not as sent.

    A CI log's colours, Windows' line ends (every reader of a trace reads lines ending in LF),
    a log router's per-line prefixes and a CI runner's lines around a step's output are not
    part of the question; a CI system's or a log service's JSON answer is read as the log it
    holds, a record a log service wraps as its message, and an error tracker's report and a
    trace a JSON log record holds as the runtime printed the failure.
    Reading again what was read changes nothing (a log nests its prefixes a few deep, far fewer
    than ``log_prefixes`` takes off), so the engine reads a paste too long to keep whole before
    cutting it (``Engine.find``)."""
    text, notes = _lines(raw)
    if (fetched := log_text(text)) is not None:
        notes.append(f"read the {fetched[1]} the JSON answer holds, line by line")
        text, inner = _lines(fetched[0])
        notes.extend(inner)
    if (output := step_output(text)) is not None:
        text = output
        notes.append("read without the CI runner's lines around the step's output")
    if (report := reported(text)) is not None:
        text = report
        notes.append("read the error tracker's report as its runtime prints the failure")
    record, note = unfolded(text)
    if note is not None:
        text = record
        notes.append(note)
    return text, notes


def analyze(raw: str, intent: str = "auto") -> QueryAnalysis:
    raw, reading = read_paste(raw)
    typed = typed_text(raw)  # must-match text comes only from what the user typed
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED_RE.finditer(typed)]
    paths, path_lines = _paths(raw)
    # The files the question is about: named in its headline (a change description's bullets
    # name the tests and the changelog it also touched), or the module an interpreter-written
    # message names (below).
    named_paths = _paths(headline(raw))[0]
    all_codes = list(dict.fromkeys(m.group(1) for m in _ERROR_CODE_RE.finditer(raw)))
    error_codes = list(dict.fromkeys(m.group(1) for m in _ERROR_CODE_RE.finditer(typed)))
    identifiers = []
    path_text = set(paths)
    all_paths = "\n".join(path_text)  # a word inside any path is inside this (one search)
    read = error_lines(raw)
    # Names come from the text with what the error lines say about the runtime and the type's
    # home blanked (``searched``): C++'s ``what():``, ``nlohmann::…::detail::``.
    for m in _IDENT_RE.finditer(_dotted_members(read.searched)):
        word = m.group(0)
        if word in path_text or word in all_paths:
            continue
        if _looks_like_identifier(word):
            identifiers.append(word.removesuffix("()"))
    frames = parse_frames(raw)
    messages = read.messages
    fragments = [f for m in messages for f in message_fragments(m)]
    # In an error line, the exception's type says what kind of failure it is, not where it
    # happened, and quoted parts are values formatted into the message: neither is a name the
    # answer must contain.
    exception_types = {part for m in messages for part in _exception_type_names(m)}
    bodies = [message_body(m) for m in messages]
    bare = None if bodies or frames else programs.bare_message(raw)
    # One code-shaped word (``ThreadPoolExecutor``, ``parse_args``) names something; a literal
    # that spells it (``__all__``'s list, a registry's key) did not print it.
    if bare is not None and " " not in bare.strip() and _looks_like_identifier(bare.strip()):
        bare = None
    if bare is not None:
        bodies = [bare]
    # The types a ``raise`` in the workspace may have produced; the interpreter wrote the
    # messages it recognises itself, so their raise sites are not where those come from. A
    # type is capitalised, or qualified the C++ way (``nlohmann::detail::type_error``): a bare
    # lower-case word before a colon is a prefix (``panic:``, ``error:``), not a type.
    runtime = {m: runtime_names(m) for m in messages}
    named = [_exception_type_names(m) for m in messages if ":" in m and runtime[m] is None]
    raised = list(
        dict.fromkeys(
            names[-1]
            for names in named
            if names
            and names[-1] not in _GENERIC_ERRORS
            and (names[-1][:1].isupper() or "::" in names[0])
        )
    )
    # Nor is the type named again inside the message (nlohmann's ``[json.exception.type_error.
    # 302] type must be string``): its class is not where the message was written.
    identifiers = [
        i
        for i in identifiers
        if i not in exception_types and i.rsplit(".", 1)[-1] not in exception_types
    ]
    # An interpreter-written message quotes the program's names, not values: the type that
    # lacks the attribute, the attribute, the module (and so its file).
    for rt in filter(None, runtime.values()):
        identifiers = [i for i in identifiers if i not in rt.builtin] + list(rt.names)
        paths.extend(rt.files)
        named_paths.extend(rt.files)
    for q in quoted:
        if re.fullmatch(r"[A-Za-z_][\w.]*", q):
            identifiers.append(q)
    identifiers = list(dict.fromkeys(identifiers))
    failure = bool(frames or messages)
    if intent != "auto":
        resolved_intent = intent
    else:
        resolved_intent = crosslingual.classify_intent(
            raw, bool(frames), bool(messages)
        ) or classify_intent(raw, failure)
    rendering = crosslingual.render(raw)

    terms: list[str] = []
    # An error line's runtime prefix and its type's namespace are not words of the raise site.
    for t in code_terms(read.searched):
        if t in STOPWORDS or len(t) < 2:
            continue
        terms.append(t)
    # Verbatim names weigh more than the words around them: repeat them once more, whole
    # and in parts, so Tantivy's query boosts favour chunks that hold the exact name.
    for ident in identifiers:
        for part in ident.split("."):
            whole = part.lower().strip("_")
            if whole:
                terms.append(whole)
                terms.extend(p for p in split_identifier(part) if p not in STOPWORDS)
    for code in all_codes:
        terms.append(code.lower())
    firsts: list[str] = []
    others: list[str] = []
    if rendering is not None:
        # Chinese words (single characters and question words dropped) for Chinese comments,
        # then the glossary's English words for English code.
        terms = [t for t in terms if not cjk.HAN_RUN_RE.match(t)]
        terms.extend(crosslingual.han_query_terms(raw))
        terms.extend(t for t in rendering.terms if t not in STOPWORDS and len(t) > 1)
        firsts = [t for t in rendering.first_terms if t not in STOPWORDS and len(t) > 1]
        others = [t for t in rendering.other_terms if t not in STOPWORDS and len(t) > 1]
    said = raw if rendering is None else f"{raw} {rendering.text}"
    # Tests and declarations are the subject when the headline names them; a pasted failure
    # is read whole (a test's frames and its name are the subject), but for a test runner's
    # report: it always names the test that failed (``FAILED tests/test_x.py::test_y - …``,
    # ``--- FAIL: TestX``, minitest's ``AppTest#test_app``), and what it asks is where the error
    # comes from: its error lines are read.
    if failure and test_report(raw):
        subject = " ".join(messages)
    else:
        subject = said if rendering is not None or failure else headline(raw)
    headline_words = set(re.findall(r"[a-z]+", subject.lower()))
    return QueryAnalysis(
        raw=raw,
        intent=resolved_intent,
        identifiers=identifiers,
        paths=list(dict.fromkeys(paths)),
        named_paths=list(dict.fromkeys(named_paths)),
        path_lines=path_lines,
        quoted=quoted,
        error_codes=error_codes,
        terms=terms,
        about_tests=bool(headline_words & _TEST_WORDS),
        about_declarations=bool(headline_words & _DECLARATION_WORDS)
        or any(p.lower().endswith(_HEADER_EXTS) for p in paths),
        frames=frames,
        messages=messages,
        fragments=list(dict.fromkeys(fragments)),
        message_bodies=list(
            dict.fromkeys(b for b in [*bodies, *filter(_own_prefix, messages)] if b)
        ),
        message_terms=message_word_sets(bodies),
        exception_types=raised,
        rendering=rendering.text if rendering is not None else None,
        glossary_firsts=firsts,
        glossary_others=others,
        scopes=commit_scopes(headline(raw)),
        reading_notes=reading,
        qualified=list(
            dict.fromkeys(
                (owner, member)
                for owner, member in _QUALIFIED_RE.findall(_dotted_members(typed))
                if not any(f"{owner}.{member}" in p for p in path_text)
            )
        ),
    )
