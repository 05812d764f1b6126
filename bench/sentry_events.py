"""A Python traceback as Sentry delivers it: the event Sentry stores, and what Sentry's MCP
server tells an agent about its issue.

Sentry's Python SDK sends each frame as data, not text: its file name relative to the package
root (``click/core.py``), its absolute path, module, function and line, the five source lines
around it read from the file, and whether it is the application's own (``in_app``: a package
installed under ``site-packages`` is not; code run from ``<stdin>`` is). The frames go oldest
first, and a chain of exceptions goes cause first. Two things leave Sentry with them:

- :func:`stored_json`: the event as Sentry's web page shows it under "JSON" (``exception.values``
  with ``stacktrace.frames``, snake_case keys, ``pre_context`` / ``context_line`` /
  ``post_context``), pretty-printed as that page shows it;
- :func:`mcp_issue`: the ``get_issue_details`` answer of Sentry's MCP server (getsentry/sentry-
  mcp, ``formatIssueOutput``): the issue's header, then the exceptions, the last raised first,
  each with its frames as its language prints one (for Python ``  File "click/core.py", line
  783, in invoke``), oldest first, the frame's source line under it, then the tags, the
  contexts, and its closing advice. It reads the event as Sentry's API returns it (camelCase,
  ``context`` as ``[line, text]`` pairs), which :func:`api_event` builds.

The stored event carries, as a real one does, breadcrumbs (sixty: HTTP calls and SQL queries),
the request and the installed packages; local variables (the SDK sends them by default) are
left out, since the snippets' values are not known here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_CHAINS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_SITE = "/srv/app/.venv/lib/python3.12/site-packages/"
CONTEXT = 5  # lines either side, as the SDK reads them


def _module_path(path: str) -> tuple[str, str, str, bool]:
    """(filename, abs_path, module, in_app) as the SDK reports a frame's file."""
    if path.startswith("<"):
        return path, path, "__main__", True
    rel = path
    for root in ("site-packages/", "/usr/lib/python3.11/"):
        if root in rel:
            rel = rel.split(root, 1)[1]
    rel = rel.removeprefix("src/")
    module = rel.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    abs_path = path if path.startswith("/") else _SITE + rel
    return rel, abs_path, module, False


def file_lines(workspace: Path, path: str) -> list[str] | None:
    """The lines of the workspace's file a trace names; None for one the checkout lacks."""
    file = workspace / path
    if path.startswith(("/", "<")) or not file.is_file():
        return None
    return file.read_text(encoding="utf-8", errors="replace").split("\n")


def chain(trace: str) -> list[str]:
    """The trace's part for each exception of its chain, cause first."""
    blocks = [trace]
    for marker in _CHAINS:
        blocks = [part for block in blocks for part in block.split(marker)]
    return blocks


def _exceptions(trace: str, workspace: Path) -> list[dict[str, Any]]:
    """The trace's exceptions, cause first, as the SDK reports each (stored format)."""
    out = []
    for block in chain(trace):
        lines = [x for x in block.strip("\n").split("\n") if x.strip()]
        frames: list[dict[str, Any]] = []
        last = -1
        for i, line in enumerate(lines):
            m = _FRAME.match(line)
            if not m:
                continue
            last = i
            filename, abs_path, module, in_app = _module_path(m["path"])
            frame: dict[str, Any] = {
                "filename": filename,
                "abs_path": abs_path,
                "function": m["func"],
                "module": module,
                "lineno": int(m["line"]),
                "in_app": in_app,
            }
            source = file_lines(workspace, m["path"])
            n = int(m["line"])
            printed = lines[i + 1] if i + 1 < len(lines) else ""
            if source is not None and 0 < n <= len(source):
                frame["pre_context"] = source[max(0, n - 1 - CONTEXT) : n - 1]
                frame["context_line"] = source[n - 1]
                frame["post_context"] = source[n : n + CONTEXT]
            elif printed.startswith("    ") and not _FRAME.match(printed):
                # A file the checkout lacks (an installed dependency's): the line the trace
                # printed, the only source known here.
                frame["pre_context"], frame["post_context"] = [], []
                frame["context_line"] = printed
            frames.append(frame)
        rest = [x for x in lines[last + 1 :] if not x.startswith("    ")]
        error = "\n".join(x for x in rest if not set(x.strip()) <= set("^~"))
        head, _, value = error.partition(": ")
        module, _, name = head.rpartition(".")
        exc: dict[str, Any] = {"type": name, "value": value, "module": module or "builtins"}
        if frames:
            exc["stacktrace"] = {"frames": frames}
        out.append(exc)
    out[-1]["mechanism"] = {"type": "excepthook", "handled": False}
    return out


