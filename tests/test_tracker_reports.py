"""A failure as an error tracker reports it (``search/tracker_reports.py``): Sentry's event
JSON, stored or from its API, its MCP server's answer about an issue, a Rollbar item or
occurrence and a Bugsnag event are read as the runtime printed the failure, innermost frame
where that runtime puts it, and the report's tags and contexts are not text the answer must
contain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from code_evidence.api import MAX_QUERY_CHARS, FindRequest
from code_evidence.engine import Engine
from code_evidence.search.query import analyze
from code_evidence.search.stacktraces import Frame, parse_frames
from code_evidence.search.tracker_reports import reported
from support.traces import finds_the_raise_site

_HEADER = """# Issue WEB-1Z43 in **acme**

**Description**: {title}
**Culprit**: {culprit}
**First Seen**: 2024-05-01T10:12:03.117Z
**Last Seen**: 2024-05-01T10:12:03.117Z
**Occurrences**: 12
**Users Impacted**: 3
**Status**: unresolved
**Platform**: {platform}
**Project**: web
**URL**: https://acme.sentry.io/issues/WEB-1Z43

## Event Details

**Event ID**: 9f1c6a3e5b2d4c7a8e0f1b2c3d4e5f60
**Occurred At**: 2024-05-01T10:12:03.117Z

"""
_FOOTER = """

### Tags

**environment**: production
**release**: web@1.4.2

### Additional Context

These are additional context provided by the user when they're instrumenting their application.

**trace**
trace_id: "4bf92f3577b34da6a3ce929d0e0e4736"
op: "http.server"

# Using this information

- You can reference the IssueID in commit messages (e.g. `Fixes WEB-1Z43`) to automatically \
close the issue when the commit is merged.
"""


def _mcp(platform: str, error: str, frames: str, culprit: str = "app in main") -> str:
    """Sentry MCP's ``get_issue_details`` answer: one exception, its frames oldest first."""
    body = f"### Error\n\n```\n{error}\n```\n\n**Stacktrace:**\n```\n{frames}\n```"
    title = error.split("\n")[0]
    return _HEADER.format(title=title, culprit=culprit, platform=platform) + body + _FOOTER


PY_MCP = _mcp(
    "python",
    "AttributeError: 'NoneType' object has no attribute 'startswith'",
    """  File "app.py", line 3, in <module>
    main()
  File "shop/cart.py", line 20, in total
        subtotal -= subtotal * discount_for(self.code)
  File "shop/pricing.py", line 6, in discount_for
    if code.startswith("VIP"):""",
    culprit="shop.pricing in discount_for",
)

# Each language as the MCP server prints its frames (oldest first), and the frame its
# runtime puts first or last as the innermost: the last one listed.
MCP_FRAMES = {
    "java": (
        "java",
        "IllegalStateException: Queue full for group orders",
        "at com.acme.App.main(App.java:12)\nat com.acme.queue.Broker.offer(Broker.java:57)",
        Frame("Broker.java", 57, "offer", "com/acme/queue/"),
    ),
    "javascript": (
        "javascript",
        "TypeError: Cannot read properties of undefined (reading 'id')",
        "/app/src/routes/index.js:10:3 (handler)\n/app/src/users.ts:42:17 (getUser)",
        Frame("/app/src/users.ts", 42, "getUser"),
    ),
    "ruby": (
        "ruby",
        "URI::InvalidURIError: bad URI(is not URI?)",
        "    from app.rb:3:in `main`\n    from lib/shop/url.rb:14:in `parse`",
        Frame("lib/shop/url.rb", 14, "parse"),
    ),
    "php": (
        "php",
        "InvalidArgumentException: Unknown format",
        "public/index.php(8): main()\nsrc/Shop/Format.php(31): parse()",
        Frame("src/Shop/Format.php", 31, "parse"),
    ),
    "go (the MCP server's generic frame)": (
        "go",
        "*errors.errorString: index out of range",
        "    at main.main (cmd/tool/main.go:20)\n    at main.lookup (cmd/tool/main.go:12)",
        Frame("cmd/tool/main.go", 12, "lookup"),
    ),
}


