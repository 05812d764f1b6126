"""The framing phase of ``bench/stress.py``: random corruptions of the LSP byte stream.

Each round writes one damaged message to a real ``code-evidence serve`` over its stdio (a
``Content-Length`` off by a random amount either way, a length of 10**12, header names in odd
case, LF-only line ends, garbage, a body that is no JSON, a batch, a message cut into random
pieces written apart, ...), then one clean request that must be answered: a server that stops
answering is deaf (the bug issue 14 found: alive, but never reading another message), one that
exits is dead. Figures only; the cases themselves are tests in ``tests/test_lsp_framing.py``.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

from raw_lsp import RawClient

MUTATIONS = (
    "length-too-long",
    "length-too-short",
    "length-of-a-terabyte",
    "length-negative",
    "length-not-a-number",
    "lowercase-header",
    "lf-only",
    "extra-headers",
    "garbage",
    "truncated-header",
    "no-json",
    "batch",
    "not-an-object",
    "split-writes",
)


def _body(n: int) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": f"m{n}", "method": "codeEvidence/noSuchMethod", "params": {}}
    ).encode()


def damaged(kind: str, n: int, rng: random.Random) -> list[bytes]:
    """The bytes of one damaged message, as the pieces to write."""
    body = _body(n)
    size = len(body)
    if kind == "length-too-long":
        return [f"Content-Length: {size + rng.randint(1, 200)}\r\n\r\n".encode() + body]
    if kind == "length-too-short":
        return [f"Content-Length: {rng.randint(1, size - 1)}\r\n\r\n".encode() + body]
    if kind == "length-of-a-terabyte":
        return [b"Content-Length: 1000000000000\r\n\r\n" + body[: rng.randint(0, size)]]
    if kind == "length-negative":
        return [f"Content-Length: -{size}\r\n\r\n".encode() + body]
    if kind == "length-not-a-number":
        return [b"Content-Length: twelve\r\n\r\n" + body]
    if kind == "lowercase-header":
        return [f"content-length: {size}\r\n\r\n".encode() + body]
    if kind == "lf-only":
        return [f"Content-Length: {size}\n\n".encode() + body]
    if kind == "extra-headers":
        return [
            f"X-Thing: a\r\ncontent-type: application/json\r\nContent-Length: {size}\r\n\r\n"
            .encode() + body
        ]  # fmt: skip
    if kind == "garbage":
        return [bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096)))]
    if kind == "truncated-header":
        return [b"Content-Len\r\n"]
    if kind == "no-json":
        junk = body[: rng.randint(1, size - 1)]
        return [f"Content-Length: {len(junk)}\r\n\r\n".encode() + junk]
    if kind == "batch":
        batch = json.dumps([json.loads(body)] * rng.randint(0, 3)).encode()
        return [f"Content-Length: {len(batch)}\r\n\r\n".encode() + batch]
    if kind == "not-an-object":
        value = json.dumps(rng.choice([5, "x", None, True, 1.5])).encode()
        return [f"Content-Length: {len(value)}\r\n\r\n".encode() + value]
    whole = f"Content-Length: {size}\r\n\r\n".encode() + body  # split-writes
    cuts = sorted(rng.sample(range(1, len(whole)), k=min(4, len(whole) - 1)))
    return [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]


def framing_run(root: Path, ws: Path, env: dict[str, str], rounds: int, seed: int) -> dict:
    """``rounds`` damaged messages against one server; the figures of the phase."""
    rng = random.Random(seed)
    client = RawClient(root / "framing-idx", env)
    answered: Counter[str] = Counter()
    deaf: Counter[str] = Counter()
    dead = ""
    t0 = time.perf_counter()
    try:
        client.initialize(ws)
        for n in range(rounds):
            kind = rng.choice(MUTATIONS)
            for piece in damaged(kind, n, rng):
                client.raw(piece)
                if kind == "split-writes":
                    time.sleep(rng.random() * 0.05)
            try:
                client.alive(f"ping{n}")
                answered[kind] += 1
            except (TimeoutError, ValueError):
                deaf[kind] += 1
                break  # a deaf server stays deaf: every later round would wait in vain
            if client.proc.poll() is not None:
                dead = kind
                break
    finally:
        client.close()
    return {
        "rounds": sum(answered.values()) + sum(deaf.values()),
        "answered after damage": sum(answered.values()),
        "deaf after": dict(deaf),
        "died after": dead or "-",
        "seconds": round(time.perf_counter() - t0, 1),
    }
