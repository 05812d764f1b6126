"""A failed CI step's output as an agent fetches it from CircleCI, Buildkite and Jenkins.

Each renders what a step printed (``text``, the case) the way the CI system hands it over, its
own lines around it as a failed job has them:

- :func:`circleci_mcp`: the ``get_build_failure_logs`` answer of CircleCI's MCP server
  (CircleCI-Public/mcp-server-circleci, ``formatJobLogs``): ``Job:`` and ``Step:`` lines, then
  ``Logs:`` and the step's output and error streams as one JSON object on one line. The output
  is the step's terminal as CircleCI records it: the shell and the command first
  (``#!/bin/bash -eo pipefail``), CR LF line ends, the verdict ``Exited with code exit status
  1`` last;
- :func:`buildkite_log`: a Buildkite job's raw log (``bk job log``, the REST API's ``log.txt``):
  every line opens with the agent's time stamp as an escape (``ESC _bk;t=<ms> BEL``), the
  agent's groups (``~~~ Preparing working directory``, ``~~~ Running commands``), its echoes
  (``$ git clone …``, ``$ python -m pytest tests/``) and, after the output, its verdict
  (``🚨 Error: The command exited with status 1``, ``^^^ +++``);
- :func:`buildkite_mcp`: the same log as Buildkite's MCP server reads it to an agent
  (buildkite/buildkite-mcp-server, ``read_logs``): one JSON object whose ``entries`` are the
  lines, each ``{"ts": <ms>, "c": <line without escapes>, "rn": <row>}``;
- :func:`jenkins_console`: a Jenkins Pipeline's console text (``consoleText``): the
  ``[Pipeline]`` steps around the ``sh`` step, its ``+ python -m pytest tests/`` echo, then
  ``ERROR: script returned exit code 1`` and ``Finished: FAILURE``;
- :func:`jenkins_mcp`: the same lines as Jenkins' MCP server plugin answers ``getBuildLog``
  (jenkinsci/mcp-server-plugin): ``{"hasMoreContent": false, "lines": [...]}``;
- :func:`azure_log`: an Azure Pipelines task's log as downloaded: a time stamp before every
  line, the task's header (``##[section]Starting: Run tests``, its name, version and help, the
  script it generated) up to ``Starting Command Output``, the shell's ``[command]`` line, then
  the output and the verdict (``##[error]Bash exited with code '1'.``);
- :func:`azure_mcp`: the same lines as Azure DevOps' MCP server answers
  ``pipelines_get_build_log_by_id`` (microsoft/azure-devops-mcp): a JSON array, pretty-printed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

_COMMAND = "python -m pytest tests/"


def circleci_mcp(text: str) -> str:
    """``text`` as CircleCI's MCP server reports the failed step that printed it."""
    lines = ["#!/bin/bash -eo pipefail", _COMMAND, *text.split("\n"), ""]
    output = "\r\n".join([*lines, "Exited with code exit status 1", ""])
    logs = json.dumps({"output": output, "error": ""}, separators=(",", ":"))
    return f"=====\nJob: test\nStep: Run tests\nLogs: {logs}"


def _buildkite_lines(text: str) -> list[str]:
    """The job's log lines, the agent's around the step's output."""
    checkout = "/var/lib/buildkite-agent/builds/agent-1/acme/web"
    return [
        "~~~ Preparing working directory",
        f"$ cd {checkout}",
        '# Host "github.com" already in list of known hosts at "/root/.ssh/known_hosts"',
        "$ git clone -v -- git@github.com:acme/web.git .",
        "Cloning into '.'...",
        "$ git checkout -f 874ca2bc5f6e8d9a0b1c2d3e4f5a6b7c8d9e0f1a",
        "HEAD is now at 874ca2b Merge pull request #1432 from acme/fix-session",
        "~~~ Running commands",
        f"$ {_COMMAND}",
        *text.split("\n"),
        "🚨 Error: The command exited with status 1",
        "^^^ +++",
    ]