def test_an_mcp_answer_about_a_python_issue_reads_as_its_traceback() -> None:
    text = reported(PY_MCP)
    assert text is not None
    assert text.startswith("Traceback (most recent call last):\n")
    assert text.endswith("AttributeError: 'NoneType' object has no attribute 'startswith'")
    assert [f.function for f in parse_frames(text)] == ["discount_for", "total", "<module>"]
    # the tags, the contexts and the advice are the tracker's, not the failure's
    assert "4bf92f3577b34da6a3ce929d0e0e4736" not in text and "Fixes" not in text


@pytest.mark.parametrize("language", MCP_FRAMES)
def test_each_language_s_frames_read_innermost_first(language: str) -> None:
    platform, error, frames, innermost = MCP_FRAMES[language]
    text = reported(_mcp(platform, error, frames))
    assert text is not None
    read = parse_frames(text)
    assert read[0] == innermost
    assert len(read) == 2


def test_a_chain_reads_cause_first_and_the_last_raised_innermost() -> None:
    chained = (
        "### Error\n\n```\nKeyError: 'VIP'\n```\n\n**Stacktrace:**\n```\n"
        '  File "shop/cart.py", line 20, in total\n  File "shop/pricing.py", line 6, in '
        "discount_for\n```\n\n**During handling of the above exception, another exception "
        "occurred:**\n\n### ValueError: bad code\n\n**Stacktrace:**\n```\n"
        '  File "shop/codes.py", line 9, in lookup\n```'
    )
    text = reported(_HEADER.format(title="x", culprit="x", platform="python") + chained)
    assert text is not None
    # Sentry's MCP server lists the last raised first; Python prints the cause first
    assert text.index("ValueError: bad code") < text.index("KeyError: 'VIP'")
    assert parse_frames(text)[0] == Frame("shop/pricing.py", 6, "discount_for")


def _frame(filename: str, line: int, function: str, **more: object) -> dict[str, object]:
    return {"filename": filename, "lineno": line, "function": function, **more}


STORED = {  # as Sentry's page shows an event's JSON
    "event_id": "9f1c6a3e5b2d4c7a8e0f1b2c3d4e5f60",
    "platform": "python",
    "exception": {
        "values": [
            {
                "type": "AttributeError",
                "value": "'NoneType' object has no attribute 'startswith'",
                "stacktrace": {
                    "frames": [
                        _frame("app.py", 3, "<module>", in_app=True),
                        _frame(
                            "shop/pricing.py",
                            6,
                            "discount_for",
                            abs_path="/srv/app/.venv/lib/python3.12/site-packages/shop/pricing.py",
                            context_line='    if code.startswith("VIP"):',
                            pre_context=["def discount_for(code):"],
                        ),
                    ]
                },
            }
        ]
    },
    "contexts": {"trace": {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}},
}
API = {  # as Sentry's API returns it: entries, camelCase, context as [line, text]
    "platform": "java",
    "entries": [
        {"type": "breadcrumbs", "data": {"values": []}},
        {
            "type": "exception",
            "data": {
                "values": [
                    {
                        "type": "IllegalStateException",
                        "value": "Queue full",
                        "stacktrace": {
                            "frames": [
                                {
                                    "filename": "App.java",
                                    "module": "com.acme.App",
                                    "function": "main",
                                    "lineNo": 12,
                                },
                                {
                                    "filename": "Broker.java",
                                    "module": "com.acme.queue.Broker",
                                    "function": "offer",
                                    "lineNo": 57,
                                    "context": [[57, "throw new IllegalStateException();"]],
                                },
                            ]
                        },
                    }
                ]
            },
        },
    ],
}


