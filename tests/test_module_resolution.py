"""Per-language module resolution from manifests: tsconfig paths/baseUrl/extends, workspace
packages by name (package.json exports/main), go.mod module paths, Cargo crate names, and the
same-package neighbours of Go and Java. Small fixture repositories, as path sets and manifest
texts; one end-to-end pass checks that an index relinks when a manifest changes."""

from __future__ import annotations

import json
from pathlib import Path

from code_evidence.engine import Engine
from code_evidence.index.imports import ImportResolver, is_manifest
from code_evidence.index.jsonc import loads_jsonc
from code_evidence.index.packages import same_package_edges

# --------------------------------------------------------------------------- JSON with comments


def test_jsonc_reads_comments_and_trailing_commas_and_never_raises() -> None:
    text = '{\n  // a comment\n  "a": "x // not a comment", /* block */ "b": [1, 2,],\n}'
    assert loads_jsonc(text) == {"a": "x // not a comment", "b": [1, 2]}
    for bad in ("", "[1, 2]", "{", '{"a": ', "\x00\x01", "/* unterminated"):
        assert loads_jsonc(bad) == {}


# --------------------------------------------------------------------------- JS / TS

TS_PATHS = {
    "apps/web/src/main.ts",
    "apps/web/src/util/format.ts",
    "packages/core/src/index.ts",
    "packages/core/src/parse.ts",
    "packages/ui/lib/button.js",
    "packages/ui/lib/index.js",
    "shared/config.ts",
}
TS_MANIFESTS = {
    "tsconfig.base.json": """{
        // shared by every app
        "compilerOptions": {
            "baseUrl": ".",
            "paths": {"@core/*": ["packages/core/src/*"], "@shared": ["shared/config"],},
        },
    }""",
    "apps/web/tsconfig.json": '{"extends": "../../tsconfig.base.json",'
    ' "compilerOptions": {"outDir": "dist"}}',
    "evil/tsconfig.json": '{"extends": "../../../etc/tsconfig.json"}',
    "packages/core/package.json": json.dumps(
        {
            "name": "@acme/core",
            "exports": {
                ".": {"types": "./dist/index.d.ts", "import": "./dist/index.js"},
                "./parse": "./dist/parse.js",
            },
        }
    ),
    "packages/ui/package.json": json.dumps({"name": "acme-ui", "main": "lib/index.js"}),
}


def test_tsconfig_paths_follow_extends_and_stay_in_the_workspace() -> None:
    r = ImportResolver(TS_PATHS, manifests=TS_MANIFESTS)
    src = "apps/web/src/main.ts"
    assert r.resolve(src, "typescript", ["@core/parse"]) == ["packages/core/src/parse.ts"]
    assert r.resolve(src, "typescript", ["@shared"]) == ["shared/config.ts"]
    # baseUrl (inherited from the base config): a root-relative specifier.
    assert r.resolve(src, "typescript", ["apps/web/src/util/format"]) == [
        "apps/web/src/util/format.ts"
    ]
    # A file under no tsconfig gets no alias; an outside "extends" is ignored, never read.
    assert r.resolve("shared/config.ts", "typescript", ["@core/parse"]) == []
    assert r.resolve("evil/x.ts", "typescript", ["@core/parse"]) == []


def test_workspace_packages_resolve_by_name_through_exports_and_main() -> None:
    r = ImportResolver(TS_PATHS, manifests=TS_MANIFESTS)
    src = "apps/web/src/main.ts"
    # exports point at dist/ (not tracked): the same path under src/ is the source.
    assert r.resolve(src, "typescript", ["@acme/core"]) == ["packages/core/src/index.ts"]
    assert r.resolve(src, "typescript", ["@acme/core/parse"]) == ["packages/core/src/parse.ts"]
    assert r.resolve(src, "typescript", ["acme-ui"]) == ["packages/ui/lib/index.js"]
    assert r.resolve(src, "typescript", ["acme-ui/lib/button"]) == ["packages/ui/lib/button.js"]
    # A package from outside the workspace stays unresolved.
    assert r.resolve(src, "typescript", ["react", "@types/node", "lodash/get"]) == []


def test_relative_imports_index_files_and_extensions() -> None:
    paths = {"src/a.ts", "src/b/index.ts", "src/c.mjs", "src/d.tsx"}
    r = ImportResolver(paths)
    assert r.resolve("src/a.ts", "typescript", ["./b", "./c.mjs", "./d.js", "../outside"]) == [
        "src/b/index.ts",
        "src/c.mjs",
        "src/d.tsx",
    ]


# --------------------------------------------------------------------------- Go

GO_PATHS = {
    "go.mod",
    "gin.go",
    "context.go",
    "render/json.go",
    "render/render.go",
    "internal/json/json.go",
    "internal/json/json_test.go",
    "examples/render/main.go",
}
GO_MOD = {"go.mod": "module github.com/gin-gonic/gin\n\ngo 1.18\n\nrequire x v1\n"}


def test_go_imports_resolve_through_the_go_mod_module_path() -> None:
    r = ImportResolver(GO_PATHS, manifests=GO_MOD)
    assert r.resolve("gin.go", "go", ["github.com/gin-gonic/gin/render"]) == [
        "render/json.go",
        "render/render.go",
    ]
    assert r.resolve("context.go", "go", ["github.com/gin-gonic/gin/internal/json"]) == [
        "internal/json/json.go"
    ]
    # Another module's "render" package is not ours, whatever the suffix says.
    assert r.resolve("gin.go", "go", ["github.com/other/lib/render", "encoding/json"]) == []
    # Without go.mod the longest directory suffix still answers.
    assert ImportResolver(GO_PATHS).resolve("gin.go", "go", ["github.com/x/y/render"]) == [
        "render/json.go",
        "render/render.go",
    ]


