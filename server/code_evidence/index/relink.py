"""Links between files that only the whole workspace decides, after a pass changed files:
import edges (``imports.py``), same-package edges of Go and Java (``packages.py``), build
outputs and twins (``generated.py``).

A full relink reads the chunks of every file in a Go or Java package and of every code file
sharing its name with another: hundreds of files on Django, all of a monorepo with copies. A
pass that wrote or removed a few files relinks only what they can move, and the result equals
a full relink (``tests/test_relink.py`` checks both, counting the files read):

- import edges of the files written; of every file when the file set changed (a new file can
  be what another's import means) or a file's declared namespace did (``namespaces.py`` looks
  them up). Resolution reads file rows, never chunks;
- same-package edges of the packages (folders) the changed files are in, and Rust's impl
  edges of their crates, kept in their own table (``package_edges``) so the others are
  carried over unread;
- the build-output and twin finding for the changed files' name groups (``find_generated``
  with the last finding).

A full relink runs when the last one was lost (``resolution`` unset: a pass killed between its
text and its links), when a manifest or ``.gitattributes`` changed (they decide where modules
live and what is build output), when every file was re-chunked, and when the resolution
version moved.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..config import Config
from .chunk.syntax import DECLARES
from .generated import GENERATED_META, PathFacts, find_generated, path_facts
from .imports import ImportResolver, is_manifest
from .load import SkipFile, load_text
from .packages import PACKAGE_DIR_LANGUAGES, _crate_of, same_package_edges
from .store import Store, StoredChunk

# Bumped when resolution or the build-output finding changes: the next pass relinks, fully.
# 3: resolution of issue 17's languages; 4: same-package edges kept apart (package_edges), so a
# pass can relink only what it moved; 5: Go files left out of a default build (buildtags.py);
# 6: TypeScript sources are never a manifest's build output (generated.py); 7: whether the
# workspace has any source besides its build outputs (GeneratedFiles.sources).
RESOLUTION_VERSION = "7"

EPOCH_META = "links_epoch"  # the state the last resolver was built for (Linker)
CACHED_FILES = 2048  # files whose chunks a relink keeps at once (same-package edges, twins)
_DDL = (
    "CREATE TABLE IF NOT EXISTS package_edges (src TEXT NOT NULL, dst TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS package_src ON package_edges(src)",
)


@dataclass(frozen=True, slots=True)
class LinkChange:
    """What one pass changed, for a relink of only that: ``written`` maps each file the pass
    wrote to its import specifiers before (None: the file is new), ``removed`` the files it
    took out of the index."""

    written: Mapping[str, Sequence[str] | None]
    removed: frozenset[str]


@dataclass(frozen=True, slots=True)
class Relinked:
    """What a relink did: ``full`` or only what a change moved; ``chunks_read``: files whose
    chunks it read."""

    full: bool
    chunks_read: int


def needs_full(change: LinkChange | None) -> bool:
    """Whether only a full relink can say what ``change`` moved."""
    if change is None:
        return True
    return any(_decides_links(p) for p in (*change.written, *change.removed))


def _decides_links(path: str) -> bool:
    return is_manifest(path) or path == ".gitattributes"


class Linker:
    """Relinks one store. Keeps the import resolver of its last relink (about 0.4 KB a file)
    while the file set, the manifests and the declared namespaces stay as they were: building
    it walks every path, and a save changes none of that. The store's ``links_epoch`` names
    the state a resolver was built for, so a pass run by another process invalidates it."""

    def __init__(self) -> None:
        self._resolver: tuple[str, ImportResolver] | None = None
        # The file set's languages, the manifests and what they decide by path, for the same
        # epoch as the resolver: each is a pass over every path (and the manifests a read of
        # each from disk), and a save of an existing file that is no manifest changes none.
        self._paths: tuple[str, _PathState] | None = None

    def relink(
        self, store: Store, workspace: Path, cfg: Config, change: LinkChange | None = None
    ) -> Relinked:
        """Within the caller's transaction: bring import edges, same-package edges and the
        generated finding up to date, for ``change`` only when that is enough
        (:func:`needs_full`), and mark the links current (``resolution``)."""
        for ddl in _DDL:
            store.db.execute(ddl)
        full = needs_full(change)
        paths = self._path_state(store, workspace, cfg, change, full)
        languages, manifests = paths.languages, paths.manifests
        # Same-package edges and twins read the same files: the last few thousand are kept
        # (all of them were, and a monorepo of copies is all namesakes: the whole index).
        read: set[str] = set()

        @lru_cache(maxsize=CACHED_FILES)
        def chunks_of(path: str) -> list[StoredChunk]:
            read.add(path)
            return store.chunks_of(path)

        # Same-package edges: of every package, or of the folders the change touched.
        changed = set() if change is None else {*change.written, *change.removed}
        dirs = None if full else {posixpath.dirname(p) for p in changed}
        # Rust's impl edges are per crate, not per folder: a changed crate is redone whole.
        crates = None if full else {_crate_of(p) for p in changed if p.endswith(".rs")}
        if dirs is not None and not crates:  # the changed folders' files, looked up
            scope = {p: languages[p] for d in sorted(dirs) for p in paths.by_dir.get(d, ())}
        else:
            scope = {
                p: lang
                for p, lang in languages.items()
                if dirs is None
                or posixpath.dirname(p) in dirs
                or (lang == "rust" and crates and _crate_of(p) in crates)
            }
        pkg_edges = same_package_edges(
            scope, lambda p: [(sc.chunk.symbol, sc.chunk.text) for sc in chunks_of(p)]
        )
        _replace_edges(store, "package_edges", None if full else {*scope, *changed}, pkg_edges)

        # Import edges (with the package edges in the same table): every file's, or those of
        # the written files and of the package members whose package edges were redone.
        if full or change is None or change.removed or _set_or_namespaces_moved(store, change):
            rows = store.files()
            resolver = ImportResolver(rows, {p: r.imports for p, r in rows.items()}, manifests)
            self._keep(store, resolver)
            srcs: set[str] | None = None
        else:
            srcs = set(change.written) | {
                p for p, lang in scope.items() if lang in PACKAGE_DIR_LANGUAGES or lang == "rust"
            }
            rows = {p: r for p in sorted(srcs) if (r := store.file_row(p)) is not None}
            kept = self._resolver
            if kept is not None and kept[0] == store.get_meta(EPOCH_META):
                resolver = kept[1]
            else:
                resolver = ImportResolver(languages, _declaring(store), manifests)
                self._keep(store, resolver)
        edges: list[tuple[str, str]] = []
        for path, row in rows.items():
            if row.language and row.imports:
                edges.extend((path, d) for d in resolver.resolve(path, row.language, row.imports))
        edges.extend(_package_edges_from(store, srcs))
        _replace_edges(store, "import_edges", srcs, dict.fromkeys(edges))

        # Build outputs and twins: from scratch, or from the last finding for what changed.
        previous = None if full else store.generated_files()
        found = find_generated(
            languages,
            manifests,
            lambda p: "\n".join(sc.chunk.text for sc in chunks_of(p)),
            previous=previous,
            changed=changed,
            facts=paths.facts,
        )
        store.set_meta({GENERATED_META: found.to_json(), "resolution": RESOLUTION_VERSION})
        epoch = store.get_meta(EPOCH_META)
        self._paths = (epoch, paths) if epoch is not None else None
        return Relinked(full, len(read))

    def _path_state(
        self,
        store: Store,
        workspace: Path,
        cfg: Config,
        change: LinkChange | None,
        full: bool,
    ) -> _PathState:
        """The kept state when this relink's change leaves the file set and the manifests as
        they were and no other process relinked since (the epoch); else read afresh."""
        kept = self._paths
        same_files = (
            change is not None
            and not full
            and not change.removed
            and all(before is not None for before in change.written.values())
        )
        if same_files and kept is not None and kept[0] == store.get_meta(EPOCH_META):
            state = kept[1]
            now = {p: row.language for p in change.written if (row := store.file_row(p))}
            if any(state.languages.get(p) != lang for p, lang in now.items()):
                state = dataclasses.replace(state, languages={**state.languages, **now})
            return state
        languages: dict[str, str | None] = dict(
            store.db.execute("SELECT path, language FROM files")
        )
        manifests = _manifests(workspace, cfg, languages)
        by_dir: dict[str, list[str]] = {}
        for p in languages:
            by_dir.setdefault(p.rpartition("/")[0], []).append(p)
        return _PathState(languages, manifests, by_dir, path_facts(languages, manifests))

    def _keep(self, store: Store, resolver: ImportResolver) -> None:
        epoch = uuid.uuid4().hex
        store.set_meta({EPOCH_META: epoch})
        self._resolver = (epoch, resolver)


@dataclass(frozen=True, slots=True)
class _PathState:
    """Every indexed path's language, the manifests' texts, the paths by folder and what
    paths and manifests decide of build outputs (``generated.PathFacts``)."""

    languages: dict[str, str | None]
    manifests: dict[str, str]
    by_dir: dict[str, list[str]]
    facts: PathFacts


def _manifests(workspace: Path, cfg: Config, paths: Iterable[str]) -> dict[str, str]:
    """The manifests among the indexed files, read from disk: they decide where modules live
    (composer.json, Package.swift, go.mod, package.json, tsconfig, Cargo.toml) and what is
    build output. Only files the scan listed: an excluded or secret file is never read."""
    out: dict[str, str] = {}
    for path in paths:
        if _decides_links(path):
            try:
                out[path] = load_text(workspace, path, cfg.index).text
            except (SkipFile, OSError):
                continue
    return out


def _set_or_namespaces_moved(store: Store, change: LinkChange) -> bool:
    """A file is new, or a written file declares other namespaces or packages than before:
    another file's import may now mean something else."""
    for path, before in change.written.items():
        if before is None:
            return True
        row = store.file_row(path)
        now = row.imports if row is not None else ()
        if {s for s in before if s.startswith(DECLARES)} != {
            s for s in now if s.startswith(DECLARES)
        }:
            return True
    return False


