"""The README and the references in docs/ against the code, so that they cannot drift: the
README stays a newcomer's page (short, every link alive, its pipeline table the architecture's);
docs/cli.md names exactly the commands and flags ``--help`` shows, the limits, reason tags,
score keys, stages and secret-file names the code has, and a JSON example with every field;
docs/configuration.md every key with the code's type, default and word list. Each check
returns its problems as sentences, and the last tests feed doctored pages to the checks to
prove they fail. (The LSP reference has its own tests: test_lsp_docs.py, test_client_protocol.py.)
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from code_evidence import api, cli_args, secrets
from code_evidence.api import Evidence, FindResult, StageTiming
from code_evidence.config import _CHOICES, Config, IndexConfig
from code_evidence.evaluation.backtest import DEFAULT_CONFIGS
from code_evidence.evaluation.evaluate import CONFIGS
from code_evidence.search import explain, pipeline
from support import ROOT
from support.lsp import server_env

README = ROOT / "README.md"
DOCS = ROOT / "docs"
CLI_DOC = DOCS / "cli.md"
CONFIG_DOC = DOCS / "configuration.md"
ARCHITECTURE = DOCS / "architecture.md"
README_MAX_LINES = 250
# Every page a reader follows links through.
PAGES = [
    README,
    *sorted(DOCS.glob("*.md")),
    ROOT / "client-vscode" / "README.md",
    ROOT / "editors" / "neovim" / "README.md",
    ROOT / "bench" / "README.md",
    ROOT / "training" / "README.md",
]


def section(text: str, heading: str) -> str:
    """The body under ``heading`` (a whole heading line), up to the next heading of its level
    or above; lines inside code blocks are never headings."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.splitlines(keepends=True)
    start = lines.index(heading + "\n") + 1
    fenced = False
    for i in range(start, len(lines)):
        if lines[i].startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(rf"#{{1,{level}}} ", lines[i]):
            return "".join(lines[start:i])
    return "".join(lines[start:])


