"""A bounded log of answered requests, for explaining a ranking after the fact.

Queries are pasted tracebacks, config snippets and error output, which carry tokens and keys.
So the log stores a hash of the query (to correlate repeats) and a redacted copy, never the raw
text, and keeps only the newest entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from .api import FindResult

REDACTED = "[redacted]"
# Masking inside indexed code must not touch ordinary code: no generic "long hex/base64" rule
# (hashes, test vectors and fixtures are common) and no bare ``token x`` rule; only shapes that
# are credentials on their own, and string literals assigned to a credential-named variable.
_CREDENTIAL_NAME = (
    r"[\w.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|credential)[\w.-]*"
)
# Each credential shape with the lower-case substrings that must be present for it to match:
# cheap ``in`` checks decide which regexes run at all, since most code holds none of these and
# masking runs on every result of every answer (and on whole classes for the context pack).
_SHAPES: list[tuple[tuple[str, ...], re.Pattern[str]]] = [
    (
        ("private key",),
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"
        ),
    ),
    (("akia", "asia"), re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}\b")),  # AWS access key ids
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "glpat", "xox", "sk-", "sk_live"),
        # GitHub, GitLab, Slack, OpenAI, Stripe. No leading \b: a pattern that starts with its
        # literal prefixes is searched fast; _mask_shape checks the boundary instead.
        re.compile(
            r"(?:ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|sk-|sk_live_|rk_live_"
            r"|pk_live_)[A-Za-z0-9_\-]{16,}"
        ),
    ),
    (("aiza",), re.compile(r"AIza[0-9A-Za-z_\-]{35}\b")),  # Google API keys
    (("eyj",), re.compile(r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}")),  # JWTs
    (("bearer",), re.compile(r"(?i:bearer)\s+[A-Za-z0-9\-._~+/]{16,}=*")),
]
_URL_CREDENTIALS = re.compile(r"(://)[^/\s:@'\"]+:[^/\s@'\"]+(@)")  # user:password@ in URLs
_NAME_HINT = re.compile(r"(?i)passw|pwd|secret|token|key|credential")
# NAME = "literal" / NAME: 'literal' / "name": "literal" where NAME says credential.
_ASSIGNED = re.compile(
    r"(?i)(\b" + _CREDENTIAL_NAME + r"[\"']?\s*(?::=|=|:)\s*)([\"'])([^\"'\s]{8,})\2"
)
_PLACEHOLDER = re.compile(r"^(?:[A-Za-z_]+|[A-Z0-9_]+|.*[${}<>%].*|x+|\*+|\.+)$")


def _mask_assigned(m: re.Match[str]) -> str:
    value = m.group(3)
    if _PLACEHOLDER.match(value):  # a word, an env var name or a template: not a secret
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{REDACTED}{m.group(2)}"


def mask_secrets(text: str) -> str:
    """Mask credential-shaped strings in code shown to a caller (results, context packs,
    hovers). The line count is kept, so ``start``/``end`` still cite the right lines; the
    index keeps the original text, so ranking is not affected."""
    if not text:
        return text
    lower = text.lower()
    for hints, pattern in _SHAPES:
        if any(h in lower for h in hints):
            text = pattern.sub(_mask_shape, text)
    if "://" in text and "@" in text:
        text = _URL_CREDENTIALS.sub(rf"\1{REDACTED}\2", text)
    hits = [m.start() for m in _NAME_HINT.finditer(text)]
    if not hits:
        return text
    # Only the lines that name a credential go through the assignment pattern.
    out, done = [], 0
    for pos in hits:
        if pos < done:
            continue
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        out.append(text[done:start])
        out.append(_ASSIGNED.sub(_mask_assigned, text[start:end]))
        done = end
    out.append(text[done:])
    return "".join(out)


def _mask_shape(m: re.Match[str]) -> str:
    at = m.start()
    if at and (m.string[at - 1].isalnum() or m.string[at - 1] == "_"):
        return m.group(0)  # inside a longer word (``disk_...``, ``task-...``): not a key
    return REDACTED + "\n" * m.group(0).count("\n")


# A query is no code to read: the log also masks any value after a credential-like word and
# every long hex or base64 run, which in indexed code would hide hashes and fixtures.
_LOG_ONLY = [
    re.compile(
        r"(?i)\b(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth)"
        r"(\s*[=:]\s*|\s+)(\"[^\"]*\"|'[^']*'|\S+)"
    ),
    re.compile(r"(?i)\bbearer\s+[\w\-.~+/]+=*"),
    re.compile(r"\b[A-Fa-f0-9]{32,}\b|\b[A-Za-z0-9+/]{40,}={0,2}"),
]


def redact(text: str) -> str:
    """What the request log keeps of a query: the credential shapes ``mask_secrets`` knows,
    plus the stricter log-only rules."""
    text = mask_secrets(text)
    for pattern in _LOG_ONLY:
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
        else:
            text = pattern.sub(REDACTED, text)
    return text


class TraceLog:
    def __init__(self, path: Path, keep: int = 500) -> None:
        self.path = path
        self.keep = keep
        self._lock = threading.Lock()
        self._count: int | None = None  # lines in the file, counted once, then tracked

    def record(self, result: FindResult, open_file: str | None, line: int | None) -> None:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "query_sha256": hashlib.sha256(result.query.encode("utf-8", "replace")).hexdigest(),
            "query": redact(result.query)[:2000],
            "intent": result.intent,
            "open_file": open_file,
            "line": line,
            "commit": result.commit,
            "confidence": result.confidence,
            "insufficient": result.insufficient,
            "stages": {k: [v.candidates, round(v.ms, 2)] for k, v in result.trace.items()},
            "results": [
                {
                    "at": f"{r.path}:{r.start}-{r.end}",
                    "score": round(r.score, 5),
                    "reasons": r.reasons,
                    "scores": {k: round(v, 4) for k, v in r.scores.items()},
                }
                for r in result.results
            ],
            "dropped": [f"{d.path}:{d.start}-{d.end} {d.reason}" for d in result.context.dropped],
        }
        line_text = json.dumps(entry) + "\n"
        with self._lock:
            try:
                if self._count is None:
                    self._count = len(self.entries()) if self.path.exists() else 0
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(line_text)
                self._count += 1
                if self._count > 2 * self.keep:
                    self._trim()
            except OSError:
                return  # the log is a convenience: a full disk must not fail the request

    def _trim(self) -> None:
        """Keep the newest ``keep`` entries (rewritten once the file holds twice that, so the
        cost is paid once per ``keep`` requests)."""
        with open(self.path, encoding="utf-8") as f:
            lines = f.readlines()[-self.keep :]
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(lines)
        os.replace(tmp, self.path)
        self._count = len(lines)

    def entries(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except (OSError, json.JSONDecodeError):
            return []
