"""Go build constraints (``index/buildtags.py``): which files a default build leaves out, how
the build-output finding records them (from scratch and incrementally), and that ranking puts
such a variant below the file it varies while keeping it in the answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_evidence import api
from code_evidence.engine import Engine
from code_evidence.index.buildtags import off_by_default, tag_on
from code_evidence.index.generated import BUILD_VARIANT, find_generated


def go(constraint: str, body: str = "func F() {}\n") -> str:
    return f"// Copyright header\n\n{constraint}\n\npackage binding\n\n{body}"


@pytest.mark.parametrize(
    ("constraint", "off"),
    [
        ("//go:build nomsgpack", True),
        ("//go:build !nomsgpack", False),
        ("//go:build !go1.18", True),  # a shim for old toolchains
        ("//go:build go1.19", False),
        ("//go:build ignore", True),  # a generator program, not part of the package
        ("//go:build linux || darwin", False),  # a platform's own file is real source
        ("//go:build windows && amd64", False),
        ("//go:build sonic && avx && (linux || windows || darwin) && amd64", True),
        ("//go:build !jsoniter && !go_json && !(sonic && avx && amd64)", False),
        ("//go:build cgo && !appengine", False),
        ("// +build appengine", True),
        ("// +build linux,cgo darwin", False),
        ("// +build !go1.17", True),
        ("//go:build (broken", False),  # unreadable: a plain member of its package
        ("// no constraint here", False),
    ],
)
def test_default_build(constraint: str, off: bool) -> None:
    assert off_by_default(go(constraint)) is off


def test_only_the_header_counts() -> None:
    text = "package x\n\n//go:build ignore\nfunc F() {}\n"
    assert not off_by_default(text)
    assert tag_on("go1.21") and tag_on("arm64") and not tag_on("gccgo")


def test_the_finding_records_variants_from_scratch_and_incrementally() -> None:
    files = {
        "binding/binding.go": go("//go:build !nomsgpack"),
        "binding/binding_nomsgpack.go": go("//go:build nomsgpack"),
        "binding/form.go": go(""),
        "lib/x.js": "function x () {}",
    }
    first = find_generated(files, {}, files.get)
    assert first.reasons == {"binding/binding_nomsgpack.go": BUILD_VARIANT}
    # A pass that changed only form.go reads no other Go file and keeps the finding.
    read: list[str] = []

    def text_of(path: str) -> str | None:
        read.append(path)
        return files.get(path)

    files["binding/form.go"] = go("//go:build ignore")
    again = find_generated(files, {}, text_of, previous=first, changed={"binding/form.go"})
    assert read == ["binding/form.go"]
    assert again.reasons == {
        "binding/binding_nomsgpack.go": BUILD_VARIANT,
        "binding/form.go": BUILD_VARIANT,
    }
    assert again == find_generated(files, {}, files.get)


def test_a_variant_ranks_below_the_file_it_varies(tmp_path: Path) -> None:
    body = "\n".join(
        f"func Bind{i}(req *Request) error {{\n\treturn decodeRequestBody(req, {i})\n}}\n"
        for i in range(6)
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "go.mod").write_text("module example.com/demo\n\ngo 1.21\n")
    # The variant first in path order and identical in text: only the constraint tells them.
    (ws / "binding.go").write_text(go("//go:build !nomsgpack", body))
    (ws / "binding_a_nomsgpack.go").write_text(go("//go:build nomsgpack", body))
    eng = Engine(ws, tmp_path / "idx", use_git=False)
    try:
        eng.index()
        res = eng.find(api.FindRequest(query="decode the request body when binding", limit=10))
        paths = [r.path for r in res.results]
        assert paths[0] == "binding.go"
        variant = next(r for r in res.results if r.path == "binding_a_nomsgpack.go")
        assert "build-variant" in variant.reasons and "generated" not in variant.reasons
        # Asked for by its path, it is not demoted.
        res = eng.find(api.FindRequest(query="binding_a_nomsgpack.go Bind0", limit=10))
        named = next(r for r in res.results if r.path == "binding_a_nomsgpack.go")
        assert "build-variant" not in named.reasons
    finally:
        eng.close()
