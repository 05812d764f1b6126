"""The MCP server end to end: the official MCP SDK's own client (``ClientSession`` over
``stdio_client``) starts ``code-evidence mcp`` as a subprocess, on the shop project in a real
git repository, with real indexes and models. The client checks every structured answer
against the tool's declared output schema, so each call here also checks its schema.

Tests that must ask while something is still running (an index pass, a deep find) start the
same server through ``support/mcp_slow.py``, which only slows the disk, the embedder or the
cross-encoder down."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from bench.mcp_client import Answer, call, connect, server_params
from code_evidence import cli
from support import ROOT

SLOW = [str(ROOT / "tests" / "support" / "mcp_slow.py")]
WAIT_S = 120.0


def params(project: Path, tmp_path: Path, slow: dict[str, str] | None = None, *args: str) -> Any:
    return server_params(
        project, tmp_path / "idx", launcher=SLOW if slow else None, args=args, env=slow
    )


async def status(session: ClientSession) -> dict[str, Any]:
    answer = await call(session, "index_status")
    assert not answer.is_error, answer.text
    assert answer.data is not None
    return answer.data


async def until(session: ClientSession, pred: Any, timeout: float = WAIT_S) -> dict[str, Any]:
    """Poll ``index_status`` until ``pred(status)``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        s = await status(session)
        if pred(s):
            return s
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"status never matched: {s}")
        await asyncio.sleep(0.05)


def top(answer: Answer) -> tuple[str, str]:
    assert answer.data is not None, answer.text
    assert answer.data["results"], answer.text
    first = answer.data["results"][0]
    return first["path"], first["symbol"]


@pytest.mark.asyncio
async def test_tools_are_listed_with_their_schemas(project: Path, tmp_path: Path) -> None:
    async with connect(params(project, tmp_path)) as session:
        listed = (await session.list_tools()).tools
    by_name = {t.name: t for t in listed}
    assert list(by_name) == ["find_evidence", "explain_evidence", "related_code", "index_status"]
    find = by_name["find_evidence"]
    props = find.input_schema["properties"]
    assert set(props) == {
        "query",
        "open_file",
        "line",
        "limit",
        "budget_tokens",
        "intent",
        "as_of",
        "depth",
    }
    assert find.input_schema["required"] == ["query"]
    assert props["depth"]["default"] == "deep" and props["limit"]["default"] == 10
    assert by_name["related_code"].input_schema["required"] == ["path", "line"]
    for tool in listed:
        assert tool.description and tool.output_schema is not None
        assert tool.output_schema["type"] == "object"
        assert tool.input_schema.get("additionalProperties") is False
        assert tool.annotations is not None and tool.annotations.read_only_hint