def test_an_event_s_json_stored_or_from_the_api_reads_as_its_runtime_printed_it() -> None:
    stored = reported(json.dumps(STORED, indent=2))
    assert stored is not None and "4bf92f35" not in stored
    assert parse_frames(stored)[0].path.endswith("site-packages/shop/pricing.py")
    assert '    if code.startswith("VIP"):' in stored
    api = reported("why does this fail?\n" + json.dumps(API))
    assert api is not None and api.startswith("why does this fail?\n")
    assert parse_frames(api)[0] == Frame("Broker.java", 57, "offer", "com/acme/queue/")


@pytest.mark.parametrize(
    "text",
    [
        "where is the discount computed?",
        "# Issue tracker notes in **bold**\n\nno stack here",
        json.dumps({"exception": {"values": [{"type": "E", "value": "no frames"}]}}),
        json.dumps({"exception": {"values": "x"}, "entries": "y", "platform": 3}),
        json.dumps({"exception": {"values": [{"stacktrace": {"frames": [1, None, {}]}}]}}),
        "{" + "[" * 100_000 + "]" * 100_000 + "}",
        '{"a": 1} and more',
    ],
    ids=["question", "markdown", "no-frames", "wrong-types", "bad-frames", "deep", "not-json"],
)
def test_what_is_no_report_with_frames_is_left_alone(text: str) -> None:
    assert reported(text) is None


def test_an_agent_s_sentry_answer_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    analysis = analyze(PY_MCP)
    assert "read the error tracker's report as its runtime prints the failure" in (
        analysis.reading_notes
    )
    finds_the_raise_site(project, tmp_path / "idx", PY_MCP)


def test_an_event_longer_than_a_question_is_read_before_the_cut(
    project: Path, tmp_path: Path
) -> None:
    # a real event carries breadcrumbs, the request and the installed packages: far past a
    # question's 20,000 characters, with the exception near its start
    crumbs = [
        {"category": "query", "message": f"SELECT * FROM orders WHERE id = {i}"} for i in range(600)
    ]
    event = json.dumps({**STORED, "breadcrumbs": {"values": crumbs}}, indent=2)
    assert len(event) > 2 * MAX_QUERY_CHARS
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(event))
    assert (res.results[0].path, res.results[0].symbol) == ("src/shop/pricing.py", "discount_for")
    assert "read the error tracker's report as its runtime prints the failure" in res.notes
    assert not [n for n in res.notes if "only the last" in n]  # nothing of the failure was cut


def test_a_log4j2_json_record_s_thrown_reads_as_java_printed_it() -> None:
    # Log4j2's JsonLayout keeps the exception as data: frames innermost first, the cause nested
    def frame(cls: str, method: str, file: str, line: int) -> dict[str, object]:
        return {"class": cls, "method": method, "file": file, "line": line, "exact": True}

    record = {
        "level": "ERROR",
        "loggerName": "com.acme.App",
        "message": "order rejected",
        "thrown": {
            "name": "java.lang.IllegalStateException",
            "message": "Queue full for group orders",
            "extendedStackTrace": [
                frame("com.acme.queue.Broker", "offer", "Broker.java", 57),
                frame("com.acme.App", "main", "App.java", 12),
            ],
            "cause": {
                "name": "java.io.IOException",
                "message": "disk full",
                "extendedStackTrace": [
                    frame("com.acme.queue.Journal", "append", "Journal.java", 88)
                ],
            },
        },
    }
    for text in (json.dumps(record), json.dumps(record, indent=2)):
        qa = analyze(text)
        assert qa.frames[:2] == [
            Frame("Broker.java", 57, "offer", "com/acme/queue/"),
            Frame("App.java", 12, "main", "com/acme/"),
        ]
        assert Frame("Journal.java", 88, "append", "com/acme/queue/") in qa.frames
        assert "Caused by: java.io.IOException: disk full" in qa.raw
        assert qa.reading_notes == [
            "read the trace a JSON log record holds as the runtime printed it"
        ]


