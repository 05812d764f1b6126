"""A failed CI step as an agent fetches it from CircleCI, Buildkite, Jenkins and Azure
Pipelines, and a service's log as it fetches it from CloudWatch Logs and Cloud Logging: the JSON
an API or MCP server answers (``search/fetched_logs.py``), and the runner's lines around the
step's output in each CI system's log (``search/ci_runners.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from code_evidence.search.ci_runners import step_output
from code_evidence.search.fetched_logs import log_text
from code_evidence.search.query import analyze, read_paste
from code_evidence.search.stacktraces import plain
from support.traces import PY, finds_the_raise_site

MESSAGE = "AttributeError: 'NoneType' object has no attribute 'startswith'"


def _circleci_output(output: str) -> str:
    """A CircleCI step's terminal: its shell, its command, CR LF line ends, its verdict."""
    lines = ["#!/bin/bash -eo pipefail", "python -m pytest tests/", *output.split("\n"), ""]
    return "\r\n".join([*lines, "Exited with code exit status 1", ""])


def _circleci_mcp(output: str) -> str:
    """``output`` as CircleCI's MCP server answers ``get_build_failure_logs``."""
    logs = json.dumps({"output": _circleci_output(output), "error": ""}, separators=(",", ":"))
    return f"=====\nJob: test\nStep: Run tests\nLogs: {logs}"


def _buildkite_lines(output: str) -> list[str]:
    return [
        "~~~ Preparing working directory",
        "$ cd /var/lib/buildkite-agent/builds/agent-1/acme/shop",
        '# Host "github.com" already in list of known hosts',
        "$ git clone -v -- git@github.com:acme/shop.git .",
        "~~~ Running global environment hook",
        "$ /etc/buildkite-agent/hooks/environment",
        "~~~ Running commands",
        "$ python -m pytest tests/",
        *output.split("\n"),
        "🚨 Error: The command exited with status 1",
        "^^^ +++",
    ]


def _buildkite_log(output: str) -> str:
    """A Buildkite job's raw log: each line's time stamp an escape, CR LF line ends."""
    return "\r\n".join(
        f"\x1b_bk;t={1714558323117 + i}\x07{line}"
        for i, line in enumerate(_buildkite_lines(output))
    )


def _buildkite_mcp(output: str) -> str:
    entries = [
        {"ts": 1714558323117 + i, "c": line, "rn": i}
        for i, line in enumerate(_buildkite_lines(output))
    ]
    return json.dumps({"entries": entries, "query_time_ms": 4})


def _jenkins_lines(output: str) -> list[str]:
    return [
        "Started by user Jane Doe",
        "[Pipeline] Start of Pipeline",
        "[Pipeline] node",
        "Running on agent-1 in /home/jenkins/workspace/shop",
        "[Pipeline] {",
        "[Pipeline] stage",
        "[Pipeline] { (Checkout)",
        "[Pipeline] checkout",
        "The recommended git tool is: NONE",
        "Checking out Revision 874ca2bc (refs/remotes/origin/main)",
        'Commit message: "Merge pull request #12 from acme/fix"',
        "[Pipeline] }",
        "[Pipeline] // stage",
        "[Pipeline] stage",
        "[Pipeline] { (Test)",
        "[Pipeline] sh",
        "+ python -m pytest tests/",
        *output.split("\n"),
        "[Pipeline] }",
        "[Pipeline] // stage",
        "[Pipeline] }",
        "[Pipeline] // node",
        "[Pipeline] End of Pipeline",
        "ERROR: script returned exit code 1",
        "Finished: FAILURE",
    ]


def _jenkins_mcp(output: str) -> str:
    return json.dumps({"hasMoreContent": False, "lines": _jenkins_lines(output)})


def _azure_lines(output: str) -> list[str]:
    """An Azure Pipelines task's log: the task's header, the shell, the output, the verdict;
    a time stamp before every line."""
    lines = [
        "##[section]Starting: Run tests",
        "=" * 78,
        "Task         : Command line",
        "Version      : 2.246.1",
        "=" * 78,
        "Generating script.",
        "Script contents:",
        "python -m pytest tests/",
        "========================== Starting Command Output ===========================",
        "[command]/usr/bin/bash --noprofile --norc /home/vsts/work/_temp/6d1c2b4e.sh",
        *output.split("\n"),
        "##[error]Bash exited with code '1'.",
        "##[section]Finishing: Run tests",
    ]
    return [f"2024-05-01T10:12:03.{1174820 + i}Z {line}" for i, line in enumerate(lines)]


