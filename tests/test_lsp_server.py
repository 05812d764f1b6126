"""The language server end to end: pytest-lsp starts ``code-evidence serve`` as a subprocess
and talks JSON-RPC over stdio to it, on a real git repository with real indexes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES

from support.lsp import (
    WAIT_S,
    Client,
    command,
    find,
    initialize,
    make_client,
    open_doc,
    ready,
    replace_doc,
    settled,
    start,
    stop,
    wait_status,
)
from support.project import git, init_repo, write_project

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def client(project: Path, tmp_path: Path):
    c = await start(tmp_path / "idx")
    await initialize(c, project)
    await ready(c)
    yield c
    await stop(c)


def moved_head(s: dict[str, Any]) -> bool:
    return s["state"] != "indexing" and "HEAD moved" in (s["message"] or "")


def paths(answer: dict[str, Any]) -> list[str]:
    return [r["path"] for r in answer["results"]]


async def test_initial_index_reports_progress_and_status(client: Client, project: Path) -> None:
    status = next(s for s in client.statuses if s["state"] in ("ready", "partial"))
    assert status["commit"] == git(project, "rev-parse", "HEAD")
    assert status["indexedCommit"] == status["commit"]
    assert status["branch"] == "main"
    assert status["workspace"] == project.resolve().as_uri()
    assert status["files"] >= 7 and status["chunks"] > status["files"]
    assert status["lastPass"]["files_changed"] == status["files"]
    assert client.statuses[0]["state"] == "indexing"  # said before the work started
    (token, reports), *_ = client.progress_reports.items()
    assert token.startswith("codeEvidence/index/")
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    pcts = [r.percentage for r in reports[1:-1]]
    assert pcts and pcts == sorted(pcts) and pcts[-1] > pcts[0]


async def test_find_with_and_without_open_document(client: Client, project: Path) -> None:
    plain = await find(client, {"query": "discount_for"})
    top = plain["results"][0]
    assert (top["path"], top["symbol"]) == ("src/shop/pricing.py", "discount_for")
    assert top["uri"] == (project / "src/shop/pricing.py").resolve().as_uri()
    assert top["range"]["start"] == {"line": top["start"] - 1, "character": 0}
    assert top["range"]["end"] == {"line": top["end"], "character": 0}
    assert plain["indexState"] in ("ready", "partial")
    assert plain["commit"] == git(project, "rev-parse", "HEAD")
    assert plain["context"]["tokens"] > 0

    cart = project / "src/shop/cart.py"
    line = cart.read_text().splitlines().index("    def total(self) -> float:")
    uri = open_doc(client, cart)
    opened = await find(
        client,
        {
            "query": "how is the rate computed",
            "textDocument": {"uri": uri},
            "position": {"line": line + 1, "character": 8},
            "limit": 5,
        },
    )
    assert len(opened["results"]) <= 5
    pricing = next(r for r in opened["results"] if r["path"] == "src/shop/pricing.py")
    assert {"imports"} & set(pricing["reasons"]) or {"callee"} & set(pricing["reasons"])


async def test_explain_and_as_of(client: Client, project: Path) -> None:
    explained = await asyncio.wait_for(
        client.protocol.send_request_async("codeEvidence/explain", {"query": "discount_for"}),
        WAIT_S,
    )
    assert explained["results"][0]["symbol"] == "discount_for"
    assert explained["explain"][0].lstrip().startswith("1. src/shop/pricing.py:")
    assert "bm25 #" in explained["explain"][0] and "fused" in explained["explain"][0]
    past = await find(client, {"query": "shipping_cost", "asOf": "feature"})
    assert past["results"][0]["path"] == "src/shop/shipping.py"
    assert past["commit"] == git(project, "rev-parse", "feature") and past["branch"] is None
    assert past["results"][0]["uri"] == (project / "src/shop/shipping.py").resolve().as_uri()
    now = await find(client, {"query": "shipping_cost"})
    assert all(r["path"] != "src/shop/shipping.py" for r in now["results"])
    with pytest.raises(JsonRpcInvalidParams, match="does not name a commit"):
        await find(client, {"query": "x", "asOf": "no-such-ref"})


async def test_twenty_concurrent_finds_with_cancellations(client: Client, project: Path) -> None:
    queries = ["discount_for", "check_oauth_state", "save_json", "Cart.total", "tax_rate"]
    futures = []
    for i in range(20):
        params = {"query": f"{queries[i % 5]} {i}", "limit": 5}
        futures.append(
            asyncio.ensure_future(
                client.protocol.send_request_async("codeEvidence/find", params, msg_id=f"c{i}")
            )
        )
    await asyncio.sleep(0)  # every request is written before the cancels
    for i in range(0, 20, 2):
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=f"c{i}"))
    outcomes = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), WAIT_S)
    for i, outcome in enumerate(outcomes):
        if i % 2:  # never cancelled: a full, right answer
            assert outcome["results"][0]["symbol"].endswith(queries[i % 5].split(".")[-1])
        else:  # cancelled: an error, or the answer when the cancel came after it was done
            assert isinstance(outcome, JsonRpcRequestCancelled) or outcome["results"]
    after = await find(client, {"query": "discount_for"})  # and the server keeps serving
    assert after["results"][0]["symbol"] == "discount_for"


async def test_unsaved_edits_are_what_is_searched(client: Client, project: Path) -> None:
    storage = project / "src/shop/storage.py"
    uri = open_doc(client, storage)
    edited = storage.read_text() + (
        "\n\ndef compress_archive_payload(data: bytes) -> bytes:\n    return data[::-1]\n"
    )
    replace_doc(client, uri, edited, 2)
    answer = await find(client, {"query": "compress_archive_payload", "textDocument": {"uri": uri}})
    top = answer["results"][0]
    assert (top["path"], top["symbol"]) == ("src/shop/storage.py", "compress_archive_payload")
    assert "compress_archive_payload" not in storage.read_text()  # never saved

    n = len(client.statuses)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await ready(client, after=n)
    closed = await find(client, {"query": "compress_archive_payload"})
    assert all(r["symbol"] != "compress_archive_payload" for r in closed["results"])


async def test_hover_shows_definition_callers_and_related(client: Client, project: Path) -> None:
    cart = project / "src/shop/cart.py"
    lines = cart.read_text().splitlines()
    line = next(i for i, t in enumerate(lines) if "discount_for(self.code)" in t)
    uri = open_doc(client, cart)
    result = await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=lines[line].index("discount_for") + 3),
            )
        ),
        60,
    )
    assert result is not None
    md = result.contents.value  # type: ignore[union-attr]
    pricing_uri = (project / "src/shop/pricing.py").resolve().as_uri()
    assert "**Defined in**" in md and f"]({pricing_uri}#L4)" in md
    assert "[src/shop/pricing.py:4]" in md
    assert "**Callers** (1)" in md and "src/shop/cart.py:" in md
    # The caller at its call, with the call's code.
    assert "src/shop/cart.py:20]" in md
    assert "`Cart.total`: `subtotal -= subtotal * discount_for(self.code)`" in md

    blank = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=lines.index(""), character=0),
        )
    )
    assert blank is None


async def test_code_lens_then_resolve(client: Client, project: Path) -> None:
    pricing = project / "src/shop/pricing.py"
    uri = open_doc(client, pricing)
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert found is not None
    by_line = {lens.range.start.line: lens for lens in found}
    # The file's lens, then discount_for and tax_rate (0-based lines).
    assert set(by_line) == {0, 3, 12}
    assert all(by_line[n].command is None for n in (3, 12))  # cheap: resolved lazily
    # The file's lens comes resolved: the files the history changed with pricing.py (the
    # first commit added them all), each at its first line.
    file_lens = by_line[0].command
    assert file_lens is not None and file_lens.command == "codeEvidence.showRelated"
    _, at, partners = file_lens.arguments  # type: ignore[misc]
    assert at == {"line": 0, "character": 0}
    assert file_lens.title == f"changes with {len(partners)} files" and len(partners) > 1
    cart_file = (project / "src/shop/cart.py").resolve().as_uri()
    assert cart_file in {p["uri"] for p in partners}
    assert all(p["range"]["start"]["line"] == 0 for p in partners)

    resolved = await client.code_lens_resolve_async(by_line[3])
    cmd = resolved.command
    assert cmd is not None and cmd.command == "codeEvidence.showRelated"
    assert cmd.title == "1 caller · related"
    doc_uri, position, locations = cmd.arguments  # type: ignore[misc]
    assert doc_uri == uri and position == {"line": 3, "character": 0}
    cart_uri = (project / "src/shop/cart.py").resolve().as_uri()
    assert all(set(loc) == {"uri", "range"} for loc in locations)
    # The caller is listed where it calls: Cart.total's line 20, not its first line.
    in_cart = [loc["range"]["start"]["line"] for loc in locations if loc["uri"] == cart_uri]
    assert 19 in in_cart and 17 not in in_cart, in_cart

    echoed = await command(client, "codeEvidence.showRelated", doc_uri, position, locations)
    assert echoed == locations


async def test_commands(client: Client, project: Path) -> None:
    via_command = await command(client, "codeEvidence.find", {"query": "check_oauth_state"})
    via_request = await find(client, {"query": "check_oauth_state"})
    assert paths(via_command) == paths(via_request)
    assert via_command["results"][0]["path"] == "src/shop/oauth.py"

    status = await command(client, "codeEvidence.status")
    assert status["state"] in ("ready", "partial")
    assert status["commit"] == git(project, "rev-parse", "HEAD")
    assert status["pendingFiles"] == 0

    n = len(client.progress_reports)
    reindexed = await command(client, "codeEvidence.reindex")
    assert [s["workspace"] for s in reindexed] == [project.resolve().as_uri()]
    assert reindexed[0]["lastPass"]["files_changed"] == 0  # nothing changed: nothing re-read
    assert len(client.progress_reports) == n + 1  # a requested pass shows progress

    with pytest.raises(JsonRpcInvalidParams, match="takes no arguments"):
        await command(client, "codeEvidence.reindex", "now")
    with pytest.raises(JsonRpcInvalidParams, match="takes one argument"):
        await command(client, "codeEvidence.find")


async def test_file_edited_on_disk_changes_the_answer(client: Client, project: Path) -> None:
    before = await find(client, {"query": "refund_order_payment"})
    assert all(r["symbol"] != "refund_order_payment" for r in before["results"])
    n = len(client.statuses)
    pricing = project / "src/shop/pricing.py"
    pricing.write_text(
        pricing.read_text() + "\n\ndef refund_order_payment(order_id: str) -> None:\n    pass\n"
    )
    await wait_status(
        client,
        lambda s: (
            s["state"] != "indexing" and s["lastPass"] and s["lastPass"]["files_changed"] >= 1
        ),
        after=n,
    )
    after = await find(client, {"query": "refund_order_payment"})
    assert after["results"][0]["symbol"] == "refund_order_payment"
    assert after["results"][0]["path"] == "src/shop/pricing.py"


async def test_branch_checkout_moves_the_index(client: Client, project: Path) -> None:
    before = await find(client, {"query": "shipping_cost weight"})
    assert "src/shop/shipping.py" not in paths(before)  # only exists on the feature branch

    n = len(client.statuses)
    git(project, "checkout", "-q", "feature")
    moved = await wait_status(client, moved_head, after=n)
    assert moved["branch"] == "feature"
    assert moved["indexedCommit"] == git(project, "rev-parse", "HEAD")
    assert moved["lastPass"]["files_changed"] == 1  # shipping.py: nothing else re-chunked
    on_feature = await find(client, {"query": "shipping_cost weight"})
    assert on_feature["results"][0]["path"] == "src/shop/shipping.py"
    assert on_feature["branch"] == "feature"

    n = len(client.statuses)
    git(project, "checkout", "-q", "main")
    back = await wait_status(client, moved_head, after=n)
    assert back["lastPass"]["embedded"] == 0  # every chunk of main was embedded already
    assert "src/shop/shipping.py" not in paths(await find(client, {"query": "shipping_cost"}))


async def test_deleted_file_is_gone_at_once(client: Client, project: Path) -> None:
    assert paths(await find(client, {"query": "check_oauth_state"}))[0] == "src/shop/oauth.py"
    n = len(client.statuses)
    (project / "src/shop/oauth.py").unlink()
    # No waiting for the watcher: answers never cite a file that is gone.
    now = await find(client, {"query": "check_oauth_state"})
    assert "src/shop/oauth.py" not in paths(now)
    await wait_status(
        client, lambda s: s["state"] != "indexing" and s["lastPass"]["files_removed"] == 1, after=n
    )
    later = await find(client, {"query": "check_oauth_state OAuthStateError"})
    assert "src/shop/oauth.py" not in paths(later)
    assert "src/shop/oauth.py" not in later["context"]["text"]


MALFORMED = [
    ({}, "'query' is required"),
    ({"query": 3}, "'query' must be a string, got integer"),
    ({"query": "  "}, "'query' is empty"),
    ({"query": "x", "limit": "5"}, "'limit' must be an integer, got string"),
    ({"query": "x", "limit": 0}, "'limit' must be at least 1"),
    ({"query": "x", "budgetTokens": 1.5}, "'budgetTokens' must be an integer, got number"),
    ({"query": "x", "intent": "guess"}, "'intent' must be one of"),
    ({"query": "x", "qeury": "y"}, "unknown parameter(s) 'qeury'"),
    ({"query": "x", "position": {"line": 1, "character": 0}}, "'position' needs"),
    ({"query": "x", "textDocument": {"uri": "untitled:Untitled-1"}}, "only file:// URIs"),
    ({"query": "x", "textDocument": {"uri": "file:///etc/hosts"}}, "outside the workspace"),
    ({"query": "x", "textDocument": "file:///a"}, "'textDocument' must be an object"),
    ([1, 2], "params must be an object"),
]


async def test_malformed_params_get_a_clear_error(client: Client, project: Path) -> None:
    for params, message in MALFORMED:
        with pytest.raises(JsonRpcInvalidParams) as err:
            await find(client, params)
        assert message in str(err.value), params
        assert err.value.code == -32602
    # The server kept serving throughout.
    assert paths(await find(client, {"query": "tax_rate"}))[0] == "src/shop/pricing.py"


async def test_unknown_document_in_the_workspace(client: Client, project: Path) -> None:
    ghost = (project / "src/shop/ghost%20file.py").as_uri()
    with pytest.raises(JsonRpcInvalidParams, match="not open and not on disk"):
        await find(client, {"query": "x", "textDocument": {"uri": ghost}})
    # Percent-encoded names resolve to the real file.
    spaced = project / "src/shop/with space.py"
    spaced.write_text("def spaced_out_helper():\n    return 1\n")
    answer = await find(
        client,
        {
            "query": "x",
            "textDocument": {"uri": spaced.as_uri()},
            "position": {"line": 0, "character": 4},
        },
    )
    assert answer["query"] == "x"


def _blocking_client(created: asyncio.Event, release: asyncio.Event, cancel_first: bool) -> Client:
    """A client that holds its answer to window/workDoneProgress/create until released: the
    server's first pass cannot start meanwhile, which makes "indexing" a state tests can hold."""
    client = make_client(skip=(types.WINDOW_WORK_DONE_PROGRESS_CREATE,))

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    async def _create(ls: Client, params: types.WorkDoneProgressCreateParams) -> None:
        first = not ls.progress_reports
        ls.progress_reports.setdefault(params.token, [])
        if cancel_first and first:
            ls.protocol.notify(
                types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                types.WorkDoneProgressCancelParams(token=params.token),
            )
        created.set()
        await release.wait()

    assert types.WINDOW_WORK_DONE_PROGRESS_CREATE in DEFAULT_CLIENT_FEATURES
    return client


