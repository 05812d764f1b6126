"""The language server's pieces without JSON-RPC: URI conversion, parameter validation,
settings, hover text, the debouncer on a fake clock, and the watcher on a real folder and git
repo."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_evidence.api import ChangedWith
from code_evidence.git import Git
from code_evidence.live.watch import Batch, Debouncer, FolderWatcher, IgnoreFilter
from code_evidence.lsp import protocol
from code_evidence.lsp.features import hover, lenses
from code_evidence.lsp.uris import UriError, line_range, relative_to, uri_to_path
from support.project import git, init_repo


def test_uri_to_path_decodes_and_refuses() -> None:
    assert uri_to_path("file:///tmp/a%20b/c%23d.py") == Path("/tmp/a b/c#d.py")
    assert uri_to_path("file://localhost/tmp/x.py") == Path("/tmp/x.py")
    with pytest.raises(UriError, match="only file:// URIs"):
        uri_to_path("untitled:Untitled-1")
    with pytest.raises(UriError, match="remote host"):
        uri_to_path("file://server/share/x.py")
    with pytest.raises(UriError, match="NUL"):
        uri_to_path("file:///tmp/a%00b")
    with pytest.raises(UriError, match="empty"):
        uri_to_path("")


def test_relative_to_stays_inside(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("x = 1\n")
    (root / "link.py").symlink_to(tmp_path / "outside.py")
    assert relative_to(root, root / "src" / "a.py") == "src/a.py"
    assert relative_to(root, root / "src" / ".." / ".." / "outside.py") is None
    assert relative_to(root, root / "link.py") is None  # resolves outside the workspace
    assert relative_to(root, root) is None


def test_line_range_is_whole_lines_end_exclusive() -> None:
    assert line_range(4, 10) == {
        "start": {"line": 3, "character": 0},
        "end": {"line": 10, "character": 0},
    }


def test_find_params_parse() -> None:
    p = protocol.parse_find_params(
        {
            "query": "q",
            "textDocument": {"uri": "file:///w/a.py"},
            "position": {"line": 4, "character": 2},
            "budgetTokens": 500,
            "intent": "explain",
            "workDoneToken": "t",
        }
    )
    assert (p.uri, p.line, p.character, p.budget_tokens, p.intent) == (
        "file:///w/a.py",
        4,
        2,
        500,
        "explain",
    )
    with pytest.raises(protocol.ParamsError, match="'limit' must be an integer, got boolean"):
        protocol.parse_find_params({"query": "q", "limit": True})
    with pytest.raises(protocol.ParamsError, match=r"'position\.line' is required"):
        protocol.parse_find_params(
            {"query": "q", "textDocument": {"uri": "file:///a"}, "position": {"character": 1}}
        )
    assert protocol.parse_find_params({"query": "q"}).depth == "interactive"
    assert protocol.parse_find_params({"query": "q", "depth": "deep"}).depth == "deep"
    with pytest.raises(protocol.ParamsError, match="'depth' must be one of quick, interactive"):
        protocol.parse_find_params({"query": "q", "depth": "forever"})


def test_settings_keep_good_keys_and_explain_bad_ones() -> None:
    s, warnings = protocol.parse_settings(
        {"limit": 3, "rerank": "sometimes", "exclude": ["docs/**", ""], "budgetTokens": -1}
    )
    assert s == protocol.Settings(limit=3, exclude=("docs/**",))
    assert any("rerank must be one of" in w for w in warnings)
    assert any("budgetTokens must be an integer from 0 to 100000" in w for w in warnings)
    # Issue 21: the engine's range, 0 (no context pack) included, and nothing past it.
    assert protocol.parse_settings({"budgetTokens": 0}) == (protocol.Settings(budget_tokens=0), [])
    big, warnings = protocol.parse_settings({"budgetTokens": 200_000, "limit": 201})
    assert big == protocol.Settings() and len(warnings) == 2
    assert protocol.settings_section({"codeEvidence": {"limit": 1}}) == {"limit": 1}
    assert protocol.settings_section({"limit": 1}) == {"limit": 1}
    assert protocol.settings_section({"python": {"x": 1}}) is None


def test_identifier_at() -> None:
    line = "    subtotal -= subtotal * discount_for(self.code)"
    assert hover.identifier_at(line, line.index("discount_for") + 4) == "discount_for"
    assert hover.identifier_at(line, line.index("discount_for")) == "discount_for"
    assert hover.identifier_at(line, 0) is None  # whitespace
    assert hover.identifier_at("    return x", 6) is None  # keyword
    assert hover.identifier_at("", 0) is None


def test_hover_shows_a_callers_call_as_code_whatever_backticks_it_holds() -> None:
    """A JavaScript template literal in the call line must not break the inline code."""
    assert hover._code("run(x)") == "`run(x)`"
    assert hover._code("log(`id ${id}`)") == "``log(`id ${id}`)``"
    assert hover._code("`a``") == "``` `a`` ```"


class FakeClock:
    """The debouncer's clock, moved by the test. Its waits end only on a notify (an event, a
    close, or :meth:`advance`), never on wall time; :meth:`advance` returns once the debouncer
    has looked at the new time and is waiting again, so what it did is done."""

    def __init__(self) -> None:
        self.t = 0.0
        self._waits = 0  # how many times the debouncer has started waiting
        self._seen = threading.Condition()
        self._cond: threading.Condition | None = None

    def now(self) -> float:
        return self.t

    def wait(self, cond: threading.Condition, timeout: float | None) -> None:
        self._cond = cond
        with self._seen:
            self._waits += 1
            self._seen.notify_all()
        cond.wait()

    def advance(self, seconds: float = 0.0) -> None:
        """Move time on, wake the debouncer and wait until it is back in a wait (its flush, if
        one was due, has returned by then)."""
        with self._seen:
            assert self._seen.wait_for(lambda: self._cond is not None, 10), "never waited"
        assert self._cond is not None
        with self._cond:
            self.t += seconds
            with self._seen:
                before = self._waits
            self._cond.notify_all()
        with self._seen:
            assert self._seen.wait_for(lambda: self._waits > before, 10), "debouncer stuck"


@pytest.fixture
def debounced() -> Iterator[tuple[Debouncer, FakeClock, list[Batch]]]:
    """A debouncer (1 s of quiet, at most 3 s) on a fake clock, and the batches it flushes."""
    clock = FakeClock()
    batches: list[Batch] = []
    deb = Debouncer(batches.append, quiet_s=1.0, max_wait_s=3.0, clock=clock)
    clock.advance()  # its thread is up and idle
    try:
        yield deb, clock, batches
    finally:
        deb.close()


def test_debouncer_collapses_a_burst_into_one_batch(
    debounced: tuple[Debouncer, FakeClock, list[Batch]],
) -> None:
    deb, clock, batches = debounced
    for i in range(2000):
        deb.add(f"/w/f{i}.py")
    deb.add(head=True)
    clock.advance(0.99)
    assert batches == []  # not quiet for long enough yet
    clock.advance(0.01)
    assert len(batches) == 1
    assert len(batches[0].paths) == 2000 and batches[0].head and batches[0].events == 2001
    clock.advance(10)
    assert len(batches) == 1  # nothing new: nothing flushed


def test_debouncer_waits_for_quiet_after_the_last_event(
    debounced: tuple[Debouncer, FakeClock, list[Batch]],
) -> None:
    deb, clock, batches = debounced
    deb.add("/w/a.py")
    clock.advance(0.9)
    deb.add(buffers=True)  # the quiet period starts again
    clock.advance(0.9)
    assert batches == []
    clock.advance(0.1)
    assert [(b.paths, b.buffers, b.events) for b in batches] == [({"/w/a.py"}, True, 2)]


def test_debouncer_flushes_a_never_ending_stream_at_max_wait(
    debounced: tuple[Debouncer, FakeClock, list[Batch]],
) -> None:
    deb, clock, batches = debounced
    for i in range(6):  # an event every half second: never quiet for a whole second
        deb.add(f"/w/{i}.py")
        clock.advance(0.5)
    assert len(batches) == 1 and batches[0].events == 6  # at 3 s after the first event
    deb.add("/w/late.py")
    clock.advance(1.0)
    assert [b.paths for b in batches[1:]] == [{"/w/late.py"}]  # a new burst, its own clock


def test_debouncer_survives_a_failing_flush_and_stops_on_close() -> None:
    clock = FakeClock()
    batches: list[Batch] = []

    def flush(batch: Batch) -> None:
        batches.append(batch)
        if len(batches) == 1:
            raise RuntimeError("the first batch fails")

    deb = Debouncer(flush, quiet_s=1.0, max_wait_s=3.0, clock=clock)
    deb.add("/w/a.py")
    clock.advance(1.0)
    deb.add("/w/b.py")
    clock.advance(1.0)
    assert [b.paths for b in batches] == [{"/w/a.py"}, {"/w/b.py"}]
    deb.add("/w/c.py")
    deb.close()  # a pending batch is dropped: its passes are no longer wanted
    assert len(batches) == 2


def test_take_waits_for_the_batch_the_debouncer_is_handing_over() -> None:
    """A batch the debouncer's thread has taken but not yet acted on (its flush runs ``git
    check-ignore``, slow under load) is not pending any more: ``take`` must wait for that
    flush, or ``settle`` finds no pass requested and answers from the index as it was."""
    entered, release = threading.Event(), threading.Event()
    handed: list[Batch] = []

    def flush(batch: Batch) -> None:
        entered.set()
        release.wait(10)
        handed.append(batch)

    deb = Debouncer(flush, quiet_s=0.01, max_wait_s=0.05)
    try:
        deb.add("/w/a.py")
        assert entered.wait(10)
        threading.Timer(0.3, release.set).start()
        assert deb.take(timeout=10) is None  # nothing pending: the batch is in the flush
        assert [b.paths for b in handed] == [{"/w/a.py"}]  # ...which returned before take
    finally:
        release.set()
        deb.close()


def test_ignore_filter_uses_git_rules(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    init_repo(root)
    (root / ".gitignore").write_text("build/\n*.log\n")
    paths = [str(root / p) for p in ("src/a.py", "build/out.py", "x.log", "README.md")]
    assert IgnoreFilter(root, Git(root)).relevant(paths) == ["src/a.py", "README.md"]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".gitignore").write_text("build/\n")
    got = IgnoreFilter(plain, Git(plain)).relevant([str(plain / "build/x.py"), "/elsewhere"])
    assert got == []


def _watched_repo(tmp_path: Path) -> Path:
    root = (tmp_path / "repo").resolve()
    root.mkdir()
    init_repo(root)
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    return root


def test_watcher_sees_file_bursts_and_head_moves(tmp_path: Path) -> None:
    root = _watched_repo(tmp_path)
    batches: list[Batch] = []
    got = threading.Event()

    def flush(batch: Batch) -> None:
        batches.append(batch)
        got.set()

    deb = Debouncer(flush, quiet_s=0.5, max_wait_s=30.0)
    watcher = FolderWatcher(root, deb, Git(root))
    watcher.start()
    try:
        assert watcher.error is None
        for i in range(300):
            (root / f"gen_{i}.py").write_text(f"v = {i}\n")
        assert got.wait(20)
        files = set().union(*(b.paths for b in batches))
        assert {str(root / f"gen_{i}.py") for i in range(300)} <= files
        assert len(batches) <= 2  # one burst, at most split once by scheduling

        batches.clear()
        got.clear()
        git(root, "commit", "--allow-empty", "-q", "-m", "two")  # HEAD moves, no file changes
        deadline = time.monotonic() + 20
        while not any(b.head for b in batches) and time.monotonic() < deadline:
            got.wait(0.5)
        assert any(b.head for b in batches)
        assert not any(p.startswith(str(root / ".git")) for b in batches for p in b.paths)
    finally:
        watcher.stop()
        deb.close()


def test_fence_hands_every_earlier_write_to_the_debouncer(tmp_path: Path) -> None:
    """A write made before ``fence`` is in the debouncer when it returns: what ``settle``
    relies on to answer a question about code an agent edited a moment ago. The probe files
    stay in the private folder: none reaches the debouncer, none is left behind."""
    root = _watched_repo(tmp_path)
    deb = Debouncer(lambda batch: None, quiet_s=60.0, max_wait_s=120.0)  # never flushes here
    probes = tmp_path / "index" / "watch-probe"
    watcher = FolderWatcher(root, deb, Git(root), probe_dir=probes)
    watcher.start()
    try:
        assert watcher.error is None
        for i in range(40):
            if i % 2:  # written in place
                (root / f"edit_{i}.py").write_text(f"v = {i}\n")
            else:  # saved as editors and agents often do: a temporary file renamed over it
                (root / f".edit_{i}.tmp").write_text(f"v = {i}\n")
                os.replace(root / f".edit_{i}.tmp", root / f"edit_{i}.py")
            assert watcher.fence()
            batch = deb.take(timeout=0)
            assert batch is not None and str(root / f"edit_{i}.py") in batch.paths
            assert not any(p.startswith(str(probes)) for p in batch.paths)
        assert list(probes.iterdir()) == []
    finally:
        watcher.stop()
        deb.close()


def test_fence_without_a_probe_and_a_probe_that_never_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No probe folder: no fence (``settle`` waits ``EVENT_LATENCY_S``). A probe past its
    timeout costs one timeout; questions then wait the fixed time instead of each paying it,
    until that probe shows up."""
    root = _watched_repo(tmp_path)
    deb = Debouncer(lambda batch: None)
    plain = FolderWatcher(root, deb, Git(root))
    plain.start()
    probed = FolderWatcher(root, deb, Git(root), probe_dir=tmp_path / "probe")
    probed.start()
    try:
        assert not plain.fence()
        assert probed.fence()
        assert probed.probing
        late: list[str] = []
        monkeypatch.setattr(probed, "_probe_seen", late.append)  # held back, as if far behind
        assert not probed.fence(timeout=0.3)
        assert not probed.probing and not probed.fence()  # no second timeout meanwhile
        monkeypatch.undo()
        probed._probe_seen(late[0])  # it shows up after all: probing resumes
        assert probed.probing and probed.fence()
    finally:
        plain.stop()
        probed.stop()
        deb.close()


def test_the_file_lens_lists_the_history_s_partners_or_is_absent(tmp_path: Path) -> None:
    """A file with no partner in the history (a plain folder, a new file) gets no lens; one
    partner is ``1 file``, each opened at its first line."""
    uri = (tmp_path / "a.py").as_uri()
    assert lenses.changes_with(tmp_path, uri, []) == []
    (lens,) = lenses.changes_with(tmp_path, uri, [ChangedWith("b.py", 3, "2026-11-30", 0.4)])
    assert lens.command is not None and lens.command.title == "changes with 1 file"
    _, _, (where,) = lens.command.arguments  # type: ignore[misc]
    assert where["uri"] == (tmp_path / "b.py").as_uri()
    assert where["range"]["start"] == {"line": 0, "character": 0}