def without_code_blocks(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def table_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row, header and separator rows left out."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"\|\s*-", line):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:] if rows else rows


def bullet(text: str, starts_with: str) -> str:
    """One ``- starts_with …`` list item with its continuation lines."""
    m = re.search(rf"^- {re.escape(starts_with)}.*?(?=^- |^\S|\Z)", text, re.M | re.S)
    assert m, f"no bullet starting with {starts_with!r}"
    return m.group(0)


def ticked(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


# ------------------------------------------------------------------------------------------
# README and links


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    return {slug(h) for h in re.findall(r"^#+ (.*)$", without_code_blocks(text), re.M)}


def link_problems(page: Path, text: str) -> list[str]:
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", without_code_blocks(text)):
        if re.match(r"[a-z]+:", target):
            continue  # http:, mailto:, file:
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in anchors(text):
                problems.append(f"{page.name}: {target} names no heading of {page.name}")
            continue
        dest = (page.parent / path).resolve()
        if not dest.exists():
            problems.append(f"{page.name}: link to {target} leads nowhere")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            problems.append(f"{page.name}: {target} names no heading of {dest.name}")
    return problems


def test_readme_is_a_short_page() -> None:
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_somewhere(page: Path) -> None:
    assert link_problems(page, page.read_text()) == []


def stage_rows(text: str, heading: str) -> dict[str, str]:
    """stage -> module of the ``| stage | module | what |`` table under ``heading``."""
    return {
        row[0]: row[1].strip("`")
        for row in table_rows(section(text, heading))
        if len(row) >= 2 and row[1].startswith("`")
    }


def test_readme_pipeline_is_the_architecture_table() -> None:
    readme = stage_rows(README.read_text(), "## How a request runs")
    arch = stage_rows(ARCHITECTURE.read_text(), "## A request, stage by stage")
    assert len(readme) >= 10
    for stage, module in readme.items():
        assert arch.get(stage) == module, (
            f"README: {stage} -> {module}; architecture.md: {arch.get(stage)}"
        )
        assert (ROOT / "server" / "code_evidence" / module).is_file(), module


def test_readme_examples_are_real_commands() -> None:
    """The three examples are commands this CLI accepts, and the page says which commit their
    output comes from."""
    text = section(README.read_text(), "## Three questions to this repository")
    commands = re.findall(r"^\$ (code-evidence .*?)(?<!\\)$", text, re.M)
    assert len(commands) == 3, commands
    for command in commands:
        cli_args.build_parser().parse_args(shlex.split(command)[1:])
    assert re.search(r"at commit [0-9a-f]{7}", text)


# ------------------------------------------------------------------------------------------
# docs/cli.md against --help


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    """``code-evidence <command> --help`` for every command the top-level help lists, from a
    subprocess, as a user would ask."""

    def ask(*args: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "code_evidence.cli", *args, "--help"],
            env=server_env(),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return proc.stdout

    top = ask()
    commands = re.search(r"\{([\w,-]+)\}", top)
    assert commands, top
    return {name: ask(name) for name in commands.group(1).split(",")}


def help_flags(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", help_text)) - {"--help"}


def synopsis(doc: str) -> dict[str, set[str]]:
    """command -> flags of the ``code-evidence <command> ...`` lines of the first code block."""
    block = re.search(r"```\n(code-evidence .*?)```", doc, re.S)
    assert block, "docs/cli.md has no synopsis block"
    flags: dict[str, set[str]] = {}
    command = ""
    for line in block.group(1).splitlines():
        m = re.match(r"code-evidence (\w+)", line)
        if m:
            command = m.group(1)
        flags.setdefault(command, set()).update(re.findall(r"(--[a-z][a-z-]*)", line))
    return flags


def cli_doc_problems(doc: str, helps: dict[str, str]) -> list[str]:
    problems = []
    documented = synopsis(doc)
    if set(documented) != set(helps):
        problems.append(f"commands: doc {sorted(documented)}, --help {sorted(helps)}")
    for command, help_text in helps.items():
        real = help_flags(help_text)
        doc_flags = documented.get(command, set())
        if doc_flags != real:
            problems.append(
                f"{command} flags: only in the doc {sorted(doc_flags - real)}, "
                f"only in --help {sorted(real - doc_flags)}"
            )
        if f"### `{command}`" not in doc and not re.search(rf"^### .*`{command}`", doc, re.M):
            problems.append(f"{command}: no section")
    every_flag = set().union(*(help_flags(h) for h in helps.values())) | {"--help"}
    prose = re.sub(r"`git [^`]*`", "", without_code_blocks(doc))  # git's own flags
    for flag in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", prose)) - every_flag):
        problems.append(f"{flag} is named in the doc but no command has it")
    intents = re.search(r"--intent \{([^}]*)\}", helps.get("find", ""))
    doc_intents = re.search(r"--intent ([a-z|-]+)\]", doc)
    if intents and (
        not doc_intents or set(doc_intents.group(1).split("|")) != set(intents.group(1).split(","))
    ):
        problems.append("--intent values differ from --help")
    return problems


def test_cli_doc_names_exactly_the_commands_and_flags(helps: dict[str, str]) -> None:
    assert cli_doc_problems(CLI_DOC.read_text(), helps) == []


def test_cli_doc_limits_are_the_code_limits() -> None:
    rows = {r[0]: r[1] for r in table_rows(section(CLI_DOC.read_text(), "## Limits"))}
    assert rows["query length"] == f"{api.MAX_QUERY_CHARS:,} characters"
    assert rows["`--limit`"] == f"1–{api.MAX_LIMIT}"
    assert rows["`--budget`"].startswith(f"0–{api.MAX_BUDGET_TOKENS:,} tokens")
    assert rows["file size"] == f"`max_file_bytes` (default {IndexConfig().max_file_bytes:,} bytes)"
    assert rows["`--line`"].startswith(f"1–{api.MAX_LINE:,} ")


def test_cli_doc_json_example_lists_every_answer_field() -> None:
    doc = section(CLI_DOC.read_text(), "## The JSON answer")
    block = doc.split("```json", 1)[1].split("```", 1)[0]
    top = set(re.findall(r'^  "(\w+)":', block, re.M)) | set(re.findall(r', "(\w+)":', block))
    assert {f.name for f in dataclasses.fields(FindResult)} <= top | {"commit", "branch"}
    for f in (*dataclasses.fields(Evidence), *dataclasses.fields(StageTiming)):
        assert f'"{f.name}"' in block, f.name


def code_tags() -> set[str]:
    """Every reason tag the ranking code can put on a result: the recall channels and each
    literal passed to ``tag``."""
    search = ROOT / "server" / "code_evidence" / "search"
    tags = set(explain.CHANNELS)
    for path in search.glob("*.py"):
        for argument in re.findall(r"\.tag\(([^)]*)\)", path.read_text()):
            tags |= set(re.findall(r'"([\w-]+)"', argument))
        for group in re.findall(r"for tag in \(([^)]*)\)", path.read_text()):
            tags |= set(re.findall(r'"([\w-]+)"', group))
    return tags


def answer_problems(doc: str) -> list[str]:
    """Reason tags, score keys and trace stages of the JSON answer section against the code."""
    text = section(doc, "## The JSON answer")
    problems = []
    documented = set(ticked(bullet(text, "`reasons`"))) - {"reasons"}
    if documented != code_tags():
        problems.append(f"reasons: doc {sorted(documented)}, code {sorted(code_tags())}")
    source = inspect.getsource(pipeline.evidence)
    keys = {f"{ch}_rank" for ch in explain.CHANNELS}
    keys |= set(re.findall(r'(?<!_)scores\["(\w+)"\] =', source))
    keys |= set(re.findall(r'"(\w+)": c\.', source))
    documented = {t for t in ticked(bullet(text, "`scores`")) if re.fullmatch(r"\w+", t)}
    if not keys <= documented:
        problems.append(f"scores keys missing from the doc: {sorted(keys - documented)}")
    stages = set(re.findall(r'timings\["([\w.]+)"\]', inspect.getsource(pipeline)))
    stages |= {f"recall.{ch}" for ch in explain.CHANNELS}
    documented = set(ticked(bullet(text, "`trace`")))
    if not stages <= documented:
        problems.append(f"trace stages missing from the doc: {sorted(stages - documented)}")
    return problems


def test_cli_doc_answer_tags_scores_and_stages_are_the_code_ones() -> None:
    assert answer_problems(CLI_DOC.read_text()) == []


def test_cli_doc_names_the_secret_files_the_scan_skips() -> None:
    text = bullet(section(CLI_DOC.read_text(), "## What is indexed"), "**never read**")
    names = set(ticked(text)) - {"/"}
    assert names == {p for p, _ in secrets.SECRET_FILES} | secrets.SECRET_ALLOWED


def test_cli_doc_names_the_eval_configurations() -> None:
    text = section(CLI_DOC.read_text(), "### `eval` and `tune`: your repository's own numbers")
    assert f"`{','.join(DEFAULT_CONFIGS)}`" in text
    for name in CONFIGS:
        assert f"`{name}`" in text, name


# ------------------------------------------------------------------------------------------
# docs/configuration.md against config.py

TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", tuple: "list of strings"}


def config_problems(doc: str) -> list[str]:
    problems = []
    rows = {
        row[0].strip("`"): row
        for row in table_rows(section(doc, "## Keys"))
        if re.fullmatch(r"`\[\w+\] \w+`", row[0])
    }
    real: dict[str, Any] = {
        f"[{s.name}] {k.name}": getattr(getattr(Config(), s.name), k.name)
        for s in dataclasses.fields(Config)
        for k in dataclasses.fields(getattr(Config(), s.name))
    }
    if set(rows) != set(real):
        problems.append(
            f"keys: only in the doc {sorted(set(rows) - set(real))}, "
            f"only in the code {sorted(set(real) - set(rows))}"
        )
    for key in sorted(set(rows) & set(real)):
        _, type_, range_, default, *_ = rows[key]
        value = real[key]
        if type_ != TYPES[type(value)]:
            problems.append(f"{key}: type {type_!r}, code {TYPES[type(value)]!r}")
        documented = tomllib.loads(f"v = {default.strip('`')}")["v"]
        if documented != (list(value) if isinstance(value, tuple) else value):
            problems.append(f"{key}: default {default}, code {value!r}")
        choices = _CHOICES.get(key.split()[1]) if key.startswith("[ranking]") else None
        if choices is not None and set(re.findall(r'"([\w-]+)"', range_)) != set(choices):
            problems.append(f"{key}: values {range_}, code {choices}")
    return problems


def test_configuration_doc_is_the_code() -> None:
    assert config_problems(CONFIG_DOC.read_text()) == []


# ------------------------------------------------------------------------------------------
# The checks fail on drift


def test_the_checks_catch_drift(helps: dict[str, str], tmp_path: Path) -> None:
    cli_doc = CLI_DOC.read_text()
    doctored = cli_doc.replace("[--as-of REF] ", "").replace("[--deep]", "[--deep] [--fast]")
    problems = cli_doc_problems(doctored, helps)
    assert any("find flags" in p and "--fast" in p and "--as-of" in p for p in problems), problems
    doctored = cli_doc.replace("`--quiet`: no progress output.", "`--silent`: no output.")
    assert any(p.startswith("--silent") for p in cli_doc_problems(doctored, helps))

    assert answer_problems(cli_doc.replace("`frames`: a pasted", "`stack`: a pasted"))
    assert answer_problems(
        cli_doc.replace("`structural_rank`, `cochange_rank`, `frames_rank`,", "")
    )

    config_doc = CONFIG_DOC.read_text()
    for old, new, what in [
        (
            "| `[ranking] rrf_k` | integer | 1–10,000 | `60` |",
            "| `[ranking] rrf_k` | integer | 1–10,000 | `50` |",
            "default",
        ),
        ("| `[index] max_file_bytes` | integer |", "| `[index] max_file_bytes` | number |", "type"),
        ('`"descriptions"`, `"all"` |', '`"descriptions"`, `"some"` |', "values"),
        ("| `[context] per_file_blocks`", "| `[context] per_file_block`", "keys"),
    ]:
        assert old in config_doc, old
        assert any(what in p for p in config_problems(config_doc.replace(old, new))), what

    page = tmp_path / "page.md"
    assert link_problems(page, "[x](nowhere.md) [y](#no-such-heading)\n# A heading\n") == [
        "page.md: link to nowhere.md leads nowhere",
        "page.md: #no-such-heading names no heading of page.md",
    ]
