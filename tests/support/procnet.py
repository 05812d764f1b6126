"""The inet sockets a process holds, read from /proc (Linux): what the no-network and the
loopback-only tests inspect."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


def socket_rows(pid: int, tables: tuple[str, ...]) -> Iterator[tuple[str, list[str]]]:
    """``(table, columns)`` of each /proc/<pid>/net/<table> row whose socket ``pid`` owns."""
    proc = Path(f"/proc/{pid}")
    inodes = set()
    for fd in (proc / "fd").iterdir():
        try:
            target = fd.readlink().as_posix()
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for table in tables:
        path = proc / "net" / table
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            cols = line.split()
            if cols[9] in inodes:
                yield table, cols
