"""Import specifiers -> workspace files, over path sets shaped like real repositories."""

from __future__ import annotations

from pathlib import Path

from code_evidence.config import IndexConfig
from code_evidence.index.chunk import chunk_file
from code_evidence.index.imports import ImportResolver

PY_PATHS = {
    "src/flask/__init__.py",
    "src/flask/app.py",
    "src/flask/helpers.py",
    "src/flask/json/__init__.py",
    "src/flask/json/provider.py",
    "src/flask/sansio/scaffold.py",
    "tests/conftest.py",
    "tests/test_app.py",
    "scripts/build.py",
    "scripts/common.py",
    "setup.py",
}


def test_python_relative_imports() -> None:
    r = ImportResolver(PY_PATHS)
    assert r.resolve("src/flask/app.py", "python", [".helpers", ".json", ".missing"]) == [
        "src/flask/helpers.py",
        "src/flask/json/__init__.py",
    ]
    # ".." climbs one package; "." alone is the package itself.
    assert r.resolve("src/flask/json/provider.py", "python", ["..app", "."]) == [
        "src/flask/app.py",
        "src/flask/json/__init__.py",
    ]
    assert r.resolve("src/flask/sansio/scaffold.py", "python", ["..json.provider"]) == [
        "src/flask/json/provider.py"
    ]
    # Climbing above the workspace root resolves to nothing rather than wrapping around.
    assert r.resolve("setup.py", "python", ["...x"]) == []


def test_python_absolute_under_src_layout() -> None:
    r = ImportResolver(PY_PATHS)
    specs = ["flask", "flask.app", "flask.app.Flask", "flask.json.provider", "os", "click"]
    assert r.resolve("tests/test_app.py", "python", specs) == [
        "src/flask/__init__.py",
        "src/flask/app.py",
        "src/flask/json/provider.py",
    ]
    # Stdlib "json" must not hit src/flask/json: src/flask is a package, not a source root.
    assert r.resolve("src/flask/app.py", "python", ["json", "typing"]) == []
    # A script outside any package imports its neighbours by bare name.
    assert r.resolve("scripts/build.py", "python", ["common"]) == ["scripts/common.py"]
    # Never the file itself.
    assert r.resolve("src/flask/app.py", "python", ["flask.app", ".app"]) == []


def test_python_end_to_end_from_chunker(tmp_path: Path) -> None:
    """Specifiers exactly as the chunker records them resolve to the right files."""
    pkg = tmp_path / "src" / "shop"
    pkg.mkdir(parents=True)
    files = {
        "src/shop/__init__.py": "",
        "src/shop/models.py": "class Item:\n    pass\n",
        "src/shop/views.py": "from . import models\nfrom .models import Item\nimport shop.cart\n",
        "src/shop/cart.py": "from shop.models import Item\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    text = (tmp_path / "src/shop/views.py").read_text()
    specs = chunk_file("src/shop/views.py", text, IndexConfig())[0].imports
    assert specs == (".models", ".models.Item", "shop.cart")
    assert ImportResolver(set(files)).resolve("src/shop/views.py", "python", specs) == [
        "src/shop/models.py",
        "src/shop/cart.py",
    ]


JS_PATHS = {
    "web/src/app.ts",
    "web/src/utils.ts",
    "web/src/components/index.tsx",
    "web/src/components/Button.jsx",
    "web/src/legacy/helper.js",
    "web/src/styles.css",
    "web/lib/format.mjs",
    "web/index.js",
}


def test_javascript_relative_with_extension_probing() -> None:
    r = ImportResolver(JS_PATHS)
    specs = [
        "./utils",
        "./components",
        "./components/Button",
        "./legacy/helper.js",
        "../lib/format",
        "./styles.css",
        "react",
        "@scope/pkg",
        "./nope",
    ]
    assert r.resolve("web/src/app.ts", "typescript", specs) == [
        "web/src/utils.ts",
        "web/src/components/index.tsx",
        "web/src/components/Button.jsx",
        "web/src/legacy/helper.js",
        "web/lib/format.mjs",
        "web/src/styles.css",
    ]
    # TypeScript ESM: "./utils.js" names the .ts source; ".." to a directory's index file.
    assert r.resolve("web/src/components/index.tsx", "tsx", ["../utils.js", "../../"]) == [
        "web/src/utils.ts",
        "web/index.js",
    ]
    # Escaping the workspace root resolves to nothing.
    assert r.resolve("web/index.js", "javascript", ["../../outside"]) == []


def test_go_import_path_suffix_to_package_files() -> None:
    paths = {
        "go.mod",
        "cmd/app/main.go",
        "internal/store/db.go",
        "internal/store/query.go",
        "internal/store/db_test.go",
        "internal/server/server.go",
    }
    r = ImportResolver(paths)
    specs = ["fmt", "net/http", "github.com/acme/app/internal/store"]
    assert r.resolve("cmd/app/main.go", "go", specs) == [
        "internal/store/db.go",
        "internal/store/query.go",
    ]
    assert r.resolve("internal/server/server.go", "go", ["github.com/other/lib"]) == []


def test_rust_crate_super_self_and_mod() -> None:
    paths = {
        "Cargo.toml",
        "src/lib.rs",
        "src/config.rs",
        "src/net/mod.rs",
        "src/net/client.rs",
        "src/net/tls.rs",
        "crates/util-core/src/lib.rs",
        "crates/util-core/src/text.rs",
    }
    r = ImportResolver(paths)
    assert r.resolve(
        "src/lib.rs",
        "rust",
        ["crate::config::Config", "crate::net::client::Client", "self::net", "std::io"],
    ) == ["src/config.rs", "src/net/client.rs", "src/net/mod.rs"]
    assert r.resolve("src/net/client.rs", "rust", ["super::tls", "super::super::config"]) == [
        "src/net/tls.rs",
        "src/config.rs",
    ]
    # `mod tls;` in src/net/mod.rs is recorded as self::tls; another workspace crate by name.
    assert r.resolve("src/net/mod.rs", "rust", ["self::tls", "util_core::text::wrap"]) == [
        "src/net/tls.rs",
        "crates/util-core/src/text.rs",
    ]
    assert r.resolve("src/lib.rs", "rust", ["crate::missing::Thing"]) == []


def test_java_classes_and_wildcards() -> None:
    paths = {
        "src/main/java/com/acme/store/Repo.java",
        "src/main/java/com/acme/store/Cache.java",
        "src/main/java/com/acme/util/Checks.java",
        "src/main/java/com/acme/app/UserService.java",
        "src/test/java/com/acme/store/RepoTest.java",
    }
    r = ImportResolver(paths)
    me = "src/main/java/com/acme/app/UserService.java"
    assert r.resolve(
        me,
        "java",
        ["com.acme.store.Repo", "com.acme.util.Checks.require", "java.util.List"],
    ) == [
        "src/main/java/com/acme/store/Repo.java",
        "src/main/java/com/acme/util/Checks.java",
    ]
    assert sorted(r.resolve(me, "java", ["com.acme.store.*"])) == [
        "src/main/java/com/acme/store/Cache.java",
        "src/main/java/com/acme/store/Repo.java",
        "src/test/java/com/acme/store/RepoTest.java",
    ]


def test_unknown_language_and_empty_specs_resolve_to_nothing() -> None:
    r = ImportResolver(PY_PATHS)
    assert r.resolve("README.md", "text", ["flask"]) == []
    assert r.resolve("src/flask/app.py", "python", ["", ".", "..."]) == ["src/flask/__init__.py"]
    assert ImportResolver([]).resolve("a.py", "python", ["flask"]) == []
