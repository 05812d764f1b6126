"""Relinking only what a pass moved (``index/relink.py``, issue 24): after each change the links
(import edges, same-package edges, the build-output and twin finding) equal those of a full
relink of the same store, and the relink read the chunks of only the changed files' packages
and name groups. Work is counted (files whose chunks were read), never timed."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from code_evidence.engine import Engine
from code_evidence.index import indexer, relink
from code_evidence.index.generated import GENERATED_META
from code_evidence.index.relink import Linker, Relinked
from code_evidence.index.store import Store

TWIN_BODY = "\n".join(f"def helper_{i}(x):\n    return x * {i} + {i * 7}\n" for i in range(12))
GO_PKG = {
    "svc/engine.go": "package svc\n\ntype Engine struct{}\n\n"
    "func NewEngine() *Engine { return nil }\n",
    "svc/context.go": "package svc\n\ntype Context struct{ engine *Engine }\n\n"
    "func (c *Context) JSON() { render() }\n",
    "svc/render.go": "package svc\n\nfunc render() {}\n",
}
JAVA_PKG = {
    "java/com/acme/MethodSpec.java": "package com.acme;\n\nclass MethodSpec { CodeBlock code; }\n",
    "java/com/acme/CodeBlock.java": "package com.acme;\n\nfinal class CodeBlock { }\n",
}
FILES = {
    **GO_PKG,
    **JAVA_PKG,
    "go.mod": "module example.com/app\n",
    "cmd/main.go": 'package main\n\nimport "example.com/app/svc"\n\n'
    "func main() { svc.NewEngine() }\n",
    "src/app/util.py": TWIN_BODY,
    "src/app/core.py": "from app.util import helper_1\n\n\ndef core():\n    return helper_1(2)\n",
    "mirror/deep/app/util.py": TWIN_BODY,  # a deeper copy: the twin
    "web/app.js": "export function start() { return 1 }\n",
    "web/main.js": "import { start } from './app.js'\nstart()\n",
    "cs/Shapes.cs": "namespace Acme.Shapes {\n  public class Circle { }\n}\n",
    "cs/Draw.cs": "using Acme.Shapes;\nnamespace Acme.Draw {\n  class Pen { Circle c; }\n}\n",
}


def links(store: Store) -> tuple[list[tuple[str, str]], list[tuple[str, str]], str | None]:
    """Everything a relink writes, in a comparable form."""
    edges = sorted(store.db.execute("SELECT src, dst FROM import_edges"))
    pkg = sorted(store.db.execute("SELECT src, dst FROM package_edges"))
    return edges, pkg, store.get_meta(GENERATED_META)


class Reads:
    """The relinks a pass runs, and the files whose chunks each one read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[tuple[Relinked, set[str]]] = []
        real_relink, real_chunks = indexer.Indexer._relink_imports, Store.chunks_of
        self.reading: set[str] | None = None

        def relink(ix: indexer.Indexer, cfg: Any, change: Any) -> Relinked:
            self.reading = set()
            done = real_relink(ix, cfg, change)
            self.runs.append((done, self.reading))
            self.reading = None
            return done

        def chunks_of(store: Store, path: str) -> Any:
            if self.reading is not None:
                self.reading.add(path)
            return real_chunks(store, path)

        monkeypatch.setattr(indexer.Indexer, "_relink_imports", relink)
        monkeypatch.setattr(Store, "chunks_of", chunks_of)

    def last(self) -> tuple[Relinked, set[str]]:
        assert self.runs, "the pass did not relink"
        return self.runs[-1]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    ws = tmp_path / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (ws / ".code-evidence.toml").write_text("[stages]\nvectors = false\n")
    with Engine(ws, tmp_path / "idx", use_git=False) as eng:
        eng.index()
        yield eng


def assert_equals_full_relink(engine: Engine, tmp_path: Path) -> None:
    """A copy of the store relinked from scratch holds the same links."""
    got = links(engine.parts.store)
    copy = tmp_path / f"full-{len(list(tmp_path.glob('full-*')))}.sqlite"
    engine.parts.store.db.execute("PRAGMA wal_checkpoint(FULL)")
    shutil.copy(engine.parts.store.path, copy)
    store = Store(copy)
    try:
        with store.transaction():
            done = Linker().relink(store, engine.workspace, engine.config, None)
        assert done.full
        assert links(store) == got
    finally:
        store.close()


