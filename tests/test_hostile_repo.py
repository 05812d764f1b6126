"""A hostile repository: its ``.git/config`` names programs, its history plants a ``.git``
folder, another user owns it. Nothing it names may run, through any entry point."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from code_evidence.cli import main
from code_evidence.engine import Engine
from code_evidence.evaluation.replay import Replay
from code_evidence.git import Git
from code_evidence.index.snapshot import UnsafeTree, unpack, unsafe_path
from support.history import Repo, build_history
from support.lsp import find, initialize, open_doc, ready, start, stop

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

HOOKS = (
    "pre-commit",
    "post-checkout",
    "post-commit",
    "post-merge",
    "post-rewrite",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "fsmonitor-watchman",
)


def _script(folder: Path, marks: Path, name: str) -> Path:
    """A program that leaves the mark ``name``, then behaves like a harmless filter (copies
    stdin) so git carries on if it does run. One file per key, no arguments: git runs some
    settings (gpg) as a path, not through the shell."""
    path = folder / f"evil-{name}"
    path.write_text(f'#!/bin/sh\ntouch "{marks}/{name}"\ncat\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def plant(repo: Path, tools: Path, marks: Path) -> None:
    """Every configuration key that names a program, pointing at the marking script, and
    attributes that route every file through the planted drivers."""
    hooks = tools / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOKS:
        hook = hooks / name
        hook.write_text(f'#!/bin/sh\ntouch "{marks}/hook-{name}"\n', encoding="utf-8")
        hook.chmod(0o755)
    keys = {
        "filter.evil.clean": str(_script(tools, marks, "filter.clean")),
        "filter.evil.smudge": str(_script(tools, marks, "filter.smudge")),
        "filter.evil.process": str(_script(tools, marks, "filter.process")),
        "filter.evil.required": "true",
        "diff.evil.textconv": str(_script(tools, marks, "diff.textconv")),
        "diff.evil.command": str(_script(tools, marks, "diff.command")),
        "diff.external": str(_script(tools, marks, "diff.external")),
        "merge.evil.driver": str(_script(tools, marks, "merge.driver")),
        "core.fsmonitor": str(_script(tools, marks, "core.fsmonitor")),
        "core.hooksPath": str(hooks),
        "core.pager": str(_script(tools, marks, "core.pager")),
        "pager.log": str(_script(tools, marks, "pager.log")),
        "pager.status": str(_script(tools, marks, "pager.status")),
        "core.editor": str(_script(tools, marks, "core.editor")),
        "core.sshCommand": str(_script(tools, marks, "core.sshCommand")),
        "core.askPass": str(_script(tools, marks, "core.askPass")),
        "credential.helper": "!" + str(_script(tools, marks, "credential.helper")),
        "gpg.program": str(_script(tools, marks, "gpg.program")),
        "gpg.openpgp.program": str(_script(tools, marks, "gpg.openpgp.program")),
        "gpg.ssh.program": str(_script(tools, marks, "gpg.ssh.program")),
        "gpg.x509.program": str(_script(tools, marks, "gpg.x509.program")),
        "log.showSignature": "true",
    }
    for key, value in keys.items():
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    info = repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("* filter=evil diff=evil merge=evil\n", encoding="utf-8")


def sign_head(repo: Path) -> None:
    """Replace HEAD by the same commit carrying a PGP signature header, so that a ``git log``
    honouring ``log.showSignature`` runs ``gpg.program`` to verify it."""

    def git(*args: str, data: str | None = None) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], input=data, capture_output=True, text=True, check=True
        ).stdout

    body = git("cat-file", "commit", "HEAD")
    head, _, message = body.partition("\n\n")
    sig = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    signed = f"{head}\n{sig}\n\n{message}"
    sha = git("hash-object", "-t", "commit", "-w", "--stdin", data=signed).strip()
    git("update-ref", "HEAD", sha)


def marks_of(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real history (24 mined questions, enough for ``tune`` to replay), signed at HEAD,
    with every program-naming key planted after it was built."""
    base = tmp_path_factory.mktemp("hostile")
    built = build_history(base / "service")
    repo: Repo = built["repo"]
    sign_head(repo.root)
    marks = base / "marks"
    marks.mkdir()
    tools = base / "tools"
    tools.mkdir()
    plant(repo.root, tools, marks)
    # Stat-dirty and racily clean files: `git status` re-reads them through the clean filter.
    (repo.root / "src/service/upload.py").touch()
    return {"root": repo.root, "marks": marks, "base": base}