def stored_json(trace: str, workspace: Path) -> str:
    """The event as Sentry's page shows its JSON, pretty-printed."""
    values = _exceptions(trace, workspace)
    last = values[-1]
    event = {
        "event_id": "9f1c6a3e5b2d4c7a8e0f1b2c3d4e5f60",
        "project": 4507311,
        "release": "web@1.4.2",
        "environment": "production",
        "platform": "python",
        "level": "error",
        "logger": "",
        "timestamp": 1714558323.117482,
        "culprit": _culprit(values),
        "title": f"{last['type']}: {last['value']}".split("\n")[0],
        "exception": {"values": values},
        "breadcrumbs": {"values": _BREADCRUMBS},
        "request": _REQUEST,
        "modules": _MODULES,
        "contexts": _CONTEXTS,
        "sdk": {"name": "sentry.python.flask", "version": "2.3.1"},
        "tags": [["environment", "production"], ["level", "error"], ["release", "web@1.4.2"]],
    }
    return json.dumps(event, indent=2)


# What else a real event carries: the breadcrumbs before the error (the SDK keeps up to 100),
# the request, the installed packages. Several times the exception's size, none of it about
# the failing code.
_BREADCRUMBS = [
    {
        "timestamp": 1714558300.0 + i,
        "type": "http" if i % 3 == 0 else "default",
        "category": "httplib" if i % 3 == 0 else "sqlalchemy.engine.Engine",
        "level": "info",
        "message": None
        if i % 3 == 0
        else f"SELECT users.id, users.name FROM users WHERE users.id = {i}",
        "data": {"url": f"https://api.acme.test/v1/items/{i}", "method": "GET", "status_code": 200}
        if i % 3 == 0
        else {},
    }
    for i in range(60)
]
_REQUEST = {
    "url": "https://web.acme.test/users",
    "method": "GET",
    "headers": [["Host", "web.acme.test"], ["User-Agent", "Mozilla/5.0"], ["Accept", "*/*"]],
    "env": {"SERVER_NAME": "web.acme.test", "SERVER_PORT": "443"},
}
_MODULES = {
    name: version
    for name, version in (
        ("blinker", "1.8.2"),
        ("certifi", "2024.2.2"),
        ("charset-normalizer", "3.3.2"),
        ("click", "8.1.7"),
        ("flask", "3.1.0"),
        ("gunicorn", "22.0.0"),
        ("idna", "3.7"),
        ("itsdangerous", "2.2.0"),
        ("jinja2", "3.1.4"),
        ("markupsafe", "2.1.5"),
        ("packaging", "24.0"),
        ("pip", "24.0"),
        ("psycopg2-binary", "2.9.9"),
        ("python-dateutil", "2.9.0"),
        ("requests", "2.31.0"),
        ("sentry-sdk", "2.3.1"),
        ("setuptools", "69.5.1"),
        ("six", "1.16.0"),
        ("sqlalchemy", "2.0.30"),
        ("typing-extensions", "4.11.0"),
        ("urllib3", "2.2.1"),
        ("werkzeug", "3.0.3"),
    )
}


def _culprit(values: list[dict[str, Any]]) -> str:
    frames = values[-1].get("stacktrace", {}).get("frames", [])
    ranked = [f for f in frames if f["in_app"]] or frames
    return f"{ranked[-1]['module']} in {ranked[-1]['function']}" if ranked else ""


