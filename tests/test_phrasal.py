"""A question's phrasal verb stands for the one word code fuses it into: "timing out" asks
about ``timeout``, "set up" about ``setup``, "logging in" about ``login``. The engine searches
for the fused word too, only where the workspace holds it, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.search.joined import joined_candidates


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("why is my request timing out", "timeout"),
        ("how do I set up logging", "setup"),
        ("where does it fall back to the default", "fallback"),
        ("it falls back to utf-8", "fallback"),
        ("what happens when logging in", "login"),
        ("shutting down the server hangs", "shutdown"),
        ("the handler is plugged in late", "plugin"),
        ("files are cleaned up on exit", "cleanup"),
    ],
)
def test_a_phrasal_verb_gives_its_fused_word(question: str, word: str) -> None:
    assert word in joined_candidates(question)


def test_two_words_in_a_row_may_be_one_name_in_prose_only() -> None:
    """ "task group" is ``TaskGroup`` or ``task_group``; stopwords and short words join
    nothing; a pasted failure's words are the program's, so only its phrasal verbs join."""
    assert {"taskgroup", "task_group", "groupstart"} <= set(
        joined_candidates("how does the task group start")
    )
    assert joined_candidates("is it in an os") == []
    assert joined_candidates("in out up down") == []  # particles alone
    failure = joined_candidates("task group timed out", prose=False)
    assert failure == joined_candidates("timed out") and "timeout" in failure


CONFIG = (
    "DEFAULT_TIMEOUT = 5.0  # seconds before a request gives up\n\n\n"
    "def client_settings(retries=3):\n"
    "    return {'timeout': DEFAULT_TIMEOUT, 'retries': retries}\n"
)
# What the question's own words match: a request, and the timing of one.
OTHER = (
    "def request(url, method='GET'):\n"
    '    """Send one request; the timing of my request is logged, why it is slow is not."""\n'
    "    timing = log_timing(url)\n"
    "    return method, url, timing\n"
)


def test_the_engine_searches_the_fused_word_only_where_the_workspace_has_it(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.py").write_text(CONFIG)
    (ws / "client.py").write_text(OTHER)
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        res = eng.find(FindRequest("why is my request timing out", budget_tokens=0))
        assert res.results[0].path == "config.py"
        assert "also searched for timeout: the question's words as one" in res.notes
        other = eng.find(FindRequest("where does the request fall back", budget_tokens=0))
        assert not any("also searched" in n for n in other.notes)  # no fallback here
