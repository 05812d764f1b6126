"""A trace as logs deliver it. From a log router (docker compose, Kubernetes, journald, Heroku,
a CI raw log), the prefix on every line is taken off before the question is read, and nothing
else is; inside a JSON log record, or copied out of one with its line breaks escaped, it is read
as the runtime printed it; copied on Windows (CR LF line ends), as it reads with LF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.search.ci_runners import step_output
from code_evidence.search.log_prefixes import unprefixed
from code_evidence.search.programs import log_lines
from code_evidence.search.query import analyze
from code_evidence.search.stacktraces import parse_frames, plain
from support.traces import GO, JAVA, JS, PY, RUST, finds_the_raise_site


def _routed(text: str, prefixes: list[str]) -> str:
    """``text`` with the i-th line's prefix ``prefixes[i % len]``; an empty line gets the
    prefix with its trailing space trimmed, as a copy of a terminal keeps it."""
    out = []
    for i, line in enumerate(text.split("\n")):
        head = prefixes[i % len(prefixes)]
        out.append(head + line if line else head.rstrip())
    return "\n".join(out)


ROUTERS = {
    "docker compose": ["web-1  | "],
    "docker compose v1": ["web_1     | "],
    "kubelet (CRI)": [
        "2024-05-01T10:12:03.117482913Z stderr F ",
        "2024-05-01T10:12:03.11748Z stderr F ",  # Go's RFC 3339 drops trailing zeros
    ],
    "kubectl --timestamps": ["2024-05-01T10:12:03.117482913Z "],
    "kubectl --prefix": ["[pod/web-7d9f8c6b5-x2x7q/app] "],
    "journald": [
        "May 01 10:12:03 web01 gunicorn[4121]: ",
        "May  1 10:12:04 web01 gunicorn[4121]: ",
    ],
    "journald short-iso": ["2024-05-01T10:12:03+0000 web01 gunicorn[4121]: "],
    "syslog server": ["<11>May  1 10:12:03 web01 app: ", "<14>May  1 10:12:03 web01 app: "],
    "heroku": ["2024-05-01T10:12:03.117482+00:00 app[web.1]: "],
    "github actions": ["2024-05-01T10:12:03.1174820Z "],
    "jenkins timestamper": ["[2024-05-01T10:12:03.117Z] "],
    "foreman": ["10:12:03 web.1  | "],
    "turborepo": ["@acme/api:test: "],
    # ``gh run view --log-failed``: the job's and step's names, a tab each, then the raw log
    "gh run view --log-failed": [
        "test (3.12)\tRun python -m pytest\t2024-05-01T10:12:03.1174820Z "
    ],
    "fly logs": ["2024-05-01T10:12:03Z app[9080e6d7b12345] iad [info]"],
    "aws logs tail (an ECS task)": [
        "2024-05-01T10:12:03.117482+00:00 ecs/web/0123456789abcdef0123456789abcdef "
    ],
    "npm 10": ["npm error "],
    "npm 9": ["npm ERR! "],
    "a reply's quote": ["> "],
    "a quote in a quote": ["> > ", ">> "],
}


@pytest.mark.parametrize("router", ROUTERS)
@pytest.mark.parametrize("trace", [PY, GO, JS, JAVA], ids=["python", "go", "js", "java"])
def test_each_router_s_prefix_comes_off_every_line(router: str, trace: str) -> None:
    assert unprefixed(_routed(trace, ROUTERS[router])) == trace


@pytest.mark.parametrize(
    "trace", [PY, GO, JS, JAVA, RUST], ids=["python", "go", "js", "java", "rust"]
)
def test_a_paste_copied_on_windows_reads_as_it_does_with_lf(trace: str) -> None:
    lf, crlf = analyze(trace), analyze(trace.replace("\n", "\r\n"))
    assert (crlf.raw, crlf.frames, crlf.messages, crlf.terms) == (
        lf.raw,
        lf.frames,
        lf.messages,
        lf.terms,
    )
    assert lf.frames or lf.messages


def test_a_quoted_pytest_report_keeps_pytest_s_own_marker() -> None:
    report = "    def test_total():\n>       assert total(None) == 0\nE       TypeError: bad\n"
    assert unprefixed(_routed(report, ["> "])) == report


@pytest.mark.parametrize("indent", ["", "    ", "  "], ids=["none", "four spaces", "two spaces"])
def test_a_go_trace_whose_tabs_a_copy_lost_keeps_its_frames(indent: str) -> None:
    copied = GO.replace("\n\t", "\n" + indent)
    assert "\t" not in copied
    assert parse_frames(copied) == parse_frames(GO)
    assert [f.function for f in parse_frames(copied)] == ["lookup", "main"]


def test_a_go_file_line_alone_is_no_frame_and_each_frame_names_its_own_function() -> None:
    assert parse_frames("look at main.go:12\nmain.go:12") == []
    # a goroutine's ``created by`` line is no function call: the frames after it keep theirs
    created = GO + "\ncreated by main.start in goroutine 1\n\t/home/u/proj/cmd/tool/run.go:8 +0x3e"
    assert [f.function for f in parse_frames(created)] == ["lookup", "main", None]


def test_nested_prefixes_come_off_in_turn() -> None:
    # ``docker compose up`` in a GitHub Actions job: the job's time stamp, then the container
    routed = _routed(_routed(PY, ["web-1  | "]), ["2024-05-01T10:12:03.1174820Z "])
    assert unprefixed(routed) == PY


def test_a_routed_traceback_reads_as_the_traceback_does() -> None:
    plain, routed = analyze(PY), analyze(_routed(PY, ROUTERS["journald"]))
    assert routed.frames == plain.frames
    assert routed.frames[0].function == "discount_for"
    assert routed.messages == plain.messages
    assert routed.intent == "fix-failure"
    assert routed.raw == PY


@pytest.mark.parametrize("prefix", ["web-1  | ", "> "])
def test_one_line_through_compose_or_quoted_is_an_error_line(prefix: str) -> None:
    qa = analyze(prefix + "AttributeError: 'NoneType' object has no attribute 'startswith'")
    assert qa.messages == ["AttributeError: 'NoneType' object has no attribute 'startswith'"]


def test_npm_s_message_is_read_without_its_level() -> None:
    """npm writes its level before each line: the message under it is a program's printed
    line, whose template is asked for (the question on npm's own code: docs/quality.md)."""
    for level in ("npm error ", "npm ERR! "):
        qa = analyze(level + 'Missing script: "build"')
        assert qa.message_bodies == ['Missing script: "build"'] and "npm" not in qa.terms
        assert qa.reading_notes == ["read without a log's line prefixes: npm's log level"]


@pytest.mark.parametrize(
    "text",
    [
        "npm errors are printed where?",  # a sentence about npm, no level
        "str | None where is it returned",  # a type union, not a service
        "where is Option | None narrowed\nand int | float",
        # a compiler's places: a file and a number, not a Turborepo task
        "./main.go:12:5: undefined: lookup\n./main.go:20:2: declared and not used: x",
        "src/app.ts:3:1: error: missing semicolon\nsrc/app.ts:9:1: error: missing semicolon",
        # a Python log record and its traceback: the time is the record's, on one line of many
        "2024-05-01 10:12:03,117 ERROR in app: Exception on /users [GET]\n" + PY,
        "a question\nwith one line that starts 2024-05-01T10:12:03Z\nand others that do not",
        # Python's prompt is typed code, not a quote
        ">>> import shop\n>>> shop.total(None)\n>>> shop.total([])",
        # a table's columns: no CI log's time stamp after the second tab
        "code\tcount\trate\nVIP\t12\t0.2\nNEW\t3\t0.1",
    ],
)
def test_text_that_is_not_a_router_s_keeps_its_words(text: str) -> None:
    assert unprefixed(text) == text


def test_a_logger_s_own_time_stays_on_its_records() -> None:
    records = (
        "2024-05-01 10:12:03,117 ERROR app.db: connection refused\n"
        "2024-05-01 10:12:04,201 WARNING app.db: retrying in 2 s\n"
        "[2024-05-01T10:12:05Z ERROR app::db] pool exhausted"
    )
    assert unprefixed(records) == records
    # and behind a router's time stamp they are records again once it comes off
    routed = _routed(records, ROUTERS["github actions"])
    assert unprefixed(routed) == records
    assert [line.texts for line in log_lines(unprefixed(routed))] == [
        ["connection refused"],
        ["retrying in 2 s"],
        ["pool exhausted"],
    ]


def test_a_traceback_from_compose_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    routed = _routed(PY, ROUTERS["docker compose"])
    res = finds_the_raise_site(project, tmp_path / "idx", routed)
    # the answer says how the paste was read: not as sent
    assert "read without a log's line prefixes: compose container" in res.notes


def test_a_paste_read_as_sent_gets_no_such_note(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(PY))
    assert not [n for n in res.notes if n.startswith("read ")]


# A trace inside a JSON log record (``search/log_records.py``).


def _structlog(trace: str) -> str:
    return json.dumps(
        {
            "event": "request failed",
            "level": "error",
            "timestamp": "2024-05-01T10:12:03.117Z",
            "exception": trace,
        }
    )


def test_a_trace_inside_a_json_record_reads_as_the_trace_does() -> None:
    plain, logged = analyze(PY), analyze(_structlog(PY))
    assert logged.frames == plain.frames
    assert set(plain.messages) <= set(logged.messages)
    # the record's own message is still read
    assert any(m.endswith("request failed") for m in logged.messages)
    assert logged.intent == "fix-failure"


def test_a_record_s_error_that_is_an_error_line_reads_as_one() -> None:
    line = "OAuthStateError: state mismatch for client 'web'"
    logged = analyze(_structlog(line))
    assert line in logged.messages
    assert logged.exception_types == analyze(line).exception_types == ["OAuthStateError"]


@pytest.mark.parametrize(
    "record",
    [
        # pino and bunyan: the serialised error one level down
        {"level": 50, "time": 1714558323117, "msg": "request failed", "err": {"stack": JS}},
        # logstash-logback-encoder
        {"@timestamp": "2024-05-01T10:12:03.117Z", "message": "failed", "stack_trace": JAVA},
        # zap
        {"level": "error", "msg": "lookup failed", "stacktrace": GO},
    ],
    ids=["pino", "logstash", "zap"],
)
def test_each_logger_s_trace_key_is_read(record: dict[str, object]) -> None:
    inner = next(
        v for v in [*record.values(), *record.get("err", {}).values()] if v in (JS, JAVA, GO)
    )  # type: ignore[union-attr]
    assert analyze(json.dumps(record)).frames == analyze(inner).frames != []


def test_a_pretty_printed_record_and_an_escaped_trace_are_read() -> None:
    frames = analyze(PY).frames
    pretty = json.dumps({"level": "error", "message": "failed", "exc_info": PY}, indent=2)
    assert analyze(pretty).frames == frames
    escaped = json.dumps(PY)[1:-1]  # the field's value copied out of a log viewer
    assert "\n" not in escaped
    assert analyze(escaped).frames == frames
    assert analyze(f"what broke here?\n{escaped}").frames == frames
    # a record the log viewer cut short is no JSON, and its escaped trace is still one
    assert analyze(_structlog(PY)[:-40]).frames[0] == frames[0]


# A record as a log service's API hands it back: Datadog's search answer (its events under
# ``data``, the record's own attributes under ``attributes.attributes``) and the entries
# ``gcloud logging read --format=json`` prints (the record in ``jsonPayload`` or ``textPayload``).
def _datadog(message: str, **own: object) -> dict[str, object]:
    event = {
        "id": "AgAAAY8xAbCdEfGh",
        "type": "log",
        "attributes": {
            "attributes": {"logger": {"name": "shop"}, **own},
            "host": "web-7d9f",
            "message": message,
            "service": "web",
            "status": "error",
            "tags": ["env:production", "service:web"],
            "timestamp": "2024-05-01T10:12:03.117Z",
        },
    }
    return {"data": [event], "meta": {"request_id": "pddv1ChZ4c2Jm", "status": "done"}}


def _gcloud(payload: dict[str, object]) -> list[dict[str, object]]:
    return [
        {
            "insertId": "65f1c2a3000b1e2f3a4b5c6d",
            **payload,
            "logName": "projects/acme-prod/logs/run.googleapis.com%2Fstdout",
            "resource": {"labels": {"service_name": "web"}, "type": "cloud_run_revision"},
            "severity": "ERROR",
            "timestamp": "2024-05-01T10:12:03.117482Z",
        }
    ]


def test_a_log_service_s_record_reads_as_its_trace_and_message() -> None:
    plain = analyze(PY)
    error = {"kind": "AttributeError", "stack": PY}
    for answer in (
        json.dumps(_datadog("Exception on /cart [GET]", error=error)),
        json.dumps(_gcloud({"jsonPayload": {"message": f"Exception on /cart [GET]\n{PY}"}})),
        json.dumps(_gcloud({"textPayload": PY}), indent=2),
    ):
        qa = analyze(answer)
        assert qa.frames == plain.frames
        assert set(plain.messages) <= set(qa.messages)
        assert qa.quoted == []  # the event's id, the entry's names and labels: no text to match
        assert qa.raw.count("Traceback") == 1
        assert qa.reading_notes == [
            "read the trace a JSON log record holds as the runtime printed it"
        ]
    # an entry whose only text was its trace leaves nothing of the log service's behind
    assert "insertId" not in analyze(json.dumps(_gcloud({"textPayload": PY}))).raw


def test_a_log_service_s_record_of_an_error_line_reads_as_one() -> None:
    line = "OAuthStateError: state mismatch for client 'web'"
    explorer = {"id": "AQAAAY8x", "content": {"timestamp": "2024-05-01T10:12:03Z", "message": line}}
    for answer in (
        json.dumps(_datadog(line), indent=2),
        json.dumps(_gcloud({"textPayload": line}), indent=2),
        json.dumps(explorer, indent=2),  # Datadog's log explorer: the event's ``content``
    ):
        qa = analyze(answer)
        assert line in qa.messages
        assert qa.exception_types == ["OAuthStateError"]
        assert qa.quoted == []
        assert qa.raw == line  # the service's fields around the record are no part of it
        assert qa.reading_notes == ["read the message of the log record the JSON answer holds"]
    # a logger's own record, pretty-printed, reads as its line
    own = {"level": "error", "timestamp": "2024-05-01T10:12:03Z", "msg": line, "user": "u-42"}
    qa = analyze(json.dumps(own, indent=2))
    assert qa.raw == json.dumps(own)
    assert line in qa.messages and qa.quoted == []
    assert qa.reading_notes == ["read the JSON log record on one line"]
    # pretty-printed JSON that holds no log record is read as sent
    config = json.dumps({"scripts": {"build": "tsc -p ."}, "type": "module"}, indent=2)
    assert analyze(config).raw == config


# A notebook cell's error output as nbformat stores it: one string per part, IPython's colours
# as terminal escapes.
_RED, _GREEN, _OFF = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0m"
NOTEBOOK_ERROR = {
    "output_type": "error",
    "ename": "AttributeError",
    "evalue": "'NoneType' object has no attribute 'startswith'",
    "traceback": [
        f"{_RED}{'-' * 75}{_OFF}",
        f"{_RED}AttributeError{_OFF}                            Traceback (most recent call last)",
        f"Cell {_GREEN}In[3], line 1{_OFF}\n{_GREEN}----> 1{_OFF} discount_for(None)\n",
        f"File {_GREEN}~/shop/src/shop/pricing.py:6{_OFF}, in {_GREEN}discount_for{_OFF}(code)\n"
        f'{_GREEN}----> 6{_OFF}     if code.startswith("VIP"):\n',
        f"{_RED}AttributeError{_OFF}: 'NoneType' object has no attribute 'startswith'",
    ],
}


def test_a_notebook_s_error_output_reads_as_ipython_printed_it() -> None:
    printed = plain("\n".join(NOTEBOOK_ERROR["traceback"]))  # type: ignore[arg-type]
    frames = analyze(printed).frames
    assert [(f.path, f.line, f.function) for f in frames] == [
        ("~/shop/src/shop/pricing.py", 6, "discount_for")
    ]
    notebook = {
        "cells": [
            {"cell_type": "code", "source": ["discount_for(None)"], "outputs": [NOTEBOOK_ERROR]}
        ]
    }
    for text in (json.dumps(NOTEBOOK_ERROR), json.dumps(notebook, indent=1)):
        qa = analyze(text)
        assert qa.frames == frames
        assert "AttributeError: 'NoneType' object has no attribute 'startswith'" in qa.messages


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"level": "info", "msg": "two lines\nof text, no trace"}),
        json.dumps({"level": "info", "tags": ["a", "b"], "msg": "a list, no trace"}),
        "why does echo print \\n twice in the output",
        '{"msg": "a line break\\nin a message", "level": "info"',
    ],
)
def test_a_record_or_a_line_with_no_trace_is_left_alone(text: str) -> None:
    assert analyze(text).raw == text