_CONTEXTS = {
    "runtime": {"name": "CPython", "version": "3.12.3", "type": "runtime"},
    "os": {"name": "Linux", "version": "6.8.0", "type": "os"},
    "trace": {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "op": "http.server", "type": "trace"},
}


def api_event(trace: str, workspace: Path) -> dict[str, Any]:
    """The event as Sentry's API returns it (what the MCP server reads)."""
    exceptions = _exceptions(trace, workspace)  # reads each frame's source once
    values = []
    for exc in exceptions:
        frames = []
        for f in exc.get("stacktrace", {}).get("frames", []):
            context = []
            if "context_line" in f:
                first = f["lineno"] - len(f["pre_context"])
                lines = [*f["pre_context"], f["context_line"], *f["post_context"]]
                context = [[first + i, text] for i, text in enumerate(lines)]
            frames.append(
                {
                    "filename": f["filename"],
                    "absPath": f["abs_path"],
                    "module": f["module"],
                    "function": f["function"],
                    "lineNo": f["lineno"],
                    "colNo": None,
                    "context": context,
                    "inApp": f["in_app"],
                }
            )
        stack = {"frames": frames} if frames else None
        values.append({"type": exc["type"], "value": exc["value"], "stacktrace": stack})
    return {
        "platform": "python",
        "values": values,
        "culprit": _culprit(exceptions),
    }


_V8 = re.compile(r"^\s*at (?:(?P<func>.+?) \()?(?P<path>[^\s()]+?):(?P<line>\d+):(?P<col>\d+)\)?$")


def v8_api_event(stack: str) -> dict[str, Any]:
    """A Node error's stack (V8's print: the error line, then ``at`` frames innermost first)
    as Sentry's API returns its event: frames oldest first, node_modules and Node's own not
    the application's. Node's SDK reads no source for these here (none is at hand)."""
    lines = stack.split("\n")
    first = next(i for i, x in enumerate(lines) if _V8.match(x))
    # Node prints the throwing line's source above an uncaught error; the error is what
    # follows the last blank line.
    error = "\n".join(lines[:first]).strip().split("\n\n")[-1]
    head, _, value = error.partition(": ")
    frames = []
    for line in reversed(lines[first:]):
        m = _V8.match(line)
        if m is None:
            continue
        path = m["path"].removeprefix("file://")
        frames.append(
            {
                "filename": path,
                "absPath": path,
                "module": None,
                "function": m["func"],
                "lineNo": int(m["line"]),
                "colNo": int(m["col"]),
                "context": [],
                "inApp": "node_modules" not in path and not path.startswith("node:"),
            }
        )
    ranked = [f for f in frames if f["inApp"]] or frames
    culprit = f"{ranked[-1]['function'] or '?'}({ranked[-1]['filename']})" if ranked else ""
    values = [{"type": head.split(" ")[0], "value": value, "stacktrace": {"frames": frames}}]
    return {"platform": "node", "values": values, "culprit": culprit}


def _frame_header(f: dict[str, Any], platform: str) -> str:
    """sentry-mcp's ``formatFrameHeader``: the language its file's extension says, else the
    platform (Python's, JavaScript's compact one, and its generic one)."""
    ext = re.search(r"\.[^.]+$", (f["filename"] or "").lower())
    language = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "javascript"}
    kind = language.get(ext.group(0) if ext else "", platform)
    if kind == "python":
        file = f["filename"] or f["absPath"] or f["module"] or "<unknown>"
        line = f", line {f['lineNo']}" if f["lineNo"] else ""
        return f'  File "{file}"{line}, in {f["function"] or "<module>"}'
    if kind == "javascript":
        place = ":".join(str(x) for x in (f["filename"], f["lineNo"], f["colNo"]) if x)
        return place + (f" ({f['function']})" if f["function"] else "")
    where = f["filename"] or f["module"] or "<unknown>"
    line = f":{f['lineNo']}" if f["lineNo"] else ""
    col = f":{f['colNo']}" if f["colNo"] is not None else ""
    return f"    at {f['function'] or '<unknown>'} ({where}{line}{col})"


