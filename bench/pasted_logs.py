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
- ``structlog``: one JSON record (structlog's ``event``, ``level``, ``timestamp``) whose
  ``exception`` is the case, as a log viewer shows it, and ``kubernetes+structlog``, that
  record in the kubelet's log (tracebacks and error lines);
- ``escaped``: the traceback as that record's field holds it, copied out alone: one line, its
  line breaks and quotes escaped (tracebacks).

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
}
# The kinds each form is asked with (the rest: every kind). A one-line error line escaped is
# the line itself; a test runner's report is no service's log record.
FORM_KINDS = {
    "structlog": ("trace", "message"),
    "kubernetes+structlog": ("trace", "message"),
    "escaped": ("trace",),
}


def delivered(text: str, form: str, seed: str) -> str:
    """``text`` as ``form`` delivers it: in a JSON record, escaped, with CR LF line ends, and
    with the form's prefix before every line."""
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


def build_cases(per_kind: int | None, forms: list[str]) -> list[Case]:
    cases: list[Case] = []
    for dataset in DATASETS:
        for kind, folder in KINDS.items():
            found = [c for c in load_failure_cases(folder, dataset, None) if c.kind == kind]
            for c in found[:per_kind]:
                gold = {p: [tuple(r) for r in ranges] for p, ranges in c.gold.items()}
                for form in forms:
                    if kind not in FORM_KINDS.get(form, (kind,)):
                        continue
                    query = delivered(c.query, form, f"{c.id}:{form}")
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
    cases = build_cases(args.per_kind, forms)
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
