"""A bounded log of answered requests, for explaining a ranking after the fact.

Queries are pasted tracebacks, config snippets and error output, which carry tokens and keys.
So the log stores a hash of the query (to correlate repeats) and a redacted copy, never the raw
text, and keeps only the newest entries. The file is 0600, like everything in the index folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from .api import FindResult
from .paths import open_private
from .secrets import redact


class RequestLog:
    """The newest ``keep`` answered requests as JSON lines, redacted (see module docstring)."""

    def __init__(self, path: Path, keep: int = 500) -> None:
        self.path = path
        self.keep = keep
        self._lock = threading.Lock()
        self._count: int | None = None  # lines in the file, counted once, then tracked

    def record(self, result: FindResult, open_file: str | None, line: int | None) -> None:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "query_sha256": hashlib.sha256(result.query.encode("utf-8", "replace")).hexdigest(),
            "query": redact(result.query)[:2000],
            "intent": result.intent,
            "open_file": open_file,
            "line": line,
            "commit": result.commit,
            "confidence": result.confidence,
            "insufficient": result.insufficient,
            "stages": {k: [v.candidates, round(v.ms, 2)] for k, v in result.trace.items()},
            "results": [
                {
                    "at": f"{r.path}:{r.start}-{r.end}",
                    "score": round(r.score, 5),
                    "reasons": r.reasons,
                    "scores": {k: round(v, 4) for k, v in r.scores.items()},
                }
                for r in result.results
            ],
            "dropped": [f"{d.path}:{d.start}-{d.end} {d.reason}" for d in result.context.dropped],
        }
        line_text = json.dumps(entry) + "\n"
        with self._lock:
            try:
                if self._count is None:
                    self._count = len(self.entries()) if self.path.exists() else 0
                with open(open_private(self.path, "a"), "a", encoding="utf-8") as f:
                    f.write(line_text)
                self._count += 1
                if self._count > 2 * self.keep:
                    self._trim()
            except OSError:
                return  # the log is a convenience: a full disk must not fail the request

    def _trim(self) -> None:
        """Keep the newest ``keep`` entries (rewritten once the file holds twice that, so the
        cost is paid once per ``keep`` requests)."""
        with open(self.path, encoding="utf-8") as f:
            lines = f.readlines()[-self.keep :]
        tmp = self.path.with_suffix(".tmp")
        with open(open_private(tmp, "w"), "w", encoding="utf-8") as f:
            f.writelines(lines)
        os.replace(tmp, self.path)
        self._count = len(lines)

    def entries(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except (OSError, json.JSONDecodeError):
            return []