# Rollbar: a trace's frames oldest first, a chain of exceptions the last raised first.
def _rollbar_trace(frames: list[tuple[str, int, str, str]], kind: str, message: str) -> dict:
    return {
        "frames": [
            {"filename": path, "lineno": line, "method": method, "code": code}
            for path, line, method, code in frames
        ],
        "exception": {"class": kind, "message": message},
    }


ROLLBAR_TRACE = _rollbar_trace(
    [
        ("/home/dev/shop/app.py", 3, "<module>", "main()"),
        ("/home/dev/shop/src/shop/cart.py", 20, "total", "subtotal -= discount_for(self.code)"),
        ("/home/dev/shop/src/shop/pricing.py", 6, "discount_for", 'if code.startswith("VIP"):'),
    ],
    "AttributeError",
    "'NoneType' object has no attribute 'startswith'",
)
# As Rollbar's MCP server answers ``get-item-details``: the item, its last occurrence under it
ROLLBAR_ITEM = {
    "id": 1458392011,
    "counter": 412,
    "title": "AttributeError: 'NoneType' object has no attribute 'startswith'",
    "language": "python",
    "hash": "8f3c2a1e9d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a",
    "occurrence": {
        "id": 401234567890,
        "data": {
            "body": {"trace": ROLLBAR_TRACE},
            "language": "python",
            "uuid": "2f1e0d9c-8b7a-4c6d-9e5f-4a3b2c1d0e9f",
            "server": {"host": "web-7d9f", "argv": ["gunicorn", "app:app"]},
        },
    },
}


def test_a_rollbar_item_reads_as_its_runtime_printed_it() -> None:
    qa = analyze(json.dumps(ROLLBAR_ITEM))
    assert qa.reading_notes == ["read the error tracker's report as its runtime prints the failure"]
    assert qa.frames[0] == Frame("/home/dev/shop/src/shop/pricing.py", 6, "discount_for")
    assert qa.messages == ["AttributeError: 'NoneType' object has no attribute 'startswith'"]
    assert qa.quoted == []  # the item's hash and the occurrence's uuid are no text to match
    # the occurrence as the API returns it, and as a payload, read the same
    occurrence = ROLLBAR_ITEM["occurrence"]
    for text in (json.dumps({"err": 0, "result": occurrence}), json.dumps(occurrence["data"])):
        assert analyze(text).frames == qa.frames


def test_a_rollbar_trace_chain_reads_cause_first() -> None:
    cause = _rollbar_trace(
        [("/home/dev/shop/src/shop/db.py", 41, "fetch", "raise KeyError(code)")], "KeyError", "'A'"
    )
    chain = {"data": {"body": {"trace_chain": [ROLLBAR_TRACE, cause]}, "language": "python"}}
    printed = reported(json.dumps(chain))
    assert printed is not None
    assert printed.index("KeyError: 'A'") < printed.index("AttributeError")
    assert parse_frames(printed)[0].function == "discount_for"  # the last raised, innermost
    # a payload with an empty chain beside its trace reads the trace
    beside = {"body": {"trace_chain": None, "trace": ROLLBAR_TRACE}, "language": "python"}
    assert analyze(json.dumps(beside)).frames == analyze(json.dumps(ROLLBAR_ITEM)).frames


def test_a_rollbar_answer_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    finds_the_raise_site(project, tmp_path / "idx", json.dumps(ROLLBAR_ITEM, indent=2))


# Bugsnag: a trace's frames innermost first, the exception raised before the ones that caused it.
def _bugsnag_error(frames: list[tuple[str, int, str, str]], kind: str, message: str) -> dict:
    """As bugsnag-python sends an error: ``code`` the lines around each frame's, by number."""
    return {
        "errorClass": kind,
        "message": message,
        "type": "python",
        "stacktrace": [
            {
                "file": path,
                "lineNumber": line,
                "method": method,
                "inProject": True,
                "code": {str(line - 1): "", str(line): code},
            }
            for path, line, method, code in reversed(frames)
        ],
    }


