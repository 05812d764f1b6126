"""Secrets inside indexed code are masked in everything an answer carries, and request limits
give a clear error or a truncation note (issue 8)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from code_evidence.api import MAX_BUDGET_TOKENS, MAX_LIMIT, MAX_QUERY_CHARS, FindRequest
from code_evidence.cli import main
from code_evidence.config import Config
from code_evidence.engine import Engine, EngineError
from code_evidence.secrets import REDACTED, apply_spans, secret_spans

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
URL_PASSWORD = "hunter22pw"
PEM_BODY = "MIIEowIBAAKCAQEAzKmBGA6Sd0V2nZ9Lq"
SHA256_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
SECRETS = (AWS_ID, AWS_SECRET, URL_PASSWORD, PEM_BODY)

SETTINGS = textwrap.dedent(
    f'''
    """Deployment settings for the billing uploader."""

    AWS_ACCESS_KEY_ID = "{AWS_ID}"
    AWS_SECRET = "{AWS_SECRET}"
    DATABASE_URL = "postgres://billing:{URL_PASSWORD}@db.internal:5432/billing"
    EMPTY_DIGEST = "{SHA256_EMPTY}"
    TOKEN_HEADER = "Authorization"

    SIGNING_KEY = """
    -----BEGIN RSA PRIVATE KEY-----
    {PEM_BODY}
    -----END RSA PRIVATE KEY-----
    """


    def billing_upload_credentials() -> dict[str, str]:
        """Credentials the billing uploader signs in with."""
        return {{"key": AWS_ACCESS_KEY_ID, "secret": AWS_SECRET, "db": DATABASE_URL}}
    '''
).lstrip()


@pytest.fixture
def secret_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "billing").mkdir(parents=True)
    (ws / "billing" / "settings.py").write_text(SETTINGS, encoding="utf-8")
    (ws / "billing" / "upload.py").write_text(
        "from .settings import billing_upload_credentials\n\n\n"
        "def upload_invoice(path: str) -> None:\n"
        "    creds = billing_upload_credentials()\n"
        "    print(path, creds)\n",
        encoding="utf-8",
    )
    return ws


def _no_vectors() -> Config:
    cfg = Config()
    cfg = cfg.changed(stages={"vectors": False})
    return cfg


def mask_secrets(text: str) -> str:
    return apply_spans(text, secret_spans(text))


def test_mask_secrets_keeps_ordinary_code_and_line_count() -> None:
    masked = mask_secrets(SETTINGS)
    for secret in SECRETS:
        assert secret not in masked
    assert masked.count("\n") == SETTINGS.count("\n")
    # Ordinary code stays as it is: a digest constant, a header name, identifiers.
    assert SHA256_EMPTY in masked
    assert '"Authorization"' in masked
    assert "postgres://" in masked and "@db.internal:5432/billing" in masked
    assert "def billing_upload_credentials" in masked
    plain = 'password = os.environ["DB_PASSWORD"]\ndef refresh_token(self, token): return token\n'
    assert mask_secrets(plain) == plain


def test_find_masks_secrets_in_results_context_log_and_hover(
    secret_ws: Path, tmp_path: Path
) -> None:
    with Engine(secret_ws, tmp_path / "idx", config=_no_vectors()) as eng:
        res = eng.find(FindRequest("billing upload credentials AWS secret database url", limit=20))
        assert any(r.path == "billing/settings.py" for r in res.results)
        shown = json.dumps([r.text for r in res.results]) + res.context.text
        assert REDACTED in shown
        for secret in SECRETS:
            assert secret not in shown
        hover = eng.symbol_at("billing/settings.py", 3)
        assert hover is not None and AWS_ID not in hover.text
        outline = "".join(e.text for e in eng.outline("billing/settings.py"))
        assert REDACTED in outline and AWS_SECRET not in outline
        # The index keeps the real text: a search for the key id itself still finds the file.
        hit = eng.find(FindRequest(AWS_ID, limit=5))
        assert hit.results and hit.results[0].path == "billing/settings.py"
        assert AWS_ID not in hit.results[0].text
    logged = (tmp_path / "idx" / "requests.jsonl").read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in logged


def test_cli_json_output_is_masked(secret_ws: Path, tmp_path: Path, capsys) -> None:
    (secret_ws / ".code-evidence.toml").write_text("[stages]\nvectors = false\n")
    rc = main(
        [
            "find",
            "billing upload credentials",
            "--workspace",
            str(secret_ws),
            "--index-dir",
            str(tmp_path / "idx"),
            "--json",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    data = json.loads(out)
    assert data["results"]
    for secret in SECRETS:
        assert secret not in out


def test_limits_give_clear_errors(secret_ws: Path, tmp_path: Path) -> None:
    with Engine(secret_ws, tmp_path / "idx", config=_no_vectors()) as eng:
        with pytest.raises(EngineError, match=f"at most {MAX_LIMIT}"):
            eng.find(FindRequest("upload", limit=MAX_LIMIT + 1))
        with pytest.raises(EngineError, match="--budget must be between"):
            eng.find(FindRequest("upload", budget_tokens=MAX_BUDGET_TOKENS + 1))
        with pytest.raises(EngineError, match="--budget must be between"):
            eng.find(FindRequest("upload", budget_tokens=-1))
        ok = eng.find(FindRequest("upload", limit=MAX_LIMIT, budget_tokens=MAX_BUDGET_TOKENS))
        assert ok.results and ok.context.budget == MAX_BUDGET_TOKENS
        # Budget 0 is "results only" (hover, lenses): the same ranking, no pack.
        bare = eng.find(FindRequest("upload", limit=MAX_LIMIT, budget_tokens=0))
        assert [(r.path, r.start) for r in bare.results] == [(r.path, r.start) for r in ok.results]
        assert bare.context.text == "" and bare.context.tokens == bare.context.budget == 0


def test_a_long_paste_keeps_its_end_with_a_note(secret_ws: Path, tmp_path: Path) -> None:
    # A pasted log: the error line is at the end, so the end is what is kept.
    pasted = "x" * (MAX_QUERY_CHARS + 5000) + " upload_invoice"
    with Engine(secret_ws, tmp_path / "idx", config=_no_vectors()) as eng:
        res = eng.find(FindRequest(pasted))
    assert len(res.query) == MAX_QUERY_CHARS and res.query.endswith(" upload_invoice")
    assert any("only the last" in n and str(MAX_QUERY_CHARS) in n for n in res.notes)
    assert res.results[0].symbol == "upload_invoice"


def test_cli_limit_error_exits_2(secret_ws: Path, tmp_path: Path, capsys) -> None:
    rc = main(
        [
            "find",
            "upload",
            "--workspace",
            str(secret_ws),
            "--index-dir",
            str(tmp_path / "idx"),
            "--limit",
            "100000",
            "--quiet",
        ]
    )
    assert rc == 2
    assert f"at most {MAX_LIMIT}" in capsys.readouterr().err
