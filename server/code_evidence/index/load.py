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


def load_text(root: Path, path: str, cfg: IndexConfig, root_real: str | None = None) -> LoadedText:
    """The file's text for indexing, or :class:`SkipFile` saying why there is none.

    The file may have changed since the scan, so size and type are checked again here.
    ``root_real``: ``os.path.realpath(root)``, when the caller resolved it once for many files
    (a stat of every folder above the workspace, per file, otherwise).
    """
    if root_real is None:
        root_real = os.path.realpath(root)
    full = os.path.join(root_real, path)
    real = os.path.realpath(full)
    if not (real == root_real or real.startswith(root_real.rstrip("/") + "/")):
        raise SkipFile("outside-workspace", path)
    try:
        # O_NONBLOCK: opening a FIFO must not hang; it is refused below as not a regular file.
        fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise SkipFile("vanished", path) from exc
    except OSError as exc:
        raise SkipFile("unreadable", f"{path}: {exc.strerror or exc}") from exc
    try:
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
