"""Assembly: the ranked list the caller sees and the context pack (the verdict: verdict.py).

The pack is what a person or an agent reads: best evidence first, overlapping ranges merged,
a per-file quota so one file cannot crowd out the rest, each block headed by
``path:start-end symbol``, counted in the embedder's real tokens against the budget. What did not
fit is reported; a block too large for what is left goes in as its best lines, its header
saying what it was cut from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..api import Chunk, ContextPack, Dropped
from ..config import RankingConfig
from .candidate import Candidate
from .verdict import Verdict

# Chunk kinds that head a type whose members are chunks of their own (a class's header and
# docstring, then each method): the container, not the code that does the work.
TYPE_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "object", "enum", "impl", "record", "protocol",
     "extension", "actor", "module", "namespace", "type"}
)  # fmt: skip
# How close a member's score must come to its type's header for the member to go first.
MEMBER_MARGIN = 0.8


def members_first(ranked: list[Candidate], named: set[str], head: int = 10) -> list[Candidate]:
    """In the first ``head`` results, a type's header and one of its own members that follows
    it with nothing of another file between them, scoring nearly as well (within
    ``MEMBER_MARGIN``), change places: both match the question, and the member is the more
    specific evidence (the method that computes the delay, not the class whose doc says what
    it is for). Not when the question names the type (``named``): then the header is what was
    asked for. The two trade scores too, so the list stays in score order and every file
    keeps its place, its best score and its results: only which of its parts comes first
    changes."""
    out = list(ranked)
    moved: set[int] = set()
    for i in range(min(head, len(out))):
        h = out[i]
        ch = h.stored.chunk
        if ch.kind not in TYPE_KINDS or not ch.symbol or ch.symbol.rsplit(".", 1)[-1] in named:
            continue
        if h.id in moved:
            continue  # moved once already: it follows its best member, not every one
        for j in range(i + 1, min(head, len(out))):
            m = out[j].stored.chunk
            if m.path != ch.path:
                break
            if m.symbol.startswith(ch.symbol + ".") and out[j].score >= MEMBER_MARGIN * h.score:
                member = out[j]
                h.score, member.score = member.score, h.score
                out[i], out[j] = member, h
                member.tag("member-first")
                h.tag("after-member")
                moved.add(h.id)
                break
    return out


# Windows of code no definition names (a module's top level, one long object literal) merge
# into one result only up to this many lines: beyond, the union is a citation of nothing in
# particular (fastify's ``lib/errors.js:5-434`` for one error code at line 180).
MAX_ANONYMOUS_MERGE_LINES = 150


def merge_pieces(cands: list[Candidate]) -> list[Candidate]:
    """Pieces of one symbol (a long function split in two, overlapping windows of one file)
    that both made the list become one result, at the better piece's rank: the caller wants
    the function, not two halves of it competing for slots. Pieces of no symbol merge only
    while the result stays within ``MAX_ANONYMOUS_MERGE_LINES`` (the same metrics on the dev
    set, tighter places: docs/quality.md, "The context pack")."""
    out: list[Candidate] = []
    groups: dict[tuple[str, str, str], list[Candidate]] = {}
    for c in cands:
        ch = c.stored.chunk
        group = groups.setdefault((ch.path, ch.symbol, ch.kind), [])
        host = next(
            (
                o
                for o in group
                if _touch(ch.start, ch.end, o.stored.chunk.start, o.stored.chunk.end)
                and (
                    ch.symbol
                    or max(ch.end, o.stored.chunk.end) - min(ch.start, o.stored.chunk.start)
                    < MAX_ANONYMOUS_MERGE_LINES
                )
            ),
            None,
        )
        if host is None:
            out.append(c)
            group.append(c)
            continue
        h = host.stored.chunk
        merged = dataclasses.replace(
            h,
            start=min(h.start, ch.start),
            end=max(h.end, ch.end),
            text=_merge_text(h.start, h.text, ch.start, ch.text),
            secrets=tuple(dict.fromkeys((*h.secrets, *ch.secrets))),
        )
        host.stored = dataclasses.replace(host.stored, chunk=merged)
        host.tag("merged")
    return out


def file_quota(ranking: RankingConfig, open_file: str | None) -> int:
    """How many chunks of one file the ranked list shows before the other files' (see
    ``diversify``). Asked from an open file, the question is about that file's partners, and
    the first screen should name several of them; asked from nowhere, it is about a place,
    whose near-twins (a class's overloads, commons-lang's eight ``toPrimitive``) share its file:
    three chunks of it hid the right fourth (held out: chunk@10 0.758 at three, 0.797 at five;
    docs/quality.md, "Java, PHP and Ruby asked the same way")."""
    return ranking.per_file_results if open_file is None else ranking.per_file_results_open


def diversify(
    cands: list[Candidate], per_file: int, margin: float = 1.0, open_file: str | None = None
) -> list[Candidate]:
    """Keep the order, but move a file's chunks beyond ``per_file`` behind everything else, so
    the first screen of results spans files instead of five neighbours of one; and, with
    ``margin`` above 1, show distinct places first: a file already shown comes again only when
    its next chunk scores more than ``margin`` times the best chunk of a file not shown yet.
    The order in which files first appear never changes, only where their repeats go. The
    open file may keep twice ``per_file``: when the answer is in the file one is in, which of
    its parts is what the question is about."""
    cands = merge_pieces(cands)
    seen: dict[str, int] = {}
    head: list[Candidate] = []
    tail: list[Candidate] = []
    for c in cands:
        path = c.stored.chunk.path
        n = seen.get(path, 0)
        seen[path] = n + 1
        (head if n < (2 * per_file if path == open_file else per_file) else tail).append(c)
    ordered = head + tail
    if margin <= 1.0:
        return ordered
    return _distinct_first(ordered, margin)


def _distinct_first(ordered: list[Candidate], margin: float) -> list[Candidate]:
    out: list[Candidate] = []
    shown: set[str] = set()
    waiting: list[Candidate] = []  # repeats held back, in order
    for c in ordered:
        path = c.stored.chunk.path
        if path in shown:
            waiting.append(c)
            continue
        # A new place: the held-back repeats that clearly beat it go first.
        while waiting and waiting[0].score > margin * c.score:
            out.append(waiting.pop(0))
        out.append(c)
        shown.add(path)
    return out + waiting


Scope = tuple[int, int, str, str]  # start, end, symbol, text of an enclosing definition
SCORE_GAP = 0.4  # blocks scoring under this share of the best one stay out of the pack
PARENT_SHARE = 0.4  # a parent scope may take at most this share of the budget
# Code averages well over this many tokens a line, so a scope of more lines than
# PARENT_SHARE * budget / MIN_TOKENS_PER_LINE cannot fit, and is not built or counted.
MIN_TOKENS_PER_LINE = 4


def assemble_context(
    ranked: list[Candidate],
    budget: int,
    count_tokens: Callable[[str], int],
    per_file_blocks: int,
    verdict: Verdict,
    parent_of: Callable[[Chunk, int], Scope | None] | None = None,
    max_blocks: int = 20,
    focus: Callable[[Chunk], int] | None = None,
) -> ContextPack:
    """Best first into the budget, until the scores fall off (``SCORE_GAP``): how much goes in
    follows the evidence, not a fixed count. Small chunks are what ranks; their enclosing
    definition (``parent_of``: the class of a method) is what goes in when it fits, since a
    method read without its class is often misread. When evidence is weak, the pack holds only
    the single best block so it is minimal rather than padded with guesses. Only the first
    ``2 * max_blocks`` candidates are considered, so ``dropped`` lists near misses, not the
    whole recall tail.

    ``per_file_blocks`` keeps room for the other files: a file's blocks beyond it wait until
    every other candidate has had its turn, then take what budget is left, best first, in
    their place in the ranking. When the evidence is all in one file (a 4,000-line module
    whose several parts a change touches) the pack is not left nearly empty beside it.

    A block larger than the budget left goes in cut to the lines around the line it opens at
    (``focus``: the line holding the question, ``focus.py``), within the budget left and at most
    ``PARENT_SHARE`` of the budget, when at least ``WINDOW_MIN_TOKENS`` are left, once every
    block that fits whole is in (a cut takes no whole block's place): the 430 lines of an
    object literal of error codes, the first result, used to be dropped whole while the pack
    held 250 tokens of lesser ones."""
    ranked = ranked[: 2 * max_blocks]
    pack = _Pack(budget, count_tokens, parent_of, focus)
    dropped: list[Dropped] = []
    limit = 1 if verdict.insufficient else max_blocks
    floor = ranked[0].score * SCORE_GAP if ranked else 0.0
    waiting: list[tuple[int, Candidate]] = []  # held back by the per-file quota
    too_big: list[tuple[int, Candidate]] = []  # larger than the budget left when their turn came
    for rank, c in enumerate(ranked):
        ch = c.stored.chunk
        if len(pack.blocks) >= limit or (pack.blocks and c.score < floor):
            reason = (
                "weak-evidence"
                if verdict.insufficient
                else "score-gap"
                if c.score < floor
                else "max-blocks"
            )
            dropped.append(Dropped(ch.path, ch.start, ch.end, reason))
            continue
        reason = pack.add(rank, c, per_file_blocks)
        if reason == "per-file-quota" and limit > 1:
            waiting.append((rank, c))
        elif reason == "budget":
            too_big.append((rank, c))
        elif reason is not None:
            dropped.append(Dropped(ch.path, ch.start, ch.end, reason))
    for rank, c in waiting:
        ch = c.stored.chunk
        if len(pack.blocks) >= limit:
            dropped.append(Dropped(ch.path, ch.start, ch.end, "per-file-quota"))
            continue
        reason = pack.add(rank, c, None)
        if reason == "budget":
            too_big.append((rank, c))
        elif reason is not None:
            dropped.append(Dropped(ch.path, ch.start, ch.end, reason))
    # Cuts come last, so that none takes the place of a block that fits whole.
    for rank, c in sorted(too_big, key=lambda rc: rc[0]):
        ch = c.stored.chunk
        reason = "budget" if len(pack.blocks) >= limit else pack.cut(rank, c)
        if reason is not None:
            dropped.append(Dropped(ch.path, ch.start, ch.end, reason))
    parts = [f"{b.header}\n{b.text}" for b in sorted(pack.blocks, key=lambda b: b.rank)]
    text = "\n\n".join(parts)
    return ContextPack(
        text=text, tokens=count_tokens(text) if text else 0, budget=budget, dropped=dropped
    )


@dataclasses.dataclass(slots=True)
class _Block:
    rank: int  # the ranking place of the candidate that opened it: the pack's order
    path: str
    start: int
    end: int
    symbol: str
    text: str
    cut_from: tuple[int, int] | None = None  # a cut (``_Pack.cut``): the lines of the whole

    @property
    def header(self) -> str:
        return _header(self.path, self.start, self.end, self.symbol, self.cut_from)


class _Pack:
    """The blocks taken so far and the tokens they cost."""

    def __init__(
        self,
        budget: int,
        count_tokens: Callable[[str], int],
        parent_of: Callable[[Chunk, int], Scope | None] | None,
        focus: Callable[[Chunk], int] | None = None,
    ) -> None:
        self.budget = budget
        self.count_tokens = count_tokens
        self.parent_of = parent_of
        self.focus = focus
        self.blocks: list[_Block] = []
        self.per_file: dict[str, int] = {}
        self.used = 0

    def add(self, rank: int, c: Candidate, quota: int | None) -> str | None:
        """Take ``c`` (merged into a block of its file it overlaps or touches, else as a block
        of its own, its enclosing scope when that fits); why not, when it was not taken.
        ``quota``: how many blocks of one file may be taken (None: no limit)."""
        ch = c.stored.chunk
        count = self.count_tokens
        joined, reason = self._join(ch.path, ch.start, ch.end, ch.symbol, ch.text)
        if joined:
            return reason
        if quota is not None and self.per_file.get(ch.path, 0) >= quota:
            return "per-file-quota"
        block = _Block(rank, ch.path, ch.start, ch.end, ch.symbol, ch.text)
        cost = count(block.header) + count(ch.text)
        max_lines = int(PARENT_SHARE * self.budget / MIN_TOKENS_PER_LINE)
        scope = self.parent_of(ch, max_lines) if self.parent_of else None
        if scope is not None:
            start, end, symbol, text = scope
            scope_cost = count(_header(ch.path, start, end, symbol)) + count(text)
            if self.used + scope_cost <= self.budget and scope_cost <= PARENT_SHARE * self.budget:
                block = _Block(rank, ch.path, start, end, symbol, text)
                cost = scope_cost
        if self.used + cost > self.budget:
            return "budget"
        self._take(block, cost)
        return None

    def cut(self, rank: int, c: Candidate) -> str | None:
        """Take the best lines of ``c`` (:func:`window`) that fit the budget left, at most
        ``PARENT_SHARE`` of the budget (a view of the block, leaving room for the rest), when
        at least ``WINDOW_MIN_TOKENS`` are left; merged into a block of its file they overlap.
        Why not, when nothing was taken."""
        ch = c.stored.chunk
        room = min(self.budget - self.used, int(PARENT_SHARE * self.budget))
        if self.focus is None or room < WINDOW_MIN_TOKENS:
            return "budget"
        got = window(ch, room, self.count_tokens, self.focus(ch))
        if got is None:
            return "budget"
        start, end, text, cost = got
        joined, reason = self._join(ch.path, start, end, ch.symbol, text)
        if joined:
            return reason
        whole = (ch.start, ch.end)
        self._take(_Block(rank, ch.path, start, end, ch.symbol, text, whole), cost)
        return None

    def _join(
        self, path: str, start: int, end: int, symbol: str, text: str
    ) -> tuple[bool, str | None]:
        """Lines of ``path`` into the block of it they overlap or touch: whether there is
        one, and why they were not taken (inside it already, or over the budget)."""
        for b in self.blocks:
            if b.path == path and _touch(start, end, b.start, b.end):
                if b.start <= start and end <= b.end:
                    return True, "duplicate"
                return True, self._merge(b, start, end, symbol, text)
        return False, None

    def _merge(self, b: _Block, start: int, end: int, symbol: str, text: str) -> str | None:
        new_text = _merge_text(b.start, b.text, start, text)
        extra = self.count_tokens(new_text) - self.count_tokens(b.text)
        if self.used + extra > self.budget:
            return "budget"
        b.start, b.end = min(b.start, start), max(b.end, end)
        b.symbol, b.text = b.symbol or symbol, new_text
        self.used += extra
        return None

    def _take(self, block: _Block, cost: int) -> None:
        self.blocks.append(block)
        self.per_file[block.path] = self.per_file.get(block.path, 0) + 1
        self.used += cost


WINDOW_MIN_TOKENS = 100  # a cut block of fewer tokens says too little to take the place


def window(
    ch: Chunk, room: int, count_tokens: Callable[[str], int], focus: int
) -> tuple[int, int, str, int] | None:
    """The lines of ``ch`` around line ``focus`` (1-based, in the file) that fit in ``room``
    tokens with their header: (start, end, text, tokens), or None when not even that line
    fits. Lines are added above and below in turn, so the cut shows what leads to the line and
    what follows it."""
    lines = ch.text.split("\n")
    best = min(max(focus - ch.start, 0), len(lines) - 1)
    cost = [count_tokens(line) + 1 for line in lines]  # + the newline
    whole = (ch.start, ch.end)
    header = count_tokens(_header(ch.path, ch.start, ch.end, ch.symbol, whole))
    lo = hi = best
    used = header + cost[best]
    if used > room:
        return None
    up = True
    while lo > 0 or hi < len(lines) - 1:
        grow_up = (up and lo > 0) or hi == len(lines) - 1
        nxt = lo - 1 if grow_up else hi + 1
        if used + cost[nxt] > room:
            break
        used += cost[nxt]
        lo, hi = (nxt, hi) if grow_up else (lo, nxt)
        up = not up
    while True:  # the sum of lines' counts is an estimate: the block's own count decides
        text = "\n".join(lines[lo : hi + 1])
        start, end = ch.start + lo, ch.start + hi
        tokens = count_tokens(_header(ch.path, start, end, ch.symbol, whole))
        tokens += count_tokens(text)
        if tokens <= room or lo == hi:
            return (start, end, text, tokens) if tokens <= room else None
        if best - lo > hi - best:
            lo += 1
        else:
            hi -= 1


def _header(
    path: str, start: int, end: int, symbol: str, cut_from: tuple[int, int] | None = None
) -> str:
    """``# path:start-end  symbol``, and for a cut the lines it was cut from: a reader knows
    the block goes on beyond what the pack shows."""
    out = f"# {path}:{start}-{end}" + (f"  {symbol}" if symbol else "")
    return out + (f"  (cut from {cut_from[0]}-{cut_from[1]})" if cut_from else "")


def _touch(s1: int, e1: int, s2: int, e2: int) -> bool:
    """Two line ranges overlap or meet (one ends on the line before the other starts)."""
    return s1 <= e2 + 1 and s2 <= e1 + 1


def _merge_text(s1: int, t1: str, s2: int, t2: str) -> str:
    """Union of two line ranges of one file given their texts (they overlap or touch)."""
    lines: dict[int, str] = {}
    for start, text in ((s1, t1), (s2, t2)):
        for i, line in enumerate(text.split("\n")):
            lines.setdefault(start + i, line)
    return "\n".join(lines[n] for n in sorted(lines))
