"""Run ``code-evidence`` with every network call refused and logged: an audit hook sees each
``connect``, ``bind``, ``sendto`` and name lookup the process (or a library it loads through
Python's socket module) attempts. Unix-domain sockets are local plumbing and pass.

  CE_NET_LOG=/tmp/net.log python tests/support/net_guard.py serve --index-dir IDX
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

EVENTS = {
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "socket.sendmsg",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
}


def _address(event: str, args: tuple[Any, ...]) -> object:
    return args[1] if event in ("socket.connect", "socket.bind", "socket.sendto") else args[0]


def install(log_path: str) -> None:
    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in EVENTS:
            return
        address = _address(event, args)
        if isinstance(address, (str, bytes)) and event in ("socket.connect", "socket.bind"):
            return  # AF_UNIX path
        with open(log_path, "a", encoding="utf-8") as f:
            f.write(f"{event} {address!r}\n")
        raise OSError(f"network access refused in tests: {event} {address!r}")

    sys.addaudithook(hook)


if __name__ == "__main__":
    install(os.environ["CE_NET_LOG"])
    from code_evidence.cli import main

    sys.exit(main(sys.argv[1:]))
