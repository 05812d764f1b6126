"""Workspace scan against real git repositories and real folders made in tmp_path."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from code_evidence.config import IndexConfig
from code_evidence.git import Git, GitState
from code_evidence.index.load import RealPaths, SkipFile, load_text
from code_evidence.index.scan import scan_workspace
from code_evidence.paths import resolve_workspace_path
from code_evidence.secrets import is_secret_path

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME so the machine's global git config (excludes file, identity) cannot leak
    into what the tests observe."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)
    return home


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def make_repo(path: Path, branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    git(path, "config", "user.name", "Test")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit_all(repo: Path, message: str = "c") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write(path: Path, text: str = "x = 1\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def paths(result) -> list[str]:
    return [f.path for f in result.files]


@pytest.fixture(params=["git", "walk"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The same tree rules must hold inside and outside git."""
    root = tmp_path / "ws"
    root.mkdir()
    if request.param == "git":
        make_repo(root)
    return root


# ------------------------------------------------------------------------------------ git mode


def test_git_lists_tracked_and_untracked_honouring_every_ignore_source(
    tmp_path: Path, isolated_git: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / ".gitignore", "*.log\nbuild/\n")
    write(repo / "src" / "a.py")
    write(repo / "with space.py")
    write(repo / "ünïcödé.py")
    write(repo / "new\nline.py")
    write(repo / "gone.py")
    write(repo / "keep.log")
    git(repo, "add", "-f", "keep.log")  # tracked although ignored: git still shows it
    commit_all(repo)
    (repo / "gone.py").unlink()  # deleted but still in the index
    write(repo / "untracked.py")
    write(repo / "debug.log")
    write(repo / "build" / "out.py")
    write(repo / ".git" / "info" / "exclude", "local_notes.txt\n")
    write(repo / "local_notes.txt")
    write(isolated_git / "global_ignore", "*.swp\n")
    git(repo, "config", "--global", "core.excludesFile", str(isolated_git / "global_ignore"))
    write(repo / "edit.py.swp")

    result = scan_workspace(repo, IndexConfig())

    assert paths(result) == sorted(
        [
            ".gitignore",
            "keep.log",
            "new\nline.py",
            "src/a.py",
            "untracked.py",
            "with space.py",
            "ünïcödé.py",
        ]
    )
    for entry in result.files:
        st = os.stat(repo / entry.path)
        assert (entry.size, entry.mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert result.root == repo.resolve()
    assert result.git.is_repo and result.git.branch == "main" and result.git.dirty is True
    assert result.git.commit == git(repo, "rev-parse", "HEAD")


def test_git_state_commit_branch_dirty_and_detached(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "a.py")
    first = commit_all(repo)
    assert Git(repo).state() == GitState(True, first, "main", False)

    write(repo / "a.py", "x = 2\n")
    assert Git(repo).state().dirty is True
    git(repo, "checkout", "-q", "-b", "feature")
    second = commit_all(repo)
    assert Git(repo).state() == GitState(True, second, "feature", False)

    git(repo, "checkout", "-q", "main")
    assert Git(repo).state() == GitState(True, first, "main", False)

    git(repo, "checkout", "-q", "--detach", "feature")
    assert Git(repo).state() == GitState(True, second, None, False)

    write(repo / "new.py")  # an untracked file makes the tree dirty too
    assert Git(repo).state().dirty is True


def test_empty_repo_has_unborn_branch_and_no_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", branch="trunk")
    assert Git(repo).state() == GitState(True, None, "trunk", False)
    write(repo / "first.py")
    result = scan_workspace(repo, IndexConfig())
    assert result.git == GitState(True, None, "trunk", True)
    assert paths(result) == ["first.py"]


def test_non_repo_state(tmp_path: Path) -> None:
    assert Git(tmp_path).state() == GitState(False, None, None, None)


def test_root_inside_a_repo_lists_paths_relative_to_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "top.py")
    write(repo / "pkg" / "a.py")
    write(repo / "pkg" / "inner" / "b.py")
    commit_all(repo)
    write(repo / "pkg" / "untracked.py")

    result = scan_workspace(repo / "pkg", IndexConfig())

    assert paths(result) == ["a.py", "inner/b.py", "untracked.py"]
    assert result.git.is_repo and result.git.branch == "main"


