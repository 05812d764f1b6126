"""Where benchmark results go: ``bench/results/<kind>-<UTC time>.json`` (git-ignored), one file
per run, so runs never overwrite each other and can be compared later."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def result_path(kind: str, folder: Path = RESULTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{kind}-{datetime.now(UTC):%Y%m%d-%H%M%S}.json"
