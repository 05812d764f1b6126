"""Secrets: which files are never indexed, and which parts of the text are never shown.

The index keeps real file text (ranking and search need it), so two lines of defence: files
whose name says they hold credentials are never read (:data:`SECRET_FILES`,
:func:`is_secret_path`), and the credential-shaped parts of every other file are found once, at
index time, over the whole file (:func:`secret_spans`), and stored with each chunk as spans in
file coordinates, so any window of the file (a result, a merged result, a class around a
method, a hover) knows what to hide, even when the window holds only the middle of a private
key. Queries go through the same detector in its strict form (:func:`redact`) before the
request log keeps them.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import fnmatch
import itertools
import re
from collections.abc import Iterable, Sequence

# --------------------------------------------------------------------------- secret files

# (pattern, what such a file holds). A pattern without "/" matches the file's name wherever it
# sits; one with "/" matches the end of its path. Matched lower-cased. docs/reliability.md
# lists this table (a test holds the two together).
SECRET_FILES: tuple[tuple[str, str], ...] = (
    (".env*", "dotenv files and variants: .env.local, .env_prod, .envrc (direnv)"),
    ("*.env", "dotenv files named after their environment: prod.env"),
    ("*.pem", "private keys and certificates"),
    ("*.key", "private keys"),
    ("*.p12", "PKCS #12 key stores"),
    ("*.pfx", "PKCS #12 key stores"),
    ("*.ppk", "PuTTY private keys"),
    ("id_rsa*", "SSH keys (and any renamed copy: id_rsa_work)"),
    ("id_dsa*", "SSH keys"),
    ("id_ecdsa*", "SSH keys"),
    ("id_ed25519*", "SSH keys"),
    (".ssh/*", "everything in an SSH folder"),
    ("*.keystore", "Java key stores"),
    ("*.jks", "Java key stores"),
    ("*.kdbx", "KeePass databases"),
    ("credentials", "AWS, gem and other credential files"),
    ("credentials.json", "OAuth and cloud credentials"),
    ("credentials.toml", "Cargo registry tokens"),
    ("client_secret*.json", "Google OAuth client secrets"),
    ("service-account*.json", "Google service account keys"),
    (".git-credentials", "git's stored passwords and tokens"),
    (".netrc", "machine passwords (curl, ftp, git)"),
    ("_netrc", "machine passwords (Windows)"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL client passwords"),
    (".npmrc", "npm registry tokens"),
    (".pypirc", "PyPI upload tokens"),
    (".htpasswd", "web server password hashes"),
    (".vault-token", "HashiCorp Vault tokens"),
    (".docker/config.json", "container registry logins"),
    (".dockercfg", "container registry logins"),
    ("kubeconfig*", "Kubernetes cluster credentials"),
    ("*.kubeconfig", "Kubernetes cluster credentials"),
    (".kube/config", "Kubernetes cluster credentials"),
    ("*.tfstate", "Terraform state (every managed resource's secrets)"),
    ("*.tfstate.backup", "Terraform state backups"),
    ("secrets.yaml", "secrets files"),
    ("secrets.yml", "secrets files"),
    ("secrets.json", "secrets files"),
    ("secrets.toml", "secrets files (Streamlit, ...)"),
)
# Templates that document which variables exist, without values: useful, and safe to index.
SECRET_ALLOWED = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
_NAME_RE = re.compile(
    "|".join(fnmatch.translate(p) for p, _ in SECRET_FILES if "/" not in p), re.DOTALL
)
# Patterns with folders, one expression per number of path parts, matched against that many
# trailing parts joined (a wildcard cannot take a slash there: each literal slash needs one).
_PATH_RES = {
    n: re.compile("|".join(fnmatch.translate(p) for p, _ in SECRET_FILES if p.count("/") == n - 1))
    for n in {p.count("/") + 1 for p, _ in SECRET_FILES if "/" in p}
}


def is_secret_path(path: str) -> bool:
    """Whether the file's name (or the folders just above it) marks it as holding
    credentials, wherever it sits."""
    parts = path.replace("\\", "/").rstrip("/").lower().split("/")
    name = parts[-1]
    if name in SECRET_ALLOWED:
        return False
    if _NAME_RE.match(name) is not None:
        return True
    for n, rx in _PATH_RES.items():
        if len(parts) >= n and rx.match("/".join(parts[-n:])) is not None:
            return True
    return False


# --------------------------------------------------------------------------- the detector

REDACTED = "[redacted]"
# Bumped whenever the detector finds something it did not before: the index stores the spans,
# so a new version re-reads every file (see ``index/indexer.py``, the chunking key).
DETECTOR_VERSION = "2"

Span = tuple[int, int]  # character offsets [start, end) in the scanned text
LineSpan = tuple[int, int, int, int]  # (first line, column, last line, end column), 1-based lines

# Masking inside indexed code must not touch ordinary code: no generic "long hex/base64" rule
# (hashes, test vectors and fixtures are common) and no bare ``token x`` rule; only shapes that
# are credentials on their own, and values given to a credential-named key.
# Each shape is found by the literal text it starts with (``str.find``, which is fast), then
# matched there: an index pass scans every file with all of them, and most text holds none.
# (literals, pattern matched where one starts, part hidden: 0 the match, "v" that group)
_TOKEN_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "sk-")
_TOKEN_PREFIXES += ("sk_live_", "rk_live_", "pk_live_")
_SHAPES: list[tuple[tuple[str, ...], re.Pattern[str], int | str]] = [
    (
        ("-----BEGIN ",),
        # To the END line, or to the end of the text when it has none: a key cut short is
        # still a key.
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
        0,
    ),
    (("AKIA", "ASIA"), re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0),  # AWS access key ids
    (
        # GitHub, GitLab, Slack, OpenAI, Stripe.
        _TOKEN_PREFIXES,
        re.compile(
            r"(?:ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|sk-|sk_live_|rk_live_"
            r"|pk_live_)[A-Za-z0-9_\-]{16,}"
        ),
        0,
    ),
    (("AIza",), re.compile(r"AIza[0-9A-Za-z_\-]{35}\b"), 0),  # Google API keys
    (("eyJ",), re.compile(r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"), 0),  # JWTs
    (("bearer", "Bearer", "BEARER"), re.compile(r"(?i:bearer)\s+[A-Za-z0-9\-._~+/]{16,}=*"), 0),
    # Incoming webhooks: the URL is the credential.
    (("hooks.slack.com/",), re.compile(r"hooks\.slack\.com/(?P<v>[A-Za-z0-9_/\-]{8,})"), "v"),
    (("/api/webhooks/",), re.compile(r"/api/webhooks/(?P<v>\d+/[\w\-]{16,})"), "v"),
    (("://",), re.compile(r"://[^/\s:@'\"]+:(?P<v>[^/\s@'\"]+)@"), "v"),  # user:password@
    (
        ("authorization", "Authorization", "AUTHORIZATION"),
        re.compile(
            r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?"
            r"(?:(?i:basic|bearer|token|digest|negotiate|apikey)\s+)?(?P<v>[^\s\"',;]{6,})"
        ),
        "v",
    ),
    (("-u ", "--user"), re.compile(r"(?:-u|--user)[ =]?[\"']?[^\s:\"']+:(?P<v>[^\s\"']+)"), "v"),
    (("basic", "Basic", "BASIC"), re.compile(r"(?i:basic)\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})"), "v"),
]
# A shape hidden whole must start a word (a token inside ``disk_...`` or ``task-...`` is no
# token).
_AFTER_SPACE = frozenset({"-u ", "--user"})  # a command-line option starts after a space

# A key is credential-named when one of its words (split at _ . - and camelCase) is one of
# these, or two adjacent words make one of the pairs; unless its last word says the value
# only describes the credential (``password_file``, ``token_url``, ``secret_name``).
_CREDENTIAL_WORDS = frozenset(
    {
        "password", "passwd", "passwort", "pwd", "pw", "pass", "passphrase", "secret",
        "token", "apikey", "auth", "authorization", "credential", "credentials", "cred",
        "creds", "privatekey", "accesskey", "secretkey",
    }
)  # fmt: skip
_KEY_PAIRS = frozenset(
    {
        ("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
        ("signing", "key"), ("encryption", "key"), ("master", "key"), ("client", "key"),
        ("app", "key"), ("auth", "key"), ("session", "key"), ("license", "key"),
    }
)  # fmt: skip
_META_WORDS = frozenset(
    {
        "file", "path", "dir", "url", "uri", "name", "type", "length", "len", "ttl", "expiry",
        "expires", "timeout", "env", "var", "header", "field", "policy", "id", "count", "min",
        "max", "regex", "pattern", "prefix", "label", "prompt", "message", "format", "mode",
        "kind", "endpoint", "hash", "required", "enabled",
    }
)  # fmt: skip
_HINTS = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred")
_WORDS_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def credential_name(key: str) -> bool:
    """Whether a key (variable, field, setting) names a credential: ``dbPass``,
    ``DB_PASSWORD``, ``client_secret``, ``apiKey``, ``auth``; not ``bypass``, ``author``,
    ``token_url``."""
    words = [w.lower() for w in _WORDS_RE.findall(key)]
    if not words or words[-1] in _META_WORDS:
        return False
    if any(w in _CREDENTIAL_WORDS for w in words):
        return True
    return any(pair in _KEY_PAIRS for pair in itertools.pairwise(words))


# What follows a credential-named key (matched where the key ends):
# = "literal", : 'literal', "name": "literal", := "literal", => 'literal', and a typed
# declaration (``password: str = "..."``). The value holds no whitespace.
_QUOTED = re.compile(
    r"[\"']?(?:\s*:\s*[A-Za-z_][\w\[\], .|]*?)?\s*(?::=|=>|=|:)\s*"
    r"(?P<q>[\"'`])(?P<v>[^\"'`\s]+)(?P=q)"
)
# KEY=value in any file: shell, Dockerfiles, compose files, CI YAML (``export DB_PASSWORD=x``).
_ENV = re.compile(r"=(?P<v>[^\s\"'`;|&()\[\]{}<>]+)(?=[\s;|&]|$)", re.M)
_UPPER_KEY = re.compile(r"[A-Z][A-Z0-9_]*")
# In a settings file, a key at the start of a line: its value is the rest of the line.
_LINE_START = re.compile(r"[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?[\"']?")
_CONFIG_VALUE = re.compile(r"[\"']?[ \t]*[:=][ \t]*(?P<v>[^\n]*)")
# Queries: key=value / key: value anywhere, and "password hunter2".
_LOOSE = re.compile(r"[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[^\s\"',;]+)")
_SPOKEN = re.compile(
    r"(?i)(?<![a-z0-9])(?P<k>password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)"
    r"\s+(?P<v>[^\s\"',;]+)"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# Query-only: long hex or base64 runs (in code they are hashes and fixtures; in a query they
# are more likely keys).
_LONG_RUN = re.compile(r"\b[A-Fa-f0-9]{32,}\b|(?<![\w+/])[A-Za-z0-9+/]{40,}={0,2}")

_TEMPLATE = re.compile(r"[${}<>%]|^\*+$|^x+$|^\.+$|^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")
_NOT_SECRETS = frozenset(
    {"true", "false", "yes", "no", "on", "off", "null", "none", "nil", "~", "''", '""'}
    | {"basic", "bearer", "digest", "negotiate"}  # an Authorization scheme, not its value
)
# Files whose lines are settings, where a credential's value is often unquoted.
CONFIG_EXTENSIONS = frozenset(
    {
        "yaml", "yml", "ini", "cfg", "conf", "cnf", "properties", "toml", "env", "envrc",
        "tfvars", "hcl", "sh", "bash", "zsh", "example", "sample", "template", "dist",
    }
)  # fmt: skip


def config_like(path: str) -> bool:
    """Whether ``path`` is a settings file (its unquoted values are treated as data)."""
    name = path.rsplit("/", 1)[-1].lower()
    return name.rsplit(".", 1)[-1] in CONFIG_EXTENSIONS or name in ("dockerfile", "makefile")


def _quoted_value(value: str) -> bool:
    """A quoted value given to a credential-named key in code hides a secret unless it is a
    word, an environment variable's name, a template or a filler."""
    return len(value) >= 6 and not value.replace("_", "").isalpha() and not _TEMPLATE.search(value)


