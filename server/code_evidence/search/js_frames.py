"""JavaScript frames: where a frame printed from a build lives in the sources, and which frame
of a V8 stack is where the code failed.

A library written in TypeScript is published compiled, so its users' traces name
``node_modules/rxjs/dist/cjs/internal/operators/elementAt.js`` or a single bundle
(``node_modules/mobx/dist/mobx.cjs.development.js``), while the library's repository holds
``src/internal/operators/elementAt.ts`` and no build. A project's own build does the same
(``/srv/app/dist/routes/users.js`` from ``src/routes/users.ts``). No printed path is then a
workspace path, and the printed line is the build's, not the source's: the frame is placed by
its module path (the build folders dropped, any source extension) and then by the function it
names, never by its line. Frames of another package (``node_modules/express/…`` in an app's
workspace) are not the workspace's: a ``node_modules`` frame is mapped only when the workspace
holds a ``package.json`` of that name.

V8 records a stack when the error object is made, not where it is thrown, so its innermost
frames are often the making of the error: an error class's constructor (``new
ArgumentOutOfRangeErrorImpl``, with whatever it calls: rxjs's ``_super``), a factory
(``createInvalidObservableTypeError``) or a function that only throws (TypeScript's ``:
never``: mobx's and immer's ``die``). The frame that called them decided to fail, and is put
first (``failing_first``).
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

from ..index.store import Store, StoredChunk

# Folders a JavaScript build writes to, dropped from the front of a package's module path
# (``dist/cjs/``, ``lib/esm/``); ``lib`` is also a source folder (ajv's TypeScript), which the
# source side allows.
BUILD_DIRS = frozenset(
    {
        *("dist", "build", "out", "lib", "esm", "cjs", "es", "es5", "es6", "es2015", "es2017"),
        *("es2020", "umd", "commonjs", "module", "modules", "node", "browser", "legacy"),
        *("bundle", "bundles", "compiled", "_esm", "_cjs"),
    }
)
# The folders a built file's own project keeps its build in (outside ``node_modules``).
_OWN_BUILD = frozenset({"dist", "build", "out"})
SOURCE_EXTS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
# Where sources live, best first: a candidate under one of these folders is preferred.
_SOURCE_ROOTS = ("src", "lib", "source")
_BUILT = re.compile(r"\.[cm]?js$")
_PACKAGE = re.compile(r"(?:^|/)node_modules/((?:@[^/]+/)?[^/]+)/(.+)$")
# The name a bundler gives a class it renamed (``Immer2``): the source's name has no digits.
_RENAMED = re.compile(r"(?<=[A-Za-z_$])\d+$")
MAX_MANIFESTS = 200  # package.json files read for the workspace's package names


@dataclass(frozen=True, slots=True)
class BuiltModule:
    """A printed build file read as a source module: ``package`` is the ``node_modules``
    package ("" for the workspace's own build), ``module`` the path the build was made from,
    without folders of the build or an extension (``internal/operators/elementAt``)."""

    package: str
    module: str


def built_module(printed: str) -> BuiltModule | None:
    """The module a printed ``.js`` path was built from, or None for a path no build wrote."""
    path = printed.replace("\\", "/")
    if not _BUILT.search(path):
        return None
    m = _PACKAGE.search(path)
    if m is not None:
        package, parts = m.group(1), m.group(2).split("/")
        while len(parts) > 1 and parts[0] in BUILD_DIRS:
            parts = parts[1:]
    else:
        folders = path.split("/")
        own = [i for i, f in enumerate(folders[:-1]) if f in _OWN_BUILD]
        if not own:
            return None
        package, parts = "", folders[own[-1] + 1 :]
    module = _BUILT.sub("", "/".join(parts))
    return BuiltModule(package, module) if module else None


def workspace_packages(store: Store) -> dict[str, str]:
    """The workspace's JavaScript packages by name: ``name`` -> the folder of its
    ``package.json`` ("" at the root). Read from the indexed manifests' first chunk."""
    out: dict[str, str] = {}
    for path in store.paths_ending("package.json", MAX_MANIFESTS):
        if "node_modules/" in path:
            continue
        chunks = store.chunks_of(path)
        m = re.search(r'"name"\s*:\s*("(?:[^"\\]|\\.)*")', chunks[0].chunk.text) if chunks else None
        if m is None:
            continue
        try:
            name = json.loads(m.group(1))
        except ValueError:
            continue
        if isinstance(name, str) and name:
            out.setdefault(name, posixpath.dirname(path))
    return out


def source_files(
    built: BuiltModule, paths: list[str], packages: dict[str, str], generated: set[str]
) -> list[str]:
    """The workspace sources ``built`` can have been made from, best first: same module path
    under a source folder (or the package's folder), any source extension; a generated copy
    or a file in a build folder is none. Empty when the package is not the workspace's."""
    if built.package and built.package not in packages:
        return []
    home = packages.get(built.package, "")
    ranked: list[tuple[tuple[int, int], str]] = []
    for p in paths:
        stem, ext = posixpath.splitext(p)
        if ext not in SOURCE_EXTS or p in generated or p.endswith(".d.ts"):
            continue
        if stem != built.module and not stem.endswith("/" + built.module):
            continue
        root = stem[: len(stem) - len(built.module)].rstrip("/")
        folders = root.split("/") if root else []
        if any(f in _OWN_BUILD or f == "node_modules" for f in folders):
            continue
        inside = not home or root == home or root.startswith(home + "/")
        last = folders[-1] if folders else ""
        if root != home and last not in _SOURCE_ROOTS:
            continue
        where = _SOURCE_ROOTS.index(last) if last in _SOURCE_ROOTS else len(_SOURCE_ROOTS)
        ranked.append(((0 if inside else 1, where), p))
    ranked.sort()
    return [p for key, p in ranked if key == ranked[0][0]] if ranked else []


def _called(function: str | None) -> tuple[str, str]:
    """(owner, name) of a frame's function: ``ZodObject.parse`` -> ("ZodObject", "parse"),
    ``Immer2.produce`` -> ("Immer", "produce"); ("", "") for anonymous code."""
    if not function or "<" in function:
        return "", ""
    owner, _, name = function.removeprefix("new ").rpartition(".")
    owner = _RENAMED.sub("", owner.rsplit(".", 1)[-1])
    return ("" if owner == "Object" else owner), name


def _spellings(name: str) -> list[str]:
    """The name as printed, then as the source may spell it: a bundler renames a function
    that clashes with another module's (``createSlice2``)."""
    bare = _RENAMED.sub("", name)
    return [name, bare] if bare != name else [name]


def named_chunk(
    chunks: list[StoredChunk], function: str | None, *, unique: bool = False
) -> StoredChunk | None:
    """The chunk among ``chunks`` (one file's, or the workspace's of that name) that defines
    the frame's function: its ``Owner.name`` (the class the method was called on may be a
    subclass: then any one ``name``, or with ``unique`` only the one, as in a bundle, where a
    name several modules define points nowhere), else the one chunk that declares the name
    inside (a local function: ``const _super = …``, a method of an object: ``code(cxt) {``).
    Anonymous code is placed only in a file that defines one thing. None when nothing, or too
    much, answers."""
    owner, name = _called(function)
    if not name:
        defined = [sc for sc in chunks if sc.chunk.symbol]
        return defined[0] if len(defined) == 1 else None
    for spelled in _spellings(name):
        same = [sc for sc in chunks if sc.name == spelled]
        exact = [sc for sc in same if owner and sc.chunk.symbol.endswith(f"{owner}.{spelled}")]
        if exact:
            return exact[0]
        if same:
            return same[0] if not unique or len(same) == 1 else None
    n = re.escape(name)
    declares = re.compile(
        rf"\bfunction\s*\*?\s*{n}\b"  # function name(…)
        rf"|\b{n}\s*=[^=]"  # const name = …
        rf"|^\s*(?:(?:static|async|get|set)\s+)*{n}\s*\([^)]*\)[^;{{]*\{{"  # name(…) {, get name(
        rf"|\b{n}\s*:\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)",  # name: () =>
        re.M,
    )
    inside = [sc for sc in chunks if declares.search(sc.chunk.text)]
    return inside[0] if len(inside) == 1 else None


_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})


