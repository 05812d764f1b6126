"""What a CI runner writes around a step's output, left out of a pasted CI log.

GitHub Actions' raw log of a failed step (what ``gh run view --log-failed`` prints, once its
job and step names and the time stamps are off: ``log_prefixes``) holds more than the step's
output. Before it, the runner's group for the step: ``##[group]Run python -m pytest``, the
step's script, its shell (``shell: /usr/bin/bash -e {0}``) and environment (``env:``,
``pythonLocation: …``), ``##[endgroup]``; after it, the runner's verdict, ``##[error]Process
completed with exit code 1.``. None of it is the program's, and read as the question it made a
failure out of the runner's verdict (an error line no code wrote) and words out of the
environment's paths: an error line pasted this way found its raise site far less often than the
line alone.

A job's whole log (what the API downloads, what GitHub's MCP server's ``get_job_logs`` returns)
holds every step: the runner's set-up, the checkout, an install and its output, then the
failing step, then the post steps and the clean-up. Only the failed step is the failure's: the
log is cut to each step whose group the runner's verdict closes (``_failed_steps``).

GitLab's job log (its API's trace, what ``glab ci trace`` prints) wraps the job in the
runner's sections (``section_start:1714558323:get_sources`` … ``section_end:…``): preparing
the executor and the environment, fetching the sources, the caches and artifacts, the clean-up.
In the script's section, the runner's header (``Executing "step_script" stage of the job
script``) and its echo of each command (``$ python -m pytest tests/``); at the end, its verdict,
``ERROR: Job failed: exit code 1``, the same kind of line as Actions'.

The other systems wrap a step the same way, each with its own marks. CircleCI: the shell it ran
the step with (``#!/bin/bash -eo pipefail``) and the step's command, then ``Exited with code
exit status 1``. Buildkite: the agent's own groups (``~~~ Preparing working directory``, its
hooks, the checkout), ``--- `` and ``+++ `` headers, the ``$ `` echo of each command and ``🚨
Error: The command exited with status 1``. Jenkins: a Pipeline's ``[Pipeline]`` steps, the
checkout's Git plugin lines, the ``+ `` echo of a ``sh`` step's command and ``ERROR: script
returned exit code 1`` / ``Finished: FAILURE``. Azure Pipelines: a task's header, from
``##[section]Starting: …`` to ``Starting Command Output``, and its verdict (``##[error]Bash
exited with code '1'.``).

:func:`step_output` leaves those lines out. What a workflow command marks inside the output
keeps its text without the marker: an annotation (``##[error]src/app.ts(12,5): error TS2322:
…``, a problem matcher's) is the tool's own line, and a group the program opened itself
(``::group::``, printed ``##[group]Tests``; a GitLab section the script opened) holds its
output.
"""

from __future__ import annotations

import re

# The runner's group for a step: opened with the step's name (``Run …`` for a script step,
# ``Run actions/checkout@v4`` for an action), closed by ``##[endgroup]``.
_STEP_GROUP_START = "##[group]Run "
_GROUP_END = "##[endgroup]"
# Azure Pipelines': a task's header (its name, version, help, the script it generated) runs
# from its start to the line before its command's output.
_TASK_START = "##[section]Starting: "
_TASK_OUTPUT = re.compile(r"^=+ Starting Command Output =+[ \t]*$")
# GitHub Actions' verdict on a failed step.
_STEP_VERDICT = (
    r"Process completed with exit code \d+\.|The process '[^'\n]*' failed with exit code \d+"
)
# The runner's own lines: the step's verdict, its debug and command echoes, a group's end.
_RUNNER_LINE = re.compile(
    rf"^##\[(?:error|warning)\](?:{_STEP_VERDICT}|(?:Bash|PowerShell|Cmd\.exe) exited with code "
    r"'-?\d+'\.|Script failed with exit code: -?\d+)[ \t]*$\n?"
    r"|^(?:##)?\[(?:debug|command)\].*$\n?|^##\[endgroup\][ \t]*$\n?"
    r"|^##\[section\](?:Starting|Finishing|Async Command (?:Start|End)): .*$\n?",
    re.M,
)
_MARKER = re.compile(r"^##\[(?:group|error|warning|notice|section)\]", re.M)
# A GitHub Actions step's start and its failure, as the job's whole log holds them.
_STEP_START = re.compile("^" + re.escape(_STEP_GROUP_START), re.M)
_STEP_FAILED = re.compile(rf"^##\[error\](?:{_STEP_VERDICT})[ \t]*$", re.M)