def test_a_json_logged_traceback_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    res = finds_the_raise_site(project, tmp_path / "idx", _structlog(PY))
    assert "read the trace a JSON log record holds as the runtime printed it" in res.notes


def test_a_record_nested_past_the_json_parser_s_depth_is_no_crash() -> None:
    deep = "[" * 9_000 + "]" * 9_000  # within a question's 20,000 characters
    trace = json.dumps(PY)[1:-1]
    for text in (
        f'{{"level": "error", "msg": "x", "a": {deep}}}',
        f'{{"msg": "{trace}", "a": {deep}}}',
    ):
        qa = analyze(text)
        assert qa.raw
    assert analyze(f'{{"msg": "{trace}", "a": {deep}}}').frames == analyze(PY).frames


# What a CI runner writes around a step's output (``search/ci_runners.py``).

_STEP = (
    "##[group]Run python -m pytest\n"
    "\x1b[36;1mpython -m pytest\x1b[0m\n"
    "shell: /usr/bin/bash -e {0}\n"
    "env:\n"
    "  pythonLocation: /opt/hostedtoolcache/Python/3.12.3/x64\n"
    "##[endgroup]\n"
    "{output}\n"
    "##[error]Process completed with exit code 1."
)


def _gh_log(output: str) -> str:
    """``output`` as ``gh run view --log-failed`` prints its step: names, tabs, time stamps."""
    raw = _STEP.replace("{output}", output)
    prefix = "test (3.12)\tRun python -m pytest\t2024-05-01T10:12:03.1174820Z "
    return "\n".join(
        ("\ufeff" if i == 0 else "") + prefix + line for i, line in enumerate(raw.split("\n"))
    )


