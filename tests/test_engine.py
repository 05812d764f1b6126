"""The engine end to end on a real git repository: real tree-sitter, Tantivy, USearch, ONNX."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from code_evidence.api import FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine, EngineError
from support.project import git, init_repo


def top_paths(result, n: int = 3) -> list[str]:
    return [r.path for r in result.results[:n]]


def test_index_reflects_git_working_tree(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        report = eng.index()
        paths = {row for row in eng.parts.store.files()}
        status = eng.status()
    assert "src/shop/cart.py" in paths
    assert "build/generated_cart.py" not in paths  # .gitignore
    assert ".env" not in paths  # secret
    assert "src/shop/shipping.py" not in paths  # only on the feature branch
    assert report.skipped.get("secret") == 1
    assert status.commit == git(project, "rev-parse", "HEAD")
    assert status.branch == "main"
    assert status.pending == 0
    assert status.vectors == status.chunks > 0


def test_exact_identifier_finds_its_definition_first(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("discount_for"))
    top = res.results[0]
    assert (top.path, top.symbol) == ("src/shop/pricing.py", "discount_for")
    assert "exact-identifier" in top.reasons
    assert top.text.startswith("def discount_for")
    assert not res.insufficient


def test_natural_language_question_ranks_the_right_function(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("where is the OAuth state checked"))
    assert res.results[0].path == "src/shop/oauth.py"
    assert res.results[0].symbol == "check_oauth_state"
    assert {"bm25", "vector"} <= set(res.results[0].reasons)


def test_open_file_brings_its_imports_forward(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        plain = eng.find(FindRequest("how is the rate computed"))
        with_open = eng.find(FindRequest("how is the rate computed", open_file="src/shop/cart.py"))
    pricing = next(r for r in with_open.results if r.path == "src/shop/pricing.py")
    assert "imports" in pricing.reasons
    rank = [r.path for r in with_open.results].index("src/shop/pricing.py")
    plain_rank = [r.path for r in plain.results].index("src/shop/pricing.py")
    assert rank <= plain_rank
    assert with_open.results[0].path == "src/shop/pricing.py"


def test_cursor_line_adds_callers_and_callees(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        eng.index()
        line = next(
            i
            for i, text in enumerate((project / "src/shop/cart.py").read_text().splitlines(), 1)
            if "def total" in text
        )
        res = eng.find(
            FindRequest("voucher percentage", open_file="src/shop/cart.py", line=line, limit=20)
        )
    callee = next(r for r in res.results if r.symbol == "discount_for")
    assert "callee" in callee.reasons


def test_tests_rank_below_code_unless_asked(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        code_q = eng.find(FindRequest("cart total with voucher"))
        test_q = eng.find(FindRequest("test for cart total with voucher"))
    assert code_q.results[0].path == "src/shop/cart.py"
    assert test_q.results[0].path == "tests/test_cart.py"


def test_incremental_update_reads_only_changed_files(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        eng.index()
        (project / "src/shop/storage.py").write_text(
            (project / "src/shop/storage.py").read_text()
            + "\n\ndef archive_orders(path: Path) -> None:\n"
            + "    path.rename(path.with_suffix('.bak'))\n"
        )
        assert eng.status().pending == 1
        report = eng.index()
        assert (report.files_changed, report.files_removed) == (1, 0)
        assert report.chunks_added == 1  # only the new function; the rest kept their ids
        assert report.embedded == 1
        res = eng.find(FindRequest("archive_orders"))
        assert res.results[0].symbol == "archive_orders"
        (project / "src/shop/storage.py").unlink()
        report = eng.index()
        assert report.files_removed == 1
        assert all(
            r.path != "src/shop/storage.py" for r in eng.find(FindRequest("save_json")).results
        )


def test_kept_chunks_move_with_lines_added_above_them(project: Path, tmp_path: Path) -> None:
    """An unchanged function keeps its id and vector, but cites the lines it is on now."""
    path = project / "src/shop/storage.py"
    with Engine(project, tmp_path / "idx") as eng:
        eng.index()
        before = {e.symbol: (e.start, e.end) for e in eng.outline("src/shop/storage.py")}
        path.write_text("# one\n# two\n# three\n" + path.read_text(), encoding="utf-8")
        report = eng.index()
        assert report.chunks_added == report.embedded == 1  # only the head, with the comments
        after = {e.symbol: (e.start, e.end) for e in eng.outline("src/shop/storage.py")}
        moved = {s: span for s, span in before.items() if span[0] > 1}
        assert moved and all(after[s] == (a + 3, b + 3) for s, (a, b) in moved.items())
        lines = path.read_text(encoding="utf-8").splitlines()
        hit = eng.find(FindRequest("save_json"), refresh=False).results[0]
        assert hit.path == "src/shop/storage.py"
        assert "def save_json" in "\n".join(lines[hit.start - 1 : hit.end])


def test_switching_vectors_on_fills_an_index_built_without_them(
    project: Path, tmp_path: Path
) -> None:
    off = Config()
    off = off.changed(stages={"vectors": False})
    with Engine(project, tmp_path / "idx", config=off) as eng:
        assert eng.index().embedded == 0
    with Engine(project, tmp_path / "idx", config=Config()) as eng:
        eng.index()
        status = eng.status()
        assert status.vectors == status.chunks and status.state == "ready"


def test_branch_switch_and_copy_reuse_embeddings(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        eng.index()
        git(project, "checkout", "-q", "feature")
        report = eng.index()
        assert report.files_changed == 1 and report.embedded <= 1
        res = eng.find(FindRequest("shipping_cost"))
        assert res.results[0].path == "src/shop/shipping.py"
        assert res.branch == "feature"
        assert res.commit == git(project, "rev-parse", "HEAD")
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    with Engine(copy, tmp_path / "idx-copy") as eng2:
        report = eng2.index()
    assert report.chunks_added > 0
    assert report.embedded == 0  # the global content-addressed cache already had every chunk
    assert report.vectors_from_cache == report.chunks_added


def test_second_process_answers_read_only(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as writer:
        writer.index()
        with Engine(project, tmp_path / "idx") as reader:
            assert reader.read_only
            res = reader.find(FindRequest("discount_for"))
            assert res.index_mode == "read-only"
            assert any("writer lock" in n for n in res.notes)
            assert res.results[0].symbol == "discount_for"
    with Engine(project, tmp_path / "idx") as again:
        assert not again.read_only


@pytest.mark.parametrize("damage", ["store", "lexical", "vectors", "half-written"])
def test_corrupt_index_is_rebuilt(project: Path, tmp_path: Path, damage: str) -> None:
    idx = tmp_path / "idx"
    with Engine(project, idx) as eng:
        eng.index()
        chunks = eng.status().chunks
    if damage == "store":
        (idx / "store.sqlite").write_bytes(b"not a database" * 100)
        for extra in ("store.sqlite-wal", "store.sqlite-shm"):
            (idx / extra).unlink(missing_ok=True)
    elif damage == "lexical":
        for f in (idx / "lexical").iterdir():
            if f.name.endswith(".json"):
                f.write_text("{garbage")
    elif damage == "vectors":
        (idx / "vectors.usearch").write_bytes(os.urandom(64))
    else:  # a crash between the store transaction and the derived indexes
        with Engine(project, idx) as eng:
            eng.parts.store.set_meta_now({"derived_dirty": "1"})
            eng.parts.lexical.clear()
            eng.parts.lexical.commit()
    with Engine(project, idx) as eng:
        assert eng.notes, "the repair must be reported"
        res = eng.find(FindRequest("check_oauth_state"))
        assert res.results[0].symbol == "check_oauth_state"
        assert eng.status().chunks == chunks
        assert eng.status().vectors == chunks


def test_not_a_git_repository(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "notes.py").write_text("def remember(thing):\n    return [thing]\n")
    with Engine(ws, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("remember"))
    assert res.commit is None and res.branch is None
    assert res.results[0].symbol == "remember"


def test_bad_inputs_are_clear_and_harmless(project: Path, tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="not found"):
        Engine(tmp_path / "missing", tmp_path / "idx0")
    (project / "blob.py").write_bytes(b"\x00\x01binary\x00" * 50)
    (project / "latin.py").write_bytes(b"def caf\xe9_menu():\n    return 'cr\xe8me'\n")
    (project / "empty.py").write_text("")
    with Engine(project, tmp_path / "idx") as eng:
        report = eng.index()
        assert report.skipped.get("binary") == 1
        assert eng.status().pending == 0  # a skipped file is remembered, not pending forever
        assert eng.index().files_changed == 0
        with pytest.raises(EngineError, match="empty"):
            eng.find(FindRequest("   "))
        with pytest.raises(EngineError, match="outside"):
            eng.find(FindRequest("cart", open_file="../../etc/passwd"))
        res = eng.find(FindRequest("menu"))
        assert any(r.path == "latin.py" for r in res.results)
        before = eng.status()
    with Engine(project, tmp_path / "idx") as eng:
        assert eng.status().chunks == before.chunks


def test_empty_repository(tmp_path: Path) -> None:
    ws = tmp_path / "empty"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    with Engine(ws, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("anything at all"))
        status = eng.status()
    assert res.results == []
    assert res.insufficient
    assert status.commit is None and status.branch == "main"


def test_weak_evidence_is_flagged_not_hidden(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest('where do we log "Kafka rebalance timed out"', limit=5))
    assert res.insufficient
    assert res.insufficient_reason and "Kafka rebalance timed out" in res.insufficient_reason
    assert len(res.results) == 5  # the ranked list is still there for the caller
    assert res.context.tokens <= res.context.budget


def test_context_pack_respects_budget_and_reports_drops(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("cart total voucher discount", budget_tokens=120))
        assert 0 < res.context.tokens <= 120
        assert res.context.text.startswith("# ")
        assert res.context.dropped and {d.reason for d in res.context.dropped} <= {
            "budget",
            "duplicate",
            "per-file-quota",
            "max-blocks",
            "weak-evidence",
            "score-gap",
        }
        assert eng.embedder.count_tokens(res.context.text) == res.context.tokens


def test_question_about_something_absent_is_refused(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("configure kubernetes ingress TLS certificate rotation"))
        answered = eng.find(FindRequest("where is the OAuth state checked"))
    assert res.insufficient and res.insufficient_reason == "weak evidence: no result stands out"
    assert res.results  # still ranked for the caller
    assert len(res.context.text.split("\n# ")) == 1  # the pack is minimal: one block at most
    assert not answered.insufficient
    assert answered.confidence > res.confidence


def test_answers_are_cached_until_the_index_changes(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        first = eng.find(FindRequest("voucher discount"))
        again = eng.find(FindRequest("voucher discount"))
        assert "cache" in again.trace and "cache" not in first.trace
        assert [r.path for r in again.results] == [r.path for r in first.results]
        other = eng.find(FindRequest("voucher discount", limit=3))
        assert "cache" not in other.trace  # a different request is a different answer
        pricing = project / "src/shop/pricing.py"
        pricing.write_text(pricing.read_text().replace("0.15", "0.25"))
        fresh = eng.find(FindRequest("voucher discount"))
    assert "cache" not in fresh.trace
    assert any("0.25" in r.text for r in fresh.results)


def test_deprecated_code_nobody_calls_sinks(project: Path, tmp_path: Path) -> None:
    (project / "src/shop/mail.py").write_text(
        "import warnings\n\n\n"
        "def notify_customer_by_mail(address, body):\n"
        '    """Deprecated: use notify_customer."""\n'
        '    warnings.warn("use notify_customer", DeprecationWarning)\n'
        "    return deliver_customer_mail(address, body)\n\n\n"
        "def notify_customer(address, body):\n"
        "    return deliver_customer_mail(address, body)\n\n\n"
        "def deliver_customer_mail(address, body):\n"
        "    return (address, body)\n\n\n"
        "def checkout(cart):\n"
        "    notify_customer(cart.address, 'thanks')\n"
    )
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("notify the customer by mail", limit=50))
    by_symbol = {r.symbol: r for r in res.results}
    assert "deprecated" in by_symbol["notify_customer_by_mail"].reasons
    assert "deprecated" not in by_symbol["notify_customer"].reasons
    symbols = [r.symbol for r in res.results]
    assert symbols.index("notify_customer") < symbols.index("notify_customer_by_mail")


def test_pieces_of_one_long_function_come_back_as_one_result(project: Path, tmp_path: Path) -> None:
    body = "".join(f"    step_{i} = refund_ledger_entry({i})\n" for i in range(200))
    (project / "src/shop/refunds.py").write_text(
        f"def reconcile_refund_ledger():\n{body}    return True\n"
    )
    with Engine(project, tmp_path / "idx") as eng:
        eng.index()
        pieces = eng.outline("src/shop/refunds.py")
        res = eng.find(FindRequest("reconcile_refund_ledger refund_ledger_entry"))
    assert len(pieces) >= 2  # the chunker split it
    hits = [r for r in res.results if r.symbol == "reconcile_refund_ledger"]
    assert len(hits) == 1 and "merged" in hits[0].reasons
    assert (hits[0].start, hits[0].end) == (1, 202)


def test_as_of_answers_from_another_commit_without_touching_the_tree(
    project: Path, tmp_path: Path
) -> None:
    before = git(project, "status", "--porcelain")
    with Engine(project, tmp_path / "idx") as eng:
        past = eng.find_as_of(FindRequest("shipping_cost"), "feature")
        assert past.results[0].path == "src/shop/shipping.py"
        assert past.commit == git(project, "rev-parse", "feature")
        assert past.notes[0].startswith("answered as of feature")
        now = eng.find(FindRequest("shipping_cost"))
        assert all(r.path != "src/shop/shipping.py" for r in now.results)
        first = eng.find_as_of(FindRequest("delete_file unlink"), "HEAD~1")
        assert all(r.symbol != "delete_file" for r in first.results)
        with pytest.raises(EngineError, match="does not name a commit"):
            eng.find_as_of(FindRequest("x"), "no-such-branch")
    assert git(project, "status", "--porcelain") == before
    assert git(project, "rev-parse", "--abbrev-ref", "HEAD") == "main"


def test_as_of_in_a_folder_of_a_repository(project: Path, tmp_path: Path) -> None:
    """The snapshot is the workspace's folder at that commit, not the repository's root."""
    with Engine(project / "src", tmp_path / "idx") as eng:
        past = eng.find_as_of(FindRequest("shipping_cost"), "feature")
    assert past.results[0].path == "shop/shipping.py"


def test_pack_returns_the_class_around_a_method_when_it_fits(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        roomy = eng.find(FindRequest("Cart.total subtotal tax", budget_tokens=2000))
        tight = eng.find(FindRequest("Cart.total subtotal tax", budget_tokens=150))
    assert roomy.results[0].symbol == "Cart.total"
    assert roomy.context.text.startswith("# src/shop/cart.py:4-21  Cart\n")
    assert "def add_item" in roomy.context.text  # the whole class came with it
    assert tight.context.text.startswith("# src/shop/cart.py:18-21  Cart.total\n")


def test_freshness_from_git_history(tmp_path: Path) -> None:
    ws = tmp_path / "fresh"
    ws.mkdir()
    init_repo(ws)
    body = "def {name}(invoice):\n    return round(invoice.total * 1.2, 2)\n"
    (ws / "legacy_tax.py").write_text(body.format(name="invoice_tax_legacy"))
    git(ws, "add", "-A")
    old = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2019-01-01T00:00:00",
        "GIT_COMMITTER_DATE": "2019-01-01T00:00:00",
    }
    subprocess.run(["git", "-C", str(ws), "commit", "-qm", "old"], check=True, env=old)
    (ws / "current_tax.py").write_text(body.format(name="invoice_tax_current"))
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "new")
    cfg = Config()
    cfg = cfg.changed(ranking={"freshness_weight": 1.0})
    with Engine(ws, tmp_path / "idx", config=cfg) as eng:
        res = eng.find(FindRequest("invoice tax"))
        assert res.results[0].path == "current_tax.py"
        assert "recent" in res.results[0].reasons
        assert "recent" not in next(r for r in res.results if r.path == "legacy_tax.py").reasons
        (ws / "legacy_tax.py").write_text(body.format(name="invoice_tax_legacy") + "# touched\n")
        git(ws, "commit", "-qam", "touch legacy")  # incremental history update
        again = eng.find(FindRequest("invoice tax legacy"))
    assert "recent" in next(r for r in again.results if r.path == "legacy_tax.py").reasons
    with Engine(ws, tmp_path / "idx2") as off:  # default: weight 0, no boost, no tag
        assert all("recent" not in r.reasons for r in off.find(FindRequest("invoice tax")).results)


class _GrowingVectors:
    """The vector index as a request sees it while a pass adds vectors: each look at its size
    finds more than the last (a unit-test stand-in for a pass racing the status read)."""

    def __init__(self, real, counts: list[int]) -> None:
        self._real, self._counts = real, counts

    def __len__(self) -> int:
        return self._counts.pop(0) if len(self._counts) > 1 else self._counts[0]

    def __getattr__(self, name: str):
        return getattr(self._real, name)


def test_status_state_goes_with_the_vectors_it_shows(project: Path, tmp_path: Path) -> None:
    """A pass finishing between two reads of the vector count paired "ready" with 0 of N
    vectors (seen over MCP); the state comes from the count the status shows."""
    with Engine(project, tmp_path / "idx") as eng:
        eng.index()
        total = eng.status().vector_target
        assert total > 0 and eng.status().state == "ready"
        eng.parts.vectors = _GrowingVectors(eng.parts.vectors, [0, total])
        status = eng.status()
        assert (status.vectors, status.state) == (0, "partial")
        assert eng.status().state == "ready"
