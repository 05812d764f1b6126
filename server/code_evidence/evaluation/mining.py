"""Evaluation cases mined from the repository's own history: "where should I change this?".

Every commit says in words what was changed and its diff says where. A commit becomes a case
the way the shared dev set was built (``shared/bench/README.md``): the query is the cleaned
message, the gold is the changed source files with the old-side line ranges of the hunks, and
the index the case is asked against is the commit's parent, so the answer can never come from
the commit itself. Commits that carry no such question are skipped, each with a reason that
the report counts: merges, bots, releases and version bumps, changelog / dependency / docs /
typo / format / lint-only work, reverts, runtime-version sweeps, changes that touch no source
code or too much of it, and changes to comments, docstrings or whitespace only.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..api import EngineError
from ..filekinds import file_flags, is_outside_source
from ..git import Git, GitBlobs
from ..index.chunk import detect_language
from .evaluate import Case

MAX_SOURCE_FILES = 8  # more than this is a sweep, not one change with a place
MIN_WORDS = 4
RECORD, UNIT = "\x1e", "\x1f"

_BOT = re.compile(r"\[bot\]|dependabot|renovate|pre-commit-ci|github-actions|\bbot@", re.I)
# Subjects that say the change is not about behaviour (checked on the subject line only).
_SKIP_SUBJECT: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("revert", re.compile(r"^\s*revert\b", re.I)),
    (
        "release or version bump",
        re.compile(
            r"^\s*(release|prepare\s+(for\s+)?release|bump\s+(the\s+)?version|version\s+bump)\b"
            r"|^\s*v?\d+(\.\d+)+\s*$|\bbump version\b|\brelease\s+v?\d+(\.\d+)+",
            re.I,
        ),
    ),
    (
        "dependencies or tooling",
        re.compile(
            r"\bbump\s+\S+\s+from\s+\S+\s+to\b|\bpre-commit\b|\bupdate\s+(the\s+)?(dependencies|"
            r"deps|requirements|lock\s*file)\b|\b(ci|workflows?)\s*:",
            re.I,
        ),
    ),
    ("changelog", re.compile(r"\b(changelog|changes\.rst|news\s+entry|release\s+notes)\b", re.I)),
    (
        "typo, format or lint",
        # Anchored on purpose: "Fix formatting of error messages" changes behaviour.
        re.compile(
            r"\btypos?\b|^\s*(fix(es|ed)?\s+)?spelling\b|^\s*(re)?format(s|ted|ting)?\b"
            r"|\b(apply|run|with|using)\s+(black|ruff|isort|prettier|gofmt|clang-format)\b"
            r"|^\s*(fix(es|ed)?\s+)?(black|ruff|isort|flake8|pylint|eslint|lint(ing)?|mypy|"
            r"pyright|type[- ]?check\w*)\b|\b(lint|mypy|pyright)\s+(errors?|warnings?|issues?)\b",
            re.I,
        ),
    ),
    (
        "runtime-version sweep",
        re.compile(r"\b(drop|remove|add)\s+(support\s+for\s+)?(python|py|node)\s*\d", re.I),
    ),
    ("docs", re.compile(r"^\s*(docs?|documentation)\b\s*[:(]?", re.I)),
)

_ISSUE_REF = re.compile(r"\(\s*(#|gh-)\d+\s*\)|(?<![\w/])(#|gh-)\d+\b", re.I)
_ISSUE_LINE = re.compile(
    r"^\s*(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|related\s+to)\b[\s:]*"
    r"((#|gh-)\d+[\s,]*|https?://\S+[\s,]*)+$",
    re.I,
)
_TRAILER = re.compile(r"^[A-Za-z][\w-]*:\s+\S")
_KNOWN_TRAILER = re.compile(
    r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|"
    r"suggested-by|helped-by|cc|change-id|fixes|closes|resolves|refs|see-also)\s*:",
    re.I,
)
_URL = re.compile(r"https?://\S+|www\.\S+")
_CHECKLIST = re.compile(r"^\s*[-*]\s*\[[ xX]\]|^\s*\(cherry picked from commit [0-9a-f]+\)\s*$")
_WORD = re.compile(r"[A-Za-z][A-Za-z']+")
_HUNK_POSITION = re.compile(rb"^@@ [^@]* @@")
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)


@dataclass(frozen=True, slots=True)
class FileChange:
    """One changed source file: where the commit touched it, in its parent's line numbers."""

    path: str
    ranges: tuple[tuple[int, int], ...]
    changed_lines: int
    change: str  # modified | deleted


