"""One workspace holding every kind of bad file at once: indexing finishes, each file gets the
right verdict, the index stays consistent, and nothing outside the workspace or secret is ever
returned."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.index.parts import check_index
from support.project import git, init_repo

SECRET = "sk_live_9d8f7a6b5c4d3e2f1a0b"


def make_bad_workspace(root: Path, outside: Path) -> None:
    root.mkdir()
    (root / "good.py").write_text("def settle_invoice(total):\n    return round(total, 2)\n")
    with open(root / "huge.py", "wb") as f:  # 100 MB, sparse: skipped from its size alone
        f.truncate(100 * 2**20)
    (root / "one_line.py").write_text("x = [" + "1, " * 20_000 + "]\n")  # a 60k-char line
    (root / "bundle.min.js").write_text("var a=1;" * 5_000)
    (root / "latin1.py").write_bytes(b"def caf\xe9_total():\n    return 'cr\xe8me br\xfbl\xe9e'\n")
    (root / "utf16.txt").write_bytes("ledger reconciliation notes\n".encode("utf-16"))
    (root / "empty.py").write_text("")
    (root / "blob.bin").write_bytes(os.urandom(4096))
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(512))
    deep = root.joinpath(*[f"d{i}" for i in range(60)])
    deep.mkdir(parents=True)
    (deep / "deep.py").write_text("def deeply_nested_helper():\n    return 42\n")
    (root / "naïve ünïcode name.py").write_text("def unicode_named_module():\n    pass\n")
    (root / "odd name (copy) [2].py").write_text("def odd_named_module():\n    pass\n")
    (root / ".env").write_text(f"STRIPE_KEY={SECRET}\n")
    (root / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    outside.write_text("root:x:0:0:outside the workspace, never read\n")
    (root / "link_out.py").symlink_to(outside)
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "dangling.py").symlink_to(root / "missing.py")


@pytest.mark.parametrize("as_git", [False, True], ids=["plain-folder", "git-repo"])
def test_every_bad_file_at_once(tmp_path: Path, as_git: bool) -> None:
    root = tmp_path / "ws"
    make_bad_workspace(root, tmp_path / "outside.txt")
    if as_git:
        init_repo(root)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "bad files")
    with Engine(root, tmp_path / "idx") as eng:
        report = eng.index()
        indexed = set(eng.parts.store.files())
        check = check_index(eng.parts.store, eng.parts.lexical, eng.parts.vectors)
        answers = [
            eng.find(FindRequest(q, limit=50))
            for q in ("deeply_nested_helper", "outside the workspace root", "STRIPE_KEY secret")
        ]
        assert eng.index().files_changed == 0  # a second pass reads nothing again
        assert eng.status().pending == 0
    assert check.complete, check
    assert {"good.py", "latin1.py", "utf16.txt"} <= indexed
    assert "naïve ünïcode name.py" in indexed and "odd name (copy) [2].py" in indexed
    assert any(p.endswith("d59/deep.py") for p in indexed)
    for never in ("huge.py", "one_line.py", "bundle.min.js", "blob.bin", "image.png", ".env"):
        assert never not in indexed, never
    assert "id_rsa" not in indexed and "link_out.py" not in indexed
    assert not any(p.startswith("loop/") for p in indexed)
    assert report.skipped.get("too-large") == 1 and report.skipped.get("secret") == 2
    assert answers[0].results[0].symbol == "deeply_nested_helper"
    texts = " ".join(r.text for a in answers for r in a.results) + "".join(
        a.context.text for a in answers
    )
    assert "root:x:0:0" not in texts and SECRET not in texts