async def test_requests_during_indexing_answer_and_can_be_cancelled(
    project: Path, tmp_path: Path
) -> None:
    created, release = asyncio.Event(), asyncio.Event()
    client = await start(tmp_path / "idx", lambda: _blocking_client(created, release, False))
    try:
        await initialize(client, project)
        await asyncio.wait_for(created.wait(), 60)
        # The first pass is held: a find answers at once from what is ready, and says so.
        early = await find(client, {"query": "discount_for"})
        assert early["indexState"] == "indexing"
        assert early["results"] == []

        # A find on an edited document waits for its edits to be indexed; cancel it.
        uri = open_doc(client, project / "src/shop/cart.py")
        replace_doc(client, uri, "def recompute_loyalty_points():\n    pass\n", 2)
        fut = asyncio.ensure_future(
            client.protocol.send_request_async(
                "codeEvidence/find",
                {"query": "recompute_loyalty_points", "textDocument": {"uri": uri}},
                msg_id="slow-1",
            )
        )
        await asyncio.sleep(0)  # the request is written before the cancel
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(fut, 60)

        release.set()
        await ready(client)
        answer = await find(
            client, {"query": "recompute_loyalty_points", "textDocument": {"uri": uri}}
        )
        assert answer["results"][0]["symbol"] == "recompute_loyalty_points"
    finally:
        release.set()
        await stop(client)