@pytest.mark.asyncio
async def test_find_explain_related_and_status(project: Path, tmp_path: Path) -> None:
    async with connect(params(project, tmp_path)) as session:
        found = await call(session, "find_evidence", {"query": "voucher discount percentage"})
        assert not found.is_error, found.text
        assert top(found) == ("src/shop/pricing.py", "discount_for")
        data = found.data
        assert data is not None
        first = data["results"][0]
        assert (first["start"], first["end"]) == (4, 10)  # 1-based, as the CLI says
        assert first["reasons"] and not data["insufficient"]
        # The text a host shows the model is the context pack (cited code under path:lines
        # headers), after a line on the index state while it is not ready.
        assert data["context"]["text"].startswith("# src/shop/pricing.py:4-10  discount_for")
        assert found.text.endswith(data["context"]["text"])
        if data["index"]["state"] != "ready":
            assert found.text.startswith(f"index: {data['index']['state']}")
        assert data["index"]["state"] in ("indexing", "partial", "ready")

        explained = await call(
            session, "explain_evidence", {"query": "tax rate for a region", "limit": 3}
        )
        assert explained.data is not None
        assert len(explained.data["explain"]) >= 3
        assert "bm25 #" in explained.text and "tax_rate" in explained.text

        related = await call(session, "related_code", {"path": "src/shop/cart.py", "line": 20})
        assert related.data is not None, related.text
        assert related.data["symbol"] == "Cart.total"
        callees = {c["symbol"] for c in related.data["callees"]}
        assert {"discount_for", "tax_rate"} <= callees
        assert [t["symbol"] for t in related.data["tests"]] == ["test_total_with_voucher"]
        assert related.data["callers"][0]["path"] == "tests/test_cart.py"
        # A caller opens where it calls, a definition at its first line.
        caller = related.data["callers"][0]
        test_lines = (project / caller["path"]).read_text().splitlines()
        assert caller["start"] < caller["line"] and ".total()" in test_lines[caller["line"] - 1]
        assert related.data["definitions"][0]["line"] == related.data["definitions"][0]["start"]
        assert related.data["definitions"][0]["first_line"] == "def total(self) -> float:"
        assert "calls:" in related.text and "src/shop/pricing.py:13-14 tax_rate" in related.text
        # The text shows a caller's call, not its signature.
        assert "assert round(cart.total(), 2) == 10.2" in related.text
        # The files the history changed with cart.py: the first commit added them all.
        changed = related.data["changed_with"]
        assert changed and all((project / c["path"]).is_file() for c in changed)
        assert "src/shop/pricing.py" in {c["path"] for c in changed}
        assert all(c["commits"] == 1 and 0 < c["strength"] <= 1 for c in changed)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", changed[0]["last_changed"])
        assert (
            f"  {changed[0]['path']} (1 commit, last {changed[0]['last_changed']})"
            in (related.text.split("changed with its file:\n", 1)[1])
        )

        # Wait for every vector (a pass that never embeds them times out here). The state
        # alone is not waited on: it is read on the request's own store connection and was
        # seen "ready" a moment before the vectors (1 run in 8 at d825788; not yet located).
        s = await until(
            session, lambda s: s["state"] == "ready" and s["vectors_done"] == s["vectors_total"]
        )
        assert s["files"] >= 8 and s["chunks"] >= s["files"]
        assert s["vectors_done"] == s["vectors_total"] == s["chunks"]
        assert s["branch"] == "main" and s["commit"] == s["indexed_commit"]
        assert s["pending_files"] == 0 and s["tuned"] == "defaults"
        assert s["read_only"] is False