def test_a_failed_step_s_log_reads_as_its_output() -> None:
    message = "AttributeError: 'NoneType' object has no attribute 'startswith'"
    for output in (PY, message):
        qa = analyze(_gh_log(output))
        assert qa.raw == output
        assert qa.reading_notes == [
            "read without a log's line prefixes: GitHub CLI job and step, time stamp",
            "read without the CI runner's lines around the step's output",
        ]
    # the runner's verdict is no error line the code wrote
    assert analyze(_gh_log(message)).messages == [message]


def test_what_the_program_marked_keeps_its_text() -> None:
    # a problem matcher's annotation is the tool's line; a group the program opened holds its
    # output; a step group whose end was not copied keeps what follows
    text = (
        "##[group]Tests\n" + PY + "\n##[endgroup]\n"
        "##[error]src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'."
    )
    assert step_output(text) == (
        "Tests\n"
        + PY
        + "\nsrc/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'."
    )
    assert step_output("##[group]Run pytest\n" + PY) == "Run pytest\n" + PY
    assert step_output(PY) is None


def test_an_agent_s_ci_log_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    finds_the_raise_site(project, tmp_path / "idx", _gh_log(PY))


def _gitlab_log(output: str) -> str:
    """``output`` in a failed GitLab job's log as its API returns it: the runner's sections
    (a carriage return and an erase before each header), colours, the verdict."""
    e = "\x1b[0K"
    return (
        f"{e}Running with gitlab-runner 17.0.0 (44feccdf)\x1b[0;m\n"
        f"{e}  on docker-runner 8a4b3c2d, system ID: r_AbCdEf123456\x1b[0;m\n"
        f'section_start:1714558323:prepare_executor\r{e}{e}\x1b[36;1mPreparing the "docker" '
        f"executor\x1b[0;m\n{e}Using Docker executor with image python:3.12 ...\x1b[0;m\n"
        f"section_end:1714558330:prepare_executor\r{e}{e}section_start:1714558330:get_sources\r"
        f"{e}{e}\x1b[36;1mGetting source from Git repository\x1b[0;m\n"
        "Initialized empty Git repository in /builds/acme/shop/.git/\n"
        f"section_end:1714558331:get_sources\r{e}{e}section_start:1714558331:step_script\r{e}"
        f'{e}\x1b[36;1mExecuting "step_script" stage of the job script\x1b[0;m\n'
        f"\x1b[32;1m$ python -m pytest tests/\x1b[0;m\n{output}\n"
        f"section_end:1714558340:step_script\r{e}{e}section_start:1714558340:"
        f"cleanup_file_variables\r{e}{e}\x1b[36;1mCleaning up project directory and file based "
        f"variables\x1b[0;m\nsection_end:1714558341:cleanup_file_variables\r{e}\x1b[31;1mERROR: "
        "Job failed: exit code 1\n\x1b[0;m"
    )


