"""Secrets: which files are never indexed, and how credential-shaped text is hidden.

The index keeps real file text (ranking and search need it), so two lines of defence: files
whose name says they hold credentials are never read (:func:`is_secret_path`), and whatever
leaves the engine (results, context packs, hovers, the request log) goes through
:func:`mask_secrets` (or the stricter :func:`redact` for queries, which are no code to read).
"""

from __future__ import annotations

import fnmatch
import re

# Basename patterns (matched lower-cased). Public-key halves (id_rsa.pub) are caught too: they
# are harmless, but a prefix rule never misses a renamed private key such as id_rsa_work.
_SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.keystore",
    "*.jks",
    "credentials",
    "credentials.json",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "*.kdbx",
    "secrets.yaml",
    "secrets.yml",
    "service-account*.json",
)
# Templates that document which variables exist, without values: useful, and safe to index.
_SECRET_ALLOWED = frozenset({".env.example", ".env.sample", ".env.template"})
_SECRET_RE = re.compile("|".join(fnmatch.translate(p) for p in _SECRET_PATTERNS))


def is_secret_path(path: str) -> bool:
    """Whether the file's name marks it as holding credentials, wherever it sits."""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    if name in _SECRET_ALLOWED:
        return False
    return _SECRET_RE.match(name) is not None


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