def write(engine: Engine, rel: str, text: str) -> None:
    path = engine.workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_fixture_links_what_each_rule_finds(engine: Engine) -> None:
    edges, pkg, _ = links(engine.parts.store)
    assert ("svc/context.go", "svc/engine.go") in pkg  # Go: a type used in the package
    assert ("java/com/acme/MethodSpec.java", "java/com/acme/CodeBlock.java") in pkg
    assert ("cmd/main.go", "svc/engine.go") in edges  # through go.mod's module path
    assert ("src/app/core.py", "src/app/util.py") in edges
    assert ("web/main.js", "web/app.js") in edges
    assert ("cs/Draw.cs", "cs/Shapes.cs") in edges  # a C# namespace it declares
    found = engine.reader.generated_files()
    assert found.source_of == {"mirror/deep/app/util.py": "src/app/util.py"}


def test_each_change_relinks_only_what_it_moves_and_equals_a_full_relink(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)

    # A function body in a Go file: its package is read again, nothing else.
    write(engine, "svc/render.go", "package svc\n\nfunc render() { _ = 1 }\n")
    engine.index(paths=["svc/render.go"])
    done, read = reads.last()
    assert not done.full and read == set(GO_PKG)
    assert_equals_full_relink(engine, tmp_path)

    # The copy stops being a copy: its name group is read, the packages are not.
    write(engine, "mirror/deep/app/util.py", "def other():\n    return 0\n")
    engine.index(paths=["mirror/deep/app/util.py"])
    done, read = reads.last()
    assert not done.full and read == {"src/app/util.py", "mirror/deep/app/util.py"}
    assert engine.reader.generated_files().source_of == {}
    assert_equals_full_relink(engine, tmp_path)

    # ... and becomes one again, found from its group alone.
    write(engine, "mirror/deep/app/util.py", TWIN_BODY)
    engine.index(paths=["mirror/deep/app/util.py"])
    assert engine.reader.generated_files().source_of == {
        "mirror/deep/app/util.py": "src/app/util.py"
    }
    assert_equals_full_relink(engine, tmp_path)

    # A new Java class and a removed Go file: the file set moved, so every file's imports are
    # resolved again (file rows, no chunks), but only the two packages' chunks are read.
    write(engine, "java/com/acme/Util.java", "package com.acme;\n\nclass Util { MethodSpec m; }\n")
    (engine.workspace / "svc/render.go").unlink()
    engine.index(paths=["java/com/acme/Util.java", "svc/render.go"])
    done, read = reads.last()
    assert not done.full
    assert read == {*JAVA_PKG, "java/com/acme/Util.java", "svc/engine.go", "svc/context.go"}
    edges, pkg, _ = links(engine.parts.store)
    assert not any("svc/render.go" in e for e in edges + pkg)
    assert ("java/com/acme/Util.java", "java/com/acme/MethodSpec.java") in pkg
    assert_equals_full_relink(engine, tmp_path)

    # A C# file declares another namespace: other files' imports may mean something else.
    write(engine, "cs/Shapes.cs", "namespace Acme.Forms {\n  public class Circle { }\n}\n")
    engine.index(paths=["cs/Shapes.cs"])
    done, read = reads.last()
    assert not done.full and read == set()  # no package, no namesake
    assert ("cs/Draw.cs", "cs/Shapes.cs") not in links(engine.parts.store)[0]
    assert_equals_full_relink(engine, tmp_path)

    # A JavaScript file turns into a bundle: read for its head, alone.
    write(engine, "web/app.js", "/*! rollup bundle */\n" + "var a = 1;\n" * 5)
    engine.index(paths=["web/app.js"])
    done, read = reads.last()
    assert not done.full and read == {"web/app.js"}
    assert engine.reader.generated_files().reasons.get("web/app.js") == "bundle"
    assert_equals_full_relink(engine, tmp_path)

    # A full scan that finds one changed file relinks just as little.
    write(engine, "src/app/core.py", "import app.util\n\n\ndef core():\n    return 2\n")
    engine.index()
    done, read = reads.last()
    assert not done.full and read == set()
    assert_equals_full_relink(engine, tmp_path)


