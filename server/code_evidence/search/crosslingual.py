"""Questions asked in Chinese about code written in English: the glossary, the English
rendering the models read, the English BM25 terms, and the Chinese intent rules.

The embedder and the cross-encoder were trained on English only; BM25 matches words. A
Chinese question therefore gets an English *rendering*: every Chinese term the glossary knows
(``glossary_zh.tsv``, longest match first) becomes its first English word, everything ASCII
(identifiers, paths, flags, quoted text) is kept verbatim, full-width punctuation becomes ASCII,
and Chinese the glossary does not know (particles mostly) is dropped. The models read the
rendering; the original question is never replaced: it stays ``raw`` (the cache keys, the
answer's ``query``), its Chinese words are still BM25 terms (for Chinese comments and
docstrings), and the rendering only adds. Nothing here guesses names that may not exist: the
glossary maps words to words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..index import cjk
from ..index.terms import code_terms

GLOSSARY_PATH = Path(__file__).with_name("glossary_zh.tsv")
_ENGLISH_RE = re.compile(r"[a-z][a-z0-9]*(?: [a-z][a-z0-9]*)*")
_PUNCT = str.maketrans(
    {"，": ",", "。": ".", "？": "?", "！": "!", "（": "(", "）": ")", "：": ":", "；": ";"}
    | {"、": ",", "“": '"', "”": '"', "‘": "'", "’": "'", "《": "<", "》": ">", "　": " "}
)
# Question words and particles: Chinese BM25 terms that say nothing about the code.
STOPWORDS_ZH = frozenset(
    {
        "在哪",
        "在哪里",
        "哪里",
        "哪个",
        "哪些",
        "什么",
        "如何",
        "怎么",
        "怎样",
        "为什么",
        "为何",
        "是否",
        "是不是",
        "有没有",
        "可以",
        "一个",
        "这个",
        "那个",
        "这些",
        "那些",
        "我们",
        "你们",
        "他们",
        "就是",
        "还是",
        "或者",
        "以及",
        "并且",
        "如果",
        "的话",
        "时候",
        "里面",
        "之前",
        "之后",
        "的时候",
        "一下",
        "能否",
        "应该",
        "需要",
        "地方",
        "代码",
    }
)


@dataclass(frozen=True, slots=True)
class Glossary:
    """Chinese term -> English alternatives (first one renders)."""

    entries: dict[str, tuple[str, ...]]
    longest: int


@dataclass(frozen=True, slots=True)
class Rendering:
    """What the glossary made of a question that holds Chinese."""

    text: str  # the English rendering (the models' input)
    terms: list[str]  # English BM25 terms from every alternative of every matched entry
    # ``terms`` split by origin: the rendered first word of each entry, and the other
    # alternatives (weigh half when the code speaks the question's Chinese: speaks_chinese).
    first_terms: list[str]
    other_terms: list[str]
    matched: list[tuple[str, str]]  # (Chinese term, English rendered), in question order
    unknown: list[str]  # Chinese left out of the rendering (no glossary entry)


def parse_glossary(text: str) -> Glossary:
    """Read the TSV; raises ValueError on a malformed line, a duplicate, a key that is not
    all Chinese or an English side that is not lower-case ASCII words."""
    entries: dict[str, tuple[str, ...]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        zh, sep, en = line.partition("\t")
        alts = tuple(a.strip() for a in en.split("|"))
        if not sep or not cjk.HAN_RUN_RE.fullmatch(zh):
            raise ValueError(f"glossary line {n}: {line!r} is not Chinese<TAB>English")
        if not alts or any(not _ENGLISH_RE.fullmatch(a) for a in alts):
            raise ValueError(f"glossary line {n}: English side {en!r} is not lower-case words")
        if zh in entries:
            raise ValueError(f"glossary line {n}: {zh} listed twice")
        entries[zh] = alts
    return Glossary(entries, max((len(k) for k in entries), default=0))


@lru_cache(maxsize=1)
def glossary() -> Glossary:
    """The shipped glossary."""
    return parse_glossary(GLOSSARY_PATH.read_text(encoding="utf-8"))


def _match_run(run: str, g: Glossary) -> list[tuple[str, tuple[str, ...] | None]]:
    """Forward maximum matching: the longest glossary term at each place, else one character
    (``None``: unknown)."""
    out: list[tuple[str, tuple[str, ...] | None]] = []
    i = 0
    while i < len(run):
        for size in range(min(g.longest, len(run) - i), 0, -1):
            alts = g.entries.get(run[i : i + size])
            if alts is not None:
                out.append((run[i : i + size], alts))
                i += size
                break
        else:
            out.append((run[i], None))
            i += 1
    return out


def render(raw: str, g: Glossary | None = None) -> Rendering | None:
    """The English rendering of a question that holds Chinese; ``None`` when it holds none
    (an English question is used as it is)."""
    if not cjk.has_han(raw):
        return None
    g = g or glossary()
    pieces: list[str] = []
    terms: list[str] = []
    first_terms: list[str] = []
    other_terms: list[str] = []
    matched: list[tuple[str, str]] = []
    unknown: list[str] = []
    pos = 0
    for m in cjk.HAN_RUN_RE.finditer(raw):
        pieces.append(raw[pos : m.start()].translate(_PUNCT))
        words: list[str] = []
        pending = ""
        for zh, alts in _match_run(m.group(0), g):
            if alts is None:
                pending += zh
                continue
            if pending:
                unknown.append(pending)
                pending = ""
            words.append(alts[0])
            matched.append((zh, alts[0]))
            terms.extend(code_terms(alts[0]))
            first_terms.extend(code_terms(alts[0]))
            for alt in alts[1:]:
                terms.extend(code_terms(alt))
                other_terms.extend(code_terms(alt))
        if pending:
            unknown.append(pending)
        pieces.append(f" {' '.join(words)} " if words else " ")
        pos = m.end()
    pieces.append(raw[pos:].translate(_PUNCT))
    text = " ".join("".join(pieces).split())
    text = re.sub(r"\s+([,.?!:;)])", r"\1", text).replace("( ", "(")
    return Rendering(text, terms, first_terms, other_terms, matched, unknown)


def han_query_terms(raw: str) -> list[str]:
    """The question's Chinese words as BM25 terms (for Chinese comments and docs), without
    question words and particles."""
    return [t for t in cjk.han_terms(raw) if len(t) > 1 and t not in STOPWORDS_ZH]


# The share of a question's Chinese words the workspace's text must hold for the code to count
# as written in Chinese for it (see speaks_chinese).
SPOKEN_SHARE = 0.5


def speaks_chinese(han_terms: list[str], doc_freq: Callable[[str], int]) -> bool:
    """Whether the workspace's text holds most of the question's Chinese words: then the code
    is documented in Chinese for this question, and an English rendering would send the
    English-only models after English names that merely share its generic words (获取 get,
    数据 data); the question is then read as asked. BM25 keeps the glossary terms either way."""
    words = list(dict.fromkeys(han_terms))
    if not words:
        return False
    try:
        found = sum(1 for w in words if doc_freq(w) > 0)
    except Exception:  # a lexical index that fails to read: the BM25 channel reports it
        return False
    return found >= SPOKEN_SHARE * len(words)


# A glossary word in more than this share of the workspace's chunks says little about which
# one is meant (get, data): it weighs half in BM25 when the code speaks the question's Chinese.
COMMON_SHARE = 0.05


def says_little(doc_freq: Callable[[str], int], chunks: int) -> Callable[[str], bool]:
    """Whether an English glossary word is common in this workspace (see read_as_asked)."""

    def common(term: str) -> bool:
        try:
            return chunks > 0 and doc_freq(term) > COMMON_SHARE * chunks
        except Exception:  # a lexical index that fails to read: the BM25 channel reports it
            return False

    return common


def holds_chinese(han_terms: list[str], doc_freq: Callable[[str], int]) -> bool:
    """Whether the workspace's text holds any of the question's Chinese words: then there is
    Chinese to match and BM25 can rank; with none (English code), the English-only models
    reading the question are the only bridge left, however weak."""
    try:
        return any(doc_freq(w) > 0 for w in dict.fromkeys(han_terms))
    except Exception:  # a lexical index that fails to read: the BM25 channel reports it
        return False


_URL_RE = re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")
# The share of Chinese in the text the models would read above which they are not asked.
MODELS_HAN_SHARE = 0.5


def han_share(text: str) -> float:
    """How Chinese a text is: Han characters among the letters (Han and ASCII), links left
    out (a pasted URL says nothing about the language). 0.0 for text with no letters.

    The shipped embedder and cross-encoder read English only; on text past
    :data:`MODELS_HAN_SHARE` their scores are noise, and so is a confidence built on them
    (a feature the verdict may use: see ``docs/quality.md``, "Chinese questions")."""
    text = _URL_RE.sub(" ", text)
    han = sum(len(m.group(0)) for m in cjk.HAN_RUN_RE.finditer(text))
    letters = han + len(_ASCII_LETTER_RE.findall(text))
    return han / letters if letters else 0.0


def models_can_read(model_text: str) -> bool:
    """Whether the English-only models may be asked about a question whose Chinese words the
    workspace holds (:func:`holds_chinese`): not when what they would read is mostly Chinese.
    Then the answer is ranked by words (BM25 on the segmented Chinese and the glossary's
    English) and structure; letting them read it ranked below BM25 alone on code documented
    in Chinese (``docs/quality.md``). On English code they keep reading even a question the
    glossary cannot render: there they are the only bridge, however weak (measured too)."""
    return han_share(model_text) < MODELS_HAN_SHARE


_TRACE_WORDS_RE = re.compile(r"报错|出错|异常|错误|崩溃|失败")
# An error pasted inside a Chinese sentence ("出现这个异常 ValueError: ..."), where the
# line-based error reader does not see one.
_PASTED_ERROR_RE = re.compile(r"\b[A-Za-z_][\w.]*(?:Error|Exception|Warning)\s*:")
_VERIFY_RE = re.compile(r"^(是否|是不是|有没有|能否|会不会|确认)|吗\s*[?？]?\s*$")
_WHY_RE = re.compile(r"为什么|为何|原理|解释")
_WHERE_RE = re.compile(r"在哪|哪里|哪个文件|哪个模块|哪个函数|哪个类|哪个方法|何处|位置")
_HOW_RE = re.compile(r"如何|怎么|怎样|是什么|什么意思")


def classify_intent(raw: str, has_trace: bool, has_error_line: bool) -> str | None:
    """The intent of a question phrased in Chinese; ``None`` when it holds no Chinese (the
    English rules decide). 报错/异常 with a pasted error -> fix-failure; 是否…, …吗 -> verify;
    为什么 -> explain; 在哪里/哪个文件 -> find-file; 如何/怎么 -> explain; else find-file."""
    if not cjk.has_han(raw):
        return None
    text = raw.strip()
    pasted = has_error_line or _PASTED_ERROR_RE.search(text) is not None
    if has_trace or (pasted and _TRACE_WORDS_RE.search(text)):
        return "fix-failure"
    if _VERIFY_RE.search(text):
        return "verify"
    if _WHY_RE.search(text):
        return "explain"
    if _WHERE_RE.search(text):
        return "find-file"
    if _HOW_RE.search(text):
        return "explain"
    return "find-file"
