"""A repository's ``.code-evidence.toml`` is untrusted (issue 14, Medium: config bombs).

Every key has a type and a hard range in code, checked for the file and ``Config.changed``
alike; the configuration table documents them. A bad file is exit code 2 in the CLI, and in
the language server it is ignored whole, with the error shown and the defaults used: never a
crash, never a machine-sized allocation, never a division by zero.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from code_evidence.api import FindRequest
from code_evidence.cli import main
from code_evidence.config import (
    MAX_FILE_BYTES,
    Config,
    ConfigError,
    key_limits,
    load_config,
    physical_cores,
)
from code_evidence.engine import Engine
from support import ROOT
from support.lsp import find, initialize, ready, start, stop

BOMBS = {
    "a million threads": "[ranking]\nrerank_threads = 1000000\n",
    "more threads than cores": f"[ranking]\nrerank_threads = {physical_cores() + 1}\n",
    "rrf_k below one": "[ranking]\nrrf_k = -1\n",
    "rrf_k zero": "[ranking]\nrrf_k = 0\n",
    "recall of 2**63": "[ranking]\nrecall_k = 9223372036854775807\n",
    "negative recall": "[ranking]\nrecall_k = -5\n",
    "a weight that is not a number": "[ranking]\nbm25_weight = nan\n",
    "an infinite boost": "[ranking]\ncall_boost = inf\n",
    "a budget of a billion tokens": "[context]\nbudget_tokens = 1000000000\n",
    "windows of no lines": "[index]\nwindow_lines = 0\n",
    "a terabyte file limit": "[index]\nmax_file_bytes = 1000000000000\n",
    "a penalty above one": "[ranking]\ntest_penalty = 3.5\n",
    "a million patterns": "[index]\nexclude = [" + '"a",' * 1001 + "]\n",
    "a megabyte pattern": '[index]\nexclude = ["' + "x" * 5000 + '"]\n',
    "arrays nested 50 000 deep": "[index]\nexclude = " + "[" * 50_000 + "]" * 50_000 + "\n",
    "inline tables nested deep": "[ranking]\nx = " + "{a=" * 20_000 + "1" + "}" * 20_000 + "\n",
    "a file over the size limit": "# " + "x" * MAX_FILE_BYTES + "\n",
    "a string instead of a number": '[ranking]\nrecall_k = "100"\n',
    "a bool instead of a number": "[ranking]\nrecall_k = true\n",
}


@pytest.mark.parametrize("text", BOMBS.values(), ids=BOMBS.keys())
def test_a_bad_file_is_a_config_error(text: str, tmp_path: Path) -> None:
    (tmp_path / ".code-evidence.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("section", "values"),
    [
        ("ranking", {"rerank_threads": 1_000_000}),
        ("ranking", {"rrf_k": -1}),
        ("ranking", {"recall_k": 2**63 - 1}),
        ("ranking", {"rerank_blend": float("nan")}),
        ("index", {"max_chunk_lines": 0}),
        ("context", {"per_file_blocks": 10**6}),
    ],
)
def test_changed_checks_the_same_ranges(section: str, values: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=next(iter(values))):
        Config().changed(**{section: values})


def test_every_default_lies_within_its_range_and_bounds_are_accepted() -> None:
    cfg = Config()
    for section in dataclasses.fields(cfg):
        part = getattr(cfg, section.name)
        for f in dataclasses.fields(part):
            if "range" not in f.metadata:
                continue
            low, high = (b() if callable(b) else b for b in f.metadata["range"])
            for value in (low, high, getattr(part, f.name)):
                cfg.changed(**{section.name: {f.name: value}})


@pytest.mark.parametrize("name", ["a million threads", "rrf_k below one", "recall of 2**63"])
def test_the_cli_exits_2_and_names_the_key(
    name: str, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".code-evidence.toml").write_text(BOMBS[name], encoding="utf-8")
    key = re.search(r"(\w+) =", BOMBS[name])
    assert key is not None
    rc = main(["find", "cart total", "--workspace", str(project)])
    rc += 10 * main(["index", "--workspace", str(project), "--index-dir", str(tmp_path / "i")])
    assert rc == 22
    err = capsys.readouterr().err
    assert key.group(1) in err and "outside" in err


def test_the_cli_exits_2_on_a_deeply_nested_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".code-evidence.toml").write_text(BOMBS["arrays nested 50 000 deep"])
    assert main(["status", "--workspace", str(project)]) == 2
    assert "nested too deeply" in capsys.readouterr().err


def test_an_engine_for_a_long_running_host_ignores_the_bad_file(
    project: Path, tmp_path: Path
) -> None:
    (project / ".code-evidence.toml").write_text(
        "[stages]\nvectors = false\n[ranking]\nrrf_k = -1\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError):
        Engine(project, tmp_path / "idx")
    with Engine(project, tmp_path / "idx", bad_config="defaults") as eng:
        assert eng.config == Config()  # the whole file is ignored, valid keys included
        assert eng.config_error is not None and "rrf_k" in eng.config_error
        res = eng.find(FindRequest("cart total"))
        assert res.results and any("rrf_k" in n for n in res.notes)


@pytest.mark.asyncio
async def test_the_language_server_ignores_a_bad_file_and_says_so(
    project: Path, tmp_path: Path
) -> None:
    (project / ".code-evidence.toml").write_text(
        "[ranking]\nrerank_threads = 1000000\nrrf_k = -1\n", encoding="utf-8"
    )
    client = await start(tmp_path / "idx")
    try:
        await initialize(client, project)
        await ready(client)
        answer = await find(client, {"query": "cart total price"})
        assert answer["results"]
        assert any(".code-evidence.toml ignored" in n for n in answer["notes"])
        shown = [m.message for m in client.messages]
        assert any(".code-evidence.toml" in m and "defaults" in m for m in shown), shown
    finally:
        await stop(client)


def _documented_rows() -> dict[str, tuple[str, str, str]]:
    """``[section] key`` -> (type, range, default) from docs/configuration.md's table."""
    rows = {}
    for line in (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `[") and len(cells) >= 5:
            rows[cells[0].strip("`")] = (cells[1], cells[2], cells[3])
    return rows


def test_the_configuration_table_gives_each_key_its_type_range_and_default() -> None:
    assert _documented_rows() == key_limits()
