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

GitLab's job log (its API's trace, what ``glab ci trace`` prints) wraps the job in the
runner's sections (``section_start:1714558323:get_sources`` … ``section_end:…``): preparing
the executor and the environment, fetching the sources, the caches and artifacts, the clean-up.
In the script's section, the runner's header (``Executing "step_script" stage of the job
script``) and its echo of each command (``$ python -m pytest tests/``); at the end, its verdict,
``ERROR: Job failed: exit code 1``, the same kind of line as Actions'.

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
# The runner's own lines: the step's verdict, its debug and command echoes, a group's end.
_RUNNER_LINE = re.compile(
    r"^##\[(?:error|warning)\](?:Process completed with exit code \d+\.|The process '[^'\n]*' "
    r"failed with exit code \d+)[ \t]*$\n?"
    r"|^##\[(?:debug|command)\].*$\n?|^##\[endgroup\][ \t]*$\n?",
    re.M,
)
_MARKER = re.compile(r"^##\[(?:group|error|warning|notice|section)\]", re.M)


def _without_step_groups(text: str) -> str:
    """``text`` without each step's group, from its ``##[group]Run …`` to its ``##[endgroup]``
    (one pass over the lines: a group whose end was not copied keeps its lines)."""
    kept: list[str] = []
    start: int | None = None  # where in ``kept`` the open step group began
    for line in text.split("\n"):
        if line.startswith(_STEP_GROUP_START):
            start = len(kept)
        elif start is not None and line.startswith(_GROUP_END):
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
    GitLab's job); None when it holds none."""
    out = text
    if "##[" in out:
        out = _MARKER.sub("", _RUNNER_LINE.sub("", _without_step_groups(out)))
    if "section_start:" in out or "ERROR: Job failed" in out:
        out = _gitlab_job_output(out)
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