def _declaring(store: Store) -> dict[str, Sequence[str]]:
    """The specifiers of the files that declare a namespace or package (the only ones
    ``Namespaces`` reads of other files), without decoding every file's imports."""
    query = "SELECT path, imports FROM files WHERE imports LIKE ?"
    return {p: tuple(json.loads(raw)) for p, raw in store.db.execute(query, (f'%"{DECLARES}%',))}


def _package_edges_from(store: Store, srcs: Collection[str] | None) -> list[tuple[str, str]]:
    """The stored same-package edges leaving ``srcs`` (all, when None)."""
    if srcs is None:
        return list(store.db.execute("SELECT src, dst FROM package_edges"))
    out: list[tuple[str, str]] = []
    for p in sorted(srcs):
        out.extend(store.db.execute("SELECT src, dst FROM package_edges WHERE src=?", (p,)))
    return out


def _replace_edges(
    store: Store, table: str, srcs: Collection[str] | None, edges: Iterable[tuple[str, str]]
) -> None:
    """Replace the edges leaving ``srcs`` (every edge, when None) with ``edges``."""
    if srcs is None:
        store.db.execute(f"DELETE FROM {table}")
    else:
        store.db.executemany(f"DELETE FROM {table} WHERE src=?", [(p,) for p in sorted(srcs)])
    store.db.executemany(f"INSERT INTO {table}(src, dst) VALUES(?, ?)", list(edges))