@dataclass(frozen=True, slots=True)
class MinedCommit:
    sha: str
    parent: str  # the index a case is asked against: never contains ``sha``
    time: int  # commit time, for the time split
    query: str
    files: tuple[FileChange, ...]
    patch_id: str  # the changed lines without their positions: equal for a cherry-pick

    def cases(self, dataset: str) -> list[Case]:
        """Variant a (no open file, every changed file is gold) and, when the commit changes
        two or more files, variant b: the user is in the file that changed most, and the other
        files are the news."""
        gold = {f.path: f.ranges for f in self.files}
        out = [Case(f"{dataset}:{self.sha[:10]}:a", dataset, "commit", "a", self.query, None, gold)]
        if len(self.files) >= 2:
            opened = max(self.files, key=lambda f: (f.changed_lines, f.path)).path
            rest = {p: r for p, r in gold.items() if p != opened}
            out.append(
                Case(
                    f"{dataset}:{self.sha[:10]}:b", dataset, "commit", "b", self.query, opened, rest
                )
            )
        return out


@dataclass(slots=True)
class Mined:
    commits: list[MinedCommit]  # oldest first
    considered: int
    skipped: Counter[str] = field(default_factory=Counter)


class MiningError(EngineError):
    """The workspace has no git history to mine, or the revision range is not valid."""


def is_source(path: str) -> bool:
    """Code a change request is about: a file with a grammar that is not a test, an example,
    documentation, vendored or generated code, or packaging glue."""
    if detect_language(path) is None:
        return False
    return not is_outside_source(path) and not any(file_flags(path, ""))


def clean_message(message: str) -> str:
    """The commit message as a question: subject and body without issue numbers, trailers,
    URLs and PR checklists (none of which a user would type, and all of which leak ids)."""
    paragraphs = re.split(r"\n\s*\n", message.strip())
    last = [ln.strip() for ln in paragraphs[-1].splitlines() if ln.strip()]
    if len(paragraphs) > 1 and last and all(_TRAILER.match(ln) for ln in last):
        paragraphs.pop()  # git's trailer block: "Token: value" lines closing the message
    kept = []
    for ln in "\n".join(paragraphs).splitlines():
        if _CHECKLIST.match(ln) or _KNOWN_TRAILER.match(ln) or _ISSUE_LINE.match(ln):
            continue
        ln = _ISSUE_REF.sub("", _URL.sub("", ln)).strip(" -*")
        ln = re.sub(r"\s+([.,;:])", r"\1", ln)  # punctuation left behind by a removed URL
        if ln:
            kept.append(ln)
    return re.sub(r"\s+", " ", " ".join(kept)).strip()


def skip_reason_for_message(subject: str, author: str) -> str | None:
    if _BOT.search(author):
        return "bot"
    for reason, pattern in _SKIP_SUBJECT:
        if pattern.search(subject):
            return reason
    return None


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return tree


_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_HASH_COMMENT = re.compile(r"#[^\n]*")


def code_signature(path: str, text: str) -> str:
    """What the file does, without comments, docstrings and layout: equal signatures mean a
    change a code search has nothing to find for (checked on the AST for Python)."""
    language = detect_language(path)
    if language == "python":
        try:
            return ast.dump(_strip_docstrings(ast.parse(text)))
        except (SyntaxError, ValueError, RecursionError):
            pass  # not parseable by this Python: fall back to text
        text = _HASH_COMMENT.sub("", text)
    elif language == "ruby":
        text = _HASH_COMMENT.sub("", text)
    else:
        text = _C_COMMENT.sub("", text)
    return re.sub(r"\s+", "", text)


def old_side_ranges(diff: bytes) -> tuple[tuple[int, int], ...]:
    """Old-side line ranges of a ``-U0`` diff; a pure insertion after line a is ``[a, a+1]``,
    the lines around the point where the new code goes."""
    out = []
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        out.append((start, start + 1) if count == 0 else (start, start + count - 1))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Record:
    sha: str
    parents: list[str]
    author: str
    time: int
    message: str
    changes: list[tuple[str, str]]  # (status letter, workspace-relative path)


def _log(git: Git, commits: int | None, since: str | None) -> list[_Record]:
    """Commits, newest first, with the files each changed, from one ``git log`` (a diff call
    per commit would spend most of a long history starting processes). No rename detection:
    a rename is a deletion and an addition, and an addition already disqualifies."""
    fmt = f"--format={RECORD}%H{UNIT}%P{UNIT}%an <%ae>{UNIT}%ct{UNIT}%B{UNIT}"
    args = ["log", "--no-show-signature", "--topo-order", "--raw", "-z", "--no-renames"]
    args += ["--relative", fmt]
    if commits is not None:
        args.append(f"--max-count={commits}")
    args.append("HEAD")
    if since:
        if git.resolve_commit(since) is None:
            raise MiningError(f"--since {since!r} does not name a commit in {git.root}")
        args.append(f"^{since}")
    out = git.output(*args, "--", ".", timeout=600)
    if out is None:
        raise MiningError(
            git.refusal or f"{git.root}: not a git repository with commits (git log failed)"
        )
    records = []
    for raw in out.decode("utf-8", "surrogateescape").split(RECORD)[1:]:
        parts = raw.split(UNIT, 5)
        if len(parts) < 6 or not parts[3].isdigit():
            continue
        sha, parents, author, when, message, tail = parts
        fields = tail.lstrip("\n\0").split("\0")
        changes = [
            (meta.split()[-1][:1], path)
            for meta, path in zip(fields[0::2], fields[1::2], strict=False)
            if meta.startswith(":") and len(meta.split()) >= 5
        ]
        records.append(_Record(sha, parents.split(), author, int(when), message, changes))
    return records


