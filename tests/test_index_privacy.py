"""What the index keeps, others must not read (issue 14, Medium).

The index stores real file text and the user's questions: its folders are 0700 and its files
0600 whatever the umask, and an index an older version left readable is repaired on open.
Secret files are never read (one table, tested name by name); the credentials in every other
file are found once over the whole file and hidden in every window of it; the request log hides
what queries carry.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_evidence.api import FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.evaluation.tune import store as store_tuned
from code_evidence.paths import CACHE_DIR_ENV
from code_evidence.secrets import REDACTED, SECRET_FILES, is_secret_path, redact
from support import ROOT
from support.privileges import as_other_user, open_folder, require_other_user


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """Umask 0: what the process creates gets exactly the mode it asks for, so a file that is
    not created private shows up as world-writable here."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _no_vectors() -> Config:
    return Config().changed(stages={"vectors": False})


def _modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            full = Path(folder, name)
            st = full.lstat()
            if not stat.S_ISLNK(st.st_mode):
                out[str(full.relative_to(root))] = stat.S_IMODE(st.st_mode)
    return out


def _not_private(root: Path) -> dict[str, str]:
    bad = {}
    for rel, mode in _modes(root).items():
        full = root / rel
        want = (0o700,) if full.is_dir() else (0o600, 0o700)
        if mode not in want:
            bad[rel] = oct(mode)
    return bad


# --------------------------------------------------------------------------- modes


def test_everything_the_cache_holds_is_private_whatever_the_umask(
    project: Path, tmp_path: Path, loose_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "fresh" / "cache"  # neither exists yet
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))
    with Engine(project) as eng:  # the default index folder, inside the cache root
        eng.index()
        eng.find(FindRequest("where is the cart total computed"))
        eng.find_as_of(FindRequest("cart total"), "HEAD~1")
        store_tuned(eng.index_dir, {"ranking": {"rrf_k": 40}})
        index_dir = eng.index_dir
    names = {p.name for p in index_dir.iterdir()}
    assert {"store.sqlite", "requests.jsonl", "tuned.json", "lexical", "vectors.usearch"} <= names
    assert (cache / "embeddings.sqlite").is_file() and (cache / "as-of").is_dir()
    assert any((index_dir / "lexical").iterdir())
    assert _not_private(cache) == {}
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o700  # a parent it created


def test_an_index_left_readable_is_repaired_on_open(
    project: Path, tmp_path: Path, loose_umask: None
) -> None:
    idx = tmp_path / "idx"
    with Engine(project, idx, config=_no_vectors()) as eng:
        eng.index()
        eng.find(FindRequest("cart total"))
    for rel in _modes(idx):  # what an older version left behind
        (idx / rel).chmod(0o755 if (idx / rel).is_dir() else 0o644)
    assert _not_private(idx) != {}
    with Engine(project, idx, config=_no_vectors()):
        pass
    assert _not_private(idx) == {}


