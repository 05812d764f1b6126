"""A failed CI step's output as an agent fetches it from CircleCI, Buildkite, Jenkins, Azure
Pipelines and GitHub Actions.

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
  ``pipelines_get_build_log_by_id`` (microsoft/azure-devops-mcp): a JSON array, pretty-printed;
- :func:`github_mcp`: a failed GitHub Actions job as GitHub's MCP server answers
  ``get_job_logs`` with its content (github/github-mcp-server): ``{"job_id", "logs_content",
  "message", "original_length"}``, the content the job's whole raw log: the runner's set-up,
  the checkout, the Python set-up, ``pip install`` and its output, then the failing step's
  group, its output and the runner's error, then the checkout's post step and the clean-up.
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


_TEMP_HOME = "/home/runner/work/_temp/5c2e6f0a-3b1d-4e7a-9c8b-1f2e3d4c5b6a"
_CHECKOUT = "/home/runner/work/web/web"
# A GitHub Actions job's raw log, its steps before the failing one: the runner's set-up, the
# checkout, the Python set-up, the install (with pip's output).
_JOB_BEFORE = [
    "Current runner version: '2.317.0'",
    "##[group]Operating System",
    "Ubuntu",
    "22.04.4",
    "LTS",
    "##[endgroup]",
    "##[group]Runner Image",
    "Image: ubuntu-22.04",
    "Version: 20240422.1.0",
    "##[endgroup]",
    "##[group]GITHUB_TOKEN Permissions",
    "Contents: read",
    "Metadata: read",
    "##[endgroup]",
    "Secret source: Actions",
    "Prepare workflow directory",
    "Prepare all required actions",
    "Getting action download info",
    "Download action repository 'actions/checkout@v4'"
    " (SHA:0ad4b8fadaa221de15dcec353f45205ec38ea70b)",
    "Download action repository 'actions/setup-python@v5'"
    " (SHA:82c7e631bb3cdc910f68e0081d67478d79c6982d)",
    "Complete job name: test (3.12)",
    "##[group]Run actions/checkout@v4",
    "with:",
    "  repository: acme/web",
    "  token: ***",
    "  ssh-strict: true",
    "  persist-credentials: true",
    "  clean: true",
    "  fetch-depth: 1",
    "##[endgroup]",
    "Syncing repository: acme/web",
    "##[group]Getting Git version info",
    f"Working directory is '{_CHECKOUT}'",
    "[command]/usr/bin/git version",
    "git version 2.44.0",
    "##[endgroup]",
    f"Temporarily overriding HOME='{_TEMP_HOME}' before making global git config changes",
    "Adding repository directory to the temporary git global config as a safe directory",
    f"[command]/usr/bin/git config --global --add safe.directory {_CHECKOUT}",
    f"Deleting the contents of '{_CHECKOUT}'",
    "##[group]Initializing the repository",
    f"[command]/usr/bin/git init {_CHECKOUT}",
    f"Initialized empty Git repository in {_CHECKOUT}/.git/",
    "[command]/usr/bin/git remote add origin https://github.com/acme/web",
    "##[endgroup]",
    "##[group]Fetching the repository",
    "[command]/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules"
    " --depth=1 origin +874ca2bc5f6e8d9a0b1c2d3e4f5a6b7c8d9e0f1a:refs/remotes/origin/main",
    "remote: Enumerating objects: 212, done.",
    "remote: Counting objects: 100% (212/212), done.",
    "remote: Compressing objects: 100% (180/180), done.",
    "remote: Total 212 (delta 21), reused 120 (delta 12), pack-reused 0",
    "From https://github.com/acme/web",
    " * [new ref]         874ca2bc5f6e8d9a0b1c2d3e4f5a6b7c8d9e0f1a -> origin/main",
    "##[endgroup]",
    "##[group]Checking out the ref",
    "[command]/usr/bin/git checkout --progress --force -B main refs/remotes/origin/main",
    "Switched to a new branch 'main'",
    "branch 'main' set up to track 'origin/main'.",
    "##[endgroup]",
    "[command]/usr/bin/git log -1 --format='%H'",
    "'874ca2bc5f6e8d9a0b1c2d3e4f5a6b7c8d9e0f1a'",
    "##[group]Run actions/setup-python@v5",
    "with:",
    "  python-version: 3.12",
    "  check-latest: false",
    "  token: ***",
    "  update-environment: true",
    "  allow-prereleases: false",
    "##[endgroup]",
    "##[group]Installed versions",
    "Successfully set up CPython (3.12.3)",
    "##[endgroup]",
    '##[group]Run pip install -e ".[dev]"',
    '\x1b[36;1mpip install -e ".[dev]"\x1b[0m',
    "shell: /usr/bin/bash -e {0}",
    "env:",
    "  pythonLocation: /opt/hostedtoolcache/Python/3.12.3/x64",
    "  LD_LIBRARY_PATH: /opt/hostedtoolcache/Python/3.12.3/x64/lib",
    "##[endgroup]",
    f"Obtaining file://{_CHECKOUT}",
    "  Installing build dependencies: started",
    "  Installing build dependencies: finished with status 'done'",
    "  Checking if build backend supports build_editable: started",
    "  Checking if build backend supports build_editable: finished with status 'done'",
    "  Getting requirements to build editable: started",
    "  Getting requirements to build editable: finished with status 'done'",
    "Collecting Werkzeug>=3.0.0 (from web==0.1.0)",
    "  Downloading werkzeug-3.0.3-py3-none-any.whl.metadata (3.7 kB)",
    "Collecting Jinja2>=3.1.2 (from web==0.1.0)",
    "  Downloading jinja2-3.1.4-py3-none-any.whl.metadata (2.6 kB)",
    "Collecting click>=8.1.3 (from web==0.1.0)",
    "  Downloading click-8.1.7-py3-none-any.whl.metadata (3.0 kB)",
    "Collecting pytest>=8 (from web==0.1.0)",
    "  Downloading pytest-8.2.0-py3-none-any.whl.metadata (7.5 kB)",
    "Successfully built web",
    "Installing collected packages: MarkupSafe, iniconfig, click, Werkzeug, Jinja2, pytest, web",
    "Successfully installed Jinja2-3.1.4 MarkupSafe-2.1.5 Werkzeug-3.0.3 click-8.1.7"
    " iniconfig-2.0.0 pytest-8.2.0 web-0.1.0",
]
# After the failing step: the checkout's post step and the runner's clean-up.
_JOB_AFTER = [
    "Post job cleanup.",
    "[command]/usr/bin/git version",
    "git version 2.44.0",
    f"Temporarily overriding HOME='{_TEMP_HOME}' before making global git config changes",
    "Adding repository directory to the temporary git global config as a safe directory",
    f"[command]/usr/bin/git config --global --add safe.directory {_CHECKOUT}",
    r"[command]/usr/bin/git config --local --name-only --get-regexp core\.sshCommand",
    "[command]/usr/bin/git config --local --name-only --get-regexp"
    r" http\.https\:\/\/github\.com\/\.extraheader",
    "http.https://github.com/.extraheader",
    "[command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader",
    "Cleaning up orphan processes",
]
_STEP = [
    f"##[group]Run {_COMMAND}",
    f"\x1b[36;1m{_COMMAND}\x1b[0m",
    "shell: /usr/bin/bash -e {0}",
    "env:",
    "  pythonLocation: /opt/hostedtoolcache/Python/3.12.3/x64",
    "##[endgroup]",
]


def github_mcp(text: str) -> str:
    """``text`` as GitHub's MCP server answers ``get_job_logs`` (``return_content``) for the
    failed job: the job's whole raw log, every step's, a time stamp before each line."""
    lines = [
        *_JOB_BEFORE,
        *_STEP,
        *text.split("\n"),
        "##[error]Process completed with exit code 1.",
        *_JOB_AFTER,
    ]
    start = datetime(2024, 5, 1, 10, 12, 3, 117482, tzinfo=UTC)
    stamped = [
        f"{(start + timedelta(microseconds=517 * i)).strftime('%Y-%m-%dT%H:%M:%S.%f')}0Z {line}"
        for i, line in enumerate(lines)
    ]
    answer = {
        "job_id": 26213371234,
        "logs_content": "\ufeff" + "\n".join(stamped),
        "message": "Job logs content retrieved successfully",
        "original_length": len(stamped),
    }
    return json.dumps(answer)