def _failed_steps(text: str) -> str:
    """A GitHub Actions job's whole log (what its API and GitHub's MCP server return) cut to
    its failed steps: each from its group, the last one opened before the runner's verdict,
    through the verdict. The steps before (the checkout, the set-up, an install and its
    output) and the post steps and clean-up after are the job's, not the failure's; a log with
    no step group before a verdict (a step's output alone) is as it was."""
    kept: list[str] = []
    at = 0
    for verdict in _STEP_FAILED.finditer(text):
        starts = list(_STEP_START.finditer(text, at, verdict.start()))
        if not starts:
            return text
        kept.append(text[starts[-1].start() : verdict.end()])
        at = verdict.end()
    return "\n".join(kept) if kept else text


def _without_step_groups(text: str) -> str:
    """``text`` without each step's group, from its ``##[group]Run …`` to its ``##[endgroup]``,
    and each Azure Pipelines task's header, from its ``##[section]Starting: …`` to its
    ``Starting Command Output`` (one pass over the lines: a group whose end was not copied
    keeps its lines)."""
    kept: list[str] = []
    start: int | None = None  # where in ``kept`` the open step group began
    for line in text.split("\n"):
        if line.startswith((_STEP_GROUP_START, _TASK_START)):
            start = len(kept)
        elif start is not None and (line.startswith(_GROUP_END) or _TASK_OUTPUT.match(line)):
            del kept[start:]
            start = None
            continue
        kept.append(line)
    return "\n".join(kept)


# GitLab's: a section's bounds (a collapsed one's options in brackets), the sections that are
# the runner's own work, the header and the echoes in the script's, the verdict.
_SECTION = re.compile(r"^section_(start|end):\d+:([\w.-]+)(?:\[[^\]\n]*\])?[ \t]*$")
_RUNNER_SECTIONS = frozenset(
    {
        "prepare_executor",
        "prepare_script",
        "resolve_secrets",
        "get_sources",
        "clear_worktree",
        "restore_cache",
        "download_artifacts",
        "archive_cache",
        "archive_cache_on_failure",
        "upload_artifacts_on_success",
        "upload_artifacts_on_failure",
        "cleanup_file_variables",
    }
)
_SCRIPT_SECTIONS = frozenset({"step_script", "build_script", "after_script"})
_SCRIPT_RUNNER_LINE = re.compile(
    r'^(?:\$ .*|Executing "\w+" stage of the job script|Running after_script|Running after '
    r"script\.\.\.|Using (?:docker image sha256:|\w+ executor ).*)$"
)
_RUNNER_HEAD = re.compile(r"^(?:Running with gitlab-runner .*|  on \S+ \S+(?:, system ID: \S+)?)$")
_MAX_SECTIONS = 16  # open at once: a job nests a few; past that a paste is no job's log
_VERDICT = re.compile(r"^(?:ERROR: Job failed(?: \(system failure\))?: .*|Job succeeded)[ \t]*$")


def step_output(text: str) -> str | None:
    """``text`` without the runner's lines around a CI step's output (GitHub Actions' step,
    Azure Pipelines' task, GitLab's job, CircleCI's step, Buildkite's job, Jenkins' build);
    None when it holds none."""
    out = text
    if "##[" in out:
        out = _without_step_groups(_failed_steps(out))
        out = _MARKER.sub("", _RUNNER_LINE.sub("", out))
    if "section_start:" in out or "ERROR: Job failed" in out:
        out = _gitlab_job_output(out)
    if "pipefail" in out or "Exited with code" in out or "CircleCI received exit code" in out:
        out = _CIRCLECI_LINE.sub("", out)
    if _BUILDKITE.search(out):
        out = _buildkite_job_output(out)
    if _JENKINS.search(out):
        out = _jenkins_build_output(out)
    return out.strip("\n") if out != text else None


def _gitlab_job_output(text: str) -> str:
    kept: list[str] = []
    open_sections: list[str] = []
    for line in text.split("\n"):
        section = _SECTION.match(line)
        if section is not None:
            start, name = section.group(1) == "start", section.group(2)
            if start and len(open_sections) < _MAX_SECTIONS:  # each line's checks stay short
                open_sections.append(name)
            elif not start and name in open_sections:
                del open_sections[len(open_sections) - 1 - open_sections[::-1].index(name)]
            continue
        if _VERDICT.match(line) or (not open_sections and _RUNNER_HEAD.match(line)):
            continue
        if _RUNNER_SECTIONS.intersection(open_sections):
            continue
        if (
            open_sections
            and open_sections[-1] in _SCRIPT_SECTIONS
            and _SCRIPT_RUNNER_LINE.match(line)
        ):
            continue
        kept.append(line)
    return "\n".join(kept)