def test_submodule_gitlink_and_nested_repo_are_skipped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "main.py")
    sub = make_repo(repo / "sub")
    write(sub / "inside_sub.py")
    sub_head = commit_all(sub)
    git(repo, "add", "main.py")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub_head},sub")
    commit_all(repo)
    nested = make_repo(repo / "nested")  # untracked repository inside the tree
    write(nested / "inside_nested.py")

    result = scan_workspace(repo, IndexConfig())

    assert paths(result) == ["main.py"]
    assert result.skipped.get("not-regular") == 2
    assert {p for p, r in result.skipped_examples if r == "not-regular"} == {"sub", "nested/"}


def test_git_symlinks_inside_outside_and_to_secrets(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside.py")
    repo = make_repo(tmp_path / "repo")
    write(repo / "real.py")
    write(repo / ".env", "TOKEN=1\n")
    (repo / "link_in.py").symlink_to("real.py")
    (repo / "link_out.py").symlink_to(outside)
    (repo / "innocent.txt").symlink_to(".env")
    commit_all(repo)

    result = scan_workspace(repo, IndexConfig())

    assert paths(result) == ["link_in.py", "real.py"]
    reasons = dict(result.skipped_examples)
    assert reasons["link_out.py"] == "outside-workspace"
    assert reasons["innocent.txt"] == "secret"
    assert reasons[".env"] == "secret"


def test_tracked_file_under_a_folder_replaced_by_a_symlink_is_not_read_outside(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "a.py", "outside\n")
    repo = make_repo(tmp_path / "repo")
    write(repo / "lib" / "a.py")
    commit_all(repo)
    shutil.rmtree(repo / "lib")
    (repo / "lib").symlink_to(elsewhere, target_is_directory=True)

    result = scan_workspace(repo, IndexConfig())

    assert "lib/a.py" not in paths(result)
    assert ("lib/a.py", "outside-workspace") in result.skipped_examples


def test_git_missing_from_path_means_walk_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / ".gitignore", "*.log\n")
    write(repo / "a.py")
    write(repo / "x.log")
    commit_all(repo)
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))

    result = scan_workspace(repo, IndexConfig())

    assert result.git == GitState(False, None, None, None)
    assert paths(result) == [".gitignore", "a.py"]  # .git skipped, .gitignore still applied


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")
def test_repo_owned_by_another_user_is_walked_unless_trusted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "a.py")
    head = commit_all(repo)
    for dirpath, dirnames, filenames in os.walk(repo):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), 65534, 65534)
    os.lchown(repo, 65534, 65534)

    result = scan_workspace(repo, IndexConfig())
    trusted = scan_workspace(repo, IndexConfig(), Git(repo, trust_other_owner=True))

    assert result.git == GitState(False, None, None, None)
    assert paths(result) == ["a.py"]  # walked: .git skipped
    assert trusted.git == GitState(True, head, "main", False)
    assert paths(trusted) == ["a.py"]


# ----------------------------------------------------------------------------------- walk mode


def test_walk_applies_nested_gitignores_with_relative_semantics(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root / ".gitignore", "*.log\n/only_root.txt\nbuild/\n!build/keep.py\n")
    write(root / "sub" / ".gitignore", "!keep.log\n*.tmp\ndata/\n")
    for name in [
        "a.log",
        "only_root.txt",
        "x.tmp",
        "data/keep.py",
        "build/keep.py",
        "sub/keep.log",
        "sub/other.log",
        "sub/x.tmp",
        "sub/only_root.txt",
        "sub/build/z.py",
        "sub/data/d.py",
        "sub/deeper/x.tmp",
        "main.py",
    ]:
        write(root / name)
    # Pruned folders are never entered: a secret inside one would otherwise be counted.
    write(root / "build" / ".env", "K=1\n")
    write(root / ".git" / "config")
    write(root / ".hg" / "store")
    write(root / ".svn" / "entries")

    result = scan_workspace(root, IndexConfig())

    assert paths(result) == [
        ".gitignore",
        "data/keep.py",
        "main.py",
        "sub/.gitignore",
        "sub/keep.log",
        "sub/only_root.txt",
        "x.tmp",
    ]
    assert "secret" not in result.skipped
    assert result.git == GitState(False, None, None, None)