class BuiltFrames:
    """Places the frames of build outputs for one question: the workspace's package names
    and generated files are read once, on the first frame that needs them."""

    def __init__(self, store: Store, paths: list[str]) -> None:
        self._store = store
        self._paths = paths
        self._packages: dict[str, str] | None = None
        self._generated: set[str] | None = None

    def chunk(self, printed: str, function: str | None) -> StoredChunk | None:
        """The source chunk a frame of a build (``printed``, calling ``function``) stands for:
        in the module's source file by the function's name, or, for a bundle (no file per
        module), the workspace's one definition of that name in the package's folder."""
        built = built_module(printed)
        if built is None:
            return None
        if self._packages is None:
            self._packages = workspace_packages(self._store)
            self._generated = set(self._store.generated_files().reasons)
        assert self._generated is not None
        if built.package and built.package not in self._packages:
            return None
        files = source_files(built, self._paths, self._packages, self._generated)
        if files:
            return named_chunk(self._store.chunks_of(files[0]), function)
        _, name = _called(function)
        home = self._packages.get(built.package, "")
        defined = [
            sc
            for sc in self._store.chunks_named(_spellings(name) if name else [])
            if sc.chunk.language in _JS_LANGUAGES
            and not (sc.chunk.is_test or sc.chunk.is_generated or sc.chunk.is_vendor)
            and sc.chunk.path not in self._generated
            and not sc.chunk.path.endswith(".d.ts")
            and (not home or sc.chunk.path.startswith(home + "/"))
        ]
        return named_chunk(defined, function, unique=True) if defined else None