BUGSNAG_ERROR = _bugsnag_error(
    [
        ("app.py", 3, "<module>", "main()"),
        ("src/shop/cart.py", 20, "total", "subtotal -= discount_for(self.code)"),
        ("src/shop/pricing.py", 6, "discount_for", 'if code.startswith("VIP"):'),
    ],
    "AttributeError",
    "'NoneType' object has no attribute 'startswith'",
)
BUGSNAG_PAYLOAD = {
    "apiKey": "c9d60ae4c7e70c4b6c4ebd3e8056d2b8",
    "notifier": {"name": "Python Bugsnag Notifier", "version": "4.7.1"},
    "payloadVersion": "4.0",
    "events": [
        {
            "severity": "error",
            "unhandled": True,
            "context": "GET /cart",
            "exceptions": [BUGSNAG_ERROR],
            "metaData": {"request": {"url": "https://shop.test/cart"}},
            "device": {"hostname": "web-7d9f"},
        }
    ],
}


def _snake_case(error: dict) -> dict:
    """The error as Bugsnag's Data Access API returns it."""
    frames = [
        {
            "file": f["file"],
            "line_number": f["lineNumber"],
            "method": f["method"],
            "code": f["code"],
        }
        for f in error["stacktrace"]
    ]
    return {"error_class": error["errorClass"], "message": error["message"], "stacktrace": frames}


def test_a_bugsnag_event_reads_as_its_runtime_printed_it() -> None:
    qa = analyze(json.dumps(BUGSNAG_PAYLOAD))
    assert qa.reading_notes == ["read the error tracker's report as its runtime prints the failure"]
    assert qa.frames[0] == Frame("src/shop/pricing.py", 6, "discount_for")
    assert qa.messages == ["AttributeError: 'NoneType' object has no attribute 'startswith'"]
    assert qa.quoted == []  # the API key and the request are no text to match
    printed = reported(json.dumps(BUGSNAG_PAYLOAD))
    assert printed is not None and '    if code.startswith("VIP"):' in printed
    # the event as the Data Access API returns it, and the MCP server's ``Get Error`` answer
    event = {"id": "5f1e0d9c8b7a", "exceptions": [_snake_case(BUGSNAG_ERROR)]}
    answer = {"error_details": {"id": "6863e2af"}, "latest_event": event, "pivots": [], "url": ""}
    for text in (json.dumps(event), json.dumps(answer, indent=2)):
        assert analyze(text).frames == qa.frames


def test_a_bugsnag_chain_reads_cause_first() -> None:
    cause = _bugsnag_error(
        [("src/shop/db.py", 41, "fetch", "raise KeyError(code)")], "KeyError", "'A'"
    )
    event = {"exceptions": [BUGSNAG_ERROR, cause]}
    printed = reported(json.dumps(event))
    assert printed is not None
    assert printed.index("KeyError: 'A'") < printed.index("AttributeError")
    assert parse_frames(printed)[0].function == "discount_for"  # the last raised, innermost


def test_a_bugsnag_java_event_reads_as_java_printed_it() -> None:
    error = {
        "error_class": "java.lang.IllegalStateException",
        "message": "queue closed",
        "type": "android",
        "stacktrace": [  # innermost first; the method qualified by its class
            {"file": "Broker.java", "line_number": 57, "method": "com.acme.queue.Broker.offer"},
            {"file": "App.java", "line_number": 12, "method": "com.acme.App.main"},
        ],
    }
    printed = reported(json.dumps({"exceptions": [error]}))
    assert printed == (
        "java.lang.IllegalStateException: queue closed\n"
        "\tat com.acme.queue.Broker.offer(Broker.java:57)\n"
        "\tat com.acme.App.main(App.java:12)"
    )


def test_a_bugsnag_answer_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    finds_the_raise_site(project, tmp_path / "idx", json.dumps(BUGSNAG_PAYLOAD, indent=2))
