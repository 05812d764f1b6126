"""Workspace scan: which files the index holds.

The index must match the working tree as the user sees it. Inside a git repository git already
knows that answer (tracked plus untracked, minus everything its ignore rules exclude, including
``.git/info/exclude`` and the global excludes file), so one ``git ls-files`` call is both the
most faithful and the fastest source. Outside git we walk the tree ourselves and apply the
``.gitignore`` files we find, so a plain folder behaves the same way.

On top of either list come our own rules: ``cfg.exclude``, secrets (never indexed, whatever
the ignore files say), vendored code, obviously binary files and oversized files. Scanning only
stats; contents are read later, one file at a time (``load.py``).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from ..config import IndexConfig
from ..filekinds import VENDOR_DIRS
from ..git import LIST_TIMEOUT_S, Git, GitState
from ..secrets import is_secret_path

log = logging.getLogger(__name__)

VCS_DIRS = frozenset({".git", ".hg", ".svn"})
# Extensions whose files are never source text; skipped from the name alone, without a read.
BINARY_EXTENSIONS = frozenset(
    {
        # images and documents
        "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "psd",
        "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx",
        # archives and packages
        "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "tar", "whl", "egg", "jar", "war",
        "deb", "rpm", "dmg", "iso", "apk",
        # compiled code
        "so", "dylib", "dll", "exe", "o", "a", "lib", "obj", "class", "pyc", "pyo", "pyd",
        "wasm",
        # fonts and media
        "woff", "woff2", "ttf", "otf", "eot", "mp3", "mp4", "wav", "ogg", "flac", "avi", "mov",
        "mkv", "webm",
        # databases, models and arrays
        "sqlite", "sqlite3", "db", "onnx", "bin", "npy", "npz", "pkl", "pickle", "pt", "pth",
        "ckpt", "safetensors", "h5", "hdf5", "parquet", "arrow", "feather",
    }
)  # fmt: skip

MAX_EXAMPLES = 50


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str  # workspace-relative, POSIX separators
    size: int
    mtime_ns: int
    mode: int = 0  # st_mode: a skip for "unreadable" is undone by a chmod, which changes only this


@dataclass(slots=True)
class ScanResult:
    """The files to index. ``skipped`` counts by reason; a directory pruned as a whole (a
    vendor or excluded folder outside git) counts once, with a trailing ``/`` in examples."""

    root: Path
    git: GitState
    files: list[FileEntry]  # sorted by path
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_examples: list[tuple[str, str]] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# name-based rules


def _is_binary_name(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return dot > 0 and name[dot + 1 :].lower() in BINARY_EXTENSIONS


# A source map (``Ky.js.map``): a JSON line of base64 positions and, often, the sources again;
# what it maps is indexed where it lies, and the map itself is never evidence anyone cites.
_SOURCE_MAP_EXTS = (
    ".js.map", ".mjs.map", ".cjs.map", ".jsx.map", ".ts.map", ".tsx.map", ".css.map"
)  # fmt: skip


def _is_source_map(path: str) -> bool:
    return path.lower().endswith(_SOURCE_MAP_EXTS)


def _valid_name(name: str) -> bool:
    """False for names that are not valid UTF-8 on disk (decoded with surrogate escapes): they
    cannot be stored, printed or sent as JSON faithfully."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _compile_spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec | None:
    """A spec from gitignore lines, dropping any single line pathspec cannot parse (git itself
    ignores malformed lines rather than rejecting the file)."""
    lines = list(lines)
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # pathspec raises several error types for malformed patterns
        good: list[str] = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except Exception:
                continue
            good.append(line)
        spec = pathspec.GitIgnoreSpec.from_lines(good)
    return spec if len(spec) else None


# --------------------------------------------------------------------------------------------
# scanning