def _bare_value(value: str) -> bool:
    """An unquoted value in a settings file or a query: anything but a template, a keyword
    (true, none, ...) or an environment variable's name."""
    return (
        len(value) >= 3
        and value.lower() not in _NOT_SECRETS
        and not _TEMPLATE.search(value)
        and value[0] not in "[{|>&*!"
    )


def _inside_word(text: str, at: int) -> bool:
    return at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_")


def _config_value(text: str, m: re.Match[str]) -> Span | None:
    """The span of a settings line's value, without quotes and a trailing comment."""
    start, raw = m.start("v"), m.group("v")
    comment = re.search(r"\s[#;]", raw)
    if comment:
        raw = raw[: comment.start()]
    stripped = raw.rstrip()
    lead = len(stripped) - len(stripped.lstrip())
    value = stripped.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value, lead = value[1:-1], lead + 1
    if not _bare_value(value):
        return None
    return start + lead, start + lead + len(value)


def secret_spans(text: str, config: bool = False, strict: bool = False) -> list[Span]:
    """Where ``text`` holds credentials, as merged character spans. ``config``: the text is a
    settings file (unquoted values after a credential-named key at a line's start are
    secrets). ``strict``: the text is a query, kept in a log: values after a credential word
    anywhere, and long hex or base64 runs, are hidden too."""
    if not text:
        return []
    spans: list[Span] = []
    for literals, pattern, part in _SHAPES:
        for at in _found(text, literals):
            if part == 0 and _inside_word(text, at):
                continue
            if literals[0] in _AFTER_SPACE and at and not text[at - 1].isspace():
                continue
            m = pattern.match(text, at)
            if m is None or (literals[0].lower() == "basic" and not _basic_credentials(m["v"])):
                continue
            spans.append(m.span(part))
    for start, end in _credential_keys(text):
        spans.extend(_values_of(text, start, end, config, strict))
    if strict:
        spans.extend(m.span("v") for m in _SPOKEN.finditer(text) if _bare_value(m["v"]))
        spans.extend(m.span() for m in _LONG_RUN.finditer(text) if _random_looking(m.group()))
    return merge_spans(spans)


