"""The request log: redacted, bounded, and written by real requests."""

from __future__ import annotations

import json
from pathlib import Path

from code_evidence.api import ContextPack, FindRequest, FindResult
from code_evidence.engine import Engine
from code_evidence.requestlog import RequestLog
from code_evidence.secrets import REDACTED, redact


def test_redaction_masks_credentials_and_keeps_the_rest() -> None:
    text = (
        "export API_KEY=abc123def; password: 'hunter2'; Authorization: Bearer abc.def-ghi\n"
        "https://bob:pw@example.com/x AKIAABCDEFGHIJKLMNOP ghp_abcdefghijklmnopqrstuvwx\n"
        "KeyError in src/app.py line 42"
    )
    out = redact(text)
    for secret in ("abc123def", "hunter2", "abc.def-ghi", "bob:pw", "AKIAABCDEFGHIJKLMNOP", "ghp_"):
        assert secret not in out
    assert out.count(REDACTED) >= 6
    assert "KeyError in src/app.py line 42" in out
    assert "https://" in out and "@example.com/x" in out


def _result(query: str) -> FindResult:
    return FindResult(query, "/ws", None, None, [], ContextPack("", 0, 100), 0.0, True, "x", {})


def test_log_keeps_only_the_newest_entries(tmp_path: Path) -> None:
    log = RequestLog(tmp_path / "requests.jsonl", keep=3)
    for i in range(10):
        log.record(_result(f"query {i}"), None, None)
    entries = log.entries()
    assert 3 <= len(entries) <= 6
    assert entries[-1]["query"] == "query 9"
    assert all(len(e["query_sha256"]) == 64 for e in entries)


def test_engine_logs_requests_without_secrets(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        eng.find(FindRequest("why does check_oauth_state fail with token=s3cr3tvalue"))
        logged = (tmp_path / "idx" / "requests.jsonl").read_text()
    assert "s3cr3tvalue" not in logged
    entry = json.loads(logged.splitlines()[-1])
    assert "check_oauth_state" in entry["query"]
    assert entry["results"][0]["at"].startswith("src/shop/oauth.py:")
    assert "recall.bm25" in entry["stages"]
