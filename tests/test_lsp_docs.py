"""docs/lsp-extensions.md against the server: every method, command, parameter and field the
page lists must be what the server registers and sends, and nothing the server sends may be
missing from the page. Answer and status fields are taken from real payloads built by the same
functions the server uses, on a real index. (The VS Code extension's copy of the protocol is
checked against the same page by tests/test_client_protocol.py.)"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from code_evidence.api import Dropped, FindRequest, IndexReport, StageTiming
from code_evidence.engine import Engine
from code_evidence.live import passes, watch
from code_evidence.lsp import app, protocol
from code_evidence.lsp.features import find
from support import lsp_doc

DOC = lsp_doc.LSP_DOC


def doc_mismatches(text: str, facts: dict[str, Any]) -> list[str]:
    """Every disagreement between the doc and ``facts`` (what the code does), as a sentence."""
    problems: list[str] = []

    def same(what: str, documented: Any, actual: Any) -> None:
        if documented != actual:
            problems.append(f"{what}: doc says {documented!r}, code has {actual!r}")

    same("methods", lsp_doc.methods(text), facts["methods"])
    same("notifications", lsp_doc.notifications(text), facts["notifications"])
    same("commands", lsp_doc.commands(text), facts["commands"])
    ifaces = lsp_doc.interfaces(text)
    for name, actual in facts["interfaces"].items():
        if name not in ifaces:
            problems.append(f"interface {name} is not documented")
            continue
        same(f"{name} fields", [f.name for f in ifaces[name]], list(actual))
    documented_unions = lsp_doc.unions(ifaces)
    for (name, field), actual in facts["unions"].items():
        same(f"{name}.{field} values", documented_unions.get((name, field), set()), actual)
    for name, field in sorted(set(documented_unions) - set(facts["unions"])):
        problems.append(f"{name}.{field} values: documented, but the test knows no code for them")
    m = re.search(r"`IndexReport` is `code-evidence index --json`:(.*?)\n\n", text, re.S)
    same(
        "IndexReport fields",
        re.findall(r"`(\w+)`", m.group(1)) if m else None,
        facts["index_report"],
    )
    for phrase in facts["phrases"]:
        if phrase not in " ".join(text.split()):
            problems.append(f"the doc no longer says {phrase!r}")
    return problems


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from support.project import PROJECT, write_project

    root = tmp_path_factory.mktemp("docs-ws")
    write_project(root, PROJECT)
    with Engine(root, root.parent / "docs-idx") as eng:
        eng.index()
        result = eng.find(FindRequest("discount_for"))
        answer = protocol.find_answer(result, eng.workspace, eng.state)
        explained = protocol.find_answer(result, eng.workspace, eng.state, explained=True)
        status = protocol.status_payload(eng.workspace, "ready", "ok", eng.status(), None)
    assert answer["results"], "the fixture must produce at least one result"
    return {
        "methods": set(app.custom_methods()),
        "notifications": {protocol.STATUS_NOTIFICATION},
        "commands": set(app.commands()),
        "interfaces": {
            "FindParams": list(protocol.FIND_PARAMS),
            "FindAnswer": list(answer),
            "ExplainAnswer": [k for k in explained if k not in answer],
            "Evidence": list(answer["results"][0]),
            "ContextPack": list(answer["context"]),
            "Dropped": [f.name for f in dataclasses.fields(Dropped)],
            "StageTiming": [f.name for f in dataclasses.fields(StageTiming)],
            "StatusParams": list(status),
            "Settings": list(protocol.SETTINGS),
        },
        "unions": {
            ("FindParams", "intent"): set(protocol.INTENTS),
            ("FindParams", "depth"): set(protocol.DEPTHS),
            ("FindAnswer", "indexState"): set(protocol.INDEX_STATES),
            ("FindAnswer", "index_mode"): {"read-write", "read-only"},
            ("StatusParams", "state"): set(protocol.STATUS_STATES),
            ("Settings", "rerank"): set(protocol.RERANK_MODES),
        },
        "index_report": [f.name for f in dataclasses.fields(IndexReport)],
        "phrases": [
            f"waits (up to {find.FIND_WAIT_FOR_EDITS_S:g} s)",
            f"reads at least {passes.LARGE_READ} files",
            f"embeds at least {passes.LARGE_EMBED} chunks",
            f"({watch.QUIET_S:g} s of quiet, at most {watch.MAX_WAIT_S:g} s)",
            f"`initializationOptions.{protocol.TRUST_OTHER_OWNER}`",
        ],
    }


def test_lsp_extensions_doc_matches_the_code(facts: dict[str, Any]) -> None:
    assert doc_mismatches(DOC.read_text(), facts) == []


def test_the_check_catches_drift(facts: dict[str, Any]) -> None:
    """The doc check is only worth something if it fails: renamed, removed and added names in a
    doctored copy of the doc must each be reported."""
    text = DOC.read_text()
    doctored = (
        text.replace("budgetTokens?: number;                  // context", "budget?: number; //")
        .replace("**Command:** `codeEvidence.status`", "**Command:** `codeEvidence.state`")
        .replace("    pendingFiles: number | null;", "")
        .replace('"fix-failure" | ', "")
    )
    problems = doc_mismatches(doctored, facts)
    assert any(p.startswith("FindParams fields") for p in problems)
    assert any(p.startswith("commands") for p in problems)
    assert any(p.startswith("StatusParams fields") for p in problems)
    assert any(p.startswith("FindParams.intent values") for p in problems)
    added = {**facts, "methods": {*facts["methods"], "codeEvidence/related"}}
    assert any(p.startswith("methods") for p in doc_mismatches(text, added))