def _found(text: str, literals: Sequence[str]) -> Iterable[int]:
    for literal in literals:
        at = text.find(literal)
        while at >= 0:
            yield at
            at = text.find(literal, at + 1)


def _credential_keys(text: str) -> Iterable[Span]:
    """Each credential-named key in ``text`` (found from the words such names hold)."""
    lower = text.lower()
    seen: set[int] = set()
    n = len(text)
    for hint in _HINTS:
        at = lower.find(hint)
        while at >= 0:
            start, end = at, at + len(hint)
            while start > 0 and text[start - 1] in _KEY_CHARS:
                start -= 1
            while end < n and text[end] in _KEY_CHARS:
                end += 1
            while start < end and text[start] in ".-":
                start += 1
            if start not in seen:
                seen.add(start)
                if credential_name(text[start:end]):
                    yield start, end
            at = lower.find(hint, end)


def _values_of(text: str, start: int, end: int, config: bool, strict: bool) -> list[Span]:
    """The value given to the credential-named key at ``start:end``."""
    out: list[Span] = []
    m = _QUOTED.match(text, end)
    if m is not None and _quoted_value(m["v"]):
        out.append(m.span("v"))
    if text.startswith("=", end) and _UPPER_KEY.fullmatch(text, start, end):
        before = text[start - 1] if start else " "
        m = _ENV.match(text, end)
        if m is not None and not (before.isalnum() or before in "_$.") and _bare_value(m["v"]):
            out.append(m.span("v"))
    if config:
        line = text.rfind("\n", 0, start) + 1
        lead = _LINE_START.match(text, line)
        m = _CONFIG_VALUE.match(text, end)
        if lead is not None and lead.end() == start and m is not None:
            span = _config_value(text, m)
            if span is not None:
                out.append(span)
    if strict:
        m = _LOOSE.match(text, end)
        if m is not None and _bare_value(m["v"]):
            out.append(m.span("v"))
    return out


