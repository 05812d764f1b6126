"""Protocol fuzzing and a file storm against the real language server (issue 8).

Hypothesis generates malformed and adversarial ``codeEvidence/find`` and hover requests (wrong
types, huge strings, unknown URIs, URIs outside the workspace, ``../`` traversal, negative and
enormous positions). Each must get a JSON-RPC InvalidParams error or a valid answer that cites
only workspace files, and the server must keep serving. Bounded: 50 examples per property, no
deadline (answers may wait on the index). The long runs belong in ``bench/stress.py``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402

from support.lsp import (  # noqa: E402
    WAIT_S,
    Client,
    initialize,
    ready,
    start,
    stop,
    wait_status,
)
from support.project import PROJECT, write_project  # noqa: E402

INVALID_PARAMS = -32602
# bench/stress.py raises this for its long fuzzing run; the test suite keeps the bounded 50.
SETTINGS = settings(
    max_examples=int(os.environ.get("CODE_EVIDENCE_FUZZ_EXAMPLES", "50")),
    database=None,  # no .hypothesis folder in the checkout; failures print their example
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Client, Path]]:
    """One real server for the module, on its own loop (hypothesis drives it synchronously)."""
    root = tmp_path_factory.mktemp("fuzz") / "shop"
    root.mkdir()
    write_project(root, {k: v for k, v in PROJECT.items() if not k.startswith("build/")})
    (root / ".code-evidence.toml").write_text("[stages]\nvectors = false\n")
    loop = asyncio.new_event_loop()
    client = loop.run_until_complete(start(tmp_path_factory.mktemp("fuzz-idx")))
    loop.run_until_complete(initialize(client, root))
    loop.run_until_complete(ready(client))
    yield loop, client, root.resolve()
    loop.run_until_complete(stop(client))
    loop.close()


def _request(loop: Any, client: Client, method: str, params: Any) -> Any:
    """Send ``params`` as they are: the client's typed serialisation of standard methods is
    switched off, so malformed params reach the server's own parsing."""
    proto = client.protocol
    typed = proto.get_message_type
    proto.get_message_type = lambda m: None  # type: ignore[method-assign]
    try:
        future = proto.send_request(method, params)
    finally:
        proto.get_message_type = typed  # type: ignore[method-assign]

    async def answer() -> Any:
        return await asyncio.wait_for(asyncio.wrap_future(future), WAIT_S)

    return loop.run_until_complete(answer())


def _still_serving(loop: Any, client: Client) -> None:
    answer = _request(loop, client, "codeEvidence/find", {"query": "discount_for"})
    assert answer["results"][0]["symbol"] == "discount_for"


def _uris(root: Path) -> st.SearchStrategy[Any]:
    inside = root / "src" / "shop" / "cart.py"
    return st.one_of(
        st.just(inside.as_uri()),
        st.just(root.as_uri() + "/src/../../../etc/passwd"),
        st.just(root.as_uri() + "/src/shop/%2e%2e/%2e%2e/%2e%2e/etc/passwd"),
        st.just("file:///etc/passwd"),
        st.just(root.as_uri() + "/does/not/exist.py"),
        st.just("untitled:Untitled-1"),
        st.just("http://example.com/a.py"),
        st.just("../../etc/passwd"),
        st.text(max_size=40),
        st.integers(),
        st.none(),
    )


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _find_params(root: Path) -> st.SearchStrategy[Any]:
    query = st.one_of(
        st.text(max_size=200),
        st.just("x" * 60_000),
        st.just(
            "Traceback (most recent call last):\n" + '  File "../../etc/passwd", line 1\n' * 50
        ),
        JUNK,
    )
    position = st.one_of(
        st.fixed_dictionaries(
            {"line": st.integers(-5, 2**40), "character": st.integers(-5, 2**40)}
        ),
        JUNK,
    )
    doc = st.one_of(st.fixed_dictionaries({"uri": _uris(root)}), JUNK)
    params = st.fixed_dictionaries(
        {"query": query},
        optional={
            "textDocument": doc,
            "position": position,
            "limit": st.one_of(st.integers(-3, 10**6), JUNK),
            "budgetTokens": st.one_of(st.integers(-3, 10**7), JUNK),
            "intent": st.one_of(st.sampled_from(["auto", "explain", "fix-failure"]), JUNK),
            "asOf": st.one_of(st.sampled_from(["HEAD~999", "../x", "--help"]), JUNK),
            "bogusParam": JUNK,
        },
    )
    valid = st.fixed_dictionaries(
        {"query": st.text(min_size=1, max_size=80).filter(str.strip)},
        optional={"limit": st.integers(1, 200), "budgetTokens": st.integers(1, 100_000)},
    )
    return st.one_of(valid, params, params, JUNK)