def test_only_what_the_index_holds_is_made_private(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--index-dir`` and ``CODE_EVIDENCE_CACHE_DIR`` may name folders that hold other
    things: those keep their modes; what the index writes there is private."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    (shared / "notes.txt").write_text("mine")
    (shared / "notes.txt").chmod(0o644)
    monkeypatch.setenv(CACHE_DIR_ENV, str(shared))
    with Engine(project, shared, config=Config()) as eng:
        eng.index()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert stat.S_IMODE((shared / "notes.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((shared / "store.sqlite").stat().st_mode) == 0o600
    assert stat.S_IMODE((shared / "embeddings.sqlite").stat().st_mode) == 0o600
    assert _not_private(shared / "lexical") == {}


def test_another_user_cannot_read_the_index(project: Path) -> None:
    require_other_user()
    shared = open_folder()  # everyone may enter it: only the index's own modes protect it
    try:
        idx = shared / "idx"
        with Engine(project, idx, config=_no_vectors()) as eng:
            eng.index()
            eng.find(FindRequest("check_oauth_state"))
        for name in ("store.sqlite", "requests.jsonl"):
            done = subprocess.run(
                as_other_user(["cat", str(idx / name)]), capture_output=True, timeout=60
            )
            assert done.returncode != 0, f"another user read {name}"
            assert b"check_oauth_state" not in done.stdout
    finally:
        subprocess.run(["rm", "-rf", str(shared)], check=False)


# --------------------------------------------------------------------------- secret files

# Every name the issue found slipping through, and one example (or more) per table row.
SECRET_NAMES = [
    ".env",
    ".env.local",
    ".env.production",
    ".envrc",
    ".env_prod",
    "prod.env",
    "config/docker.env",
    "certs/server.pem",
    "tls/server.key",
    "store.p12",
    "store.pfx",
    "putty/deploy.ppk",
    "home/.ssh/id_rsa",
    "id_rsa.pub",
    "id_dsa",
    "id_ecdsa_work",
    "id_ed25519",
    "home/.ssh/config",
    "home/.ssh/known_hosts",
    "release.keystore",
    "app.jks",
    "vault.kdbx",
    ".aws/credentials",
    "credentials.json",
    ".cargo/credentials.toml",
    "client_secret_1234.apps.googleusercontent.com.json",
    "client_secret.json",
    "gcp/service-account-prod.json",
    ".git-credentials",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".my.cnf",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    ".vault-token",
    ".docker/config.json",
    ".dockercfg",
    "kubeconfig",
    "kubeconfig.yaml",
    "clusters/prod.kubeconfig",
    ".kube/config",
    "infra/terraform.tfstate",
    "terraform.tfstate.backup",
    "k8s/secrets.yaml",
    "secrets.yml",
    "secrets.json",
    ".streamlit/secrets.toml",
    "Windows\\Users\\me\\.ENV",
]
NOT_SECRET = [
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    "src/environment.py",
    "src/env.py",
    "keys.py",
    "credentials.py",
    "docs/secrets.md",
    "monkey.py",
    ".code-evidence.toml",
    "config/settings.yaml",
    "docker/config.yaml",
    ".github/workflows/deploy.yml",
    "kube/deployment.yaml",
    "terraform/main.tf",
    "src/ssh/config.py",
]


@pytest.mark.parametrize("path", SECRET_NAMES)
def test_secret_file_is_never_indexed(path: str) -> None:
    assert is_secret_path(path)


@pytest.mark.parametrize("path", NOT_SECRET)
def test_ordinary_file_is_indexed(path: str) -> None:
    assert not is_secret_path(path)


def test_every_row_of_the_secret_file_table_is_tested_by_name() -> None:
    import fnmatch

    untested = [
        pattern
        for pattern, _ in SECRET_FILES
        if not any(
            fnmatch.fnmatchcase(name.lower().replace("\\", "/"), f"*{pattern}")
            or fnmatch.fnmatchcase(name.lower().rsplit("/", 1)[-1], pattern)
            for name in SECRET_NAMES
        )
    ]
    assert untested == []


def test_the_threat_model_lists_the_secret_file_table() -> None:
    page = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+?) \|$", page, re.M)
    assert rows == list(SECRET_FILES)


def test_secret_files_stay_out_of_the_index(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def connect():\n    return open_database()\n")
    (ws / ".pgpass").write_text("db.internal:5432:shop:shop:Pgp4ssw0rdXyz\n")
    (ws / ".envrc").write_text("export DB_URL=postgres://x\n")
    (ws / "prod.env").write_text("STRIPE=sk_live_aaaaaaaaaaaaaaaaaaaaaa\n")
    (ws / "terraform.tfstate").write_text('{"password": "tfst4tePw"}\n')
    with Engine(ws, tmp_path / "idx", config=_no_vectors()) as eng:
        report = eng.index()
        paths = {sc.chunk.path for sc in eng.reader.all_chunks()}
    assert paths == {"app.py"}
    assert report.skipped.get("secret") == 4


# --------------------------------------------------------------------------- masking

KEY_BODY = [f"MIIEpAIBAAKCAQEA{i:02d}b4Qx7Zk3L9mNvTqWcYhRjUeOpSdFgHiJkLzXcVbNm" for i in range(6)]
KEY_FILE = "\n".join(
    [
        "Deploy notes for the billing box.",
        "Rotate this key every quarter.",
        "",
        "-----BEGIN RSA PRIVATE KEY-----",
        *KEY_BODY,
        "-----END RSA PRIVATE KEY-----",
        "",
        "Ask ops before rotating.",
    ]
)
YAML = textwrap.dedent(
    """\
    database:
      host: db.internal
      user: billing
      password: hunter2yaml
    upstream:
      auth: s3cr3tAuthV4lue
      timeout: 30
    """
)
INI = "[db]\nhost = localhost\npassword = hunter2ini\nport = 5432\n"
JS = textwrap.dedent(
    """\
    var dbPass = "Sup3rS3cretJs";
    const hook = "https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdefghijklmnopqrstuvwx";

    function billingHeaders() {
      return { "Authorization": "Basic YmlsbGluZzpodW50ZXIyYmFzaWM=" };
    }

    function connectBilling() {
      return openConnection("billing", dbPass);
    }
    """
)
SHELL = "curl -u billing:hunter2curl https://billing.internal/upload\n"
LEAKS = [
    *KEY_BODY,
    "hunter2yaml",
    "s3cr3tAuthV4lue",
    "hunter2ini",
    "Sup3rS3cretJs",
    "abcdefghijklmnopqrstuvwx",
    "YmlsbGluZzpodW50ZXIyYmFzaWM=",
    "hunter2curl",
]


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    ws = tmp_path / "leaky"
    (ws / "ops").mkdir(parents=True)
    (ws / "ops" / "billing-key.txt").write_text(KEY_FILE)
    (ws / "ops" / "billing.yaml").write_text(YAML)
    (ws / "ops" / "db.ini").write_text(INI)
    (ws / "ops" / "billing.js").write_text(JS)
    (ws / "ops" / "upload.sh").write_text(SHELL)
    return ws


def _small_windows() -> Config:
    # Windows of 4 lines: the key's body is split over windows without its BEGIN line.
    return _no_vectors().changed(index={"window_lines": 4, "window_overlap": 1})


def test_every_window_of_a_file_hides_its_credentials(leaky: Path, tmp_path: Path) -> None:
    with Engine(leaky, tmp_path / "idx", config=_small_windows()) as eng:
        eng.index()
        shown = []
        for path in ("billing-key.txt", "billing.yaml", "db.ini", "billing.js", "upload.sh"):
            outline = eng.outline(f"ops/{path}")
            assert outline, path
            shown += [e.text for e in outline]
            shown += [e.text for e in (eng.symbol_at(f"ops/{path}", n) for n in range(1, 14)) if e]
        for question in ("billing key rotate", "billing database password", "billing headers"):
            res = eng.find(FindRequest(question, limit=20, budget_tokens=4000))
            shown += [r.text for r in res.results] + [res.context.text]
        windows = [e for e in eng.outline("ops/billing-key.txt")]
    text = "\n".join(shown)
    assert [leak for leak in LEAKS if leak in text] == []
    assert REDACTED in text
    # A window that holds only the middle of the key hides it, and keeps its line count.
    middle = [w for w in windows if "BEGIN" not in w.text and REDACTED in w.text]
    assert middle and all(w.text.count("\n") == w.end - w.start for w in windows)
    # What is not a credential stays readable.
    for kept in ("host: db.internal", "user: billing", "timeout: 30", "port = 5432", "Ask ops"):
        assert kept in text


def test_the_index_keeps_the_real_text_so_search_still_finds_it(
    leaky: Path, tmp_path: Path
) -> None:
    with Engine(leaky, tmp_path / "idx", config=_no_vectors()) as eng:
        hit = eng.find(FindRequest("hunter2ini", limit=3))
    assert hit.results and hit.results[0].path == "ops/db.ini"
    assert "hunter2ini" not in hit.results[0].text


def test_an_index_of_an_older_schema_is_rebuilt_with_a_note(project: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    with Engine(project, idx, config=_no_vectors()) as eng:
        eng.index()
    db = sqlite3.connect(idx / "store.sqlite")
    db.execute("UPDATE meta SET value='6' WHERE key='schema_version'")
    db.commit()
    db.close()
    with Engine(project, idx, config=_no_vectors()) as eng:
        assert any("another version" in n and "rebuilt" in n for n in eng.notes), eng.notes
        res = eng.find(FindRequest("cart total"))
    assert res.results


# --------------------------------------------------------------------------- request log


QUERY_SECRETS = [
    ("DB_PASSWORD=hunter2dbpw fails to connect", "hunter2dbpw"),
    ("login rejected for client_secret=c1ientS3cret", "c1ientS3cret"),
    ("curl -u deploy:hunter2curl https://ci/upload returns 401", "hunter2curl"),
    ("Authorization: Basic ZGVwbG95Omh1bnRlcjJiYXNpYw== rejected", "ZGVwbG95Omh1bnRlcjJiYXNpYw"),
    ("export API_KEY=abc123def456 then run", "abc123def456"),
    ("password: 'hunter2quoted'", "hunter2quoted"),
]


@pytest.mark.parametrize(("query", "secret"), QUERY_SECRETS)
def test_the_request_log_hides_what_queries_carry(query: str, secret: str) -> None:
    out = redact(query)
    assert secret not in out and REDACTED in out


def test_the_request_log_is_private_and_redacted(
    project: Path, tmp_path: Path, loose_umask: None
) -> None:
    idx = tmp_path / "idx"
    with Engine(project, idx, config=_no_vectors()) as eng:
        for query, _ in QUERY_SECRETS:
            eng.find(FindRequest(f"check_oauth_state {query}"))
    log = idx / "requests.jsonl"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    text = log.read_text()
    assert [s for _, s in QUERY_SECRETS if s in text] == []
    assert all("check_oauth_state" in json.loads(line)["query"] for line in text.splitlines())
