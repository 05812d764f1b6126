"""Build outputs, bundles, linguist-generated files and generated twins (``index/generated.py``),
the test conventions of each language, and an end-to-end check that real source in ``lib/``
(fastify keeps its implementation there) is never demoted while a generated copy is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from code_evidence import api
from code_evidence.config import IndexConfig
from code_evidence.engine import Engine
from code_evidence.filekinds import file_flags, is_declaration_path
from code_evidence.index.chunk import chunk_file
from code_evidence.index.generated import (
    BUILD_OUTPUT,
    BUNDLE,
    LINGUIST,
    MANIFEST_OUTPUT,
    GeneratedFiles,
    find_generated,
)

BODY = "\n".join(f"export function f{i}(x: number) {{ return x + {i} * 2; }}" for i in range(12))


def found(files: dict[str, str], manifests: dict[str, str] | None = None) -> GeneratedFiles:
    return find_generated(files, manifests or {}, files.get)


def test_plain_js_package_with_its_code_in_lib_is_left_alone() -> None:
    # fastify's layout: main is a root file, the implementation lives in lib/, build scripts
    # in build/, declarations in types/ with the same names as lib's files.
    files = {
        "fastify.js": "module.exports = require('./lib/route')",
        "lib/route.js": "function route () {}\n" * 10,
        "lib/reply.js": "function reply () {}\n" * 10,
        "types/route.d.ts": "export interface Route {}",
        "build/build-validation.js": "const fs = require('fs')",
        "test/route.test.js": "test('route', () => {})",
    }
    manifest = {"package.json": json.dumps({"main": "fastify.js", "types": "fastify.d.ts"})}
    assert found(files, manifest).reasons == {}
    # Even a package whose main points into lib/ keeps lib/ when lib/ is where the code is.
    manifest = {"package.json": json.dumps({"main": "lib/route.js", "files": ["lib"]})}
    assert found(files, manifest).reasons == {}


def test_build_folders_named_by_manifests_count_when_sources_live_elsewhere() -> None:
    files = {
        "src/index.ts": BODY,
        "src/parse.ts": "export const parse = 1",
        "lib/index.js": "exports.x = 1",
        "lib/parse.js": "exports.parse = 1",
        "esm/index.mjs": "export const x = 1",
        "dist/bundle.js": "var x = 1",
        "out/index.js": "exports.y = 2",
    }
    manifests = {
        "package.json": json.dumps(
            {"main": "./lib/index.js", "scripts": {"clean": "rm -rf lib/* esm"}}
        ),
        "tsconfig.json": '{"compilerOptions": {"outDir": "./out", /* c */}}',
    }
    reasons = found(files, manifests).reasons
    assert reasons["lib/index.js"] == MANIFEST_OUTPUT
    assert reasons["lib/parse.js"] == MANIFEST_OUTPUT
    assert reasons["esm/index.mjs"] == MANIFEST_OUTPUT
    assert reasons["out/index.js"] == MANIFEST_OUTPUT
    assert reasons["dist/bundle.js"] == BUILD_OUTPUT
    assert "src/index.ts" not in reasons and "src/parse.ts" not in reasons


def test_typescript_sources_a_manifest_publishes_are_not_its_output() -> None:
    """rxjs publishes ``src`` beside four builds (``files``), so each ``Subject.ts`` has a
    namesake ``Subject.js`` in another published folder: the sources were read as one more
    build and ranked level with the copies. TypeScript other than declarations is never what a
    build writes."""
    files = {
        "src/internal/Subject.ts": BODY,
        "src/internal/Observable.ts": BODY,
        "dist/esm/internal/Subject.js": "export class Subject {}",
        "dist/esm/internal/Observable.js": "export class Observable {}",
        "dist/types/internal/Subject.d.ts": "export declare class Subject {}",
    }
    manifest = {
        "package.json": json.dumps(
            {"main": "./dist/esm/index.js", "files": ["dist/esm", "dist/types", "src"]}
        )
    }
    reasons = found(files, manifest).reasons
    assert "src/internal/Subject.ts" not in reasons
    assert "src/internal/Observable.ts" not in reasons
    assert reasons["dist/esm/internal/Subject.js"] == BUILD_OUTPUT
    assert reasons["dist/types/internal/Subject.d.ts"] == BUILD_OUTPUT
    # Published JavaScript beside sources elsewhere is still the output.
    files["esm/Subject.mjs"] = "export class Subject {}"
    manifest = {"package.json": json.dumps({"module": "./esm/Subject.mjs", "files": ["src"]})}
    reasons = found(files, manifest).reasons
    assert reasons["esm/Subject.mjs"] == MANIFEST_OUTPUT
    assert "src/internal/Subject.ts" not in reasons
    # TypeScript a script writes (zod's Deno mirror of src/) is output all the same.
    files["deno/lib/internal/Subject.ts"] = BODY
    files["deno/lib/internal/Observable.ts"] = BODY
    script = {"clean": "rm -rf lib/* deno/lib/*"}
    manifest = {"package.json": json.dumps({"files": ["src"], "scripts": script})}
    reasons = found(files, manifest).reasons
    assert "src/internal/Subject.ts" not in reasons
    assert reasons["deno/lib/internal/Subject.ts"] == MANIFEST_OUTPUT


def test_manifests_cannot_name_folders_outside_the_workspace() -> None:
    files = {"src/a.ts": BODY, "a.ts": BODY[:10]}
    manifests = {"package.json": json.dumps({"scripts": {"clean": "rm -rf ../../ / $HOME"}})}
    assert found(files, manifests).reasons == {}


def test_near_copies_are_twins_and_the_deeper_one_is_the_copy() -> None:
    deno = BODY.replace("function f0", "function f0") + '\nimport { y } from "./y.ts";'
    files = {"src/types.ts": BODY + '\nimport { y } from "./y";', "deno/lib/types.ts": deno}
    got = found(files)
    assert got.source_of == {"deno/lib/types.ts": "src/types.ts"}
    assert got.reasons["deno/lib/types.ts"] == "copy of src/types.ts"
    # Same depth: two versions kept side by side, both source.
    assert found({"v1/types.ts": BODY, "v2/types.ts": BODY}).reasons == {}
    # Different content with the same name is no twin.
    other = "\n".join(f"export const k{i} = {i};" for i in range(12))
    assert found({"src/types.ts": BODY, "pkg/x/types.ts": other}).reasons == {}


def test_bundles_and_linguist_generated_files() -> None:
    files = {
        "src/app.ts": BODY,
        "public/app.js": "var a = 1;\n//# sourceMappingURL=app.js.map\n",
        "static/vendor.js": "/*! rollup v3 */\nvar b;",
        "api/client.ts": BODY.replace("f", "g"),
        "lib/plain.js": "function plain () {}",
    }
    manifests = {".gitattributes": "api/** linguist-generated=true\n*.md text\n"}
    reasons = found(files, manifests).reasons
    assert reasons == {
        "public/app.js": BUNDLE,
        "static/vendor.js": BUNDLE,
        "api/client.ts": LINGUIST,
    }


def test_the_finding_survives_a_round_trip_and_bad_json() -> None:
    g = GeneratedFiles({"a.js": BUNDLE}, {"b/a.ts": "a.ts"})
    assert GeneratedFiles.from_json(g.to_json()) == g
    assert GeneratedFiles.from_json("not json") == GeneratedFiles({}, {})
    assert GeneratedFiles.from_json(None) == GeneratedFiles({}, {})


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("binding/form_test.go", True),
        ("render/testdata/a.json", True),
        ("src/test/java/com/x/FooTest.java", True),
        ("src/main/java/com/x/FooIT.java", True),
        ("src/__tests__/record.test.ts", True),
        ("test/types/plugin.test-d.ts", True),
        ("src/app.spec.tsx", True),
        ("tests/test_buf.rs", True),
        ("benches/bytes_mut.rs", True),
        ("src/benchmarks/string.ts", True),
        ("src/bytes.rs", False),
        ("lib/route.js", False),
        ("src/main/java/com/x/Item.java", False),
    ],
)
def test_test_conventions_per_language(path: str, is_test: bool) -> None:
    assert file_flags(path, "")[0] is is_test


def test_rust_cfg_test_modules_are_tests_inside_a_source_file() -> None:
    text = (
        "pub fn a() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n"
        "    #[test]\n    fn it_works() { assert_eq!(a(), 1); }\n}\n"
    )
    chunks = {c.symbol: c for c in chunk_file("src/lib.rs", text, IndexConfig())}
    assert chunks["a"].is_test is False
    assert chunks["tests.it_works"].is_test is True


def test_declaration_files() -> None:
    assert is_declaration_path("types/route.d.ts") and is_declaration_path("src/app.pyi")
    assert not is_declaration_path("src/route.ts") and not is_declaration_path("lib/d.ts.js")


def _indexed(tmp_path: Path, files: dict[str, str]) -> Engine:
    """An engine over a plain folder of ``files``, indexed."""
    ws = tmp_path / "ws"
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    eng = Engine(ws, tmp_path / "idx", use_git=False)
    eng.index()
    return eng


def test_lib_sources_rank_untouched_while_a_generated_copy_is_demoted(tmp_path: Path) -> None:
    files = {
        "lib/route.js": "function buildRouteHandler (opts) {\n  return opts.handler\n}\n" * 3,
        "src/schema.ts": BODY + "\nexport function parseSchemaInput(x: string) { return x; }",
        "deno/lib/schema.ts": BODY
        + "\nexport function parseSchemaInput(x: string) { return x; }"
        + '\nimport { q } from "./q.ts";',
        "package.json": json.dumps({"name": "demo", "main": "lib/route.js"}),
    }
    eng = _indexed(tmp_path, files)
    try:
        res = eng.find(api.FindRequest(query="build the route handler", limit=5))
        top = res.results[0]
        assert top.path == "lib/route.js"
        assert "generated" not in top.reasons and top.scores["factor"] == 1.0
        res = eng.find(api.FindRequest(query="parseSchemaInput", limit=10))
        paths = [r.path for r in res.results]
        assert paths.index("src/schema.ts") < paths.index("deno/lib/schema.ts")
        copy = next(r for r in res.results if r.path == "deno/lib/schema.ts")
        assert "generated" in copy.reasons
        # With the copy open, its source is offered as where the edit goes.
        res = eng.find(
            api.FindRequest(
                query="change the input parser", limit=5, open_file="deno/lib/schema.ts"
            )
        )
        first = next(r for r in res.results if r.path != "deno/lib/schema.ts")
        assert first.path == "src/schema.ts" and "source-of-open" in first.reasons
    finally:
        eng.close()


def test_a_published_build_with_no_sources_is_its_own_source() -> None:
    """ky ships only ``distribution/``: every JavaScript file is a build output (a source map
    line), so demoting them all put its README and ``.d.ts`` files above the code that answers.
    With no source in the workspace the finding says so, and ranking demotes nothing; one
    source of any language (a Go program with a bundled UI) keeps the bundle below it."""
    built = {
        "distribution/core/Ky.js": "export class Ky {}\n//# sourceMappingURL=Ky.js.map\n",
        "distribution/errors/HTTPError.js": "export class HTTPError {}\n"
        "//# sourceMappingURL=HTTPError.js.map\n",
        "distribution/index.d.ts": "export declare const ky: unknown;",
        "test/ky.test.js": "test('ky', () => {})",
    }
    manifest = {"package.json": json.dumps({"exports": "./distribution/index.js"})}
    got = found(built, manifest)
    assert got.reasons["distribution/core/Ky.js"] == BUNDLE
    assert got.sources is False
    assert GeneratedFiles.from_json(got.to_json()).sources is False
    mixed = {**built, "cmd/server/main.go": "package main\nfunc main() {}\n"}
    assert found(mixed, manifest).sources is True
    assert GeneratedFiles.from_json('{"reasons": {}, "source_of": {}}').sources is True


def test_a_package_of_build_output_only_ranks_its_code_first(tmp_path: Path) -> None:
    retry = (
        "export class Ky {\n"
        "  _calculateRetryDelay(error) {\n"
        "    const after = error.response.headers.get('Retry-After');\n"
        "    return after ? Number(after) * 1000 : this._options.retry.backoffLimit;\n"
        "  }\n"
        "}\n"
        "//# sourceMappingURL=Ky.js.map\n"
    )
    files = {
        "distribution/core/Ky.js": retry,
        "distribution/types/retry.d.ts": "export type RetryOptions = {\n"
        "  /** Delay before a retry: the Retry-After header, else the backoff limit. */\n"
        "  backoffLimit?: number;\n};\n",
        "readme.md": "# ky\n\nRetries wait for the Retry-After header or the backoff limit.\n",
        "package.json": json.dumps({"name": "ky", "exports": "./distribution/index.js"}),
    }
    eng = _indexed(tmp_path, files)
    try:
        res = eng.find(api.FindRequest(query="how is the retry delay calculated", limit=5))
        top = res.results[0]
        assert top.path == "distribution/core/Ky.js"
        assert "generated" not in top.reasons and top.scores["factor"] == 1.0
    finally:
        eng.close()


def test_a_path_that_names_a_source_too_leaves_its_copies_demoted(tmp_path: Path) -> None:
    """``./never.js`` in a TypeScript import means ``never.ts``; it also names the build copies
    ``dist/*/never.js`` by their own name, which used to exempt them from the demotion (a
    question that names a file wants it) and put rxjs's builds first."""
    never = (
        "export const NEVER = new Observable(noop);\n"
        "export function never() {\n  return NEVER;\n}\n"
    )
    files = {
        "src/internal/observable/never.ts": never,
        "dist/esm/internal/observable/never.js": never,
        "dist/cjs/internal/observable/never.js": never.replace("export ", "exports."),
    }
    eng = _indexed(tmp_path, files)
    try:
        message = (
            "SyntaxError: The requested module './never.js' does not provide an export "
            "named 'window'"
        )
        res = eng.find(api.FindRequest(query=message, limit=5))
        assert res.results[0].path == "src/internal/observable/never.ts"
        copies = [r for r in res.results if r.path.startswith("dist/")]
        assert copies and all("generated" in r.reasons for r in copies)
        # Named alone, a build output is what the question wants: not demoted.
        res = eng.find(api.FindRequest(query="dist/cjs/internal/observable/never.js", limit=5))
        named = next(r for r in res.results if r.path == "dist/cjs/internal/observable/never.js")
        assert "generated" not in named.reasons
    finally:
        eng.close()