def _azure_mcp(output: str) -> str:
    return json.dumps(_azure_lines(output), indent=2)


def _github_job(output: str) -> str:
    """A GitHub Actions job's whole raw log: the checkout, an install and its output, the
    failing step, the post step; a time stamp before each line, a byte order mark first."""
    lines = [
        "##[group]Run actions/checkout@v4",
        "with:",
        "  repository: acme/shop",
        "##[endgroup]",
        "Syncing repository: acme/shop",
        "[command]/usr/bin/git version",
        "##[group]Run pip install -e .",
        "pip install -e .",
        "shell: /usr/bin/bash -e {0}",
        "##[endgroup]",
        "Collecting click>=8.1 (from shop==0.1.0)",
        "Successfully installed click-8.1.7 shop-0.1.0",
        "##[group]Run python -m pytest tests/",
        "python -m pytest tests/",
        "shell: /usr/bin/bash -e {0}",
        "##[endgroup]",
        *output.split("\n"),
        "##[error]Process completed with exit code 1.",
        "Post job cleanup.",
        "[command]/usr/bin/git version",
        "Cleaning up orphan processes",
    ]
    return "\ufeff" + "\n".join(
        f"2024-05-01T10:12:03.{1174820 + 517 * i:07d}Z {line}" for i, line in enumerate(lines)
    )


def _github_mcp(output: str) -> str:
    """The job's log as GitHub's MCP server answers ``get_job_logs`` with its content."""
    log = _github_job(output)
    answer = {"job_id": 262133, "logs_content": log, "message": "Job logs content retrieved"}
    return json.dumps({**answer, "original_length": log.count("\n") + 1})


# Each JSON answer, and the line prefixes its log carries
FETCHED = {
    "GitHub's MCP server": (_github_mcp, "time stamp"),
    "CircleCI's MCP server": (_circleci_mcp, None),
    "Buildkite's MCP server": (_buildkite_mcp, None),
    "Jenkins' MCP server": (_jenkins_mcp, None),
    "Azure DevOps' MCP server": (_azure_mcp, "time stamp"),
}
LOGS = {
    "a CircleCI step's output": (_circleci_output, None),
    "a Buildkite job's raw log": (_buildkite_log, None),
    "a Jenkins console": (lambda output: "\n".join(_jenkins_lines(output)), None),
    "a Jenkins console with its timestamper's times": (
        lambda output: "\n".join(
            f"10:12:{i % 60:02d} {x}" for i, x in enumerate(_jenkins_lines(output))
        ),
        "time of day",
    ),
    "an Azure Pipelines task's log": (lambda output: "\n".join(_azure_lines(output)), "time stamp"),
    "a GitHub Actions job's whole log": (_github_job, "time stamp"),
}
STEP_OUTPUT = "read without the CI runner's lines around the step's output"


@pytest.mark.parametrize(("fetch", "prefix"), FETCHED.values(), ids=FETCHED)
@pytest.mark.parametrize("output", [PY, MESSAGE], ids=["trace", "error line"])
def test_a_ci_system_s_json_answer_reads_as_the_step_s_output(fetch, prefix, output: str) -> None:
    qa = analyze(fetch(output))
    assert qa.raw == output
    prefixes = [f"read without a log's line prefixes: {prefix}"] if prefix else []
    assert qa.reading_notes == [
        "read the CI log the JSON answer holds, line by line",
        *prefixes,
        STEP_OUTPUT,
    ]
    assert qa.messages == [MESSAGE]  # the runner's verdict is no error line the code wrote