def test_a_failed_gitlab_job_s_log_reads_as_its_script_s_output() -> None:
    message = "AttributeError: 'NoneType' object has no attribute 'startswith'"
    for output in (PY, message):
        qa = analyze(_gitlab_log(output))
        assert qa.raw == output
        assert qa.reading_notes == ["read without the CI runner's lines around the step's output"]
    assert analyze(_gitlab_log(message)).messages == [message]  # not the runner's verdict
    # with the runner's time stamps (its stream's number and kind after each)
    stamped = "\n".join(
        f"2024-05-01T10:12:03.117482Z 0{i % 2}{'OE'[i % 2]}{'+' if i % 3 else ''} {line}"
        for i, line in enumerate(_gitlab_log(PY).replace("\r", "\n").split("\n"))
    )
    assert analyze(stamped).raw == PY


def test_a_section_the_script_opened_keeps_its_output() -> None:
    text = _gitlab_log(
        "section_start:1714558335:tests[collapsed=true]\r\x1b[0KRunning the tests\n"
        + PY
        + "\nsection_end:1714558339:tests\r\x1b[0K"
    )
    assert analyze(text).raw == "Running the tests\n" + PY


# An AWS Lambda function's error response: the type, the message and the frames, three keys.
_LAMBDA_FRAMES = [
    '  File "/var/task/app.py", line 3, in <module>\n    main()\n',
    '  File "/var/task/src/shop/cart.py", line 20, in total\n'
    "    subtotal -= subtotal * discount_for(self.code)\n",
    '  File "/var/task/src/shop/pricing.py", line 6, in discount_for\n'
    '    if code.startswith("VIP"):\n',
]
LAMBDA = {
    "errorMessage": "'NoneType' object has no attribute 'startswith'",
    "errorType": "AttributeError",
    "requestId": "c6af9ac6-7b61-11e6-9a41-93e812345678",
    "stackTrace": _LAMBDA_FRAMES,
}


