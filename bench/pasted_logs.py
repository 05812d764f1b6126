#!/usr/bin/env python3
"""The dev set's failures as logs deliver them, asked of the dev set's checkouts.

A traceback is often copied from where a service's output ends up, not from a terminal: every
line then carries a log router's prefix, or the whole trace is one string of a JSON log record.
This set takes the dev failure cases of flask and click (``failures/``: whole tracebacks and
their error lines; ``test_reports/``: pytest's report) and prints each the way these do:

- a router, line by line (an empty line gets the prefix, its trailing space trimmed, as a copy
  keeps it): ``compose``, ``docker compose logs`` (``web-1  | ``); ``kubernetes``, a container's
  log as the kubelet stores it (CRI; what ``kubectl logs`` reads and log shippers forward:
  ``2024-05-01T10:12:03.117482913Z stderr F ``, nanoseconds with their trailing zeros dropped,
  as Go's RFC 3339 writes them); ``journald``, ``journalctl`` for a unit (``May 01 10:12:03
  web01 gunicorn[4121]: ``); ``heroku``, ``heroku logs`` (``2024-05-01T10:12:03.117482+00:00
  app[web.1]: ``); ``actions``, a GitHub Actions job's raw log (``2024-05-01T10:12:03.1174820Z
  ``); ``actions+compose``, ``docker compose up`` run in that job (both, nested);
- ``quoted``: quoted in a reply or Markdown (``> `` before every line);
- ``windows``: copied on Windows, every line ending in CR LF;
- ``gh-run-log``: as ``gh run view --log-failed`` prints the failed step (what an agent reads
  of a CI run): the job's and step's names and a tab before each line of the raw log, with the
  step's group before the output and the runner's ``##[error]`` after it; ``gitlab-job-log``:
  as GitLab's API returns a failed job's log (``glab ci trace``), the output in the script's
  section among the runner's; ``circleci-mcp``, ``buildkite-log``, ``buildkite-mcp``,
  ``jenkins-console``, ``jenkins-mcp``, ``azure-log`` and ``azure-mcp``: a failed step as
  CircleCI's MCP server, Buildkite's raw log and its MCP server, Jenkins' console text and its
  MCP server, and an Azure Pipelines task's log and Azure DevOps' MCP server hand it over, and
  ``github-mcp``: the failed job's whole log as GitHub's MCP server returns it, every step's
  (``ci_fetches.py`` says how each is built);
- ``structlog``: one JSON record (structlog's ``event``, ``level``, ``timestamp``) whose
  ``exception`` is the case, as a log viewer shows it, and ``kubernetes+structlog``, that
  record in the kubelet's log (tracebacks and error lines);
- ``escaped``: the traceback as that record's field holds it, copied out alone: one line, its
  line breaks and quotes escaped (tracebacks);
- ``sentry-json`` and ``sentry-mcp``: the traceback as Sentry reports it, the event's JSON as
  Sentry's page shows it and what Sentry's MCP server answers an agent about the issue
  (``sentry_events.py`` says how each is built; tracebacks); ``rollbar-mcp``: as Rollbar's MCP
  server answers about the item, and ``bugsnag-mcp``, as Bugsnag's (SmartBear's) answers
  about the error (``tracker_items.py``; tracebacks);
- ``datadog-api`` and ``gcloud-json``: the record that logged the failure as Datadog's Logs API
  answers a search and as ``gcloud logging read --format=json`` prints its entry
  (``log_services.py``; tracebacks and error lines); ``cloudwatch-json`` and ``gcloud-lines``:
  the service's log a line per event or entry, as ``aws logs filter-log-events`` and ``gcloud
  logging read`` print them as JSON (gcloud's newest first), and ``cloudwatch-insights``, as
  AWS's CloudWatch MCP server answers a Logs Insights query for them (newest first);
- ``lambda-response``: the traceback as an AWS Lambda function's error response reports it
  (its type, message and frames three keys of one JSON object; tracebacks), and
  ``lambda-log``, as ``aws logs tail`` shows the function's log of it (one multi-line event,
  its time and stream on its first line; tracebacks);
- ``ecs``: ``aws logs tail`` of a container's stream, every line an event
  (``2024-05-01T10:12:03.117482+00:00 ecs/web/… ``); ``fly``: ``fly logs``
  (``2024-05-01T10:12:03Z app[9080e6d7b12345] iad [info]``).

The time advances a few hundred microseconds a line from a fixed start; ``pasted`` is the case
as it is, the row the others are compared with. Gold is the case's own (the raise site's file
and lines). Reported per form and kind: MRR@10 at file level, chunk@1 / chunk@10 (a result
overlapping a gold range) and the two refusal numbers; ``depth`` deep, no time limit. Run
``quality.py --history`` first: the checkouts and their indexes are its.

  python bench/pasted_logs.py [--index-root DIR] [--forms A,B] [--per-kind N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import ci_fetches
import log_services
import sentry_events
import tracker_items
from devset import (
    DEFAULT_INDEX_ROOT,
    DEFAULT_WS,
    FAILURES_DIR,
    TEST_REPORTS_DIR,
    load_failure_cases,
)
from held_out import place_rows, place_table, write_report

# isort: split
from code_evidence.api import Evidence

DATASETS = (
    "flask-2.0.0-commits",
    "flask-3.1.0-commits",
    "click-8.1.7-commits",
    "click-8.3.0-commits",
)
KINDS = {"trace": FAILURES_DIR, "message": FAILURES_DIR, "pytest-report": TEST_REPORTS_DIR}
START = datetime(2024, 5, 1, 10, 12, 3, 117482, tzinfo=UTC)


def _rfc3339_nano(t: datetime, nanos: int) -> str:
    frac = f"{t.microsecond * 1000 + nanos:09d}".rstrip("0")
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def _compose(t: datetime, rng: random.Random) -> str:
    return "web-1  | "


def _kubernetes(t: datetime, rng: random.Random) -> str:
    return f"{_rfc3339_nano(t, rng.randrange(1000))} stderr F "


def _journald(t: datetime, rng: random.Random) -> str:
    return t.strftime("%b %d %H:%M:%S") + " web01 gunicorn[4121]: "


def _heroku(t: datetime, rng: random.Random) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00 app[web.1]: "


def _actions(t: datetime, rng: random.Random) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond * 10 + rng.randrange(10):07d}Z "


def _actions_compose(t: datetime, rng: random.Random) -> str:
    return _actions(t, rng) + _compose(t, rng)


def _quoted(t: datetime, rng: random.Random) -> str:
    return "> "


def _structlog(text: str) -> str:
    record = {
        "event": "request failed",
        "level": "error",
        "timestamp": "2024-05-01T10:12:03.117482Z",
        "exception": text,
    }
    return json.dumps(record)


# A GitHub Actions step's raw log around what the step printed: the step's group (its command,
# shell and environment), then, after the output, the runner's error for the step's exit.
_STEP_BEFORE = [
    "##[group]Run python -m pytest tests/",
    "\x1b[36;1mpython -m pytest tests/\x1b[0m",
    "shell: /usr/bin/bash -e {0}",
    "env:",
    "  pythonLocation: /opt/hostedtoolcache/Python/3.12.3/x64",
    "##[endgroup]",
]
_STEP_AFTER = ["##[error]Process completed with exit code 1."]


def _gh_run_log(text: str, seed: str) -> str:
    """``text`` as ``gh run view --log-failed`` prints the step that printed it: the job's and
    the step's names and a tab before each line of the raw log (its time stamps, a byte order
    mark before the first, the step's group and the runner's error around the output)."""
    rng = random.Random(seed)
    t = START
    lines = []
    for i, line in enumerate([*_STEP_BEFORE, *text.split("\n"), *_STEP_AFTER]):
        t += timedelta(microseconds=rng.randrange(50, 900))
        raw = ("\ufeff" if i == 0 else "") + _actions(t, rng) + line
        lines.append("test (3.12)\tRun python -m pytest tests/\t" + raw)
    return "\n".join(lines)


# A GitLab job's log as its API returns it (``glab ci trace``): the runner's sections, each
# ``section_start:<time>:<name>`` and its header after a carriage return and an erase, colours.
_CYAN, _GREEN, _RED, _OFF, _ERASE = "\x1b[36;1m", "\x1b[32;1m", "\x1b[31;1m", "\x1b[0;m", "\x1b[0K"


def _section(t: int, name: str, header: str, *, first: bool = False) -> str:
    head = "" if first else f"section_end:{t}:{{prev}}\r{_ERASE}"
    return f"{head}{_ERASE}section_start:{t}:{name}\r{_ERASE}{_ERASE}{_CYAN}{header}{_OFF}{_OFF}"


def _gitlab_job_log(text: str) -> str:
    """``text`` as the script's output in a failed GitLab job's log: the runner's preparation,
    its checkout, the script's section with its echoed commands, the clean-up and the
    verdict."""
    t = 1714558323
    sections = [
        (
            "prepare_executor",
            'Preparing the "docker" executor',
            [
                f"{_ERASE}Using Docker executor with image python:3.12 ...{_OFF}",
                f"{_ERASE}Pulling docker image python:3.12 ...{_OFF}",
            ],
        ),
        (
            "prepare_script",
            "Preparing environment",
            ["Running on runner-8a4b3c2d-project-123-concurrent-0 via gitlab-runner-1..."],
        ),
        (
            "get_sources",
            "Getting source from Git repository",
            [
                f"{_GREEN}Fetching changes with git depth set to 20...{_OFF}",
                "Initialized empty Git repository in /builds/acme/web/.git/",
                f"{_GREEN}Checking out 874ca2bc as detached HEAD (ref is main)...{_OFF}",
                "",
                f"{_GREEN}Skipping Git submodules setup{_OFF}",
            ],
        ),
        (
            "step_script",
            'Executing "step_script" stage of the job script',
            [f"{_GREEN}$ python -m pytest tests/{_OFF}", *text.split("\n")],
        ),
        ("cleanup_file_variables", "Cleaning up project directory and file based variables", []),
    ]
    lines = [
        f"{_ERASE}Running with gitlab-runner 17.0.0 (44feccdf){_OFF}",
        f"{_ERASE}  on docker-runner 8a4b3c2d, system ID: r_AbCdEf123456{_OFF}",
    ]
    prev = None
    for i, (name, header, body) in enumerate(sections):
        t += 3
        lines.append(_section(t, name, header, first=i == 0).replace("{prev}", prev or ""))
        lines.extend(body)
        prev = name
    lines.append(f"section_end:{t + 1}:{prev}\r{_ERASE}{_RED}ERROR: Job failed: exit code 1")
    lines.append(_OFF)
    return "\n".join(lines)


def _last_exception(trace: str) -> tuple[str, str, list[str]]:
    """The last exception of a traceback as AWS Lambda's Python runtime reports it: its type
    (unqualified), its message, and its frames as ``traceback.format_list`` writes them."""
    lines = sentry_events.chain(trace)[-1].split("\n")
    frames: list[str] = []
    error_at = len(lines)
    for i, line in enumerate(lines):
        if line.startswith('  File "'):
            frames.append(line + "\n")
            error_at = i + 1
        elif line.startswith("    ") and frames:
            if not set(line.strip()) <= set("^~"):  # the caret line is the print's, not the list's
                frames[-1] += line + "\n"
            error_at = i + 1
    head, _, message = "\n".join(lines[error_at:]).strip().partition(": ")
    return head.rsplit(".", 1)[-1], message, frames


def _lambda_response(trace: str) -> str:
    """A traceback as an AWS Lambda function's error response reports it (``aws lambda
    invoke``, the console's test), pretty-printed as the CLI's output file and the console
    show it."""
    kind, message, frames = _last_exception(trace)
    response = {
        "errorMessage": message,
        "errorType": kind,
        "requestId": "c6af9ac6-7b61-11e6-9a41-93e812345678",
        "stackTrace": frames,
    }
    return json.dumps(response, indent=2)


_LAMBDA_STREAM = "2024/05/01/[$LATEST]6c7f1b9e0d2a4f3c8b5e7a9d1c3e5f70"


def _lambda_log(trace: str) -> str:
    """A traceback as ``aws logs tail`` shows a Lambda function's log of it: one event, the
    runtime's ``[ERROR] Type: message`` and the traceback without its error line, the event's
    time and stream before its first line only."""
    kind, message, frames = _last_exception(trace)
    event = f"[ERROR] {kind}: {message}\nTraceback (most recent call last):\n" + "".join(frames)
    return f"2024-05-01T10:12:03.117000+00:00 {_LAMBDA_STREAM} {event.rstrip()}"


def _ecs(t: datetime, rng: random.Random) -> str:
    return t.isoformat() + " ecs/web/0123456789abcdef0123456789abcdef "


def _fly(t: datetime, rng: random.Random) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ") + " app[9080e6d7b12345] iad [info]"


# Each form's prefix before every line (None: none; :func:`delivered` says what else it does).
FORMS: dict[str, Callable[[datetime, random.Random], str] | None] = {
    "pasted": None,
    "compose": _compose,
    "kubernetes": _kubernetes,
    "journald": _journald,
    "heroku": _heroku,
    "actions": _actions,
    "actions+compose": _actions_compose,
    "quoted": _quoted,
    "windows": None,
    "structlog": None,
    "kubernetes+structlog": _kubernetes,
    "escaped": None,
    "gh-run-log": None,
    "gitlab-job-log": None,
    "sentry-json": None,
    "sentry-mcp": None,
    "lambda-response": None,
    "lambda-log": None,
    "ecs": _ecs,
    "fly": _fly,
    "circleci-mcp": None,
    "buildkite-log": None,
    "buildkite-mcp": None,
    "jenkins-console": None,
    "jenkins-mcp": None,
    "azure-log": None,
    "azure-mcp": None,
    "github-mcp": None,
    "rollbar-mcp": None,
    "bugsnag-mcp": None,
    "datadog-api": None,
    "gcloud-json": None,
    "cloudwatch-json": None,
    "gcloud-lines": None,
    "cloudwatch-insights": None,
}
# The forms a CI system renders whole (``ci_fetches``).
_CI_FETCHES: dict[str, Callable[[str], str]] = {
    "circleci-mcp": ci_fetches.circleci_mcp,
    "buildkite-log": ci_fetches.buildkite_log,
    "buildkite-mcp": ci_fetches.buildkite_mcp,
    "jenkins-console": ci_fetches.jenkins_console,
    "jenkins-mcp": ci_fetches.jenkins_mcp,
    "azure-log": ci_fetches.azure_log,
    "azure-mcp": ci_fetches.azure_mcp,
    "github-mcp": ci_fetches.github_mcp,
}
# The kinds each form is asked with (the rest: every kind). A one-line error line escaped is
# the line itself; a test runner's report is no service's log record.
FORM_KINDS = {
    "structlog": ("trace", "message"),
    "kubernetes+structlog": ("trace", "message"),
    "escaped": ("trace",),
    "sentry-json": ("trace",),
    "sentry-mcp": ("trace",),
    "lambda-response": ("trace",),
    "lambda-log": ("trace",),
    "rollbar-mcp": ("trace",),
    "bugsnag-mcp": ("trace",),
    "datadog-api": ("trace", "message"),
    "gcloud-json": ("trace", "message"),
}


def delivered(text: str, form: str, seed: str, workspace: Path) -> str:
    """``text`` as ``form`` delivers it: in a JSON record, escaped, with CR LF line ends, as
    Sentry shows it (its frames' source read from ``workspace``), and with the form's prefix
    before every line."""
    if form == "gh-run-log":
        return _gh_run_log(text, seed)
    if form == "gitlab-job-log":
        return _gitlab_job_log(text)
    if form in _CI_FETCHES:
        return _CI_FETCHES[form](text)
    if form == "lambda-response":
        return _lambda_response(text)
    if form == "lambda-log":
        return _lambda_log(text)
    if form == "sentry-json":
        return sentry_events.stored_json(text, workspace)
    if form == "sentry-mcp":
        return sentry_events.mcp_issue(text, workspace)
    if form == "rollbar-mcp":
        return tracker_items.rollbar_item(text)
    if form == "bugsnag-mcp":
        return tracker_items.bugsnag_error(text, workspace)
    if form == "datadog-api":
        return log_services.datadog_search(text)
    if form == "gcloud-json":
        return log_services.gcloud_read(text)
    if form == "cloudwatch-json":
        return log_services.cloudwatch_events(text)
    if form == "gcloud-lines":
        return log_services.gcloud_lines(text)
    if form == "cloudwatch-insights":
        return log_services.insights_mcp(text)
    if form == "windows":
        return text.replace("\n", "\r\n")
    if form == "escaped":
        return json.dumps(text)[1:-1]
    if form.endswith("structlog"):
        text = _structlog(text)
    prefix = FORMS[form]
    if prefix is None:
        return text
    rng = random.Random(seed)
    t = START
    lines = []
    for line in text.split("\n"):
        t += timedelta(microseconds=rng.randrange(50, 900))
        head = prefix(t, rng)
        lines.append(head + line if line else head.rstrip())
    return "\n".join(lines)


@dataclass(frozen=True)
class Case:
    project: str  # the dataset: its checkout and its index
    id: str
    kind: str
    form: str
    query: str
    gold: dict[str, list[tuple[int, int]]]


def build_cases(per_kind: int | None, forms: list[str], ws: Path) -> list[Case]:
    cases: list[Case] = []
    for dataset in DATASETS:
        for kind, folder in KINDS.items():
            found = [c for c in load_failure_cases(folder, dataset, None) if c.kind == kind]
            for c in found[:per_kind]:
                gold = {p: [tuple(r) for r in ranges] for p, ranges in c.gold.items()}
                for form in forms:
                    if kind not in FORM_KINDS.get(form, (kind,)):
                        continue
                    query = delivered(c.query, form, f"{c.id}:{form}", ws / dataset)
                    cases.append(Case(dataset, c.id, kind, form, query, gold))
    return cases


def _holds(case: Case, r: Evidence) -> bool:
    return any(a <= r.end and r.start <= b for a, b in case.gold.get(r.path, ()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ws", type=Path, default=DEFAULT_WS["history"])
    ap.add_argument("--index-root", type=Path, default=DEFAULT_INDEX_ROOT["history"])
    ap.add_argument("--per-kind", type=int, default=None, help="first N cases per kind and dataset")
    ap.add_argument(
        "--forms", default=",".join(FORMS), help=f"comma-separated (default: all of {list(FORMS)})"
    )
    ap.add_argument("--list", action="store_true", help="print the cases, ask nothing")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    forms = [f.strip() for f in args.forms.split(",") if f.strip()]
    unknown = sorted(set(forms) - set(FORMS))
    if unknown:
        ap.error(f"unknown form(s) {unknown}; known: {list(FORMS)}")
    cases = build_cases(args.per_kind, forms, args.ws)
    if args.list:
        for c in cases:
            print(f"--- {c.id} {c.form}\n{c.query[:600]}")
        return
    rows = place_rows(args.ws, args.index_root, cases, lambda c: list(c.gold), _holds, "chunk")
    groups = [
        (f"{form} | {kind}", lambda r, f=form, k=kind: r["form"] == f and k in ("all", r["kind"]))
        for form in forms
        for kind in (*KINDS, "all")
    ]
    print(place_table(rows, groups, "form | kind", "chunk"))
    write_report(rows, "pasted-logs", args.out)


if __name__ == "__main__":
    main()
