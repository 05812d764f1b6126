"""The stdio transport: reading LSP messages out of the byte stream, whatever the client sends.

pygls's reader trusts its client: a ``Content-Length`` that is wrong, a lowercase header, LF-only
line ends leave it reading forever with nothing to parse (alive, but deaf: an editor restarts a
dead server, not a deaf one); a length of 10**12 is allocated (MemoryError); a body that is no
JSON, or a batch array, is dropped without the error reply JSON-RPC asks for. This reader
replaces it for ``code-evidence serve``:

- header names are matched in any case, lines may end in CRLF or LF, and the header block is
  capped (:data:`MAX_HEADER_BYTES`);
- a ``Content-Length`` over :data:`MAX_MESSAGE_BYTES`, a header block without one, or bytes
  that are no header at all are skipped up to the next header, with a log line saying how many
  bytes were lost;
- a length that is too long shows when the next header turns up inside the body, or when the
  client goes quiet with a complete JSON value read: the message ends there; a length that is
  too short leaves the rest of the body, skipped like any bytes that are no header;
- a body that is no JSON is answered with ParseError (-32700), and one that is JSON but no
  request (a number, a batch array: LSP has no batches) with InvalidRequest (-32600), to the
  request's id when it can be read, else to ``null``, as JSON-RPC 2.0 says.

Messages go to the protocol on the event loop, exactly as pygls's own loop hands them over.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import select
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

log = logging.getLogger(__name__)

MAX_HEADER_BYTES = 8 * 1024
# The largest message read: an editor buffer of the largest ``max_file_bytes``, JSON-escaped,
# fits with room to spare.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# A body still short of its Content-Length after this long without new bytes is checked for a
# complete message (a Content-Length that was too long).
QUIET_S = 0.5
_READ = 1 << 16

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

# Where a message starts: a Content-Length header (any case), possibly after other headers.
# A JSON body cannot hold it (raw line breaks are not allowed in JSON strings), so a match
# inside what was read as a body is the next message.
_HEADER_START = re.compile(rb"(?i)content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n")
_BLOCK_END = re.compile(rb"\r?\n\r?\n")
_LINE = re.compile(rb"^([!-9;-~]+)[ \t]*:[ \t]*([^\r\n]*)$")  # a header: token ":" value
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")')


class FrameReader:
    """Messages from a byte stream (a file descriptor), one body at a time. Blocking: it runs
    on a worker thread. ``stop`` ends a wait; EOF ends the stream."""

    def __init__(self, fd: int, stop: threading.Event) -> None:
        self.fd = fd
        self.stop = stop
        self.buf = bytearray()
        self.eof = False

    def _fill(self, timeout: float | None) -> bool:
        """Read what is there (waiting at most ``timeout`` seconds, None: until data, EOF or
        stop); False when nothing came."""
        if self.eof:
            return False
        waited = 0.0
        while not self.stop.is_set():
            step = 0.25 if timeout is None else min(0.25, timeout - waited)
            if step <= 0:
                return False
            if os.name != "nt":
                ready, _, _ = select.select([self.fd], [], [], step)
                if not ready:
                    waited += step
                    continue
            data = os.read(self.fd, _READ)
            if not data:
                self.eof = True
                return False
            self.buf += data
            return True
        return False

    def _drop(self, n: int, why: str) -> None:
        if n > 0:
            log.warning("LSP stream: skipped %d bytes (%s)", n, why)
            del self.buf[:n]

    def _resync(self, why: str, start: int = 0) -> None:
        """Drop everything before the next Content-Length header at or after ``start``; keep
        a short tail (a header may be arriving in pieces)."""
        m = _HEADER_START.search(self.buf, start)
        if m is not None:
            self._drop(m.start(), why)
        else:  # keep only an unfinished last line: it may be the start of a header
            self._drop(max(self.buf.rfind(b"\n") + 1, len(self.buf) - MAX_HEADER_BYTES), why)

    def next_body(self) -> bytes | None:
        """The next message body, or None at the end of the stream."""
        while True:
            length = self._header()
            if length is None:
                return None
            body = self._body(length)
            if body is not None:
                return body

    def _header(self) -> int | None:
        """Consume one header block; its Content-Length."""
        while True:
            end = _BLOCK_END.search(self.buf)
            if end is None:
                if len(self.buf) > MAX_HEADER_BYTES:
                    self._resync(f"no header within {MAX_HEADER_BYTES} bytes", 1)
                    continue
                if not self._fill(None):
                    if self.buf.strip():
                        log.warning("LSP stream ended inside a header: %r", bytes(self.buf[:80]))
                    return None
                continue
            if end.start() > MAX_HEADER_BYTES:
                self._resync(f"a header block over {MAX_HEADER_BYTES} bytes", 1)
                continue
            block = bytes(self.buf[: end.start()])
            length: int | None = None
            bad = False
            for line in block.split(b"\n"):
                m = _LINE.match(line.rstrip(b"\r"))
                if m is None:
                    bad = True
                    break
                if m.group(1).lower() == b"content-length":
                    value = m.group(2).strip()
                    length = int(value) if value.isdigit() else None
            if bad or length is None:
                # Garbage (the rest of a body whose length was too short), or no usable
                # Content-Length: skip to the next header.
                self._resync("not a message header", 1)
                continue
            if length > MAX_MESSAGE_BYTES:
                log.error(
                    "LSP stream: Content-Length %d is over the limit of %d bytes; skipping to "
                    "the next header",
                    length,
                    MAX_MESSAGE_BYTES,
                )
                self._resync("an over-long message", end.end())
                continue
            del self.buf[: end.end()]
            return length

    def _body(self, length: int) -> bytes | None:
        """The body of ``length`` bytes; cut short where the next header starts inside it, or
        where the client went quiet with a complete JSON value read. None when it was
        skipped."""
        scanned = 0  # the body is searched once, not once per read
        while True:
            inner = _HEADER_START.search(self.buf, max(0, scanned - 80), length + 80)
            if inner is not None and inner.start() < length:  # the length was too long
                return self._short(inner.start(), length)
            scanned = len(self.buf)
            if scanned >= length:
                break
            if not self._fill(QUIET_S):
                if self.eof or self.stop.is_set():
                    return self._short(len(self.buf), length) if self.buf else None
                if self.buf and _is_json(bytes(self.buf)):
                    return self._short(len(self.buf), length)
        body = bytes(self.buf[:length])
        del self.buf[:length]
        return body

    def _short(self, n: int, length: int) -> bytes:
        log.warning(
            "LSP stream: Content-Length %d, but the message ended after %d bytes", length, n
        )
        body = bytes(self.buf[:n])
        del self.buf[:n]
        return body


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def error_reply(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _request_id(body: bytes) -> Any:
    """The id of a request that could not be parsed, when it can still be read (clients put it
    before the params); None otherwise."""
    m = _ID.search(body[:4096])
    if m is None:
        return None
    try:
        return json.loads(m.group(1))
    except ValueError:
        return None


def dispatch(body: bytes, protocol: Any, send: Callable[[dict[str, Any]], None]) -> None:
    """Hand one body to the protocol, or answer it with the JSON-RPC error it deserves."""
    try:
        plain = json.loads(body)
    except (ValueError, RecursionError) as exc:
        log.warning("LSP stream: a message that is not JSON (%s)", exc)
        send(error_reply(_request_id(body), PARSE_ERROR, f"Parse error: {exc}"))
        return
    if isinstance(plain, list):
        log.warning("LSP stream: a batch of %d messages (LSP has no batches)", len(plain))
        ids = [m["id"] for m in plain if isinstance(m, dict) and "id" in m and "method" in m]
        for msg_id in ids or [None]:
            send(error_reply(msg_id, INVALID_REQUEST, "Invalid Request: LSP has no batches"))
        return
    if not isinstance(plain, dict) or plain.get("jsonrpc") != "2.0":
        msg_id = plain.get("id") if isinstance(plain, dict) else None
        if isinstance(plain, dict) and "method" not in plain and "id" in plain:
            return  # a malformed response to one of our requests: nothing to answer
        send(error_reply(msg_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"))
        return
    if not isinstance(plain.get("method", ""), str):
        send(error_reply(plain.get("id"), INVALID_REQUEST, "Invalid Request: bad method"))
        return
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
        protocol.handle_message(message)
    except Exception:
        log.exception("unable to handle a message")


async def serve_stream(stdin: BinaryIO, protocol: Any, stop: threading.Event) -> None:
    """The server's main loop over ``stdin`` (what pygls's ``run_async`` does, with
    :class:`FrameReader`). The reader is a daemon thread: ``exit`` ends the process without
    waiting for the client to close its end."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    reader = FrameReader(stdin.fileno(), stop)

    def pump() -> None:
        body: bytes | None = b""
        while body is not None:
            try:
                body = reader.next_body()
            except Exception:
                log.exception("reading the LSP stream failed; the server stops")
                body = None
            try:
                loop.call_soon_threadsafe(queue.put_nowait, body)
            except RuntimeError:  # the loop is closed: the server is exiting
                return

    threading.Thread(target=pump, name="ce-stdin", daemon=True).start()
    while True:
        body = await queue.get()
        if body is None:
            log.info("LSP stream closed by the client")
            return
        dispatch(body, protocol, protocol._send_data)