@pytest.mark.parametrize("indent", [None, 4], ids=["one line", "pretty-printed"])
def test_a_lambda_error_response_reads_as_its_runtime_printed_it(indent: int | None) -> None:
    qa = analyze(json.dumps(LAMBDA, indent=indent))
    assert qa.raw == (
        "Traceback (most recent call last):\n"
        + "".join(_LAMBDA_FRAMES)
        + "AttributeError: 'NoneType' object has no attribute 'startswith'"
    )
    assert qa.messages == ["AttributeError: 'NoneType' object has no attribute 'startswith'"]
    assert qa.quoted == []  # the request's id is the invocation's, nothing to match
    node = {
        "errorType": "TypeError",
        "errorMessage": "Cannot read properties of undefined (reading 'id')",
        "trace": JS.split("\n"),
    }
    assert analyze(json.dumps(node, indent=indent)).raw == JS
    java = {
        "errorType": "java.lang.IllegalStateException",
        "errorMessage": "Queue full",
        "stackTrace": [
            "com.acme.queue.Broker.offer(Broker.java:57)",
            "com.acme.App.main(App.java:12)",
        ],
    }
    qa = analyze(json.dumps(java, indent=indent))
    assert qa.messages == ["java.lang.IllegalStateException: Queue full"]
    assert [f.path for f in qa.frames] == ["Broker.java", "App.java"]


