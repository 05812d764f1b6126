"""Documented functions of the non-Python allowlisted sources, for ``mine.py``.

The cross-encoder first learnt from Python docstrings only; code in C, C++, PHP and Ruby
documents a function in a comment *before* it (``/** ... */``, ``///``, ``#``), in its own
syntax. These groups teach the model that layout. Functions are cut by the package's own
chunker (``code_evidence.index.chunk``, the grammar wheels), so training sees exactly the chunks
the index makes at run time: the leading doc comment attached, the qualified symbol
(``SessionGuard.user``, ``Rack.Utils.escape``).

Sources (``sources.json``): the C and C++ files of pinned sdists (numpy, pandas; their
vendored copies of other projects left out), and Debian packages of PHP and Ruby libraries
(MIT/BSD/Apache), fetched with ``apt-get download`` and checked against their sha256.
"""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

from code_evidence.config import IndexConfig
from code_evidence.index.chunk import chunk_file, detect_language
from mine import Function, check_pinned, summary_of

# Languages mined here; each must be one the chunker knows.
LANGUAGES = frozenset({"c", "cpp", "php", "ruby"})
# Folders of the numpy sdist that hold other projects' C/C++ (git submodules, f2c output).
VENDORED_C = (
    "highway",
    "x86-simd-sort",
    "pythoncapi-compat",
    "pocketfft",
    "lapack_lite",
    "random/src",
    "npysort/x86",
    "svml",
)
SKIP_DIRS = {"test", "tests", "spec", "specs", "example", "examples", "benchmarks", "doc", "docs"}
MAX_CODE_LINES = 60
_CFG = IndexConfig()


def fetch_debs(specs: list[dict], dest: Path) -> list[Path]:
    """``apt-get download`` each pinned package once; a sha256 mismatch is fatal."""
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in specs:
        path = dest / s["file"]
        if not path.exists():
            subprocess.run(
                ["apt-get", "download", "-qq", f"{s['name']}={s['version']}"], cwd=dest, check=True
            )
        paths.append(check_pinned(path, s))
    return paths


def _library_path(member: str) -> str | None:
    """The path a library's own repository would show: PHP below ``usr/share/php/``, a gem's
    files below its ``lib/``. Debian's own files (docs, packaging) are not code."""
    rel = member.lstrip("./")
    if rel.startswith("usr/share/php/"):
        return rel[len("usr/share/php/") :]
    if "/gems/" in rel:
        rest = rel.split("/gems/", 1)[1].split("/", 1)
        return rest[1] if len(rest) == 2 else None
    if rel.startswith("usr/lib/ruby/vendor_ruby/"):
        return "lib/" + rel[len("usr/lib/ruby/vendor_ruby/") :]
    return None


def deb_files(path: Path) -> Iterator[tuple[str, bytes]]:
    """(library path, bytes) of the package's files, read from its data archive."""
    cmd = ["dpkg-deb", "--fsys-tarfile", str(path)]
    data = subprocess.run(cmd, check=True, capture_output=True)
    with tarfile.open(fileobj=io.BytesIO(data.stdout)) as tar:
        for m in tar:
            rel = _library_path(m.name)
            if m.isfile() and rel and _wanted(rel):
                f = tar.extractfile(m)
                if f is not None:
                    yield rel, f.read()


def _wanted(rel: str) -> bool:
    parts = rel.split("/")
    return (
        detect_language(rel) in LANGUAGES
        and not any(p.lower() in SKIP_DIRS for p in parts[:-1])
        and not any(v in rel for v in VENDORED_C)
        and not any(v in p for p in parts[:-1] for v in ("vendor", "extern", "third_party"))
    )


def sdist_syntax_files(path: Path) -> Iterator[tuple[str, bytes]]:
    """The C/C++ files of an sdist, vendored and test folders left out."""
    with tarfile.open(path) as tar:
        for m in tar:
            rel = m.name.split("/", 1)[-1]
            if m.isfile() and _wanted(rel):
                f = tar.extractfile(m)
                if f is not None:
                    yield rel, f.read()


_COMMENT_START = {
    "c": ("/*", "//", "*"),
    "cpp": ("/*", "//", "*"),
    "php": ("/*", "//", "*", "#["),
    "ruby": ("#",),
}
_TAG = re.compile(r"^[@\\](?!code)\w+")
_MARKERS = re.compile(r"^(/\*+!?|\*+/?|///?!?|#+)\s?")


def split_doc(lines: list[str], lang: str) -> tuple[list[str], list[str]]:
    """(leading comment lines, the rest): the doc comment the chunker attached."""
    starts = _COMMENT_START[lang]
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith(starts)):
        if lines[i].strip().startswith("#[") and lang == "php":
            break  # a PHP attribute is code, not documentation
        i += 1
    return lines[:i], lines[i:]


def doc_summary(comment: list[str]) -> str | None:
    """The comment's first sentence: markers and tag lines (``@param``) dropped."""
    words: list[str] = []
    for line in comment:
        text = _MARKERS.sub("", line.strip()).rstrip("*/").strip()
        if _TAG.match(text):
            break
        if not text:
            if words:
                break
            continue
        words.append(text)
    return summary_of(" ".join(words)) if words else None


def doc_rest(comment: list[str]) -> list[str] | None:
    """The comment less its first paragraph (what ``doc_summary`` reads), or None when nothing
    but markers would be left: ``@param`` lines and later paragraphs stay."""
    seen_text = False
    for k, line in enumerate(comment):
        text = _MARKERS.sub("", line.strip()).rstrip("*/").strip()
        if text and not _TAG.match(text):
            seen_text = True
            continue
        if seen_text:
            left = comment[k:]
            if not any(_MARKERS.sub("", ln.strip()).rstrip("*/").strip() for ln in left):
                return None
            head = comment[0].lstrip()
            opener = (
                [comment[0][: len(comment[0]) - len(head)] + "/**"] if head.startswith("/*") else []
            )
            return opener + left
    return None


_PARAM = re.compile(r"\$?([A-Za-z_]\w*)\s*(?:=[^,)]*)?\s*$")


def params_of(code: list[str]) -> list[str]:
    """Parameter names from the signature: the last name of each comma-separated piece."""
    sig = " ".join(code[:4])
    if "(" not in sig:
        return []
    inner = sig.split("(", 1)[1].split(")", 1)[0]
    out = []
    for piece in inner.split(","):
        m = _PARAM.search(piece.strip())
        if m and m.group(1) not in ("void", "self", "this"):
            out.append(m.group(1))
    return out


def _dedent(lines: list[str]) -> str:
    indent = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    return "\n".join(ln[indent:] for ln in lines[:MAX_CODE_LINES])


def functions_of(project: str, rel: str, data: bytes) -> Iterator[Function]:
    """The documented functions and methods of one file (undocumented ones too, as negatives
    and name queries), as the index would chunk them."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    lang = detect_language(rel, text)
    if lang not in LANGUAGES:
        return
    for ch in chunk_file(rel, text, _CFG):
        if ch.kind not in ("function", "method") or ch.is_test or not ch.symbol:
            continue
        lines = ch.text.splitlines()
        comment, code = split_doc(lines, lang)
        if len([ln for ln in code if ln.strip()]) < 3:
            continue
        summary = doc_summary(comment) if comment else None
        rest = doc_rest(comment)
        yield Function(
            project=project,
            path=rel,
            qualname=ch.symbol,
            name=ch.symbol.rsplit(".", 1)[-1],
            params=params_of(code),
            code=_dedent(lines),
            bare=_dedent(code) if comment else None,
            summary=summary,
            rest=_dedent(rest + code) if rest else None,
        )