def _check_answer(answer: Any, root: Path) -> None:
    assert isinstance(answer, dict) and isinstance(answer["results"], list)
    for r in answer["results"]:
        assert not Path(r["path"]).is_absolute() and ".." not in Path(r["path"]).parts
        assert (root / r["path"]).resolve().is_relative_to(root)


def test_fuzzed_find_requests_get_an_error_or_an_answer(served: tuple[Any, Client, Path]) -> None:
    loop, client, root = served
    seen = {"error": 0, "answer": 0}

    @SETTINGS
    @given(params=_find_params(root))
    @example({"query": "discount_for", "limit": 3})
    @example({"query": "cart total " * 3000})  # over the query cap: cut, with a note
    @example({"query": "x", "textDocument": {"uri": root.as_uri() + "/../../../etc/passwd"}})
    @example({"query": "x", "limit": 10**6})
    def run(params: Any) -> None:
        try:
            answer = _request(loop, client, "codeEvidence/find", params)
        except JsonRpcException as exc:
            assert exc.code == INVALID_PARAMS, (exc.code, str(exc), params)
            seen["error"] += 1
            return
        _check_answer(answer, root)
        seen["answer"] += 1

    run()
    _still_serving(loop, client)
    print("outcomes", seen)
    assert seen["error"] and seen["answer"], seen


def test_fuzzed_hovers_never_break_the_server(served: tuple[Any, Client, Path]) -> None:
    loop, client, root = served
    seen = {"error": 0, "answer": 0}

    @SETTINGS
    @given(
        uri=_uris(root),
        line=st.one_of(st.integers(-5, 2**31), JUNK),
        character=st.one_of(st.integers(-5, 2**31), JUNK),
    )
    # Found by this test: pygls dropped such a request unanswered (the client hung).
    @example(uri=(root / "src" / "shop" / "cart.py").as_uri(), line=None, character=None)
    @example(uri=(root / "src" / "shop" / "cart.py").as_uri(), line=-1, character=-1)
    def run(uri: Any, line: Any, character: Any) -> None:
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        try:
            answer = _request(loop, client, "textDocument/hover", params)
        except JsonRpcException as exc:
            assert exc.code == INVALID_PARAMS, (exc.code, str(exc), params)
            seen["error"] += 1
            return
        seen["answer"] += 1
        assert "root:" not in str(answer)  # nothing of /etc/passwd

    run()
    _still_serving(loop, client)
    print("outcomes", seen)
    assert seen["error"] and seen["answer"], seen


def test_storm_of_new_files_collapses_into_few_passes(served: tuple[Any, Client, Path]) -> None:
    """1,200 files appear at once (a checkout, a build): the watcher's pass(es) pick them all
    up, and queries keep answering while they are indexed."""
    loop, client, root = served
    before = len(client.statuses)
    storm = root / "generated_storm"
    storm.mkdir()
    for i in range(1200):
        (storm / f"storm_{i:04d}.py").write_text(
            f"def storm_handler_{i}(event: dict) -> int:\n    return len(event) + {i}\n"
        )
    for _ in range(3):  # answers while the pass runs
        _still_serving(loop, client)
    final = loop.run_until_complete(
        wait_status(
            client,
            lambda s: s["state"] in ("ready", "partial") and s["files"] >= 1200,
            after=before,
        )
    )
    passes = [s for s in client.statuses[before:] if s["state"] == "indexing"]
    assert 1 <= len(passes) <= 3, len(passes)
    assert final["files"] >= 1200 + 7
    answer = _request(loop, client, "codeEvidence/find", {"query": "storm_handler_1117"})
    assert answer["results"][0]["symbol"] == "storm_handler_1117"