def test_a_lambda_error_response_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    finds_the_raise_site(project, tmp_path / "idx", json.dumps(LAMBDA, indent=4))


def test_a_lambda_function_s_event_loses_its_stream_on_its_first_line() -> None:
    # ``aws logs tail``: the runtime logs an unhandled exception as one multi-line event
    lines = PY.split("\n")
    event = f"[ERROR] {lines[-1]}\n" + "\n".join(lines[:-1])
    stream = "2024/05/01/[$LATEST]6c7f1b9e0d2a4f3c8b5e7a9d1c3e5f70"
    qa = analyze(f"2024-05-01T10:12:03.117000+00:00 {stream} {event}")
    assert qa.raw == event
    assert qa.messages == ["AttributeError: 'NoneType' object has no attribute 'startswith'"]
    assert qa.frames[0].function == "discount_for"
    assert qa.reading_notes == ["read without a log's line prefixes: CloudWatch stream"]


def test_a_time_stamp_before_a_path_is_no_log_stream() -> None:
    # a CI log's pytest progress: its time stamps come off, its test files stay
    progress = (
        "2024-05-01T10:12:03Z tests/test_app.py ..F.\n2024-05-01T10:12:04Z tests/test_cli.py .."
    )
    assert unprefixed(progress) == "tests/test_app.py ..F.\ntests/test_cli.py .."
