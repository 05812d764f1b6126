"""Callers and callees through the resolved imports (``search/calls.py``), on a real index:
a call of ``total`` in a file that imports the file defining it is a qualified match; a method
of the same name elsewhere is not, and the bare name comes back only when nothing qualifies."""

from __future__ import annotations

from pathlib import Path

from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.search import calls
from support.project import git, init_repo

FILES = {
    "lib/cart.js": "function total (items) {\n  return items.length\n}\nmodule.exports = { total }",
    "lib/report.js": (
        "class Report {\n  total () {\n    return 2\n  }\n}\nmodule.exports = { Report }\n"
    ),
    "lib/checkout.js": (
        "const { total } = require('./cart')\n"
        "function checkout (items) {\n  return total(items)\n}\nmodule.exports = { checkout }\n"
    ),
    "lib/print.js": (
        "const { Report } = require('./report')\n"
        "function print (r) {\n  return r.total()\n}\nmodule.exports = { print }\n"
    ),
}


def test_callers_and_callees_go_through_the_imports(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    cfg = Config().changed(stages={"vectors": False})
    with Engine(root, tmp_path / "idx", config=cfg) as eng:
        eng.index()
        store = eng.parts.store

        def paths(ids: list[int]) -> set[str]:
            return {sc.chunk.path for sc in store.get_chunks(ids).values()}

        by_name = paths(store.callers_of("total"))
        assert {"lib/checkout.js", "lib/print.js"} <= by_name  # the bare name: both
        assert paths(calls.resolved_callers(store, "total", ["lib/cart.js"])) == {"lib/checkout.js"}
        assert paths(calls.resolved_callers(store, "total", ["lib/report.js"])) == {"lib/print.js"}
        # Nobody imports lib/other.js: every caller by name is the fallback.
        assert paths(calls.resolved_callers(store, "total", ["lib/other.js"])) == by_name
        (here,) = [sc for sc in store.chunks_of("lib/checkout.js") if sc.name == "checkout"]
        callees = calls.resolved_callees(store, here)
        assert {(sc.chunk.path, sc.name) for sc in callees} == {("lib/cart.js", "total")}
        assert calls.definers_seen_from(store, "lib/checkout.js", "total") == ["lib/cart.js"]
