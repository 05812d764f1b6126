"""Loading one file's text for indexing: decoded, newlines normalised, or a reason to skip it.

The scan only stats; contents are read here, one file at a time, and the file may have changed
since the scan, so type, size and containment are checked again on the open file. Text that is
not worth indexing (binary, minified) is refused with a stable reason the index records.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..config import IndexConfig

BINARY_SNIFF_BYTES = 8192
# A file is minified when its lines are long on average, or when most of its text sits on
# over-long lines (a bundle with a short licence header still counts).
MINIFIED_AVG_LINE = 500


@dataclass(frozen=True, slots=True)
class LoadedText:
    text: str  # line endings normalised to "\n"
    encoding_errors: bool  # invalid UTF-8 was replaced by U+FFFD


class SkipFile(Exception):
    """A file that is not indexed after all; ``reason`` is a short stable token ("binary",
    "too-large", "minified", "unreadable", "vanished", "not-regular", "outside-workspace")."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF: the one newline convention of the index (chunk lines, editor
    buffers and disk copies all compare in it)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode(data: bytes) -> tuple[str, bool]:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) and not data.startswith(
        codecs.BOM_UTF32_LE
    ):
        # Windows tools still write UTF-16 with a BOM; its NUL bytes are not a sign of binary.
        try:
            return data.decode("utf-16"), False
        except UnicodeDecodeError:
            pass
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise SkipFile("binary")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


def _looks_minified(text: str, cfg: IndexConfig) -> bool:
    if len(text) <= cfg.max_line_chars:
        return False
    lengths = [len(line) for line in text.split("\n")]
    if max(lengths) <= cfg.max_line_chars:
        return False
    if text.endswith("\n"):
        lengths.pop()
    avg = len(text) / max(1, len(lengths))
    long_chars = sum(n for n in lengths if n > cfg.max_line_chars)
    return avg > MINIFIED_AVG_LINE or long_chars * 2 >= len(text)


class RealPaths:
    """Where the workspace's files really are, each folder resolved once per pass.

    ``os.path.realpath`` stats every folder from ``/`` down to the file, in Python, for every
    file: at 519,588 chunks (59,083 files) that was a tenth of a cold index's time, under the
    GIL. A pass reads many files of each folder, so a folder's real path is kept and only the
    file itself is looked at (one ``lstat``; a symlink is resolved whole). This is the check
    before a file is opened (a symlink to a device outside is never opened); the file opened is
    checked again after (:func:`opened_path`), so a folder swapped for a symlink in between
    is caught there."""

    def __init__(self, root: Path) -> None:
        self.root = os.path.realpath(root)
        self._inside = self.root.rstrip("/") + "/"
        self._folders: dict[str, str] = {"": self.root}

    def of(self, path: str) -> str:
        """``os.path.realpath`` of the workspace-relative ``path``, its folder remembered."""
        folder, _, name = path.rpartition("/")
        full = os.path.join(self._folder(folder), name)
        return os.path.realpath(full) if os.path.islink(full) else full

    def _folder(self, folder: str) -> str:
        """A folder's real path from its parent's: one ``lstat`` per folder of the pass. Two
        reader threads may both resolve one: the same answer."""
        real = self._folders.get(folder)
        if real is None:
            real = self.of(folder)
            self._folders[folder] = real
        return real

    def inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self._inside)


def opened_path(fd: int, full: str) -> str:
    """The real path of the file open as ``fd`` (opened from ``full``): on Linux the kernel's
    answer (``/proc/self/fd``, one system call, nothing left to swap), elsewhere
    ``os.path.realpath``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(full)


def load_text(
    root: Path, path: str, cfg: IndexConfig, real_paths: RealPaths | None = None
) -> LoadedText:
    """The file's text for indexing, or :class:`SkipFile` saying why there is none.

    The file may have changed since the scan, so containment (before and after opening), size
    and type are checked again here. ``real_paths``: the pass's (:class:`RealPaths`), when the
    caller reads many files.
    """
    if real_paths is None:
        real_paths = RealPaths(root)
    full = os.path.join(real_paths.root, path)
    if not real_paths.inside(real_paths.of(path)):
        raise SkipFile("outside-workspace", path)
    try:
        # O_NONBLOCK: opening a FIFO must not hang; it is refused below as not a regular file.
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(full, flags | getattr(os, "O_NOCTTY", 0))
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise SkipFile("vanished", path) from exc
    except OSError as exc:
        raise SkipFile("unreadable", f"{path}: {exc.strerror or exc}") from exc
    try:
        real = opened_path(fd, full)
        if real.endswith(" (deleted)"):
            raise SkipFile("vanished", path)
        if not real_paths.inside(real):
            raise SkipFile("outside-workspace", path)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkipFile("not-regular", path)
        if st.st_size > cfg.max_file_bytes:
            raise SkipFile("too-large", f"{path}: {st.st_size} bytes")
        chunks: list[bytes] = []
        remaining = cfg.max_file_bytes + 1
        while remaining > 0:
            block = os.read(fd, min(remaining, 1 << 20))
            if not block:
                break
            chunks.append(block)
            remaining -= len(block)
    except OSError as exc:
        raise SkipFile("unreadable", f"{path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cfg.max_file_bytes:
        raise SkipFile("too-large", f"{path}: grew past {cfg.max_file_bytes} bytes")
    text, errors = _decode(data)
    return LoadedText(checked_text(text, path, cfg, size=len(data)), errors)


def checked_text(text: str, path: str, cfg: IndexConfig, size: int | None = None) -> str:
    """``text`` with newlines normalised, or :class:`SkipFile` when a file of it would not be
    indexed: the limits that hold for a file on disk hold for an editor's buffer of it too
    (``size``: its size in bytes, when known)."""
    if size is None:
        size = len(text.encode("utf-8", "surrogatepass"))
    if size > cfg.max_file_bytes:
        raise SkipFile("too-large", f"{path}: {size} bytes")
    if "\r" in text:
        text = normalise_newlines(text)
    if not cfg.include_generated and _looks_minified(text, cfg):
        raise SkipFile("minified", path)
    return text