_BUILDKITE_START_MS = 1714558323117


def buildkite_log(text: str) -> str:
    """``text`` in a failed Buildkite job's raw log, each line's time stamp an escape."""
    return "\r\n".join(
        f"\x1b_bk;t={_BUILDKITE_START_MS + 7 * i}\x07{line}"
        for i, line in enumerate(_buildkite_lines(text))
    )


def buildkite_mcp(text: str) -> str:
    """``text``'s job log as Buildkite's MCP server reads it to an agent."""
    entries = [
        {"ts": _BUILDKITE_START_MS + 7 * i, "c": line, "rn": i}
        for i, line in enumerate(_buildkite_lines(text))
    ]
    return json.dumps({"entries": entries, "query_time_ms": 4}, separators=(",", ":"))


def _jenkins_lines(text: str) -> list[str]:
    return [
        "Started by user Jane Doe",
        "[Pipeline] Start of Pipeline",
        "[Pipeline] node",
        "Running on agent-1 in /home/jenkins/workspace/web",
        "[Pipeline] {",
        "[Pipeline] stage",
        "[Pipeline] { (Checkout)",
        "[Pipeline] checkout",
        "The recommended git tool is: NONE",
        "using credential github-token",
        " > git rev-parse --resolve-git-dir /home/jenkins/workspace/web/.git # timeout=10",
        "Checking out Revision 874ca2bc5f6e8d9a0b1c2d3e4f5a6b7c8d9e0f1a (refs/remotes/origin/main)",
        "[Pipeline] }",
        "[Pipeline] // stage",
        "[Pipeline] stage",
        "[Pipeline] { (Test)",
        "[Pipeline] sh",
        f"+ {_COMMAND}",
        *text.split("\n"),
        "[Pipeline] }",
        "[Pipeline] // stage",
        "[Pipeline] }",
        "[Pipeline] // node",
        "[Pipeline] End of Pipeline",
        "ERROR: script returned exit code 1",
        "Finished: FAILURE",
    ]


def jenkins_console(text: str) -> str:
    """``text`` in a failed Jenkins Pipeline's console text."""
    return "\n".join(_jenkins_lines(text))


def jenkins_mcp(text: str) -> str:
    """``text``'s console as Jenkins' MCP server plugin answers ``getBuildLog``."""
    return json.dumps({"hasMoreContent": False, "lines": _jenkins_lines(text)})


_RULE = "=" * 78


def _azure_lines(text: str) -> list[str]:
    start = datetime(2024, 5, 1, 10, 12, 3, 117482, tzinfo=UTC)
    lines = [
        "##[section]Starting: Run tests",
        _RULE,
        "Task         : Command line",
        "Description  : Run a command line script using Bash on Linux and macOS and cmd.exe on "
        "Windows",
        "Version      : 2.246.1",
        "Author       : Microsoft Corporation",
        "Help         : https://docs.microsoft.com/azure/devops/pipelines/tasks/utility/"
        "command-line",
        _RULE,
        "Generating script.",
        "Script contents:",
        _COMMAND,
        "========================== Starting Command Output ===========================",
        "[command]/usr/bin/bash --noprofile --norc /home/vsts/work/_temp/6d1c2b4e.sh",
        *text.split("\n"),
        "##[error]Bash exited with code '1'.",
        "##[section]Finishing: Run tests",
    ]
    return [
        f"{(start + timedelta(microseconds=431 * i)).strftime('%Y-%m-%dT%H:%M:%S.%f')}0Z {line}"
        for i, line in enumerate(lines)
    ]


def azure_log(text: str) -> str:
    """``text`` in a failed Azure Pipelines task's log."""
    return "\n".join(_azure_lines(text))


def azure_mcp(text: str) -> str:
    """``text``'s task log as Azure DevOps' MCP server answers ``pipelines_get_build_log_by_id``."""
    return json.dumps(_azure_lines(text), indent=2)
