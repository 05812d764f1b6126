"""The VS Code extension's copy of the protocol, ``client-vscode/src/protocol.ts``, against
docs/lsp-extensions.md, the way tests/test_lsp_docs.py holds the server to the same page:
methods and notifications, commands, and for every documented interface its fields and the
values of its unions. So the three copies (server, page, extension) cannot drift apart.

A Python test reading the TypeScript source, not a node test: the page is already parsed here
(``support.lsp_doc``, shared with the server's check), so both checks read it one way; and it
runs with the rest of pytest on any machine, before (and without) ``npm ci``. The TypeScript
compiler keeps the extension's own code consistent with protocol.ts; this keeps protocol.ts
consistent with the page.

Optional fields are compared in the direction that breaks a client: a parameter the extension
may leave out must be optional on the page (the server would refuse a missing required one),
and a result field the page calls optional must be optional in the extension (it may be absent).
"""

from __future__ import annotations

import re

from support import ROOT, lsp_doc

PROTOCOL_TS = ROOT / "client-vscode" / "src" / "protocol.ts"

# The page's interface names and the extension's. Params flow client -> server; the rest are
# answers and notifications, server -> client.
DOC_TO_TS = {
    "FindParams": "FindParams",
    "Settings": "ServerSettings",
    "FindAnswer": "FindResult",
    "ExplainAnswer": "ExplainResult",
    "Evidence": "Evidence",
    "ContextPack": "ContextPack",
    "Dropped": "Dropped",
    "StageTiming": "StageTiming",
    "StatusParams": "IndexStatus",
}
PARAMS = {"FindParams", "Settings"}


def strip_comments(ts: str) -> str:
    ts = re.sub(r"/\*.*?\*/", "", ts, flags=re.S)
    return re.sub(r"(^|\s)//[^\n]*", r"\1", ts)


def ts_interfaces(ts: str) -> dict[str, tuple[str | None, list[lsp_doc.Field]]]:
    """``export interface Name [extends Base] { ... }`` -> {Name: (Base, fields)}."""
    found = {}
    for name, base, body in re.findall(
        r"^export interface (\w+)(?: extends (\w+))? \{\n(.*?)^\}", ts, re.S | re.M
    ):
        found[name] = (base or None, lsp_doc.fields(body))
    return found


def ts_aliases(ts: str) -> dict[str, str]:
    return dict(re.findall(r"^export type (\w+)\s*=\s*(.*?);", ts, re.S | re.M))


def ts_union(type_text: str, aliases: dict[str, str]) -> set[str] | None:
    """The string literals a TypeScript type allows, following type aliases; None when some
    member is not a literal (``string``, an object type)."""
    values: set[str] = set()
    for part in (p.strip() for p in type_text.split("|")):
        m = re.fullmatch(r"'([^']*)'|\"([^\"]*)\"", part)
        if m:
            values.add(m.group(1) if m.group(1) is not None else m.group(2))
        elif part in aliases:
            inner = ts_union(aliases[part], aliases)
            if inner is None:
                return None
            values |= inner
        else:
            return None
    return values


def ts_constants(ts: str, name: str) -> set[str]:
    m = re.search(rf"^export const {name} = \{{(.*?)\}}", ts, re.S | re.M)
    return set(re.findall(r"'([^']+)'", m.group(1))) if m else set()