@pytest.mark.parametrize(("log", "prefix"), LOGS.values(), ids=LOGS)
@pytest.mark.parametrize("output", [PY, MESSAGE], ids=["trace", "error line"])
def test_a_ci_system_s_log_reads_as_the_step_s_output(log, prefix, output: str) -> None:
    qa = analyze(log(output))
    assert qa.raw == output
    prefixes = [f"read without a log's line prefixes: {prefix}"] if prefix else []
    assert qa.reading_notes == [*prefixes, STEP_OUTPUT]
    assert qa.messages == [MESSAGE]


def test_each_failed_job_s_step_is_read() -> None:
    other = "KeyError: 'VIP'"
    jobs = [{"job_id": 1, "job_name": "test (3.11)", "logs_content": _github_job(MESSAGE)}]
    jobs.append({"job_id": 2, "job_name": "test (3.12)", "logs_content": _github_job(other)})
    qa = analyze(json.dumps({"message": "Retrieved logs for 2 failed jobs", "logs": jobs}))
    assert qa.raw == f"{MESSAGE}\n{other}"  # no install, checkout or clean-up between them


def test_a_jenkins_verdict_that_kept_its_time_stamp_still_goes() -> None:
    # the timestamper's time on ``ERROR: …`` reads as a logger's record, which keeps its time
    lines = _jenkins_lines(MESSAGE)
    stamped = "\n".join(f"[2024-05-01T10:12:{i:02d}.117Z] {x}" for i, x in enumerate(lines))
    assert analyze(stamped).raw == MESSAGE


def test_one_line_that_starts_with_a_time_keeps_it() -> None:
    text = "10:12:03 the nightly job failed\nwhy does it fail at night?"
    assert read_paste(text) == (text, [])


def test_circleci_s_api_output_and_a_step_s_error_stream_are_read() -> None:
    # the API's output (v1.1, a step's ``output_url``): the terminal in pieces
    terminal = _circleci_output(PY)
    pieces = [
        {"type": "out", "time": "2024-05-01T10:12:03.117Z", "message": terminal[:40]},
        {"type": "out", "time": "2024-05-01T10:12:04.117Z", "message": terminal[40:]},
    ]
    assert analyze(json.dumps(pieces)).raw == PY
    # what the step wrote to its error stream is read after its output
    logs = json.dumps({"output": "collected 3 items\r\n", "error": MESSAGE})
    assert read_paste(f"Job: test\nStep: Run tests\nLogs: {logs}")[0] == (
        "collected 3 items\n" + MESSAGE
    )


def test_the_program_s_own_lines_stay() -> None:
    # a group the script opened keeps its output (its header goes); an echo outside the
    # agent's command phase is the program's; a Jenkins step other than a checkout holds output
    assert step_output("~~~ Running commands\n$ make test\n--- Tests\n$ ls\n" + PY) == (
        "$ ls\n" + PY
    )
    # (the shell's echoes that open a ``sh`` step go, a line later in its output stays)
    jenkins = "[Pipeline] echo\nDeploying 1.2.3\n[Pipeline] sh\n+ cd web\n+ make\nok\n+ x\n"
    assert step_output(jenkins + PY + "\nFinished: FAILURE") == "Deploying 1.2.3\nok\n+ x\n" + PY
    # without a system's marks a log is left as it is: a diff's headers, a shell's trace
    diff = "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -1 +1 @@\n+ x = 1"
    assert step_output(diff) is None
    assert step_output("~~~ python\n$ python app.py\n" + PY + "\n~~~") is None  # a fence


@pytest.mark.parametrize(
    "text",
    [
        '{"lines": [1, 2]}',
        '{"entries": [{"c": 1}]}',
        '{"lines": []}',
        '[{"type": "out", "message": "a"}, 3]',
        '[{"message": "a"}, {"message": "b"}]',
        "{not json",
        '{"user": "a", "lines": "many"}',
        "Logs: {broken",
        PY,
    ],
)
def test_json_that_holds_no_log_is_no_ci_answer(text: str) -> None:
    assert log_text(text) is None


def test_an_escape_string_is_no_text() -> None:
    # Buildkite's time stamp (an application program command), a terminal's title (OSC)
    assert plain("\x1b_bk;t=1714558323117\x07Traceback\x1b]0;title\x1b\\") == "Traceback"


