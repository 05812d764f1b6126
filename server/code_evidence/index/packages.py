"""Same-package neighbours: files that use each other without an import.

In Go a package is a directory and its files share one namespace; in Java the classes of one
package see each other by simple name. Neither writes an import for that, so the import graph
alone leaves a flat package without edges and the open file's neighbourhood empty. An edge
``a -> b`` is added when ``a`` names a top-level type or function that only ``b`` of its
package defines (a Go method counts for its receiver type, ``Context.JSON`` for ``Context``).
Names defined in several files of the package say nothing about which one is meant, and
test files take no part (a test names everything it tests; Go keeps tests beside the code).
Rust's counterpart: an ``impl`` block links to the file of its type and trait in one crate.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from ..filekinds import file_flags

PACKAGE_DIR_LANGUAGES = frozenset({"go", "java"})
_IDENT = re.compile(r"\b[A-Za-z_]\w{2,}\b")
# A package larger than this is compared by its largest files only: edges are for ranking,
# and a thousand-file package would cost more than its neighbours are worth.
MAX_PACKAGE_FILES = 400


def same_package_edges(
    languages: Mapping[str, str | None],
    chunks_of: Callable[[str], Iterable[tuple[str, str]]],
) -> list[tuple[str, str]]:
    """``languages``: path -> language of every indexed file; ``chunks_of(path)``: its chunks
    as ``(symbol, text)``. Returns ``(user, definer)`` pairs inside one package directory."""
    packages: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, lang in languages.items():
        if lang in PACKAGE_DIR_LANGUAGES:
            packages[(posixpath.dirname(path), lang)].append(path)
    edges: list[tuple[str, str]] = []
    for (_, lang), members in sorted(packages.items()):
        if len(members) < 2:
            continue
        members = sorted(members)[:MAX_PACKAGE_FILES]
        defined: dict[str, set[str]] = defaultdict(set)  # name -> files defining it
        words: dict[str, set[str]] = {}
        for path in members:
            texts = []
            for symbol, text in chunks_of(path):
                texts.append(text)
                top = symbol.split(".", 1)[0] if symbol else ""
                if top and not file_flags(path, "")[0]:
                    defined[top].add(path)
            words[path] = set(_IDENT.findall("\n".join(texts)))
        if lang == "java":  # a class is its file's name, whatever the chunker called it
            for path in members:
                if not file_flags(path, "")[0]:
                    defined[posixpath.splitext(posixpath.basename(path))[0]].add(path)
        unique = {name: next(iter(files)) for name, files in defined.items() if len(files) == 1}
        for path in members:
            if file_flags(path, "")[0]:
                continue  # a test uses everything it tests: that says nothing about neighbours
            targets = {unique[w] for w in words[path] if w in unique} - {path}
            edges.extend((path, t) for t in sorted(targets))
    return edges + rust_impl_edges(languages, chunks_of)


# Rust: ``impl Buf for Take<T> {`` — the trait (optional) and the type, generics removed.
_RUST_IMPL = re.compile(r"^\s*(?:unsafe\s+)?impl\b([^{;]*)\{", re.M)
_RUST_TYPE = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|union|trait|type)\s+([A-Za-z_]\w*)", re.M
)
_GENERICS = re.compile(r"<[^<>]*>")


def _impl_names(header: str) -> list[str]:
    """The trait and the type an ``impl`` header names (last path segments), generics gone."""
    text = header
    while True:
        stripped = _GENERICS.sub("", text)
        if stripped == text:
            break
        text = stripped
    text = re.sub(r"\bwhere\b.*", "", text, flags=re.S)
    parts = re.split(r"\s+for\s+", text.strip(), maxsplit=1)
    names = []
    for part in parts:
        m = re.search(r"([A-Za-z_]\w*)\s*$", part.strip().lstrip("&!").removeprefix("mut "))
        if m:
            names.append(m.group(1))
    return names


def _crate_of(path: str) -> str:
    """The crate a Rust file belongs to: the folder above its ``src/`` (the workspace root for
    files outside one); ``impl`` blocks live in the crate of their type or trait."""
    parts = path.split("/")
    return "/".join(parts[: parts.index("src")]) if "src" in parts[:-1] else ""


def rust_impl_edges(
    languages: Mapping[str, str | None],
    chunks_of: Callable[[str], Iterable[tuple[str, str]]],
) -> list[tuple[str, str]]:
    """``(impl file, type file)`` pairs: an ``impl`` block of a type or trait in another file
    of the same crate than the one defining it (``impl Buf for Take`` in ``take.rs`` links to
    the files defining ``Buf`` and ``Take``). ``use`` lines link many of them already, but a
    type's methods spread over files (and trait impls reached through the prelude) need not
    import the definition. Names defined in several files of a crate say nothing; tests take
    no part."""
    crates: dict[str, list[str]] = defaultdict(list)
    for path, lang in languages.items():
        if lang == "rust" and not file_flags(path, "")[0]:
            crates[_crate_of(path)].append(path)
    edges: list[tuple[str, str]] = []
    for _, members in sorted(crates.items()):
        if len(members) < 2:
            continue
        defined: dict[str, set[str]] = defaultdict(set)
        implemented: dict[str, set[str]] = defaultdict(set)  # path -> names it implements for
        for path in sorted(members)[:MAX_PACKAGE_FILES]:
            for _, text in chunks_of(path):
                for m in _RUST_TYPE.finditer(text):
                    defined[m.group(1)].add(path)
                for m in _RUST_IMPL.finditer(text):
                    implemented[path].update(_impl_names(m.group(1)))
        unique = {name: next(iter(files)) for name, files in defined.items() if len(files) == 1}
        for path, names in sorted(implemented.items()):
            targets = {unique[n] for n in names if n in unique} - {path}
            edges.extend((path, t) for t in sorted(targets))
    return edges