def test_walk_symlinks_are_never_followed_out_of_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside / "secret_code.py")
    root = tmp_path / "plain"
    write(root / "real.py")
    write(root / "pkg" / "mod.py")
    (root / "to_outside_dir").symlink_to(outside, target_is_directory=True)
    (root / "to_outside_file.py").symlink_to(outside / "secret_code.py")
    (root / "to_inside_dir").symlink_to(root / "pkg", target_is_directory=True)
    (root / "to_inside_file.py").symlink_to("real.py")
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "dangling.py").symlink_to("missing.py")
    (root / "pkg" / "up").symlink_to("..", target_is_directory=True)

    result = scan_workspace(root, IndexConfig())

    assert paths(result) == ["pkg/mod.py", "real.py", "to_inside_file.py"]
    reasons = dict(result.skipped_examples)
    assert reasons["to_outside_dir"] == "outside-workspace"
    assert reasons["to_outside_file.py"] == "outside-workspace"
    assert reasons["to_inside_dir"] == "not-regular"
    assert reasons["pkg/up"] == "not-regular"
    assert reasons["loop_a"] == reasons["loop_b"] == "not-regular"
    assert reasons["dangling.py"] == "not-regular"


def test_walk_unreadable_folder_is_counted_not_fatal(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root / "ok.py")
    locked = root / "locked"
    write(locked / "hidden.py")
    locked.chmod(0)
    try:
        try:
            os.listdir(locked)
        except PermissionError:
            pass
        else:
            pytest.skip("permissions are not enforced here (running as root?)")
        result = scan_workspace(root, IndexConfig())
    finally:
        locked.chmod(0o755)
    assert paths(result) == ["ok.py"]
    assert result.skipped == {"unreadable": 1}
    assert result.skipped_examples == [("locked/", "unreadable")]


