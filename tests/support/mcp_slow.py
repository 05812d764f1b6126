"""Run ``code-evidence`` with a slow disk, embedder or cross-encoder, so the MCP tests can ask
while an index pass or a deep find is still running (the real server, only slower; no hook in
the engine). Started by the tests as a script, by path, instead of ``-m code_evidence.cli``.

- ``CE_SLOW_READ_S``: seconds added to each file the index pass reads;
- ``CE_SLOW_EMBED_S``: seconds added to each block of chunks the index pass embeds (cut short
  when the server closes, so a test never waits for it);
- ``CE_SLOW_PAIR_S``: seconds added to each pair the cross-encoder scores;
- ``CE_SLOW_IGNORE_S``: seconds added to each ignore check of the watcher's changed paths (its
  ``git check-ignore`` on a busy machine).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

_closing = threading.Event()


def install() -> None:
    from code_evidence.index import indexer, reading
    from code_evidence.live import passes, watch
    from code_evidence.models import crossencoder

    read = float(os.environ.get("CE_SLOW_READ_S", "0"))
    embed = float(os.environ.get("CE_SLOW_EMBED_S", "0"))
    pair = float(os.environ.get("CE_SLOW_PAIR_S", "0"))
    ignore = float(os.environ.get("CE_SLOW_IGNORE_S", "0"))
    if read:
        load_text = reading.load_text  # where the pass reads its files

        def slow_load(*args: Any, **kwargs: Any) -> Any:
            time.sleep(read)
            return load_text(*args, **kwargs)

        reading.load_text = slow_load  # type: ignore[assignment]
    if embed:
        embed_with_cache = indexer.embed_with_cache

        def slow_embed(*args: Any, **kwargs: Any) -> Any:
            _closing.wait(embed)
            return embed_with_cache(*args, **kwargs)

        indexer.embed_with_cache = slow_embed  # type: ignore[assignment]
        close = passes.PassScheduler.close

        def closing(self: Any) -> None:
            _closing.set()
            close(self)

        passes.PassScheduler.close = closing  # type: ignore[method-assign]
    if pair:
        run = crossencoder.CrossEncoder._run  # every scoring run, alone or from submit

        def slow_run(self: Any, query: str, passages: Any) -> Any:
            time.sleep(pair * len(passages))
            return run(self, query, passages)

        crossencoder.CrossEncoder._run = slow_run  # type: ignore[method-assign]
    if ignore:
        relevant = watch.IgnoreFilter.relevant

        def slow_relevant(self: Any, paths: Any) -> Any:
            time.sleep(ignore)
            return relevant(self, paths)

        watch.IgnoreFilter.relevant = slow_relevant  # type: ignore[method-assign]


if __name__ == "__main__":
    install()
    from code_evidence.cli import main

    sys.exit(main(sys.argv[1:]))