@pytest.fixture
def clean_marks(hostile: dict[str, Path]) -> Path:
    for p in hostile["marks"].iterdir():
        p.unlink()
    return hostile["marks"]


def test_the_planted_programs_do_run_under_plain_git(
    hostile: dict[str, Path], clean_marks: Path
) -> None:
    """The fixture is armed: git on its own runs what the repository names."""
    root = hostile["root"]
    subprocess.run(["git", "-C", str(root), "status"], capture_output=True, check=False)
    subprocess.run(["git", "-C", str(root), "log", "-1"], capture_output=True, check=False)
    # (the required process filter would abort the diff before textconv is reached)
    no_filter = ["-c", "filter.evil.process=", "-c", "filter.evil.required=0"]
    subprocess.run(
        ["git", "-C", str(root), *no_filter, "diff", "-U0", "--no-ext-diff", "HEAD~1", "HEAD"],
        capture_output=True,
        check=False,
    )
    ran = marks_of(clean_marks)
    assert "diff.textconv" in ran
    assert "core.fsmonitor" in ran
    assert {"filter.clean", "filter.process"} & set(ran)
    assert {"gpg.program", "gpg.openpgp.program"} & set(ran)


@pytest.mark.parametrize(
    "args",
    [
        ["index"],
        ["find", "resume an interrupted transfer"],
        ["status"],
        ["find", "resume an interrupted transfer", "--as-of", "HEAD~3"],
        ["eval", "--max-cases", "4", "--configs", "bm25"],
        ["tune", "--dry-run"],
    ],
    ids=["index", "find", "status", "as-of", "eval", "tune"],
)
def test_no_entry_point_runs_what_the_repository_names(
    hostile: dict[str, Path], clean_marks: Path, tmp_path: Path, args: list[str]
) -> None:
    root = hostile["root"]
    command, rest = args[0], args[1:]
    rc = main([command, *rest, "--workspace", str(root), "--index-dir", str(tmp_path / "idx")])
    assert rc in (0, 2)  # tune may decline to store settings; it still mined and replayed
    assert marks_of(clean_marks) == []


@pytest.mark.asyncio
async def test_the_language_server_runs_nothing_at_start_or_after_a_save(
    hostile: dict[str, Path], clean_marks: Path, tmp_path: Path
) -> None:
    root = hostile["root"]
    client = await start(tmp_path / "idx")
    try:
        await initialize(client, root)
        await ready(client)
        assert marks_of(clean_marks) == []
        target = root / "src/service/billing.py"
        target.write_text(target.read_text() + "\n\ndef late_fee(value):\n    return value\n")
        uri = open_doc(client, target)
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        for _ in range(100):  # the watcher's batch (git check-ignore) and the pass
            answer = await find(client, {"query": "late_fee"})
            if answer["results"] and answer["results"][0]["symbol"] == "late_fee":
                break
            await asyncio.sleep(0.1)
        assert answer["results"][0]["symbol"] == "late_fee"
    finally:
        await stop(client)
    assert marks_of(clean_marks) == []


# ------------------------------------------------------------------------ planted .git in history