def test_a_manifest_or_a_lost_relink_relinks_everything(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    write(engine, "go.mod", "module example.com/other\n")
    engine.index(paths=["go.mod"])
    done, read = reads.last()
    assert done.full and set(GO_PKG) | set(JAVA_PKG) <= read
    assert ("cmd/main.go", "svc/engine.go") not in links(engine.parts.store)[0]
    assert_equals_full_relink(engine, tmp_path)

    # A pass killed between its text and its links: the next one cannot build on them.
    engine.parts.store.set_meta_now({"resolution": ""})
    write(engine, "svc/render.go", "package svc\n\nfunc render() { _ = 2 }\n")
    engine.index(paths=["svc/render.go"])
    done, _ = reads.last()
    assert done.full
    assert_equals_full_relink(engine, tmp_path)


def test_a_new_file_that_makes_a_folder_build_output_redoes_the_twins_inside_it(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lib/`` is named as output but holds the only code of most of its names, so it is
    source and its deeper namesake the copy; a new ``src/index.ts`` tips it into build output
    without touching the twins' text, and the pair turns round."""
    reads = Reads(monkeypatch)
    body = "\n".join(f"const v{i} = {i} * 3 + {i * 11};" for i in range(12)) + "\n"
    write(engine, "package.json", '{"name": "pkg", "main": "lib/index.js"}\n')
    for name in ("index", "a", "b"):
        write(engine, f"lib/{name}.js", f"export const {name} = 1\n")
    write(engine, "lib/helper.js", body)
    write(engine, "pkg/deep/x/helper.js", body)
    engine.index()
    assert reads.last()[0].full  # a manifest came
    assert engine.reader.generated_files().source_of["pkg/deep/x/helper.js"] == "lib/helper.js"

    write(engine, "src/index.ts", "export const index = 2\n")
    engine.index(paths=["src/index.ts"])
    done, read = reads.last()
    assert not done.full and {"lib/helper.js", "pkg/deep/x/helper.js"} <= read
    found = engine.reader.generated_files()
    assert found.reasons["lib/index.js"] == "build output named by a manifest"
    assert found.source_of["lib/helper.js"] == "pkg/deep/x/helper.js"
    assert_equals_full_relink(engine, tmp_path)


def test_a_rust_change_redoes_its_crates_impl_edges(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rust's impl edges are per crate (the folder above ``src/``), across its folders."""
    crate = {
        "rs/bytes/src/lib.rs": "pub struct Take { n: usize }\n",
        "rs/bytes/src/buf/mod.rs": "pub trait Buf { fn remaining(&self) -> usize; }\n",
        "rs/bytes/src/buf/take.rs": "impl Buf for Take {\n    fn remaining(&self) -> usize {\n"
        "        0\n    }\n}\n",
    }
    for rel, text in crate.items():
        write(engine, rel, text)
    engine.index()
    pkg = links(engine.parts.store)[1]
    assert ("rs/bytes/src/buf/take.rs", "rs/bytes/src/lib.rs") in pkg
    reads = Reads(monkeypatch)
    write(engine, "rs/bytes/src/lib.rs", "pub struct Chain { n: usize }\n")
    engine.index(paths=["rs/bytes/src/lib.rs"])
    done, read = reads.last()
    assert not done.full and read == set(crate)
    assert ("rs/bytes/src/buf/take.rs", "rs/bytes/src/lib.rs") not in links(engine.parts.store)[1]
    assert_equals_full_relink(engine, tmp_path)


def test_a_save_of_an_existing_file_walks_no_path_list(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The paths' languages, the manifests and what they decide are kept between relinks
    that change neither: a save walks no list of every path and reads no manifest; a new
    file or another process's relink (the epoch) makes them read afresh."""
    walks: list[int] = []
    real = relink.path_facts

    def counted(paths: Any, manifests: Any) -> Any:
        walks.append(1)
        return real(paths, manifests)

    monkeypatch.setattr(relink, "path_facts", counted)
    write(
        engine, "src/app/core.py", "from app.util import helper_2\n\n\ndef core():\n    return 3\n"
    )
    engine.index(paths=["src/app/core.py"])
    assert walks == []
    assert_equals_full_relink(engine, tmp_path)  # a fresh Linker: it walks them
    walks.clear()

    write(engine, "src/app/extra.py", "def extra():\n    return 1\n")  # the file set moves
    engine.index(paths=["src/app/extra.py"])
    assert walks == [1]
    assert_equals_full_relink(engine, tmp_path)
    walks.clear()

    engine.parts.store.set_meta_now({relink.EPOCH_META: "another process"})
    write(engine, "web/app.js", "export function start() { return 2 }\n")
    engine.index(paths=["web/app.js"])
    assert walks == [1]
    assert_equals_full_relink(engine, tmp_path)