async def test_progress_cancel_stops_indexing(project: Path, tmp_path: Path) -> None:
    created, release = asyncio.Event(), asyncio.Event()
    client = await start(tmp_path / "idx", lambda: _blocking_client(created, release, True))
    try:
        await initialize(client, project)
        await asyncio.wait_for(created.wait(), 60)
        release.set()
        stopped = await wait_status(client, lambda s: "cancelled" in (s["message"] or ""))
        assert stopped["files"] == 0
        [status] = await command(client, "codeEvidence.reindex")
        assert status["files"] >= 7
        assert status["state"] in ("ready", "partial")
    finally:
        release.set()
        await stop(client)


async def test_settings_apply_without_restart(project: Path, tmp_path: Path) -> None:
    client = await start(tmp_path / "idx")
    try:
        await initialize(client, project, options={"codeEvidence": {"limit": 2, "bogus": 1}})
        await ready(client)
        assert len((await find(client, {"query": "cart total price"}))["results"]) == 2
        assert any("unknown setting 'bogus'" in m.message for m in client.messages)

        n = len(client.statuses)
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(
                settings={"codeEvidence": {"limit": 1, "exclude": ["src/shop/oauth.py"]}}
            )
        )
        await wait_status(
            client,
            lambda s: s["state"] != "indexing" and (s["lastPass"] or {}).get("files_removed") == 1,
            after=n,
        )
        answer = await find(client, {"query": "check_oauth_state"})
        assert len(answer["results"]) == 1
        assert answer["results"][0]["path"] != "src/shop/oauth.py"
        assert len((await find(client, {"query": "x", "limit": 3}))["results"]) <= 3
    finally:
        await stop(client)