def _tree(repo: Path, entries: list[tuple[str, str, str, str]]) -> str:
    """A tree object from (mode, type, oid, name) lines; git's porcelain would refuse these
    names, ``mktree`` does not check them."""
    text = "".join(f"{m} {t} {o}\t{n}\n" for m, t, o, n in entries)
    return subprocess.run(
        ["git", "-C", str(repo), "mktree"], input=text, capture_output=True, text=True, check=True
    ).stdout.strip()


def _blob(repo: Path, data: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
        input=data,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.fixture
def planted_history(tmp_path: Path) -> dict[str, Any]:
    """A history whose second commit holds ``.git/config`` (a filter running the marking
    script) and ``.git/info/attributes`` in its tree, then a clean third commit."""
    marks = tmp_path / "marks"
    marks.mkdir()
    evil = _script(tmp_path, marks, "planted.clean")
    repo = Repo(tmp_path / "planted")
    repo.write("src/app.py", "def serve(port):\n    return port\n")
    first = repo.commit("Start the application server on the given port")
    root = repo.root
    app = _blob(root, "def serve(port):\n    return port + 1\n")
    config = _blob(root, f'[filter "x"]\n\tclean = {evil}\n')
    attrs = _blob(root, "* filter=x\n")
    info = _tree(root, [("100644", "blob", attrs, "attributes")])
    dotgit = _tree(root, [("100644", "blob", config, "config"), ("040000", "tree", info, "info")])
    src = _tree(root, [("100644", "blob", app, "app.py")])
    top = _tree(root, [("040000", "tree", dotgit, ".GIT"), ("040000", "tree", src, "src")])
    bad = repo.git("commit-tree", top, "-p", first, "-m", "Serve on the next port instead")
    # Git's own checkout refuses such a tree, so the next commit is written the same way.
    app2 = _blob(root, "def serve(port):\n    return port + 2\n")
    src2 = _tree(root, [("100644", "blob", app2, "app.py")])
    top2 = _tree(root, [("040000", "tree", dotgit, ".GIT"), ("040000", "tree", src2, "src")])
    last = repo.git("commit-tree", top2, "-p", bad, "-m", "Serve two ports above the request")
    repo.git("update-ref", "refs/heads/main", last)
    return {"root": root, "marks": marks, "first": first, "bad": bad, "last": last}


@pytest.mark.parametrize(
    ("path", "unsafe"),
    [
        ("src/app.py", False),
        (".github/workflows/ci.yml", False),
        ("docs/.gitignore", False),
        (".git/config", True),
        ("a/.GIT/hooks/x", True),
        ("a/.git./config", True),
        ("GIT~1/config", True),
        ("../outside.py", True),
        ("a/../../b", True),
        ("/etc/passwd", True),
        ("C:/x.py", True),
        ("a\\.git\\config", True),
        ("a//b", True),
    ],
)
def test_unsafe_tree_paths(path: str, unsafe: bool) -> None:
    assert (unsafe_path(path) is not None) is unsafe


def test_a_planted_git_folder_is_never_written_and_says_which_commit(
    planted_history: dict[str, Any], tmp_path: Path
) -> None:
    h = planted_history
    git = Git(h["root"])
    with pytest.raises(UnsafeTree) as err:
        unpack(git, h["bad"], tmp_path / "snap")
    assert h["bad"][:12] in str(err.value) and ".GIT" in str(err.value)
    assert not (tmp_path / "snap").exists()
    with Replay(h["root"], Engine(h["root"], tmp_path / "i0").config) as replay:
        replay.at(h["first"])
        with pytest.raises(UnsafeTree):
            replay.at(h["bad"])
        assert not (replay.tree / ".GIT").exists()
        with pytest.raises(UnsafeTree):  # the next commit still holds the planted folder
            replay.at(h["last"])
        assert (replay.tree / "src/app.py").read_text().endswith("port\n")
    assert marks_of(h["marks"]) == []


def test_as_of_and_eval_refuse_the_planted_commit_with_a_clear_message(
    planted_history: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = planted_history
    ws = ["--workspace", str(h["root"]), "--index-dir", str(tmp_path / "idx")]
    assert main(["find", "serve on a port", "--as-of", h["bad"], *ws]) == 2
    err = capsys.readouterr().err
    assert h["bad"][:12] in err and "unsafe path" in err
    assert main(["eval", "--configs", "bm25", *ws]) == 0
    out = capsys.readouterr().out
    assert "refused" in out and "unsafe path" in out
    assert marks_of(h["marks"]) == []


def test_as_of_leaves_secrets_and_outside_links_out_of_the_snapshot(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "links")
    repo.write("src/app.py", "def serve():\n    return 1\n")
    repo.write(".env", "API_KEY=hunter2\n")
    repo.write("keys/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    os.symlink("/etc/hostname", repo.root / "abs-link")
    os.symlink("../../outside", repo.root / "src" / "climb")
    os.symlink("app.py", repo.root / "src" / "alias.py")
    sha = repo.commit("Serve the application")
    unpack(Git(repo.root), sha, tmp_path / "snap")
    snap = tmp_path / "snap"
    assert (snap / "src/app.py").is_file()
    assert (snap / "src/alias.py").is_symlink()
    for gone in (".env", "keys/id_rsa", "abs-link", "src/climb"):
        assert not (snap / gone).exists() and not (snap / gone).is_symlink(), gone


def test_eval_and_as_of_refuse_a_history_that_climbs_out_with_dot_dot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree entry named ``..`` (git's checkout refuses it; ``mktree`` writes it): ``eval``
    says which commit it refused and exits 0, ``--as-of`` exits 2 naming it, and nothing is
    written outside the private copy."""
    repo = Repo(tmp_path / "climb")
    repo.write("src/app.py", "def serve(port):\n    return port\n")
    first = repo.commit("Start the application server on the given port")
    root = repo.root
    escape = _blob(root, "def escaped():\n    return 'outside'\n")
    up = _tree(root, [("100644", "blob", escape, "escaped_by_dot_dot.py")])
    app = _blob(root, "def serve(port):\n    return port + 1\n")
    src = _tree(root, [("100644", "blob", app, "app.py"), ("040000", "tree", up, "..")])
    top = _tree(root, [("040000", "tree", src, "src")])
    bad = repo.git("commit-tree", top, "-p", first, "-m", "Serve on the next port instead")
    app2 = _blob(root, "def serve(port):\n    return port + 2\n")
    src2 = _tree(root, [("100644", "blob", app2, "app.py"), ("040000", "tree", up, "..")])
    top2 = _tree(root, [("040000", "tree", src2, "src")])
    last = repo.git("commit-tree", top2, "-p", bad, "-m", "Serve two ports above the request")
    repo.git("update-ref", "refs/heads/main", last)
    ws = ["--workspace", str(root), "--index-dir", str(tmp_path / "idx")]
    scratch = tmp_path / "scratch"  # where the replay's private copy goes
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("CODE_EVIDENCE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["eval", "--configs", "bm25", *ws]) == 0
    out = capsys.readouterr().out
    assert f"refused    {bad[:12]}" in out and "'..'" in out
    assert main(["find", "serve on a port", "--as-of", bad, *ws]) == 2
    err = capsys.readouterr().err
    assert bad[:12] in err and "'..'" in err
    assert not list(tmp_path.glob("**/escaped_by_dot_dot.py"))


def test_find_as_of_with_an_absolute_link_answers_and_copies_no_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CODE_EVIDENCE_CACHE_DIR", str(cache))
    repo = Repo(tmp_path / "links")
    repo.write("src/app.py", "def serve_requests():\n    return 1\n")
    repo.write(".env", "API_KEY=hunter2envfile\n")
    repo.write("keys/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n")
    os.symlink("/etc/hostname", repo.root / "abs-link")
    sha = repo.commit("Serve the application")
    ws = ["--workspace", str(repo.root), "--index-dir", str(tmp_path / "idx"), "--json"]
    assert main(["find", "serve requests", "--as-of", sha, *ws]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["results"][0]["path"] == "src/app.py"
    snapshots = cache / "as-of"
    names = {p.name for p in snapshots.rglob("*")}
    assert {".env", "id_rsa", "abs-link"}.isdisjoint(names) and "app.py" in names


# ----------------------------------------------------------------------------- owner mismatch


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown (root)")
def test_another_users_repository_is_a_plain_folder_unless_the_user_opts_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo(tmp_path / "theirs")
    repo.write("src/app.py", "def serve():\n    return 1\n")
    repo.write("build/out.py", "def serve():\n    return 2\n")
    repo.write(".gitignore", "build/\n")
    head = repo.commit("Serve the application")
    for dirpath, dirnames, filenames in os.walk(repo.root):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), 65534, 65534)
    os.lchown(repo.root, 65534, 65534)

    git = Git(repo.root)
    assert not git.usable and "owned by another user" in (git.refusal or "")
    assert "--trust-other-owner" in (git.refusal or "")
    with Engine(repo.root, tmp_path / "idx1") as engine:
        assert any("owned by another user" in n for n in engine.notes)
        report = engine.index()
        status = engine.status()
    assert status.commit is None and report.files_seen == 2  # .gitignore still applies
    assert main(["status", "--workspace", str(repo.root), "--index-dir", str(tmp_path / "i")]) == 0
    assert "owned by another user" in capsys.readouterr().err

    trusted = Git(repo.root, trust_other_owner=True)
    assert trusted.usable and trusted.state().commit == head
    with Engine(repo.root, tmp_path / "idx2", trust_other_owner=True) as engine:
        assert engine.status().commit == head
    assert main(["eval", "--workspace", str(repo.root), "--index-dir", str(tmp_path / "i")]) == 2
    assert "owned by another user" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown (root)")
@pytest.mark.asyncio
async def test_the_language_server_opts_in_only_through_initialization_options(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "theirs")
    repo.write("src/app.py", "def serve():\n    return 1\n")
    head = repo.commit("Serve the application")
    repo.write(".vscode/settings.json", '{"codeEvidence.trustOtherOwner": true}\n')
    for dirpath, dirnames, filenames in os.walk(repo.root):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), 65534, 65534)
    os.lchown(repo.root, 65534, 65534)
    for options, commit in ((None, None), ({"trustOtherOwner": True}, head)):
        client = await start(tmp_path / f"idx-{commit}")
        try:
            await initialize(client, repo.root, options=options)
            status = await ready(client)
            assert status["commit"] == commit
        finally:
            await stop(client)


def test_git_runs_with_every_program_setting_overridden(tmp_path: Path) -> None:
    """The command line itself, for any git call: the fixed overrides come first."""
    repo = Repo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.commit("Start")
    subprocess.run(["git", "-C", str(repo.root), "config", "filter.lfsish.clean", "x"], check=True)
    cmd = Git(repo.root).command("status")
    joined = " ".join(cmd)
    for needle in (
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "log.showSignature=false",
        "protocol.allow=never",
        "credential.helper=",
        "filter.lfsish.clean=",
        "filter.lfsish.process=",
    ):
        assert needle in joined
    assert "safe.directory=*" not in joined
    assert cmd[:2] == ["git", "--no-pager"]


def test_every_git_call_in_the_package_goes_through_the_helper() -> None:
    """No module but git.py starts git itself."""
    server = Path(__file__).resolve().parents[1] / "server" / "code_evidence"
    offenders = []
    for path in server.rglob("*.py"):
        if path.name == "git.py":
            continue
        text = path.read_text(encoding="utf-8")
        if "subprocess" in text and '"git"' in text:
            offenders.append(str(path.relative_to(server)))
    assert offenders == []