class _Collector:
    """Applies the shared rules to candidate paths and records files and skips."""

    def __init__(self, root: Path, cfg: IndexConfig) -> None:
        self.root = root
        self.root_str = os.fspath(root)
        self.cfg = cfg
        self.exclude = _compile_spec(cfg.exclude) if cfg.exclude else None
        self.reset()

    def reset(self) -> None:
        """Forget every decision (the rules stay)."""
        self.files: dict[str, FileEntry] = {}
        self.skipped: dict[str, int] = {}
        self.examples: list[tuple[str, str]] = []
        self.venv_dirs: set[str] = set()
        self._dir_real: dict[str, bool] = {"": True}
        self._vendor_dirs: dict[str, bool] = {}

    def skip(self, path: str, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append((path, reason))

    def excluded(self, path: str) -> bool:
        return self.exclude is not None and bool(self.exclude.check_file(path).include)

    def _is_vendor(self, path: str) -> bool:
        if self.cfg.include_vendor:
            return False
        parent = path.rpartition("/")[0]
        known = self._vendor_dirs.get(parent)
        if known is None:  # decided once per folder: a large workspace has 3 files a folder
            known = self._vendor_dirs[parent] = self._is_vendor_dir(parent)
        return known

    def _is_vendor_dir(self, parent: str) -> bool:
        parts = parent.split("/") if parent else []
        if any(p in VENDOR_DIRS for p in parts):
            return True
        if self.venv_dirs:
            prefix = ""
            for p in parts:
                prefix = f"{prefix}/{p}" if prefix else p
                if prefix in self.venv_dirs:
                    return True
        return False

    def name_reason(self, path: str) -> str | None:
        """The skip reason decidable from the path alone, in precedence order."""
        if self.excluded(path):
            return "ignored-config"
        if is_secret_path(path):
            return "secret"
        if self._is_vendor(path):
            return "vendor"
        if _is_binary_name(path):
            return "binary"
        if _is_source_map(path):
            return "source-map"
        return None

    def _inside(self, real: str) -> bool:
        return real == self.root_str or real.startswith(self.root_str.rstrip("/") + "/")

    def _parent_is_real(self, path: str) -> bool:
        """Whether every folder above ``path`` is a real directory (no symlink), cached per
        folder: git lists tracked files even after a folder above them became a symlink."""
        parent = path.rpartition("/")[0]
        known = self._dir_real.get(parent)
        if known is not None:
            return known
        real = self._parent_is_real(parent)
        if real:
            try:
                real = stat.S_ISDIR(os.lstat(os.path.join(self.root_str, parent)).st_mode)
            except OSError:
                real = False
        self._dir_real[parent] = real
        return real

    def consider(self, path: str, check_parents: bool) -> None:
        """Stat one candidate (once, plus once more for a symlink) and keep or skip it."""
        if path in self.files:
            return
        reason = self.name_reason(path)
        if reason is not None:
            self.skip(path, reason)
            return
        full = os.path.join(self.root_str, path)
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return  # deleted but still tracked, or gone since listing: not in the working tree
        except OSError:
            self.skip(path, "unreadable")
            return
        via_link = stat.S_ISLNK(st.st_mode) or (check_parents and not self._parent_is_real(path))
        if via_link:
            real = os.path.realpath(full)
            if not self._inside(real):
                self.skip(path, "outside-workspace")
                return
            # A harmless-looking link must not smuggle in a secret.
            if is_secret_path(real):
                self.skip(path, "secret")
                return
            try:
                st = os.stat(full)
            except OSError:  # dangling link or a link loop
                self.skip(path, "not-regular")
                return
        if not stat.S_ISREG(st.st_mode):
            self.skip(path, "not-regular")
            return
        if st.st_size > self.cfg.max_file_bytes:
            self.skip(path, "too-large")
            return
        self.files[path] = FileEntry(path, st.st_size, st.st_mtime_ns, st.st_mode)

    def result(self, git: GitState) -> ScanResult:
        files = sorted(self.files.values(), key=lambda f: f.path)
        return ScanResult(self.root, git, files, dict(self.skipped), list(self.examples))


def _scan_git(col: _Collector, git: Git) -> bool:
    """Fill ``col`` from ``git ls-files``; False when git could not list the tree.

    Tracked files are listed at once (git reads its index) and checked while git walks the
    tree for untracked ones (``--others``, most of the listing's time on a large workspace),
    in a thread of its own: the two overlap on two cores."""
    others: list[bytes | None] = []
    walk = threading.Thread(
        target=lambda: others.append(
            git.output("ls-files", "-z", "--others", "--exclude-standard", timeout=LIST_TIMEOUT_S)
        ),
        name="ls-files-others",
        daemon=True,
    )
    walk.start()
    cached = git.output("ls-files", "-z", "--cached", timeout=LIST_TIMEOUT_S)
    if cached is None:
        walk.join()
        return False
    tracked = _listed(col, cached)
    col.venv_dirs = _venv_dirs(tracked)
    for path in tracked:
        col.consider(path, check_parents=True)
    walk.join()
    if not others or others[0] is None:
        col.reset()  # the caller walks the tree instead
        return False
    untracked = _listed(col, others[0])
    if _venv_dirs(untracked) - col.venv_dirs:
        # An untracked virtualenv (its pyvenv.cfg not in git) vendors tracked files too: decide
        # everything again with it known, as one listing would have.
        col.reset()
        paths = _listed(col, others[0]) + _listed(col, cached)
        col.venv_dirs = _venv_dirs(paths)
    else:
        paths = untracked
    for path in paths:
        col.consider(path, check_parents=True)
    return True


def _listed(col: _Collector, out: bytes) -> list[str]:
    """The paths of a ``git ls-files -z`` listing; names that cannot be kept are skipped."""
    paths: list[str] = []
    for raw in out.split(b"\0"):
        if not raw:
            continue
        try:
            path = raw.decode("utf-8")
        except UnicodeDecodeError:
            col.skip(os.fsdecode(raw).encode("utf-8", "backslashreplace").decode(), "unreadable")
            continue
        if path.endswith("/"):  # an untracked nested repository, listed as a folder
            col.skip(path, "not-regular")
            continue
        paths.append(path)
    return paths


def _venv_dirs(paths: list[str]) -> set[str]:
    return {p.rpartition("/")[0] for p in paths if p.endswith("/pyvenv.cfg")}


class _IgnoreStack:
    """The ``.gitignore`` files above one folder, outermost first, each with its folder."""

    __slots__ = ("specs",)

    def __init__(self, specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()) -> None:
        self.specs = specs

    def with_file(self, base: str, lines: list[str]) -> _IgnoreStack:
        spec = _compile_spec(lines)
        return _IgnoreStack((*self.specs, (base, spec))) if spec is not None else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        # Deeper files override shallower ones; within a file the last match wins, which
        # check_file already reports.
        for base, spec in reversed(self.specs):
            sub = path[len(base) + 1 :] if base else path
            hit = spec.check_file(sub + "/" if is_dir else sub).include
            if hit is not None:
                return hit
        return False


def _read_ignore_file(path: str) -> list[str]:
    try:
        with open(path, "rb") as fh:
            data = fh.read(1_000_000)
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()


def _scan_walk(col: _Collector) -> None:
    """Walk the tree without following directory links, pruning ignored folders."""
    root_str = col.root_str
    seen_dirs: set[tuple[int, int]] = set()
    try:
        st = os.stat(root_str)
        seen_dirs.add((st.st_dev, st.st_ino))
    except OSError:
        pass
    stack: list[tuple[str, _IgnoreStack]] = [("", _IgnoreStack())]
    while stack:
        rel_dir, ignores = stack.pop()
        abs_dir = os.path.join(root_str, rel_dir) if rel_dir else root_str
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            col.skip(rel_dir + "/", "unreadable")
            continue
        names = {e.name for e in entries}
        if rel_dir and "pyvenv.cfg" in names and not col.cfg.include_vendor:
            col.skip(rel_dir + "/", "vendor")
            continue
        if ".gitignore" in names:
            ignores = ignores.with_file(
                rel_dir, _read_ignore_file(os.path.join(abs_dir, ".gitignore"))
            )
        for entry in entries:
            name = entry.name
            path = f"{rel_dir}/{name}" if rel_dir else name
            if not _valid_name(name):
                col.skip(path.encode("utf-8", "backslashreplace").decode(), "unreadable")
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                col.skip(path, "unreadable")
                continue
            if name in VCS_DIRS:
                continue  # a VCS folder, or a `.git` file pointing at one elsewhere
            if ignores.ignored(path, is_dir):
                continue
            if not is_dir:
                col.consider(path, check_parents=False)
                continue
            if col.excluded(path + "/"):
                col.skip(path + "/", "ignored-config")
                continue
            if name in VENDOR_DIRS and not col.cfg.include_vendor:
                col.skip(path + "/", "vendor")
                continue
            try:
                dst = entry.stat(follow_symlinks=False)
            except OSError:
                col.skip(path + "/", "unreadable")
                continue
            key = (dst.st_dev, dst.st_ino)
            if key in seen_dirs:  # a bind mount looping back into the tree
                continue
            seen_dirs.add(key)
            stack.append((path, ignores))


def scan_workspace(
    root: Path, cfg: IndexConfig, git: Git | None = None, dirty: bool = True
) -> ScanResult:
    """List the files to index under ``root``; reads no file contents. ``git`` is the
    workspace's hardened git (one is made when not given); where it refuses the repository
    (another user's), the folder is walked like any other. ``dirty`` False: no ``git
    status`` (it stats every tracked file again); the state's ``dirty`` is then None."""
    real_root = Path(os.path.realpath(root))
    if not real_root.is_dir():
        raise NotADirectoryError(f"workspace {os.fspath(root)!r} is not a directory")
    if git is None:
        git = Git(real_root)
    state = git.state() if dirty else git.head_state()
    col = _Collector(real_root, cfg)
    if state.is_repo and not _scan_git(col, git):
        log.warning("git ls-files failed in %s; walking the folder instead", real_root)
        col = _Collector(real_root, cfg)
        _scan_walk(col)
    elif not state.is_repo:
        _scan_walk(col)
    return col.result(state)


# Names whose change can alter which files the index holds: a pass that meets one scans the
# whole workspace.
RULE_FILES = frozenset({".gitignore", ".code-evidence.toml", "pyvenv.cfg"})


def scan_paths(root: Path, cfg: IndexConfig, git: Git, paths: Iterable[str]) -> ScanResult | None:
    """The scan restricted to ``paths`` (workspace-relative, already past the watcher's
    ignore check): the same per-file rules as :func:`scan_workspace` at the cost of a few
    stats, for a pass that knows which files changed. A path missing from the result is gone
    or skipped. None when only a full scan can say: a folder among the paths, or a file
    whose change alters the rules themselves (``RULE_FILES``), or a folder outside git (the
    watcher reads only the top ``.gitignore`` there, the walk reads every one)."""
    state = git.head_state()
    if not state.is_repo:
        return None
    real_root = Path(os.path.realpath(root))
    col = _Collector(real_root, cfg)
    for path in paths:
        if path.rpartition("/")[2] in RULE_FILES or not _valid_name(path):
            return None
        if os.path.isdir(os.path.join(col.root_str, path)):
            return None
        folders = path.split("/")[:-1]
        for i in range(1, len(folders) + 1):  # a virtualenv git lists: vendored
            folder = "/".join(folders[:i])
            if os.path.exists(os.path.join(col.root_str, folder, "pyvenv.cfg")):
                col.venv_dirs.add(folder)
        col.consider(path, check_parents=True)
    return col.result(state)