async def test_multi_root_workspace(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "billing"
    write_project(other, {"ledger.py": "def post_ledger_entry(amount):\n    return amount\n"})
    init_repo(other)
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "ledger")
    client = await start(tmp_path / "idx")
    try:
        await initialize(client, project, other)
        uris = {project.resolve().as_uri(), other.resolve().as_uri()}
        for uri in uris:  # each folder has its own index and reports on it
            await wait_status(client, lambda s, u=uri: settled(s) and s["workspace"] == u)
        ledger = (other / "ledger.py").as_uri()
        answer = await find(client, {"query": "post_ledger_entry", "textDocument": {"uri": ledger}})
        assert answer["results"][0]["uri"] == (other / "ledger.py").resolve().as_uri()
        assert answer["workspace"] == str(other.resolve())
        assert answer["results"][0]["workspaceFolder"] == other.resolve().as_uri()
        # Issue 21: no document → every folder is searched, merged by score, each result
        # saying its folder; workspaceFolder asks one folder.
        everywhere = await find(client, {"query": "post_ledger_entry discount_for", "limit": 30})
        assert {r["workspaceFolder"] for r in everywhere["results"]} == uris
        scores = [r["score"] for r in everywhere["results"]]
        assert scores == sorted(scores, reverse=True)
        assert set(everywhere["workspaceFolders"]) == uris
        assert any("searched 2 workspace folders" in n for n in everywhere["notes"])
        top = {r["symbol"] for r in everywhere["results"][:4]}
        assert {"post_ledger_entry", "discount_for"} <= top, everywhere["results"][:4]
        only = await find(client, {"query": "discount_for", "workspaceFolder": project.as_uri()})
        assert {r["workspaceFolder"] for r in only["results"]} == {project.resolve().as_uri()}
        with pytest.raises(JsonRpcInvalidParams, match="not a workspace folder"):
            await find(client, {"query": "x", "workspaceFolder": tmp_path.as_uri()})
        assert (await command(client, "codeEvidence.status", other.as_uri()))["files"] == 1
        reindexed = await command(client, "codeEvidence.reindex")
        assert {s["workspace"] for s in reindexed} == uris
    finally:
        await stop(client)