def test_a_ci_system_s_answer_finds_the_failing_function(project: Path, tmp_path: Path) -> None:
    res = finds_the_raise_site(project, tmp_path / "idx", _buildkite_mcp(PY))
    assert "read the CI log the JSON answer holds, line by line" in res.notes


# A service's log as a log service's API hands it back, a line per event or entry.
def _cloudwatch(output: str) -> str:
    """``output`` as ``aws logs filter-log-events`` prints an ECS task's stream: an event a line."""
    events = [
        {
            "logStreamName": "ecs/web/0f3c7a1e9d2b4c6a8e1f3a5b7c9d1e2f",
            "timestamp": 1714558323117 + i // 3,  # lines written in one burst share a time
            "message": line,
            "ingestionTime": 1714558324000,
            "eventId": f"3817460239837{i:04d}",
        }
        for i, line in enumerate(output.split("\n"))
    ]
    return json.dumps({"events": events, "searchedLogStreams": []}, indent=4)


def _gcloud_lines(output: str) -> str:
    """``output`` as ``gcloud logging read`` prints a Cloud Run service's stderr: an entry a
    line, newest first."""
    entries = [
        {
            "insertId": f"65f1c2a3000b1e{i:04d}",
            "logName": "projects/acme-prod/logs/run.googleapis.com%2Fstderr",
            "resource": {"labels": {"service_name": "shop"}, "type": "cloud_run_revision"},
            "severity": "ERROR" if line.startswith("AttributeError") else "DEFAULT",
            "textPayload": line,
            # a fraction's digits vary: ``03.1Z`` is before ``03.117482915Z``
            "timestamp": f"2024-05-01T10:12:03.{100000000 + 17482915 * i:09d}".rstrip("0") + "Z",
        }
        for i, line in enumerate(output.split("\n"))
    ]
    return json.dumps(entries[::-1], indent=2)


def _insights(output: str, api: bool = False) -> str:
    """``output`` as a Logs Insights query (``fields @timestamp, @message | sort @timestamp
    desc``) answers: as AWS's CloudWatch MCP server gives its rows, or as the API does."""
    rows = [
        {"@timestamp": f"2024-05-01 10:12:03.{117 + i:03d}", "@message": line, "@ptr": f"Cm{i}"}
        for i, line in enumerate(output.split("\n"))
    ][::-1]
    if api:
        fields = [[{"field": k, "value": v} for k, v in row.items()] for row in rows]
        return json.dumps({"results": fields, "statistics": {"recordsMatched": 9.0}})
    return json.dumps({"queryId": "3f1e", "status": "Complete", "results": rows}, indent=2)


@pytest.mark.parametrize(
    "fetched",
    [_cloudwatch, _gcloud_lines, _insights, lambda output: _insights(output, api=True)],
    ids=["cloudwatch", "gcloud", "insights-mcp", "insights-api"],
)
def test_a_log_service_s_lines_read_as_the_service_wrote_them(
    fetched: Callable[[str], str],
) -> None:
    qa = analyze(fetched(PY))
    assert qa.raw == PY  # oldest first, whatever order the service answered in
    assert qa.frames == analyze(PY).frames
    assert qa.quoted == []
    assert qa.reading_notes == ["read the log the JSON answer holds, line by line"]


def test_a_lambda_function_s_error_is_one_event() -> None:
    event = {"timestamp": 1714558323117, "message": f"[ERROR] {MESSAGE}\n{PY}\n"}
    qa = analyze(json.dumps({"events": [event], "nextForwardToken": "f/3817"}))
    assert qa.frames == analyze(PY).frames


def test_entries_of_one_instant_read_in_gcloud_s_order_reversed() -> None:
    lines = ["first", "second", "third"]
    entries = [{"textPayload": t, "timestamp": "2024-05-01T10:12:03Z"} for t in lines[::-1]]
    assert log_text(json.dumps(entries)) == ("first\nsecond\nthird", "log")


def test_one_entry_alone_is_a_record_not_a_log() -> None:
    entry = [{"textPayload": MESSAGE, "timestamp": "2024-05-01T10:12:03Z", "severity": "ERROR"}]
    assert log_text(json.dumps(entry)) is None
    assert analyze(json.dumps(entry)).raw == MESSAGE  # ``log_records`` reads its message
