"""Where a result opens (``search/focus.py``): the line a trace points at, else the line that
holds the question (a message the code writes over several lines included), else the first;
a caller opens at its call. Through the engine, the CLI and its JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from code_evidence.api import Chunk, FindRequest
from code_evidence.engine import Engine
from code_evidence.search.explain import explain
from code_evidence.search.focus import Focus, LineScorer, call_line, focus_line, name_line
from code_evidence.search.query import analyze
from support import ROOT

# A long function whose message is written over three lines, 30 lines into it.
CONFIG = (
    '"""Settings."""\n'
    "import os\n\n\n"
    "def from_envvar(variable_name, silent=False):\n"
    '    """Load a configuration from an environment variable pointing to a file.\n\n'
    "    :param variable_name: name of the environment variable\n"
    "    :param silent: set to ``True`` if you want silent failure for missing files.\n"
    '    """\n'
    + "".join(f"    step_{i} = os.environ.get('STEP_{i}')\n" for i in range(20))
    + "    rv = os.environ.get(variable_name)\n"
    "    if not rv:\n"
    "        if silent:\n"
    "            return False\n"
    "        raise RuntimeError(\n"
    '            f"The environment variable {variable_name!r} is not set"\n'
    '            " and as such configuration could not be loaded. Set"\n'
    '            " this variable and make it point to a configuration"\n'
    '            " file"\n'
    "        )\n"
    "    return rv\n"
)
MESSAGE = (
    "RuntimeError: The environment variable 'APP_SETTINGS' is not set and as such "
    "configuration could not be loaded. Set this variable and make it point to a "
    "configuration file"
)


def chunk_of(text: str, start: int = 1, path: str = "config.py") -> Chunk:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    end = start + len(lines) - 1
    return Chunk(path, start, end, "from_envvar", "function", "python", text, "h")


def line_of(text: str, needle: str, start: int = 1) -> int:
    return start + next(i for i, line in enumerate(text.split("\n")) if needle in line)


def test_a_message_written_over_several_lines_is_found_by_its_pieces() -> None:
    """No line holds a whole fragment of the pasted message; each line of the template holds
    a piece of one, and outscores the docstring line that shares the message's words."""
    qa = analyze(MESSAGE)
    scorer = LineScorer(qa.terms, qa.identifiers, qa.fragments)
    ch = chunk_of(CONFIG)
    at = focus_line(ch, [], scorer)
    assert (
        'is not set"' in CONFIG.split("\n")[at - 1]
        or "such configuration" in (CONFIG.split("\n")[at - 1])
    )
    param = line_of(CONFIG, ":param variable_name")
    by_line = scorer.scores(CONFIG)
    assert by_line[at - 1] > by_line[param - 1]
    # A piece must be long enough to say something: "is not set" alone is on many lines.
    assert scorer.scores('    log("is not set")') == scorer.scores("    log()")


def test_of_two_templates_the_one_writing_more_of_the_message_comes_first() -> None:
    """Two raises share words; the run of literal lines writing more of the pasted message
    wins, at its first line. A literal that is a whole short fragment beats a comment saying
    it, and a value quoted before the words does not hide them."""
    code = (
        "if isinstance(exc_class, Exception):\n"
        "    raise TypeError(\n"
        '        f"{exc_class!r} is an instance, not a class. Handlers"\n'
        '        " can only be registered for Exception classes or HTTP"\n'
        '        " error codes."\n'
        "    )\n"
        "if not issubclass(exc_class, Exception):\n"
        "    raise ValueError(\n"
        "        f\"'{exc_class.__name__}' is not a subclass of Exception.\"\n"
        '        " Handlers can only be registered for Exception classes"\n'
        '        " or HTTP error codes."\n'
        "    )\n"
    )
    pasted = (
        "ValueError: 'str' is not a subclass of Exception. Handlers can only be registered "
        "for Exception classes or HTTP error codes."
    )
    qa = analyze(pasted)
    scorer = LineScorer(qa.terms, qa.identifiers, qa.fragments)
    assert scorer.best(code)[0] == 8  # the ValueError's message, from its first line
    go = '\t// Error will panic if err is nil.\n\tif err == nil {\n\t\tpanic("err is nil")\n'
    qa = analyze("panic: err is nil")
    assert LineScorer(qa.terms, qa.identifiers, qa.fragments).best(go)[0] == 2
    quoted = (
        "def stream_with_context(gen):\n"
        "    if ctx is None:\n"
        "        raise RuntimeError(\n"
        "            \"'stream_with_context' can only be used when a request\"\n"
        '            " context is active, such as in a view function."\n'
        "        )\n"
    )
    qa = analyze(
        "RuntimeError: 'stream_with_context' can only be used when a request context is "
        "active, such as in a view function."
    )
    assert LineScorer(qa.terms, qa.identifiers, qa.fragments).best(quoted)[0] == 3