def test_go_files_of_one_package_are_neighbours_through_the_names_they_use() -> None:
    files = {
        "gin.go": [
            ("Engine", "type Engine struct{}"),
            ("New", "func New() *Engine { return nil }"),
        ],
        "context.go": [
            ("Context", "type Context struct{ engine *Engine }"),
            ("Context.JSON", "func (c *Context) JSON() { render() }"),
        ],
        "render.go": [("render", "func render() {}")],
        "util.go": [("New", "func New() {}")],  # "New" is defined twice: says nothing
        "gin_test.go": [("TestNew", "func TestNew() { New(); var c Context }")],
        "sub/other.go": [("Other", "func Other() { render() }")],  # another package
    }
    edges = set(
        same_package_edges(
            {p: "go" for p in files},
            lambda p: files[p],  # type: ignore[arg-type,return-value]
        )
    )
    assert ("context.go", "gin.go") in edges  # uses the Engine type
    assert ("context.go", "render.go") in edges  # a method on Context calls render
    assert not any("gin_test.go" in e for e in edges)  # tests take no part
    assert not any(dst == "util.go" for _, dst in edges)  # only the ambiguous "New"
    assert not any("sub/other.go" in e for e in edges)


def test_java_classes_of_one_package_are_neighbours_without_imports() -> None:
    base = "src/main/java/com/squareup/javapoet/"
    files = {
        f"{base}MethodSpec.java": [("MethodSpec", "class MethodSpec { CodeBlock code; }")],
        f"{base}CodeBlock.java": [("CodeBlock", "final class CodeBlock { }")],
        f"{base}Util.java": [("Util", "final class Util { }")],
    }
    edges = same_package_edges({p: "java" for p in files}, lambda p: files[p])  # type: ignore[arg-type,return-value]
    assert edges == [(f"{base}MethodSpec.java", f"{base}CodeBlock.java")]


# --------------------------------------------------------------------------- Rust


def test_rust_impl_blocks_link_to_their_type_and_trait_in_the_crate() -> None:
    files = {
        "src/buf/buf_impl.rs": [
            ("Buf", "/// Reads bytes.\npub trait Buf {\n    fn remaining(&self) -> usize;\n}")
        ],
        "src/buf/take.rs": [
            ("Take", "pub struct Take<T> {\n    inner: T,\n}"),
            ("Take", "impl<T: Buf> Buf for Take<T> {"),
        ],
        "src/bytes.rs": [("Bytes", "pub struct Bytes {}")],
        "src/fmt/debug.rs": [("Bytes", "impl Debug for &Bytes where T: Clone {")],
        "src/other.rs": [("Bytes", "pub(crate) struct Bytes {}")],  # defined twice below
        "tests/test_take.rs": [("Take", "impl Buf for Take {")],  # tests take no part
        "crates/x/src/lib.rs": [("X", "impl Buf for X {")],  # another crate
    }
    edges = set(same_package_edges({p: "rust" for p in files}, lambda p: files[p]))  # type: ignore[arg-type,return-value]
    assert ("src/buf/take.rs", "src/buf/buf_impl.rs") in edges  # the trait it implements
    assert not any(src == "src/fmt/debug.rs" for src, _ in edges)  # "Bytes" is ambiguous
    assert not any("tests/" in a or "tests/" in b for a, b in edges)
    assert not any("crates/x" in a or "crates/x" in b for a, b in edges)
    assert len(edges) == 1


def test_rust_workspace_crates_resolve_by_their_cargo_name() -> None:
    paths = {
        "Cargo.toml",
        "crates/tokio-util/Cargo.toml",
        "crates/tokio-util/src/lib.rs",
        "crates/tokio-util/src/codec/mod.rs",
        "crates/app/src/main.rs",
        "crates/app/src/net/mod.rs",
        "crates/app/src/net/tcp.rs",
    }
    manifests = {
        "crates/tokio-util/Cargo.toml": '[package]\nname = "tokio-util"\n[lib]\nname = "tutil"\n',
    }
    r = ImportResolver(paths, manifests=manifests)
    main = "crates/app/src/main.rs"
    assert r.resolve(main, "rust", ["tutil::codec::Decoder"]) == [
        "crates/tokio-util/src/codec/mod.rs"
    ]
    assert r.resolve(main, "rust", ["crate::net::tcp::Stream", "self::net"]) == [
        "crates/app/src/net/tcp.rs",
        "crates/app/src/net/mod.rs",
    ]
    assert r.resolve("crates/app/src/net/tcp.rs", "rust", ["super::Listener"]) == [
        "crates/app/src/net/mod.rs"
    ]


def test_manifests_the_resolver_reads() -> None:
    for path in ("go.mod", "a/package.json", "tsconfig.json", "b/tsconfig.build.json"):
        assert is_manifest(path)
    assert is_manifest("crates/x/Cargo.toml")
    assert not is_manifest("src/package.ts") and not is_manifest("tsconfig.ts")


# --------------------------------------------------------------------------- re-resolution


def test_changing_go_mod_relinks_imports(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "render").mkdir(parents=True)
    (ws / "go.mod").write_text("module example.com/old\n")
    (ws / "render" / "render.go").write_text("package render\n\nfunc Render() {}\n")
    (ws / "main.go").write_text(
        'package main\n\nimport "example.com/new/render"\n\nfunc main() { render.Render() }\n'
    )
    eng = Engine(ws, tmp_path / "idx", use_git=False)
    try:
        eng.index()
        assert eng.parts.reader.imports_of("main.go") == []  # another module's package
        (ws / "go.mod").write_text("module example.com/new\n\ngo 1.21\n")
        eng.index()
        assert eng.parts.reader.imports_of("main.go") == ["render/render.go"]
    finally:
        eng.close()