def test_walk_permission_error_is_counted_even_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root ignores chmod, so the operating system's refusal is injected at os.scandir to keep
    this path covered everywhere."""
    root = tmp_path / "plain"
    write(root / "ok.py")
    write(root / "locked" / "hidden.py")
    real_scandir = os.scandir

    def refusing(path: str) -> object:
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    result = scan_workspace(root, IndexConfig())
    assert paths(result) == ["ok.py"]
    assert result.skipped_examples == [("locked/", "unreadable")]


def test_walk_skips_names_that_are_not_utf8(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root / "ok.py")
    try:
        fd = os.open(os.path.join(os.fsencode(root), b"bad\xff.py"), os.O_CREAT | os.O_WRONLY)
    except OSError:
        pytest.skip("file system refuses non-UTF-8 names")
    os.close(fd)
    result = scan_workspace(root, IndexConfig())
    assert paths(result) == ["ok.py"]
    assert result.skipped == {"unreadable": 1}


def test_git_skips_names_that_are_not_utf8(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "ok.py")
    try:
        fd = os.open(os.path.join(os.fsencode(repo), b"bad\xff.py"), os.O_CREAT | os.O_WRONLY)
    except OSError:
        pytest.skip("file system refuses non-UTF-8 names")
    os.close(fd)
    result = scan_workspace(repo, IndexConfig())
    assert paths(result) == ["ok.py"]
    assert result.skipped == {"unreadable": 1}


def test_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="not a directory"):
        scan_workspace(tmp_path / "nope", IndexConfig())


# ------------------------------------------------------------------------- rules in both modes


@pytest.mark.parametrize(
    ("path", "secret"),
    [
        (".env", True),
        ("app/.env", True),
        (".env.production", True),
        (".ENV.local", True),
        (".env.example", False),
        ("deploy/.env.sample", False),
        (".env.template", False),
        ("certs/server.pem", True),
        ("tls.key", True),
        ("store.p12", True),
        ("store.pfx", True),
        ("home/.ssh/id_rsa", True),
        ("id_rsa.pub", True),
        ("id_dsa", True),
        ("id_ecdsa_work", True),
        ("id_ed25519", True),
        ("release.keystore", True),
        ("app.jks", True),
        (".aws/credentials", True),
        ("credentials.json", True),
        (".npmrc", True),
        (".pypirc", True),
        (".netrc", True),
        ("vault.kdbx", True),
        ("k8s/secrets.yaml", True),
        ("secrets.yml", True),
        ("gcp/service-account-prod.json", True),
        ("src/environment.py", False),
        ("keys.py", False),
        ("credentials.py", False),
        ("docs/secrets.md", False),
        ("monkey.py", False),
        (".code-evidence.toml", False),
    ],
)
def test_is_secret_path(path: str, secret: bool) -> None:
    assert is_secret_path(path) is secret


def test_secrets_are_skipped_anywhere(workspace: Path) -> None:
    write(workspace / "app.py")
    write(workspace / ".env", "TOKEN=1\n")
    write(workspace / "deep" / "cfg" / ".env.local", "TOKEN=1\n")
    write(workspace / ".env.example", "TOKEN=\n")
    write(workspace / "certs" / "tls.key", "-----BEGIN\n")

    result = scan_workspace(workspace, IndexConfig())

    assert paths(result) == [".env.example", "app.py"]
    assert result.skipped["secret"] == 3


def test_vendor_folders_are_skipped_unless_included(workspace: Path) -> None:
    write(workspace / "src" / "app.js")
    write(workspace / "node_modules" / "left-pad" / "index.js")
    write(workspace / "web" / "vendor" / "lib.go")
    write(workspace / "third_party" / "x.c")
    write(workspace / "env" / "pyvenv.cfg", "home = /usr\n")
    write(workspace / "env" / "lib" / "mod.py")

    skipped = scan_workspace(workspace, IndexConfig())
    included = scan_workspace(workspace, IndexConfig(include_vendor=True))

    assert paths(skipped) == ["src/app.js"]
    assert skipped.skipped["vendor"] >= 4
    assert paths(included) == [
        "env/lib/mod.py",
        "env/pyvenv.cfg",
        "node_modules/left-pad/index.js",
        "src/app.js",
        "third_party/x.c",
        "web/vendor/lib.go",
    ]


def test_an_untracked_virtualenv_vendors_the_tracked_files_in_it(tmp_path: Path) -> None:
    """Tracked files are checked while git lists the untracked ones; a ``pyvenv.cfg`` among
    those still makes the tracked files under it vendored, as one listing would."""
    root = make_repo(tmp_path / "ws")
    write(root / "app.py")
    write(root / "env" / "lib" / "mod.py")
    write(root / "env" / "lib" / "logo.png")
    commit_all(root)
    write(root / "env" / "pyvenv.cfg", "home = /usr\n")
    write(root / "new.py")

    result = scan_workspace(root, IndexConfig())

    assert paths(result) == ["app.py", "new.py"]
    assert result.skipped == {"vendor": 3}  # vendor comes before binary, as for one listing


def test_size_limit_binary_names_and_own_config(workspace: Path) -> None:
    write(workspace / "exact.py", "a" * 100)
    write(workspace / "big.py", "a" * 101)
    (workspace / "logo.PNG").write_bytes(b"\x89PNG")
    (workspace / "model.onnx").write_bytes(b"\0\1")
    write(workspace / ".code-evidence.toml", "[index]\nmax_file_bytes = 100\n")

    result = scan_workspace(workspace, IndexConfig(max_file_bytes=100))

    assert paths(result) == [".code-evidence.toml", "exact.py"]
    assert result.skipped == {"too-large": 1, "binary": 2}
    assert ("big.py", "too-large") in result.skipped_examples


def test_source_maps_are_skipped_by_name(workspace: Path) -> None:
    """A published package's ``Ky.js.map`` ranked first for its class's error message: a map is
    never evidence. A file merely named ``*.map`` (data, not a source map) stays."""
    write(workspace / "distribution" / "core" / "Ky.js", "export class Ky {}\n")
    write(workspace / "distribution" / "core" / "Ky.js.map", '{"version":3,"sources":[]}')
    write(workspace / "styles" / "site.CSS.map", '{"version":3}')
    write(workspace / "levels" / "castle.map", "wall wall door\n")

    result = scan_workspace(workspace, IndexConfig())

    assert paths(result) == ["distribution/core/Ky.js", "levels/castle.map"]
    assert result.skipped == {"source-map": 2}


def test_config_exclude_patterns(workspace: Path) -> None:
    write(workspace / "src" / "a.py")
    write(workspace / "src" / "a.gen.py")
    write(workspace / "src" / "keep.gen.py")
    write(workspace / "docs" / "guide.md")

    cfg = IndexConfig(exclude=["docs/", "*.gen.py", "!keep.gen.py"])
    result = scan_workspace(workspace, cfg)

    assert paths(result) == ["src/a.py", "src/keep.gen.py"]
    assert result.skipped["ignored-config"] >= 2
    assert ("src/a.gen.py", "ignored-config") in result.skipped_examples


def test_skipped_examples_are_capped(workspace: Path) -> None:
    for i in range(60):
        write(workspace / f"k{i:02d}.pem", "x")
    result = scan_workspace(workspace, IndexConfig())
    assert result.files == []
    assert result.skipped == {"secret": 60}
    assert len(result.skipped_examples) == 50


# ----------------------------------------------------------------------------------- load_text


def test_load_text_plain_crlf_cr_and_bom(tmp_path: Path) -> None:
    (tmp_path / "crlf.py").write_bytes(b"a = 1\r\nb = 2\r\n\r\nc = 3")
    (tmp_path / "cr.py").write_bytes(b"a\rb\rc\r")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfimport os\n")
    (tmp_path / "empty.py").write_bytes(b"")
    cfg = IndexConfig()

    crlf = load_text(tmp_path, "crlf.py", cfg)
    assert crlf.text == "a = 1\nb = 2\n\nc = 3"
    assert crlf.text.split("\n")[3] == "c = 3"  # line 4 on disk is line 4 here
    assert load_text(tmp_path, "cr.py", cfg).text == "a\nb\nc\n"
    bom = load_text(tmp_path, "bom.py", cfg)
    assert bom.text == "import os\n" and not bom.encoding_errors
    assert load_text(tmp_path, "empty.py", cfg).text == ""


def test_load_text_invalid_utf8_is_kept_with_a_flag(tmp_path: Path) -> None:
    (tmp_path / "latin1.py").write_bytes("name = 'café'\n".encode("latin-1"))
    loaded = load_text(tmp_path, "latin1.py", IndexConfig())
    assert loaded.encoding_errors
    assert loaded.text == "name = 'caf\ufffd'\n"


def test_load_text_utf16_with_bom(tmp_path: Path) -> None:
    (tmp_path / "win.ps1").write_bytes("Write-Host 'hi'\r\n".encode("utf-16"))
    loaded = load_text(tmp_path, "win.ps1", IndexConfig())
    assert loaded.text == "Write-Host 'hi'\n" and not loaded.encoding_errors


def test_load_text_binary_and_too_large(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_bytes(b"header\0\1\2 more")
    (tmp_path / "big.py").write_bytes(b"a" * 11)
    with pytest.raises(SkipFile) as binary:
        load_text(tmp_path, "data.txt", IndexConfig())
    assert binary.value.reason == "binary"
    with pytest.raises(SkipFile) as big:
        load_text(tmp_path, "big.py", IndexConfig(max_file_bytes=10))
    assert big.value.reason == "too-large"


def test_load_text_minified(tmp_path: Path) -> None:
    bundle = "/*! lib v1 */\n" + "var a=1;" * 1000 + "\n"
    (tmp_path / "app.min.js").write_text(bundle, encoding="utf-8")
    # One long data line among many ordinary ones is still a source file.
    source = "".join(f"x{i} = {i}\n" for i in range(2000)) + "BLOB = '" + "z" * 3000 + "'\n"
    (tmp_path / "table.py").write_text(source, encoding="utf-8")

    with pytest.raises(SkipFile) as minified:
        load_text(tmp_path, "app.min.js", IndexConfig())
    assert minified.value.reason == "minified"
    assert load_text(tmp_path, "app.min.js", IndexConfig(include_generated=True)).text == bundle
    assert load_text(tmp_path, "table.py", IndexConfig()).text == source


def test_load_text_vanished_directory_fifo_and_outside_link(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "folder").mkdir(parents=True)
    write(tmp_path / "outside.py")
    (root / "out.py").symlink_to(tmp_path / "outside.py")
    cfg = IndexConfig()
    reasons = {}
    names = ["gone.py", "folder", "out.py"]
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe")
        names.append("pipe")
    for name in names:
        with pytest.raises(SkipFile) as err:
            load_text(root, name, cfg)
        reasons[name] = err.value.reason
    assert reasons.pop("gone.py") == "vanished"
    assert reasons.pop("folder") == "not-regular"
    assert reasons.pop("out.py") == "outside-workspace"
    assert set(reasons.values()) <= {"not-regular"}


def test_load_text_unreadable(tmp_path: Path) -> None:
    locked = write(tmp_path / "locked.py")
    locked.chmod(0)
    try:
        try:
            locked.read_bytes()
        except PermissionError:
            pass
        else:
            pytest.skip("permissions are not enforced here (running as root?)")
        with pytest.raises(SkipFile) as err:
            load_text(tmp_path, "locked.py", IndexConfig())
    finally:
        locked.chmod(0o644)
    assert err.value.reason == "unreadable"


def test_load_text_permission_error_even_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "locked.py")
    real_open = os.open

    def refusing(path: str, flags: int, *args: int) -> int:
        if os.fspath(path).endswith("locked.py"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refusing)
    with pytest.raises(SkipFile) as err:
        load_text(tmp_path, "locked.py", IndexConfig())
    assert err.value.reason == "unreadable"
    assert "Permission denied" in str(err.value)


# ----------------------------------------------------------------------- resolve_workspace_path


def test_resolve_workspace_path_inside(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root / "src" / "a.py")
    write(root / "deep" / "dir" / "x.py")
    (root / "alias.py").symlink_to("src/a.py")
    (root / "shortcut").symlink_to(root / "deep" / "dir", target_is_directory=True)

    assert resolve_workspace_path(root, "src/a.py") == "src/a.py"
    assert resolve_workspace_path(root, "./src/../src/a.py") == "src/a.py"
    assert resolve_workspace_path(root, str(root / "src" / "a.py")) == "src/a.py"
    assert resolve_workspace_path(root, "src/not_yet.py") == "src/not_yet.py"
    assert resolve_workspace_path(root, "alias.py") == "alias.py"  # indexed under its own name
    # ".." applies after the link is followed, as the operating system does it.
    assert resolve_workspace_path(root, "shortcut/../x.py") == "deep/x.py"
    assert resolve_workspace_path(root, str(root)) == "."


def test_resolve_workspace_path_through_a_symlinked_root(tmp_path: Path) -> None:
    real = tmp_path / "real_ws"
    write(real / "a.py")
    alias = tmp_path / "alias_ws"
    alias.symlink_to(real, target_is_directory=True)
    assert resolve_workspace_path(alias, str(alias / "a.py")) == "a.py"
    assert resolve_workspace_path(alias, str(real / "a.py")) == "a.py"
    assert resolve_workspace_path(real, str(alias / "a.py")) == "a.py"


@pytest.mark.parametrize("bad", ["../x.py", "src/../../x.py", "/etc/passwd", "escape/x.py", ""])
def test_resolve_workspace_path_outside(tmp_path: Path, bad: str) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "escape").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ValueError, match=r"outside the workspace|empty path"):
        resolve_workspace_path(root, bad)


def test_resolve_workspace_path_rejects_sibling_with_common_prefix(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "ws2").mkdir()
    with pytest.raises(ValueError, match="outside the workspace"):
        resolve_workspace_path(root, str(tmp_path / "ws2" / "a.py"))


def test_a_folder_swapped_for_a_symlink_during_a_pass_is_not_read_outside(
    tmp_path: Path,
) -> None:
    """The pass remembers each folder's real path (``RealPaths``); the file actually opened is
    checked again, so a folder swapped for a symlink after its first file was read is caught."""
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "b.py", "outside\n")
    repo = tmp_path / "repo"
    write(repo / "lib" / "a.py", "inside\n")
    write(repo / "lib" / "b.py", "inside too\n")
    real_paths = RealPaths(repo)
    assert load_text(repo, "lib/a.py", IndexConfig(), real_paths).text == "inside\n"
    shutil.rmtree(repo / "lib")
    (repo / "lib").symlink_to(elsewhere, target_is_directory=True)
    assert real_paths.of("lib/b.py") == str(repo.resolve() / "lib" / "b.py")  # remembered
    with pytest.raises(SkipFile) as caught:
        load_text(repo, "lib/b.py", IndexConfig(), real_paths)
    assert caught.value.reason == "outside-workspace"
    # A new pass resolves the folder again and refuses before opening.
    fresh = RealPaths(repo)
    assert not fresh.inside(fresh.of("lib/b.py"))


def test_real_paths_agree_with_realpath(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo / "a" / "b" / "c.py")
    write(repo / "top.py")
    (repo / "link.py").symlink_to("a/b/c.py")
    (repo / "a" / "d").symlink_to("b", target_is_directory=True)
    (repo / "out.py").symlink_to(tmp_path / "nowhere.py")
    real_paths = RealPaths(repo)
    for rel in ("a/b/c.py", "top.py", "link.py", "a/d/c.py", "out.py", "a/b/missing.py"):
        assert real_paths.of(rel) == os.path.realpath(repo / rel), rel
    assert not real_paths.inside(real_paths.of("out.py"))
    assert real_paths.inside(real_paths.of("a/d/c.py"))