def _hunks(diff: bytes) -> dict[str, tuple[tuple[tuple[int, int], ...], int]]:
    """Per file of a ``-U0`` diff: old-side ranges and added + removed lines."""
    out: dict[str, tuple[tuple[tuple[int, int], ...], int]] = {}
    for section in re.split(rb"^diff --git ", diff, flags=re.M)[1:]:
        m = re.search(rb"^--- (?:a/(.*)|/dev/null)$", section, re.M)
        if not m or m.group(1) is None:
            continue
        path = m.group(1).decode("utf-8", "replace")
        ranges = old_side_ranges(section)
        changed = sum(
            1
            for line in section.split(b"\n")
            if line[:1] in (b"+", b"-") and not line.startswith((b"+++ ", b"--- "))
        )
        out[path] = (ranges, changed)
    return out


def _mine_one(git: Git, blobs: GitBlobs, rec: _Record) -> MinedCommit | str:
    """The commit as a case, or why it is not one."""
    sha, parent, message = rec.sha, rec.parents[0], rec.message
    changes = [(kind, path) for kind, path in rec.changes if is_source(path)]
    if not changes:
        return "no source change"
    if len(changes) > MAX_SOURCE_FILES:
        return "too many files"
    if any(kind not in "MD" for kind, _ in changes):
        return "adds or renames source files"
    paths = sorted(path for _, path in changes)
    diff = git.output(
        "-c",
        "core.quotepath=false",
        "diff",
        "-U0",
        "--relative",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        parent,
        sha,
        "--",
        *paths,
    )
    diff = diff or b""
    hunks = _hunks(diff)
    files: list[FileChange] = []
    same = True
    for kind, path in sorted(changes, key=lambda c: c[1]):
        old = blobs.read(parent, path) or b""
        ranges, lines = hunks.get(path, ((), 0))
        if kind == "D":
            n = old.count(b"\n") + (0 if old.endswith(b"\n") or not old else 1)
            files.append(FileChange(path, ((1, max(n, 1)),), lines, "deleted"))
            same = False
            continue
        if same:
            new = blobs.read(sha, path) or b""
            old_text, new_text = old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
            same = code_signature(path, old_text) == code_signature(path, new_text)
        files.append(FileChange(path, ranges, lines, "modified"))
    if same:
        return "comments, docstrings or whitespace only"
    query = clean_message(message)
    if len(_WORD.findall(query)) < MIN_WORDS:
        return "message too short"
    # File names, the enclosing definition git names in each hunk header, and the changed
    # lines, without positions: what `git patch-id` compares, for a diff without context.
    changed = b"\n".join(
        _HUNK_POSITION.sub(b"@@", line)
        for line in diff.split(b"\n")
        if line[:1] in (b"+", b"-") or line.startswith(b"@@")
    )
    patch_id = hashlib.sha1(changed).hexdigest()
    return MinedCommit(sha, parent, rec.time, query, tuple(files), patch_id)


def mine(
    workspace: Path,
    commits: int | None = None,
    since: str | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    git: Git | None = None,
) -> Mined:
    """Cases from the newest ``commits`` commits (all with None), only those after ``since``
    when given; oldest first, so a split by position is a split by time. ``git``: the
    workspace's hardened git (made here when not given)."""
    git = git if git is not None else Git(workspace)
    records = _log(git, commits, since)
    result = Mined([], len(records))
    seen: set[str] = set()
    with git.blobs() as blobs:
        for n, rec in enumerate(reversed(records), 1):  # oldest first: the original is kept
            if progress:
                progress("mine", n, len(records))
            subject = rec.message.strip().splitlines()[0] if rec.message.strip() else ""
            reason = None
            if len(rec.parents) > 1:
                reason = "merge"
            elif not rec.parents:
                reason = "first commit"
            else:
                reason = skip_reason_for_message(subject, rec.author)
            if reason is None:
                mined = _mine_one(git, blobs, rec)
                if isinstance(mined, str):
                    reason = mined
                elif mined.patch_id in seen:  # a cherry-pick of a commit already mined
                    reason = "duplicate"
                else:
                    seen.add(mined.patch_id)
                    result.commits.append(mined)
            if reason is not None:
                result.skipped[reason] += 1
    result.commits.sort(key=lambda c: c.time)  # stable: equal times keep the topological order
    return result