def _inline(f: dict[str, Any]) -> str:
    code = [text for n, text in f["context"] if n == f["lineNo"]]
    return f"\n{code[0]}" if code else ""


def _context_lines(f: dict[str, Any]) -> str:
    width = max(len(str(n)) for n, _ in f["context"])
    out = []
    for n, code in f["context"]:
        if abs(n - f["lineNo"]) <= 3:
            mark = "  → " if n == f["lineNo"] else "    "
            out.append(f"{mark}{str(n).rjust(width)} │ {code}")
    return "\n".join(out)


def mcp_issue(trace: str, workspace: Path) -> str:
    """What ``get_issue_details`` of Sentry's MCP server answers for the trace's issue."""
    return mcp_answer(api_event(trace, workspace))


def mcp_answer(event: dict[str, Any]) -> str:
    """What ``get_issue_details`` of Sentry's MCP server answers for an issue whose latest
    event is ``event`` (:func:`api_event`, :func:`v8_api_event`)."""
    platform = event["platform"]
    values = event["values"]
    last = values[-1]
    title = f"{last['type']}: {last['value']}".split("\n")[0]
    out = [
        "# Issue WEB-1Z43 in **acme**",
        "",
        f"**Description**: {title}",
        f"**Culprit**: {event['culprit']}",
        "**First Seen**: 2024-05-01T10:12:03.117Z",
        "**Last Seen**: 2024-05-01T10:12:03.117Z",
        "**Occurrences**: 12",
        "**Users Impacted**: 3",
        "**Status**: unresolved",
        f"**Platform**: {platform}",
        "**Project**: web",
        "**URL**: https://acme.sentry.io/issues/WEB-1Z43",
        "",
        "## Event Details",
        "",
        "**Event ID**: 9f1c6a3e5b2d4c7a8e0f1b2c3d4e5f60",
        "**Occurred At**: 2024-05-01T10:12:03.117Z",
        "",
    ]
    for index, exc in enumerate(reversed(values)):
        heading = f"{exc['type']}" + (f": {exc['value']}" if exc["value"] else "")
        if index:
            out += [
                "",
                "**During handling of the above exception, another exception occurred:**",
                "",
            ]
        out += ["### Error" if index == 0 else f"### {heading}", ""]
        if index == 0:
            out += ["```", heading, "```", ""]
        frames = (exc["stacktrace"] or {}).get("frames")
        if not frames:
            out += ["**Stacktrace:**", "```", "No stacktrace available", "```"]
            continue
        in_app = [f for f in frames if f["inApp"]]
        relevant = in_app[-1] if in_app else None
        if index == 0 and relevant is not None and relevant["context"]:
            header = _frame_header(relevant, platform)
            out += ["**Most Relevant Frame:**", "─────────────────────", header]
            out += ["", _context_lines(relevant), "", "**Full Stacktrace:**", "────────────────"]
        else:
            out.append("**Stacktrace:**")
        shown = "\n".join(_frame_header(f, platform) + _inline(f) for f in frames)
        out += ["```", shown, "```"]
    out += ["", "", "### Tags", "", "**environment**: production", "**level**: error"]
    out += ["**release**: web@1.4.2", "", "### Additional Context", ""]
    out += [
        "These are additional context provided by the user when they're instrumenting their "
        "application.",
        "",
    ]
    contexts = dict(_CONTEXTS)
    if platform == "node":
        contexts["runtime"] = {"name": "node", "version": "v20.20.2", "type": "runtime"}
    for name, data in contexts.items():
        out.append(f"**{name}**")
        out += [f"{k}: {json.dumps(v)}" for k, v in data.items() if k != "type"]
        out.append("")
    out += [
        "# Using this information",
        "",
        "- You can reference the IssueID in commit messages (e.g. `Fixes WEB-1Z43`) to "
        "automatically close the issue when the commit is merged.",
        "- The stacktrace includes both first-party application code as well as third-party "
        "code, its important to triage to first-party code.",
    ]
    return "\n".join(out)
