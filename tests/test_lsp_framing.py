"""Raw bytes over the real server's stdio (issue 14, Low: LSP framing and lifecycle).

A client that sends a wrong ``Content-Length``, a lowercase header, LF-only line ends, a length
of 10**12, a body that is no JSON, a batch array, a second ``initialize`` or requests after
``shutdown`` must get the error JSON-RPC and LSP prescribe, and the server must go on answering:
an editor restarts a dead server, not a deaf one. Each test starts its own server, so one
broken behaviour cannot hide another.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.raw_lsp import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    NOT_INITIALIZED,
    PARSE_ERROR,
    WAIT_S,
    RawClient,
    init_params,
)
from support.lsp import server_env


@pytest.fixture
def raw(project: Path, tmp_path: Path) -> Iterator[RawClient]:
    (project / ".code-evidence.toml").write_text("[stages]\nvectors = false\n")
    client = RawClient(tmp_path / "idx", server_env())
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def ready_raw(raw: RawClient, project: Path) -> RawClient:
    raw.initialize(project)
    return raw


def test_lowercase_header_and_lf_only_line_ends_are_read(raw: RawClient, project: Path) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params(project)}
    ).encode()
    raw.raw(f"content-length: {len(body)}\n\n".encode() + body)
    assert "result" in raw.reply(1)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "codeEvidence/noSuchMethod", "params": {}}
    ).encode()
    raw.raw(
        f"CONTENT-LENGTH:{len(body)}\r\ncontent-type: application/vscode-jsonrpc\n\n".encode()
        + body
    )
    assert raw.error_code(2) == METHOD_NOT_FOUND


def test_a_content_length_too_short_is_answered_and_the_stream_resynchronises(
    ready_raw: RawClient,
) -> None:
    ready_raw.request(10, "codeEvidence/noSuchMethod", {"padding": "x" * 40}, length_delta=-25)
    assert ready_raw.error_code(10) == PARSE_ERROR  # the id is still read from the cut body
    ready_raw.alive(11)


def test_a_content_length_too_long_ends_at_the_next_header(ready_raw: RawClient) -> None:
    ready_raw.request(20, "codeEvidence/noSuchMethod", {}, length_delta=40)
    ready_raw.request(21, "codeEvidence/noSuchMethod", {})
    assert ready_raw.error_code(20) == METHOD_NOT_FOUND
    assert ready_raw.error_code(21) == METHOD_NOT_FOUND


def test_a_content_length_too_long_with_nothing_after_it_is_read_when_the_client_waits(
    ready_raw: RawClient,
) -> None:
    ready_raw.request(30, "codeEvidence/noSuchMethod", {}, length_delta=40)
    assert ready_raw.error_code(30) == METHOD_NOT_FOUND
    ready_raw.alive(31)


def test_a_content_length_of_a_terabyte_is_skipped_not_allocated(ready_raw: RawClient) -> None:
    ready_raw.raw(b'Content-Length: 1000000000000\r\n\r\n{"jsonrpc": "2.0", "id": 40, ')
    ready_raw.alive(41)
    assert ready_raw.proc.poll() is None
    assert ready_raw.logged(b"over the limit")


def test_garbage_and_an_endless_header_are_skipped(ready_raw: RawClient) -> None:
    ready_raw.raw(b"hello there\r\n\r\n")
    ready_raw.alive(50)
    ready_raw.raw(b"X-Padding: " + b"y" * 20_000)  # a header block that never ends
    ready_raw.raw(b"\r\n\r\n")
    ready_raw.alive(51)


def test_a_body_that_is_no_json_gets_a_parse_error(ready_raw: RawClient) -> None:
    body = b'{"jsonrpc": "2.0", "id": 60, "method": '
    ready_raw.raw(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    assert ready_raw.error_code(60) == PARSE_ERROR
    body = b"not json at all"
    ready_raw.raw(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    assert ready_raw.error_code(None) == PARSE_ERROR
    ready_raw.alive(61)


def test_batches_and_non_objects_get_invalid_request(ready_raw: RawClient) -> None:
    ready_raw.send([{"jsonrpc": "2.0", "id": 70, "method": "codeEvidence/noSuchMethod"}])
    assert ready_raw.error_code(70) == INVALID_REQUEST
    ready_raw.send([])
    assert ready_raw.error_code(None) == INVALID_REQUEST
    ready_raw.send(5)
    assert ready_raw.error_code(None) == INVALID_REQUEST
    ready_raw.send({"jsonrpc": "1.0", "id": 71, "method": "codeEvidence/noSuchMethod"})
    assert ready_raw.error_code(71) == INVALID_REQUEST
    ready_raw.alive(72)


def test_requests_before_initialize_and_a_second_initialize_are_refused(
    raw: RawClient, project: Path, tmp_path: Path
) -> None:
    raw.request(80, "codeEvidence/find", {"query": "cart total"})
    assert raw.error_code(80) == NOT_INITIALIZED
    raw.initialize(project, 81)
    other = tmp_path / "other"
    other.mkdir()
    raw.request(82, "initialize", init_params(other))
    assert raw.error_code(82) == INVALID_REQUEST
    raw.alive(83)


def test_requests_after_shutdown_are_refused_and_exit_ends_the_process(
    ready_raw: RawClient,
) -> None:
    ready_raw.request(90, "shutdown")
    assert ready_raw.reply(90).get("result") is None
    ready_raw.request(91, "codeEvidence/find", {"query": "cart total"})
    assert ready_raw.error_code(91) == INVALID_REQUEST
    ready_raw.send({"jsonrpc": "2.0", "method": "exit"})
    assert ready_raw.proc.wait(timeout=WAIT_S) == 0


def test_lens_resolve_with_a_huge_line_or_an_empty_symbol_is_invalid_params(
    ready_raw: RawClient, project: Path
) -> None:
    uri = (project / "src/shop/pricing.py").resolve().as_uri()
    zero = {"line": 0, "character": 0}
    lens = {"range": {"start": zero, "end": zero}}
    bad = [
        {"uri": uri, "symbol": "discount_for", "line": 10**12},
        {"uri": uri, "symbol": "discount_for", "line": 0},
        {"uri": uri, "symbol": "", "line": 4},
        {"uri": uri, "symbol": "   ", "line": 4},
    ]
    for n, data in enumerate(bad):
        ready_raw.request(100 + n, "codeLens/resolve", {**lens, "data": data})
    for n in range(len(bad)):
        assert ready_raw.error_code(100 + n) == INVALID_PARAMS