def test_a_term_counts_as_a_word_or_an_identifiers_part() -> None:
    """As the index splits identifiers: ``error`` in ``RuntimeError`` and ``raise_error``,
    ``http`` and ``server`` in ``HTTPServer``; not ``error`` inside ``errors`` or ``set``
    inside ``reset``. Identifiers the question names weigh three."""
    scorer = LineScorer(["error", "http", "server", "set"], ["parse_url"], [])

    def score(line: str) -> float:
        return scorer.scores(line).get(0, 0.0)

    assert score("raise RuntimeError(x)") == 1 and score("raise_error(x)") == 1
    assert score("srv = HTTPServer(addr)") == 2
    assert score("for e in errors: reset()") == 0
    assert score("u = parse_url(s)") == 3 and score("u = parse_urls(s)") == 0
    assert score("set(x); set(y)") == 1  # a term counts once a line


def test_a_line_the_question_points_at_comes_first() -> None:
    """A frame's line inside the result wins over the line its words prefer; frames outside
    the result are passed over; with nothing to go on, the result opens where it is named."""
    score = LineScorer(["environment", "variable"], [], [])
    ch = chunk_of(CONFIG, start=100)
    assert focus_line(ch, [5, 125, 101], score) == 125  # 5 is outside, 125 comes first
    assert focus_line(ch, [], LineScorer(["nowhere"], [], [])) == 104  # its def line
    words = focus_line(ch, [], score)
    assert words != 100 and "environment variable" in CONFIG.split("\n")[words - 100]
    # Per path: another file's frame lines do not move this one.
    opens = Focus({"other.py": [125]}, LineScorer(["nowhere"], [], []))
    assert opens(ch) == 104


def test_with_nothing_to_go_on_a_definition_opens_at_its_name() -> None:
    """Past its decorators, attributes and doc comment; a window of lines at its first line."""
    text = '@app.route("/")\n@login_required\ndef index():\n    return render()\n'
    ch = Chunk("app.py", 10, 13, "views.index", "function", "python", text, "h")
    nothing = LineScorer(["nowhere"], [], [])
    assert focus_line(ch, [], nothing) == 12 == name_line(ch)
    rust = "/// Splits the buffer.\n#[inline]\npub fn split_to(&mut self) {}\n"
    assert name_line(Chunk("b.rs", 1, 3, "Bytes::split_to", "method", "rust", rust, "h")) == 3
    ruby = "# Adds a late fee.\ndef apply_late_fee!(rate)\nend\n"
    fee = Chunk("i.rb", 7, 9, "Invoice.apply_late_fee!", "method", "ruby", ruby, "h")
    assert name_line(fee) == 8
    window = Chunk("a.md", 5, 6, "", "window", "text", "split_to\nmore", "h")
    assert focus_line(window, [], nothing) == 5


def test_a_caller_opens_at_its_call() -> None:
    text = "def handler(req):\n    user = load(req)\n    return render_total(user)\n"
    ch = chunk_of(text, start=40)
    assert call_line(ch, "render_total") == 42
    assert call_line(ch, "total") == 40  # render_total is another name: no call, first line
    rust = chunk_of('fn f() {\n    let v = parse::<u8>(s);\n    debug!("x");\n}\n', start=1)
    assert call_line(rust, "parse") == 2 and call_line(rust, "debug") == 3
    method = chunk_of("def t():\n    cart = Cart()\n    assert cart.total() == 1\n")
    assert call_line(method, "total") == 3


def write_workspace(root: Path) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "config.py").write_text(CONFIG)
    (root / "pkg" / "other.py").write_text("def unrelated():\n    return 'nothing to see here'\n")


def test_the_engine_opens_a_message_at_its_raise_site(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_workspace(ws)
    raise_line = line_of(CONFIG, "raise RuntimeError(")
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        res = eng.find(FindRequest(MESSAGE, budget_tokens=0))
    top = res.results[0]
    assert top.path == "pkg/config.py" and top.start <= 5
    assert raise_line <= top.line <= raise_line + 4, (top.start, top.line, raise_line)
    assert all(r.start <= r.line <= r.end for r in res.results)
    assert explain(res)[0].startswith(
        f" 1. pkg/config.py:{top.start}-{top.end} from_envvar (opens at {top.line}):"
    )


def test_the_cli_prints_where_each_result_opens(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_workspace(ws)
    raise_line = line_of(CONFIG, "raise RuntimeError(")
    idx = ["--workspace", str(ws), "--index-dir", str(tmp_path / "idx")]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
        cmd = [sys.executable, "-m", "code_evidence.cli", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)

    out = cli("find", MESSAGE, *idx, "--limit", "1")
    assert out.returncode == 0, out.stderr
    first = next(line for line in out.stdout.splitlines() if line.startswith(" 1. "))
    loc = first.split()[1]
    path, line = loc.split(":")
    assert path == "pkg/config.py" and raise_line <= int(line) <= raise_line + 4
    as_json = cli("find", MESSAGE, *idx, "--limit", "1", "--json")
    (result,) = json.loads(as_json.stdout)["results"]
    assert result["line"] == int(line) and result["start"] < result["line"] <= result["end"]