def _random_looking(run: str) -> bool:
    """A long run that reads as a key (hex, or base64 mixing cases and digits), not a path."""
    if re.fullmatch(r"[A-Fa-f0-9]+", run) or run.endswith("="):
        return True
    return any(c.isdigit() for c in run) and run.lower() != run and run.upper() != run


def _basic_credentials(value: str) -> bool:
    """``Basic`` followed by base64 of ``user:password``."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        plain = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in plain and plain.isprintable()


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def apply_spans(text: str, spans: Sequence[Span]) -> str:
    """``text`` with each span replaced by :data:`REDACTED`, keeping its line breaks, so line
    numbers still cite the right lines."""
    out, done = [], 0
    for start, end in merge_spans(spans):
        out.append(text[done:start])
        out.append(REDACTED + "\n" * text.count("\n", start, end))
        done = end
    out.append(text[done:])
    return "".join(out)


def redact(text: str) -> str:
    """What the request log keeps of a query: the detector in its strict form."""
    return apply_spans(text, secret_spans(text, strict=True))


# --------------------------------------------------------------------------- spans per chunk


def file_line_spans(lines: Sequence[str], config: bool) -> list[LineSpan]:
    """The credentials of a whole file (its lines as the chunker splits them), in file
    coordinates: scanned once, so a window holding only the middle of a key knows it.
    ``config``: a settings file (:func:`config_like`)."""
    text = "\n".join(lines)
    spans = secret_spans(text, config=config)
    if not spans:
        return []
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out: list[LineSpan] = []
    for start, end in spans:
        a = bisect.bisect_right(starts, start) - 1
        b = bisect.bisect_right(starts, max(start, end - 1)) - 1
        out.append((a + 1, start - starts[a], b + 1, end - starts[b]))
    return out


def spans_in(spans: Sequence[LineSpan], first: int, last: int) -> tuple[LineSpan, ...]:
    """The spans that touch lines ``first``..``last`` (1-based, inclusive)."""
    return tuple(s for s in spans if s[0] <= last and s[2] >= first)


def text_line_spans(text: str, first_line: int, config: bool = False) -> tuple[LineSpan, ...]:
    """The credentials of ``text`` alone (a chunk that is not a slice of the file's lines),
    in the file coordinates of a text that starts at ``first_line``."""
    lines = text.split("\n")
    return tuple(
        (a + first_line - 1, c1, b + first_line - 1, c2)
        for a, c1, b, c2 in file_line_spans(lines, config)
    )


def shown(text: str, first_line: int, spans: Sequence[LineSpan]) -> str:
    """``text`` (lines ``first_line``.. of a file) with the file's secret spans hidden."""
    if not spans:
        return text
    lines = text.split("\n")
    last_line = first_line + len(lines) - 1
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    cut: list[Span] = []
    for a, c1, b, c2 in spans:
        if b < first_line or a > last_line:
            continue
        i, j = a - first_line, b - first_line
        start = 0 if i < 0 else starts[i] + min(c1, len(lines[i]))
        end = len(text) if b > last_line else starts[j] + min(c2, len(lines[j]))
        cut.append((start, end))
    return apply_spans(text, cut)