# CircleCI's: a step's output opens with its shell and its command's first line, and ends with
# the verdict.
_CIRCLECI_LINE = re.compile(
    r"^#!\S*(?:bash|sh)\b.*-eo pipefail.*\n.*$\n?"
    r"|^(?:Exited with code (?:exit status )?-?\d+|CircleCI received exit code -?\d+)[ \t]*$\n?",
    re.M,
)

# Buildkite's: the agent's groups (``~~~ Preparing working directory``; ``---`` and ``+++``
# open collapsed and expanded ones), the commands it echoes in the command phase, its verdict.
_BUILDKITE_AGENT_GROUPS = (
    r"Preparing working directory|Preparing plugins|Setting up plugins|Running .*hook"
    r"|Uploading artifacts|Downloading artifacts"
)
_BUILDKITE_HEADER = re.compile(r"^(?:~~~|---|\+\+\+) (.*?)[ \t]*$")
_BUILDKITE_AGENT_GROUP = re.compile(rf"^(?:{_BUILDKITE_AGENT_GROUPS})$")
# A Buildkite log has the agent's own groups or its verdict (a Markdown fence opens ``~~~``).
_BUILDKITE = re.compile(
    rf"^(?:~~~ (?:{_BUILDKITE_AGENT_GROUPS}|Running commands?|Running script)|\^\^\^ \+\+\+"
    r"|🚨 Error: The command exited with status -?\d+)[ \t]*$",
    re.M,
)
_BUILDKITE_COMMANDS = frozenset({"Running commands", "Running command", "Running script"})
_BUILDKITE_VERDICT = re.compile(
    r"^(?:\^\^\^ \+\+\+|🚨 Error: The command exited with status -?\d+)[ \t]*$"
)


def _buildkite_job_output(text: str) -> str:
    kept: list[str] = []
    group: str | None = None
    for line in text.split("\n"):
        header = _BUILDKITE_HEADER.match(line)
        if header is not None:
            group = header.group(1)
            continue
        if _BUILDKITE_VERDICT.match(line) or (
            group is not None and _BUILDKITE_AGENT_GROUP.match(group)
        ):
            continue
        if group in _BUILDKITE_COMMANDS and line.startswith("$ "):
            continue
        kept.append(line)
    return "\n".join(kept)


# Jenkins': a Pipeline's steps (``[Pipeline] sh``), a build's start and verdict, the Git
# plugin's checkout, the shell's echo of the command a ``sh`` step runs.
_JENKINS = re.compile(
    r"^(?:\[Pipeline\] .*|Finished: (?:SUCCESS|UNSTABLE|FAILURE|NOT_BUILT|ABORTED))[ \t]*$", re.M
)
_JENKINS_LINE = re.compile(
    r"^(?:\[[\dT:.,+Z -]{8,40}\] )?"  # the timestamper's, kept on a line a logger's would be
    r"(?:\[Pipeline\] .*|Started by .*|Running on .* in /.*|Running as SYSTEM"
    r"|Building (?:in workspace|remotely on) .*|Finished: [A-Z_]+"
    r"|(?:ERROR: )?script returned exit code -?\d+|Build step '.*' marked build as failure"
    r"|\[[^\]\n]+\] \$ /bin/sh -xe /tmp/jenkins\d+\.sh"
    r"| > git .*|The recommended git tool is: .*|using credential .*|Cloning (?:the remote Git "
    r"repository|repository .*)|Fetching (?:upstream changes from .*|changes from the remote "
    r"Git repository)|Checking out Revision .*|Commit message: .*|First time build\. .*"
    r"|Avoid second fetch)[ \t]*$"
)
_JENKINS_SCM_STEPS = frozenset({"[Pipeline] checkout", "[Pipeline] git"})


def _jenkins_build_output(text: str) -> str:
    kept: list[str] = []
    step = ""
    echo = False  # the shell's echo of the command a ``sh`` step runs comes first
    for line in text.split("\n"):
        if line.startswith("[Pipeline] "):
            step, echo = line.rstrip(), line.rstrip() == "[Pipeline] sh"
            continue
        if echo and line.startswith("+ "):
            continue
        echo = False
        if step in _JENKINS_SCM_STEPS or _JENKINS_LINE.match(line):
            continue
        kept.append(line)
    return "\n".join(kept)