_ERROR_CLASS = re.compile(r"(?:Error|Exception)(?:Impl)?$")
_FACTORY = re.compile(r"^(?:create|make|new|build)[A-Z_]\w*(?:Error|Exception)$")
_NEVER = re.compile(r"\)\s*:\s*never\s*$")
_NEVER_DOC = re.compile(r"@returns?\s*\{never\}")
_JS_PATH = re.compile(r"\.(?:[cm]?[jt]s|[jt]sx)$")
# How deep in a V8 stack the making of an error is looked for: the constructor and what it
# calls, or a factory and the constructor it calls.
_MAKING_DEPTH = 4


def _never_returns(name: str, sc: StoredChunk) -> bool:
    """The chunk declares ``name`` to return ``never`` (TypeScript), or its doc says so."""
    text = sc.chunk.text
    at = re.search(rf"\b{re.escape(name)}\s*[(<]", text)
    if at is None:
        return False
    body = text.find("{", at.end())
    signature = text[at.start() : body if body > 0 else len(text)]
    return bool(_NEVER.search(signature) or _NEVER_DOC.search(text[: at.start()]))


def makes_the_error(function: str | None, sc: StoredChunk) -> bool:
    """A V8 frame that only makes or throws the error: an error class's constructor, a
    ``create…Error`` factory, or a function declared to never return."""
    _, name = _called(function)
    if not name:
        return False
    if (function or "").startswith("new ") and _ERROR_CLASS.search(name):
        return True
    return bool(_FACTORY.match(name)) or (
        sc.chunk.language in _JS_LANGUAGES and _never_returns(name, sc)
    )


def failing_first(placed: list[tuple[str, str | None, StoredChunk]]) -> list[StoredChunk]:
    """The placed frames' chunks, innermost first, with the frame that decided to fail moved
    ahead of the V8 frames inside it that made the error (``placed``: each frame's printed
    path, its function and its chunk). A frame inside an error's constructor is its making
    too (rxjs's ``_super``)."""
    chunks = [sc for _, _, sc in placed]
    making = 0
    for i, (path, function, sc) in enumerate(placed[:_MAKING_DEPTH]):
        if not _JS_PATH.search(path):
            break
        if makes_the_error(function, sc):
            making = i + 1
    if making == 0 or making == len(chunks):
        return chunks
    return [chunks[making], *chunks[:making], *chunks[making + 1 :]]