@pytest.mark.asyncio
async def test_bad_calls_get_clear_errors_and_the_server_keeps_serving(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def elsewhere():\n    pass\n")
    async with connect(params(project, tmp_path)) as session:
        cases = [
            ({"query": "cart", "colour": "red"}, "unknown argument 'colour'"),
            ({"query": "   "}, "'query' is empty"),
            ({}, "'query' is required"),
            ({"query": "cart", "limit": 0}, "'limit' must be between 1 and 200"),
            ({"query": "cart", "limit": "ten"}, "'limit' must be an integer"),
            ({"query": "cart", "depth": "deepest"}, "'depth' must be one of interactive, deep"),
            ({"query": "cart", "line": 3}, "'line' needs 'open_file'"),
            ({"query": "cart", "open_file": "../../etc/passwd"}, "outside the workspace"),
            ({"query": "cart", "open_file": str(outside)}, "outside the workspace"),
            ({"query": "cart", "open_file": "src/shop/nowhere.py"}, "no file"),
            ({"query": "cart", "as_of": "no-such-ref"}, "no-such-ref"),
        ]
        for args, message in cases:
            answer = await call(session, "find_evidence", args)
            assert answer.is_error, (args, answer.text)
            assert message in answer.text, (args, answer.text)
        bad_related = await call(session, "related_code", {"path": "/etc/passwd", "line": 1})
        assert bad_related.is_error and "outside the workspace" in bad_related.text
        with pytest.raises(MCPError, match="unknown tool 'grep'"):
            await session.call_tool("grep", {"pattern": "x"})
        # Still serving, and paths given absolute inside the workspace come back relative.
        ok = await call(
            session,
            "find_evidence",
            {"query": "discount_for", "open_file": str(project / "src/shop/cart.py"), "line": 20},
        )
        assert not ok.is_error and top(ok) == ("src/shop/pricing.py", "discount_for")


@pytest.mark.asyncio
async def test_insufficient_evidence_is_said_plainly(project: Path, tmp_path: Path) -> None:
    async with connect(params(project, tmp_path)) as session:
        answer = await call(
            session, "find_evidence", {"query": "kubernetes helm chart ingress annotations"}
        )
    assert answer.data is not None and answer.data["insufficient"]
    assert "No reliable evidence for 'kubernetes helm chart ingress annotations'" in answer.text
    assert "do not rely on them" in answer.text


@pytest.mark.asyncio
async def test_a_file_edited_between_two_calls_is_seen_by_the_second(
    project: Path, tmp_path: Path
) -> None:
    async with connect(params(project, tmp_path)) as session:
        before = await call(session, "find_evidence", {"query": "recompute_loyalty_points"})
        assert before.data is not None
        assert all(r["symbol"] != "recompute_loyalty_points" for r in before.data["results"])
        cart = project / "src/shop/cart.py"
        cart.write_text(
            cart.read_text() + "\n\ndef recompute_loyalty_points(cart):\n    return 0\n"
        )
        after = await call(session, "find_evidence", {"query": "recompute_loyalty_points"})
        assert top(after) == ("src/shop/cart.py", "recompute_loyalty_points"), after.text


@pytest.mark.asyncio
async def test_an_edit_the_watcher_is_still_handing_over_is_seen(
    project: Path, tmp_path: Path
) -> None:
    """The debouncer's thread has taken the edit's batch but its ignore check (``git
    check-ignore``, slow on a busy machine) has not returned when the question comes: the
    question waits for it instead of finding no pass requested and answering from before."""
    async with connect(params(project, tmp_path, {"CE_SLOW_IGNORE_S": "1.5"})) as session:
        await until(session, lambda s: s["state"] == "ready")
        cart = project / "src/shop/cart.py"
        cart.write_text(cart.read_text() + "\n\ndef apply_gift_wrap(cart):\n    return 0\n")
        await asyncio.sleep(0.5)  # past the debouncer's quiet period: its flush has the batch
        after = await call(session, "find_evidence", {"query": "apply_gift_wrap"})
        assert top(after) == ("src/shop/cart.py", "apply_gift_wrap"), after.text


@pytest.mark.asyncio
async def test_a_call_while_the_index_is_still_building(project: Path, tmp_path: Path) -> None:
    """The first pass reads slowly and embeds for minutes: a question waits at most
    --index-wait for lexical readiness, answers from what exists and says how far indexing
    is; once the text part is in, questions answer from it while embedding goes on."""
    # A cold embedding cache of its own: chunks other tests embedded must not skip the model.
    slow = {
        "CE_SLOW_READ_S": "0.6",
        "CE_SLOW_EMBED_S": "300",
        "CODE_EVIDENCE_CACHE_DIR": str(tmp_path / "cold-cache"),
    }
    async with connect(params(project, tmp_path, slow, "--index-wait", "1")) as session:
        early = await call(session, "find_evidence", {"query": "discount_for"})
        assert not early.is_error, early.text
        assert early.data is not None
        assert early.data["index"]["state"] == "indexing"
        assert early.data["results"] == []
        assert early.data["notes"][0].startswith("indexing")
        assert "waited 1 s" in early.data["notes"][0]
        assert early.text.startswith("index: indexing")

        s = await until(session, lambda s: (s["progress"] or 0) >= 50)
        assert s["state"] == "indexing" and s["vectors_done"] == 0
        later = await call(session, "find_evidence", {"query": "discount_for"})
        assert top(later) == ("src/shop/pricing.py", "discount_for")
        assert later.data is not None and later.data["index"]["state"] == "indexing"
        assert "vectors unavailable" in " ".join(later.data["notes"])


@pytest.mark.asyncio
async def test_status_is_answered_while_a_deep_find_runs_and_a_cancel_stops_it(
    project: Path, tmp_path: Path
) -> None:
    slow = {"CE_SLOW_PAIR_S": "0.4"}
    async with connect(params(project, tmp_path, slow)) as session:
        await until(session, lambda s: s["state"] == "ready")
        deep = asyncio.create_task(
            call(session, "find_evidence", {"query": "how is the cart total computed"})
        )
        s = await until(session, lambda s: s["requests_running"] >= 1)
        assert not deep.done()  # status answered while the deep find runs
        assert s["state"] == "ready"
        answer = await deep
        assert not answer.is_error and answer.data is not None
        assert answer.data["trace"]["rerank"]["candidates"] >= 5  # the slow pairs were scored

        # Cancel one: the client's notifications/cancelled stops it between two pairs, so it
        # never finishes (the request log records only finished answers).
        question = "which function saves data as json"
        task = asyncio.create_task(call(session, "find_evidence", {"query": question}))
        await until(session, lambda s: s["requests_running"] >= 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(session, lambda s: s["requests_running"] == 0 and s["requests_queued"] == 0)
        after = await call(
            session, "find_evidence", {"query": "discount_for", "depth": "interactive"}
        )
        assert not after.is_error
    log = [json.loads(line) for line in (tmp_path / "idx" / "requests.jsonl").open()]
    queries = [entry.get("query") for entry in log]
    assert "how is the cart total computed" in queries
    assert question not in queries


def test_without_the_sdk_the_command_says_how_to_install_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(sys.modules):
        if name == "mcp" or name.startswith(("mcp.", "code_evidence.mcp.server")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp -> ModuleNotFoundError
    assert cli.main(["mcp", "--workspace", str(project)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'code-evidence[mcp]'" in err


@pytest.mark.asyncio
async def test_a_bad_config_file_is_said_on_every_answer_and_the_server_keeps_serving(
    project: Path, tmp_path: Path
) -> None:
    """A hostile or broken ``.code-evidence.toml`` must not cost the agent its server:
    defaults apply and the answer says why; once fixed the note goes; broken again, the last
    good settings stay and the answer says so. (The watcher hears of a write a moment after
    it: the answers are polled, as an agent would ask again.)"""
    config = project / ".code-evidence.toml"
    config.write_text("[ranking]\nno_such_key = 1\n")

    async def notes_until(session: ClientSession, pred: Any) -> list[str]:
        deadline = asyncio.get_running_loop().time() + WAIT_S
        while True:
            answer = await call(session, "find_evidence", {"query": "cart total"})
            assert not answer.is_error and answer.data is not None, answer.text
            assert answer.data["results"], answer.text
            notes = answer.data["notes"]
            if pred(notes) or asyncio.get_running_loop().time() > deadline:
                return notes
            await asyncio.sleep(0.1)

    def says(*words: str) -> Any:
        return lambda notes: any(all(w in n for w in words) for n in notes)

    async with connect(params(project, tmp_path)) as session:
        first = await notes_until(session, says("ignored, defaults used", "no_such_key"))
        assert says("ignored, defaults used", "no_such_key")(first), first
        config.write_text("[context]\nbudget_tokens = 3000\n")
        fixed = await notes_until(session, lambda notes: not says(".code-evidence.toml")(notes))
        assert not says(".code-evidence.toml")(fixed), fixed
        config.write_text("[context]\nbudget_tokens = 'lots'\n")
        broken = await notes_until(session, says("last good settings stay", "budget_tokens"))
        assert says("not applied", "last good settings stay", "budget_tokens")(broken), broken
