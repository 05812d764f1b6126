"""Which indexed files are build outputs or generated copies of other files.

A file's own path and first lines say whether it declares itself generated (``filekinds.py``);
this module decides what only the whole workspace can tell: a folder a manifest names as where
the build writes (``package.json`` ``main``/``module``/``exports``/``files``/``types``, a clean
script's ``rm -rf``, ``tsconfig.json`` ``outDir``), files ``.gitattributes`` marks
``linguist-generated``, bundles (a ``sourceMappingURL`` line, a bundler banner), Go files a
build constraint leaves out of a default build (``buildtags.py``), and *twins*: a
file whose content is a near copy of another tracked file with the same name, such as a Deno
or ESM mirror of ``src/``. Of two twins the copy is the one inside a build-output folder, else
the deeper one; twins at the same depth are both left alone (two versions kept side by side are
both source).

Ranking demotes what is found here (``generated`` tag; a Go variant: ``build-variant``, a milder
factor); ``include_generated = false`` does not
drop it, since a project may keep its only readable copy there. Everything read is untrusted:
manifests are parsed defensively and only paths inside the workspace count.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from ..filekinds import file_flags, is_build_output_path, is_declaration_path
from .buildtags import off_by_default
from .chunk.languages import EXT_LANG
from .jsonc import loads_jsonc

GENERATED_META = "generated_files"  # the store's meta key holding the last finding
# Reasons, as the ``generated`` tag's explanation says them.
BUILD_OUTPUT = "build output"
MANIFEST_OUTPUT = "build output named by a manifest"
LINGUIST = "linguist-generated"
BUNDLE = "bundle"
TWIN = "copy of"  # followed by the source's path
# A Go file its build constraint leaves out of a default build (``buildtags.py``): a variant
# of another file, not a build output, so ranking gives it a milder factor of its own.
BUILD_VARIANT = "left out of a default build"

# Twins: at least this many distinct meaningful lines, this share of them shared.
TWIN_MIN_LINES = 8
TWIN_MIN_SHARE = 0.85
# A name held by more files than this (index.ts in a monorepo) is not compared pairwise.
TWIN_MAX_GROUP = 40
_BUNDLE_HEAD = re.compile(
    r"(webpackBootstrap|/\*!?\s*rollup|esbuild|\bparcelRequire\b|__webpack_require__|"
    r"Bundled\s+(?:by|with)|generated\s+by\s+(?:rollup|webpack|esbuild|tsup|babel|tsc))",
    re.IGNORECASE,
)
_SOURCE_MAP = re.compile(r"^//[#@] sourceMappingURL=", re.MULTILINE)
_BUNDLE_EXTS = (".js", ".mjs", ".cjs")
# Lines that differ between a file and its copy by rewriting alone (import paths gain ".ts").
_IMPORT_LINE = re.compile(
    r"^(import\b|export\s+\*|export\s+\{[^}]*\}\s+from|from\b|use\b|#include)"
)
_CLEAN = re.compile(r"\b(?:rm\s+-r?f?r?|rimraf|del(?:-cli)?|shx\s+rm\s+-rf)\s+([^&|;]+)")
_OUT_FLAG = re.compile(r"--out(?:Dir|-dir|dir|File|-file)?[= ]\s*([^\s&|;]+)|\s-d\s+([^\s&|;]+)")


@dataclass(frozen=True, slots=True)
class GeneratedFiles:
    """Path -> why it counts as generated; ``source_of`` maps a twin copy to its source.
    ``sources``: the workspace holds code that is none of these (nor a test or a type
    declaration). Without any, a build output is the only copy there is (a published
    package's ``distribution/``): ranking has nothing to put above it and demotes nothing."""

    reasons: dict[str, str]
    source_of: dict[str, str]
    sources: bool = True

    def to_json(self) -> str:
        data = {"reasons": self.reasons, "source_of": self.source_of, "sources": self.sources}
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> GeneratedFiles:
        if not text:
            return cls({}, {})
        try:
            data = json.loads(text)
            return cls(
                dict(data.get("reasons", {})),
                dict(data.get("source_of", {})),
                data.get("sources", True) is not False,
            )
        except (ValueError, AttributeError, TypeError):
            return cls({}, {})


def _norm_dir(base: str, rel: str) -> str | None:
    """``rel`` (as a manifest writes it) against ``base``, or None if it leaves the workspace
    or names the workspace itself."""
    rel = rel.strip().strip("'\"")
    rel = rel.split("*", 1)[0].rstrip("/")
    if not rel or rel.startswith("/") or ":" in rel or "$" in rel:
        return None
    joined = posixpath.normpath(posixpath.join(base, rel))
    if joined in (".", "") or joined.startswith(".."):
        return None
    return joined


def _package_outputs(base: str, text: str) -> tuple[set[str], set[str]]:
    """Folders a ``package.json`` names as build output: the top folder of what ``main``,
    ``module``, ``types`` and ``exports`` point at and what ``files`` publishes; and, apart,
    the folders its scripts delete or write to (a build writes there, whatever the files)."""
    try:
        data = json.loads(text)
    except ValueError:
        return set(), set()
    if not isinstance(data, dict):
        return set(), set()
    targets: list[str] = []
    for key in ("main", "module", "types", "typings", "browser"):
        if isinstance(data.get(key), str):
            targets.append(data[key])

    def walk(node: object) -> None:
        if isinstance(node, str):
            targets.append(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(data.get("exports"))
    out: set[str] = set()
    for target in targets:
        parts = [p for p in target.split("/") if p not in ("", ".")]
        if len(parts) >= 2:  # "./lib/index.js": the folder "lib"; "index.js": no folder
            d = _norm_dir(base, parts[0])
            if d:
                out.add(d)
    files = data.get("files")
    if isinstance(files, list):
        for f in files:
            if isinstance(f, str) and "." not in posixpath.basename(f.rstrip("/*")):
                d = _norm_dir(base, f)
                if d:
                    out.add(d)
    written: set[str] = set()
    scripts = data.get("scripts")
    if isinstance(scripts, dict):
        for cmd in scripts.values():
            if not isinstance(cmd, str):
                continue
            for m in _CLEAN.finditer(cmd):
                for word in m.group(1).split():
                    if not word.startswith("-"):
                        d = _norm_dir(base, word)
                        if d:
                            written.add(d)
            for m in _OUT_FLAG.finditer(cmd):
                d = _norm_dir(base, m.group(1) or m.group(2) or "")
                if d:
                    written.add(d)
    return out, written


def _tsconfig_outputs(base: str, text: str) -> set[str]:
    data = loads_jsonc(text)
    opts = data.get("compilerOptions") if isinstance(data, dict) else None
    out: set[str] = set()
    if isinstance(opts, dict):
        for key in ("outDir", "declarationDir"):
            if isinstance(opts.get(key), str):
                d = _norm_dir(base, opts[key])
                if d:
                    out.add(d)
    return out


def _linguist(text: str, paths: Iterable[str]) -> set[str]:
    """Paths a root ``.gitattributes`` marks ``linguist-generated`` (or ``-vendored``)."""
    patterns: list[re.Pattern[str]] = []
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2 or words[0].startswith("#"):
            continue
        if not any(
            w in ("linguist-generated", "linguist-generated=true", "linguist-vendored")
            or w == "linguist-vendored=true"
            for w in words[1:]
        ):
            continue
        pat = words[0].lstrip("/")
        rx = re.escape(pat).replace(r"\*\*", ".*").replace(r"\*", "[^/]*").replace(r"\?", ".")
        anchored = "/" in pat.rstrip("/")
        rx = ("^" if anchored else "(^|.*/)") + rx + ("(/.*)?$")
        patterns.append(re.compile(rx))
    return {p for p in paths if any(rx.match(p) for rx in patterns)}


def _meaningful_lines(text: str) -> set[str]:
    out = set()
    for line in text.splitlines():
        s = line.strip()
        if len(s) > 3 and not _IMPORT_LINE.match(s) and not s.startswith(("//", "#", "*", "/*")):
            out.add(s)
    return out


def _inside(path: str, dirs: set[str]) -> bool:
    return any(path.startswith(d + "/") for d in dirs)


@dataclass(frozen=True, slots=True)
class PathFacts:
    """What the paths and manifests alone decide, kept by the relink between passes that
    change neither (a save of an existing file): the sorted paths, their path-decided reasons
    (:func:`_path_reasons`) and the code files by name (the twin groups). Each is a pass over
    every path, which a monorepo's save should not pay for."""

    known: list[str]
    known_set: frozenset[str]
    reasons: dict[str, str]
    by_name: dict[str, list[str]]


def path_facts(paths: Iterable[str], manifests: Mapping[str, str]) -> PathFacts:
    known = sorted(set(paths))
    by_name: dict[str, list[str]] = defaultdict(list)
    for p in known:
        name = posixpath.basename(p)
        if posixpath.splitext(name)[1] in _CODE_EXTS:
            by_name[name].append(p)
    return PathFacts(known, frozenset(known), _path_reasons(known, manifests), dict(by_name))


def find_generated(
    paths: Iterable[str],
    manifests: Mapping[str, str],
    text_of: Callable[[str], str | None],
    previous: GeneratedFiles | None = None,
    changed: Collection[str] = (),
    facts: PathFacts | None = None,
) -> GeneratedFiles:
    """Build outputs and twins among ``paths``. ``manifests``: the text of ``package.json``,
    ``tsconfig*.json`` and the root ``.gitattributes`` by path; ``text_of``: a file's indexed
    text (asked only for JavaScript and Go files and files sharing a name with another).

    ``previous``: the finding before ``changed`` (paths written or removed since, with the same
    manifests): then only what they can move is read again (their own text, the name groups
    they belong to, files whose path-decided reason changed) and the rest is carried over; the
    result equals a finding from scratch. ``facts``: :func:`path_facts` of these paths and
    manifests, when the caller kept them."""
    facts = facts or path_facts(paths, manifests)
    changed = set(changed)
    reasons = dict(facts.reasons)
    # What the last finding decided from paths and bundle heads, twins aside.
    before = None if previous is None else _untwinned(previous.reasons)
    if before is None:
        for p in facts.known:
            _read_reason(p, reasons, text_of)
    else:  # the others' texts are as they were: so is what was read from them
        for p, reason in before.items():
            if p in changed or p in reasons or p not in facts.known_set:
                continue
            if (reason == BUNDLE and p.endswith(_BUNDLE_EXTS)) or (
                reason == BUILD_VARIANT and p.endswith(".go")
            ):
                reasons[p] = reason
            else:  # its path decided last time, and no longer does: its text was never read
                _read_reason(p, reasons, text_of)
        for p in sorted(changed & facts.known_set):
            _read_reason(p, reasons, text_of)
    if previous is None or before is None:
        source_of = _twins(facts, reasons, text_of)
    else:
        moved = {p for p in before.keys() | reasons.keys() if before.get(p) != reasons.get(p)}
        redo = {posixpath.basename(p) for p in (*changed, *moved)}
        source_of = {
            c: s for c, s in previous.source_of.items() if posixpath.basename(c) not in redo
        }
        source_of.update(_twins(facts, reasons, text_of, only=redo))
    for copy, src in source_of.items():
        reasons.setdefault(copy, f"{TWIN} {src}")
    return GeneratedFiles(reasons, source_of, _has_sources(facts.known, reasons))


def _has_sources(known: list[str], reasons: Mapping[str, str]) -> bool:
    """Some file of a parsed language is neither generated, nor a test, nor a declaration."""
    return any(
        p not in reasons
        and posixpath.splitext(p)[1] in EXT_LANG
        and not is_declaration_path(p)
        and not file_flags(p, "")[0]
        for p in known
    )


def _read_reason(p: str, reasons: dict[str, str], text_of: Callable[[str], str | None]) -> None:
    """What a file's own text decides, where its path decided nothing: a bundle's head or
    source map, a Go build constraint that leaves it out of a default build."""
    if p in reasons:
        return
    if p.endswith(_BUNDLE_EXTS):
        text = text_of(p)
        if text and (_SOURCE_MAP.search(text[-2000:]) or _BUNDLE_HEAD.search(text[:600])):
            reasons[p] = BUNDLE
    elif p.endswith(".go"):
        text = text_of(p)
        if text and off_by_default(text):
            reasons[p] = BUILD_VARIANT


def _path_reasons(known: list[str], manifests: Mapping[str, str]) -> dict[str, str]:
    """What paths and manifests alone decide: linguist-generated, build-output folders, and
    folders a manifest names as where the build writes."""
    outputs: set[str] = set()  # named as what a package is (main, exports, files)
    written: set[str] = set()  # what its build writes (clean and build scripts, outDir)
    linguist: set[str] = set()
    for mpath, text in manifests.items():
        base = posixpath.dirname(mpath)
        name = posixpath.basename(mpath)
        if name == "package.json":
            named, by_scripts = _package_outputs(base, text)
            outputs |= named
            written |= by_scripts
        elif name.startswith("tsconfig") and name.endswith(".json"):
            written |= _tsconfig_outputs(base, text)
        elif mpath == ".gitattributes":
            linguist |= _linguist(text, known)
    # A named output that holds the sources too (a plain-JS package whose "main" is in lib/)
    # is the source: it counts only when most of its code has namesakes elsewhere. What is
    # named, not written, keeps its TypeScript sources (``_typescript_source``).
    outputs = {d for d in outputs if _sources_elsewhere(d, known, typescript=False)}
    written = {d for d in written if _sources_elsewhere(d, known, typescript=True)}
    reasons: dict[str, str] = {}
    for p in known:
        if p in linguist:
            reasons[p] = LINGUIST
        elif is_build_output_path(p):
            reasons[p] = BUILD_OUTPUT
        elif _inside(p, written) or (_inside(p, outputs) and not _typescript_source(p)):
            reasons[p] = MANIFEST_OUTPUT
    return reasons


_TS_SOURCE_EXTS = frozenset({".ts", ".tsx", ".mts", ".cts"})


def _typescript_source(path: str) -> bool:
    """TypeScript other than declarations: what a build reads, not what a package's ``main``
    or ``files`` name as its output. ``files`` lists what is published, sources included (rxjs
    publishes ``src``, whose ``Subject.ts`` has a namesake ``Subject.js`` in each of its four
    builds); a folder a script writes TypeScript into (zod's Deno mirror) is still output."""
    return posixpath.splitext(path)[1] in _TS_SOURCE_EXTS and not is_declaration_path(path)


def _untwinned(reasons: Mapping[str, str]) -> dict[str, str]:
    """A finding's reasons without the twins (a twin's reason is set only where no other is)."""
    return {p: r for p, r in reasons.items() if not r.startswith(TWIN + " ")}


_CODE_EXTS = frozenset(
    {".js", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".jsx", ".py", ".go", ".rs", ".java"}
)


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    for ext in (".d.ts", ".d.mts", ".d.cts"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return posixpath.splitext(name)[0]


def _sources_elsewhere(folder: str, known: list[str], typescript: bool) -> bool:
    """At least half of the code files in ``folder`` (its TypeScript sources only when
    ``typescript``) have a namesake (by stem) outside it that is neither a test nor a
    declaration: the folder is written from sources kept elsewhere."""
    inside = [
        _stem(p)
        for p in known
        if p.startswith(folder + "/")
        and posixpath.splitext(p)[1] in _CODE_EXTS
        and (typescript or not _typescript_source(p))
        and not file_flags(p, "")[0]
    ]
    if not inside:
        return False
    outside = {
        _stem(p)
        for p in known
        if not p.startswith(folder + "/")
        and posixpath.splitext(p)[1] in _CODE_EXTS
        and not is_declaration_path(p)
        and not file_flags(p, "")[0]
    }
    return sum(s in outside for s in inside) * 2 >= len(inside)


def _twins(
    facts: PathFacts,
    reasons: Mapping[str, str],
    text_of: Callable[[str], str | None],
    only: Collection[str] | None = None,
) -> dict[str, str]:
    """Copy -> source for near-identical files with the same name (only the names in
    ``only``, when given)."""
    if only is None:
        groups = facts.by_name
    else:
        groups = {name: facts.by_name[name] for name in sorted(only) if name in facts.by_name}
    out: dict[str, str] = {}
    for members in groups.values():
        if len(members) < 2 or len(members) > TWIN_MAX_GROUP:
            continue
        lines = {}
        for p in members:
            text = text_of(p)
            if text:
                got = _meaningful_lines(text)
                if len(got) >= TWIN_MIN_LINES:
                    lines[p] = got
        items = sorted(lines)
        for i, a in enumerate(items):
            for b in items[i + 1 :]:
                la, lb = lines[a], lines[b]
                share = len(la & lb) / max(len(la), len(lb))
                if share < TWIN_MIN_SHARE:
                    continue
                pair = _copy_and_source(a, b, reasons)
                if pair is not None and pair[0] not in out:
                    out[pair[0]] = pair[1]
    return out


def _copy_and_source(a: str, b: str, reasons: Mapping[str, str]) -> tuple[str, str] | None:
    """Which of two twins is the copy: the one already known as output, else the deeper one."""
    ga, gb = a in reasons, b in reasons
    if ga != gb:
        return (a, b) if ga else (b, a)
    if ga and gb:
        return None
    da, db = a.count("/"), b.count("/")
    if da == db:
        return None
    return (a, b) if da > db else (b, a)