def protocol_mismatches(doc: str, ts_source: str) -> list[str]:
    """Every disagreement between the page and protocol.ts, as a sentence."""
    ts = strip_comments(ts_source)
    problems: list[str] = []
    requests = set(re.findall(r"new RequestType\d?\b[^(]*\(\s*'([^']+)'", ts))
    notes = set(re.findall(r"new NotificationType\d?\b[^(]*\(\s*'([^']+)'", ts))
    if requests != lsp_doc.methods(doc):
        problems.append(
            f"methods: page {sorted(lsp_doc.methods(doc))}, extension {sorted(requests)}"
        )
    if notes != lsp_doc.notifications(doc):
        problems.append(
            f"notifications: page {sorted(lsp_doc.notifications(doc))}, extension {sorted(notes)}"
        )
    server_cmds = ts_constants(ts, "ServerCommands")
    client_cmds = ts_constants(ts, "ClientCommands")
    documented_cmds = lsp_doc.commands(doc)
    for cmd in sorted(server_cmds - documented_cmds):
        problems.append(f"commands: the extension sends {cmd}, the page has no such command")
    for cmd in sorted(documented_cmds - server_cmds - client_cmds):
        problems.append(f"commands: the page documents {cmd}, the extension does not know it")

    doc_ifaces = lsp_doc.interfaces(doc)
    ifaces = ts_interfaces(ts)
    aliases = ts_aliases(ts)
    for doc_name in sorted(doc_ifaces):
        ts_name = DOC_TO_TS.get(doc_name)
        if ts_name is None or ts_name not in ifaces:
            problems.append(f"interface {doc_name}: protocol.ts has no {ts_name or 'counterpart'}")
            continue
        documented = {f.name: f for f in doc_ifaces[doc_name]}
        declared = {f.name: f for f in ifaces[ts_name][1]}
        if set(documented) != set(declared):
            problems.append(
                f"{doc_name} fields: page has {sorted(set(documented) - set(declared))} that "
                f"{ts_name} lacks, {ts_name} has {sorted(set(declared) - set(documented))} "
                "that the page lacks"
            )
        for name in sorted(set(documented) & set(declared)):
            d, t = documented[name], declared[name]
            if doc_name in PARAMS and t.optional and not d.optional:
                problems.append(f"{doc_name}.{name}: required on the page, optional in {ts_name}")
            if doc_name not in PARAMS and d.optional and not t.optional:
                problems.append(f"{doc_name}.{name}: optional on the page, required in {ts_name}")
            allowed = lsp_doc.literals(d.type)
            if allowed and ts_union(t.type, aliases) != allowed:
                problems.append(
                    f"{doc_name}.{name} values: page {sorted(allowed)}, "
                    f"{ts_name} {t.type!r} = {ts_union(t.type, aliases)}"
                )
    return problems


def test_protocol_ts_matches_the_page() -> None:
    assert protocol_mismatches(lsp_doc.LSP_DOC.read_text(), PROTOCOL_TS.read_text()) == []


def test_the_check_catches_drift() -> None:
    """A doctored copy of protocol.ts: each kind of drift must be reported."""
    doc = lsp_doc.LSP_DOC.read_text()
    ts = PROTOCOL_TS.read_text()
    edits = {
        "methods": ("'codeEvidence/explain'", "'codeEvidence/explainIt'"),
        "notifications": ("'codeEvidence/status'", "'codeEvidence/state'"),
        "commands": ("reindex: 'codeEvidence.reindex'", "reindex: 'codeEvidence.reindexAll'"),
        "FindParams fields": ("  asOf?: string;", "  asOfRef?: string;"),
        "StatusParams fields": ("  pendingFiles: number | null;", ""),
        "FindParams.intent values": ("'auto' | ", ""),
        "FindParams.query": ("  query: string;", "  query?: string;"),
        "interface ExplainAnswer": ("export interface ExplainResult", "export interface Explained"),
    }
    for what, (old, new) in edits.items():
        assert old in ts, f"the doctoring of {what!r} no longer applies: {old!r} is gone"
        problems = protocol_mismatches(doc, ts.replace(old, new, 1))
        assert any(p.startswith(what) for p in problems), (what, problems)


def test_budget_range_is_the_server_configs() -> None:
    """Issue 21: settings said 256–200,000 where the server takes 0–100,000. One range, from
    ``[context] budget_tokens`` in config.py: package.json and protocol.ts declare the same."""
    import dataclasses
    import json

    from code_evidence.config import ContextConfig

    low, high = next(
        f.metadata["range"] for f in dataclasses.fields(ContextConfig) if f.name == "budget_tokens"
    )
    manifest = json.loads((ROOT / "client-vscode" / "package.json").read_text())
    decl = manifest["contributes"]["configuration"]["properties"]["codeEvidence.budgetTokens"]
    assert (decl["minimum"], decl["maximum"]) == (low, high)
    ts = PROTOCOL_TS.read_text()
    consts = dict(re.findall(r"^export const (BUDGET_TOKENS_M\w+) = ([\d_]+);", ts, re.M))
    assert (int(consts["BUDGET_TOKENS_MIN"]), int(consts["BUDGET_TOKENS_MAX"])) == (low, high)
