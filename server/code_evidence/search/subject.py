"""A question about the open file itself: "what else must change with this file?", "which
tests cover this?", "what depends on this module?".

Such a question names no code: its words (change, file, tests, this) match whatever chunks
happen to say them (``KeepOpenFile``, ``FileError`` for "this file" in click's ``termui.py``),
and the vectors read them as any other sentence. What it is about is the file, so it is read
as the names the file defines, the way a user would ask about them one by one: keywords then
find the code that uses those names (its callers, its importers, the tests that call it),
the vectors the code that reads like it, and the structure and co-change channels the open
file's neighbours and partners as for any question from an open file. The answer is a list of
other files, one result each (``assemble.diversify``), the open file's own chunks after them.
With a line, "who calls this function?" is about the definition there, read as its name.
Measured on the dev set's variant-b cases asked this way (docs/quality.md, "What else must
change with this file").
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..index.store import Store, StoredChunk
from .candidate import Candidate
from .query import STOPWORDS, QueryAnalysis, analyze

# Beside the stopwords, the words such a question is made of: the file, changing it together,
# what relates to it. A question with any other word names something to look for.
_WORDS = """
    file files module modules package code here else together along alongside usually often
    typically always likely need needs needed needing go goes going edit edits edited editing
    modify modifies modified modifying changing updating touch touches touched touching related
    relate relates relating affect affects affected affecting depend depends depending
    dependent dependents dependency dependencies rely relies test tests tested testing cover
    covers covered call calls called calling caller callers import imports imported importing
    reference references referenced one ones place places thing things well too
"""
# Words that make the subject the definition at the cursor ("who calls this function?"), when
# the question comes with a line.
SYMBOL_WORDS = frozenset({"function", "functions", "method", "methods", "class", "classes"})
ABOUT_FILE_WORDS = frozenset(_WORDS.split()) | SYMBOL_WORDS

# The same question in Chinese: its words, taken off longest first, leave no Han character
# ("这个文件还需要改什么", "还有哪些文件要一起改", "哪些测试覆盖了这个文件", "这个模块被谁调用").
_ZH_WORDS = """
    这个 那个 这 此 本 该 文件 模块 代码 包 这里 函数 方法 还 还有 也 都 需要 需 要 得 必须 应该 会
    改 修改 改动 更改 变更 变动 编辑 更新 一起 同时 跟着 一般 通常 经常 往往 相关 有关 关联
    依赖 引用 导入 用到 使用 调用 影响 测试 覆盖 其他 其它 别的 另外 什么 哪些 哪个 哪里
    哪儿 哪 谁 有 了 的 时 时候 当 我 被 和 与 跟 地方 文件里 吗 呢 呀
"""
ZH_ABOUT_FILE_WORDS = tuple(sorted(_ZH_WORDS.split(), key=len, reverse=True))
_HAN_RE = re.compile(r"[\u4e00-\u9fff]")
MAX_NAMES = 25  # names of the file read as the question (a file's first ones, in line order)
_WORD_RE = re.compile(r"[a-z']+")


def asks_about_the_file(qa: QueryAnalysis) -> bool:
    """Whether the question says nothing but "this file": no name, path, quote or error, every
    word a stopword or one of :data:`ABOUT_FILE_WORDS`, and in Chinese every word one of
    :data:`ZH_ABOUT_FILE_WORDS` (a word the glossary does not know is a word to look for)."""
    if qa.identifiers or qa.paths or qa.quoted or qa.error_codes or qa.frames or qa.messages:
        return False
    text = qa.raw.lower()
    if qa.rendering is not None:
        for word in ZH_ABOUT_FILE_WORDS:
            text = text.replace(word, " ")
        if _HAN_RE.search(text):
            return False
        words = _WORD_RE.findall(text)
        return all(w in STOPWORDS or w in ABOUT_FILE_WORDS for w in words)
    words = _WORD_RE.findall(text)
    return bool(words) and all(w in STOPWORDS or w in ABOUT_FILE_WORDS for w in words)


def names_the_symbol(qa: QueryAnalysis) -> bool:
    """The question says function, method or class ("which tests cover this function?")."""
    words = set(_WORD_RE.findall(qa.raw.lower()))
    return bool(words & SYMBOL_WORDS) or any(w in qa.raw for w in ("函数", "方法"))


@dataclass(frozen=True, slots=True)
class Subject:
    """What a question about the open file is read as: the names, and the answer's note."""

    names: list[str]
    note: str


def subject_of(
    qa: QueryAnalysis, reader: Store, open_file: str, line: int | None
) -> Subject | None:
    """The names a question about the open file is read as: with a line and a question that
    says function, method or class, the definition there (its name); else the names the file
    defines. None when there are none (the question is then read as asked)."""
    each = "one result for each other file"
    if line is not None and names_the_symbol(qa):
        here = reader.chunk_at(open_file, line)
        if here is not None and len(here.name) > 1:
            said = f"asked about {here.chunk.symbol} in {open_file}: read as its name; {each}"
            return Subject([here.name], said)
    names = defined_names(reader.chunks_of(open_file))
    if not names:
        return None
    shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
    counted = "the name" if len(names) == 1 else f"the {len(names)} names"
    said = f"asked about {open_file} itself: read as {counted} it defines ({shown}); {each}"
    return Subject(names, said)


def defined_names(chunks: Iterable[StoredChunk], limit: int = MAX_NAMES) -> list[str]:
    """The names a file defines, outermost first (``Flask`` for ``Flask.route``), in line
    order, each once."""
    names: dict[str, None] = {}
    for sc in chunks:
        top = sc.chunk.symbol.split(".", 1)[0].strip()
        if len(top) > 1 and top not in names:
            names[top] = None
            if len(names) == limit:
                break
    return list(names)


def as_its_names(qa: QueryAnalysis, names: list[str]) -> QueryAnalysis:
    """The question read as the names: analysed as if asked, with the intent and whether it is
    about tests kept from the question as asked."""
    read = analyze(" ".join(names), qa.intent)
    return dataclasses.replace(
        read,
        about_tests=qa.about_tests,
        reading_notes=[*qa.reading_notes, *read.reading_notes],
    )


def others_first(ranked: list[Candidate], open_file: str, tests: bool) -> list[Candidate]:
    """The other files' results before the open file's, since the question asks what else;
    with ``tests`` ("which tests cover this?") the tests' before the code's."""

    def place(c: Candidate) -> int:
        if c.stored.chunk.path == open_file:
            return 2
        return 0 if c.stored.chunk.is_test or not tests else 1

    return sorted(ranked, key=place)
