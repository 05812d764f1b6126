"""Embedding order and batching (issue 7): the open files' neighbourhood first, source code
before tests, docs and translations, recently changed files first within each; a duplicate text
is embedded once per pass; batch size never changes a vector."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from code_evidence.api import Chunk
from code_evidence.engine import Engine
from code_evidence.index import indexer
from code_evidence.index.indexer import (
    PRIORITY_BULK,
    PRIORITY_OTHER,
    PRIORITY_SOURCE,
    PRIORITY_TESTS,
    embed_priority,
)
from code_evidence.models.embedder import Embedder
from code_evidence.models.onnx import physical_cores
from support.project import git, init_repo, write_files


def chunk(path: str, **flags: object) -> Chunk:
    language = "python" if path.endswith(".py") else "text"
    kind = "function" if language == "python" else "window"
    return Chunk(
        path=path,
        start=1,
        end=1,
        symbol="f",
        kind=kind,
        language=language,
        text="def f():\n    pass\n",
        hash="h",
        **flags,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("path", "flags", "expected"),
    [
        ("django/db/models/query.py", {}, PRIORITY_SOURCE),
        ("src/App.py", {}, PRIORITY_SOURCE),
        ("django/contrib/admin/templates/admin/base.html", {}, PRIORITY_OTHER),
        ("tests/test_query.py", {"is_test": True}, PRIORITY_TESTS),
        ("docs/ref/models.txt", {}, PRIORITY_TESTS),
        ("Docs/guide/intro.py", {}, PRIORITY_TESTS),
        ("django/conf/locale/de/LC_MESSAGES/django.po", {}, PRIORITY_BULK),
        ("po/fr.po", {}, PRIORITY_BULK),
        ("django/contrib/auth/migrations/0001_initial.py", {}, PRIORITY_BULK),
        ("build/gen.py", {"is_generated": True}, PRIORITY_BULK),
        ("vendor/lib.py", {"is_vendor": True}, PRIORITY_BULK),
    ],
)
def test_embed_priority(path: str, flags: dict[str, object], expected: int) -> None:
    assert embed_priority(chunk(path, **flags)) == expected


def test_physical_cores_is_within_the_cpus_we_may_use() -> None:
    cores = physical_cores()
    assert 1 <= cores <= (os.cpu_count() or 1)
    assert Embedder().threads == cores


class RecordingEmbedder(Embedder):
    """The real model; remembers every text it was asked to embed, in order."""

    def __init__(self) -> None:
        super().__init__(threads=2)
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return super().embed(texts)


def test_source_is_embedded_before_tests_docs_and_migrations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODE_EVIDENCE_CACHE_DIR", str(tmp_path / "cold-cache"))
    monkeypatch.setattr(indexer, "EMBED_BATCH", 1)  # one model call per chunk: order shows
    ws = tmp_path / "ws"
    write_files(
        ws,
        {
            "aaa/locale/de/django.po": 'msgid "apple"\nmsgstr "Apfel"\n',
            "aaa/migrations/0001_initial.py": "def forwards(apps):\n    return apps\n",
            "aaa/tests/test_tax.py": "def test_tax_is_positive():\n    assert tax(1) > 0\n",
            "aaa/docs/guide.md": "# Guide\n\nHow taxes are computed.\n",
            "zzz/pricing.py": "def tax(amount):\n    return amount * 0.2\n",
        },
    )
    recorder = RecordingEmbedder()
    with Engine(ws, tmp_path / "idx", embedder=recorder) as eng:
        report = eng.index()
        # The translation catalog is BM25 only (filekinds.wants_vector): ready without it.
        assert report.chunks_total == 5
        assert report.embedded == len(eng.parts.vectors) == 4
        assert eng.state == "ready"
    order = [text.split("\n", 1)[0] for text in recorder.seen]
    assert order[0] == "zzz/pricing.py"
    assert order[-1] == "aaa/migrations/0001_initial.py"
    assert set(order[1:3]) == {"aaa/tests/test_tax.py", "aaa/docs/guide.md"}


def test_duplicate_texts_in_one_pass_are_embedded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODE_EVIDENCE_CACHE_DIR", str(tmp_path / "cold-cache"))
    monkeypatch.setattr(indexer, "EMBED_BATCH", 2)
    ws = tmp_path / "ws"
    # Identical windows of one file (same path, same heading, same text): one embedding key.
    write_files(ws, {"notes.txt": "the same line\n" * 400, "app.py": "def run():\n    return 1\n"})
    recorder = RecordingEmbedder()
    with Engine(ws, tmp_path / "idx", embedder=recorder) as eng:
        report = eng.index()
        chunks = list(eng.parts.store.all_chunks())
        keys = {sc.emb_key for sc in chunks}
        assert len(chunks) > len(keys) >= 2  # the fixture really has duplicates
        assert report.embedded == len(keys) == len(recorder.seen)
        assert len(eng.parts.vectors) == len(chunks)  # every chunk still has its vector
        assert eng.state == "ready"


def test_open_files_and_their_imports_are_embedded_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODE_EVIDENCE_CACHE_DIR", str(tmp_path / "cold-cache"))
    monkeypatch.setattr(indexer, "EMBED_BATCH", 1)
    ws = tmp_path / "ws"
    write_files(
        ws,
        {
            "app/__init__.py": "",
            "app/alpha.py": "def a():\n    return 0\n",  # shortest: first without a focus
            "app/open_me.py": "from app.helper import assist\n\n\ndef run_the_job():\n"
            "    return assist() + assist()\n",
            "app/helper.py": "def assist():\n    return sum(range(10)) * 2\n",
        },
    )
    recorder = RecordingEmbedder()
    with Engine(ws, tmp_path / "idx", embedder=recorder) as eng:
        eng.set_focus(["app/open_me.py"])
        eng.index()
        assert eng.parts.store.imports_of("app/open_me.py") == ["app/helper.py"]
    order = [text.split("\n", 1)[0] for text in recorder.seen]
    assert set(order[:-1]) == {"app/open_me.py", "app/helper.py"}
    assert order[-1] == "app/alpha.py"


def test_recently_changed_files_are_embedded_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODE_EVIDENCE_CACHE_DIR", str(tmp_path / "cold-cache"))
    monkeypatch.setattr(indexer, "EMBED_BATCH", 1)
    ws = tmp_path / "ws"
    ws.mkdir()
    init_repo(ws)
    write_files(ws, {"old.py": "def o():\n    return 0\n"})  # shorter: first on length alone
    git(ws, "add", "-A")
    old = {"GIT_AUTHOR_DATE": "2019-01-01T00:00:00", "GIT_COMMITTER_DATE": "2019-01-01T00:00:00"}
    git_env = {**os.environ, **old}
    subprocess.run(["git", "-C", str(ws), "commit", "-qm", "old"], check=True, env=git_env)
    write_files(ws, {"new.py": "def recently_added():\n    return 1 + 2 + 3\n"})
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "new")
    recorder = RecordingEmbedder()
    with Engine(ws, tmp_path / "idx", embedder=recorder) as eng:
        eng.index()
    assert [text.split("\n", 1)[0] for text in recorder.seen] == ["new.py", "old.py"]
