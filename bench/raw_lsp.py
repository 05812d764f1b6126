"""A language-server client that writes raw bytes: what a broken or hostile editor sends.

``code-evidence serve`` must survive wrong ``Content-Length`` headers, odd header spellings,
bodies that are no JSON and lifecycle mistakes (``docs/reliability.md``, "The language server's
transport"). :class:`RawClient` starts the real server over stdio and writes exactly the bytes
it is given; what the server sends back is parsed strictly (its own output is well framed).
Used by ``tests/test_lsp_framing.py`` (each case) and ``bench/stress.py`` (``--only framing``:
random corruptions). It imports nothing from ``bench/``: the tests import it as
``bench.raw_lsp``; the caller has put ``server/`` on ``sys.path``.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

WAIT_S = 30.0
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND = -32700, -32600, -32601
INVALID_PARAMS, NOT_INITIALIZED = -32602, -32002


def init_params(root: Path) -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": root.as_uri(),
        "capabilities": {},
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
    }


class RawClient:
    """The server as a subprocess, written to byte by byte; what it sends back is parsed by a
    strict reader (the server's own output is well framed)."""

    def __init__(self, index_dir: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "code_evidence.cli", "serve", "--index-dir", str(index_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr = bytearray()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        if out is None:
            return
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is not None:
                self.inbox.put(json.loads(out.read(length)))

    def _drain(self) -> None:
        err = self.proc.stderr
        if err is None:
            return
        while chunk := err.read1(65536):
            self.stderr += chunk

    def raw(self, data: bytes) -> None:
        stdin = self.proc.stdin
        if stdin is None:
            raise ValueError("the server was started without a stdin pipe")
        stdin.write(data)
        stdin.flush()

    def send(self, message: Any, length_delta: int = 0, header: str = "Content-Length") -> None:
        body = json.dumps(message).encode()
        self.raw(f"{header}: {len(body) + length_delta}\r\n\r\n".encode() + body)

    def request(self, msg_id: Any, method: str, params: Any = None, **framing: Any) -> None:
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message, **framing)

    def reply(self, msg_id: Any, timeout: float = WAIT_S) -> dict[str, Any]:
        """The server's answer to ``msg_id`` (notifications and other answers are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"no answer to {msg_id!r} in {timeout} s; server log:\n"
                    + self.stderr.decode(errors="replace")[-3000:]
                )
            try:
                message = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if "method" not in message and message.get("id") == msg_id:
                return message

    def error_code(self, msg_id: Any) -> int:
        answer = self.reply(msg_id)
        if "error" not in answer:
            raise ValueError(f"expected an error answer, got {answer}")
        return int(answer["error"]["code"])

    def logged(self, text: bytes, timeout: float = WAIT_S) -> bool:
        """Whether the server's log holds ``text`` within ``timeout``: its log and its answers
        are two pipes read by two threads, so an answer can arrive before the line the server
        logged first."""
        deadline = time.monotonic() + timeout
        while text not in self.stderr:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def alive(self, msg_id: Any) -> None:
        """The server still reads and answers: an unknown method gets MethodNotFound."""
        self.request(msg_id, "codeEvidence/noSuchMethod", {})
        code = self.error_code(msg_id)
        if code != METHOD_NOT_FOUND:
            raise ValueError(f"expected MethodNotFound, got {code}")

    def initialize(self, root: Path, msg_id: Any = "init") -> None:
        self.request(msg_id, "initialize", init_params(root))
        answer = self.reply(msg_id)
        if "result" not in answer:
            raise ValueError(f"initialize failed: {answer}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
